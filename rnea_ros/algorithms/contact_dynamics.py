"""Contact-consistent inverse dynamics of a floating (or planar) base robot, on matrices.

Equation (Pinocchio's sign convention: f is what the environment exerts on the robot):

    M a + h = Sᵀ τ + J_cᵀ f

M (nv×nv) the joint-space inertia, h = c + g (nv) the nonlinear effects, a (nv) the desired
acceleration, S = [0 | I] selects the actuated rows (the first `n_base` rows, 6 for a free-flyer,
3 for a planar root, carry no actuator), J_c the stacked contact Jacobians and f the stacked
contact forces. The base rows, b_u = (M a + h)[:n_base] = J_c,uᵀ f, are met by f alone; the
actuated rows then give τ = (M a + h − J_cᵀ f)[n_base:].

Contacts (`Contact`), each with the rows of its Jacobian (`jacobians[i]`, 3×nv for "point",
6×nv for "6d", linear rows first), with `normal` and `tangent` in the axes of those rows (root or
world axes for Pinocchio's LOCAL_WORLD_ALIGNED Jacobian and for `rnea_ros.algorithms.dynamics.
jacobian`):
  - "point": a force f (3) at the frame origin, inside an inscribed friction pyramid of
    `facets` facets (default 4): for θ_i = 2π i / facets,
        cos θ_i (f·t₁) + sin θ_i (f·t₂) ≤ μ cos(π / facets) (f·n),
    whose edges lie on the Coulomb cone ‖f_t‖ ≤ μ f_n, so every admitted force is in that cone.
  - "6d": a wrench [f; m] (6), moment about the frame origin. With `half_extents` (X, Y) the
    contact is a rectangle of ±X along t₁ and ±Y along t₂ = n × t₁, centred at the frame origin
    (a sole frame): the wrench is a non-negative combination of forces at the four corners, each
    in the inscribed 4-facet pyramid (|f·t₁|, |f·t₂| ≤ μ/√2 f·n). That is the exact contact
    wrench cone of that pyramid: it bounds the centre of pressure to the rectangle
    (|m·t₁| ≤ Y f_n, |m·t₂| ≤ X f_n) and the yaw moment. Without `half_extents` only the force is
    bounded (the pyramid), the moment is free (a welded or clamped contact).
  - every contact: f·n ≥ `min_normal_force` (N).

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

import math
import weakref
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import Enum

import numpy as np
import numpy.typing as npt
import quadprog  # type: ignore[import-not-found]  # a C extension without stubs

from rnea_ros.algorithms.dynamics import GRAVITY, jacobian, link_pose, mass_matrix, nonlinear_effects
from rnea_ros.compiled import entry_points
from rnea_ros.compiled.jit import HAVE_NUMBA
from rnea_ros.compiled.kernels.contact_terms import (
    PT_BODY,
    PT_CORNERS,
    PT_EXTENT,
    PT_MU,
    PT_NORMAL,
    PT_OFFSET,
    PT_ROW,
    PT_ROWS,
    PT_STRIDE,
    PT_TCOL,
    PT_TROW,
    PT_XAXIS,
)
from rnea_ros.errors import RneaError
from rnea_ros.model.robot_model import RobotModel

__all__ = [
    "CONTACT_KINDS",
    "Contact",
    "ContactError",
    "ContactProblem",
    "ContactQP",
    "ContactSolution",
    "ContactStatus",
    "ROOT_ROWS",
    "contact_inverse_dynamics",
    "contact_layout",
    "contact_problem",
    "contact_qp",
    "reference_contact_inverse_dynamics",
    "solve_contact_forces",
    "solve_problem",
    "solve_qp",
]

CONTACT_KINDS = ("point", "6d")
RELAX_WEIGHT = 1e6  # ρ, weight of the base-row residual when no admissible f exists
CORNER_REGULARISATION = 1e-6  # ε on the corner forces of 6-D contacts
ROOT_ROWS = {"floating": 6, "planar": 3}  # unactuated leading rows of v per root joint
EQUALITY_RTOL = 1e-9  # base rows outside the span of the contact Jacobians, relative to ‖b‖∞


class ContactError(RneaError):
    """A contact that cannot enter the problem; `link` names it, the message says why."""

    def __init__(self, link: str, reason: str) -> None:
        super().__init__(f"contact '{link}': {reason}")
        self.link = link
        self.reason = reason


class ContactStatus(Enum):
    """OK: the equation holds with every force admissible. INFEASIBLE: no admissible force meets
    the base rows; the least-violating one is returned (see `ContactSolution.base_residual`)."""

    OK = "ok"
    INFEASIBLE = "infeasible"


def _vector3(value: npt.ArrayLike, link: str, name: str) -> np.ndarray:
    try:
        v = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise ContactError(link, f"{name} must be 3 numbers") from None
    if v.shape != (3,) or not np.all(np.isfinite(v)):
        raise ContactError(link, f"{name} must be 3 finite numbers, got {value!r}")
    norm = math.sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2])
    if norm == 0.0:
        raise ContactError(link, f"{name} must not be zero")
    return v / norm


@dataclass(frozen=True)
class Contact:
    """One contact of a link with the environment.

    link: the link (or frame) name, used in messages and by the model-level wrapper.
    kind: "point" (force, 3 rows) or "6d" (wrench, 6 rows).
    mu: friction coefficient (> 0) of the Coulomb cone the pyramids are inscribed in.
    normal: contact normal pointing into the robot, in the Jacobian rows' axes (normalised here).
    tangent: first tangent axis t₁ (projected on the contact plane); None: the rows' x axis
        projected, or y when x is along the normal. For "6d" contacts with half_extents it is the
        rectangle's long axis (e.g. the sole's x axis).
    half_extents: "6d" only: (X, Y) > 0, half sizes (m) of the contact rectangle along t₁ and
        t₂ = n × t₁; None: moment unbounded.
    min_normal_force: lower bound (N, >= 0) of f·n.
    facets: "point" only: facets (>= 3) of the inscribed friction pyramid.
    moment_weight: "6d" only: weight (m⁻², > 0) of the moment in the objective.
    """

    link: str
    kind: str = "point"
    mu: float = 0.7
    normal: tuple[float, float, float] = (0.0, 0.0, 1.0)
    tangent: tuple[float, float, float] | None = None
    half_extents: tuple[float, float] | None = None
    min_normal_force: float = 1.0
    facets: int = 4
    moment_weight: float = 1.0
    axes: np.ndarray = field(init=False, repr=False, compare=False)
    cone: np.ndarray = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        link = self.link
        if not isinstance(link, str) or not link:
            raise ContactError(str(link), "link must be a non-empty name")
        if self.kind not in CONTACT_KINDS:
            raise ContactError(link, f"kind must be one of {CONTACT_KINDS}, got {self.kind!r}")
        for name in ("mu", "min_normal_force", "moment_weight"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
                raise ContactError(link, f"{name} must be a finite number, got {value!r}")
        if self.mu <= 0.0:
            raise ContactError(link, f"mu must be > 0, got {self.mu}")
        if self.min_normal_force < 0.0:
            raise ContactError(link, f"min_normal_force must be >= 0 N, got {self.min_normal_force}")
        if self.moment_weight <= 0.0:
            raise ContactError(link, f"moment_weight must be > 0, got {self.moment_weight}")
        if isinstance(self.facets, bool) or not isinstance(self.facets, int) or self.facets < 3:
            raise ContactError(link, f"facets must be an integer >= 3, got {self.facets!r}")
        if self.half_extents is not None:
            if self.kind != "6d":
                raise ContactError(link, "half_extents apply to '6d' contacts only")
            ext = np.asarray(self.half_extents, dtype=float)
            if ext.shape != (2,) or not np.all(np.isfinite(ext)) or np.any(ext <= 0.0):
                raise ContactError(link, f"half_extents must be two sizes > 0 m, got {self.half_extents!r}")
        n = _vector3(self.normal, link, "normal")
        if self.tangent is None:
            guess = np.array([1.0, 0.0, 0.0]) if abs(n[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
        else:
            guess = _vector3(self.tangent, link, "tangent")
        t1 = guess - (guess @ n) * n
        norm = float(np.linalg.norm(t1))
        if norm < 1e-6:
            raise ContactError(link, "tangent must not be along the normal")
        t1 = t1 / norm
        t2 = np.cross(n, t1)
        object.__setattr__(self, "axes", np.column_stack([t1, t2, n]))  # columns t₁, t₂, n
        # the cone, once: generators (6×16) for a rectangle, else the pyramid's rows (k×3)
        object.__setattr__(self, "cone", _corner_generators(self) if self.corners else _pyramid_rows(self))

    @property
    def rows(self) -> int:
        """Rows of its Jacobian and entries of its force: 3 (point) or 6 (6d)."""
        return 3 if self.kind == "point" else 6

    @property
    def corners(self) -> bool:
        """True when its wrench is parameterised by the corner forces of its rectangle."""
        return self.kind == "6d" and self.half_extents is not None


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


@dataclass(frozen=True)
class ContactSolution:
    """tau: efforts of the actuated rows (nv − n_base). forces: per contact, f (3) or [f; m] (6)
    in its Jacobian rows' axes, exerted by the environment on the robot. f: the same stacked.
    status: ContactStatus. base_residual: b_u − J_c,uᵀ f (n_base), zero to rounding when OK.
    message: what was infeasible, empty when OK."""

    tau: np.ndarray
    forces: tuple[np.ndarray, ...]
    f: np.ndarray
    status: ContactStatus
    base_residual: np.ndarray
    message: str = ""


def _matrix(x: npt.ArrayLike, name: str, shape: tuple[int, ...]) -> np.ndarray:
    try:
        a = np.asarray(x, dtype=float)
    except (TypeError, ValueError):
        raise RneaError(f"{name} must be an array of numbers") from None
    if a.shape != shape:
        raise RneaError(f"{name} must have shape {shape}, got {a.shape}")
    if not np.all(np.isfinite(a)):
        raise RneaError(f"{name} contains NaN or Inf")
    return a


def _pyramid_rows(contact: Contact) -> np.ndarray:
    """Rows P (k×3) with P f ≤ 0 for the inscribed pyramid, in the Jacobian rows' axes."""
    k = contact.facets
    theta = 2.0 * np.pi * np.arange(k) / k
    local = np.column_stack([np.cos(theta), np.sin(theta), np.full(k, -contact.mu * math.cos(math.pi / k))])
    return local @ contact.axes.T


