"""`python -m rnea_ros.sim.compare_models URDF MJCF`: its numbers against Pinocchio on the URDF
and MuJoCo reading the MJCF itself, on the same random states."""

from __future__ import annotations

import mujoco
import numpy as np
import pinocchio as pin
import pytest
from paths import PANDA_XML, XARM7_XML

from rnea_ros.model.example_robots import example_urdf_path
from rnea_ros.sim.compare_models import compare, main

PANDA = example_urdf_path("panda")
XARM7 = example_urdf_path("xarm_description/urdf/xarm7.urdf")


def reference_gravity_gap(samples: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """(RMS, max) of MuJoCo's qfrc_bias at rest (xarm7.xml, gripper at 0) minus Pinocchio's
    gravity of xarm7.urdf over the states compare() draws (uniform in the URDF's limits, in order)."""
    pm = pin.buildModelFromUrdf(str(XARM7))
    pd = pm.createData()
    raw = mujoco.MjModel.from_xml_path(str(XARM7_XML))
    data = mujoco.MjData(raw)
    rng = np.random.default_rng(seed)
    gaps = []
    for _ in range(samples):
        q = rng.uniform(pm.lowerPositionLimit, pm.upperPositionLimit)
        data.qpos[:] = 0.0
        data.qpos[:7] = q
        data.qvel[:] = 0.0
        mujoco.mj_forward(raw, data)
        gaps.append(data.qfrc_bias[:7] - pin.computeGeneralizedGravity(pm, pd, q))
    gap = np.array(gaps)
    return np.sqrt(np.mean(gap**2, axis=0)), np.abs(gap).max(axis=0)


def test_xarm7_gap_is_the_grippers_weight_and_the_armature() -> None:
    gap = compare(str(XARM7), str(XARM7_XML), samples=50)
    rms, peak = reference_gravity_gap(50)
    np.testing.assert_allclose(gap.gravity_rms, rms, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(gap.gravity_max, peak, rtol=1e-6, atol=1e-9)
    assert gap.gravity_rms[1] > 1.0  # joint 2 carries the 0.75 kg gripper
    np.testing.assert_array_equal(gap.plant["armature"], 0.1)
    np.testing.assert_array_equal(gap.urdf["armature"], 0.0)
    np.testing.assert_array_equal(gap.plant["damping"], gap.urdf["damping"])  # 10 10 5 5 5 2 2 both
    np.testing.assert_array_equal(gap.plant["coulomb"], 1.0)
    # joint 7's rigid group: link7 and the gripper's base (MuJoCo's masses) against link7 alone
    raw = mujoco.MjModel.from_xml_path(str(XARM7_XML))
    group = next(g for g in gap.groups if g.joint == "joint7")
    assert group.plant_mass == pytest.approx(
        raw.body("link7").mass[0] + raw.body("xarm_gripper_base_link").mass[0]
    )
    assert group.urdf_mass == pytest.approx(pin.buildModelFromUrdf(str(XARM7)).inertias[7].mass)
    held = [g for g in gap.groups if g.joint.endswith("(plant only, held)")]
    assert len(held) == 6


def test_panda_gap_is_armature_and_damping_only(capsys) -> None:
    assert main([str(PANDA), str(PANDA_XML), "--samples", "20"]) == 0
    out = capsys.readouterr().out
    assert "panda_joint1=joint1" in out and "plant only (held by the simulator): none" in out
    rows = {  # the per-joint table (the rigid groups' has fewer columns)
        line.split("|")[0].strip(): line
        for line in out.splitlines()
        if line.startswith("panda_") and line.count("|") == 7
    }
    assert len(rows) == 9
    for row in rows.values():
        cells = [c.strip() for c in row.split("|")]
        assert cells[1] == "0.1/0"  # armature: MJCF / URDF
        assert cells[2] in ("1/0.003", "1/0.3")  # damping (the URDF's fingers: 0.3)
        assert float(cells[-1].split()[0]) < 1e-8  # gravity torque gap, N m
    assert "moving mass: plant 16.8221 kg, URDF 16.8221 kg" in out


def test_a_pair_that_is_not_one_arm_ends_with_2(capsys) -> None:
    assert main([str(example_urdf_path("ur5")), str(PANDA_XML)]) == 2
    assert "cannot be paired in chain order" in capsys.readouterr().err
    assert main([str(PANDA), "/nonexistent/panda.xml"]) == 2
    assert "not found" in capsys.readouterr().err
