"""Constrained dynamics (A(q) q̇ = 0) against an independent KKT solve with Pinocchio's M and c + g,
Pinocchio's rnea with a contact wrench, and the projection's identities; Panda and UR5."""

from __future__ import annotations

import numpy as np
import pytest
from pinref import PinRef, relerr

from rnea_ros import (
    IllConditionedError,
    UnknownLinkError,
    constrained_forward_dynamics,
    constrained_inverse_dynamics,
    constraint_multipliers,
    constraint_projection,
    forward_dynamics,
    link_constraint,
    link_pose,
)

CASES = [("panda", "panda_hand"), ("ur5", "ee_link")]
_REFS: dict[str, PinRef] = {}


def ref_of(name: str) -> PinRef:
    if name not in _REFS:
        _REFS[name] = PinRef(name)
    return _REFS[name]


def kkt(m: np.ndarray, h: np.ndarray, a: np.ndarray, adot_qd: np.ndarray, tau: np.ndarray):
    """(q̈, λ) of M q̈ + h + Aᵀ λ = τ, A q̈ = −Ȧ q̇, one linear solve."""
    n, k = m.shape[0], a.shape[0]
    big = np.block([[m, a.T], [a, np.zeros((k, k))]])
    x = np.linalg.solve(big, np.concatenate([tau - h, -adot_qd]))
    return x[:n], x[n:]


def null_space(a: np.ndarray) -> np.ndarray:
    """Orthonormal basis (n, n − k) of the admissible velocities A q̇ = 0 (SVD)."""
    _, _, vt = np.linalg.svd(a)
    return vt[a.shape[0] :].T


def unit(v: np.ndarray) -> np.ndarray:
    return v / np.linalg.norm(v, axis=-1, keepdims=True)


def plane_setup(ref: PinRef, link: str, rng: np.random.Generator, k: int = 1):
    """A random state with the link origin held on k fixed planes: admissible q̇ and feasible q̈.
    A and Ȧ q̇ are built from Pinocchio's Jacobian and classical acceleration (n̂ᵀ J_v, n̂ᵀ (J̇ q̇)_lin)."""
    q, qd, qdd = ref.random_state(rng)
    normals = unit(rng.normal(size=(k, 3)))
    a = normals @ ref.jacobian(q, link)[:3]
    qd = null_space(a) @ (null_space(a).T @ qd)
    adot_qd = normals @ ref.classical_acceleration(q, qd, np.zeros(ref.model.nv), link)[:3]
    qdd = qdd - np.linalg.pinv(a) @ (a @ qdd + adot_qd)
    return q, qd, qdd, normals, a, adot_qd


@pytest.mark.parametrize(("robot", "link"), CASES)
def test_projection_identities(robot: str, link: str) -> None:
    """P = I − Aᵀ(AM⁻¹Aᵀ)⁻¹AM⁻¹: P Aᵀ = 0 and A M⁻¹ P = 0 (both hold; Pᵀ is not annihilated by A M⁻¹),
    P² = P, M⁻¹ P symmetric, rank n − k."""
    ref = ref_of(robot)
    rng = np.random.default_rng(30)
    n = ref.model.nv
    for k in (1, 2, 3):
        q, _, _ = ref.random_state(rng)
        m, minv = ref.mass(q), ref.minverse(q)
        a = rng.normal(size=(k, n))
        p = constraint_projection(m, a)
        assert np.allclose(p @ a.T, 0, atol=1e-10 * np.abs(a).max())
        assert np.allclose(a @ minv @ p, 0, atol=1e-10 * np.abs(a @ minv).max())
        assert not np.allclose(a @ minv @ p.T, 0, atol=1e-3 * np.abs(a @ minv).max())
        assert np.allclose(p @ p, p, atol=1e-10 * np.abs(p).max())
        assert np.allclose(minv @ p, (minv @ p).T, atol=1e-10 * np.abs(minv).max())
        assert np.linalg.matrix_rank(p, tol=1e-8 * np.abs(p).max()) == n - k


@pytest.mark.parametrize(("robot", "link"), CASES)
def test_link_constraint_is_normal_times_pinocchio_jacobian_and_acceleration(robot: str, link: str) -> None:
    ref = ref_of(robot)
    rng = np.random.default_rng(31)
    for _ in range(5):
        q, qd, _ = ref.random_state(rng)
        normals = unit(rng.normal(size=(2, 3)))
        a, adot_qd = link_constraint(ref.model, q, qd, link, normals)
        assert relerr(a, normals @ ref.jacobian(q, link)[:3]) < 1e-9
        jdq = ref.classical_acceleration(q, qd, np.zeros(ref.model.nv), link)
        assert relerr(adot_qd, normals @ jdq[:3]) < 1e-9
        twist_dirs = unit(rng.normal(size=(3, 6)))  # 6-D directions act on [v; ω]
        a6, adot6 = link_constraint(ref.model, q, qd, link, twist_dirs)
        assert relerr(a6, twist_dirs @ ref.jacobian(q, link)) < 1e-9
        assert relerr(adot6, twist_dirs @ jdq) < 1e-9


