"""Efforts along a joint trajectory, for effort-annotated JointTrajectory messages.

joint_trajectory_controller (JTC) with an effort command interface commands
u = τ_d(t) + PID(e, ė), τ_d interpolated *linearly* between the points' `effort` fields, while
positions and velocities follow its spline (cubic with velocities, quintic with accelerations too,
linear with positions only). So the efforts are computed on a uniform resampling of that spline:

- `resample`: (t, q, q̇, q̈) every `period` s (last point included) from `TrajectorySampler`, the
  spline JTC builds from the same points. Inside an original segment JTC's quintic through the
  resampled points reproduces that spline exactly; across an original point it may differ slightly.
- `trajectory_efforts`: τ at every sample, terms switched like the inverse_dynamics node
  (`feedforward.COMPENSABLE`), in one batch `rnea` call plus friction; `effort_terms` each term.
- `interpolation_error`: how far JTC's linear interpolation between resampled points strays
  from the exact τ(t), evaluated on a finer grid; `DEFAULT_RESAMPLE_PERIOD` keeps it small.

Arrays in `model.joint_names` order, (N, n); times s; efforts N m or N; gravity (m/s²) and
wrenches (a link's wrench on its environment, root-frame axes, held constant) in the root frame.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from rnea_ros.algorithms.dynamics import GRAVITY, gravity_torques, rnea
from rnea_ros.control.effort_law import COMPENSABLE
from rnea_ros.errors import RneaError
from rnea_ros.friction.model import Friction, friction_torques
from rnea_ros.model.robot_model import RobotModel
from rnea_ros.trajectory.sampling import TrajectorySampler

# 5 ms: JTC's linear interpolation of the efforts between points 5 ms apart stays within 1 % of
# the effort limit on every trajectory of `bench/interpolation_error.py` without Coulomb friction
# (worst 0.54 %: a UR5 point-to-point move slowed down to its limits; 0.25 % Panda; the demo's
# multi-sines 3e-4 N m). With 10 ms that move reaches 2 %. See README.
DEFAULT_RESAMPLE_PERIOD = 0.005
_ZERO_GRAVITY = np.zeros(3)

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
    """0, period, 2 period, … and `duration` itself as the last time (a shorter last step)."""
    if not (np.isfinite(period) and period > 0):
        raise RneaError(f"period must be > 0 s, got {period}")
    count = int(np.ceil(duration / period - 1e-9))
    return np.minimum(np.arange(count + 1) * period, duration)


def resample(
    trajectory: Trajectory, period: float = DEFAULT_RESAMPLE_PERIOD
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(t (N,), q, q̇, q̈ (N, n)) of JTC's spline through `trajectory` every `period` s from 0 to
    the last point's time, which is included with the spline's state there."""
    sampler = sampler_of(trajectory)
    t = uniform_times(sampler.duration, period)
    return (t, *sampler.sample(t, inclusive=True))


def compensated_terms(compensate: Iterable[str]) -> frozenset[str]:
    terms = frozenset(compensate) if not isinstance(compensate, str) else frozenset([compensate])
    unknown = sorted(terms - set(COMPENSABLE))
    if unknown:
        raise RneaError(f"compensate: unknown terms {unknown}, expected some of {list(COMPENSABLE)}")
    return terms


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


def checked_friction(model: RobotModel, friction: Friction | None) -> Friction | None:
    if friction is not None and friction.viscous.shape != (model.nv,):
        raise RneaError(f"friction must have {model.nv} joints, got {friction.viscous.size}")
    return friction


