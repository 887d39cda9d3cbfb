"""The effort law on a floating base (rnea_ros.control.floating_efforts) on solo12: its model term is
contact_inverse_dynamics', the feedback and clamp are the fixed-base law's, and with link wrenches
the whole command satisfies the floating-base rnea with the contact forces as wrenches (the base
rows vanish): an identity independent of the QP."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from rnea_ros import RobotModel, rnea
from rnea_ros.algorithms.configuration import base_placement
from rnea_ros.algorithms.contact_dynamics import Contact, ContactStatus, contact_inverse_dynamics
from rnea_ros.control.effort_law import EffortLaw
from rnea_ros.control.floating_efforts import FloatingEfforts, compute_floating_efforts
from rnea_ros.model.example_robots import example_urdf_path

XML = example_urdf_path("solo_description/robots/solo12.urdf").read_text()
FLOATING = RobotModel.from_urdf(XML, root_joint="floating")
JOINTS = RobotModel.from_urdf(XML, root_joint="fixed")
FEET = ("FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT")
CONTACTS = tuple(Contact(foot, "point", 0.7) for foot in FEET)
Q = np.array([0.05, 0.8, -1.6, -0.05, 0.8, -1.6, 0.05, -0.8, 1.6, -0.05, -0.8, 1.6])
QD = np.array([0.1, -0.2, 0.3, 0.0, 0.1, -0.1, 0.2, 0.0, -0.3, 0.1, 0.1, 0.0])
# base 0.25 m up, yawed 0.3 rad and pitched 0.05 rad; quaternion (x, y, z, w)
YAW, PITCH = 0.3, 0.05
Q_BASE = np.array(
    [0.1, -0.2, 0.25, -np.sin(PITCH / 2) * np.sin(YAW / 2), np.sin(PITCH / 2) * np.cos(YAW / 2),
     np.cos(PITCH / 2) * np.sin(YAW / 2), np.cos(PITCH / 2) * np.cos(YAW / 2)]
)  # fmt: skip
V_BASE = np.array([0.05, -0.02, 0.01, 0.03, -0.02, 0.1])
NO_FRICTION = {"friction": None, "compensate": frozenset({"gravity", "coriolis", "inertia", "wrench"})}


def law(**kw) -> EffortLaw:
    return EffortLaw(max_phase_lag=0.0, **{**NO_FRICTION, **kw})


def test_model_term_is_contact_inverse_dynamics_and_the_rest_the_fixed_base_law() -> None:
    kp, kd = np.linspace(5.0, 16.0, 12), np.linspace(0.1, 1.2, 12)
    fe = FloatingEfforts(FLOATING, JOINTS, law(kp=kp, kd=kd))
    q_des, qd_des, qdd_des = Q + 0.01, QD - 0.02, np.linspace(-1.0, 1.0, 12)
    efforts = compute_floating_efforts(fe, Q_BASE, V_BASE, Q, QD, (q_des, qd_des, qdd_des), CONTACTS)
    reference = contact_inverse_dynamics(
        FLOATING,
        np.concatenate([Q_BASE, Q]),
        np.concatenate([V_BASE, QD]),
        np.concatenate([np.zeros(6), qdd_des]),
        CONTACTS,
    )
    assert reference.status is ContactStatus.OK
    pd = kp * (q_des - Q) + kd * (qd_des - QD)
    assert np.allclose(efforts.terms["gravity"], reference.tau, rtol=0, atol=1e-12)
    assert np.allclose(efforts.terms["feedback"], pd, rtol=0, atol=1e-12)
    assert np.allclose(efforts.total, reference.tau + pd, rtol=0, atol=1e-12)
    for term in ("coriolis", "inertia", "friction", "wrench"):
        assert not efforts.terms[term].any()
    assert fe.solution is not None and np.allclose(fe.solution.f, reference.f, atol=1e-12)


def test_clamp_marks_the_joints_at_their_limit() -> None:
    limit = np.full(12, 0.3)
    fe = FloatingEfforts(FLOATING, JOINTS, law(effort_limit=limit))
    efforts = compute_floating_efforts(fe, Q_BASE, V_BASE, Q, QD, (Q, QD, np.zeros(12)), CONTACTS)
    model_term = efforts.terms["gravity"]
    assert np.abs(model_term).max() > 0.3  # the knees carry more than that
    assert np.array_equal(efforts.clamped, np.abs(model_term) > 0.3)
    assert np.allclose(efforts.total, np.clip(model_term, -0.3, 0.3), atol=0)


def test_switches_and_wrenches_satisfy_the_floating_rnea_with_the_contact_forces() -> None:
    # a 6-D wrench on the base-mounted front left hip, base axes: the command balances it too
    wrench_base = np.array([3.0, -2.0, 5.0, 0.2, -0.1, 0.3])
    fe = FloatingEfforts(FLOATING, JOINTS, law())
    qdd = np.linspace(-0.5, 0.5, 12)
    efforts = compute_floating_efforts(
        fe, Q_BASE, V_BASE, Q, QD, (Q, QD, qdd), CONTACTS, {"FL_UPPER_LEG": wrench_base}
    )
    rot, _ = base_placement(FLOATING, np.concatenate([Q_BASE, Q]))
    wrenches = {"FL_UPPER_LEG": np.concatenate([rot @ wrench_base[:3], rot @ wrench_base[3:]])}
    assert fe.solution is not None and fe.solution.status is ContactStatus.OK
    for foot, f in zip(FEET, fe.solution.forces, strict=True):
        wrenches[foot] = np.concatenate([-f, np.zeros(3)])  # the foot's wrench on the ground
    tau = rnea(
        FLOATING, np.concatenate([Q_BASE, Q]), np.concatenate([V_BASE, QD]),
        np.concatenate([np.zeros(6), qdd]), wrenches=wrenches,
    )  # fmt: skip
    assert np.abs(tau[:6]).max() < 1e-9
    assert np.allclose(efforts.total, tau[6:], rtol=0, atol=1e-9)
    # gravity off: zero gravity, coriolis off: zero velocities, inertia off: zero accelerations
    off = FloatingEfforts(FLOATING, JOINTS, replace(law(), compensate=frozenset({"gravity"})))
    e_off = compute_floating_efforts(off, Q_BASE, V_BASE, Q, QD, (Q, QD, qdd), CONTACTS, wrenches)
    gravity_only = contact_inverse_dynamics(
        FLOATING, np.concatenate([Q_BASE, Q]), np.zeros(18), np.zeros(18), CONTACTS
    )
    assert np.allclose(e_off.total, gravity_only.tau, rtol=0, atol=1e-12)


def test_non_finite_base_state_is_refused_by_name() -> None:
    fe = FloatingEfforts(FLOATING, JOINTS, law())
    bad = V_BASE.copy()
    bad[4] = np.nan
    with pytest.raises(ValueError, match="base velocity"):
        compute_floating_efforts(fe, Q_BASE, bad, Q, QD, (Q, QD, np.zeros(12)), CONTACTS)
    with pytest.raises(ValueError, match="fixed-base model"):
        FloatingEfforts(FLOATING, FLOATING, law())
