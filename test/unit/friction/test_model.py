"""Friction model: viscous + smooth Coulomb (+ Stribeck), defaults from URDF <dynamics>."""

from __future__ import annotations

import numpy as np
import pytest

from rnea_ros import Friction, RobotModel, friction_torques
from rnea_ros.model.example_robots import example_urdf_path


def test_defaults_come_from_urdf_dynamics() -> None:
    model = RobotModel.from_urdf(example_urdf_path("panda").read_text())
    friction = Friction.from_model(model)
    assert np.array_equal(friction.viscous, model.damping)
    assert np.array_equal(friction.coulomb, model.coulomb)
    assert friction.viscous[-1] == 0.3  # panda_finger_joint2 <dynamics damping="0.3"/>


def test_viscous_plus_coulomb_far_from_zero_and_smooth_through_zero() -> None:
    friction = Friction(viscous=[0.5, 2.0], coulomb=[1.5, 0.0], smoothing_velocity=0.01)
    fast = np.array([0.7, -0.3])
    # tanh(70) and tanh(-30) are ±1 to double precision: the plain Coulomb + viscous law
    assert np.allclose(friction_torques(friction, fast), [0.5 * 0.7 + 1.5, 2.0 * -0.3], atol=1e-12)
    assert np.array_equal(friction_torques(friction, [0.0, 0.0]), [0.0, 0.0])
    slow = np.linspace(-0.02, 0.02, 401)[:, None] * [1.0, 1.0]
    tau = friction_torques(friction, slow)[:, 0]
    assert np.all(np.diff(tau) > 0)  # monotone, no jump at zero: no chattering
    assert np.max(np.abs(np.diff(tau))) < 1.5 * 2 * (0.04 / 400) / 0.01


def test_stribeck_peak_near_zero_decays_to_coulomb() -> None:
    friction = Friction(
        viscous=[0.0], coulomb=[1.0], static=[1.6], stribeck_velocity=[0.05], smoothing_velocity=1e-4
    )
    assert friction_torques(friction, [0.01])[0] == pytest.approx(1.0 + 0.6 * np.exp(-((0.01 / 0.05) ** 2)))
    assert friction_torques(friction, [1.0])[0] == pytest.approx(1.0, abs=1e-12)
    assert friction_torques(friction, [-0.01])[0] == pytest.approx(-friction_torques(friction, [0.01])[0])


def test_batch_rows_equal_single_evaluations() -> None:
    friction = Friction(viscous=[0.1, 0.2, 0.3], coulomb=[0.4, 0.0, 1.0])
    qd = np.random.default_rng(0).normal(0, 0.5, (5, 3))
    batch = friction_torques(friction, qd)
    assert all(np.array_equal(batch[k], friction_torques(friction, qd[k])) for k in range(5))


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"viscous": [-1.0], "coulomb": [0.0]}, "friction.viscous must be finite and >= 0"),
        ({"viscous": [0.0], "coulomb": [np.nan]}, "friction.coulomb must be finite"),
        ({"viscous": [0.0, 1.0], "coulomb": [0.0]}, "friction.coulomb must have 2 values"),
        ({"viscous": [0.0], "coulomb": [0.0], "smoothing_velocity": 0.0}, "smoothing_velocity must be"),
        ({"viscous": [0.0], "coulomb": [0.0], "stribeck_velocity": [0.0]}, "stribeck_velocity must be"),
    ],
)
def test_invalid_parameters_are_rejected_naming_them(kwargs, message) -> None:
    with pytest.raises(ValueError, match=message):
        Friction(**kwargs)


def test_bad_velocity_is_rejected() -> None:
    friction = Friction(viscous=[0.0, 0.0], coulomb=[0.0, 0.0])
    with pytest.raises(ValueError, match="qd must have 2 values"):
        friction_torques(friction, [0.0])
    with pytest.raises(ValueError, match="qd contains NaN"):
        friction_torques(friction, [0.0, np.nan])
