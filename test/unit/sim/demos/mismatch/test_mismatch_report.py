"""rnea_ros.sim.demos.mismatch.report: windows, name mapping and targets of the mismatch demo, on
recordings and reports made up here with known answers."""

from __future__ import annotations

import numpy as np
import pytest

from rnea_ros.sim.demos.mismatch.report import Comparison, Track, check_targets, table, targets
from rnea_ros.sim.plant import PAYLOAD_COM, PAYLOAD_MASS, Plant
from rnea_ros.sim.report import Recording

JOINTS = ["a", "b", "c"]
PLANT = Plant("<robot/>", ["c", "a", "b"], np.array([3.0, 1.0, 2.0]), np.array([0.3, 0.1, 0.2]), np.zeros(3))


def recording(amplitude: np.ndarray) -> Recording:
    """1 kHz for 10 s; inside 2..8 s the error is amplitude · sin, outside a large one (not counted)."""
    t = np.arange(10001) * 1e-3
    q_des = np.zeros((t.size, 3))
    inside = (t >= 2.0) & (t <= 8.0)
    err = np.where(inside[:, None], np.radians(amplitude) * np.sin(2 * np.pi * t)[:, None], 1.0)
    return Recording(list(JOINTS), t, q_des - err, q_des, (0, 0), (2.0, 8.0), (2.0, 8.0))


def payload_report(mass: float = PAYLOAD_MASS, com=PAYLOAD_COM) -> dict:
    """identify's report.json of run B (the fields the demo reads)."""
    return {
        "joints": JOINTS,
        "rms_model": [1.0] * 3,
        "rms_identified": [0.1] * 3,
        "payload": {"mass": mass, "com": list(com)},
    }


def report(order: list[str], rms_model, rms_identified, viscous, coulomb, moving=None) -> dict:
    """identify's report.json fields, arrays in `order` (given here in JOINTS order); `moving`:
    rms_identified_moving (rms_model_moving = rms_model), default rms_identified."""
    idx = [JOINTS.index(j) for j in order]
    pick = lambda a: [float(np.asarray(a, dtype=float)[i]) for i in idx]  # noqa: E731
    return {
        "joints": order,
        "rms_model": pick(rms_model),
        "rms_identified": pick(rms_identified),
        "rms_model_moving": pick(rms_model),
        "rms_identified_moving": pick(rms_identified if moving is None else moving),
        "viscous": pick(viscous),
        "coulomb": pick(coulomb),
        "armature": pick([0.0, 0.0, 0.0]),
        "condition_number": 10.0,
        "train_samples": 7,
        "validation_samples": 3,
    }


def test_track_counts_the_window_only() -> None:
    track = Track.of("x", recording(np.array([1.0, 2.0, 4.0])), (2.0, 8.0))
    assert track.t[0] == 0.0 and track.t[-1] == pytest.approx(6.0)
    # RMS of A sin over whole periods is A/√2 (deg), the max is A
    np.testing.assert_allclose(track.rms, np.array([1.0, 2.0, 4.0]) / np.sqrt(2), rtol=1e-3)
    np.testing.assert_allclose(track.max, [1.0, 2.0, 4.0], rtol=1e-6)
    with pytest.raises(ValueError, match="no joint_states"):
        Track.of("x", recording(np.ones(3)), (20.0, 30.0))


