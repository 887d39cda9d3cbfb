"""The node's one output stage (command.py): model order → `joints` order, clamped to limit ×
scale in joint torque, then in each joint's effort_unit; nothing that is not finite."""

from __future__ import annotations

import numpy as np

from rnea_ros.nodes.inverse_dynamics.command import CommandStage
from rnea_ros.nodes.inverse_dynamics.effort_units import effort_units


def test_order_limits_and_units_in_that_order() -> None:
    joints = ["c", "a"]  # output joints: model joints 2 and 0
    output = np.array([2, 0])
    params = {"effort_unit": ["current", "joint_torque"], "gearing.ratio": [50.0, 0.0],
              "gearing.torque_constant": [0.2, 0.0]}  # fmt: skip
    units = effort_units(params, joints, output, 3)
    stage = CommandStage(output, np.array([10.0, 4.0]), units)
    tau = np.array([-7.0, 1.0, 25.0])  # model order
    # joint c: 25 N m clamped to 10, then / (50 × 0.2) = 1 A; joint a: -7 clamped to -4 N m
    assert np.allclose(stage(tau), [1.0, -4.0], rtol=1e-15, atol=0)
    assert np.allclose(stage(np.array([3.0, 0.0, -5.0])), [-0.5, 3.0], rtol=1e-15, atol=0)


def test_nothing_that_is_not_finite() -> None:
    stage = CommandStage(np.array([0, 1]), np.array([np.inf, 5.0]), in_order=True)
    assert stage(np.array([np.nan, 1.0])) is None
    assert stage(np.array([np.inf, 1.0])) is None  # no limit on joint 0: Inf stays Inf
    assert np.array_equal(stage(np.array([1e308, 1e308])), [1e308, 5.0])  # a sum that overflows is finite
