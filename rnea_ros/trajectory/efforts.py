"""Efforts along a joint trajectory, for effort-annotated JointTrajectory messages.

joint_trajectory_controller (JTC) with an effort command interface commands
u = τ_d(t) + PID(e, ė), τ_d interpolated *linearly* between the points' `effort` fields, while
positions and velocities follow its spline (cubic with velocities, quintic with accelerations too,
linear with positions only). So the efforts are computed on a uniform resampling of that spline:

- `resample`: (t, q, q̇, q̈) every `period` s (last point included) from `TrajectorySampler`, the
  spline JTC builds from the same points. Inside an original segment JTC's quintic through the
  resampled points reproduces that spline exactly; across an original point it may differ slightly.
- `trajectory_efforts`: τ at every sample, the feedforward part of an effort law
  (`rnea_ros.control.effort_law.EffortLaw`, the node's), in one batch `rnea` call plus friction;
  `effort_terms` each term; `motion_efforts` and `static_efforts` its parts that scale with the
  path speed and that do not (for time scaling and re-timing).
- `interpolation_error`: how far JTC's linear interpolation between resampled points strays
  from the exact τ(t), evaluated on a finer grid; `DEFAULT_RESAMPLE_PERIOD` keeps it small.

Arrays in `model.joint_names` order, (N, n); times s; efforts N m or N; the law's gravity (m/s²)
and wrenches (a link's wrench on its environment, root-frame axes, held constant) in the root frame.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from rnea_ros.algorithms.dynamics import gravity_torques, rnea
from rnea_ros.control.effort_law import EffortLaw
from rnea_ros.errors import RneaError
from rnea_ros.friction.model import friction_torques
from rnea_ros.model.robot_model import RobotModel
from rnea_ros.trajectory.sampling import TrajectorySampler

# 5 ms: JTC's linear interpolation of the efforts between points 5 ms apart stays within 1 % of
# the effort limit on every trajectory of `bench/interpolation_error.py` without Coulomb friction;
# 10 ms does not (the figures: docs/trajectories.md, "Resample period").
DEFAULT_RESAMPLE_PERIOD = 0.005
# Resampled points of one trajectory at most (500 s at 5 ms; about 0.1 GB of arrays for 7 joints):
# the work per trajectory is bounded.
MAX_SAMPLES = 100_000
_ZERO_GRAVITY = np.zeros(3)
FEEDFORWARD = EffortLaw()  # every model term, default gravity, no friction, no wrench

Trajectory = TrajectorySampler | tuple


def sampler_of(trajectory: Trajectory) -> TrajectorySampler:
    """A TrajectorySampler as given, or built from (times, positions[, velocities[, accelerations]])."""
    if isinstance(trajectory, TrajectorySampler):
        return trajectory
    if not isinstance(trajectory, tuple | list) or not 2 <= len(trajectory) <= 4:
        raise RneaError(
            "trajectory must be a TrajectorySampler or (times, positions[, velocities[, accelerations]])"
        )
    return TrajectorySampler(*trajectory)


def uniform_times(duration: float, period: float) -> np.ndarray:
    """0, period, 2 period, … and `duration` itself as the last time (a shorter last step);
    RneaError when that is more than MAX_SAMPLES points (the work of one trajectory is bounded:
    a time_from_start of 1e4 s every 5 ms once ended in MemoryError)."""
    if not (np.isfinite(period) and period > 0):
        raise RneaError(f"period must be > 0 s, got {period}")
    steps = np.ceil(duration / period - 1e-9)
    if not steps + 1 <= MAX_SAMPLES:
        raise RneaError(
            f"{duration:.6g} s resampled every {period:g} s is {steps + 1:.3g} points, more than "
            f"{MAX_SAMPLES}: split the trajectory (or sample it less often)"
        )
    count = int(steps)
    return np.minimum(np.arange(count + 1) * period, duration)


def resample(
    trajectory: Trajectory, period: float = DEFAULT_RESAMPLE_PERIOD
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(t (N,), q, q̇, q̈ (N, n)) of JTC's spline through `trajectory` every `period` s from 0 to
    the last point's time, which is included with the spline's state there."""
    sampler = sampler_of(trajectory)
    t = uniform_times(sampler.duration, period)
    return (t, *sampler.sample(t, inclusive=True))


