"""joint_trajectory_controller's law with an effort command interface only (ros2_controllers JTC
>= 4.22, Jazzy), for the simulator; no ROS here.

At every controller update (time t, measured q, q̇ of the controller's joints):

    u = ff_velocity_scale · q̇_d(t + period) + τ_d(t + period) + p e + i Σ e dt + d ė,
    e = q_d(t) − q,  ė = q̇_d(t) − q̇

as JTC computes it: the error from the desired state at t (its `state_desired_`), the
feedforward terms from the sample one update ahead (its `command_next_`). q_d, q̇_d follow JTC's
spline through the trajectory's points (linear / cubic / quintic, `TrajectorySampler`); τ_d is
interpolated linearly between the points' `effort` (0 when the trajectory has none). The integral
accumulates i e dt, clamped to ±i_clamp (control_toolbox's Pid).

A received trajectory replaces the running one at the next update, as in JTC: its points are at
start + time_from_start (start: the message stamp; 0 = on arrival), and when its first point lies
in the future, the measured state at that update is joined to it by the spline. Over that join
τ_d goes linearly from the last command u (JTC's current state takes its `effort` from the effort
command interface: the whole last command, PID included) to the first point's effort, or is 0
when the points carry none (JTC interpolates efforts only between two points that both have
them). After the last point the last point is held (velocity 0, its effort). Before any
trajectory the controller holds the position it was activated at (`hold`), τ_d = 0. Checked
against the real JTC (ros2_controllers 4.42.1) on the same states: test_ros2_control_jtc.py. Not
modelled: tolerances and goal checks, angle wrap-around of continuous joints, other command
interfaces, output clamps (`u_clamp_*`) and anti-windup strategies other than the legacy one.

Arrays (m,) in the controller's joint order; s, rad or m, N m or N.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from rnea_ros.trajectory.sampling import TrajectorySampler

GAIN_NAMES = ("p", "i", "d", "i_clamp", "ff_velocity_scale")


@dataclass(frozen=True)
class Gains:
    """Per-joint gains as JTC's `gains.<joint>.p/i/d/i_clamp/ff_velocity_scale` (arrays (m,))."""

    p: np.ndarray  # N m/rad (or N/m)
    i: np.ndarray  # N m/(rad s)
    d: np.ndarray  # N m s/rad
    i_clamp: np.ndarray  # N m, bound of the integral term (inf: none)
    ff_velocity_scale: np.ndarray  # N m s/rad, feedforward on the desired velocity

    @classmethod
    def of(cls, m: int, **values: npt.ArrayLike) -> Gains:
        """Gains for m joints: each a scalar or (m,) values; missing ones 0 (i_clamp: inf)."""
        unknown = set(values) - set(GAIN_NAMES)
        if unknown:
            raise ValueError(f"gains: unknown {sorted(unknown)}, expected {GAIN_NAMES}")
        out = {}
        for name in GAIN_NAMES:
            default = np.inf if name == "i_clamp" else 0.0
            try:
                a = np.broadcast_to(np.asarray(values.get(name, default), dtype=float), (m,)).copy()
            except ValueError:
                raise ValueError(f"gains.{name} must be one value or {m}") from None
            if np.any(np.isnan(a)) or np.any(a < 0):
                raise ValueError(f"gains.{name} must be >= 0")
            out[name] = a
        return cls(**out)


