"""Sampling a joint trajectory (times, positions [, velocities [, accelerations]]) like
ros2_control's joint_trajectory_controller: linear between positions only, cubic Hermite when
velocities are given, quintic when accelerations are given too. Before the first point the
state at start-up is joined to it; after the last point its position is held at rest.

Times are seconds from the trajectory start; positions in rad or m, in the caller's joint order.
"""

from __future__ import annotations

from bisect import bisect_right

import numpy as np

from rnea_ros.errors import RneaError


def _matrix(value, name: str, shape: tuple[int, int]) -> np.ndarray:
    try:
        a = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise RneaError(f"{name} must have shape {shape} (ragged or not numbers)") from None
    if a.shape != shape:
        raise RneaError(f"{name} must have shape {shape}, got {a.shape}")
    if not np.all(np.isfinite(a)):
        raise RneaError(f"{name} contains NaN or Inf")
    return a


def _coefficients(q0, v0, a0, q1, v1, a1, dt: np.ndarray) -> np.ndarray:
    """Quintic coefficients c0..c5 (6, segments, n) matching position, velocity, acceleration."""
    dt = dt[:, None]
    dq = q1 - q0
    c3 = (20 * dq - (8 * v1 + 12 * v0) * dt - (3 * a0 - a1) * dt**2) / (2 * dt**3)
    c4 = (-30 * dq + (14 * v1 + 16 * v0) * dt + (3 * a0 - 2 * a1) * dt**2) / (2 * dt**4)
    c5 = (12 * dq - 6 * (v1 + v0) * dt - (a0 - a1) * dt**2) / (2 * dt**5)
    return np.stack([q0, v0, a0 / 2, c3, c4, c5])


def _cubic(q0, v0, q1, v1, dt: np.ndarray) -> np.ndarray:
    dt = dt[:, None]
    c2 = (3 * (q1 - q0) - (2 * v0 + v1) * dt) / dt**2
    c3 = (2 * (q0 - q1) + (v0 + v1) * dt) / dt**3
    zero = np.zeros_like(q0)
    return np.stack([q0, v0, c2, c3, zero, zero])


def _linear(q0, q1, dt: np.ndarray) -> np.ndarray:
    zero = np.zeros_like(q0)
    return np.stack([q0, (q1 - q0) / dt[:, None], zero, zero, zero, zero])


