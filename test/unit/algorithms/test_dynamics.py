"""Dynamics against Pinocchio (Panda, UR5, double pendulum, Talos) and physics identities."""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest

from rnea_ros import (
    RobotModel,
    forward_dynamics,
    gravity_torques,
    jacobian,
    link_pose,
    mass_matrix,
    nonlinear_effects,
    rnea,
)
from rnea_ros.model.example_robots import example_urdf_path
from rnea_ros.model.urdf import parse_urdf

ROBOTS = {
    "panda": "panda_hand",
    "ur5": "ee_link",
    "double_pendulum": "link2",
    "talos": "gripper_left_base_link",
}
RTOL = 1e-9


class Reference:
    """Our model and Pinocchio's for one URDF, with the joint-order map between them."""

    def __init__(self, name: str, armature: np.ndarray | None = None) -> None:
        path = example_urdf_path(name)
        self.model = RobotModel.from_urdf(path.read_text())
        self.pin = pin.buildModelFromUrdf(str(path))
        self.idx = [self.pin.joints[self.pin.getJointId(j)].idx_v for j in self.model.joint_names]
        if armature is not None:
            self.model = self.model.with_armature(armature)
            self.pin.armature[self.idx] = armature
        self.data = self.pin.createData()
        assert self.pin.nv == self.model.nv

    def to_pin(self, x: np.ndarray) -> np.ndarray:
        y = np.zeros(self.pin.nv)
        y[self.idx] = x
        return y

    def fext(self, q: np.ndarray, link: str, wrench: np.ndarray) -> list:
        """Pinocchio's per-joint external forces for `wrench` exerted BY `link` (root axes, about origin)."""
        fid = self.pin.getFrameId(link)
        frame = self.pin.frames[fid]
        pin.framesForwardKinematics(self.pin, self.data, self.to_pin(q))
        rot = self.data.oMf[fid].rotation
        on_body_local = pin.Force(-rot.T @ wrench[:3], -rot.T @ wrench[3:])
        fext = [pin.Force.Zero() for _ in range(self.pin.njoints)]
        fext[frame.parentJoint] = frame.placement.act(on_body_local)
        return fext


def relerr(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.max(np.abs(a - b)) / max(1.0, float(np.max(np.abs(b)))))


def random_state(rng: np.random.Generator, model: RobotModel):
    lo = np.where(np.isfinite(model.position_lower), model.position_lower, -np.pi)
    hi = np.where(np.isfinite(model.position_upper), model.position_upper, np.pi)
    return rng.uniform(lo, hi), rng.normal(0, 1.5, model.nv), rng.normal(0, 3.0, model.nv)


@pytest.fixture(scope="module", params=sorted(ROBOTS))
def ref(request) -> Reference:
    r = Reference(request.param)
    r.name = request.param
    return r


def test_rnea_matches_pinocchio_random_states_gravity_and_wrench(ref: Reference) -> None:
    rng = np.random.default_rng(1)
    leaf = ROBOTS[ref.name]
    worst = 0.0
    for _ in range(25):
        q, qd, qdd = random_state(rng, ref.model)
        gravity = rng.normal(0, 6, 3)
        wrench = rng.normal(0, 20, 6)
        ref.pin.gravity.linear = gravity
        expected = pin.rnea(
            ref.pin, ref.data, ref.to_pin(q), ref.to_pin(qd), ref.to_pin(qdd), ref.fext(q, leaf, wrench)
        )[ref.idx]
        tau = rnea(ref.model, q, qd, qdd, gravity=gravity, wrenches={leaf: wrench})
        worst = max(worst, relerr(tau, expected))
    ref.pin.gravity.linear = np.array([0, 0, -9.81])
    assert worst < RTOL


def test_mass_matrix_gravity_and_forward_dynamics_match_pinocchio(ref: Reference) -> None:
    rng = np.random.default_rng(2)
    for _ in range(10):
        q, qd, _ = random_state(rng, ref.model)
        tau = rng.normal(0, 5, ref.model.nv)
        m_pin = pin.crba(ref.pin, ref.data, ref.to_pin(q))
        m_pin = np.triu(m_pin) + np.triu(m_pin, 1).T
        assert relerr(mass_matrix(ref.model, q), m_pin[np.ix_(ref.idx, ref.idx)]) < RTOL
        g_pin = pin.computeGeneralizedGravity(ref.pin, ref.data, ref.to_pin(q))[ref.idx]
        assert relerr(gravity_torques(ref.model, q), g_pin) < RTOL
        nle_pin = pin.nonLinearEffects(ref.pin, ref.data, ref.to_pin(q), ref.to_pin(qd))[ref.idx]
        assert relerr(nonlinear_effects(ref.model, q, qd), nle_pin) < RTOL
        qdd_pin = pin.aba(ref.pin, ref.data, ref.to_pin(q), ref.to_pin(qd), ref.to_pin(tau))[ref.idx]
        assert relerr(forward_dynamics(ref.model, q, qd, tau), qdd_pin) < 1e-8


def test_jacobian_and_link_pose_match_pinocchio(ref: Reference) -> None:
    rng = np.random.default_rng(3)
    leaf = ROBOTS[ref.name]
    fid = ref.pin.getFrameId(leaf)
    q, _, _ = random_state(rng, ref.model)
    pin.framesForwardKinematics(ref.pin, ref.data, ref.to_pin(q))
    j_pin = pin.computeFrameJacobian(ref.pin, ref.data, ref.to_pin(q), fid, pin.LOCAL_WORLD_ALIGNED)
    assert np.allclose(jacobian(ref.model, q, leaf), j_pin[:, ref.idx], atol=1e-12)
    rot, pos = link_pose(ref.model, q, leaf)
    assert np.allclose(rot, ref.data.oMf[fid].rotation, atol=1e-12)
    assert np.allclose(pos, ref.data.oMf[fid].translation, atol=1e-12)