def trajectory_efforts(
    model: RobotModel,
    q: npt.ArrayLike,
    qd: npt.ArrayLike,
    qdd: npt.ArrayLike,
    *,
    gravity: Sequence[float] = GRAVITY,
    friction: Friction | None = None,
    compensate: Iterable[str] = COMPENSABLE,
    wrenches: Mapping[str, Sequence[float]] | None = None,
) -> np.ndarray:
    """τ (N, n) = Σ of the `compensate` terms at each sample (q, q̇, q̈ (N, n)): gravity g(q),
    coriolis c(q, q̇), inertia M(q) q̈, friction τ_f(q̇) (none when `friction` is None), wrench
    Σ Jᵀ F; the node's feedforward at the desired state, without feedback. One batch `rnea`."""
    q, qd, qdd = _states(model, q, qd, qdd)
    terms = compensated_terms(compensate)
    friction = checked_friction(model, friction)
    zeros = np.zeros_like(q)
    tau = rnea(
        model,
        q,
        qd if "coriolis" in terms else zeros,
        qdd if "inertia" in terms else zeros,
        gravity=gravity if "gravity" in terms else _ZERO_GRAVITY,
        wrenches=wrenches if "wrench" in terms else None,
    )
    if "friction" in terms and friction is not None:
        tau += friction_torques(friction, qd)
    return tau


def effort_terms(
    model: RobotModel,
    q: npt.ArrayLike,
    qd: npt.ArrayLike,
    qdd: npt.ArrayLike,
    *,
    gravity: Sequence[float] = GRAVITY,
    friction: Friction | None = None,
    compensate: Iterable[str] = COMPENSABLE,
    wrenches: Mapping[str, Sequence[float]] | None = None,
) -> dict[str, np.ndarray]:
    """Each term of `trajectory_efforts` (N, n) by name, for the terms in `compensate` (their
    sum is `trajectory_efforts`, to rounding); one batch call per term."""
    q, qd, qdd = _states(model, q, qd, qdd)
    terms = compensated_terms(compensate)
    friction = checked_friction(model, friction)
    zeros = np.zeros_like(q)
    out: dict[str, np.ndarray] = {}
    if "gravity" in terms:
        out["gravity"] = gravity_torques(model, q, gravity=gravity)
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


def interpolation_error(
    model: RobotModel,
    trajectory: Trajectory,
    period: float = DEFAULT_RESAMPLE_PERIOD,
    *,
    refine: int = 8,
    gravity: Sequence[float] = GRAVITY,
    friction: Friction | None = None,
    compensate: Iterable[str] = COMPENSABLE,
    wrenches: Mapping[str, Sequence[float]] | None = None,
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
    law: dict[str, Any] = {
        "gravity": gravity,
        "friction": friction,
        "compensate": compensate,
        "wrenches": wrenches,
    }
    tau = trajectory_efforts(model, q, qd, qdd, **law)
    alpha = np.arange(1, refine) / refine  # (r,)
    fine = t[:-1, None] + alpha * np.diff(t)[:, None]  # (N-1, r)
    tau_fine = trajectory_efforts(model, *sampler.sample(fine.reshape(-1), inclusive=True), **law)
    linear = (1 - alpha)[None, :, None] * tau[:-1, None] + alpha[None, :, None] * tau[1:, None]
    return np.max(np.abs(linear.reshape(-1, n) - tau_fine), axis=0)


def period_for_tolerance(
    model: RobotModel,
    trajectory: Trajectory,
    tolerance: npt.ArrayLike,
    *,
    max_period: float = DEFAULT_RESAMPLE_PERIOD,
    min_period: float = 0.001,
    gravity: Sequence[float] = GRAVITY,
    friction: Friction | None = None,
    compensate: Iterable[str] = COMPENSABLE,
    wrenches: Mapping[str, Sequence[float]] | None = None,
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
    law: dict[str, Any] = {
        "gravity": gravity,
        "friction": friction,
        "compensate": compensate,
        "wrenches": wrenches,
    }
    sampler = sampler_of(trajectory)
    period = float(max_period)
    for _ in range(8):
        error = interpolation_error(model, sampler, period, **law)
        worst = float(np.max(error / tol))
        if worst <= 1.0 or period <= min_period:
            return period, error
        period = max(min_period, 0.9 * period / np.sqrt(worst))
    return period, interpolation_error(model, sampler, period, **law)
