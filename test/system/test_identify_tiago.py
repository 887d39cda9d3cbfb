"""The files rnea_ros_identify writes are the model it scored, on a real robot's recording: the TIAGo
arm of ../shared/real-data/tiago/ (PAL Robotics TIAGo, 2021-07-01, FIGAROH examples, Apache-2.0;
data: Thanh Nguyen / CNRS / Toward SAS), its efforts converted to joint torque here.

Run as a user runs it (`python -m rnea_ros.identification.cli`, inertials and friction, the Hey5
hand's joints locked by --tip-link hand_palm_link and merged into arm_7's body). The reference is
Pinocchio: it loads the written URDF (the hand's joints locked at 0 by buildReducedModel) and,
with the parameter file's friction and armature, predicts the held-out efforts; its per-joint
RMS must be what the command printed. The identified arm_7 body (arm_7 and the hand) is lighter
than the URDF's hand alone: written onto arm_7_link alone it needed a negative mass, which was
clipped, and the written model scored 3.5 N m held out (arm_2: 6.1) where 1.0 was printed.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys

import numpy as np
import pinocchio as pin
import yaml
from paths import REPO

from rnea_ros import RobotModel
from rnea_ros.identification import cli
from rnea_ros.identification.bag import write_joint_states
from rnea_ros.identification.signals import lowpass
from rnea_ros.model.urdf import parse_urdf


def _bench(name: str):
    spec = importlib.util.spec_from_file_location(name, REPO / "bench" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


tr = _bench("tiago_recording")
URDF = tr.DATA / "tiago_48_hey5.urdf"


def test_written_files_score_what_was_printed_with_the_merged_hand(tmp_path) -> None:
    t, q, qd, raw = tr.load()
    table = tr.drives()["joints"]
    gain = np.array([table[j]["reduction_ratio"] * table[j]["kmotor"] for j in tr.JOINTS])
    gain[0] = 1.0
    write_joint_states(tmp_path / "bag", t + tr.EPOCH, tr.JOINTS, q, qd, raw * gain, storage="mcap")
    arguments = [str(tmp_path / "bag"), "--urdf", str(URDF), "--tip-link", "hand_palm_link"]
    arguments += ["--identify", "inertial", "friction"]
    files = ["--out-params", str(tmp_path / "p.yaml"), "--urdf-out", str(tmp_path / "c.urdf")]
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "rnea_ros.identification.cli",
            *arguments,
            *files,
            "--report-dir",
            str(tmp_path / "r"),
        ],
        capture_output=True,
        text=True,
        timeout=1800,
        check=False,
    )
    assert done.returncode in (0, cli.EXIT_WARNINGS), done.stderr
    report = json.loads((tmp_path / "r" / "report.json").read_text())

    # Pinocchio's model of the written files at the command's own held-out states
    full = pin.buildModelFromUrdf(str(tmp_path / "c.urdf"))
    locked = [full.getJointId(n) for n in full.names[1:] if n not in tr.JOINTS]
    model = pin.buildReducedModel(full, locked, pin.neutral(full))
    assert tuple(model.names[1:]) == tr.JOINTS
    data = model.createData()
    params = yaml.safe_load((tmp_path / "p.yaml").read_text())["inverse_dynamics"]["ros__parameters"]
    friction = params["friction"]
    samples = cli.load(cli.parse_args(arguments))[2]  # the states the command scored
    tau = np.array(
        [pin.rnea(model, data, *state) for state in zip(samples.q, samples.qd, samples.qdd, strict=True)]
    )
    armature = [params["armature"][j] for j in tr.JOINTS]  # armature.<joint>
    tau += np.asarray(armature) * samples.qdd + np.asarray(friction["viscous"]) * samples.qd
    coulomb_column = lowpass(samples.t, np.tanh(samples.qd / friction["smoothing_velocity"]), samples.cutoff)
    tau += np.asarray(friction["coulomb"]) * coulomb_column
    start = report["train_samples"]
    rms = np.sqrt(np.mean((samples.tau[start:] - tau[start:]) ** 2, axis=0))
    np.testing.assert_allclose(report["rms_identified"], rms, rtol=1e-6)
    assert "scored: the model of" in done.stdout and "arm_7_link" in done.stdout
    assert report["written_model"]["same"] and report["written_model"]["relative_difference"] < 1e-6

    # the merged hand: arm_7's body is lighter than the URDF's hand; every written link is physical
    urdf, written = parse_urdf(URDF.read_text()), parse_urdf((tmp_path / "c.urdf").read_text())
    arm_7 = model.inertias[model.getJointId("arm_7_joint")]
    hand = sum(urdf.links[k].mass for k in urdf.links if k.startswith("hand_") and urdf.links[k] is not None)
    assert 0 < arm_7.mass < hand
    moving = RobotModel.from_urdf(URDF.read_text(), tip_link="hand_palm_link").link_frames
    bodies = [
        link for link, frame in moving.items() if frame.body >= 0
    ]  # arm_1_link: not physical in the URDF
    assert all(
        written.links[k] is None or (written.links[k].defect is None and written.links[k].mass >= 0)
        for k in bodies
    )
    assert any("so that the written body is the identified one" in note for note in report["urdf_notes"])
