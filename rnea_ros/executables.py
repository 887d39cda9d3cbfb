"""The nodes' console scripts (setup.py `entry_points`, what `ros2 run rnea_ros …` and the launch
files start): each starts its node's `main` through `rnea_ros.ros.entry.run`, so that the process
ends with its parent and a Ctrl-C or SIGTERM during its imports is one line. Imports nothing heavy
(the node modules by name, inside `run`)."""

from __future__ import annotations

from rnea_ros.ros.entry import run


def inverse_dynamics_node() -> int:
    return run("inverse_dynamics", "rnea_ros.nodes.inverse_dynamics.node:main")


def inverse_dynamics_lifecycle_node() -> int:
    return run("inverse_dynamics", "rnea_ros.nodes.inverse_dynamics.lifecycle:main")


def trajectory_feedforward_node() -> int:
    return run("trajectory_feedforward", "rnea_ros.nodes.trajectory_feedforward:main")


def multisine_trajectory() -> int:
    return run("multisine_trajectory", "rnea_ros.nodes.multisine_trajectory:main")


def mujoco_sim_node() -> int:
    return run("mujoco_sim", "rnea_ros.sim.sim_node:main")