class _Active:
    """A trajectory whose time 0 is `base` (controller time, s)."""

    def __init__(self, base: float, sampler: TrajectorySampler, times: np.ndarray, efforts: np.ndarray):
        self.base, self.sampler, self.times, self.efforts = base, sampler, times, efforts

    def sample(self, t: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(q_d, q̇_d, τ_d) at controller time t."""
        s = t - self.base
        q, qd, _ = self.sampler.sample(s)
        times, eff = self.times, self.efforts
        if s >= times[-1]:
            return q, qd, eff[-1].copy()
        if s <= times[0]:
            return q, qd, eff[0].copy()
        k = int(np.searchsorted(times, s, side="right")) - 1
        alpha = (s - times[k]) / (times[k + 1] - times[k])
        return q, qd, (1 - alpha) * eff[k] + alpha * eff[k + 1]


class JointTrajectoryController:
    """JTC with an effort command interface for `m` joints (see the module docstring)."""

    def __init__(self, m: int, gains: Gains, period: float) -> None:
        if not (np.isfinite(period) and period > 0):
            raise ValueError(f"period must be > 0 s, got {period}")
        if gains.p.shape != (m,):
            raise ValueError(f"gains must have {m} joints, got {gains.p.size}")
        self.m, self.gains, self.period = m, gains, float(period)
        self.integral = np.zeros(m)  # the integral term, N m
        self.active: _Active  # set by hold() below, never None afterwards
        self.pending: tuple | None = None  # (start, times, points) of a trajectory not yet taken
        self.last_command = np.zeros(m)  # u of the last update
        self.hold(np.zeros(m))

    def hold(self, q: npt.ArrayLike) -> None:
        """Hold position q at rest (what JTC does on activation), τ_d = 0; drops trajectories."""
        q = np.asarray(q, dtype=float).reshape(self.m)
        self.active = _Active(0.0, TrajectorySampler([0.0], [q]), np.zeros(1), np.zeros((1, self.m)))
        self.pending = None

    def receive(
        self,
        start: float,
        times: npt.ArrayLike,
        positions: npt.ArrayLike,
        velocities: npt.ArrayLike | None = None,
        accelerations: npt.ArrayLike | None = None,
        efforts: npt.ArrayLike | None = None,
    ) -> None:
        """A trajectory (points (K, m) at controller times start + times) that replaces the
        running one at the next update; ValueError for a malformed one (nothing changes then)."""
        times = np.asarray(times, dtype=float).reshape(-1)
        TrajectorySampler(times, positions, velocities, accelerations)  # validates
        if efforts is not None:
            efforts = np.asarray(efforts, dtype=float)
            if efforts.shape != (times.size, self.m) or not np.all(np.isfinite(efforts)):
                raise ValueError(f"efforts must be {times.size} x {self.m} finite values")
        if not np.isfinite(start):
            raise ValueError("start must be finite")
        self.pending = (float(start), times, (positions, velocities, accelerations, efforts))

    def _take(self, t: float, q: np.ndarray, qd: np.ndarray) -> None:
        """Make the pending trajectory the active one at controller time t."""
        assert self.pending is not None  # only called by update() when a trajectory is pending
        start, times, (p, v, a, e) = self.pending
        self.pending = None
        eff = np.zeros((times.size, self.m)) if e is None else np.asarray(e, dtype=float)
        if start + times[0] > t:  # first point in the future: join the measured state to it
            rel = start + times - t
            sampler = TrajectorySampler(rel, p, v, a, start=(q, qd, np.zeros(self.m)))
            before = np.zeros(self.m) if e is None else self.last_command
            self.active = _Active(t, sampler, np.concatenate([[0.0], rel]), np.vstack([before, eff]))
        else:
            self.active = _Active(start, TrajectorySampler(times, p, v, a), times, eff)

    def update(self, t: float, q: npt.ArrayLike, qd: npt.ArrayLike) -> np.ndarray:
        """The effort command u (m,) for the measured state at controller time t (one update of
        `period` s)."""
        q, qd = np.asarray(q, dtype=float), np.asarray(qd, dtype=float)
        if self.pending is not None:
            self._take(t, q, qd)
        q_d, qd_d, _ = self.active.sample(t)  # JTC's state_desired_
        _, qd_next, tau_next = self.active.sample(t + self.period)  # JTC's command_next_
        g = self.gains
        self.integral = np.clip(self.integral + g.i * (q_d - q) * self.period, -g.i_clamp, g.i_clamp)
        u = g.ff_velocity_scale * qd_next + tau_next + g.p * (q_d - q) + self.integral + g.d * (qd_d - qd)
        self.last_command = u
        return u.copy()


__all__ = ["GAIN_NAMES", "Gains", "JointTrajectoryController"]
