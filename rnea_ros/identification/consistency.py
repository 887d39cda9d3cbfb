"""Physical consistency of a body's inertial parameters: mass ≥ 0, inertia about the centre of
mass positive semi-definite, triangle inequality; equivalently, a positive semi-definite
pseudo-inertia (Wensing, Kim and Slotine 2017). The helpers between the standard parameters
(π's per-body block, `regressor`) and mass, centre of mass and inertia live here too.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from rnea_ros.identification.regressor import body_columns, body_links, standard_parameters
from rnea_ros.model.robot_model import RobotModel
from rnea_ros.model.urdf import INERTIA_TOL


@dataclass(frozen=True)
class BodyConsistency:
    """Physical consistency of one body: mass ≥ 0, inertia about the centre of mass positive
    semi-definite (principal moments ≥ 0 within tolerance) and the triangle inequality I1 + I2 ≥ I3."""

    link: str  # the body's frame link (its joint's child link)
    mass: float  # kg
    com: np.ndarray  # m, body frame (zeros when the mass is 0)
    principal_moments: np.ndarray  # kg m², ascending, about the centre of mass
    mass_ok: bool
    inertia_ok: bool
    triangle_ok: bool

    @property
    def ok(self) -> bool:
        return self.mass_ok and self.inertia_ok and self.triangle_ok

    def to_dict(self) -> dict:
        return {
            "link": self.link,
            "mass": self.mass,
            "com": [float(x) for x in self.com],
            "principal_moments": [float(x) for x in self.principal_moments],
            "mass_ok": self.mass_ok,
            "inertia_ok": self.inertia_ok,
            "triangle_ok": self.triangle_ok,
            "ok": self.ok,
        }


def inertia_matrix(flat6: np.ndarray) -> np.ndarray:
    """π order (xx, xy, yy, xz, yz, zz) → 3×3."""
    xx, xy, yy, xz, yz, zz = flat6
    return np.array([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]])


def about_com(m: float, h: np.ndarray, i_o: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(com, inertia about the com) from mass, first moment and inertia about the origin."""
    if m <= 0:
        return np.zeros(3), i_o
    c = h / m
    return c, i_o - m * (float(c @ c) * np.eye(3) - np.outer(c, c))


def consistency(model: RobotModel) -> list[BodyConsistency]:
    """Physical consistency of every body of the model (with payload), body order."""
    pi = standard_parameters(model)
    out = []
    for b, link in enumerate(body_links(model)):
        block = pi[body_columns(model, b)]
        m = block[0]
        c, i_c = about_com(m, block[1:4], inertia_matrix(block[4:]))
        moments = np.linalg.eigvalsh(0.5 * (i_c + i_c.T))
        tol = INERTIA_TOL * max(1.0, float(np.abs(moments).max()))
        mass_ok = m >= 0 and (m > 0 or float(np.abs(block[1:4]).max()) <= tol)
        out.append(
            BodyConsistency(
                link,
                float(m),
                c,
                moments,
                bool(mass_ok),
                bool(moments[0] >= -tol),
                bool(moments[0] + moments[1] >= moments[2] - tol),
            )
        )
    return out


def pseudo_inertia(pi10: npt.ArrayLike) -> np.ndarray:
    """4×4 pseudo-inertia [[½ tr(I) 1 − I, h], [hᵀ, m]] of a body's standard parameters; it is
    positive semi-definite exactly when the body is physically consistent (mass ≥ 0, inertia
    about the com ≥ 0, triangle inequality), Wensing, Kim and Slotine 2017."""
    pi10 = np.asarray(pi10, dtype=float)
    i_o = inertia_matrix(pi10[4:])
    out = np.empty((4, 4))
    out[:3, :3] = 0.5 * np.trace(i_o) * np.eye(3) - i_o
    out[:3, 3] = out[3, :3] = pi10[1:4]
    out[3, 3] = pi10[0]
    return out


def from_pseudo(j: np.ndarray) -> np.ndarray:
    """Standard parameters of a pseudo-inertia (inverse of `pseudo_inertia`: I = tr(Σ) 1 − Σ)."""
    sigma = j[:3, :3]
    i_o = np.trace(sigma) * np.eye(3) - sigma
    return np.array([j[3, 3], *j[:3, 3], i_o[0, 0], i_o[0, 1], i_o[1, 1], i_o[0, 2], i_o[1, 2], i_o[2, 2]])
