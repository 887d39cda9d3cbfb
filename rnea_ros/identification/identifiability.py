"""What a recording can identify: the base parameters (identifiable combinations of the standard
parameters, Gautier and Khalil's regrouping found numerically) and how well the data excites them.

Combinations of parameters no effort depends on (the null space of Y, e.g. the armature of a first
vertical joint against its body's I_zz) are not base parameters; a fit moves only the base ones
(`fit`). A base parameter the data leaves unexcited (the friction of a joint that never moves) is
named by `conditioning`, which also gives the condition number of the rest.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from scipy import linalg

from rnea_ros.algorithms.dynamics import GRAVITY
from rnea_ros.identification.regressor import parameter_count, parameter_names, regressor
from rnea_ros.model.robot_model import RobotModel


@dataclass(frozen=True)
class BaseParameters:
    """Identifiable combinations of the parameters in `columns`: β = π[independent] + K π[dependent].

    Found by QR with column pivoting of Y (columns normalised) stacked over random states; the
    rank is the number of base parameters.
    """

    columns: np.ndarray  # indices into π of the parameters considered
    independent: np.ndarray  # indices into π, one per base parameter
    dependent: np.ndarray  # indices into π of the others
    K: np.ndarray  # (rank, len(dependent))
    names: list[str]  # per base parameter: its leading standard parameter's name

    @property
    def rank(self) -> int:
        return int(self.independent.size)

    def of(self, pi: npt.ArrayLike) -> np.ndarray:
        """β of a parameter vector π."""
        pi = np.asarray(pi, dtype=float)
        return pi[self.independent] + self.K @ pi[self.dependent]


def _random_states(model: RobotModel, rng: np.random.Generator, count: int):
    lo = np.where(np.isfinite(model.position_lower), model.position_lower, -np.pi)
    hi = np.where(np.isfinite(model.position_upper), model.position_upper, np.pi)
    n = model.nv
    return rng.uniform(lo, hi, (count, n)), rng.normal(0, 1.0, (count, n)), rng.normal(0, 3.0, (count, n))


def base_parameters(
    model: RobotModel,
    columns: npt.ArrayLike | None = None,
    samples: int | None = None,
    seed: int = 0,
    rtol: float = 1e-9,
    gravity: npt.ArrayLike = GRAVITY,
    rows: npt.ArrayLike | None = None,
) -> BaseParameters:
    """Base parameters of `columns` (default: all of π) from `samples` random states (default
    enough for 3× as many equations as columns), seen through the efforts of the joints `rows`
    (indices; default all: the parameters only an unfitted joint's effort shows are not base
    parameters of a fit that leaves that effort out)."""
    p = parameter_count(model)
    cols = np.arange(p) if columns is None else np.asarray(columns, dtype=np.int64)
    n = model.nv
    seen = np.arange(n) if rows is None else np.asarray(rows, dtype=np.int64)
    count = samples or max(20, int(np.ceil(3 * cols.size / max(seen.size, 1))))
    q, qd, qdd = _random_states(model, np.random.default_rng(seed), count)
    w = regressor(model, q, qd, qdd, gravity=gravity)[:, seen, :].reshape(-1, p)[:, cols]
    norms = np.linalg.norm(w, axis=0)
    # columns that are zero up to rounding (e.g. m c along an axis that a rotation nulls) carry nothing
    nonzero = norms > rtol * float(norms.max(initial=0.0))
    scale = np.where(nonzero, norms, 1.0)
    scaled = np.where(nonzero, w / scale, 0.0)
    _, r, perm = linalg.qr(scaled, mode="economic", pivoting=True)
    diag = np.abs(np.diag(r))
    rank = int(np.sum(diag > rtol * diag[0])) if diag.size and diag[0] > 0 else 0
    # scaled[:, perm] = Q R ⇒ dependent columns = independent ones × R11⁻¹ R12 (in scaled units)
    k_scaled = linalg.solve_triangular(r[:rank, :rank], r[:rank, rank:]) if rank else np.zeros((0, 0))
    ind, dep = perm[:rank], perm[rank:]
    k = k_scaled * scale[dep][None, :] / scale[ind][:, None]
    k[np.abs(k) < 1e-10 * max(1.0, float(np.abs(k).max(initial=0.0)))] = 0.0
    names = parameter_names(model)
    return BaseParameters(cols, cols[ind], cols[dep], k, [names[i] for i in cols[ind]])


def conditioning(a: np.ndarray, names: list[str], rtol: float = 1e-10) -> tuple[float, list[str]]:
    """Condition number (SI units) of the base regressor's R factor `a` over the base parameters
    the data excites, and the names of those it does not (pivoted QR of the column-normalised
    `a`: a parameter whose column is zero, or a combination of the others', up to `rtol`; e.g. the
    friction of a joint that never moves). Without that split one unexcited parameter makes the
    condition number infinite and hides how well the rest is conditioned."""
    if a.size == 0:
        return 1.0, []
    norms = np.linalg.norm(a, axis=0)
    top = float(norms.max(initial=0.0))
    if top == 0:
        return float("inf"), list(names)
    scaled = np.where(norms > 0, a / np.where(norms > 0, norms, 1.0), 0.0)
    _, r, perm = linalg.qr(scaled, mode="economic", pivoting=True)
    diag = np.abs(np.diag(r))
    rank = int(np.sum(diag > rtol * diag[0]))
    sv = linalg.svdvals(a[:, np.sort(perm[:rank])])
    cond = float(sv[0] / sv[-1]) if sv[-1] > 0 else float("inf")
    return cond, [names[i] for i in sorted(perm[rank:])]
