"""The node's model/parameter bundle (rnea_ros.nodes.inverse_dynamics.cycle_model):
parameters turned into the model and
effort law the cycle uses, checked against the core's public API."""

from __future__ import annotations

import numpy as np

from rnea_ros import Friction, RobotModel, friction_torques, rnea
from rnea_ros.control.effort_law import compute_efforts
from rnea_ros.model.example_robots import example_urdf_path
from rnea_ros.nodes.inverse_dynamics.cycle_model import build_cycle_model
from rnea_ros.nodes.inverse_dynamics.params import INVERSE_DYNAMICS
from rnea_ros.ros.schema import defaults

PANDA = RobotModel.from_urdf(example_urdf_path("panda").read_text())
ARM = [f"panda_joint{i}" for i in range(1, 8)]


def test_armature_per_output_joint_acts_through_m_qdd() -> None:
    armature = [0.1 * (k + 1) for k in range(7)]
    params = {
        **defaults(INVERSE_DYNAMICS),
        "joints": ARM[::-1],
        **{f"armature.{j}": a for j, a in zip(ARM[::-1], armature, strict=True)},
    }
    runtime = build_cycle_model(PANDA, params, None)
    full = np.zeros(9)
    full[[PANDA.joint_index(j) for j in ARM[::-1]]] = armature
    rng = np.random.default_rng(4)
    q, qd, qdd = rng.uniform(-1, 1, (3, 9))
    efforts = compute_efforts(runtime.efforts, q, qd, (q, qd, qdd))
    want = rnea(PANDA.with_armature(full), q, qd, qdd) + friction_torques(Friction.from_model(PANDA), qd)
    assert np.allclose(efforts.total, np.clip(want, -PANDA.effort_limit, PANDA.effort_limit), atol=1e-9)
    assert np.allclose(runtime.model.armature, full)
    one = build_cycle_model(PANDA, {**defaults(INVERSE_DYNAMICS), "armature.panda_joint3": 0.2}, None)
    assert np.allclose(one.model.armature, [0.0, 0.0, 0.2] + [0.0] * 6)
    assert "armature" not in INVERSE_DYNAMICS  # no array: `armature: [..]` and `armature: {joint: ..}` clash


def test_per_joint_gains_and_friction_win_over_the_arrays() -> None:
    """feedback.<joint>.kp/kd and friction.<joint>.viscous/coulomb, where given, are the law's
    values for those joints; the arrays give the others (one value for all, [-1]: the URDF)."""
    params = {
        **defaults(INVERSE_DYNAMICS),
        "feedback.kp": [100.0],
        "feedback.kd": [5.0],
        "feedback.panda_joint2.kp": 40.0,
        "feedback.panda_joint7.kd": 1.5,
        "friction.panda_joint4.viscous": 0.7,
        "friction.panda_joint1.coulomb": 0.25,
        "feedback.max_phase_lag": 0.0,
    }
    cycle = build_cycle_model(PANDA, params, None)
    law = cycle.efforts.law
    kp, kd = np.full(9, 100.0), np.full(9, 5.0)
    kp[1], kd[6] = 40.0, 1.5
    assert np.array_equal(law.kp, kp) and np.array_equal(law.kd, kd)
    rng = np.random.default_rng(5)
    q, qd, q_d, qd_d = rng.uniform(-0.5, 0.5, (4, 9))
    driven = np.ones(9, dtype=np.int64)
    efforts = compute_efforts(cycle.efforts, q, qd, (q_d, qd_d, np.zeros(9)), driven=driven)
    assert np.allclose(efforts.terms["feedback"], kp * (q_d - q) + kd * (qd_d - qd), rtol=0, atol=1e-12)
    viscous, coulomb = PANDA.damping.copy(), PANDA.coulomb.copy()
    viscous[3], coulomb[0] = 0.7, 0.25
    assert np.array_equal(law.friction.viscous, viscous) and np.array_equal(law.friction.coulomb, coulomb)
