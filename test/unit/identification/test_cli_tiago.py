"""rnea_ros_identify on a real robot's recording: the TIAGo arm of ../shared/real-data/tiago/ (PAL
Robotics TIAGo, 2021-07-01, FIGAROH examples, Apache-2.0; data: Thanh Nguyen / CNRS / Toward SAS),
written to bags here (no copy of the data in the repository). Each test is one flaw a new user
met on it (issue 36): the missing-joints error without a hint, a lagging logged velocity taken as
is, untrusted efforts fitted, no time window, drive units, stamp 0, quantised wrist efforts."""

from __future__ import annotations

import importlib.util
import json
import sys

import numpy as np
import pytest
from paths import REPO

from rnea_ros import RobotModel
from rnea_ros.identification.bag import write_joint_states
from rnea_ros.identification.cli import EXIT_WARNINGS, main


def _bench(name: str):
    spec = importlib.util.spec_from_file_location(name, REPO / "bench" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


tr = _bench("tiago_recording")
URDF = tr.DATA / "tiago_48_hey5.urdf"
ARM = list(tr.SCORED)  # arm_1 .. arm_4: the joints whose efforts are trusted
LAG_SAMPLES = 0.95 / 0.05  # the logged velocity's filter v[n] = 0.95 v[n-1] + 0.05 dq/dt: 19 samples


@pytest.fixture(scope="module")
def tiago(tmp_path_factory):
    """Bags of the recording: raw drive efforts; efforts in joint torque (converted here from
    drives.yaml); unstamped; logged velocities replaced by central differences of the positions;
    and the drive constants as node parameters."""
    out = tmp_path_factory.mktemp("tiago")
    t, q, qd, raw = tr.load()
    table = tr.drives()["joints"]
    gain = np.array([table[j]["reduction_ratio"] * table[j]["kmotor"] for j in tr.JOINTS])
    gain[0] = 1.0  # the torso: joint_torque in the parameter file
    tau = raw * gain
    stamps = t + tr.EPOCH
    paths = {name: out / name for name in ("raw", "torque", "unstamped", "exact_velocity")}
    write_joint_states(paths["raw"], stamps, tr.JOINTS, q, qd, raw, storage="mcap")
    write_joint_states(paths["torque"], stamps, tr.JOINTS, q, qd, tau, storage="mcap")
    write_joint_states(paths["unstamped"], stamps, tr.JOINTS, q, qd, tau, storage="mcap", stamped=False)
    write_joint_states(paths["exact_velocity"], stamps, tr.JOINTS, q, np.gradient(q, t, axis=0), tau)
    paths["drives"] = tr.effort_params(out / "drives.yaml")
    return {**paths, "out": out, "t": t, "q": q, "tau": tau}


def run(tiago, bag: str, *extra: str, report: str | None = None) -> tuple[int, dict | None]:
    args = [str(tiago[bag]), "--urdf", str(URDF), "--tip-link", "arm_7_link", *extra]
    directory = tiago["out"] / (report or bag)
    code = main([*args, "--report-dir", str(directory)])
    path = directory / "report.json"
    return code, json.loads(path.read_text()) if code != 2 and path.exists() else None


def test_missing_joints_name_the_tip_link_that_fits_the_bag(tiago, capsys) -> None:
    """The whole TIAGo (wheels, head, 36 hand joints) against a bag of torso + arm: the error says
    which --tip-link models exactly the bag's joints; that chain is the CSV's columns."""
    assert main([str(tiago["torque"]), "--urdf", str(URDF)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "joints of the model missing from 'joint_states': " in err[0]
    assert "wheel_right_joint" in err[0] and "--tip-link arm_7_link" in err[0]
    chain = RobotModel.from_urdf(URDF.read_text(), tip_link="arm_7_link").joint_names
    header = (tr.DATA / "dynamic_tiago_position.csv").read_text().splitlines()[0].split(",")[1:]
    assert [h.strip("- ").removesuffix("_position") for h in header] == list(chain)


def test_a_lagging_logged_velocity_is_found_and_replaced(tiago, capsys) -> None:
    """TIAGo logs a first-order filtered velocity (about 19 samples behind): by default the command
    measures the lag, differentiates the positions instead and says so; the held-out error drops.
    A bag whose velocities are the positions' central differences keeps them."""
    excitation = ("--fit-joints", *ARM, "--window", "9.21", "67.90")
    code, auto = run(tiago, "torque", *excitation)
    assert code in (0, EXIT_WARNINGS)
    printed = capsys.readouterr().out
    assert auto["velocity"] == "differentiated" and "lags the position derivative" in auto["velocity_choice"]
    assert "velocity: from the positions (auto: the recorded velocity lags" in printed
    lags = [auto["velocity_lag_samples"][j] for j in tr.JOINTS[1:]]
    assert abs(np.median(lags) - LAG_SAMPLES) <= 4 and min(lags) >= 12, lags
    # the same recording with its logged velocity used as is: a warning, and a worse fit
    code, recorded = run(tiago, "torque", *excitation, "--velocity", "recorded", report="recorded")
    assert code == EXIT_WARNINGS and recorded["velocity"] == "recorded"
    assert "recorded velocity lags the derivative of the recorded positions" in capsys.readouterr().err
    assert auto["pooled_rms_identified"] < 0.9 * recorded["pooled_rms_identified"]
    # --differentiate-positions is not ignored when the bag has velocities (it was)
    _, forced = run(tiago, "torque", *excitation, "--differentiate-positions", report="forced")
    assert forced["velocity"] == "differentiated" and forced["viscous"] == auto["viscous"]
    # velocities that keep up with the positions are kept
    code, exact = run(tiago, "exact_velocity", *excitation)
    assert code in (0, EXIT_WARNINGS) and exact["velocity"] == "recorded"
    assert set(exact["velocity_lag_samples"].values()) == {0}


def test_fit_joints_leave_the_other_efforts_out(tiago, capsys) -> None:
    """With --fit-joints arm_1..arm_4 the torso's and the wrist's efforts change nothing: replaced
    by noise a hundred times larger, the identified friction is the same; theirs keeps the URDF's;
    they are neither warned about (quantised, gravity) nor scored."""
    t, q, tau = tiago["t"], tiago["q"], tiago["tau"].copy()
    untrusted = [0, 5, 6, 7]
    tau[:, untrusted] = 100 * np.random.default_rng(0).normal(size=(len(t), 4))
    write_joint_states(tiago["out"] / "noisy", t + tr.EPOCH, tr.JOINTS, q, None, tau)
    tiago["noisy"] = tiago["out"] / "noisy"
    code, clean = run(tiago, "torque", "--fit-joints", *ARM, "--velocity", "positions", report="fit_clean")
    first = capsys.readouterr()
    assert code == 0, first.err
    code, noisy = run(tiago, "noisy", "--fit-joints", *ARM, "--velocity", "positions")
    assert code == 0, capsys.readouterr().err
    arm = [tr.JOINTS.index(j) for j in ARM]
    for key in ("viscous", "coulomb"):
        np.testing.assert_allclose(np.array(noisy[key])[arm], np.array(clean[key])[arm], rtol=1e-9)
    urdf = RobotModel.from_urdf(URDF.read_text(), tip_link="arm_7_link")
    np.testing.assert_array_equal(np.array(clean["viscous"])[untrusted], urdf.damping[untrusted])
    np.testing.assert_array_equal(np.array(clean["coulomb"])[untrusted], urdf.coulomb[untrusted])
    assert clean["fit_joints"] == ARM
    for name in ("torso_lift_joint", "arm_5_joint", "arm_6_joint", "arm_7_joint"):
        assert f"{name:<22}(effort not fitted, not scored)" in first.out
    rms = np.array(clean["rms_identified"])[arm]
    assert clean["pooled_rms_identified"] == pytest.approx(np.sqrt(np.mean(rms**2)), rel=1e-12)
    assert clean["pooled_rms_identified"] < 0.9 * clean["pooled_rms_model"]


def test_a_window_is_the_bag_cut_beforehand(tiago, capsys) -> None:
    """--window 9.21 67.90 (the excitation) fits what a bag of those messages alone fits."""
    t, q, tau = tiago["t"], tiago["q"], tiago["tau"]
    t0, t1 = 9.21, 67.90
    rows = (t >= t0) & (t <= t1)
    write_joint_states(tiago["out"] / "cut", t[rows] + tr.EPOCH, tr.JOINTS, q[rows], None, tau[rows])
    tiago["cut"] = tiago["out"] / "cut"
    common = ("--fit-joints", *ARM, "--velocity", "positions")
    code, windowed = run(tiago, "torque", *common, "--window", str(t0), str(t1), report="windowed")
    assert code == 0, capsys.readouterr().err
    code, cut = run(tiago, "cut", *common)
    assert code == 0, capsys.readouterr().err
    assert windowed["messages"] == cut["messages"] == rows.sum() and windowed["messages_read"] == len(t)
    assert windowed["window_s"] == [t0, t1]
    assert t0 <= windowed["train_time_s"][0] and windowed["validation_time_s"][1] <= t1
    for key in ("viscous", "coulomb", "rms_identified"):
        np.testing.assert_allclose(windowed[key], cut[key], rtol=1e-8)
    code, _ = run(tiago, "torque", "--window", "90", "100")
    assert code == 2 and "--window 90 100 holds 0 messages" in capsys.readouterr().err


def test_drive_units_from_the_node_parameters(tiago, capsys) -> None:
    """The raw efforts with --effort-params (effort_unit current, gearing.ratio and
    torque_constant: drives.yaml's constants) identify what efforts converted beforehand do."""
    common = ("--fit-joints", *ARM, "--velocity", "positions")
    code, converted = run(tiago, "torque", *common, report="converted")
    assert code == 0, capsys.readouterr().err
    code, raw = run(tiago, "raw", *common, "--effort-params", str(tiago["drives"]))
    assert code == 0, capsys.readouterr().err
    for key in ("viscous", "coulomb", "rms_identified"):
        np.testing.assert_allclose(raw[key], converted[key], rtol=1e-9)
    assert raw["effort_units"]["arm_2_joint"] == "current"
    assert raw["effort_sign_reversed"] == [
        "arm_3_joint",
        "arm_4_joint",
        "arm_5_joint",
        "arm_6_joint",
        "arm_7_joint",
    ]
    np.testing.assert_allclose(raw["effort_to_joint_torque"][1:3], [13.6, 13.6], rtol=1e-12)


def test_stamp_zero_is_warned_with_the_fix(tiago, capsys) -> None:
    """Unstamped messages are timed by the bag's receive times, and the command says so and how
    to fix it (it used to switch silently)."""
    code, report = run(tiago, "unstamped", "--identify", "friction")
    err = capsys.readouterr().err
    assert code == EXIT_WARNINGS
    assert (
        f"{len(tiago['t'])} of {len(tiago['t'])} messages on 'joint_states' have a header stamp of 0" in err
    )
    assert "header.stamp" in err and "joint_state_broadcaster" in err
    assert report["time_source"] == "bag" and report["zero_stamps"] == len(tiago["t"])


def test_quantised_wrist_efforts_are_named_as_such(tiago, capsys) -> None:
    """Every joint fitted: the wrist efforts (about 40 distinct values, 88-90 % exactly 0) are
    named quantised, with their counts, not blamed on gravity."""
    code, report = run(tiago, "torque", "--identify", "friction", report="all_joints")
    err = capsys.readouterr().err
    assert code == EXIT_WARNINGS
    for j in (5, 6, 7):
        name = f"arm_{j}_joint"
        values, counts = np.unique(tiago["tau"][:, tr.JOINTS.index(name)], return_counts=True)
        share = 100 * counts.max() / counts.sum()
        assert f"the efforts of {name} are quantised: {values.size} distinct values" in err
        assert f"{share:.1f} % of them exactly 0" in err
    assert "gravity-compensated" not in err
    assert [q["joint"] for q in report["quantised_efforts"]] == ["arm_5_joint", "arm_6_joint", "arm_7_joint"]