def _corner_generators(contact: Contact) -> np.ndarray:
    """G (6×16): wrench (about the frame origin) of a unit-normal corner force on each edge of the
    4 corner pyramids; columns ordered corner (+X+Y, +X−Y, −X+Y, −X−Y) × edge (+t₁+t₂, +t₁−t₂,
    −t₁+t₂, −t₁−t₂)."""
    assert contact.half_extents is not None
    t1, t2, n = contact.axes.T
    ext_x, ext_y = (float(e) for e in contact.half_extents)
    mu = contact.mu / math.sqrt(2.0)
    signs = np.array([[1.0, 1.0], [1.0, -1.0], [-1.0, 1.0], [-1.0, -1.0]])
    corners = np.repeat((signs[:, :1] * ext_x) * t1 + (signs[:, 1:] * ext_y) * t2, 4, axis=0)  # (16, 3)
    edges = np.tile(n + mu * (signs[:, :1] * t1 + signs[:, 1:] * t2), (4, 1))  # (16, 3)
    return np.concatenate([edges, np.cross(corners, edges)], axis=1).T


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


def _independent_rows(a: np.ndarray, b: np.ndarray, scale: float) -> tuple[np.ndarray, np.ndarray, float]:
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
    mm = _matrix(m, "M", (nv, nv))
    hv = _matrix(h, "h", (nv,))
    av = _matrix(a, "a", (nv,))
    if len(jacobians) != len(contacts):
        raise RneaError(f"{len(contacts)} contacts but {len(jacobians)} jacobians")
    jacs = []
    for c, jac in zip(contacts, jacobians, strict=True):
        if not isinstance(c, Contact):
            raise RneaError(f"contacts must be Contact objects, got {type(c).__name__}")
        try:
            jacs.append(_matrix(jac, "jacobian", (c.rows, nv)))
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
    a_eq, b_eq, outside = _independent_rows(qp.A, qp.b, scale)
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