def _states(model: RobotModel, q, qd, qdd) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    n = model.nv
    arrays = []
    for name, x in (("q", q), ("qd", qd), ("qdd", qdd)):
        try:
            a = np.array(x, dtype=float, order="C", ndmin=2)
        except (TypeError, ValueError):
            raise RneaError(f"{name} must be an array of numbers") from None
        if a.ndim != 2 or a.shape[1] != n:
            raise RneaError(f"{name} must have shape (N, {n}), got {np.shape(x)}")
        arrays.append(a)
    if not arrays[0].shape == arrays[1].shape == arrays[2].shape:
        raise RneaError("q, qd and qdd must have the same number of samples")
    return arrays[0], arrays[1], arrays[2]


def trajectory_efforts(
    model: RobotModel,
    q: npt.ArrayLike,
    qd: npt.ArrayLike,
    qdd: npt.ArrayLike,
    law: EffortLaw = FEEDFORWARD,
) -> np.ndarray:
    """τ (N, n) = Σ of the law's `compensate` terms at each sample (q, q̇, q̈ (N, n)): gravity
    g(q), coriolis c(q, q̇), inertia M(q) q̈, friction τ_f(q̇) (none when law.friction is None),
    wrench Σ Jᵀ F; the node's feedforward at the desired state, without feedback. One batch `rnea`."""
    q, qd, qdd = _states(model, q, qd, qdd)
    terms = law.compensate
    friction = law.friction_for(model)
    zeros = np.zeros_like(q)
    tau = rnea(
        model,
        q,
        qd if "coriolis" in terms else zeros,
        qdd if "inertia" in terms else zeros,
        gravity=law.gravity if "gravity" in terms else _ZERO_GRAVITY,
        wrenches=law.wrenches if "wrench" in terms else None,
    )
    if "friction" in terms and friction is not None:
        tau += friction_torques(friction, qd)
    return tau


def effort_terms(
    model: RobotModel,
    q: npt.ArrayLike,
    qd: npt.ArrayLike,
    qdd: npt.ArrayLike,
    law: EffortLaw = FEEDFORWARD,
) -> dict[str, np.ndarray]:
    """Each term of `trajectory_efforts` (N, n) by name, for the law's `compensate` terms (their
    sum is `trajectory_efforts`, to rounding); one batch call per term."""
    q, qd, qdd = _states(model, q, qd, qdd)
    terms = law.compensate
    friction = law.friction_for(model)
    wrenches = law.wrenches
    zeros = np.zeros_like(q)
    out: dict[str, np.ndarray] = {}
    if "gravity" in terms:
        out["gravity"] = gravity_torques(model, q, gravity=law.gravity)
    if "coriolis" in terms:
        out["coriolis"] = rnea(model, q, qd, zeros, gravity=_ZERO_GRAVITY)
    if "inertia" in terms:
        out["inertia"] = rnea(model, q, zeros, qdd, gravity=_ZERO_GRAVITY)
    if "friction" in terms:
        out["friction"] = zeros.copy() if friction is None else friction_torques(friction, qd)
    if "wrench" in terms:
        if wrenches:
            out["wrench"] = rnea(model, q, zeros, zeros, gravity=_ZERO_GRAVITY, wrenches=wrenches)
        else:
            out["wrench"] = zeros.copy()
    return out


