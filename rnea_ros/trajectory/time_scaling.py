"""The smallest uniform slow-down of a joint trajectory that keeps its efforts within the limits.

Stretching time by k ≥ 1 (every time_from_start × k) turns JTC's spline q(t) into q(t / k)
exactly (a Hermite spline is unique given its points' positions and derivatives), so with
s = 1/k the state at scaled time k t is (q, s q̇, s² q̈) and the efforts become

    τ(s) = s² A + s B + C + f(s q̇)

A = M(q) q̈ + c(q, q̇) (inertia + Coriolis: quadratic in q̇), B = F_v q̇ (viscous friction),
C = g(q) + Σ Jᵀ F (gravity, wrench), f the Coulomb/Stribeck friction, each only when switched on in
the effort law (`EffortLaw.compensate`, the node's). f(s q̇) = level · tanh(s q̇ / v_ε) depends on s
in a non-polynomial way; it is bounded conservatively: it has the sign of q̇ and a magnitude in
[0, max(F_c, F_s)].
Per sample and joint |τ(s)| ≤ L is then two quadratic inequalities in s whose infeasible sets
are at most two open intervals each (closed form), and |s q̇| ≤ v_max is linear. The largest s in
(0, 1] outside every interval is the answer; note it is not the minimum of the per-sample
largest s: where A < 0 a sample's feasible set need not be an interval.

The samples are the points that will be sent: the scaled trajectory resampled every `period`
(which, in original time, are every period / k), so k is found by a short fixed-point iteration
and then verified on the scaled, resampled trajectory with the exact efforts (`trajectory_efforts`).
Between those points JTC interpolates the efforts linearly, hence stays within the limits too.

Arrays in `model.joint_names` order; times s; efforts N m or N; velocities rad/s or m/s.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from rnea_ros.control.effort_law import EffortLaw
from rnea_ros.errors import RneaError
from rnea_ros.model.robot_model import RobotModel
from rnea_ros.trajectory.efforts import (
    DEFAULT_RESAMPLE_PERIOD,
    FEEDFORWARD,
    motion_efforts,
    resample,
    static_efforts,
    trajectory_efforts,
    uniform_times,
)
from rnea_ros.trajectory.sampling import TrajectorySampler

_MARGIN = 1e-9  # relative: k is raised by this so rounding cannot put a bound at 1 + 1e-16
_ITERATIONS = 20
_TIGHT = 0.999  # a binding ratio this close to 1 is tight enough


@dataclass(frozen=True)
class TimeScale:
    """Result of `minimal_time_scale` / `check_limits`."""

    k: float  # time stretch factor ≥ 1; inf when rejected
    feasible: bool
    joint: str  # binding joint
    time: float  # s, when the binding joint is at its limit (scaled time; original when rejected)
    ratio: float  # |τ| / effort limit (or |q̇| / velocity limit) there after scaling
    limit: str  # "effort" or "velocity": which limit binds
    duration: float  # s, scaled duration (inf when rejected)
    reason: str

    def __str__(self) -> str:
        return self.reason


def scale_trajectory(
    times: npt.ArrayLike,
    positions: npt.ArrayLike,
    velocities: npt.ArrayLike | None = None,
    accelerations: npt.ArrayLike | None = None,
    k: float = 1.0,
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, np.ndarray | None]:
    """Points of the trajectory slowed down k times: (times k, positions, velocities / k,
    accelerations / k²); None stays None. JTC's spline through them is q(t / k) exactly."""
    k = float(k)
    if not (np.isfinite(k) and k > 0):
        raise RneaError(f"k must be finite and > 0, got {k}")
    return (
        np.asarray(times, dtype=float) * k,
        np.array(positions, dtype=float),
        None if velocities is None else np.asarray(velocities, dtype=float) / k,
        None if accelerations is None else np.asarray(accelerations, dtype=float) / k**2,
    )