def reference_contact_inverse_dynamics(
    model: RobotModel,
    q: npt.ArrayLike,
    v: npt.ArrayLike,
    a: npt.ArrayLike,
    contacts: Sequence[Contact],
    *,
    gravity: npt.ArrayLike = GRAVITY,
    wrenches: Mapping[str, npt.ArrayLike] | None = None,
) -> ContactSolution:
    """contact_inverse_dynamics on the checked Python path (each Jacobian from `jacobian`, M and h
    from their own calls, the program built and solved by solve_contact_forces): the reference of
    the compiled path, and where it hands over (bad input, infeasible programs).

    q (nq), v and a (nv) in Pinocchio's layout; M = mass_matrix(model, q), h =
    nonlinear_effects(model, q, v, gravity=gravity), and each contact's rows from
    jacobian(model, q, link) (6×nv, world axes, about the link origin, linear first): the first 3
    for a point, all 6 for a 6d contact, so normals and tangents are in world axes. A 6d contact
    with half_extents and no tangent takes its link's x axis (link_pose) as the rectangle's t₁.
    wrenches: link → the wrench [f, m about the link origin] that link exerts on its environment
    (not a contact), world axes, added to h as J_linkᵀ F (as rnea's wrenches); None: none.
    RneaError for a fixed root (no unactuated rows: the contact forces are not determined)."""
    root = getattr(model, "root_joint", "fixed")
    n_base = ROOT_ROWS.get(root)
    if n_base is None:
        raise RneaError(
            f"contact inverse dynamics needs a floating or planar root joint, the model's is '{root}'"
        )
    jacs = []
    placed = []
    for c in contacts:
        if not isinstance(c, Contact):
            raise RneaError(f"contacts must be Contact objects, got {type(c).__name__}")
        if c.link not in model.link_frames:
            raise ContactError(c.link, "not a link of the model")
        jac = jacobian(model, q, c.link)
        jacs.append(jac[:3] if c.kind == "point" else jac)
        if c.corners and c.tangent is None:
            rot = link_pose(model, q, c.link)[0]
            c = replace(c, tangent=(float(rot[0, 0]), float(rot[1, 0]), float(rot[2, 0])))
        placed.append(c)
    m = mass_matrix(model, q)
    h = nonlinear_effects(model, q, v, gravity=gravity)
    for link, wrench in (wrenches or {}).items():
        if link not in model.link_frames:
            raise RneaError(f"wrench on '{link}': not a link of the model")
        w = _matrix(wrench, f"wrench on '{link}'", (6,))
        h = h + jacobian(model, q, link).T @ w
    return solve_contact_forces(m, h, a, placed, jacs, n_base=n_base)