def motion_efforts(
    model: RobotModel, law: EffortLaw, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray
) -> np.ndarray:
    """The law's terms that move with the path, c(q, q̇) + M(q) q̈ (N, n), each only when
    switched on (zero gravity, no wrench): s² times this is their value when time runs 1/s times
    slower. One batch `rnea` (q, q̇, q̈ (N, n) float64)."""
    terms = law.compensate
    zeros = np.zeros_like(q)
    return rnea(
        model,
        q,
        qd if "coriolis" in terms else zeros,
        qdd if "inertia" in terms else zeros,
        gravity=_ZERO_GRAVITY,
    )


def static_efforts(model: RobotModel, law: EffortLaw, q: np.ndarray) -> np.ndarray:
    """The law's terms that do not depend on the path speed, g(q) + Σ Jᵀ F (N, n), each only
    when switched on. One batch `rnea` (q (N, n) float64)."""
    terms = law.compensate
    zeros = np.zeros_like(q)
    return rnea(
        model,
        q,
        zeros,
        zeros,
        gravity=law.gravity if "gravity" in terms else _ZERO_GRAVITY,
        wrenches=law.wrenches if "wrench" in terms and law.wrenches else None,
    )


def interpolation_error(
    model: RobotModel,
    trajectory: Trajectory,
    period: float = DEFAULT_RESAMPLE_PERIOD,
    *,
    refine: int = 8,
    law: EffortLaw = FEEDFORWARD,
) -> np.ndarray:
    """Largest |τ_lin(t) − τ(t)| per joint (n,), N m or N: τ_lin interpolates linearly between the
    efforts at the `resample(trajectory, period)` points (what JTC commands), τ is exact; both on
    `refine` − 1 extra times inside every resampled interval. For a smooth τ the error is about
    period² max|τ̈| / 8, so halving the period quarters it."""
    if int(refine) < 2:
        raise RneaError(f"refine must be >= 2, got {refine}")
    refine = int(refine)
    sampler = sampler_of(trajectory)
    t, q, qd, qdd = resample(sampler, period)
    n = model.nv
    if t.size < 2:
        return np.zeros(n)
    tau = trajectory_efforts(model, q, qd, qdd, law)
    alpha = np.arange(1, refine) / refine  # (r,)
    fine = t[:-1, None] + alpha * np.diff(t)[:, None]  # (N-1, r)
    tau_fine = trajectory_efforts(model, *sampler.sample(fine.reshape(-1), inclusive=True), law)
    linear = (1 - alpha)[None, :, None] * tau[:-1, None] + alpha[None, :, None] * tau[1:, None]
    return np.max(np.abs(linear.reshape(-1, n) - tau_fine), axis=0)


def period_for_tolerance(
    model: RobotModel,
    trajectory: Trajectory,
    tolerance: npt.ArrayLike,
    *,
    max_period: float = DEFAULT_RESAMPLE_PERIOD,
    min_period: float = 0.001,
    law: EffortLaw = FEEDFORWARD,
) -> tuple[float, np.ndarray]:
    """The longest resample period ≤ `max_period` whose `interpolation_error` is within
    `tolerance` (N m or N, one value or per joint (n,), e.g. 0.01 × effort limit), and that error
    (n,). Uses error ∝ period²; stops at `min_period` (then the error may exceed the tolerance:
    Coulomb friction's tanh step, for instance, is not resolved by any practical period)."""
    tol = np.broadcast_to(np.asarray(tolerance, dtype=float), (model.nv,))
    if np.any(~(tol > 0)):
        raise RneaError("tolerance must be > 0")
    if not (0 < min_period <= max_period):
        raise RneaError(f"need 0 < min_period <= max_period, got {min_period}, {max_period}")
    sampler = sampler_of(trajectory)
    period = float(max_period)
    for _ in range(8):
        error = interpolation_error(model, sampler, period, law=law)
        worst = float(np.max(error / tol))
        if worst <= 1.0 or period <= min_period:
            return period, error
        period = max(min_period, 0.9 * period / np.sqrt(worst))
    return period, interpolation_error(model, sampler, period, law=law)