@pytest.mark.parametrize(("robot", "link"), CASES)
@pytest.mark.parametrize("k", [1, 2])
def test_projected_inverse_dynamics_gives_the_feasible_acceleration(robot: str, link: str, k: int) -> None:
    """τ = P (M q̈ + c + g): the KKT system (Pinocchio's M, c + g) returns q̈ with A q̈ + Ȧ q̇ = 0 and the
    reported λ; forward_dynamics with the constraint effort Aᵀλ subtracted gives q̈ too."""
    ref = ref_of(robot)
    rng = np.random.default_rng(32 + k)
    for _ in range(8):
        q, qd, qdd, normals, a, adot_qd = plane_setup(ref, link, rng, k)
        a_ours, adot_ours = link_constraint(ref.model, q, qd, link, normals)
        res = constrained_inverse_dynamics(ref.model, q, qd, qdd, a_ours, adot_qd=adot_ours)
        m, h = ref.mass(q), ref.nle(q, qd)
        p = constraint_projection(m, a)
        assert relerr(p @ res.tau, p @ (m @ qdd + h)) < 1e-9
        assert np.allclose(a @ ref.minverse(q) @ res.tau, 0, atol=1e-9 * np.abs(res.tau).max())
        qdd_sim, lam_sim = kkt(m, h, a, adot_qd, res.tau)
        assert relerr(qdd_sim, qdd) < 1e-9
        assert np.allclose(a @ qdd_sim + adot_qd, 0, atol=1e-9 * np.abs(qdd).max())
        assert relerr(res.lam, lam_sim) < 1e-9
        assert relerr(res.constraint_efforts, a.T @ lam_sim) < 1e-9
        assert relerr(forward_dynamics(ref.model, q, qd, res.tau - res.constraint_efforts), qdd) < 1e-9


@pytest.mark.parametrize(("robot", "link"), CASES)
def test_requested_contact_force_is_carried_by_the_constraint(robot: str, link: str) -> None:
    """Pressing on a plane with a requested force: τ equals Pinocchio's rnea with the link exerting that
    force (package wrench convention), and the KKT solve gives back q̈ and λ."""
    ref = ref_of(robot)
    rng = np.random.default_rng(34)
    for _ in range(8):
        q, qd, qdd, normals, a, adot_qd = plane_setup(ref, link, rng)
        force = -15.0 * normals[0]  # press into the plane (n̂ points away from it) with 15 N
        lam = constraint_multipliers(normals, force)
        assert np.allclose(lam, [-15.0])
        a_ours, adot_ours = link_constraint(ref.model, q, qd, link, normals)
        res = constrained_inverse_dynamics(ref.model, q, qd, qdd, a_ours, adot_qd=adot_ours, lam=lam)
        wrench = np.concatenate([force, np.zeros(3)])
        assert relerr(res.tau, ref.rnea(q, qd, qdd, ref.fext(q, link, wrench))) < 1e-9
        qdd_sim, lam_sim = kkt(ref.mass(q), ref.nle(q, qd), a, adot_qd, res.tau)
        assert relerr(qdd_sim, qdd) < 1e-9
        assert np.allclose(lam_sim, lam, rtol=1e-9)


@pytest.mark.parametrize(("robot", "link"), CASES)
def test_constraint_efforts_do_no_work_on_admissible_velocities(robot: str, link: str) -> None:
    ref = ref_of(robot)
    rng = np.random.default_rng(35)
    for _ in range(5):
        q, qd, qdd, normals, a, adot_qd = plane_setup(ref, link, rng, 2)
        res = constrained_inverse_dynamics(ref.model, q, qd, qdd, a, adot_qd=adot_qd)
        basis = null_space(a)  # every admissible q̇ is basis @ x
        assert np.abs(basis.T @ res.constraint_efforts).max() < 1e-9 * np.abs(res.constraint_efforts).max()
        # and they are exactly what the joints spend beyond the unconstrained inverse dynamics
        assert relerr(res.tau - res.constraint_efforts, ref.rnea(q, qd, qdd)) < 1e-9


