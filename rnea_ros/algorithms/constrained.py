"""Dynamics under k independent velocity constraints A(q) q̇ = 0 (Modern Robotics 8.7).

Equations of motion, in the package's sign convention (Aᵀλ is the joint effort spent against the
constraint, like Jᵀ F for a wrench F the link exerts on its environment):

    τ = M q̈ + c + g + Aᵀ λ,     A q̇ = 0,     A q̈ + Ȧ q̇ = 0.

For a constraint on a link, A = S J (S: k×6 root-axes twist directions held at zero, J the link
Jacobian), Aᵀλ = Jᵀ (Sᵀλ): the link exerts the wrench Sᵀλ on the constraint (root axes, about the
link origin). A point on a plane with unit normal n̂ (fixed in the root frame): A = n̂ᵀ J_v,
Ȧ q̇ = n̂ᵀ (J̇ q̇)_lin, and λ is the force the link pushes with along +n̂ (N).

Projection P = I − Aᵀ (A M⁻¹ Aᵀ)⁻¹ A M⁻¹ (n×n) removes the constraint efforts: P Aᵀ = 0, and
A M⁻¹ P = 0 (projected efforts P τ accelerate nothing across the constraint); P² = P and M⁻¹ P is
symmetric. Hence P τ = P (M q̈ + c + g): the constrained inverse dynamics.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from rnea_ros.algorithms.dynamics import GRAVITY, mass_matrix, nonlinear_effects
from rnea_ros.algorithms.task_space import (
    DEFAULT_RCOND,
    IllConditionedError,
    finite_states,
    jacobian_rows,
    link_jdot_qd,
)
from rnea_ros.errors import RneaError
from rnea_ros.model.robot_model import RobotModel

__all__ = [
    "ConstrainedEfforts",
    "constrained_forward_dynamics",
    "constrained_inverse_dynamics",
    "constraint_multipliers",
    "constraint_projection",
    "link_constraint",
]


@dataclass(frozen=True)
class ConstrainedEfforts:
    """Joint efforts for a constrained motion and the constraint's share.

    tau: efforts to command (N m or N), `model.joint_names` order.
    lam: multipliers λ (k,) the constraint carries under tau (see module docs for the sign).
    constraint_efforts: Aᵀ λ (n,), so that tau = M q̈ + c + g + Aᵀ λ.
    """

    tau: np.ndarray
    lam: np.ndarray
    constraint_efforts: np.ndarray


def _constraint_matrix(a: npt.ArrayLike, n: int) -> np.ndarray:
    try:
        am = np.asarray(a, dtype=float)
    except (TypeError, ValueError):
        raise RneaError("a must be an array of numbers") from None
    if am.ndim == 1:
        am = am[None]
    if am.ndim != 2 or am.shape[1] != n or not 1 <= am.shape[0] <= n:
        raise RneaError(f"a must have shape (k, {n}) with 1 <= k <= {n}, got {np.shape(a)}")
    if not np.all(np.isfinite(am)):
        raise RneaError("a contains NaN or Inf")
    return am


def _schur(m: np.ndarray, a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(M⁻¹ Aᵀ (n, k), A M⁻¹ Aᵀ (k, k)); IllConditionedError when the constraints are dependent."""
    minv_at = np.linalg.solve(m, a.T)
    s = a @ minv_at
    s = 0.5 * (s + s.T)
    mu = np.linalg.eigvalsh(s)
    if not mu[0] > DEFAULT_RCOND * mu[-1]:
        cond = mu[-1] / mu[0] if mu[0] > 0 else float("inf")
        raise IllConditionedError(
            f"a: the constraints are dependent or not affected by the joints (A M⁻¹ Aᵀ condition {cond:.3g})",
            float(cond),
        )
    return minv_at, s


def constraint_projection(m: npt.ArrayLike, a: npt.ArrayLike) -> np.ndarray:
    """P = I − Aᵀ (A M⁻¹ Aᵀ)⁻¹ A M⁻¹ for a mass matrix M (n×n) and constraint matrix A (k×n)."""
    mm = np.asarray(m, dtype=float)
    if mm.ndim != 2 or mm.shape[0] != mm.shape[1] or not np.all(np.isfinite(mm)):
        raise RneaError(f"m must be a finite square matrix, got shape {mm.shape}")
    n = mm.shape[0]
    am = _constraint_matrix(a, n)
    minv_at, s = _schur(mm, am)
    return np.eye(n) - am.T @ np.linalg.solve(s, minv_at.T)


def _one_state(model: RobotModel, **named) -> list[np.ndarray]:
    out = []
    for name, value in named.items():
        n = model.nq if name == "q" else model.nv
        x = finite_states(value, name, n)
        if x.ndim != 1:
            raise RneaError(f"{name} must have shape ({n},): one state")
        out.append(x)
    return out


def _adot_qd(adot_qd: npt.ArrayLike | None, k: int) -> np.ndarray:
    if adot_qd is None:
        return np.zeros(k)
    b = np.asarray(adot_qd, dtype=float).reshape(-1)
    if b.shape != (k,) or not np.all(np.isfinite(b)):
        raise RneaError(f"adot_qd must be {k} finite numbers")
    return b