def test_comparison_maps_by_name_and_checks_every_target() -> None:
    urdf = Track.of("URDF model", recording(np.array([10.0, 10.0, 10.0])), (2.0, 8.0))
    ident = Track.of("identified", recording(np.array([1.0, 1.9, 4.0])), (2.0, 8.0))
    truth_v, truth_c = np.array([1.0, 2.0, 3.0]), np.array([0.1, 0.2, 0.3])  # JOINTS order
    all_samples, moving = [0.3, 0.3, 0.05], [0.05, 0.2, 0.05]  # a's sticking rows: not the target
    rep = report(["b", "c", "a"], [1.0] * 3, all_samples, truth_v * [1.0, 1.2, 1.0], truth_c, moving)
    off = PAYLOAD_COM + [0.0, 0.011, 0.0]  # 1.1 cm off
    reports = [rep, payload_report(1.04 * PAYLOAD_MASS, off)]
    c = Comparison.of([urdf, ident], reports, PLANT)
    assert c.payload_mass == pytest.approx(1.04 * PAYLOAD_MASS) and c.payload_com_error == pytest.approx(
        0.011
    )
    np.testing.assert_allclose(c.tracking_ratio, [10.0, 10 / 1.9, 2.5], rtol=1e-3)
    np.testing.assert_allclose(c.torque_ratio, all_samples)
    np.testing.assert_allclose(c.moving_ratio, moving)
    np.testing.assert_allclose(c.friction_error("viscous"), [0.0, 0.2, 0.0], atol=1e-15)
    np.testing.assert_allclose(c.friction_error("coulomb"), 0.0, atol=1e-15)
    failed = check_targets([urdf, ident], reports, PLANT)
    assert any(f.startswith("c: tracking RMS ratio 2.5") for f in failed)
    assert any(f.startswith("b: held-out torque RMS ratio (moving) 0.2") for f in failed)
    assert any(f.startswith("b: viscous off by +20.0 %") for f in failed)
    assert any(f.startswith("payload com off by 11") for f in failed)  # mass 4 % off: met
    assert len(failed) == 4  # b's tracking ratio 5.26: met
    assert "10.0x" in table([urdf, ident], reports, PLANT)
    failed = check_targets([urdf, ident], [rep, payload_report(0.94 * PAYLOAD_MASS)], PLANT)
    assert any(f.startswith("payload mass 1.41 kg") for f in failed)


def test_all_met() -> None:
    urdf = Track.of("URDF model", recording(np.full(3, 10.0)), (2.0, 8.0))
    ident = Track.of("identified", recording(np.full(3, 1.0)), (2.0, 8.0))
    rep = report(JOINTS, [1.0] * 3, [0.1] * 3, [1.0, 2.0, 3.0], [0.1, 0.2, 0.3])
    assert check_targets([urdf, ident], [rep, payload_report()], PLANT) == []


def test_a_foreign_plant_is_judged_without_a_tool_on_every_joint() -> None:
    """A plant someone else modelled (an MJCF): no run B, the held-out target on every joint (the
    made-up Panda's stops at HELD_OUT_JOINTS), the identified model's max error < 1 degree, and
    friction printed but not judged (its Coulomb may be 0: no relative error)."""
    foreign = Plant(
        "<robot/>", list(JOINTS), np.ones(3), np.array([0.0, 1.0, 1.0]), np.full(3, 0.1), mjcf="arm.xml"
    )
    urdf = Track.of("URDF model", recording(np.full(3, 10.0)), (2.0, 8.0))
    ident = Track.of("identified", recording(np.array([0.5, 0.5, 1.5])), (2.0, 8.0))  # c: max 1.5 deg
    rep = report(JOINTS, [1.0] * 3, [0.05] * 3, [1.5, 1.0, 1.0], [0.0, 1.0, 1.0], moving=[0.05, 0.05, 0.2])
    c = Comparison.of([urdf, ident], [rep], foreign)
    assert np.isnan(c.payload_mass) and np.isnan(c.friction_error("coulomb")[0])
    np.testing.assert_allclose(c.max_identified, [0.5, 0.5, 1.5], rtol=1e-6)
    failed = check_targets([urdf, ident], [rep], foreign)
    assert failed == [
        "c: held-out torque RMS ratio (moving) 0.2 > 0.1",  # joint 3 of 3: judged here
        "c: identified model's max error 1.5 deg >= 1",
    ], failed  # a's viscous 50 % off: not judged
    assert "FOREIGN" not in targets(foreign) and "every joint where it moves" in targets(foreign)
    text = table([urdf, ident], [rep], foreign)
    assert "payload" not in text and "tool" not in text and "max error 1.500 deg" in text