# --- the compiled path -------------------------------------------------------------------------

WELL_CONDITIONED = 1e-6  # σ_min / σ_max of the base rows above which no SVD is taken
_FAST = HAVE_NUMBA
_GRAVITY_VECTOR = np.array(GRAVITY)
_F64 = np.dtype(np.float64)
_FLOATING_CONTACT = entry_points.FLOATING_CONTACT
_ROWS_WELL_CONDITIONED = entry_points.ROWS_WELL_CONDITIONED


@dataclass(frozen=True, eq=False)
class ContactProblem:
    """Everything of the contact program that depends on the model and the contact set only, built
    once per set (`contact_problem`, cached per model) and never modified.

    key: (the contacts, the links with wrenches). points: the kernel's contact-point record (PT_*),
    the contacts' rows then 6 rows per wrench link. t: f = T x (m×nx), a template whose rectangle
    blocks with a link-given tangent (`rotating`) are rewritten per call. weights,
    regularisation: of the objective. hessian: H when no block rotates. cmat, bvec: quadprog's
    constraints with the n_base equality columns left to fill. slices: each contact's rows of f.
    """

    model: RobotModel
    key: tuple
    n_base: int
    points: np.ndarray
    jac_rows: int
    m: int
    t: np.ndarray
    identity: bool
    rotating: bool
    weights: np.ndarray
    regularisation: np.ndarray
    hessian: np.ndarray
    neg_g: np.ndarray
    cmat: np.ndarray
    bvec: np.ndarray
    c_matrix: np.ndarray
    d: np.ndarray
    slices: tuple[slice, ...]
    wrench_rows: tuple[tuple[str, int], ...]


_PROBLEMS: weakref.WeakKeyDictionary[RobotModel, ContactProblem] = weakref.WeakKeyDictionary()


def contact_problem(
    model: RobotModel, contacts: Sequence[Contact], wrench_links: tuple[str, ...] = ()
) -> ContactProblem | None:
    """The ContactProblem of these contacts (and links with wrenches) on a floating or planar
    model: the model's cached one when its key is equal, else a new one (then cached); None when
    the set cannot enter the compiled path (a fixed root, an unknown or repeated link, not a
    Contact: the checked path then names it)."""
    key = (tuple(contacts), wrench_links)
    problem = _PROBLEMS.get(model)
    if problem is not None and problem.key == key:
        return problem
    problem = _build_problem(model, key)
    if problem is not None:
        _PROBLEMS[model] = problem
    return problem


