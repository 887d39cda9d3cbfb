"""Every node's parameter schema, by node name: the one place that lists them (for the docs'
generated tables, `rnea_ros.ros.schema.markdown_table(NODE_SCHEMAS[name])`, and for checks over
all nodes). Each schema is declared as data next to its node; the pieces several nodes share (the
model source, the effort-law parameters) live in rnea_ros.ros.model_source and
rnea_ros.ros.law_params. Importing this module imports the nodes' modules (rclpy, and MuJoCo for
the simulator); once they know their joints, inverse_dynamics and trajectory_feedforward declare
per-joint parameters (NODE_JOINT_KINDS) and the mujoco_sim node per-joint JTC gains
(`rnea_ros.sim.sim_node.gain_params`)."""

from __future__ import annotations

from types import MappingProxyType

from rnea_ros.nodes.inverse_dynamics.params import INVERSE_DYNAMICS, JOINT_KINDS
from rnea_ros.nodes.multisine_trajectory import MULTISINE
from rnea_ros.nodes.trajectory_feedforward import TRAJECTORY_FEEDFORWARD
from rnea_ros.ros.law_params import LAW_JOINT_KINDS
from rnea_ros.sim.sim_node import SIM

NODE_SCHEMAS = MappingProxyType(
    {
        "inverse_dynamics": INVERSE_DYNAMICS,
        "trajectory_feedforward": TRAJECTORY_FEEDFORWARD,
        "mujoco_sim": SIM,
        "multisine_trajectory": MULTISINE,
    }
)

# The per-joint parameters (rnea_ros.ros.per_joint) each node declares once it knows its joints.
NODE_JOINT_KINDS = MappingProxyType(
    {"inverse_dynamics": JOINT_KINDS, "trajectory_feedforward": LAW_JOINT_KINDS}
)

__all__ = ["NODE_JOINT_KINDS", "NODE_SCHEMAS"]
