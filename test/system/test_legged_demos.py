"""The legged demos, bounded (`python -m rnea_ros.demo --quadruped | --humanoid` with a few
simulated seconds): against MuJoCo's simulated robot, PD + contact-consistent inverse dynamics
keeps the base height, the base orientation and the joints within 0.1 × the drift and tracking
error of joint PD alone, without falling; the floor's normal forces in MuJoCo are the law's, and
they carry the robot's weight."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rnea_ros.demo import main
from rnea_ros.sim.demos.legged.demo import FIGURES, SOLO12, TALOS, TARGET_RATIO
from rnea_ros.sim.demos.legged.scene import LeggedScene

G = 9.81


def _check(out: dict, runs: tuple[str, ...], weight: float) -> None:
    for name in runs:
        pd, law = out[name]["pd"], out[name]["law"]
        assert not law["fell"], (name, law)
        assert law["infeasible"] == 0, (name, law)
        for figure in FIGURES:
            assert law[figure] <= TARGET_RATIO * pd[figure], (name, figure, law[figure], pd[figure])
        assert out[name]["met"]
    stand = out["stand"]["law"]
    # MuJoCo's floor carries the weight (the robot is at rest) and shares it as the law's forces
    assert sum(stand["normal_sim"]) == pytest.approx(weight, rel=0.01)
    assert sum(stand["normal_law"]) == pytest.approx(weight, rel=0.01)
    for sim, law in zip(stand["normal_sim"], stand["normal_law"], strict=True):
        assert sim == pytest.approx(law, rel=0.05, abs=0.01 * weight)


def test_quadruped_stands_and_squats_with_contact_inverse_dynamics(tmp_path: Path) -> None:
    out_json = tmp_path / "quadruped.json"
    code = main(
        ["--quadruped", "--stand", "1.5", "--squat", "2", "--out", str(tmp_path), "--json", str(out_json)]
    )
    out = json.loads(out_json.read_text())
    assert code == 0, out
    _check(out, ("stand", "squat"), LeggedScene(SOLO12.urdf(), SOLO12.feet).mass * G)
    # PD alone sags by centimetres under solo12's weight: the baseline is a real drift
    assert out["stand"]["pd"]["height_drift"] > 0.01
    assert (tmp_path / "quadruped_demo.png").stat().st_size > 10_000


def test_humanoid_stands_on_both_soles_with_contact_inverse_dynamics(tmp_path: Path) -> None:
    out_json = tmp_path / "humanoid.json"
    code = main(["--humanoid", "--stand", "1.5", "--out", str(tmp_path), "--json", str(out_json)])
    out = json.loads(out_json.read_text())
    assert code == 0, out
    _check(out, ("stand",), LeggedScene(TALOS.urdf(), TALOS.feet).mass * G)
    assert out["stand"]["pd"]["tilt_drift"] > 0.01  # PD alone leans by more than 10 mrad
    assert (tmp_path / "humanoid_demo.png").stat().st_size > 10_000
