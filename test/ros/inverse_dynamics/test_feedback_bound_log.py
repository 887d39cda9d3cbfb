"""A slow loop lowers the PD gains of every cycle (the feedback bound); the log says so once, not
every 2 s (it said `feedback gains lowered ...` 72 times in 2.5 min of the real-time demo): the node
as a process, a hold target, states 0.1 s apart for 7 s."""

from __future__ import annotations

import time

import numpy as np
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from rnea_ros import RobotModel
from rnea_ros.model.example_robots import example_urdf_path
from rnea_ros.testing.rosgraph import FRICTION_OFF, NODE, Driver, start_node, stop

URDF = example_urdf_path("panda").read_text()
MODEL = RobotModel.from_urdf(URDF, tip_link="panda_hand")
NAMES = list(MODEL.joint_names)
Q = np.array([0.1, -0.4, 0.2, -2.0, 0.1, 1.6, 0.3])


def test_lowered_gains_are_said_once_not_every_few_seconds(tmp_path) -> None:
    params = {"robot_description": URDF, "tip_link": "panda_hand", "feedback.kp": [1000.0], **FRICTION_OFF}
    proc = start_node(tmp_path, params)
    d = Driver("feedback_log_driver")
    try:
        zero = np.zeros(MODEL.nv)
        d.wait_for_commands(lambda: d.state(NAMES, Q, zero), timeout=120.0)
        target = JointTrajectoryPoint(positions=(Q + 0.005).tolist())  # at once: a hold target
        hold = JointTrajectory(joint_names=NAMES, points=[target])
        d.node.create_publisher(JointTrajectory, f"{NODE}/joint_trajectory", 10).publish(hold)
        end = time.monotonic() + 7.0
        while time.monotonic() < end:  # a 10 Hz loop: far too slow for kp 1000 on these inertias
            d.joint_states.publish(d.state(NAMES, Q, zero))
            d.spin(0.1)
        diagnostics = d.diagnostics_while_publishing(lambda: d.state(NAMES, Q, zero), timeout=20.0)
        assert diagnostics["feedback_scaled_joints"], diagnostics  # lowered all along
    finally:
        d.close()
        output = stop(proc)
    lines = [line for line in output.splitlines() if "feedback gains lowered" in line]
    assert len(lines) == 1, lines  # said when it started; the next word is a summary after 60 s
    assert "said again when these joints change" in lines[0]
