"""A contact of a link with the environment (`Contact`): its kind, friction cone and normal force
bound, and what solving for the contact forces returns (`ContactSolution`, `ContactStatus`).

Each contact has the rows of its Jacobian (3×nv for "point", 6×nv for "6d", linear rows first),
with `normal` and `tangent` in the axes of those rows (root or world axes for Pinocchio's
LOCAL_WORLD_ALIGNED Jacobian and for `rnea_ros.algorithms.dynamics.jacobian`):
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
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from enum import Enum

import numpy as np
import numpy.typing as npt

from rnea_ros.errors import ContactError

__all__ = ["CONTACT_KINDS", "Contact", "ContactSolution", "ContactStatus"]

CONTACT_KINDS = ("point", "6d")
ROOT_ROWS = {"floating": 6, "planar": 3}  # unactuated leading rows of v per root joint


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
