"""The contact forces of a floating (or planar) base robot on matrices: the reference solver.

Equation (Pinocchio's sign convention: f is what the environment exerts on the robot):

    M a + h = Sᵀ τ + J_cᵀ f

M (nv×nv) the joint-space inertia, h = c + g (nv) the nonlinear effects, a (nv) the desired
acceleration, S = [0 | I] selects the actuated rows (the first `n_base` rows, 6 for a free-flyer,
3 for a planar root, carry no actuator), J_c the stacked contact Jacobians and f the stacked
contact forces (`contacts.Contact`: kinds, cones, normal forces). The base rows,
b_u = (M a + h)[:n_base] = J_c,uᵀ f, are met by f alone; the actuated rows then give
τ = (M a + h − J_cᵀ f)[n_base:].

Choice of f (more unknowns than base rows): the quadratic program

    minimise ½ Σ_c (‖f_c‖² + w_c ‖m_c‖²) + ½ ε ‖λ‖²
    subject to J_c,uᵀ f = b_u  (exactly), the cones above and the minimum normal forces,

w_c = `moment_weight` (m⁻², 6-D contacts), λ the corner forces of the rectangles and ε = 1e-6
a regularisation that makes the program strictly convex (it picks among corner forces giving the
same wrench). The base rows are an equality, not a weighted tracking, so when the program is
feasible the equation of motion holds to rounding. A symmetric problem gives a symmetric f.

No admissible f (the centre of mass outside the support, a single point contact asked for a
moment, a tangential demand beyond friction): status INFEASIBLE and the least-violating f, from

    minimise ½ ρ ‖J_c,uᵀ f − b_u‖² + (the objective above),  ρ = 1e6,
    subject to the cones and minimum normal forces,

which always has a solution; τ follows from it on the actuated rows and `base_residual` holds
b_u − J_c,uᵀ f. Every returned number is finite.

Solver: quadprog (Goldfarb-Idnani dual active set, dense), measured against daqp, proxsuite and
OSQP in bench/contact_qp.py.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import quadprog  # type: ignore[import-not-found]  # a C extension without stubs

from rnea_ros.algorithms.contacts import Contact, ContactSolution, ContactStatus
from rnea_ros.errors import ContactError, RneaError

__all__ = ["solve_contact_forces"]  # the rest serves contact_fast_path and bench/contact_qp.py

RELAX_WEIGHT = 1e6  # ρ, weight of the base-row residual when no admissible f exists
CORNER_REGULARISATION = 1e-6  # ε on the corner forces of 6-D contacts
EQUALITY_RTOL = 1e-9  # base rows outside the span of the contact Jacobians, relative to ‖b‖∞


@dataclass(frozen=True)
class ContactQP:
    """The program in the variables x (corner forces λ for rectangles, f otherwise):

        minimise ½ xᵀ H x + gᵀ x   subject to   A x = b,  C x ≤ d,

    with f = T x. H is positive definite."""

    H: np.ndarray
    g: np.ndarray
    A: np.ndarray
    b: np.ndarray
    C: np.ndarray
    d: np.ndarray
    T: np.ndarray


def checked_matrix(x: npt.ArrayLike, name: str, shape: tuple[int, ...]) -> np.ndarray:
    try:
        a = np.asarray(x, dtype=float)
    except (TypeError, ValueError):
        raise RneaError(f"{name} must be an array of numbers") from None
    if a.shape != shape:
        raise RneaError(f"{name} must have shape {shape}, got {a.shape}")
    if not np.all(np.isfinite(a)):
        raise RneaError(f"{name} contains NaN or Inf")
    return a


def contact_qp(
    b_base: np.ndarray, jacobians_base: Sequence[np.ndarray], contacts: Sequence[Contact], *, relax: bool
) -> ContactQP:
    """The force program for base rows b_base (n_base) = Σ_c J_c,uᵀ f_c, J_c,u = jacobians_base[c]
    (rows × n_base). relax=False: the base rows as equality; True: as the weighted residual
    (RELAX_WEIGHT) with no equality. Inputs are assumed checked (see solve_contact_forces)."""
    n_base = b_base.shape[0]
    t, w, reg, cm, d = contact_layout(contacts)
    ju = np.concatenate(list(jacobians_base), axis=0) if contacts else np.zeros((0, n_base))
    a_base = ju.T @ t  # (n_base, nx): base rows of J_cᵀ f
    h = t.T @ (w[:, None] * t) + np.diag(reg)
    nx = t.shape[1]
    g = np.zeros(nx)
    if relax:
        h = h + RELAX_WEIGHT * (a_base.T @ a_base)
        g = -RELAX_WEIGHT * (a_base.T @ b_base)
        a_eq, b_eq = np.zeros((0, nx)), np.zeros(0)
    else:
        a_eq, b_eq = a_base, b_base
    return ContactQP(H=0.5 * (h + h.T), g=g, A=a_eq, b=b_eq, C=cm, d=d, T=t)


def contact_layout(
    contacts: Sequence[Contact],
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """What the program takes from the contacts alone: (T (m×nx) with f = T x, the objective's
    weights of f (m) and of x (nx, the corner regularisation), C (nc×nx) and d (nc) of C x ≤ d)."""
    m = sum(c.rows for c in contacts)
    nx = sum(16 if c.corners else c.rows for c in contacts)
    nc = sum((16 if c.corners else c.cone.shape[0]) + 1 for c in contacts)
    t = np.zeros((m, nx))
    w = np.ones(m)
    reg = np.zeros(nx)
    cm = np.zeros((nc, nx))  # C x ≤ d: cone rows then the minimum normal force, per contact
    d = np.zeros(nc)
    i = j = k = 0
    for c in contacts:
        if c.corners:
            t[i : i + 6, j : j + 16] = c.cone
            reg[j : j + 16] = CORNER_REGULARISATION
            cm[k : k + 16, j : j + 16] = -np.eye(16)  # λ ≥ 0
            cm[k + 16, j : j + 16] = -1.0  # f·n = Σ λ (unit-normal edges)
            nvar, ncone = 16, 16
        else:
            t[i : i + c.rows, j : j + c.rows] = np.eye(c.rows)
            ncone = c.cone.shape[0]
            cm[k : k + ncone, j : j + 3] = c.cone
            cm[k + ncone, j : j + 3] = -c.axes[:, 2]
            nvar = c.rows
        d[k + ncone] = -c.min_normal_force
        if c.rows == 6:
            w[i + 3 : i + 6] = c.moment_weight
        i += c.rows
        j += nvar
        k += ncone + 1
    return t, w, reg, cm, d


def independent_rows(a: np.ndarray, b: np.ndarray, scale: float) -> tuple[np.ndarray, np.ndarray, float]:
    """(A', b', inconsistency): orthonormal rows A' with the row space of A, A' x = b' ⇔ A x = b
    when the inconsistency (the part of b outside A's column space) is ~0."""
    if a.shape[1] == 0:
        return a[:0], b[:0], float(np.max(np.abs(b), initial=0.0))
    u, s, vt = np.linalg.svd(a, full_matrices=False)
    r = int(np.sum(s > max(a.shape) * np.finfo(float).eps * (s[0] if s.size else 0.0)))
    ur = u[:, :r]
    outside = b - ur @ (ur.T @ b)
    return vt[:r], (ur.T @ b) / s[:r], float(np.max(np.abs(outside), initial=0.0)) / scale


def solve_qp(
    qp: ContactQP, a_eq: np.ndarray | None = None, b_eq: np.ndarray | None = None
) -> np.ndarray | None:
    """x of the program with quadprog (equality rows a_eq, b_eq in place of qp.A, qp.b when
    given); None when it is infeasible."""
    a = qp.A if a_eq is None else a_eq
    b = qp.b if b_eq is None else b_eq
    nx = qp.H.shape[0]
    if nx == 0:
        return np.zeros(0) if a.shape[0] == 0 or np.max(np.abs(b)) == 0.0 else None
    # quadprog: minimise ½ xᵀ G x − aᵀ x subject to Cᵀ x ≥ b, the first meq rows as equalities
    cmat = np.vstack([a, -qp.C]).T
    bvec = np.concatenate([b, -qp.d])
    try:
        x = quadprog.solve_qp(qp.H, -qp.g, cmat, bvec, a.shape[0])[0]
    except ValueError:  # "constraints are inconsistent, no solution"
        return None
    return x if np.all(np.isfinite(x)) else None


def solve_contact_forces(
    m: npt.ArrayLike,
    h: npt.ArrayLike,
    a: npt.ArrayLike,
    contacts: Sequence[Contact],
    jacobians: Sequence[npt.ArrayLike],
    *,
    n_base: int = 6,
) -> ContactSolution:
    """τ (actuated rows) and contact forces f with M a + h = Sᵀ τ + J_cᵀ f (module docs).

    m (nv×nv), h (nv) = c + g, a (nv); contacts and their Jacobians (jacobians[i]: 3×nv for a
    point, 6×nv for a 6d contact, in the axes of its normal); n_base: unactuated leading rows
    (6 free-flyer, 3 planar). RneaError (ContactError naming the contact) on bad input."""
    if isinstance(n_base, bool) or not isinstance(n_base, (int, np.integer)):
        raise RneaError(f"n_base must be an integer, got {n_base!r}")
    hv = np.asarray(h, dtype=float) if not isinstance(h, np.ndarray) else h
    nv = int(np.shape(hv)[0]) if np.ndim(hv) == 1 else -1
    if nv < 1:
        raise RneaError(f"h must be a vector (nv,), got shape {np.shape(h)}")
    if not 1 <= n_base <= nv:
        raise RneaError(f"n_base must be in [1, {nv}], got {n_base}")
    mm = checked_matrix(m, "M", (nv, nv))
    hv = checked_matrix(h, "h", (nv,))
    av = checked_matrix(a, "a", (nv,))
    if len(jacobians) != len(contacts):
        raise RneaError(f"{len(contacts)} contacts but {len(jacobians)} jacobians")
    jacs = []
    for c, jac in zip(contacts, jacobians, strict=True):
        if not isinstance(c, Contact):
            raise RneaError(f"contacts must be Contact objects, got {type(c).__name__}")
        try:
            jacs.append(checked_matrix(jac, "jacobian", (c.rows, nv)))
        except RneaError as e:
            raise ContactError(c.link, f"{c.kind} contact: {e}") from None
    links = [c.link for c in contacts]
    for link in links:
        if links.count(link) > 1:
            raise ContactError(link, "given more than once")

    b = mm @ av + hv
    b_base = b[:n_base]
    jc = np.concatenate(jacs, axis=0) if jacs else np.zeros((0, nv))
    scale = max(1.0, float(np.max(np.abs(b))))
    qp = contact_qp(b_base, [jac[:, :n_base] for jac in jacs], contacts, relax=False)
    a_eq, b_eq, outside = independent_rows(qp.A, qp.b, scale)
    x = solve_qp(qp, a_eq, b_eq) if outside <= EQUALITY_RTOL else None
    status, message = ContactStatus.OK, ""
    if x is None:
        status = ContactStatus.INFEASIBLE
        if outside > EQUALITY_RTOL:
            message = (
                f"the base rows are outside the span of the contact Jacobians (relative {outside:.3g}): "
                "the contacts cannot carry the demanded base wrench"
            )
        else:
            message = (
                "no contact force within the friction cones and minimum normal forces "
                "meets the base rows (centre of pressure outside the support?)"
            )
        relaxed = contact_qp(b_base, [jac[:, :n_base] for jac in jacs], contacts, relax=True)
        x = solve_qp(relaxed)
        if x is None:  # not expected: x = minimum normal forces is always admissible
            x = _admissible_point(contacts, relaxed.H.shape[0])
        qp = relaxed
    f = qp.T @ x
    generalised = jc.T @ f
    tau = b[n_base:] - generalised[n_base:]
    residual = b_base - generalised[:n_base]
    forces = []
    i = 0
    for c in contacts:
        forces.append(f[i : i + c.rows].copy())
        i += c.rows
    return ContactSolution(
        tau=tau, forces=tuple(forces), f=f, status=status, base_residual=residual, message=message
    )


def _admissible_point(contacts: Sequence[Contact], nx: int) -> np.ndarray:
    """x with every force at its minimum normal force, no tangential force and no moment: inside
    every cone (the fallback should quadprog fail on the relaxed program)."""
    x = np.zeros(nx)
    j = 0
    for c in contacts:
        if c.corners:
            x[j : j + 16] = c.min_normal_force / 16.0
            j += 16
        else:
            x[j : j + 3] = c.min_normal_force * c.axes[:, 2]
            j += c.rows
    return x