def _build_problem(model: RobotModel, key: tuple) -> ContactProblem | None:
    contacts, wrench_links = key
    n_base = ROOT_ROWS.get(model.root_joint)
    if n_base is None:
        return None
    links = [getattr(ct, "link", None) for ct in contacts]
    for ct in contacts:
        if not isinstance(ct, Contact) or ct.link not in model.link_frames or links.count(ct.link) > 1:
            return None
    if any(link not in model.link_frames for link in wrench_links):
        return None
    t, w, reg, cm, d = contact_layout(contacts)
    m, nx = t.shape
    records = []
    row = col = 0
    slices = []
    rotating = False
    for ct in contacts:
        frame = model.link_frames[ct.link]
        corners = ct.corners and ct.tangent is None
        rotating |= corners
        rec = np.zeros(PT_STRIDE)
        rec[PT_BODY] = frame.body
        rec[PT_OFFSET : PT_OFFSET + 3] = frame.translation
        rec[PT_ROWS] = ct.rows
        rec[PT_ROW] = row
        rec[PT_CORNERS] = 1.0 if corners else 0.0
        rec[PT_XAXIS : PT_XAXIS + 3] = frame.rotation[:, 0]
        rec[PT_NORMAL : PT_NORMAL + 3] = ct.axes[:, 2]
        rec[PT_MU] = ct.mu / math.sqrt(2.0)
        if ct.half_extents is not None:
            rec[PT_EXTENT : PT_EXTENT + 2] = ct.half_extents
        rec[PT_TROW] = row
        rec[PT_TCOL] = col
        records.append(rec)
        slices.append(slice(row, row + ct.rows))
        row += ct.rows
        col += 16 if ct.corners else ct.rows
    wrench_rows = []
    for link in wrench_links:
        frame = model.link_frames[link]
        rec = np.zeros(PT_STRIDE)
        rec[PT_BODY] = frame.body
        rec[PT_OFFSET : PT_OFFSET + 3] = frame.translation
        rec[PT_ROWS] = 6
        rec[PT_ROW] = row
        records.append(rec)
        wrench_rows.append((link, row))
        row += 6
    reg_diag = np.diag(reg)
    h = t.T @ (w[:, None] * t) + reg_diag
    nc = cm.shape[0]
    cmat = np.zeros((nx, n_base + nc))
    cmat[:, n_base:] = (-cm).T
    bvec = np.concatenate([np.zeros(n_base), -d])
    for array in (t, w, reg_diag, cm, d, cmat, bvec):
        array.flags.writeable = False
    hessian = 0.5 * (h + h.T)  # writeable: quadprog takes no read-only buffer (and copies it)
    return ContactProblem(
        model=model, key=key, n_base=n_base,
        points=np.concatenate(records) if records else np.zeros(0), jac_rows=row, m=m, t=t,
        identity=not any(ct.corners for ct in contacts), rotating=rotating, weights=w,
        regularisation=reg_diag,
        hessian=hessian, neg_g=-np.zeros(nx), cmat=cmat, bvec=bvec, c_matrix=cm, d=d, slices=tuple(slices),
        wrench_rows=tuple(wrench_rows),
    )  # fmt: skip


def _is_vector(x: object) -> bool:
    return type(x) is np.ndarray and x.dtype is _F64 and x.ndim == 1


