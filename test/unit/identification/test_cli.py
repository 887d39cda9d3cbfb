"""The identify CLI end to end on synthetic bags: parameter file, corrected URDF, report, errors."""

from __future__ import annotations

import json
import subprocess
import sys
import xml.etree.ElementTree as ET

import numpy as np
import pytest
import yaml

from rnea_ros import Friction, RobotModel, friction_torques, rnea
from rnea_ros.identification.bag import write_joint_states
from rnea_ros.identification.cli import main
from rnea_ros.identification.excitation import ExcitationOptions, design
from rnea_ros.identification.regressor import (
    body_columns,
    joint_columns,
    standard_parameters,
    with_parameters,
)
from rnea_ros.model.example_robots import example_urdf_path

URDF = example_urdf_path("ur5")
EPOCH = 1.7e9  # header stamps like a real recording's (a stamp of 0 means "not stamped")


def torques(model: RobotModel, q, qd, qdd) -> np.ndarray:
    return rnea(model, q, qd, qdd) + friction_torques(Friction(model.damping, model.coulomb), qd)


def motion(model: RobotModel, seed: int, duration: float, rate: float):
    traj = design(
        np.full(model.nv, 0.3),
        model.position_lower,
        model.position_upper,
        np.minimum(model.velocity_limit, 2.0),
        10.0,
        ExcitationOptions(
            duration=duration,
            components=5,
            frequency_range=(0.1, 1.0),
            max_amplitude=1.2,
            seed=seed,
        ),
    )
    return traj.points(rate)


@pytest.fixture(scope="module")
def truth() -> RobotModel:
    """UR5 with inertials scaled by up to ±20 % per body, friction and armature the URDF lacks."""
    model = RobotModel.from_urdf(URDF.read_text())
    rng = np.random.default_rng(0)
    n = model.nv
    pi = standard_parameters(model)
    for b in range(n):
        pi[body_columns(model, b)] *= rng.uniform(0.8, 1.2)
    pi[joint_columns(model, "viscous")] = rng.uniform(0.1, 1.0, n)
    pi[joint_columns(model, "coulomb")] = rng.uniform(0.5, 2.0, n)
    pi[joint_columns(model, "armature")] = rng.uniform(0.02, 0.2, n)
    return with_parameters(model, pi)


def record(path, model: RobotModel, seed: int, storage: str = "sqlite3", duration: float = 40.0):
    t, q, qd, qdd = motion(model, seed, duration, 500.0)
    tau = torques(model, q, qd, qdd)
    # extra joints in the messages are ignored; epoch-like stamps
    names = [*model.joint_names, "gripper_joint"]
    extra = np.zeros((len(t), 1))
    write_joint_states(
        path,
        t + EPOCH,
        names,
        np.hstack([q, extra]),
        np.hstack([qd, extra]),
        np.hstack([tau, extra]),
        storage=storage,
    )
    return t, q, qd, qdd, tau