class TrajectorySampler:
    """Piecewise-polynomial desired state q, q̇, q̈ over time (immutable once built)."""

    def __init__(
        self,
        times,
        positions,
        velocities=None,
        accelerations=None,
        start: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None,
    ) -> None:
        """`times` (K,) strictly increasing, ≥ 0; positions etc. (K, n). `start` = (q, q̇, q̈) at
        t = 0, joined to the first point when times[0] > 0 (otherwise the first point is held
        until its time)."""
        t = np.asarray(times, dtype=float).reshape(-1)
        if t.size == 0:
            raise RneaError("a trajectory needs at least one point")
        if not np.all(np.isfinite(t)) or t[0] < 0:
            raise RneaError("time_from_start must be finite and >= 0")
        if np.any(np.diff(t) <= 0):
            raise RneaError("time_from_start must be strictly increasing")
        n = len(positions[0]) if len(positions) else 0
        q = _matrix(positions, "positions", (t.size, n))
        v = None if velocities is None else _matrix(velocities, "velocities", q.shape)
        a = None if accelerations is None else _matrix(accelerations, "accelerations", q.shape)
        if a is not None and v is None:
            raise RneaError("accelerations need velocities")
        if start is not None and t[0] > 0:
            q0, v0, a0 = (_matrix(np.reshape(x, (1, -1)), "start", (1, n)) for x in start)
            t = np.concatenate([[0.0], t])
            q = np.concatenate([q0, q])
            v = None if v is None else np.concatenate([v0, v])
            a = None if a is None else np.concatenate([a0, a])
        self.times = t
        self.final = q[-1].copy()
        self.nv = n
        dt = np.diff(t)
        if dt.size == 0:
            self._coeffs = np.zeros((6, 0, n))
        elif a is not None and v is not None:  # accelerations come with velocities (checked)
            self._coeffs = _coefficients(q[:-1], v[:-1], a[:-1], q[1:], v[1:], a[1:], dt)
        elif v is not None:
            self._coeffs = _cubic(q[:-1], v[:-1], q[1:], v[1:], dt)
        else:
            self._coeffs = _linear(q[:-1], q[1:], dt)
        self._first = q[0].copy()
        if not np.all(np.isfinite(self._coeffs)):
            raise RneaError("the trajectory's spline overflows (positions, velocities or times too extreme)")
        # for sample_at: segment coefficients (segments, 6, n) contiguous, times as floats, and
        # the states before the first and after the last point (read-only, returned as they are)
        self._rows = np.ascontiguousarray(self._coeffs.transpose(1, 0, 2))
        self._time_list = t.tolist()
        zero = np.zeros(n)
        self._before = np.stack([self._first, zero, zero])
        self._after = np.stack([self.final, zero, zero])
        self._before.flags.writeable = self._after.flags.writeable = False

    def rate_bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """Upper bounds of |q̇| and |q̈| on each segment between points, (segments, n) each:
        Σ k |c_k| dt^(k-1) and Σ k (k-1) |c_k| dt^(k-2) over the segment's coefficients c_k (the
        join from a start state included)."""
        c = np.abs(self._coeffs)  # (6, segments, n)
        dt = np.diff(self.times)[:, None]
        with np.errstate(over="ignore", invalid="ignore"):
            velocity = sum(k * c[k] * dt ** (k - 1) for k in range(1, 6))
            acceleration = sum(k * (k - 1) * c[k] * dt ** (k - 2) for k in range(2, 6))
        return np.asarray(velocity, dtype=float), np.asarray(acceleration, dtype=float)

    @property
    def duration(self) -> float:
        """Time of the last point, s."""
        return float(self.times[-1])

    def sample(self, t, *, inclusive: bool = False) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(q, q̇, q̈) at time(s) t: shape (n,) for a scalar t, (N, n) for an array. At exactly
        the last point's time the hold starts (q̇ = q̈ = 0), unless `inclusive`: then the last
        segment is evaluated at its end (the last point as the spline reaches it)."""
        ts = np.atleast_1d(np.asarray(t, dtype=float))
        q = np.empty((ts.size, self.nv))
        qd = np.zeros_like(q)
        qdd = np.zeros_like(q)
        seg = np.searchsorted(self.times, ts, side="right") - 1
        if inclusive and len(self.times) > 1:
            seg[ts == self.times[-1]] = len(self.times) - 2
        before = ts < self.times[0]
        after = seg >= len(self.times) - 1
        inside = ~(before | after)
        q[before] = self._first
        q[after] = self.final
        if np.any(inside):
            k = seg[inside]
            s = (ts[inside] - self.times[k])[:, None]
            c = self._coeffs[:, k]
            q[inside] = c[0] + s * (c[1] + s * (c[2] + s * (c[3] + s * (c[4] + s * c[5]))))
            qd[inside] = c[1] + s * (2 * c[2] + s * (3 * c[3] + s * (4 * c[4] + s * 5 * c[5])))
            qdd[inside] = 2 * c[2] + s * (6 * c[3] + s * (12 * c[4] + s * 20 * c[5]))
        if np.ndim(t) == 0:
            return q[0], qd[0], qdd[0]
        return q, qd, qdd

    def sample_at(self, t: float) -> np.ndarray:
        """(3, n): rows q, q̇, q̈ at one time t (s), as `sample` gives them; the fast path for a
        control cycle (a few µs). Before the first and after the last point the array returned is
        shared and read-only."""
        times = self._time_list
        if t < times[0]:
            return self._before
        k = bisect_right(times, t) - 1
        if k >= len(times) - 1:
            return self._after
        s = t - times[k]
        s2 = s * s
        s3 = s2 * s
        basis = np.array(
            [
                [1.0, s, s2, s3, s3 * s, s3 * s2],
                [0.0, 1.0, 2.0 * s, 3.0 * s2, 4.0 * s3, 5.0 * s3 * s],
                [0.0, 0.0, 2.0, 6.0 * s, 12.0 * s2, 20.0 * s3],
            ]
        )
        return basis @ self._rows[k]
