"""The ship-deck demo, bounded (`python -m rnea_ros.demo --ship-deck --hold 8 --track 8`): a Panda on
a rolling, pitching, heaving deck in MuJoCo; PD alone, PD + the effort law with fixed gravity,
with gravity from the IMU's orientation, and from its accelerometer (MuJoCo's own sensors)."""

from __future__ import annotations

import json
from pathlib import Path

from rnea_ros.demo import main
from rnea_ros.sim.demos.ship_deck import CASES, TARGET_RATIO


def test_imu_acceleration_gravity_meets_the_targets_on_a_ship_deck(tmp_path: Path) -> None:
    out_json = tmp_path / "ship_deck.json"
    code = main(
        ["--ship-deck", "--hold", "8", "--track", "8", "--out", str(tmp_path), "--json", str(out_json)]
    )
    out = json.loads(out_json.read_text())
    assert code == 0, out
    imu = out["imu_acceleration"]
    # the targets of issue 23: drift and tracking RMS at most 0.1 x PD alone, no fall
    assert imu["drift_ratio"] <= TARGET_RATIO and imu["tracking_ratio"] <= TARGET_RATIO, imu
    assert not any(out[case]["fallen"] for case in CASES)
    assert out["pd"]["drift"] > 0.1  # rad: the sea state matters (PD alone sags ~10 degrees)
    # the accelerometer's gravity follows MuJoCo's root acceleration (5 Hz low-pass lag only);
    # a fixed or tilt-only gravity misses the heave by ~1.8 m/s² RMS
    assert imu["gravity_rms"] < 0.15
    for case in ("parameter", "imu_orientation"):
        assert out[case]["gravity_rms"] > 10 * imu["gravity_rms"]
        assert out[case]["drift"] > 5 * imu["drift"]
    # the sea state is the documented one: |g - a| swings by about ±2.5 m/s²
    low, high = out["sea"]["effective_gravity_range"]
    assert low < 7.5 and high > 12.0
    assert (tmp_path / "ship_deck.png").stat().st_size > 10_000