def test_inertial_friction_then_payload_end_to_end(tmp_path, truth: RobotModel, capsys) -> None:
    record(tmp_path / "run_a", truth, seed=1, storage="mcap")
    out = tmp_path / "out"
    code = main(
        [
            str(tmp_path / "run_a"),
            "--urdf",
            str(URDF),
            "--identify",
            "inertial",
            "friction",
            "--cutoff",
            "0",
            "--out-params",
            str(tmp_path / "params.yaml"),
            "--urdf-out",
            str(tmp_path / "corrected.urdf"),
            "--report-dir",
            str(out),
        ]
    )
    captured = capsys.readouterr()
    printed = captured.out
    assert code == 0 and captured.err == ""  # a good recording: no warning
    assert "condition number" in printed and "shoulder_pan_joint" in printed
    doc = yaml.safe_load((tmp_path / "params.yaml").read_text())
    params = doc["inverse_dynamics"]["ros__parameters"]
    model = RobotModel.from_urdf(URDF.read_text())
    assert params["joints"] == list(model.joint_names)
    # no accelerations in a bag: central differences of q̇ at 500 Hz, hence 1e-3 rather than 1e-9
    np.testing.assert_allclose(params["friction"]["viscous"], truth.damping, rtol=1e-2)
    np.testing.assert_allclose(params["friction"]["coulomb"], truth.coulomb, rtol=1e-3)
    # armature: one parameter per joint (armature.<joint>), as the node declares it
    assert params["friction"]["smoothing_velocity"] == 0.01 and list(params["armature"]) == params["joints"]
    # the corrected URDF (+ the armature of the parameter file) predicts another run's torques
    corrected = RobotModel.from_urdf((tmp_path / "corrected.urdf").read_text())
    corrected = corrected.with_armature([params["armature"][j] for j in corrected.joint_names])
    _, q, qd, qdd = motion(model, seed=2, duration=20.0, rate=100.0)
    expected = torques(truth, q, qd, qdd)
    predicted = torques(corrected, q, qd, qdd)
    assert np.max(np.abs(predicted - expected)) < 2e-3 * np.max(np.abs(expected))
    urdf_only = torques(RobotModel.from_urdf(URDF.read_text()), q, qd, qdd)
    assert np.max(np.abs(urdf_only - expected)) > 0.1 * np.max(np.abs(expected))  # the test can fail
    # only <inertial> and <dynamics> changed
    before, after = ET.parse(URDF).getroot(), ET.fromstring((tmp_path / "corrected.urdf").read_text())
    for a, b in zip(before.iter("joint"), after.iter("joint"), strict=True):
        for tag in ("origin", "axis", "limit", "parent", "child"):
            assert (a.find(tag) is None) == (b.find(tag) is None)
            if a.find(tag) is not None:
                assert a.find(tag).attrib == b.find(tag).attrib
    assert [el.get("name") for el in before.iter("link")] == [el.get("name") for el in after.iter("link")]
    report = json.loads((out / "report.json").read_text())
    assert report["time_source"] == "header" and report["velocity"] == "recorded"
    assert report["sample_rate_hz"] == pytest.approx(500.0)
    assert all(r < 0.01 * m for r, m in zip(report["rms_identified"], report["rms_model"], strict=True))
    assert report["condition_number"] > 1 and all(c["ok"] for c in report["consistency"])
    assert (out / "efforts.png").stat().st_size > 10_000

    # second run with a load on tool0, identified with the corrected robot held
    loaded = truth.with_payload("tool0", 1.2, (0.01, -0.02, 0.07))
    record(tmp_path / "run_b", loaded, seed=3)
    code = main(
        [
            str(tmp_path / "run_b"),
            "--urdf",
            str(tmp_path / "corrected.urdf"),
            "--params",
            str(tmp_path / "params.yaml"),
            "--identify",
            "payload",
            "--payload-link",
            "tool0",
            "--cutoff",
            "0",
            "--out-params",
            str(tmp_path / "payload.yaml"),
        ]
    )
    assert code == 0
    payload = yaml.safe_load((tmp_path / "payload.yaml").read_text())["inverse_dynamics"]["ros__parameters"][
        "payload"
    ]
    assert payload["link"] == "tool0"
    assert payload["mass"] == pytest.approx(1.2, rel=5e-3)
    np.testing.assert_allclose(payload["com"], [0.01, -0.02, 0.07], atol=2e-3)
    assert payload["inertia"] == [0.0] * 6  # point mass unless --payload-inertia


def test_filtered_positions_only(tmp_path, truth: RobotModel, capsys) -> None:
    """Velocities not recorded: differentiated after a 10 Hz zero-phase low-pass. The robot has the
    URDF's inertials (they are held) and the friction and armature of `truth`."""
    model = RobotModel.from_urdf(URDF.read_text())
    pi = standard_parameters(truth)
    pi[: 10 * model.nv] = standard_parameters(model)[: 10 * model.nv]
    robot = with_parameters(model, pi)
    t, q, qd, qdd = motion(robot, seed=4, duration=40.0, rate=500.0)
    write_joint_states(tmp_path / "bag", t + EPOCH, robot.joint_names, q, effort=torques(robot, q, qd, qdd))
    code = main(
        [
            str(tmp_path / "bag"),
            "--urdf",
            str(URDF),
            "--identify",
            "friction",
            "--armature",
            "--differentiate-positions",
            "--report-dir",
            str(tmp_path / "r"),
        ]
    )
    assert code == 0
    report = json.loads((tmp_path / "r" / "report.json").read_text())
    assert report["velocity"] == "differentiated" and report["cutoff_hz"] == 10.0
    np.testing.assert_allclose(report["coulomb"], truth.coulomb, rtol=0.02)
    np.testing.assert_allclose(report["armature"], truth.armature, rtol=0.05)


