"""Trajectories nobody hears: with the remap bash makes of an unquoted
`-r ~/trajectory_out:=/joint_trajectory_controller/joint_trajectory` (the home folder in front: it
matches nothing), trajectory_feedforward publishes on its own ~/trajectory_out, where no
controller listens. 2 s after the first trajectory went out it says so, once, in the log and on
/diagnostics (WARN), naming the topic and the remap to quote."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import yaml
from test_trajectory_feedforward import NODE, Driver, panda_urdf, trajectory

from rnea_ros.ros.processes import die_with_parent
from rnea_ros.testing.rosgraph import stop

ARM = [f"panda_joint{i}" for i in range(1, 8)]
HOME = np.array([0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785])


def test_trajectories_nobody_hears_are_said_with_the_remap_to_check(tmp_path) -> None:
    path = tmp_path / "params.yaml"
    params = {"robot_description": panda_urdf(), "tip_link": "panda_hand", "diagnostics_period": 0.2}
    path.write_text(yaml.safe_dump({"trajectory_feedforward": {"ros__parameters": params}}))
    rule = os.path.expanduser("~") + "/trajectory_out:=/joint_trajectory_controller/joint_trajectory"
    args = [sys.executable, "-m", "rnea_ros.nodes.trajectory_feedforward", "--ros-args"]
    proc = subprocess.Popen(
        [*args, "--params-file", str(path), "-r", rule], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        text=True, preexec_fn=die_with_parent,
    )  # fmt: skip
    d = Driver("ff_unheard")  # listens on /jtc/joint_trajectory: not where the node publishes
    try:
        assert d.spin_until(
            lambda: d.status().get("model_loaded") == "True" and d.pub.get_subscription_count() >= 1, 60.0
        ), d.status()
        move = trajectory(ARM, [0.0, 1.0], [HOME, HOME + 0.1], [np.zeros(7), np.zeros(7)])
        d.pub.publish(move)
        assert d.spin_until(lambda: d.status().get("trajectories_published") == "1", 30.0), d.status()
        assert d.spin_until(lambda: "nobody subscribes" in d.status().get("message", ""), 30.0), d.status()
        status = d.status()
        assert status["level"] == 1 and status["trajectory_out_subscribers"] == "0", status
        assert status["trajectory_out"] == f"{NODE}/trajectory_out"
        assert f"nobody subscribes to {NODE}/trajectory_out" in status["message"]
        assert "-r '~/trajectory_out:=/joint_trajectory_controller/joint_trajectory'" in status["message"]
        assert f"this remap starts with the home folder: {rule}" in status["message"]
    finally:
        d.close()
        output = stop(proc)
    assert output.count("nobody subscribes to") == 1, output[-4000:]
