"""Where a node's model comes from, shared by every node that evaluates one (inverse_dynamics,
trajectory_feedforward): the model-source parameters (MODEL_PARAMS), the URDF they select (the
robot_description parameter, else the latched robot_description topic), the model built from it
and the output joints.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping

import numpy as np
from rclpy.node import Node
from rclpy.subscription import Subscription
from std_msgs.msg import String

from rnea_ros.errors import ParameterError
from rnea_ros.model.robot_model import RobotModel
from rnea_ros.ros.qos import DESCRIPTION_QOS
from rnea_ros.ros.schema import Param, is_per_joint_value

MODEL_PARAMS = (
    Param("robot_description", "string", "", "URDF text; empty: listen to the robot_description topic", True),
    Param("root_link", "string", "", "root of the model (empty: the URDF's root link)", True),
    Param(
        "tip_link",
        "string",
        "",
        "tip of the chain and point of the end-effector wrench (empty: whole tree)",
        True,
    ),
    Param(
        "joints",
        "string_array",
        [""],
        "joints of the output, in order (empty: the model's movable joints)",
        True,
    ),
    Param(
        "strict_model",
        "bool",
        False,
        "refuse URDFs with physically inconsistent inertias instead of loading them with a warning",
        True,
    ),
)

PARAMETER_SOURCE = "parameter robot_description"
TOPIC_SOURCE = "topic robot_description"


def model_from_urdf(xml: str, params: Mapping, root_joint: str | None = None) -> RobotModel:
    """The model of a URDF as root_link, tip_link and strict_model select it, with `root_joint`
    ("fixed", "floating", "planar"; None: the URDF's own, see RobotModel.from_urdf); URDFError
    naming the link or joint at fault."""
    return RobotModel.from_urdf(
        xml,
        root_link=params["root_link"] or None,
        tip_link=params["tip_link"] or None,
        strict=params["strict_model"],
        root_joint=root_joint,
    )


def start_model_source(
    node: Node,
    params: Mapping,
    load: Callable[[str, str], None],
    guard: Callable[[str, Callable], Callable],
) -> Subscription | None:
    """Feed `load(urdf, source)` from where the parameters say: the robot_description parameter
    now (source PARAMETER_SOURCE), else every message of the latched robot_description topic
    (TOPIC_SOURCE; the callback wrapped by `guard(where, callback)`); that topic's subscription,
    or None."""
    if params["robot_description"]:
        load(params["robot_description"], PARAMETER_SOURCE)
        return None

    def on_description(msg: String) -> None:
        load(msg.data, TOPIC_SOURCE)

    subscription = node.create_subscription(
        String, "robot_description", guard("robot_description", on_description), DESCRIPTION_QOS
    )
    node.get_logger().info("waiting for a URDF on topic robot_description")
    return subscription


def take_description(subscription: Subscription, load: Callable[[str, str], None], wait: float) -> bool:
    """Take the robot_description message waiting on `subscription` (the latched one, once
    discovery has matched its publisher), polling up to `wait` s, and `load` it (TOPIC_SOURCE) at
    once, in this thread (what a lifecycle configure needs); whether one came. The executor does
    not see it again."""
    end = time.monotonic() + wait
    while True:
        taken = subscription.handle.take_message(String, False)
        if taken is not None:
            load(taken[0].data, TOPIC_SOURCE)
            return True
        if time.monotonic() >= end:
            return False
        time.sleep(0.01)


def output_joints(base: RobotModel, params: Mapping) -> tuple[list[str], np.ndarray]:
    """The `joints` parameter checked against the model (empty: every movable joint) and their
    model indices; ParameterError naming `joints`."""
    joints = [j for j in params["joints"] if j] or list(base.joint_names)
    for j in joints:
        if j not in base.joint_names:
            raise ParameterError("joints", f"'{j}' is not a movable joint of the model")
    if len(set(joints)) != len(joints):
        raise ParameterError("joints", "lists a joint twice")
    return joints, np.array([base.joint_index(j) for j in joints], dtype=np.int64)


def per_joint_parameters_fit(
    params: Mapping, old_joints: list[str], new_joints: list[str], schema: Mapping[str, Param]
) -> None:
    """Per-joint values were given for `old_joints`; refuse (ParameterError naming the parameter)
    a model whose output joints differ, rather than apply a value to another joint."""
    if old_joints == new_joints:
        return
    for name, param in schema.items():
        if name in params and is_per_joint_value(param, params[name]):
            raise ParameterError(
                name,
                f"has one value per joint for [{', '.join(old_joints)}], but the new model's joints are "
                f"[{', '.join(new_joints)}]: set {name} to a value that does not depend on the joints "
                "first (or restart with values for the new joints)",
            )


__all__ = [
    "MODEL_PARAMS",
    "PARAMETER_SOURCE",
    "TOPIC_SOURCE",
    "model_from_urdf",
    "output_joints",
    "per_joint_parameters_fit",
    "start_model_source",
    "take_description",
]
