"""Regressor τ = Y π against Pinocchio's joint torque regressor and dynamic parameters, and against
rnea + friction (Panda 9-DOF, UR5, double pendulum, Talos 32-DOF)."""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest

from rnea_ros import Friction, RobotModel, friction_torques, rnea
from rnea_ros.identification.regressor import (
    PER_BODY,
    body_columns,
    body_links,
    joint_columns,
    parameter_count,
    parameter_names,
    regressor,
    standard_parameters,
    with_parameters,
)
from rnea_ros.model.example_robots import example_urdf_path

ROBOTS = ("panda", "ur5", "double_pendulum", "talos")
RTOL = 1e-9


class Reference:
    """Our model and Pinocchio's, the joint-order map and each body's Pinocchio joint id."""

    def __init__(self, name: str) -> None:
        path = example_urdf_path(name)
        self.model = RobotModel.from_urdf(path.read_text())
        self.pin = pin.buildModelFromUrdf(str(path))
        self.data = self.pin.createData()
        self.idx = [self.pin.joints[self.pin.getJointId(j)].idx_v for j in self.model.joint_names]
        self.jid = [self.pin.getJointId(j) for j in self.model.joint_names]

    def to_pin(self, x: np.ndarray) -> np.ndarray:
        y = np.zeros(self.pin.nv)
        y[self.idx] = x
        return y


@pytest.fixture(scope="module", params=ROBOTS)
def ref(request) -> Reference:
    return Reference(request.param)


def states(model: RobotModel, count: int, seed: int):
    rng = np.random.default_rng(seed)
    lo = np.where(np.isfinite(model.position_lower), model.position_lower, -np.pi)
    hi = np.where(np.isfinite(model.position_upper), model.position_upper, np.pi)
    n = model.nv
    return rng.uniform(lo, hi, (count, n)), rng.normal(0, 1.5, (count, n)), rng.normal(0, 3.0, (count, n))


def relerr(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.max(np.abs(a - b)) / max(1.0, float(np.max(np.abs(b)))))


def test_columns_match_pinocchio_joint_torque_regressor(ref: Reference) -> None:
    q, qd, qdd = states(ref.model, 15, seed=1)
    y = regressor(ref.model, q, qd, qdd)
    worst = 0.0
    for k in range(len(q)):
        yp = pin.computeJointTorqueRegressor(
            ref.pin, ref.data, ref.to_pin(q[k]), ref.to_pin(qd[k]), ref.to_pin(qdd[k])
        )
        yp = yp[ref.idx]  # rows in our joint order
        for b, jid in enumerate(ref.jid):  # Pinocchio's columns of joint jid: 10 (jid - 1) ...
            ours = y[k][:, body_columns(ref.model, b)]
            theirs = yp[:, PER_BODY * (jid - 1) : PER_BODY * jid]
            worst = max(worst, relerr(ours, theirs))
    assert worst < RTOL


def test_standard_parameters_match_pinocchio_dynamic_parameters(ref: Reference) -> None:
    pi = standard_parameters(ref.model)
    for b, jid in enumerate(ref.jid):
        expected = ref.pin.inertias[jid].toDynamicParameters()
        np.testing.assert_allclose(pi[body_columns(ref.model, b)], expected, rtol=0, atol=1e-12)
    n = ref.model.nv
    np.testing.assert_array_equal(pi[joint_columns(ref.model, "viscous")], ref.model.damping)
    np.testing.assert_array_equal(pi[joint_columns(ref.model, "coulomb")], ref.model.coulomb)
    np.testing.assert_array_equal(pi[12 * n :], ref.model.armature)


def test_y_pi_is_rnea_plus_friction_with_armature_and_gravity(ref: Reference) -> None:
    rng = np.random.default_rng(2)
    n = ref.model.nv
    pi = standard_parameters(ref.model)
    pi[joint_columns(ref.model, "viscous")] = rng.uniform(0.1, 2.0, n)
    pi[joint_columns(ref.model, "coulomb")] = rng.uniform(0.1, 3.0, n)
    pi[joint_columns(ref.model, "armature")] = rng.uniform(0.01, 0.5, n)
    model = with_parameters(ref.model, pi)
    q, qd, qdd = states(model, 40, seed=3)
    gravity = rng.normal(0, 5, 3)
    fric = Friction(model.damping, model.coulomb, 0.01)
    expected = rnea(model, q, qd, qdd, gravity=gravity) + friction_torques(fric, qd)
    got = np.einsum("njp,p->nj", regressor(model, q, qd, qdd, gravity=gravity), pi)
    assert relerr(got, expected) < RTOL
    # sign(q̇) Coulomb and another smoothing velocity: closed forms of the friction term
    base = rnea(model, q, qd, qdd, gravity=gravity) + model.damping * qd
    got = regressor(model, q, qd, qdd, gravity=gravity, coulomb="sign") @ pi
    assert relerr(got, base + model.coulomb * np.sign(qd)) < RTOL
    got = regressor(model, q, qd, qdd, gravity=gravity, smoothing_velocity=0.3) @ pi
    assert relerr(got, base + model.coulomb * np.tanh(qd / 0.3)) < RTOL


