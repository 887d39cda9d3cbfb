"""The payload demo's simulator and figures, no ROS: the object welded to MuJoCo's hand body is
the payload rnea_ros's model takes (MuJoCo's bias forces and inverse dynamics of the welded arm
equal rnea with `with_payload` to 1e-9 on random states), the release restores the arm exactly,
and the demo's tracking level is the windowed RMS it says."""

from __future__ import annotations

import numpy as np
import pytest

from rnea_ros import RobotModel, rnea
from rnea_ros.model.example_robots import example_urdf_path
from rnea_ros.sim.demos.payload.demo import LEVEL_WINDOW, tracking_level
from rnea_ros.sim.demos.payload.plant import HAND, OBJECT, Load, unweld, weld
from rnea_ros.sim.mujoco_arm import MujocoArm
from rnea_ros.sim.report import Recording

URDF = example_urdf_path("panda").read_text()


@pytest.mark.parametrize("load", [OBJECT, Load(0.7, (0.03, -0.02, 0.1), (1e-3, 2e-3, 2.5e-3))])
def test_the_welded_object_is_the_models_payload(load: Load) -> None:
    import mujoco

    model = RobotModel.from_urdf(URDF)
    arm = MujocoArm(URDF)
    hand = mujoco.mj_name2id(arm.model, mujoco.mjtObj.mjOBJ_BODY, HAND)
    bare = [
        x.copy()
        for x in (arm.model.body_mass, arm.model.body_ipos, arm.model.body_iquat, arm.model.body_inertia)
    ]
    loaded = model.with_payload(HAND, load.mass, load.com, np.diag(load.inertia))
    rng = np.random.default_rng(4)
    saved = weld(arm.model, hand, load)
    for _ in range(10):
        q = rng.uniform(np.maximum(model.position_lower, -3), np.minimum(model.position_upper, 3))
        qd, qdd = rng.normal(0, 1, model.nv), rng.normal(0, 3, model.nv)
        want = rnea(loaded, q, qd, qdd)
        assert np.max(np.abs(arm.inverse(q, qd, qdd) - want)) < 1e-9 * np.max(np.abs(want))
        assert np.max(np.abs(arm.bias(q, qd) - rnea(loaded, q, qd, np.zeros(model.nv)))) < 1e-9 * np.max(
            np.abs(want)
        )
    unweld(arm.model, hand, saved)
    now = (arm.model.body_mass, arm.model.body_ipos, arm.model.body_iquat, arm.model.body_inertia)
    assert all(np.array_equal(a, b) for a, b in zip(bare, now, strict=True))
    q = rng.uniform(np.maximum(model.position_lower, -3), np.minimum(model.position_upper, 3))
    assert (
        np.max(
            np.abs(arm.bias(q, np.zeros(model.nv)) - rnea(model, q, np.zeros(model.nv), np.zeros(model.nv)))
        )
        < 1e-9
    )


def test_the_object_is_2_kg_5_cm_out_along_the_flange_axis() -> None:
    assert OBJECT.mass == 2.0 and OBJECT.com == (0.0, 0.0, 0.05)
    ixx, iyy, izz = OBJECT.inertia  # a solid cylinder 6 cm across, 8 cm long
    assert ixx == iyy == pytest.approx(2.0 * (3 * 0.03**2 + 0.08**2) / 12) and izz == pytest.approx(
        2.0 * 0.03**2 / 2
    )


def test_tracking_level_is_the_largest_joints_rms_over_the_window() -> None:
    rng = np.random.default_rng(1)
    t = np.arange(0, 3.0, 1e-3)
    q_des = rng.normal(0, 1e-3, (t.size, 3))
    q = np.zeros_like(q_des)
    rec = Recording(["a", "b", "c"], t, q, q_des, (0, 0), (0, 3), (np.inf, np.inf))
    times, level = tracking_level(rec)
    e = np.degrees(q_des)
    for k in (10, 600, 1500, t.size - 1):
        window = (t > t[k] - LEVEL_WINDOW - 1e-12) & (t <= t[k])
        want = np.sqrt(np.mean(e[window] ** 2, axis=0)).max()
        assert times[k] == t[k] and abs(level[k] - want) < 1e-12 * want
