"""rnea_ros_param (the pip-only `ros2 param`) as a process against the running inverse_dynamics
node: the README's lines, integers kept as doubles, refusals and a missing node."""

from __future__ import annotations

import subprocess
import sys

import numpy as np

from rnea_ros import RobotModel
from rnea_ros.model.example_robots import example_urdf_path
from rnea_ros.nodes.inverse_dynamics.params import INVERSE_DYNAMICS
from rnea_ros.testing.rosgraph import FRICTION_OFF, Driver, start_node, stop

UR5 = example_urdf_path("ur5").read_text()
MODEL = RobotModel.from_urdf(UR5)
NAMES = list(MODEL.joint_names)


def param(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "rnea_ros.tools.param", *args],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip


def test_list_get_set_describe_against_the_node(tmp_path) -> None:
    proc = start_node(tmp_path, {"robot_description": UR5, **FRICTION_OFF})
    d = Driver("param_tool_driver", dict(zip(NAMES, MODEL.effort_limit, strict=True)))
    try:
        q, qd = np.linspace(-1, 1, 6), np.zeros(6)
        before = d.wait_for_commands(lambda: d.state(NAMES, q, qd))
        listed = param("list", "/inverse_dynamics")
        assert listed.returncode == 0, listed.stderr
        names = [line.strip() for line in listed.stdout.splitlines()]
        assert set(INVERSE_DYNAMICS) <= set(names)  # every parameter of the schema
        # the README's line: ros2 param set /inverse_dynamics effort_limit_scale 1 (an integer)
        done = param("set", "/inverse_dynamics", "effort_limit_scale", "1")
        assert done.returncode == 0 and done.stdout.strip() == "Set parameter successful", done.stderr
        got = param("get", "/inverse_dynamics", "effort_limit_scale")
        assert got.stdout.strip() == "Double value is: 1.0"
        described = param("describe", "/inverse_dynamics", "effort_limit_scale")
        assert described.returncode == 0 and "  Type: double" in described.stdout
        # a live change the node applies: gravity halved halves the command at rest
        assert param("set", "/inverse_dynamics", "gravity", "[0, 0, -4.905]").returncode == 0
        assert param("get", "/inverse_dynamics", "gravity").stdout.strip() == (
            "Double array value is: [0.0, 0.0, -4.905]"
        )
        after = d.command_for(d.state(NAMES, q, qd))
        assert np.allclose(after, 0.5 * before, atol=1e-9) and np.max(np.abs(before)) > 1.0
        assert param("set", "/inverse_dynamics", "compensate.friction", "false").returncode == 0
        assert (
            param("get", "/inverse_dynamics", "compensate.friction").stdout.strip()
            == "Boolean value is: False"
        )
        refused = param("set", "/inverse_dynamics", "effort_limit_scale", "fast")
        assert refused.returncode == 1 and "Setting parameter failed: effort_limit_scale" in refused.stderr
        unknown = param("get", "/inverse_dynamics", "no_such_parameter")
        assert unknown.returncode == 1 and "Parameter not set: no_such_parameter" in unknown.stderr
    finally:
        d.close()
        output = stop(proc)
    assert "Traceback" not in output
    missing = param("--timeout", "0.5", "get", "/no_such_node", "x")
    assert missing.returncode == 2 and "node '/no_such_node' not found" in missing.stderr