@pytest.mark.parametrize("name", ["panda", "ur5"])
def test_with_parameters_matches_pinocchio_with_the_same_inertias(name: str) -> None:
    """Random physical inertias given to both: our rnea of with_parameters(π) = Pinocchio's rnea."""
    ref = Reference(name)
    rng = np.random.default_rng(4)
    pi = standard_parameters(ref.model)
    for b, jid in enumerate(ref.jid):
        mass = rng.uniform(0.1, 5.0)
        com = rng.normal(0, 0.1, 3)
        a = rng.normal(0, 0.1, (3, 3))
        inertia = pin.Inertia(mass, com, a @ a.T + 0.01 * np.eye(3))
        ref.pin.inertias[jid] = inertia
        pi[body_columns(ref.model, b)] = inertia.toDynamicParameters()
    model = with_parameters(ref.model, pi)
    np.testing.assert_array_equal(standard_parameters(model), pi)
    data = ref.pin.createData()
    q, qd, qdd = states(model, 20, seed=5)
    ours = rnea(model, q, qd, qdd)
    for k in range(len(q)):
        theirs = pin.rnea(ref.pin, data, ref.to_pin(q[k]), ref.to_pin(qd[k]), ref.to_pin(qdd[k]))[ref.idx]
        assert relerr(ours[k], theirs) < RTOL


def test_payload_is_part_of_the_parameters_and_dropped_as_a_record() -> None:
    model = RobotModel.from_urdf(example_urdf_path("ur5").read_text())
    heavy = model.with_payload("ee_link", 2.0, (0.0, 0.05, 0.1), np.diag([0.01, 0.02, 0.03]))
    q, qd, qdd = states(model, 10, seed=6)
    pi = standard_parameters(heavy)
    assert not np.allclose(pi, standard_parameters(model))
    assert relerr(regressor(model, q, qd, qdd) @ pi, rnea(heavy, q, qd, qdd)) < RTOL
    rebuilt = with_parameters(model, pi)
    assert rebuilt.payload is None
    assert relerr(rnea(rebuilt, q, qd, qdd), rnea(heavy, q, qd, qdd)) < RTOL


def test_shapes_names_and_bodies() -> None:
    model = RobotModel.from_urdf(example_urdf_path("panda").read_text(), tip_link="panda_hand")
    n = model.nv
    assert parameter_count(model) == 13 * n
    assert regressor(model, np.zeros(n), np.zeros(n), np.zeros(n)).shape == (n, 13 * n)
    assert regressor(model, np.zeros((4, n)), np.zeros((4, n)), np.zeros((4, n))).shape == (4, n, 13 * n)
    assert body_links(model) == tuple(f"panda_link{i}" for i in range(1, 8))
    names = parameter_names(model)
    assert len(names) == 13 * n and names[0] == "panda_link1.m" and names[9] == "panda_link1.Izz"
    assert names[10 * n] == "panda_joint1.viscous" and names[-1] == "panda_joint7.armature"


def test_bad_arguments_raise_value_error_naming_them() -> None:
    model = RobotModel.from_urdf(example_urdf_path("double_pendulum").read_text())
    z = np.zeros(2)
    with pytest.raises(ValueError, match="qd"):
        regressor(model, z, np.zeros(3), z)
    with pytest.raises(ValueError, match="qdd"):
        regressor(model, z, z, [np.nan, 0.0])
    with pytest.raises(ValueError, match="coulomb"):
        regressor(model, z, z, z, coulomb="abs")
    with pytest.raises(ValueError, match="gravity"):
        regressor(model, z, z, z, gravity=(0, 0))
    pi = standard_parameters(model)
    pi[joint_columns(model, "coulomb").start + 1] = -0.5
    with pytest.raises(ValueError, match="coulomb"):
        with_parameters(model, pi)
    with pytest.raises(ValueError, match="pi"):
        with_parameters(model, pi[:-1])
