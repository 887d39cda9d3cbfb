"""Commands nobody hears: with the remap bash makes of an unquoted `-r ~/effort_commands:=...`
(the home folder in front: it matches nothing), the node publishes on /inverse_dynamics/effort_commands,
which nobody subscribes to. 2 s after the first command the node says so, once, in the log and on
/diagnostics (WARN), naming the topic, the remap to quote and the rule that starts with the home
folder; a subscriber clears it."""

from __future__ import annotations

import os
import time

import numpy as np
from std_msgs.msg import Float64MultiArray

from rnea_ros import RobotModel
from rnea_ros.model.example_robots import example_urdf_path
from rnea_ros.testing.rosgraph import FRICTION_OFF, NODE, Driver, start_node, stop

URDF = example_urdf_path("ur5").read_text()
MODEL = RobotModel.from_urdf(URDF)
NAMES = list(MODEL.joint_names)
Q, QD = np.linspace(-1.0, 1.0, MODEL.nv), np.zeros(MODEL.nv)


def diagnostics_until(d: Driver, done, ceiling: float = 60.0) -> dict:
    """/diagnostics of the node while joint_states flow, until `done(status)`; fails with the last."""
    end, status = time.monotonic() + ceiling, {}
    while time.monotonic() < end:
        status = d.diagnostics_while_publishing(lambda: d.state(NAMES, Q, QD), timeout=20.0)
        if done(status):
            return status
    raise AssertionError(f"not seen on /diagnostics: {status}")


def test_commands_nobody_hears_are_said_with_the_remap_to_check(tmp_path) -> None:
    rule = os.path.expanduser("~") + "/effort_commands:=/effort_controller/commands"  # bash's doing
    proc = start_node(tmp_path, {"robot_description": URDF, **FRICTION_OFF}, rule)
    d = Driver("unheard_driver")
    for sub in list(d.node.subscriptions):  # this driver reads the answers on ~/joint_efforts only
        if sub.topic_name == f"{NODE}/effort_commands":
            d.node.destroy_subscription(sub)
    try:
        d.wait_for_commands(lambda: d.state(NAMES, Q, QD), timeout=120.0)
        status = diagnostics_until(d, lambda s: "nobody subscribes" in s["message"])
        assert status["level"] == 1 and status["command_subscribers"] == "0", status
        assert status["command_topic"] == f"{NODE}/effort_commands"
        message = status["message"]
        assert f"nobody subscribes to {NODE}/effort_commands" in message, message
        assert "-r '~/effort_commands:=/effort_controller/commands'" in message, message
        assert f"this remap starts with the home folder: {rule}" in message, message
        # a subscriber (the controller, once the remap is right): the warning clears
        d.node.create_subscription(Float64MultiArray, f"{NODE}/effort_commands", lambda m: None, 10)
        status = diagnostics_until(d, lambda s: s["command_subscribers"] == "1" and s["level"] == 0)
        assert "nobody subscribes" not in status["message"]
    finally:
        d.close()
        output = stop(proc)
    assert output.count("nobody subscribes to") == 1, output[-4000:]  # said once, not every period
    assert f"{NODE}/effort_commands has a subscriber again" in output