def _above(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """{s : a s² + b s + c > 0} as two open intervals per element: (lo (2, …), hi (2, …)),
    empty intervals as lo = hi = nan."""
    nan, inf = np.nan, np.inf
    shape = np.broadcast(a, b, c).shape
    a, b, c = (np.broadcast_to(x, shape) for x in (a, b, c))
    lo = np.full((2, *shape), nan)
    hi = np.full((2, *shape), nan)
    with np.errstate(divide="ignore", invalid="ignore"):
        disc = b * b - 4 * a * c
        root = np.sqrt(np.maximum(disc, 0.0))
        half = -0.5 * (b + np.where(b >= 0, root, -root))  # stable: no cancellation
        r_a = half / a
        r_b = c / half
        r1, r2 = np.fmin(r_a, r_b), np.fmax(r_a, r_b)
    quad = a != 0
    real = disc > 0
    # a > 0: outside the roots (everywhere without two real roots)
    up = quad & (a > 0)
    m = up & real
    lo[0][m], hi[0][m], lo[1][m], hi[1][m] = -inf, r1[m], r2[m], inf
    m = up & ~real
    lo[0][m], hi[0][m] = -inf, inf
    # a < 0: between two real roots
    m = quad & (a < 0) & real
    lo[0][m], hi[0][m] = r1[m], r2[m]
    # linear
    lin = ~quad
    with np.errstate(divide="ignore", invalid="ignore"):
        x = -c / b
    m = lin & (b > 0)
    lo[0][m], hi[0][m] = x[m], inf
    m = lin & (b < 0)
    lo[0][m], hi[0][m] = -inf, x[m]
    m = lin & (b == 0) & (c > 0)
    lo[0][m], hi[0][m] = -inf, inf
    return lo, hi


def _largest_feasible(lo: np.ndarray, hi: np.ndarray) -> tuple[float, int]:
    """Largest s in (0, 1] outside every open interval (lo, hi) (flat arrays) and the index of the
    interval whose lower end it is (-1 when s = 1 is feasible); s ≤ 0: nothing feasible."""
    keep = np.flatnonzero((hi > lo) & (hi > 0) & (lo < 1))  # nan compares False: empty dropped
    if keep.size == 0:
        return 1.0, -1
    order = keep[np.argsort(lo[keep], kind="stable")]
    lo_s, hi_s = lo[order], hi[order]
    reach = np.maximum.accumulate(hi_s)
    start = np.ones(order.size, dtype=bool)
    start[1:] = lo_s[1:] >= reach[:-1]
    first = np.flatnonzero(start)  # components: first[i] .. first[i+1]-1, union (lo, reach)
    last = np.r_[first[1:] - 1, order.size - 1]
    covering = np.flatnonzero((lo_s[first] < 1) & (reach[last] > 1))
    if covering.size == 0:
        return 1.0, -1
    i = first[covering[-1]]
    return float(lo_s[i]), int(order[i])


class _Decomposition:
    """A, B, C and the Coulomb bound (N, n) at original-time samples (see module docstring)."""

    def __init__(self, model: RobotModel, sampler: TrajectorySampler, t: np.ndarray, law: EffortLaw) -> None:
        q, qd, qdd = sampler.sample(t, inclusive=True)
        zeros = np.zeros_like(q)
        terms, friction = law.compensate, law.friction_for(model)
        self.qd = qd
        self.a = (
            motion_efforts(model, law, q, qd, qdd) if "coriolis" in terms or "inertia" in terms else zeros
        )
        static = "gravity" in terms or ("wrench" in terms and bool(law.wrenches))
        self.c = static_efforts(model, law, q) if static else zeros
        if "friction" in terms and friction is not None:
            self.b = friction.viscous * qd
            static_level = friction.coulomb if friction.static is None else friction.static
            self.f = np.maximum(friction.coulomb, static_level) * np.sign(qd)
        else:
            self.b = self.f = zeros


def checked_joints(model: RobotModel, joints: Iterable[str] | None) -> np.ndarray:
    if joints is None:
        return np.arange(model.nv)
    names = [joints] if isinstance(joints, str) else list(joints)
    unknown = [j for j in names if j not in model.joint_names]
    if unknown:
        raise RneaError(f"joints: {unknown} are not movable joints of the model")
    return np.array(sorted({model.joint_index(j) for j in names}), dtype=np.int64)


def _closed_form(d: _Decomposition, effort_limit, velocity_limit, checked) -> tuple[float, tuple]:
    """Largest feasible s on these samples and the (sample, joint, kind of limit) that binds it."""
    cols = checked
    a, b, c, f, qd = (x[:, cols] for x in (d.a, d.b, d.c, d.f, d.qd))
    lim, vlim = effort_limit[cols], velocity_limit[cols]
    with np.errstate(invalid="ignore"):
        hi_c = c + np.maximum(f, 0.0) - lim  # τ > L somewhere in the Coulomb band
        lo_c = -(c + np.minimum(f, 0.0)) - lim  # τ < −L
    eff = np.isfinite(lim)
    los, his = [], []
    for aa, bb, cc in ((a, b, hi_c), (-a, -b, lo_c)):
        lo, hi = _above(aa, bb, np.where(eff, cc, -1.0))
        lo[:, :, ~eff] = np.nan
        los.append(lo)
        his.append(hi)
    speed = np.isfinite(vlim)
    lo, hi = _above(np.zeros_like(qd), np.abs(qd), np.where(speed, -vlim, -1.0))
    lo[:, :, ~speed] = np.nan
    los.append(lo)
    his.append(hi)
    lo_all, hi_all = np.stack(los), np.stack(his)  # (3, 2, N, m)
    s, index = _largest_feasible(lo_all.reshape(-1), hi_all.reshape(-1))
    if index < 0:
        return s, (-1, -1, "")
    which, _, sample, col = np.unravel_index(index, lo_all.shape)
    return s, (int(sample), int(cols[col]), "velocity" if which == 2 else "effort")


def minimal_time_scale(
    model: RobotModel,
    times: npt.ArrayLike,
    positions: npt.ArrayLike,
    velocities: npt.ArrayLike | None = None,
    accelerations: npt.ArrayLike | None = None,
    *,
    period: float = DEFAULT_RESAMPLE_PERIOD,
    law: EffortLaw = FEEDFORWARD,
    joints: Iterable[str] | None = None,
    max_k: float = 100.0,
) -> TimeScale:
    """The smallest k ≥ 1 such that the trajectory slowed down k times (`scale_trajectory`),
    resampled every `period` s, keeps |τ| and |q̇| within the law's limits (`EffortLaw.limits`)
    at every resampled point for the `joints` checked (default: all).

    Points (K, n) in model order, as for `TrajectorySampler`. Efforts as `trajectory_efforts`
    (the law's feedforward). When even
    k → ∞ fails (gravity + Coulomb friction + wrench alone beyond a limit) the result is
    `feasible=False`, k = inf, naming the joint, the time (original) and |τ|/limit there; so is
    a trajectory that needs k > `max_k` (then k is the estimate)."""
    points = (times, positions, velocities, accelerations)
    sampler = TrajectorySampler(*points)
    if sampler.nv != model.nv:
        raise RneaError(f"positions must have {model.nv} columns (model order), got {sampler.nv}")
    law.friction_for(model)
    tau_lim, v_lim = law.limits(model)
    checked = checked_joints(model, joints)
    duration = sampler.duration

    def decompose(t: np.ndarray) -> _Decomposition:
        return _Decomposition(model, sampler, t, law)

    # fixed point: the samples of the scaled trajectory, in original time, depend on k
    k = 1.0
    for _ in range(_ITERATIONS):
        t_orig = uniform_times(k * duration, period) / k
        s, (sample, joint, kind) = _closed_form(decompose(t_orig), tau_lim, v_lim, checked)
        if s <= 0:
            return _rejected(model, decompose(t_orig), t_orig, tau_lim, checked, law)
        k_new = 1.0 if sample < 0 else (1.0 / s) * (1 + _MARGIN)
        if k_new > max_k:
            name = model.joint_names[joint]
            reason = f"rejected: needs slowing down {k_new:.1f}x > max_k = {max_k:g} ({kind} limit of {name})"
            when = float(t_orig[sample] * k_new)
            return TimeScale(k_new, False, name, when, np.nan, kind, k_new * duration, reason)
        converged = k_new <= k * (1 + 1e-4)  # the rest is left to the verification below
        k = max(k, k_new)
        if converged:
            break

    # verify on what will be sent: the scaled points, resampled, exact efforts
    def worst(k: float) -> tuple[float, tuple[float, int, str]]:
        return _worst(model, points, k, period, law, tau_lim, v_lim, checked)

    ratio, where = worst(k)
    for _ in range(_ITERATIONS):  # only if the fixed point stopped on a worse grid
        if ratio <= 1.0:
            break
        k *= ratio * (1 + _MARGIN)
        ratio, where = worst(k)
    # the samples move with k, so the bound is not monotone in k: tighten by bisection
    # towards the closed form's estimate while the result stays verified
    if k > 1.0 and ratio < _TIGHT:
        lo = max(1.0, k * np.sqrt(ratio))
        for _ in range(8):
            mid = 0.5 * (lo + k)
            r_mid, w_mid = worst(mid)
            if r_mid <= 1.0:
                k, ratio, where = mid, r_mid, w_mid
                if ratio >= _TIGHT:
                    break
            else:
                lo = mid
    return _result(model, k, duration, ratio, where)


def _result(model: RobotModel, k: float, duration: float, ratio: float, where) -> TimeScale:
    t_s, j, kind = where
    name = model.joint_names[j]
    if ratio > 1.0:
        reason = f"{kind} limit of {name} exceeded at t = {t_s:.3f} s ({ratio:.1%})" + (
            "" if k == 1.0 else f" when slowed down {k:.4f}x"
        )
    elif k == 1.0:
        reason = f"within limits; closest: {kind} of {name} at {ratio:.1%} at t = {t_s:.3f} s"
    else:
        reason = (
            f"slowed down {k:.4f}x (duration {k * duration:.3f} s): {kind} limit of {name} binds "
            f"at t = {t_s:.3f} s ({ratio:.1%})"
        )
    return TimeScale(k, ratio <= 1.0, name, t_s, ratio, kind, k * duration, reason)


def check_limits(
    model: RobotModel,
    times: npt.ArrayLike,
    positions: npt.ArrayLike,
    velocities: npt.ArrayLike | None = None,
    accelerations: npt.ArrayLike | None = None,
    *,
    k: float = 1.0,
    period: float = DEFAULT_RESAMPLE_PERIOD,
    law: EffortLaw = FEEDFORWARD,
    joints: Iterable[str] | None = None,
) -> TimeScale:
    """The trajectory slowed down k times and resampled every `period` s, checked against the
    limits (arguments as `minimal_time_scale`): `feasible` when every point is within them;
    joint, time (scaled), ratio and kind of the point closest to (or furthest beyond) a limit."""
    points = (times, positions, velocities, accelerations)
    sampler = TrajectorySampler(*points)
    if sampler.nv != model.nv:
        raise RneaError(f"positions must have {model.nv} columns (model order), got {sampler.nv}")
    law.friction_for(model)
    tau_lim, v_lim = law.limits(model)
    ratio, where = _worst(model, points, float(k), period, law, tau_lim, v_lim, checked_joints(model, joints))
    return _result(model, float(k), sampler.duration, ratio, where)


def _worst(
    model, points: tuple[Any, Any, Any, Any], k, period, law, tau_lim, v_lim, checked
) -> tuple[float, tuple[float, int, str]]:
    """Largest |τ|/L or |q̇|/v_max over the scaled, resampled trajectory and where."""
    scaled = TrajectorySampler(*scale_trajectory(*points, k=k))
    t, q, qd, qdd = resample(scaled, period)
    tau = trajectory_efforts(model, q, qd, qdd, law)
    with np.errstate(divide="ignore", invalid="ignore"):
        eff = np.abs(tau[:, checked]) / tau_lim[checked]
        vel = np.abs(qd[:, checked]) / v_lim[checked]
    eff = np.nan_to_num(eff, nan=0.0, posinf=np.inf)
    vel = np.nan_to_num(vel, nan=0.0, posinf=np.inf)
    ie, iv = np.unravel_index(np.argmax(eff), eff.shape), np.unravel_index(np.argmax(vel), vel.shape)
    if eff[ie] >= vel[iv]:
        return float(eff[ie]), (float(t[ie[0]]), int(checked[ie[1]]), "effort")
    return float(vel[iv]), (float(t[iv[0]]), int(checked[iv[1]]), "velocity")


def _rejected(model, d: _Decomposition, t, tau_lim, checked, law: EffortLaw) -> TimeScale:
    """Result for a trajectory whose static efforts (k → ∞) exceed a limit somewhere."""
    static = np.maximum(np.abs(d.c + np.maximum(d.f, 0)), np.abs(d.c + np.minimum(d.f, 0)))[:, checked]
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.nan_to_num(static / tau_lim[checked], nan=0.0)
    i, col = np.unravel_index(np.argmax(ratio), ratio.shape)
    j = int(checked[col])
    name = model.joint_names[j]
    parts = [
        name
        for name, on in (
            ("gravity", "gravity" in law.compensate),
            ("Coulomb friction", bool(np.any(d.f[:, checked] != 0))),
            ("wrench", "wrench" in law.compensate and bool(law.wrenches)),
        )
        if on
    ]
    what = " + ".join(parts) or "nothing"
    reason = (
        f"rejected: {what} alone give {static[i, col]:.3f} at {name} at t = {t[i]:.3f} s, "
        f"{ratio[i, col]:.1%} of its effort limit {tau_lim[j]:g}; no slow-down helps"
    )
    return TimeScale(np.inf, False, name, float(t[i]), float(ratio[i, col]), "effort", np.inf, reason)