def solve_problem(
    problem: ContactProblem,
    q: np.ndarray,
    v: np.ndarray,
    a: np.ndarray,
    gravity: np.ndarray,
    wrenches: Mapping[str, npt.ArrayLike] | None = None,
) -> ContactSolution | None:
    """contact_inverse_dynamics of the problem's model and contacts on the compiled path: M, h and
    every contact Jacobian from one kinematics pass (floating_contact_kernel), the
    program's constant parts from the problem, the base rows as equalities without an SVD when
    well conditioned (WELL_CONDITIONED). q (nq), v, a (nv): float64 vectors; gravity: a C-contiguous
    float64 (3,), world axes; wrenches: the problem's wrench links → float64 (6,). None when the
    checked path must decide (bad input, rank-deficient base rows outside their span, no admissible
    force): it gives the same result or names the fault.

    The SVD of the base rows is skipped only without rectangles (T = 1, H = diag(1, w)): with
    them H's condition number is ~1/CORNER_REGULARISATION and the result depends on the rows'
    representation at ~1e-13, so they go through the SVD as the checked path does."""
    model = problem.model
    nv = model.nv
    if a.shape[0] != nv:
        return None
    mass = np.empty((nv, nv))
    h = np.empty(nv)
    jac = np.empty((problem.jac_rows, nv))
    t = problem.t.copy() if problem.rotating else problem.t
    if _FLOATING_CONTACT.call(model.floating_args[1], q, v, gravity, problem.points, mass, h, jac, t) != 0:
        return None
    if problem.wrench_rows:
        if wrenches is None:
            return None
        for link, row in problem.wrench_rows:
            w = wrenches[link]
            if type(w) is not np.ndarray or w.dtype is not _F64 or w.shape != (6,):
                return None
            h = h + jac[row : row + 6].T @ w
    b = mass @ a + h
    if not np.isfinite(b).all():
        return None
    n_base = problem.n_base
    b_base = b[:n_base]
    jc = jac[: problem.m]
    ju = jc[:, :n_base]
    a_base = ju.T if problem.identity else ju.T @ t
    if problem.rotating:
        w = problem.weights
        hh = t.T @ (w[:, None] * t) + problem.regularisation
        hessian = 0.5 * (hh + hh.T)
    else:
        hessian = problem.hessian
    if problem.identity and problem.m and _ROWS_WELL_CONDITIONED.call(a_base, WELL_CONDITIONED):
        cmat = problem.cmat.copy()
        cmat[:, :n_base] = a_base.T
        bvec = problem.bvec.copy()
        bvec[:n_base] = b_base
        try:
            x = quadprog.solve_qp(hessian, problem.neg_g, cmat, bvec, n_base)[0]
        except ValueError:  # no admissible force: the checked path relaxes the program
            return None
        if not np.all(np.isfinite(x)):
            return None
    else:
        scale = max(1.0, float(np.max(np.abs(b))))
        a_eq, b_eq, outside = _independent_rows(a_base, b_base, scale)
        if outside > EQUALITY_RTOL:
            return None
        qp = ContactQP(H=hessian, g=-problem.neg_g, A=a_base, b=b_base, C=problem.c_matrix, d=problem.d, T=t)
        x = solve_qp(qp, a_eq, b_eq)
        if x is None:
            return None
    f = x if problem.identity else t @ x
    generalised = jc.T @ f
    return ContactSolution(
        tau=b[n_base:] - generalised[n_base:],
        forces=tuple(f[s].copy() for s in problem.slices),
        f=f,
        status=ContactStatus.OK,
        base_residual=b_base - generalised[:n_base],
    )


def contact_inverse_dynamics(
    model: RobotModel,
    q: npt.ArrayLike,
    v: npt.ArrayLike,
    a: npt.ArrayLike,
    contacts: Sequence[Contact],
    *,
    gravity: npt.ArrayLike = GRAVITY,
    wrenches: Mapping[str, npt.ArrayLike] | None = None,
) -> ContactSolution:
    """solve_contact_forces on a RobotModel with a floating or planar root joint.

    q (nq), v and a (nv) in Pinocchio's layout; M = mass_matrix(model, q), h =
    nonlinear_effects(model, q, v, gravity=gravity), and each contact's rows from
    jacobian(model, q, link) (6×nv, world axes, about the link origin, linear first): the first 3
    for a point, all 6 for a 6d contact, so normals and tangents are in world axes. A 6d contact
    with half_extents and no tangent takes its link's x axis (link_pose) as the rectangle's t₁.
    wrenches: link → the wrench [f, m about the link origin] that link exerts on its environment
    (not a contact), world axes, added to h as J_linkᵀ F (as rnea's wrenches); None: none.
    RneaError for a fixed root (no unactuated rows: the contact forces are not determined).

    Speed: float64 vectors q, v, a (gravity the default or a float64 (3,), wrenches float64 (6,))
    take the compiled path (`solve_problem` on the model's cached `contact_problem`), equal to
    `reference_contact_inverse_dynamics` to rounding; anything else, and whatever that path
    declines, takes the checked path."""
    if _FAST and _is_vector(q) and _is_vector(v) and _is_vector(a):
        if gravity is GRAVITY:
            g = _GRAVITY_VECTOR
        elif _is_vector(gravity) and gravity.shape == (3,) and gravity.flags.c_contiguous:  # type: ignore[union-attr]
            g = gravity  # type: ignore[assignment]
        else:
            g = None
        if g is not None:
            problem = contact_problem(model, contacts, tuple(wrenches) if wrenches else ())
            if problem is not None:
                solution = solve_problem(problem, q, v, a, g, wrenches)  # type: ignore[arg-type]
                if solution is not None:
                    return solution
    return reference_contact_inverse_dynamics(model, q, v, a, contacts, gravity=gravity, wrenches=wrenches)
