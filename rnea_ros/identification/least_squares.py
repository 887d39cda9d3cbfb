"""The linear algebra of the fit (`fit`): per-joint QR reduction of the samples, the prior's scale
of each parameter, and the regularised least squares with lower bounds.

Long recordings fit in memory: the samples are reduced on the fly, chunk by chunk, to the
triangular factor R_j of [Y_j S | r_j] per joint (`Reduced`), from which any weighting of the
joints gives the whole problem (`Reduced.stacked`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import linalg, optimize

from rnea_ros.identification.regressor import PER_BODY
from rnea_ros.model.robot_model import RobotModel

LENGTH_SCALE = 0.1  # m, characteristic length of the prior's parameter scaling


def prior_scales(model: RobotModel, pi0: np.ndarray) -> np.ndarray:
    """Per-parameter scale s of the prior (`fit`'s docstring): m: M, m c: M L, inertia: M L²,
    armature: (mean M) L², viscous and Coulomb: 1, with M the body's mass in π0 (at least 5 % of
    the mean, the mean for a massless body) and L = LENGTH_SCALE."""
    n = model.nv
    masses = pi0[: PER_BODY * n : PER_BODY]
    typical = float(np.mean(masses[masses > 0])) if np.any(masses > 0) else 1.0
    body_mass = np.where(masses > 0, np.maximum(masses, 0.05 * typical), typical)
    length = LENGTH_SCALE
    per_body = np.stack(
        [body_mass, *([body_mass * length] * 3), *([body_mass * length**2] * 6)], axis=1
    ).reshape(-1)
    armature = np.full(n, typical * length**2)
    return np.concatenate([per_body, np.ones(n), np.ones(n), armature])


class Reduced:
    """Per-joint QR reduction R_j of [Y_j s | r_j] over the samples (rows: free columns + 1)."""

    def __init__(self, n: int, width: int) -> None:
        self.r = [np.zeros((0, width + 1)) for _ in range(n)]
        self.rows = np.zeros(n, dtype=np.int64)

    def add(self, y: np.ndarray, rhs: np.ndarray, rows: np.ndarray) -> None:
        """y (N, n, width), rhs (N, n); rows (n,) = the rows of each joint that count."""
        self.rows += rows
        for j in range(len(self.r)):
            stacked = np.vstack([self.r[j], np.column_stack([y[:, j, :], rhs[:, j]])])
            self.r[j] = linalg.qr(stacked, mode="r", overwrite_a=True, check_finite=False)[0][
                : stacked.shape[1]
            ]

    def residual(self, x: np.ndarray) -> np.ndarray:
        """Per-joint residual RMS of the fit x (scaled free parameters)."""
        v = np.append(x, -1.0)
        return np.array([np.linalg.norm(r @ v) for r in self.r]) / np.sqrt(np.maximum(self.rows, 1))

    def stacked(self, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(A, b) with ||A x − b|| = weighted residual norm."""
        full = np.vstack([w * r for w, r in zip(weights, self.r, strict=True)])
        full = linalg.qr(full, mode="r", check_finite=False)[0][: full.shape[1]]
        return full[:, :-1], full[:, -1]


@dataclass(frozen=True)
class Problem:
    """min_x ||a x − b||² + λ² ||x||² subject to x ≥ lower (lower may be −inf), in the scaled free
    parameters x: π[cols] = π_model[cols] + x · scale. a, b: the reduced (whitened) samples."""

    a: np.ndarray
    b: np.ndarray
    lam: float
    lower: np.ndarray
    cols: np.ndarray  # indices into π of the free parameters
    scale: np.ndarray  # the prior's scale of each free parameter

    def residual(self, x: np.ndarray) -> np.ndarray:
        """The stacked residual [a x − b; λ x] whose squared norm is minimised."""
        return np.concatenate([self.a @ x - self.b, self.lam * x])

    def solve(self) -> np.ndarray:
        """argmin over x ≥ lower: unconstrained least squares, bounded (BVLS) when it goes below."""
        width = self.a.shape[1]
        aa = np.vstack([self.a, self.lam * np.eye(width)])
        bb = np.concatenate([self.b, np.zeros(width)])
        x = linalg.lstsq(aa, bb, cond=None, check_finite=False)[0]
        if np.all(x >= self.lower):
            return x
        res = optimize.lsq_linear(
            aa, bb, bounds=(self.lower, np.inf), method="bvls", tol=1e-14, lsmr_tol=None
        )
        return res.x
