"""TOPP-RA re-timing (optional toppra): our batch torque constraint against toppra's own
JointTorqueConstraint with per-point inverse dynamics, limits on the sent points, no slower than
uniform scaling; the missing-package message."""

from __future__ import annotations

import sys
from dataclasses import replace

import numpy as np
import pytest
from robot_files import urdf_text
from test_time_scaling import UR5_HOME, panda_multisine, point_to_point

from rnea_ros import Friction, RobotModel, rnea
from rnea_ros.control.effort_law import EffortLaw
from rnea_ros.demo import PANDA_ARM, PANDA_HOME
from rnea_ros.trajectory.efforts import trajectory_efforts
from rnea_ros.trajectory.sampling import TrajectorySampler
from rnea_ros.trajectory.time_scaling import minimal_time_scale

LAW = EffortLaw(compensate=frozenset({"gravity", "coriolis", "inertia", "wrench", "friction"}))


def test_missing_toppra_gives_a_clear_message(monkeypatch) -> None:
    from rnea_ros.trajectory import time_optimal

    monkeypatch.setitem(sys.modules, "toppra", None)
    model = RobotModel.from_urdf(urdf_text("double_pendulum"))
    with pytest.raises(ImportError, match="pip install toppra"):
        time_optimal.time_optimal_parameterisation(model, [0.0, 1.0], np.zeros((2, 2)))


def test_batch_torque_constraint_equals_toppras_own_with_per_point_inverse_dynamics() -> None:
    pytest.importorskip("toppra")
    from rnea_ros.trajectory.time_optimal import _path, _toppra, _torque_constraint

    toppra = _toppra()  # with its submodules imported

    model = RobotModel.from_urdf(urdf_text("panda"))
    points = panda_multisine(model, 3)
    path = _path(toppra, TrajectorySampler(*points))
    grid = np.linspace(0.0, points[0][-1], 201)
    limits = np.stack([-model.effort_limit, model.effort_limit], axis=1)
    coulomb = np.linspace(0.1, 0.9, model.nv)
    push = {"panda_hand": np.array([1.0, -2.0, -30.0, 0.1, 0.2, 0.3])}
    gravity = (0.2, 0.1, -9.7)

    def inv_dyn(q, qd, qdd):
        return rnea(model, q, qd, qdd, gravity=gravity, wrenches=push)

    theirs = toppra.constraint.JointTorqueConstraint(
        inv_dyn, limits, coulomb, toppra.constraint.DiscretizationType.Interpolation
    ).compute_constraint_params(path, grid)
    law = EffortLaw(gravity, frozenset({"gravity", "coriolis", "inertia", "wrench"}), wrenches=push)
    ours = _torque_constraint(toppra, model, law, coulomb, limits).compute_constraint_params(path, grid)
    for a, b in zip(ours, theirs, strict=True):
        if a is None:
            assert b is None
        else:
            np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("case", ["panda multi-sine 45 %", "ur5 point-to-point"])
def test_time_optimal_result_holds_the_limits_and_is_no_slower_than_uniform_scaling(case) -> None:
    pytest.importorskip("toppra")
    from rnea_ros.trajectory.time_optimal import time_optimal_parameterisation

    if case.startswith("panda"):
        model = RobotModel.from_urdf(urdf_text("panda"))
        points, limit, joints = panda_multisine(model, 1), 0.45 * model.effort_limit, PANDA_ARM
        held = np.array([PANDA_HOME[j] for j in model.joint_names[7:]])
    else:
        model = RobotModel.from_urdf(urdf_text("ur5"))
        points = point_to_point(UR5_HOME, [0, 0.2, -0.2, 0, 0, 0], 0.1)
        limit, joints, held = model.effort_limit, list(model.joint_names), None
    kw = {"law": replace(LAW, effort_limit=limit), "joints": joints}
    t, q, qd, qdd = time_optimal_parameterisation(model, *points, **kw)
    uniform = minimal_time_scale(model, *points, **kw)
    assert t[-1] <= uniform.duration
    idx = [model.joint_index(j) for j in joints]
    tau = trajectory_efforts(model, q, qd, qdd, LAW)
    effort = np.max(np.abs(tau[:, idx]) / limit[idx])
    speed = np.max(np.abs(qd[:, idx]) / model.velocity_limit[idx])
    assert max(effort, speed) <= 1.0 and max(effort, speed) >= 0.99
    # the same path: positions stay on the original spline's set of points, from start to end
    assert np.allclose(q[0], points[1][0]) and np.allclose(q[-1], points[1][-1], atol=1e-9)
    if held is not None:
        assert np.allclose(q[:, 7:], held)


def test_viscous_friction_is_refused() -> None:
    pytest.importorskip("toppra")
    from rnea_ros.trajectory.time_optimal import time_optimal_parameterisation

    model = RobotModel.from_urdf(urdf_text("double_pendulum"))
    with pytest.raises(ValueError, match="viscous"):
        time_optimal_parameterisation(
            model,
            *point_to_point([0, 0], [1, 1], 1.0),
            law=EffortLaw(friction=Friction.from_model(model), effort_limit=100.0),
        )
