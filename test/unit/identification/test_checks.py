"""rnea_ros_identify warns (stderr, exit 3) when the fit does not explain the recording; a good
recording gives none (test_cli.py's end-to-end run asserts exit 0 and an empty stderr)."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest
from test_cli import EPOCH, URDF, motion, torques, truth  # noqa: F401 - truth is a fixture

from rnea_ros import RobotModel, gravity_torques, rnea
from rnea_ros.identification.bag import write_joint_states
from rnea_ros.identification.checks import GRAVITY_RELEVANT
from rnea_ros.identification.cli import EXIT_WARNINGS, main
from rnea_ros.identification.excitation import ExcitationOptions, design
from rnea_ros.model.example_robots import example_urdf_path

PROG = "rnea_ros_identify"


def warnings_of(capsys) -> list[str]:
    lines = capsys.readouterr().err.strip().splitlines()
    assert lines and all(line.startswith(f"{PROG}: warning: ") for line in lines), lines
    return lines


@pytest.fixture(scope="module")
def run(truth: RobotModel):  # noqa: F811
    """40 s of the UR5 `truth` at 200 Hz: t, q, qd, qdd and its efforts."""
    t, q, qd, qdd = motion(truth, seed=7, duration=40.0, rate=200.0)
    return t, q, qd, qdd, torques(truth, q, qd, qdd)


def ur5() -> RobotModel:
    return RobotModel.from_urdf(URDF.read_text())


def gravity_joints(model: RobotModel, q: np.ndarray) -> list[str]:
    spread = np.std(gravity_torques(model, q), axis=0)
    return [n for n, s in zip(model.joint_names, spread, strict=True) if s >= GRAVITY_RELEVANT * spread.max()]


def test_constant_efforts_warn_and_exit_3(tmp_path, run, capsys) -> None:
    t, q, qd, _, _ = run
    write_joint_states(tmp_path / "bag", t + EPOCH, ur5().joint_names, q, qd, np.ones_like(q))
    code = main([str(tmp_path / "bag"), "--urdf", str(URDF), "--out-params", str(tmp_path / "p.yaml")])
    assert code == EXIT_WARNINGS == 3
    warnings = warnings_of(capsys)
    gravity = [w for w in warnings if "gravity share" in w]
    assert len(gravity) == 1
    for name in gravity_joints(ur5(), q):  # the joints gravity moves: shoulder_lift, elbow, wrists
        assert name in gravity[0]
    assert "shoulder_pan_joint" not in gravity[0]  # vertical axis: no gravity torque to miss
    assert (tmp_path / "p.yaml").exists()  # the files are still written


def test_gravity_compensated_efforts_warn(tmp_path, run, capsys) -> None:
    """A driver that reports τ − g(q) (the robot's own gravity removed): gravity share ≈ 0."""
    t, q, qd, _, tau = run
    model = ur5()
    write_joint_states(tmp_path / "bag", t + EPOCH, model.joint_names, q, qd, tau - gravity_torques(model, q))
    code = main([str(tmp_path / "bag"), "--urdf", str(URDF), "--report-dir", str(tmp_path / "r")])
    assert code == 3
    gravity = [w for w in warnings_of(capsys) if "gravity share" in w]
    assert len(gravity) == 1 and "gravity-compensated" in gravity[0]
    for name in gravity_joints(model, q):
        assert name in gravity[0]
    report = json.loads((tmp_path / "r" / "report.json").read_text())
    assert report["warnings"] and f"{PROG}: warning: " + report["warnings"][0] == gravity[0]


def test_fit_no_better_than_the_prior_warns(tmp_path, run, capsys) -> None:
    """Friction in the fitted part only: the identified friction makes the held-out part worse than
    the URDF (no friction), ratio ≥ 1 on every joint."""
    t, q, qd, qdd, _ = run
    model = ur5()
    rng = np.random.default_rng(0)
    tau = rnea(model, q, qd, qdd) + rng.normal(0, 0.01, q.shape)
    fit = slice(0, int(0.7 * len(t)))
    tau[fit] += 0.5 * qd[fit] + 1.0 * np.tanh(qd[fit] / 0.01)
    write_joint_states(tmp_path / "bag", t + EPOCH, model.joint_names, q, qd, tau)
    code = main([str(tmp_path / "bag"), "--urdf", str(URDF), "--cutoff", "0"])
    assert code == 3
    ratio = [w for w in warnings_of(capsys) if "ratio (identified / prior) >= 1" in w]
    assert len(ratio) == 1, capsys.readouterr()
    assert all(name in ratio[0] for name in model.joint_names)


def test_condition_bound_warns(tmp_path, run, capsys) -> None:
    t, q, qd, _, tau = run
    write_joint_states(tmp_path / "bag", t + EPOCH, ur5().joint_names, q, qd, tau)
    args = [str(tmp_path / "bag"), "--urdf", str(URDF), "--identify", "inertial", "friction", "--cutoff", "0"]
    assert main([*args, "--report-dir", str(tmp_path / "r")]) == 0
    assert capsys.readouterr().err == ""
    cond = json.loads((tmp_path / "r" / "report.json").read_text())["condition_number"]
    assert 1 < cond < 1e5
    assert main([*args, "--max-condition", str(cond / 2)]) == 3
    (line,) = warnings_of(capsys)
    assert f"condition number {cond:.4g} > {cond / 2:g}" in line


def test_panda_without_tip_link_reports_a_finite_condition_number(tmp_path, capsys) -> None:
    """Without --tip-link the Panda model holds its two finger joints; they never move, so their
    friction is not excited: the condition number is over the excited base parameters (finite), and
    the rank deficiency is a warning naming them. The process entry point, as a user runs it."""
    model = RobotModel.from_urdf(example_urdf_path("panda").read_text())
    arm = slice(0, 7)
    lo, hi = model.position_lower[arm], model.position_upper[arm]
    traj = design(
        0.5 * (lo + hi),
        lo,
        hi,
        np.minimum(model.velocity_limit[arm], 2.0),
        10.0,
        ExcitationOptions(
            duration=20.0,
            components=5,
            frequency_range=(0.1, 1.0),
            max_amplitude=0.5,
            seed=1,
        ),
    )
    t, q7, qd7, qdd7 = traj.points(200.0)
    fingers = np.zeros((len(t), model.nv - 7))
    q, qd, qdd = np.hstack([q7, fingers + 0.02]), np.hstack([qd7, fingers]), np.hstack([qdd7, fingers])
    write_joint_states(tmp_path / "bag", t + EPOCH, model.joint_names, q, qd, rnea(model, q, qd, qdd))
    done = subprocess.run(
        [sys.executable, "-m", "rnea_ros.identification.cli", str(tmp_path / "bag"), "--urdf",
         str(example_urdf_path("panda")), "--cutoff", "0", "--report-dir", str(tmp_path / "r")],
        capture_output=True,
        text=True,
        check=False,
    )  # fmt: skip
    assert done.returncode == 3, done.stderr
    assert "condition number inf" not in done.stdout
    report = json.loads((tmp_path / "r" / "report.json").read_text())
    assert np.isfinite(report["condition_number"]) and report["condition_number"] < 1e3
    assert report["still_joints"] == ["panda_finger_joint1", "panda_finger_joint2"]
    assert sorted(report["unexcited_base_parameters"]) == sorted(
        f"panda_finger_joint{i}.{kind}" for i in (1, 2) for kind in ("viscous", "coulomb")
    )
    (line,) = [w for w in done.stderr.splitlines() if "rank deficient" in w]
    assert line.startswith(f"{PROG}: warning: the recording excites 14 of 18 base parameters")
    assert "panda_finger_joint1, panda_finger_joint2 never move" in line and "--tip-link" in line
