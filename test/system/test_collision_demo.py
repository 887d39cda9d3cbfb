"""The collision demo, bounded (`python -m rnea_ros.demo --collision --minutes 0.25`): the momentum
observer against MuJoCo's true external torques and applied wrench on the Panda, the collision
pulse, contact-free motion, and the naive estimator on the same data."""

from __future__ import annotations

import json
from pathlib import Path

from rnea_ros.demo import main
from rnea_ros.sim.demos.collision.demo import TARGETS


def test_collision_demo_meets_its_targets_and_beats_the_naive_estimator_with_encoders(tmp_path: Path) -> None:
    out_json = tmp_path / "collision.json"
    args = ["--collision", "--minutes", "0.25", "--out", str(tmp_path), "--json", str(out_json)]
    code = main([*args, "--mismatch-record", "15", "--mismatch-free", "3"])
    out = json.loads(out_json.read_text())
    assert code == 0, out
    for key, target in TARGETS.items():
        assert out[key] <= target, (key, out[key])
    assert out["false_alarm_samples"] == 0 and not out["false_alarm_before_pulse"]
    assert out["free_peak_ratio"] < 0.5  # margin left under the thresholds
    assert out["pulse_peak_torque"] > 2 * max(out["thresholds"])  # the pulse is a real collision
    # with 20-bit encoders the naive estimate (q̈ from positions) is far worse than the observer
    assert out["encoder_step_naive_rms"] > 5 * out["encoder_step_torque_rms"]
    # with exact data the naive one is quicker (no first-order lag): 1-2 samples vs ~ln 2 / K_O
    assert out["step_delay_naive"] <= 0.002 < out["step_delay_observer"] <= 0.010
    assert (tmp_path / "collision_demo.png").stat().st_size > 10_000
    # on the mismatched plant the URDF model leaves a residual of N m, the identified one far less
    m = out["mismatch"]
    assert min(m["rms_urdf"]) > 0.5
    assert all(i < 0.5 * u for i, u in zip(m["rms_identified"], m["rms_urdf"], strict=True))
    # thresholds above each model's contact-free peak still catch the collision in time
    assert m["detection_delay_urdf"] <= 0.010 and m["detection_delay_identified"] <= 0.010
