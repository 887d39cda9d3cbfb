"""Identify inertial, friction, armature and payload parameters from recorded joint data.

Model: τ = Y(q, q̇, q̈) π (see `regressor` for π's layout and units; Coulomb friction as
tanh(q̇ / v_ε), v_ε = 0.01 rad/s by default, like the node). Parameters not being identified are
held at the model's values; the free ones are fitted by

    min_δ  Σ_j w_j ||Y_j δ − (τ_j − Y_j π_model)||²  +  λ² ||δ / s||²,      π = π_model + δ,

weighted least squares (w_j = 1 / σ_j², σ_j the per-joint residual of an unweighted first pass)
with a ridge toward the model's (URDF) values: a first, plain pass gives each joint's residual
RMS σ_j (w_j = 1 / σ_j², or one common σ with weighted=False), so the whitened residuals have unit
variance and λ = prior_weight is a Gaussian prior on δ with standard deviation s / prior_weight
(maximum a posteriori). s scales each parameter by its body's mass M (URDF) and L = 0.1 m:
m: M, m c: M L, inertia: M L², armature: (mean M) L², viscous and Coulomb: 1 N m s/rad and 1 N m.
Combinations of parameters the data cannot see (the null space of Y, e.g. the armature of a first
vertical joint against its body's I_zz) keep the model's values and only identifiable
combinations move; well-excited ones are fitted by the data alone (noiseless data: exactly).
Friction and armature are kept ≥ 0 (bounded least squares when the unconstrained fit goes below).

Samples are reduced on the fly (chunked QR of [Y | τ] per joint), so long recordings fit in memory.

Derivatives: when q̇ or q̈ are not recorded they come from positions by zero-phase filtering
(`scipy.signal.filtfilt`, Butterworth low-pass of order 4 at `cutoff` Hz, run forward and
backward, so no phase lag; odd extension over 6 cut-off periods at both ends) and second-order
central finite differences (`numpy.gradient`, which takes the actual sample times); the efforts
get the same filter so both sides of τ = Y π see the same smoothing, and so does the Coulomb
column tanh(q̇ / v_ε) (it jumps at reversals; the other columns are smooth in the filtered q).
One cut-off period is trimmed at both ends (filter edge transients). Savitzky-Golay would do as
well; Butterworth makes the cut-off an explicit frequency. A recording with lost messages is cut
at every gap longer than FILL cut-off periods, and each stretch is filtered and differentiated on
its own (shorter gaps are bridged by interpolation for the filter): a filter across a gap puts a
false q̈ at its edges, which both models then miss alike (seen: 5 lost bursts took the held-out
error of a fit from 1-3 % of the URDF model's to 9-114 %).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt
from scipy import linalg, optimize, signal

from rnea_ros.algorithms.dynamics import GRAVITY
from rnea_ros.errors import RneaError
from rnea_ros.friction.model import SMOOTHING_VELOCITY
from rnea_ros.identification.regressor import (
    PER_BODY,
    body_columns,
    body_links,
    joint_columns,
    parameter_count,
    parameter_names,
    regressor,
    standard_parameters,
    with_parameters,
)
from rnea_ros.model.robot_model import Payload, RobotModel
from rnea_ros.model.urdf import INERTIA_TOL

WHAT = ("inertial", "friction", "payload")
LENGTH_SCALE = 0.1  # m, characteristic length of the prior's parameter scaling
_CHUNK_FLOATS = 2_000_000  # regressor entries per chunk
GAP = 1.5  # median sample intervals: a longer one is a gap (a lost message or more)
FILL = 0.1  # cut-off periods: a shorter gap is filled by interpolation before filtering, a longer one cuts
_NUMERICAL_RIDGE = 1e-10  # relative to the largest singular value, first pass only


@dataclass(frozen=True)
class Samples:
    """Time-aligned samples, arrays (N, n) in `model.joint_names` order: t s, q rad or m, q̇, q̈,
    τ N m or N; `cutoff` (Hz) is the zero-phase low-pass the efforts went through (None: none)."""

    t: np.ndarray
    q: np.ndarray
    qd: np.ndarray
    qdd: np.ndarray
    tau: np.ndarray
    cutoff: float | None = None

    def __len__(self) -> int:
        return len(self.t)

    def part(self, index: slice | np.ndarray) -> Samples:
        """The samples at `index`."""
        return Samples(
            self.t[index], self.q[index], self.qd[index], self.qdd[index], self.tau[index], self.cutoff
        )


def sample_rate(t: npt.ArrayLike) -> float:
    """1 / median sample interval (Hz); ValueError unless t is strictly increasing with ≥ 2 samples."""
    t = np.asarray(t, dtype=float)
    if t.ndim != 1 or t.size < 2:
        raise RneaError("t must hold at least 2 sample times")
    dt = np.diff(t)
    if not np.all(np.isfinite(t)) or np.any(dt <= 0):
        raise RneaError("t must be finite and strictly increasing")
    return 1.0 / float(np.median(dt))


def _check_cutoff(cutoff: float, fs: float) -> None:
    if not (0 < cutoff < fs / 2):
        raise RneaError(f"cutoff must be in (0, {fs / 2:g}) Hz (half the sample rate), got {cutoff}")


def _filtfilt(x: np.ndarray, cutoff: float, fs: float, order: int) -> np.ndarray:
    b, a = signal.butter(order, cutoff / (fs / 2))
    # odd extension over 6 cut-off periods: the start-up transient dies out in the padding
    return signal.filtfilt(b, a, x, axis=0, padlen=min(len(x) - 1, int(np.ceil(6 * fs / cutoff))))


def stretches(t: npt.ArrayLike, cutoff: float | None = None) -> list[slice]:
    """The runs of samples that `prepare` low-passes at `cutoff` Hz on their own: a gap (an
    interval longer than GAP median intervals: a lost message or more) longer than FILL cut-off
    periods ends one; shorter gaps are bridged for the filter. Without a filter, one run: central
    differences on the actual times need no cut (across a long gap they become one-sided)."""
    t = np.asarray(t, dtype=float)
    dt = np.diff(t)
    if cutoff is None or not dt.size:
        return [slice(0, t.size)]
    longest = max(GAP * float(np.median(dt)), FILL / cutoff)
    bounds = [0, *(np.flatnonzero(dt > longest) + 1).tolist(), t.size]
    return [slice(a, b) for a, b in zip(bounds[:-1], bounds[1:], strict=True)]


def prepare(
    t: npt.ArrayLike,
    q: npt.ArrayLike,
    tau: npt.ArrayLike,
    qd: npt.ArrayLike | None = None,
    qdd: npt.ArrayLike | None = None,
    cutoff: float | None = None,
    order: int = 4,
) -> Samples:
    """Samples for identification from recorded t (s), q, τ and optionally q̇, q̈ (module docstring).

    With `cutoff` (Hz) q, τ and a recorded q̇ are low-passed (zero phase) before differentiating;
    without, nothing is filtered. Missing q̇ = d q / dt, missing q̈ = d q̇ / dt (central
    differences on the actual times). With a filter, each stretch between long gaps
    (`stretches`: lost messages) is filtered and differentiated on its own and loses a cut-off
    period at both ends (a filter across a gap puts a false q̈ at its edges); short gaps are
    bridged for the filter. Stretches too short for that are left out.
    """
    t = np.asarray(t, dtype=float)
    fs = sample_rate(t)
    shape = np.shape(q)
    if len(shape) != 2 or shape[0] != t.size:
        raise RneaError(f"q must have shape ({t.size}, n), got {shape}")

    def checked(name: str, value: npt.ArrayLike) -> np.ndarray:
        a = np.asarray(value, dtype=float)
        if a.shape != shape:
            raise RneaError(f"{name} must have shape {shape}, got {a.shape}")
        if not np.all(np.isfinite(a)):
            raise RneaError(f"{name} contains NaN or Inf")
        return a

    if cutoff is not None:
        _check_cutoff(cutoff, fs)
    given = {"q": checked("q", q), "tau": checked("tau", tau)}
    for name, value in (("qd", qd), ("qdd", qdd)):
        if value is not None:
            given[name] = checked(name, value)
    trim = 0 if cutoff is None else max(1, int(np.ceil(fs / cutoff)))
    parts = stretches(t, cutoff)
    pieces = (
        _prepare_stretch(t[s], {k: v[s] for k, v in given.items()}, fs, cutoff, order, trim) for s in parts
    )
    kept = [p for p in pieces if p is not None]
    if not kept:
        raise RneaError(
            f"too few samples ({t.size}, {len(parts)} stretch(es) between gaps) for cutoff {cutoff} Hz"
            f" at {fs:g} Hz"
        )
    t_k, q_k, qd_k, qdd_k, tau_k = (np.concatenate(column) for column in zip(*kept, strict=True))
    return Samples(t_k, q_k, qd_k, qdd_k, tau_k, cutoff)


def _prepare_stretch(
    t: np.ndarray, given: dict[str, np.ndarray], fs: float, cutoff: float | None, order: int, trim: int
) -> tuple[np.ndarray, ...] | None:
    """(t, q, q̇, q̈, τ) of one stretch, `trim` samples off both ends; None when it is too short to
    filter (at the recording's rate `fs`), to differentiate or to keep a sample. With `cutoff` its
    short gaps are filled by linear interpolation for the filter, and the filled samples are
    dropped again."""
    real = np.ones(t.size, dtype=bool)
    if cutoff is not None:
        t, given, real = _filled(t, given, fs)
    if t.size <= max(2 * trim, 1) or (cutoff is not None and t.size <= 3 * (order + 1)):
        return None
    if cutoff is not None:
        given = {k: _filtfilt(v, cutoff, fs, order) for k, v in given.items()}
    q_a, tau_a = given["q"], given["tau"]
    qd_a = given["qd"] if "qd" in given else np.gradient(q_a, t, axis=0)
    qdd_a = given["qdd"] if "qdd" in given else np.gradient(qd_a, t, axis=0)
    keep = np.zeros(t.size, dtype=bool)
    keep[trim : t.size - trim] = True
    keep &= real
    if not keep.any():
        return None
    return t[keep], q_a[keep], qd_a[keep], qdd_a[keep], tau_a[keep]


def _filled(
    t: np.ndarray, given: dict[str, np.ndarray], fs: float
) -> tuple[np.ndarray, dict[str, np.ndarray], np.ndarray]:
    """The stretch with every gap filled at the sample rate `fs` by linear interpolation, and the
    mask of its real samples."""
    missing = np.maximum(np.rint(np.diff(t) * fs).astype(int) - 1, 0)
    if not missing.any():
        return t, given, np.ones(t.size, dtype=bool)
    at = np.flatnonzero(missing)
    extra = np.concatenate(
        [
            t[i] + (t[i + 1] - t[i]) * np.arange(1, m + 1) / (m + 1)
            for i, m in zip(at, missing[at], strict=True)
        ]
    )
    t_all = np.concatenate([t, extra])
    order = np.argsort(t_all, kind="stable")
    real = order < t.size
    t_out = t_all[order]
    filled = {k: np.column_stack([np.interp(t_out, t, column) for column in v.T]) for k, v in given.items()}
    return t_out, filled, real


def lowpass(t: npt.ArrayLike, x: npt.ArrayLike, cutoff: float, order: int = 4) -> np.ndarray:
    """x (N, ...) low-passed along time at `cutoff` Hz as `prepare` filters: zero-phase
    Butterworth, each stretch on its own, short gaps bridged; a stretch too short to filter is left
    as it is."""
    t, x = np.asarray(t, dtype=float), np.asarray(x, dtype=float)
    fs = sample_rate(t)
    _check_cutoff(cutoff, fs)
    out = x.reshape(len(x), -1).copy()
    for part in stretches(t, cutoff):
        t_f, filled, real = _filled(t[part], {"x": out[part]}, fs)
        if t_f.size > 3 * (order + 1):
            out[part] = _filtfilt(filled["x"], cutoff, fs, order)[real]
    return out.reshape(x.shape)


# ---------------------------------------------------------------------------------------------
# Base parameters


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


# ---------------------------------------------------------------------------------------------
# Physical consistency


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


def _inertia_matrix(flat6: np.ndarray) -> np.ndarray:
    """π order (xx, xy, yy, xz, yz, zz) → 3×3."""
    xx, xy, yy, xz, yz, zz = flat6
    return np.array([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]])


def _about_com(m: float, h: np.ndarray, i_o: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
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
        c, i_c = _about_com(m, block[1:4], _inertia_matrix(block[4:]))
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


# ---------------------------------------------------------------------------------------------
# Least squares


def _scales(model: RobotModel, pi0: np.ndarray) -> np.ndarray:
    """Per-parameter scale of the prior (module docstring)."""
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


class _Reduced:
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


def _solve(a: np.ndarray, b: np.ndarray, lam: float, lower: np.ndarray) -> np.ndarray:
    """argmin ||a x − b||² + λ²||x||² subject to x ≥ lower (lower may be −inf)."""
    width = a.shape[1]
    aa = np.vstack([a, lam * np.eye(width)])
    bb = np.concatenate([b, np.zeros(width)])
    x = linalg.lstsq(aa, bb, cond=None, check_finite=False)[0]
    if np.all(x >= lower):
        return x
    res = optimize.lsq_linear(aa, bb, bounds=(lower, np.inf), method="bvls", tol=1e-14, lsmr_tol=None)
    return res.x


def _conditioning(a: np.ndarray, names: list[str], rtol: float = 1e-10) -> tuple[float, list[str]]:
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


# ---------------------------------------------------------------------------------------------
# Identification


@dataclass(frozen=True)
class Identification:
    """Result of `identify`. Per-joint arrays follow `model.joint_names`; efforts N m or N."""

    model: RobotModel  # the identified model (inertials, damping = viscous, coulomb, armature)
    parameters: np.ndarray  # π of `model`, see `regressor`
    model_parameters: np.ndarray  # π of the model before identification (the prior)
    identified: tuple[str, ...]  # what was identified: "inertial", "friction", "payload"
    viscous: np.ndarray  # N m s/rad or N s/m
    coulomb: np.ndarray  # N m or N
    armature: np.ndarray  # kg m² or kg
    smoothing_velocity: float  # v_ε of the tanh Coulomb model, rad/s or m/s
    payload: Payload | None  # identified payload (link frame), or None
    rms_model: np.ndarray  # per-joint validation RMS of the model before identification
    rms_identified: np.ndarray  # per-joint validation RMS of the identified model
    rms_model_moving: np.ndarray  # the same over the validation rows with |q̇_j| ≥ min_speed
    rms_identified_moving: np.ndarray
    condition_number: float  # of the base regressor (SI units) on the training samples
    rank: int  # number of base parameters among the free ones
    free: int  # number of free parameters
    consistency: list[BodyConsistency]
    train_samples: int
    validation_samples: int
    joint_names: tuple[str, ...] = field(default=())
    notes: list[str] = field(default_factory=list)
    # base parameters the training data leaves (numerically) unexcited: a rank deficiency beyond
    # the base-parameter reduction; they keep the model's values and are not in condition_number
    unexcited: list[str] = field(default_factory=list)
    still_joints: tuple[str, ...] = ()  # joints never faster than min_speed in the training part
    fit_joints: tuple[str, ...] = ()  # the joints whose efforts were fitted (and are scored)
    # per joint, the validation rows with |q̇_j| ≥ min_speed (those rms_*_moving are over)
    validation_moving_samples: tuple[int, ...] = ()

    def to_dict(self) -> dict:
        """Plain values for JSON."""
        payload = None
        if self.payload is not None:
            payload = {
                "link": self.payload.link,
                "mass": self.payload.mass,
                "com": [float(x) for x in self.payload.com],
                "inertia": [[float(x) for x in row] for row in self.payload.inertia],
            }
        return {
            "identified": list(self.identified),
            "joints": list(self.joint_names),
            "viscous": [float(x) for x in self.viscous],
            "coulomb": [float(x) for x in self.coulomb],
            "armature": [float(x) for x in self.armature],
            "smoothing_velocity": self.smoothing_velocity,
            "payload": payload,
            "rms_model": [float(x) for x in self.rms_model],
            "rms_identified": [float(x) for x in self.rms_identified],
            "rms_model_moving": [float(x) for x in self.rms_model_moving],
            "rms_identified_moving": [float(x) for x in self.rms_identified_moving],
            "condition_number": self.condition_number,
            "rank": self.rank,
            "free_parameters": self.free,
            "unexcited_base_parameters": list(self.unexcited),
            "still_joints": list(self.still_joints),
            "fit_joints": list(self.fit_joints),
            "consistency": [c.to_dict() for c in self.consistency],
            "train_samples": self.train_samples,
            "validation_samples": self.validation_samples,
            "validation_moving_samples": list(self.validation_moving_samples),
            "notes": list(self.notes),
        }


def _coulomb_sign(samples: Samples, smoothing_velocity: float) -> np.ndarray:
    """tanh(q̇ / v_ε) (N, n), low-passed like the efforts when they were: the Coulomb term jumps at
    velocity reversals, and filtering the efforts smooths the jump, so the column must be too."""
    sign = np.tanh(samples.qd / smoothing_velocity)
    return sign if samples.cutoff is None else lowpass(samples.t, sign, samples.cutoff)


def _regressor(model: RobotModel, part: Samples, sign: np.ndarray, reg: dict) -> np.ndarray:
    y = regressor(model, part.q, part.qd, part.qdd, **reg)
    cols = joint_columns(model, "coulomb")
    y[:, np.arange(model.nv), np.arange(cols.start, cols.stop)] = sign
    return y


def predict(
    model: RobotModel,
    samples: Samples,
    pi: npt.ArrayLike,
    *,
    gravity: npt.ArrayLike = GRAVITY,
    smoothing_velocity: float = SMOOTHING_VELOCITY,
) -> np.ndarray:
    """Efforts Y π (N, n) at `samples` as `identify` models them: the Coulomb columns tanh(q̇ / v_ε)
    are low-passed like the efforts (`samples.cutoff`). Computed in chunks."""
    pi = np.asarray(pi, dtype=float)
    reg = {"gravity": gravity, "smoothing_velocity": smoothing_velocity}
    sign = _coulomb_sign(samples, smoothing_velocity)
    out = np.empty(samples.q.shape)
    chunk = max(1, _CHUNK_FLOATS // (model.nv * pi.size))
    for start in range(0, len(samples), chunk):
        part = samples.part(slice(start, start + chunk))
        out[start : start + len(part)] = _regressor(model, part, sign[start : start + len(part)], reg) @ pi
    return out


def held_out_rms(
    model: RobotModel,
    samples: Samples,
    pi: npt.ArrayLike,
    start: int,
    *,
    min_speed: float = 0.0,
    gravity: npt.ArrayLike = GRAVITY,
    smoothing_velocity: float = SMOOTHING_VELOCITY,
) -> tuple[np.ndarray, np.ndarray]:
    """Per joint, the RMS of measured − `predict`ed efforts over the samples from `start` on
    (every sample, and those where the joint moves at ≥ `min_speed`), predicted over the whole
    recording as `identify` validates (so that the Coulomb column's filter sees what it saw)."""
    residual = (
        samples.tau - predict(model, samples, pi, gravity=gravity, smoothing_velocity=smoothing_velocity)
    )[start:]
    fast = np.abs(samples.qd[start:]) >= min_speed
    every = np.sqrt(np.mean(residual**2, axis=0))
    moving = np.sqrt(np.where(fast, residual**2, 0.0).sum(axis=0) / np.maximum(fast.sum(axis=0), 1))
    return every, moving


def pseudo_inertia(pi10: npt.ArrayLike) -> np.ndarray:
    """4×4 pseudo-inertia [[½ tr(I) 1 − I, h], [hᵀ, m]] of a body's standard parameters; it is
    positive semi-definite exactly when the body is physically consistent (mass ≥ 0, inertia
    about the com ≥ 0, triangle inequality), Wensing, Kim and Slotine 2017."""
    pi10 = np.asarray(pi10, dtype=float)
    i_o = _inertia_matrix(pi10[4:])
    out = np.empty((4, 4))
    out[:3, :3] = 0.5 * np.trace(i_o) * np.eye(3) - i_o
    out[:3, 3] = out[3, :3] = pi10[1:4]
    out[3, 3] = pi10[0]
    return out


def _from_pseudo(j: np.ndarray) -> np.ndarray:
    """Standard parameters of a pseudo-inertia (inverse of `pseudo_inertia`: I = tr(Σ) 1 − Σ)."""
    sigma = j[:3, :3]
    i_o = np.trace(sigma) * np.eye(3) - sigma
    return np.array([j[3, 3], *j[:3, 3], i_o[0, 0], i_o[0, 1], i_o[1, 1], i_o[0, 2], i_o[1, 2], i_o[2, 2]])


_TRIU = np.triu_indices(4)
_THETA_MAX = 30.0  # |log| of U's diagonal: keeps trial steps of the refit finite
_DIAG = np.flatnonzero(_TRIU[0] == _TRIU[1])


def _pi_of_theta(theta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Standard parameters of the body with pseudo-inertia J = U Uᵀ, U upper triangular with
    diagonal exp(θ_diag) (every θ ∈ R¹⁰ is a physical body, Rucker and Wensing 2022), and their
    (10, 10) derivative by θ. `_theta_of_pseudo` inverts it for J ≻ 0."""
    u = np.zeros((4, 4))
    t = theta.copy()
    t[_DIAG] = np.exp(np.clip(t[_DIAG], -_THETA_MAX, _THETA_MAX))
    u[_TRIU] = t
    jac = np.empty((PER_BODY, PER_BODY))
    for k, (r, c) in enumerate(zip(*_TRIU, strict=True)):
        du = np.zeros((4, 4))
        du[r, c] = t[k] if r == c else 1.0
        d_j = du @ u.T
        jac[:, k] = _from_pseudo(d_j + d_j.T)
    return _from_pseudo(u @ u.T), jac


def _theta_of_pseudo(j: np.ndarray) -> np.ndarray:
    flip = j[::-1, ::-1]
    u = np.linalg.cholesky(flip)[::-1, ::-1]  # J = U Uᵀ with U upper triangular
    theta = u[_TRIU].copy()
    theta[_DIAG] = np.log(theta[_DIAG])
    return theta


def _physical_fit(
    model: RobotModel,
    a: np.ndarray,
    b: np.ndarray,
    lam: float,
    lower: np.ndarray,
    x: np.ndarray,
    cols: np.ndarray,
    scale: np.ndarray,
    pi0: np.ndarray,
) -> tuple[np.ndarray, list[str]]:
    """Refit with every free body physically consistent: each body's pseudo-inertia is U Uᵀ
    (smooth, unconstrained in θ), the other free parameters stay linear with their bounds;
    nonlinear least squares on the reduced problem from the unconstrained fit with its bodies'
    pseudo-inertias clipped to positive definite. Returns the scaled free parameters and the
    bodies that were inconsistent; x unchanged when every body already is consistent."""
    n = model.nv
    links = body_links(model)
    bodies = [
        bd for bd in range(n) if np.all(np.isin(np.arange(*body_columns(model, bd).indices(10 * n)), cols))
    ]
    pi = pi0.copy()
    pi[cols] += x * scale
    bad = []
    thetas = []
    for bd in bodies:
        j = pseudo_inertia(pi[body_columns(model, bd)])
        w, v = np.linalg.eigh(j)
        tol = 1e-9 * max(1.0, float(np.abs(w).max()))
        if w[0] < -tol or (w[0] <= tol and np.any(j)):
            bad.append(bd)
        floor = 1e-6 * max(float(w.max()), 1e-12)
        thetas.append(_theta_of_pseudo(v @ np.diag(np.maximum(w, floor)) @ v.T))
    if not bad:
        return x, []
    body_pos = [np.searchsorted(cols, PER_BODY * bd) + np.arange(PER_BODY) for bd in bodies]
    linear = np.setdiff1d(np.arange(cols.size), np.concatenate(body_pos))
    k = len(bodies) * PER_BODY

    def unpack(z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """x(z) and dx/dz."""
        out = np.empty(cols.size)
        jac = np.zeros((cols.size, z.size))
        for i, pos in enumerate(body_pos):
            pi10, d_pi = _pi_of_theta(z[PER_BODY * i : PER_BODY * (i + 1)])
            out[pos] = (pi10 - pi0[cols[pos]]) / scale[pos]
            jac[pos, PER_BODY * i : PER_BODY * (i + 1)] = d_pi / scale[pos][:, None]
        out[linear] = z[k:]
        jac[linear, k + np.arange(linear.size)] = 1.0
        return out, jac

    stacked = np.vstack([a, lam * np.eye(cols.size)])
    target = np.concatenate([b, np.zeros(cols.size)])

    def residual(z: np.ndarray) -> np.ndarray:
        return stacked @ unpack(z)[0] - target

    def jacobian(z: np.ndarray) -> np.ndarray:
        return stacked @ unpack(z)[1]

    z0 = np.concatenate([*thetas, np.maximum(x[linear], lower[linear])])
    lo = np.concatenate([np.full(k, -np.inf), lower[linear]])
    res = optimize.least_squares(
        residual, z0, jac=jacobian, bounds=(lo, np.inf), x_scale="jac", xtol=1e-10, ftol=1e-10, max_nfev=200
    )
    return unpack(res.x)[0], [links[bd] for bd in bad]


def _payload_pi(m: float, c: np.ndarray) -> np.ndarray:
    """Standard parameters of a point mass m at c (body frame)."""
    i_o = m * (float(c @ c) * np.eye(3) - np.outer(c, c))
    return np.array([m, *(m * c), i_o[0, 0], i_o[0, 1], i_o[1, 1], i_o[0, 2], i_o[1, 2], i_o[2, 2]])


def _payload_in_link(model: RobotModel, link: str, pi10: np.ndarray, inertia: bool) -> Payload:
    """A body-frame payload (10 standard parameters) as mass, com and inertia about it in the link frame."""
    frame = model.link_frame(link)
    m = float(pi10[0])
    c, i_c = _about_com(m, pi10[1:4], _inertia_matrix(pi10[4:]))
    com = frame.rotation.T @ (c - frame.translation)
    i_link = frame.rotation.T @ i_c @ frame.rotation if inertia else np.zeros((3, 3))
    return Payload(link, m, com, 0.5 * (i_link + i_link.T))


def identify(
    model: RobotModel,
    samples: Samples,
    what: Iterable[str] = ("inertial", "friction"),
    *,
    payload_link: str | None = None,
    payload_inertia: bool = False,
    armature: bool | None = None,
    split: float = 0.7,
    prior_weight: float = 1.0,
    weighted: bool = True,
    physical: bool = True,
    min_speed: float = 0.0,
    gravity: npt.ArrayLike = GRAVITY,
    smoothing_velocity: float = SMOOTHING_VELOCITY,
    fit_joints: Iterable[str] | None = None,
) -> Identification:
    """Identify `what` ("inertial", "friction", "payload", any mix but inertial with payload) from
    `samples`, everything else held at the model's values (module docstring).

    The first `split` of the samples (in time) trains, the rest validates (per-joint torque RMS of
    the model before and after); split = 1 validates on the training samples. "friction" fits
    viscous and Coulomb per joint (+ armature when `armature`, default: only with "inertial").
    "payload" fits a rigid load on `payload_link` (default: the model's tip link, or the last
    body's link): its mass and centre of mass as a point mass (nonlinear least squares on the
    reduced problem), with `payload_inertia` also its inertia about the com (linear).
    Rows of joint j where |q̇_j| < `min_speed` (rad/s or m/s) are left out of the fit (sticking
    phases, where dry friction takes any value within ±F_c); validation reports every sample
    (`rms_model`, `rms_identified`) and the rows that are fitted (`rms_*_moving`).
    With `physical`, when the linear fit leaves a body physically inconsistent, every free body is
    refitted as a pseudo-inertia U Uᵀ (consistent by construction; nonlinear least squares on the
    same reduced, whitened and regularised problem).
    `fit_joints` (default: every joint) are the joints whose efforts are fitted: the others keep
    their motion in the regressor (it loads the fitted joints) but their efforts (untrusted:
    unknown drive constants, quantised) are left out, and so are their friction and armature,
    which only their own efforts show.
    """
    what = tuple(dict.fromkeys(what))
    bad = [w for w in what if w not in WHAT]
    if bad or not what:
        raise RneaError(f"what must be a non-empty subset of {WHAT}, got {list(what)}")
    if "payload" in what and "inertial" in what:
        raise RneaError(
            "what: 'payload' and 'inertial' cannot come from the same run (the payload is part of a "
            "body's inertial); identify 'inertial' first, then 'payload' on a run with the load"
        )
    if not 0 < split <= 1:
        raise RneaError(f"split must be in (0, 1], got {split}")
    if not min_speed >= 0:
        raise RneaError(f"min_speed must be >= 0, got {min_speed}")
    if not prior_weight >= 0:
        raise RneaError(f"prior_weight must be >= 0, got {prior_weight}")
    n = model.nv
    if samples.q.ndim != 2 or samples.q.shape[1] != n:
        raise RneaError(f"samples must have {n} joints (model.joint_names), got shape {samples.q.shape}")
    names = list(model.joint_names)
    fitted = names if fit_joints is None else list(dict.fromkeys(fit_joints))
    unknown = [j for j in fitted if j not in names]
    if not fitted:
        raise RneaError("fit_joints is empty: nothing to fit")
    if unknown:
        raise RneaError(f"fit_joints: {', '.join(unknown)}: not joints of the model ({', '.join(names)})")
    fit = np.isin(names, fitted)
    with_armature = ("inertial" in what) if armature is None else bool(armature)
    p = parameter_count(model)
    pi0 = standard_parameters(model)
    free = np.zeros(p, dtype=bool)
    payload_body = -1
    if "inertial" in what:
        free[: PER_BODY * n] = True
    if "inertial" in what or "friction" in what:
        kinds = ("viscous", "coulomb", "armature") if with_armature else ("viscous", "coulomb")
        for kind in kinds:
            free[np.arange(p)[joint_columns(model, kind)][fit]] = True
    if "payload" in what:
        payload_link = payload_link or model.tip_link or body_links(model)[-1]
        try:
            payload_body = model.link_frame(payload_link).body
        except KeyError as exc:
            raise RneaError(f"payload_link: {exc.args[0]}") from None
        if payload_body < 0:
            raise RneaError(f"payload_link '{payload_link}' is fixed to the root (no effect)")
        free[body_columns(model, payload_body)] = True
    cols = np.flatnonzero(free)
    count = len(samples)
    n_train = count if split >= 1 else int(round(split * count))
    if n_train * n < 2 * cols.size or (split < 1 and count - n_train < 1):
        raise RneaError(
            f"too few samples: {count} × {n} joints ({n_train} for training) for {cols.size} free parameters"
        )
    train = samples.part(slice(0, n_train))
    valid = samples if split >= 1 else samples.part(slice(n_train, count))
    scale = _scales(model, pi0)[cols]
    reg = {"gravity": gravity, "smoothing_velocity": smoothing_velocity}

    reduced = _Reduced(n, cols.size)
    sign = _coulomb_sign(samples, smoothing_velocity)
    chunk = max(1, _CHUNK_FLOATS // (n * p))
    for start in range(0, n_train, chunk):
        part = train.part(slice(start, start + chunk))
        y = _regressor(model, part, sign[start : start + len(part)], reg)
        rhs = part.tau - y @ pi0
        keep = (np.abs(part.qd) >= min_speed) & fit  # (N, n): rows of fitted joints moving fast enough
        reduced.add(y[:, :, cols] * scale * keep[:, :, None], rhs * keep, keep.sum(axis=0))

    if reduced.rows.sum() < 2 * cols.size:
        raise RneaError(
            f"too few samples: {int(reduced.rows.sum())} joint rows faster than min_speed {min_speed} "
            f"for {cols.size} free parameters"
        )
    basis = base_parameters(model, cols, gravity=gravity, rows=np.flatnonzero(fit))
    a_plain = reduced.stacked(np.ones(n))[0] / scale  # R of [Y S] is R of Y times S
    base_idx = np.searchsorted(cols, basis.independent)
    cond, unexcited = _conditioning(a_plain[:, base_idx], basis.names)
    still = tuple(name for name, rows, f in zip(names, reduced.rows, fit, strict=True) if f and rows == 0)

    lower = np.full(cols.size, -np.inf)
    for kind in ("viscous", "coulomb", "armature"):
        sl = joint_columns(model, kind)
        in_cols = (cols >= sl.start) & (cols < sl.stop)
        lower[in_cols] = -pi0[cols[in_cols]] / scale[in_cols]

    # pass 1: plain least squares (a tiny ridge only against numerical rank loss) for the noise level
    a, b = reduced.stacked(np.ones(n))
    x = _solve(a, b, _NUMERICAL_RIDGE * (linalg.svdvals(a)[0] if a.size else 0.0), lower)
    sigma = reduced.residual(x)
    if not weighted:
        sigma = np.full(n, float(np.sqrt(np.mean(sigma**2))))
    tau_rms = float(np.sqrt(np.mean(train.tau**2)))
    floor = max(1e-9 * float(sigma.max()), 1e-12 * tau_rms, 1e-300)
    # pass 2: whitened by the per-joint noise level, ridge prior_weight toward the model
    a, b = reduced.stacked(1.0 / np.maximum(sigma, floor))
    lam = float(prior_weight)
    x = _solve(a, b, lam, lower)
    notes: list[str] = []
    if "payload" in what and not payload_inertia:
        x = _point_mass_fit(a, b, lam, lower, x, cols, scale, payload_body)
    if "inertial" in what and physical:
        x, moved = _physical_fit(model, a, b, lam, lower, x, cols, scale, pi0)
        if moved:
            notes.append(f"refitted with physically consistent bodies (were not: {', '.join(moved)})")
    delta = np.zeros(p)
    delta[cols] = x * scale
    pi = pi0 + delta
    # bounded solve keeps friction and armature ≥ 0 up to rounding
    for kind in ("viscous", "coulomb", "armature"):
        sl = joint_columns(model, kind)
        pi[sl] = np.maximum(pi[sl], 0.0)

    payload = None
    if payload_body >= 0:
        pi10 = delta[body_columns(model, payload_body)]
        assert payload_link is not None  # set above whenever payload_body >= 0
        payload = _payload_in_link(model, payload_link, pi10, payload_inertia)
        if payload.mass <= 0:
            notes.append(f"identified payload mass {payload.mass:.4g} kg is not positive")
    identified_model = with_parameters(model, pi)
    if payload is not None and model.payload is None:
        # keep the split robot + payload visible: the bare robot plus `payload` on its link
        identified_model = _with_payload_record(identified_model, model, payload, pi, payload_body)

    sq = np.zeros((4, n))  # squared residuals: model, identified; the same on moving rows
    moving = np.zeros(n)
    offset = count - len(valid)
    for start in range(0, len(valid), chunk):
        part = valid.part(slice(start, start + chunk))
        y = _regressor(model, part, sign[offset + start : offset + start + len(part)], reg)
        fast = np.abs(part.qd) >= min_speed
        r0, r1 = (part.tau - y @ pi0) ** 2, (part.tau - y @ pi) ** 2
        sq += [r0.sum(0), r1.sum(0), np.where(fast, r0, 0).sum(0), np.where(fast, r1, 0).sum(0)]
        moving += fast.sum(0)
    rms0, rms1 = np.sqrt(sq[:2] / len(valid))
    rms0_moving, rms1_moving = np.sqrt(sq[2:] / np.maximum(moving, 1))
    if split >= 1:
        notes.append("split = 1: validated on the training samples")
    if cond > 1e8:
        notes.append(f"base regressor condition number {cond:.3g}: poorly excited, prior dominates")
    if unexcited:
        notes.append(
            f"{len(unexcited)} of {basis.rank} base parameters not excited by the data (they keep "
            f"the model's values): {', '.join(unexcited)}"
        )
    report = consistency(identified_model)
    for c in report:
        if not c.ok:
            notes.append(f"body '{c.link}' is not physically consistent")
    return Identification(
        model=identified_model,
        parameters=pi,
        model_parameters=pi0,
        identified=what,
        viscous=pi[joint_columns(model, "viscous")].copy(),
        coulomb=pi[joint_columns(model, "coulomb")].copy(),
        armature=pi[joint_columns(model, "armature")].copy(),
        smoothing_velocity=float(smoothing_velocity),
        payload=payload,
        rms_model=rms0,
        rms_identified=rms1,
        rms_model_moving=rms0_moving,
        rms_identified_moving=rms1_moving,
        condition_number=cond,
        rank=basis.rank,
        free=int(cols.size),
        consistency=report,
        train_samples=n_train,
        validation_samples=len(valid),
        joint_names=model.joint_names,
        notes=notes,
        unexcited=unexcited,
        still_joints=still,
        fit_joints=tuple(j for j in names if j in fitted),
        validation_moving_samples=tuple(int(x) for x in moving),
    )


def _with_payload_record(
    identified: RobotModel, model: RobotModel, payload: Payload, pi: np.ndarray, body: int
) -> RobotModel:
    """The identified model as the model's bare robot with `payload` attached (same dynamics when
    the payload is kept as identified; the point-mass or inertia choice is already in pi)."""
    bare = with_parameters(model, np.where(_mask_body(model, body), standard_parameters(model), pi))
    if payload.mass <= 0:
        return identified
    try:
        return bare.with_payload(payload.link, payload.mass, payload.com, payload.inertia)
    except ValueError:  # non-physical identified inertia: keep the raw parameters
        return identified


def _mask_body(model: RobotModel, body: int) -> np.ndarray:
    mask = np.zeros(parameter_count(model), dtype=bool)
    mask[body_columns(model, body)] = True
    return mask


def _point_mass_fit(
    a: np.ndarray,
    b: np.ndarray,
    lam: float,
    lower: np.ndarray,
    x0: np.ndarray,
    cols: np.ndarray,
    scale: np.ndarray,
    body: int,
) -> np.ndarray:
    """Refit with the payload as a point mass: its 10 columns are f(m, c), the others linear."""
    start = int(np.searchsorted(cols, PER_BODY * body))
    pay = np.arange(start, start + PER_BODY)
    other = np.setdiff1d(np.arange(cols.size), pay)
    s_pay = scale[pay]
    m0 = x0[pay[0]] * s_pay[0]
    c0 = x0[pay[1:4]] * s_pay[1:4] / m0 if m0 > 0 else np.zeros(3)
    m0 = max(m0, 1e-6)

    def unpack(z: np.ndarray) -> np.ndarray:
        x = np.empty(cols.size)
        x[other] = z[: other.size]
        x[pay] = _payload_pi(z[other.size], z[other.size + 1 :]) / s_pay
        return x

    def residual(z: np.ndarray) -> np.ndarray:
        x = unpack(z)
        return np.concatenate([a @ x - b, lam * x])

    z0 = np.concatenate([x0[other], [m0], c0])
    lo = np.concatenate([lower[other], [0.0], np.full(3, -np.inf)])
    z0 = np.maximum(z0, np.where(np.isfinite(lo), lo, -np.inf))
    res = optimize.least_squares(residual, z0, bounds=(lo, np.inf), xtol=1e-15, ftol=1e-15, gtol=1e-15)
    return unpack(res.x)


def identify_friction(
    model: RobotModel, samples: Samples, armature: bool = False, **kwargs
) -> Identification:
    """Viscous and Coulomb friction per joint (and armature) with the inertials held."""
    return identify(model, samples, ("friction",), armature=armature, **kwargs)


def identify_payload(
    model: RobotModel, samples: Samples, link: str | None = None, inertia: bool = False, **kwargs
) -> Identification:
    """A payload on `link` (mass, com, optionally inertia) with everything else held."""
    return identify(model, samples, ("payload",), payload_link=link, payload_inertia=inertia, **kwargs)