def test_a_bag_with_lost_messages_identifies_as_a_whole_one(tmp_path, truth: RobotModel, capsys) -> None:
    """Messages lost one by one (2 %) and in three bursts (0.08, 0.3, 1 s at 500 Hz), as a recorder under
    load loses them; the default 10 Hz filter. Filtered or differentiated across a gap, the
    efforts of a burst's edges looked like motion: the held-out error of a Panda's fit went from
    1-3 % of the URDF model's to up to 114 %."""
    t, q, qd, qdd = motion(truth, seed=1, duration=40.0, rate=500.0)
    tau = torques(truth, q, qd, qdd)
    keep = np.ones(t.size, dtype=bool)
    keep[np.random.default_rng(1).choice(np.arange(1, t.size - 1), t.size // 50, replace=False)] = False
    for start, length in ((5000, 40), (9000, 150), (14000, 500)):
        keep[start : start + length] = False
    names = list(truth.joint_names)
    write_joint_states(tmp_path / "bag", t[keep] + EPOCH, names, q[keep], qd[keep], tau[keep])
    arguments = [str(tmp_path / "bag"), "--urdf", str(URDF), "--identify", "inertial", "friction"]
    assert main([*arguments, "--report-dir", str(tmp_path / "r")]) == 0
    report = json.loads((tmp_path / "r" / "report.json").read_text())
    gaps = int(np.sum(np.diff(t[keep]) > 1.5 / 500.0))
    assert report["gaps"] == gaps and report["longest_gap_s"] == pytest.approx(np.diff(t[keep]).max())
    assert report["stretches"] == 4  # the bursts cut it; single losses are bridged for the filter
    assert report["samples_kept"] < report["messages"] == keep.sum()
    assert f"recording: {gaps} gaps" in capsys.readouterr().out
    np.testing.assert_allclose(report["viscous"], truth.damping, rtol=1e-2)
    np.testing.assert_allclose(report["coulomb"], truth.coulomb, rtol=2e-3)
    ratio = np.array(report["rms_identified"]) / np.array(report["rms_model"])
    assert np.all(ratio < 0.01), ratio


def one_error_line(capsys) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("rnea_ros_identify: error: ")
    return err[0]


def test_bad_input_is_one_line_and_exit_code_2(tmp_path, truth: RobotModel, capsys) -> None:
    t, q, qd, qdd = motion(truth, seed=5, duration=10.0, rate=100.0)
    write_joint_states(tmp_path / "good", t + EPOCH, truth.joint_names, q, qd, torques(truth, q, qd, qdd))
    base = ["--urdf", str(URDF)]
    assert main([str(tmp_path / "good"), *base, "--topic", "/robot/joint_states"]) == 2
    assert "topic '/robot/joint_states' is not in the bag" in one_error_line(capsys)
    write_joint_states(tmp_path / "other", t + EPOCH, ["a", "b"], q[:, :2], qd[:, :2], q[:, :2])
    assert main([str(tmp_path / "other"), *base]) == 2
    assert "joints of the model missing from 'joint_states': shoulder_pan_joint" in one_error_line(capsys)
    write_joint_states(tmp_path / "short", t[:8] + EPOCH, truth.joint_names, q[:8], qd[:8], q[:8])
    assert main([str(tmp_path / "short"), *base, "--cutoff", "0", "--identify", "inertial"]) == 2
    assert "too few samples" in one_error_line(capsys)
    write_joint_states(tmp_path / "noeffort", t + EPOCH, truth.joint_names, q, qd)
    assert main([str(tmp_path / "noeffort"), *base]) == 2
    assert "no effort" in one_error_line(capsys)
    write_joint_states(
        tmp_path / "novelocity", t + EPOCH, truth.joint_names, q, effort=torques(truth, q, qd, qdd)
    )
    assert main([str(tmp_path / "novelocity"), *base, "--velocity", "recorded"]) == 2
    line = one_error_line(capsys)
    assert "carry no velocity for every joint" in line and "--velocity positions" in line
    assert main([str(tmp_path / "good"), "--urdf", str(tmp_path / "none.urdf")]) == 2
    assert "cannot read URDF" in one_error_line(capsys)
    assert main([str(tmp_path / "good"), *base, "--identify", "payload", "--payload-link", "moon"]) == 2
    assert "moon" in one_error_line(capsys)
    # the real entry point
    done = subprocess.run(
        [sys.executable, "-m", "rnea_ros.identification.cli", str(tmp_path / "missing"), *base],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 2 and done.stderr.strip().count("\n") == 0
    assert "does not exist" in done.stderr
