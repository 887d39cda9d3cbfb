"""Task-space (operational-space) dynamics of a link frame: inertia Λ, bias wrench η, J̇ q̇,
apparent mass and the force/acceleration ellipsoids.

Conventions (those of `jacobian`): the task velocity of a link is V = J q̇ = [v; ω], v the linear
velocity of the link frame origin and ω the angular velocity, both in root-frame axes. Its
derivative V̇ = J q̈ + J̇ q̇ is the *classical* acceleration [a; ω̇] of that origin (a = dv/dt in
the root frame), NOT the spatial acceleration, whose linear part at the origin is a − ω × v.

The task wrench F is a wrench in the package's convention (root-frame axes, moment about the link
origin): the one the joint efforts τ = Jᵀ F deliver at the link, i.e. the wrench the link exerts
on its environment when held still. Joint space τ = M q̈ + c + g + Jᵀ F_ext (F_ext exerted by the
link on its environment) becomes, for a square invertible J, with V̇ = J q̈ + J̇ q̇:

    J⁻ᵀ τ = F = Λ V̇ + η + F_ext,   Λ = J⁻ᵀ M J⁻¹ = (J M⁻¹ Jᵀ)⁻¹,   η = J⁻ᵀ (c + g) − Λ J̇ q̇.

For a redundant arm (more joints than task coordinates) driven by τ = Jᵀ F alone (no null-space
effort), q̈ = M⁻¹ (Jᵀ F − c − g − Jᵀ F_ext) gives the same F = Λ V̇ + η + F_ext with
Λ = (J M⁻¹ Jᵀ)⁻¹ and the dynamically consistent η = Λ (J M⁻¹ (c + g) − J̇ q̇) (equal to the above
when J is square). So to hold the link still while it pushes with F_ext, command F = η + F_ext.

`part` selects the task coordinates S V: "full" (the 6-D twist, S = I), "linear" (the origin's
velocity alone, S = [I 0]; Λ_lin = (J_v M⁻¹ J_vᵀ)⁻¹, the rotation left free, which is *not* the
top-left block of the 6-D Λ) or any (k, 6) array S of root-axes twist directions (e.g. the x-y
rows of a planar arm). Λ⁻¹ = S J M⁻¹ Jᵀ Sᵀ is always defined; Λ is returned only while Λ⁻¹ is
well conditioned: its eigenvalues μ satisfy μ_min > rcond · μ_max (so Λ keeps about
−log10(cond · 2e-16) correct digits). Near a singular configuration `TaskSpaceInertia.inertia`
is None and functions that need Λ raise `IllConditionedError` (a ValueError). The 6-D condition
number mixes m and rad, so it depends on the length unit; the linear part's does not.

Units: Λ in kg (linear rows), kg m (mixed), kg m² (angular); η in N and N m; J̇ q̇ in m/s², rad/s².
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from rnea_ros.algorithms.configuration import base_placement
from rnea_ros.algorithms.dynamics import GRAVITY, link_pose, mass_matrix, nonlinear_effects, rnea
from rnea_ros.errors import IllConditionedError, RneaError
from rnea_ros.model.robot_model import RobotModel

__all__ = [
    "DEFAULT_RCOND",
    "Ellipsoid",
    "IllConditionedError",
    "TaskSpaceInertia",
    "acceleration_ellipsoid",
    "apparent_mass",
    "force_ellipsoid",
    "jacobian_dot_qd",
    "task_space_bias",
    "task_space_inertia",
    "task_space_inertia_inverse",
    "tip_apparent_mass",
]

DEFAULT_RCOND = 1e-8
_NO_GRAVITY = (0.0, 0.0, 0.0)
_UNIT_WRENCHES = np.eye(6)
_LINEAR = np.hstack([np.eye(3), np.zeros((3, 3))])

Part = str | npt.ArrayLike


@dataclass(frozen=True)
class TaskSpaceInertia:
    """Task-space inertia of a link at one configuration.

    inverse: Λ⁻¹ = S J M⁻¹ Jᵀ Sᵀ (k×k), always defined (m/s² per N, rad/s² per N m).
    inertia: Λ = (Λ⁻¹)⁻¹, or None when Λ⁻¹ is ill-conditioned (μ_min ≤ rcond · μ_max).
    condition: μ_max / μ_min of Λ⁻¹ (= that of Λ), inf when singular.
    """

    inverse: np.ndarray
    inertia: np.ndarray | None
    condition: float
    rcond: float

    @property
    def well_conditioned(self) -> bool:
        return self.inertia is not None

    def require(self) -> np.ndarray:
        """Λ, or IllConditionedError when it is not reliable."""
        if self.inertia is None:
            raise IllConditionedError(
                f"task-space inertia is ill-conditioned (condition {self.condition:.3g} ≥ 1/rcond = "
                f"{1 / self.rcond:.3g}): singular configuration; use the inverse",
                self.condition,
            )
        return self.inertia


@dataclass(frozen=True)
class Ellipsoid:
    """Principal semi-axes of an ellipsoid: unit directions `axes[:, i]` (root-frame axes, task
    coordinates) with lengths `lengths[i]`, longest first."""

    axes: np.ndarray
    lengths: np.ndarray


# --- argument checks --------------------------------------------------------------------------


def finite_states(x: npt.ArrayLike, name: str, n: int) -> np.ndarray:
    """x as a finite float array of shape (n,) or (N, n); ValueError naming it otherwise."""
    try:
        a = np.asarray(x, dtype=float)
    except (TypeError, ValueError):
        raise RneaError(f"{name} must be an array of numbers") from None
    if a.ndim not in (1, 2) or a.shape[-1] != n:
        raise RneaError(f"{name} must have shape ({n},) or (N, {n}), got {a.shape}")
    if not np.all(np.isfinite(a)):
        raise RneaError(f"{name} contains NaN or Inf")
    return a


def _rcond(rcond: float) -> float:
    r = float(rcond)
    if not 0.0 < r < 1.0:
        raise RneaError(f"rcond must be in (0, 1), got {rcond}")
    return r


def _selection(part: Part) -> np.ndarray | None:
    """S (k×6) for `part`, None for the full twist."""
    if isinstance(part, str):
        if part == "full":
            return None
        if part == "linear":
            return _LINEAR
        raise RneaError(f"part must be 'full', 'linear' or a (k, 6) array, got '{part}'")
    try:
        s = np.asarray(part, dtype=float)
    except (TypeError, ValueError):
        raise RneaError("part must be 'full', 'linear' or a (k, 6) array") from None
    if s.ndim != 2 or s.shape[1] != 6 or not 1 <= s.shape[0] <= 6:
        raise RneaError(f"part must be a (k, 6) array with 1 <= k <= 6, got shape {s.shape}")
    if not np.all(np.isfinite(s)):
        raise RneaError("part contains NaN or Inf")
    if np.linalg.matrix_rank(s) < s.shape[0]:
        raise RneaError("part must have independent rows")
    return s


def _unit(direction: npt.ArrayLike, name: str) -> np.ndarray:
    """Unit 3-vectors (3,) or (N, 3); ValueError for zero, non-finite or misshaped input."""
    d = finite_states(direction, name, 3)
    norm = np.linalg.norm(d, axis=-1, keepdims=True)
    if np.any(norm == 0.0):
        raise RneaError(f"{name} must not be zero")
    return d / norm


# --- kinematics -------------------------------------------------------------------------------


def jacobian_rows(model: RobotModel, q2: np.ndarray, link: str, rows) -> np.ndarray:
    """Rows of the link Jacobian for a batch q2 (N, n) → (N, len(rows), n), from rnea:
    with q̇ = q̈ = 0 and no gravity, rnea returns Jᵀ F, so the unit wrench e_r gives row r."""
    zeros = np.zeros((q2.shape[0], model.nv))
    return np.stack([_jt(model, q2, zeros, link, _UNIT_WRENCHES[r]) for r in rows], axis=1)


def _jt(model: RobotModel, q2: np.ndarray, zeros: np.ndarray, link: str, wrench: np.ndarray) -> np.ndarray:
    """Jᵀ F (N, n) for one wrench F at the link, root axes, about its origin."""
    return rnea(model, q2, zeros, zeros, gravity=_NO_GRAVITY, wrenches={link: wrench})


def jdot_qd_from_jacobians(jac: np.ndarray, qd: np.ndarray) -> np.ndarray:
    """J̇ q̇ (N, 6) from the Jacobians (N, 6, n) and velocities (N, n) of a chain.

    Column j of J is [u_j; a_j]: revolute u_j = z_j × (p − p_j), a_j = z_j; prismatic u_j = z_j,
    a_j = 0 (z_j the joint axis, p the link origin, p_j a point on the axis, root axes). Joints on
    the root→link path come in index order (parents first); the others have zero columns. With
    ω_j = Σ_{k≤j} a_k q̇_k the angular velocity of body j and t_j = Σ_{k>j} u_k q̇_k = ṗ − (velocity
    of body j's point at p):
        d/dt a_j = ω_j × a_j,
        d/dt u_j = ω_j × u_j + a_j × t_j
    (revolute: ż_j × r + z_j × ṙ with ṙ = t_j + ω_j × r and the Jacobi identity; prismatic:
    ż_j = ω_j × z_j). J̇ q̇ = Σ_j (d/dt col_j) q̇_j: the classical acceleration at q̈ = 0.
    """
    u = jac[:, :3, :] * qd[:, None, :]  # u_j q̇_j
    a = jac[:, 3:, :] * qd[:, None, :]  # a_j q̇_j
    omega = np.cumsum(a, axis=2)
    v = np.cumsum(u, axis=2)
    tail = v[:, :, -1:] - v
    lin = np.cross(omega, u, axis=1) + np.cross(a, tail, axis=1)
    ang = np.cross(omega, a, axis=1)
    return np.concatenate([lin.sum(axis=2), ang.sum(axis=2)], axis=1)


_BASE_ROWS = {6: [0, 1, 2, 3, 4, 5], 3: [0, 1, 5]}  # root_nv → spatial rows of the root velocities


def link_jdot_qd(
    model: RobotModel, q2: np.ndarray, qd2: np.ndarray, link: str, jac: np.ndarray
) -> np.ndarray:
    """J̇ q̇ (N, 6) of a link for states q2 (N, nq), qd2 (N, nv) and its Jacobians jac (N, 6, nv).

    With a floating root, v_b, ω the base twist (base frame), R the base rotation, r the link
    origin in the base frame and J_r the Jacobian relative to the base (base axes), at constant v:
        a = R (ω × v_b + ω × (ω × r) + 2 ω × J_r,v q̇_j + (J̇_r q̇_j)_v),  ω̇ = R (ω × J_r,ω q̇_j + (J̇_r q̇_j)_ω).
    """
    if not model.root_nv:
        return jdot_qd_from_jacobians(jac, qd2)
    nv0 = model.root_nv
    out = np.empty((q2.shape[0], 6))
    for i in range(q2.shape[0]):
        rot, base = base_placement(model, q2[i])
        _, origin = link_pose(model, q2[i], link)
        r = rot.T @ (origin - base)
        rel = np.concatenate([rot.T @ jac[i, :3, nv0:], rot.T @ jac[i, 3:, nv0:]])
        qdj = qd2[i, nv0:]
        jd = jdot_qd_from_jacobians(rel[None], qdj[None])[0]
        twist = np.zeros(6)
        twist[_BASE_ROWS[nv0]] = qd2[i, :nv0]
        vb, w = twist[:3], twist[3:]
        rdot = rel[:3] @ qdj
        lin = np.cross(w, vb) + np.cross(w, np.cross(w, r)) + 2.0 * np.cross(w, rdot) + jd[:3]
        ang = np.cross(w, rel[3:] @ qdj) + jd[3:]
        out[i, :3] = rot @ lin
        out[i, 3:] = rot @ ang
    return out


def jacobian_dot_qd(model: RobotModel, q: npt.ArrayLike, qd: npt.ArrayLike, link: str) -> np.ndarray:
    """J̇(q, q̇) q̇ of a link frame origin, shape (6,) or (N, 6): [a; ω̇] at q̈ = 0, the classical
    acceleration of the origin (m/s²) and the angular acceleration (rad/s²), root-frame axes.
    Analytic (no finite differences), from the Jacobian columns."""
    model.link_frame(link)
    q2 = finite_states(q, "q", model.nq)
    qd2 = finite_states(qd, "qd", model.nv)
    if q2.shape[:-1] != qd2.shape[:-1]:
        raise RneaError(f"q and qd must be one state or equal batches, got {q2.shape}, {qd2.shape}")
    single = q2.ndim == 1
    q2, qd2 = np.atleast_2d(q2), np.atleast_2d(qd2)
    out = link_jdot_qd(model, q2, qd2, link, jacobian_rows(model, q2, link, range(6)))
    return out[0] if single else out


# --- task-space inertia -----------------------------------------------------------------------


def _inverse_inertia(model: RobotModel, q2: np.ndarray, link: str, s: np.ndarray | None):
    """(Λ⁻¹ (N, k, k), M⁻¹ Jᵀ Sᵀ (N, n, k), J (N, 6, n)) for a batch q2."""
    jac = jacobian_rows(model, q2, link, range(6))
    sj = jac if s is None else np.einsum("kr,nrj->nkj", s, jac)
    y = np.linalg.solve(mass_matrix(model, q2), np.swapaxes(sj, 1, 2))
    inv = sj @ y
    return 0.5 * (inv + np.swapaxes(inv, 1, 2)), y, jac


def _invert(inv: np.ndarray, rcond: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(Λ (N, k, k) with NaN where ill-conditioned, condition (N,), ok (N,)) from Λ⁻¹ (N, k, k)."""
    mu, vec = np.linalg.eigh(inv)
    top, low = mu[:, -1], mu[:, 0]
    ok = low > rcond * top
    with np.errstate(divide="ignore", invalid="ignore"):
        cond = np.where(low > 0.0, top / np.where(low > 0.0, low, 1.0), np.inf)
        lam = np.einsum("nik,nk,njk->nij", vec, 1.0 / np.where(ok[:, None], mu, np.nan), vec)
    return lam, cond, ok


def task_space_inertia_inverse(
    model: RobotModel, q: npt.ArrayLike, link: str, *, part: Part = "full"
) -> np.ndarray:
    """Λ⁻¹ = S J M⁻¹ Jᵀ Sᵀ (always defined) for one configuration (k, k) or a batch (N, k, k)."""
    model.link_frame(link)
    s = _selection(part)
    q2 = finite_states(q, "q", model.nq)
    inv = _inverse_inertia(model, np.atleast_2d(q2), link, s)[0]
    return inv[0] if q2.ndim == 1 else inv


def task_space_inertia(
    model: RobotModel, q: npt.ArrayLike, link: str, *, part: Part = "full", rcond: float = DEFAULT_RCOND
) -> TaskSpaceInertia:
    """Task-space inertia Λ = (S J M⁻¹ Jᵀ Sᵀ)⁻¹ of a link at one configuration (n,), with Λ⁻¹ and
    the condition number; `inertia` is None near singular configurations (see module docs)."""
    model.link_frame(link)
    s = _selection(part)
    r = _rcond(rcond)
    q1 = finite_states(q, "q", model.nq)
    if q1.ndim != 1:
        raise RneaError(f"q must have shape ({model.nq},): one configuration")
    inv = _inverse_inertia(model, q1[None], link, s)[0]
    lam, cond, ok = _invert(inv, r)
    return TaskSpaceInertia(inv[0], lam[0] if ok[0] else None, float(cond[0]), r)


def task_space_bias(
    model: RobotModel,
    q: npt.ArrayLike,
    qd: npt.ArrayLike,
    link: str,
    *,
    part: Part = "full",
    gravity: npt.ArrayLike = GRAVITY,
    rcond: float = DEFAULT_RCOND,
) -> np.ndarray:
    """Task-space bias wrench η = Λ (S J M⁻¹ (c + g) − S J̇ q̇), shape (k,) or (N, k), so that
    τ = Jᵀ Sᵀ F gives F = Λ S V̇ + η (+ F_ext in contact); N and N m, root axes, about the link
    origin. Equal to J⁻ᵀ (c + g) − Λ J̇ q̇ for a square J. IllConditionedError near singularities."""
    model.link_frame(link)
    s = _selection(part)
    r = _rcond(rcond)
    q2 = finite_states(q, "q", model.nq)
    qd2 = finite_states(qd, "qd", model.nv)
    if q2.shape[:-1] != qd2.shape[:-1]:
        raise RneaError(f"q and qd must be one state or equal batches, got {q2.shape}, {qd2.shape}")
    single = q2.ndim == 1
    q2, qd2 = np.atleast_2d(q2), np.atleast_2d(qd2)
    inv, y, jac = _inverse_inertia(model, q2, link, s)
    lam, cond, ok = _invert(inv, r)
    if not ok.all():
        bad = int(np.argmin(ok))
        where = "" if single else f" at state {bad}"
        raise IllConditionedError(
            f"task-space inertia is ill-conditioned{where} (condition {cond[bad]:.3g}): "
            "singular configuration",
            float(cond[bad]),
        )
    h = nonlinear_effects(model, q2, qd2, gravity=gravity)
    jdq = link_jdot_qd(model, q2, qd2, link, jac)
    if s is not None:
        jdq = jdq @ s.T
    rhs = np.einsum("njk,nj->nk", y, h) - jdq
    eta = np.einsum("nik,nk->ni", lam, rhs)
    return eta[0] if single else eta


# --- apparent mass and ellipsoids -------------------------------------------------------------


def _reciprocal(x: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore"):
        return np.where(x > 0.0, 1.0 / np.where(x > 0.0, x, 1.0), np.inf)


def apparent_mass(
    model: RobotModel, q: npt.ArrayLike, link: str, direction: npt.ArrayLike
) -> float | np.ndarray:
    """Apparent mass (kg) of a link origin along a direction (root axes, normalised here):
    m(u) = 1 / (uᵀ Λ_lin⁻¹ u) with Λ_lin⁻¹ = J_v M⁻¹ J_vᵀ, the ratio of a force along u to the
    resulting acceleration along u at rest (rotation free). inf where the joints cannot move the
    origin along u. One configuration (n,) → float; a batch (N, n) → (N,), with one direction (3,)
    or one per state (N, 3)."""
    model.link_frame(link)
    q2 = finite_states(q, "q", model.nq)
    u = _unit(direction, "direction")
    single = q2.ndim == 1
    if single and u.ndim == 2:
        raise RneaError("direction must have shape (3,) for one configuration")
    q2 = np.atleast_2d(q2)
    if u.ndim == 2 and u.shape[0] != q2.shape[0]:
        raise RneaError(f"direction must have shape (3,) or ({q2.shape[0]}, 3), got {u.shape}")
    if u.ndim == 1:  # J_vᵀ u straight from rnea: one call
        b = _jt(model, q2, np.zeros((*q2.shape[:-1], model.nv)), link, np.concatenate([u, np.zeros(3)]))
    else:
        b = np.einsum("nrj,nr->nj", jacobian_rows(model, q2, link, range(3)), u)
    x = np.einsum("nj,nj->n", b, np.linalg.solve(mass_matrix(model, q2), b[..., None])[..., 0])
    m = _reciprocal(x)
    return float(m[0]) if single else m


def tip_apparent_mass(
    model: RobotModel,
    q: npt.ArrayLike,
    qd: npt.ArrayLike,
    link: str,
    rest_direction: npt.ArrayLike,
    rest_speed: float = 1e-6,
) -> float:
    """Apparent mass (kg) of a link origin along its current linear velocity v = J_v q̇, or along
    `rest_direction` (root axes) while |v| ≤ rest_speed (m/s). One state."""
    model.link_frame(link)
    q1 = finite_states(q, "q", model.nq)
    qd1 = finite_states(qd, "qd", model.nv)
    if q1.ndim != 1 or qd1.ndim != 1:
        raise RneaError(f"q and qd must have shapes ({model.nq},), ({model.nv},): one state")
    rest = _unit(rest_direction, "rest_direction")
    if rest.ndim != 1:
        raise RneaError("rest_direction must have shape (3,)")
    if not rest_speed >= 0.0:
        raise RneaError(f"rest_speed must be >= 0, got {rest_speed}")
    jv = jacobian_rows(model, q1[None], link, range(3))[0]
    v = jv @ qd1
    speed = float(np.linalg.norm(v))
    u = v / speed if speed > rest_speed else rest
    b = jv.T @ u
    x = float(b @ np.linalg.solve(mass_matrix(model, q1), b))
    return 1.0 / x if x > 0.0 else float("inf")


def _eig(model: RobotModel, q, link: str, part: Part, rcond: float):
    model.link_frame(link)
    s = _selection(part)
    r = _rcond(rcond)
    q1 = finite_states(q, "q", model.nq)
    if q1.ndim != 1:
        raise RneaError(f"q must have shape ({model.nq},): one configuration")
    mu, vec = np.linalg.eigh(_inverse_inertia(model, q1[None], link, s)[0][0])
    return mu, vec, r


def force_ellipsoid(
    model: RobotModel, q: npt.ArrayLike, link: str, *, part: Part = "linear", rcond: float = DEFAULT_RCOND
) -> Ellipsoid:
    """Ellipsoid of task forces at rest (Modern Robotics 8.1.3): the unit sphere of task
    accelerations |V̇| = 1 mapped through F = Λ V̇ (the inertial part of F; gravity, η at rest,
    comes on top). Axes are the eigenvectors of Λ, lengths its eigenvalues (kg, or kg m² for
    angular rows): the apparent mass along each axis. Lengths are inf along directions where Λ⁻¹
    is singular to rcond (μ ≤ rcond · μ_max): the arm cannot accelerate that way."""
    mu, vec, r = _eig(model, q, link, part, rcond)
    with np.errstate(divide="ignore"):
        lengths = np.where(mu > r * mu[-1], 1.0 / np.where(mu > 0.0, mu, 1.0), np.inf)
    return Ellipsoid(vec, lengths)  # μ ascending → 1/μ descending


def acceleration_ellipsoid(
    model: RobotModel, q: npt.ArrayLike, link: str, *, part: Part = "linear"
) -> Ellipsoid:
    """Ellipsoid of task accelerations at rest: the unit sphere of task forces |F| = 1 (on top of
    gravity compensation) mapped through V̇ = Λ⁻¹ F. Axes are the eigenvectors of Λ⁻¹ (those of
    the force ellipsoid), lengths its eigenvalues (m/s² per N), always finite."""
    mu, vec, _ = _eig(model, q, link, part, DEFAULT_RCOND)
    return Ellipsoid(vec[:, ::-1].copy(), np.maximum(mu[::-1], 0.0))
