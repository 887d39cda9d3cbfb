"""The identify CLI's parameter file and corrected URDF drive the inverse_dynamics node."""

from __future__ import annotations

import numpy as np
import yaml
from test_cli import URDF, record, torques, truth  # noqa: F401 - truth is a fixture

from rnea_ros import RobotModel, rnea
from rnea_ros.identification.cli import main
from rnea_ros.testing.rosgraph import Driver, start_node, stop


def test_identified_parameters_load_into_the_node(tmp_path, truth: RobotModel) -> None:  # noqa: F811
    record(tmp_path / "run", truth, seed=3, duration=20.0)
    args = [str(tmp_path / "run"), "--urdf", str(URDF), "--identify", "inertial", "friction", "--cutoff", "0"]
    args += ["--out-params", str(tmp_path / "params.yaml"), "--urdf-out", str(tmp_path / "corrected.urdf")]
    assert main(args) == 0
    params = yaml.safe_load((tmp_path / "params.yaml").read_text())["inverse_dynamics"]["ros__parameters"]
    corrected_text = (tmp_path / "corrected.urdf").read_text()
    corrected = RobotModel.from_urdf(corrected_text)
    corrected = corrected.with_armature([params["armature"][j] for j in corrected.joint_names])
    # friction from the measured velocity depends on the loop period (test_friction_node.py): off here
    proc = start_node(tmp_path, {**params, "robot_description": corrected_text, "friction.scale": 0.0})
    names = list(corrected.joint_names)
    d = Driver("identify_driver", dict(zip(names, corrected.effort_limit, strict=True)))
    try:
        q, qd = np.linspace(-1, 1, 6), np.linspace(0.4, -0.4, 6)
        d.wait_for_commands(lambda: d.state(names, q, qd))
        got = d.command_for(d.state(names, q, qd))
        rigid = rnea(corrected, q, qd, np.zeros(6))
        want = np.clip(rigid, -corrected.effort_limit, corrected.effort_limit)
        assert np.allclose(got, want, atol=1e-9)
        # and it is the identified robot, not the URDF's
        assert not np.allclose(
            got, torques(RobotModel.from_urdf(URDF.read_text()), q, qd, np.zeros(6)), atol=1e-2
        )
    finally:
        d.close()
        output = stop(proc)
    assert "Traceback" not in output and "unknown parameter" not in output