def test_wrench_term_is_jacobian_transpose_times_wrench(ref: Reference) -> None:
    rng = np.random.default_rng(4)
    leaf = ROBOTS[ref.name]
    q, qd, qdd = random_state(rng, ref.model)
    wrench = rng.normal(0, 10, 6)
    delta = rnea(ref.model, q, qd, qdd, wrenches={leaf: wrench}) - rnea(ref.model, q, qd, qdd)
    assert np.allclose(delta, jacobian(ref.model, q, leaf).T @ wrench, atol=1e-10)


def test_armature_matches_pinocchio() -> None:
    armature = np.linspace(0.1, 0.9, 9)
    ref = Reference("panda", armature)
    rng = np.random.default_rng(5)
    q, qd, qdd = random_state(rng, ref.model)
    tau_pin = pin.rnea(ref.pin, ref.data, ref.to_pin(q), ref.to_pin(qd), ref.to_pin(qdd))[ref.idx]
    assert relerr(rnea(ref.model, q, qd, qdd), tau_pin) < RTOL
    bare = RobotModel.from_urdf(example_urdf_path("panda").read_text())
    assert np.allclose(np.diag(mass_matrix(ref.model, q) - mass_matrix(bare, q)), armature, atol=1e-12)


def test_batch_equals_rows(ref: Reference) -> None:
    rng = np.random.default_rng(6)
    states = [random_state(rng, ref.model) for _ in range(7)]
    q, qd, qdd = (np.array(s) for s in zip(*states, strict=True))
    tau = rnea(ref.model, q, qd, qdd)
    g = gravity_torques(ref.model, q)
    m = mass_matrix(ref.model, q)
    for k in range(len(q)):
        assert np.array_equal(tau[k], rnea(ref.model, q[k], qd[k], qdd[k]))
        assert np.array_equal(g[k], gravity_torques(ref.model, q[k]))
        assert np.array_equal(m[k], mass_matrix(ref.model, q[k]))


# --- Physics identities (no reference library) -------------------------------------------


@pytest.mark.parametrize("name", ["panda", "ur5", "talos"])
def test_mass_matrix_symmetric_positive_definite_and_inverse_dynamics_roundtrip(name: str) -> None:
    model = RobotModel.from_urdf(example_urdf_path(name).read_text())
    rng = np.random.default_rng(7)
    for _ in range(5):
        q, qd, qdd = random_state(rng, model)
        m = mass_matrix(model, q)
        assert np.array_equal(m, m.T)
        assert np.linalg.eigvalsh(m).min() > 0
        tau = rnea(model, q, qd, qdd)
        assert np.allclose(forward_dynamics(model, q, qd, tau), qdd, rtol=1e-8, atol=1e-8)


def _trajectory(model: RobotModel, t: np.ndarray):
    """A smooth multi-sine q(t) with analytic q̇, q̈."""
    j = np.arange(model.nv)
    amp, freq, phase = 0.6 / (1 + 0.1 * j), 0.3 + 0.17 * j, 0.5 * j
    arg = 2 * np.pi * freq * t[:, None] + phase
    w = 2 * np.pi * freq
    return amp * np.sin(arg), amp * w * np.cos(arg), -amp * w**2 * np.sin(arg)


@pytest.mark.parametrize("name", ["panda", "ur5"])
def test_kinetic_energy_rate_equals_power_of_non_gravity_torques(name: str) -> None:
    model = RobotModel.from_urdf(example_urdf_path(name).read_text())
    dt = 1e-5
    t = np.linspace(0.0, 2.0, 21)
    q, qd, qdd = _trajectory(model, np.concatenate([t - dt, t, t + dt]))
    kinetic = 0.5 * np.einsum("ki,kij,kj->k", qd, mass_matrix(model, q), qd)
    ke_minus, _, ke_plus = np.split(kinetic, 3)
    _, q0, _ = np.split(q, 3)
    _, qd0, _ = np.split(qd, 3)
    _, qdd0, _ = np.split(qdd, 3)
    power = np.einsum("ki,ki->k", qd0, rnea(model, q0, qd0, qdd0) - gravity_torques(model, q0))
    assert np.allclose((ke_plus - ke_minus) / (2 * dt), power, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("name", ["panda", "ur5", "talos"])
def test_gravity_torque_is_gradient_of_potential_energy(name: str) -> None:
    text = example_urdf_path(name).read_text()
    model = RobotModel.from_urdf(text)
    links = parse_urdf(text).links
    gravity = np.array([0.0, 0.0, -9.81])

    def potential(q: np.ndarray) -> float:
        total = 0.0
        for link in model.link_names:
            inertial = links[link]
            if inertial is not None and inertial.mass > 0:
                rot, pos = link_pose(model, q, link)
                total -= inertial.mass * gravity @ (pos + rot @ inertial.com)
        return total

    q, _, _ = random_state(np.random.default_rng(8), model)
    h = 1e-6
    grad = np.array([(potential(q + h * e) - potential(q - h * e)) / (2 * h) for e in np.eye(model.nv)])
    assert np.allclose(gravity_torques(model, q), grad, rtol=1e-6, atol=1e-6)