@pytest.mark.parametrize(("robot", "link"), CASES)
def test_constrained_forward_dynamics_matches_kkt(robot: str, link: str) -> None:
    ref = ref_of(robot)
    rng = np.random.default_rng(36)
    for _ in range(8):
        q, qd, _, normals, a, adot_qd = plane_setup(ref, link, rng, 2)
        tau = rng.normal(0, 10, ref.model.nv)
        qdd, lam = constrained_forward_dynamics(ref.model, q, qd, tau, a, adot_qd=adot_qd)
        qdd_ref, lam_ref = kkt(ref.mass(q), ref.nle(q, qd), a, adot_qd, tau)
        assert relerr(qdd, qdd_ref) < 1e-9 and relerr(lam, lam_ref) < 1e-9


def test_infeasible_acceleration_becomes_the_nearest_feasible_one_in_the_mass_metric() -> None:
    """Gauss's principle: with τ = P (M q̈ + c + g) the arm gets argmin (x − q̈)ᵀ M (x − q̈) s.t. A x = −Ȧ q̇."""
    ref = ref_of("panda")
    rng = np.random.default_rng(37)
    q, qd, _, normals, a, adot_qd = plane_setup(ref, "panda_hand", rng, 2)
    qdd = rng.normal(0, 3, ref.model.nv)  # not feasible
    res = constrained_inverse_dynamics(ref.model, q, qd, qdd, a, adot_qd=adot_qd)
    m = ref.mass(q)
    nearest, _ = kkt(m, -m @ qdd, a, adot_qd, np.zeros(ref.model.nv))  # stationarity of the QP
    reached, _ = constrained_forward_dynamics(ref.model, q, qd, res.tau, a, adot_qd=adot_qd)
    assert relerr(reached, nearest) < 1e-9
    assert not np.allclose(reached, qdd, atol=1e-3)


def test_tip_stays_on_its_plane_when_simulated() -> None:
    """Integrate the UR5 held on a plane (RK4, 1 ms, 0.2 s) under a random constant effort: the tip's
    height above the plane drifts only by the integration error (Ȧ q̇ has the right sign and size)."""
    ref = ref_of("ur5")
    model, link = ref.model, "ee_link"
    rng = np.random.default_rng(38)
    q, _, _ = ref.random_state(rng)
    normal = unit(rng.normal(size=3))
    a0, _ = link_constraint(model, q, np.zeros(model.nv), link, normal)
    qd = null_space(a0) @ rng.normal(0, 1.0, model.nv - 1)
    tau = rng.normal(0, 5, model.nv)

    def f(x: np.ndarray) -> np.ndarray:
        a, adot_qd = link_constraint(model, x[: model.nv], x[model.nv :], link, normal)
        qdd, _ = constrained_forward_dynamics(model, x[: model.nv], x[model.nv :], tau, a, adot_qd=adot_qd)
        return np.concatenate([x[model.nv :], qdd])

    def height(x: np.ndarray) -> float:
        return float(normal @ link_pose(model, x[: model.nv], link)[1])

    x, dt = np.concatenate([q, qd]), 1e-3
    start, drift, moved = height(x), 0.0, 0.0
    p0 = link_pose(model, q, link)[1]
    for _ in range(200):
        k1 = f(x)
        k2 = f(x + dt / 2 * k1)
        k3 = f(x + dt / 2 * k2)
        k4 = f(x + dt * k3)
        x = x + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        drift = max(drift, abs(height(x) - start))
    moved = float(np.linalg.norm(link_pose(model, x[: model.nv], link)[1] - p0))
    assert moved > 0.05  # the tip really slid along the plane
    assert drift < 1e-9


def test_bad_constraints_raise_value_error_naming_them() -> None:
    ref = ref_of("ur5")
    model = ref.model
    q = np.full(model.nv, 0.3)
    a, _ = link_constraint(model, q, np.zeros(model.nv), "ee_link", [[0, 0, 1.0]])
    with pytest.raises(IllConditionedError, match="a: the constraints are dependent"):
        constrained_inverse_dynamics(model, q, q, q, np.vstack([a, 2 * a]))
    with pytest.raises(ValueError, match="a must have shape"):
        constrained_forward_dynamics(model, q, q, q, np.ones((2, 3)))
    with pytest.raises(ValueError, match="lam must be 1"):
        constrained_inverse_dynamics(model, q, q, q, a, lam=[1.0, 2.0])
    with pytest.raises(ValueError, match="adot_qd must be 1"):
        constrained_inverse_dynamics(model, q, q, q, a, adot_qd=[1.0, 2.0])
    with pytest.raises(ValueError, match="directions"):
        link_constraint(model, q, q, "ee_link", [[0, 1.0]])
    with pytest.raises(UnknownLinkError, match="link 'nope'"):
        link_constraint(model, q, q, "nope", [[0, 0, 1.0]])
    with pytest.raises(ValueError, match="m must be"):
        constraint_projection(np.ones((2, 3)), a)