def link_constraint(
    model: RobotModel, q: npt.ArrayLike, qd: npt.ArrayLike, link: str, directions: npt.ArrayLike
) -> tuple[np.ndarray, np.ndarray]:
    """(A (k, n), Ȧ q̇ (k,)) holding a link's twist at zero along fixed root-axes directions.

    directions: (k, 3) linear directions of the link origin (e.g. a plane's normal: the origin
    stays on the plane) or (k, 6) twist directions [v; ω]; constant in the root frame. A = S J,
    Ȧ q̇ = S J̇ q̇. The link then exerts the wrench Sᵀλ on the constraint (force Σ λ_i n_i for k×3).
    """
    model.link_frame(link)
    q1, qd1 = _one_state(model, q=q, qd=qd)
    s = np.asarray(directions, dtype=float)
    if s.ndim == 1:
        s = s[None]
    if s.ndim != 2 or s.shape[1] not in (3, 6) or not 1 <= s.shape[0] <= 6 or not np.all(np.isfinite(s)):
        raise RneaError(f"directions must be finite with shape (k, 3) or (k, 6), got {np.shape(directions)}")
    if s.shape[1] == 3:
        s = np.hstack([s, np.zeros_like(s)])
    jac = jacobian_rows(model, q1[None], link, range(6))
    return s @ jac[0], s @ link_jdot_qd(model, q1[None], qd1[None], link, jac)[0]


def constraint_multipliers(directions: npt.ArrayLike, wrench: npt.ArrayLike) -> np.ndarray:
    """λ (k,) for a requested contact force (3,) or wrench (6,) that the link exerts on the
    constraint of `link_constraint(..., directions)`: the least-squares solution of Sᵀλ = F
    (exact when F lies in the span of the directions; λ = n̂ · f for one unit normal)."""
    s = np.asarray(directions, dtype=float)
    if s.ndim == 1:
        s = s[None]
    f = np.asarray(wrench, dtype=float).reshape(-1)
    if s.ndim != 2 or s.shape[1] not in (3, 6) or f.shape != (s.shape[1],):
        raise RneaError(f"wrench must have {s.shape[-1]} numbers to match directions of shape {s.shape}")
    if not (np.all(np.isfinite(s)) and np.all(np.isfinite(f))):
        raise RneaError("directions and wrench must be finite")
    return np.linalg.lstsq(s.T, f, rcond=None)[0]


def constrained_forward_dynamics(
    model: RobotModel,
    q: npt.ArrayLike,
    qd: npt.ArrayLike,
    tau: npt.ArrayLike,
    a: npt.ArrayLike,
    *,
    adot_qd: npt.ArrayLike | None = None,
    gravity: npt.ArrayLike = GRAVITY,
) -> tuple[np.ndarray, np.ndarray]:
    """(q̈, λ) under efforts τ with the constraint A q̈ + Ȧ q̇ = 0 (Ȧ q̇ = `adot_qd`, default 0):
    λ = (A M⁻¹ Aᵀ)⁻¹ (A M⁻¹ (τ − c − g) + Ȧ q̇), q̈ = M⁻¹ (τ − c − g − Aᵀ λ). One state."""
    q1, qd1, tau1 = _one_state(model, q=q, qd=qd, tau=tau)
    am = _constraint_matrix(a, model.nv)
    b = _adot_qd(adot_qd, am.shape[0])
    m = mass_matrix(model, q1)
    minv_at, s = _schur(m, am)
    free = np.linalg.solve(m, tau1 - nonlinear_effects(model, q1, qd1, gravity=gravity))
    lam = np.linalg.solve(s, am @ free + b)
    return free - minv_at @ lam, lam


def constrained_inverse_dynamics(
    model: RobotModel,
    q: npt.ArrayLike,
    qd: npt.ArrayLike,
    qdd: npt.ArrayLike,
    a: npt.ArrayLike,
    *,
    adot_qd: npt.ArrayLike | None = None,
    lam: npt.ArrayLike | None = None,
    gravity: npt.ArrayLike = GRAVITY,
) -> ConstrainedEfforts:
    """Efforts that move the constrained arm with q̈ (one state).

    qdd must be feasible: A q̈ + Ȧ q̇ = 0 (`adot_qd` = Ȧ q̇, default 0); an infeasible q̈ is not
    reached, the arm gets the feasible q̈ nearest to it in the metric M instead (Gauss).
    lam None: τ = P (M q̈ + c + g), the projected solution (A M⁻¹ τ = 0); the constraint then
    carries λ = (A M⁻¹ Aᵀ)⁻¹ (Ȧ q̇ − A M⁻¹ (c + g)), e.g. part of the arm's weight.
    lam given (k,), e.g. from `constraint_multipliers` for a requested contact force:
    τ = M q̈ + c + g + Aᵀ λ, which has the same projection P τ and makes the constraint carry it.
    """
    q1, qd1, qdd1 = _one_state(model, q=q, qd=qd, qdd=qdd)
    am = _constraint_matrix(a, model.nv)
    k = am.shape[0]
    b = _adot_qd(adot_qd, k)
    m = mass_matrix(model, q1)
    minv_at, s = _schur(m, am)
    h = nonlinear_effects(model, q1, qd1, gravity=gravity)
    full = m @ qdd1 + h
    if lam is None:
        tau = full - am.T @ np.linalg.solve(s, minv_at.T @ full)  # P (M q̈ + c + g)
        lam1 = np.linalg.solve(s, am @ np.linalg.solve(m, tau - h) + b)
    else:
        lam1 = np.asarray(lam, dtype=float).reshape(-1)
        if lam1.shape != (k,) or not np.all(np.isfinite(lam1)):
            raise RneaError(f"lam must be {k} finite numbers")
        tau = full + am.T @ lam1
    return ConstrainedEfforts(tau, lam1, am.T @ lam1)
