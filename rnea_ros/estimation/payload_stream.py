"""Payload samples from the momentum observer, one per control cycle (no ROS): the external
joint torques r and their regressor in the load's parameters, filtered as the observer filters.

The observer (`rnea_ros.estimation.observer`) computes r_k = α r_{k−1} + (1 − α) x_k, α =
e^{−K_O Δt}, with x_k the difference quotient of the model's momentum less the trapezoid of the
known torques; a load the model lacks (its momentum J_Bᵀ I u, its bias J̇_Bᵀ I u − J_Bᵀ (u ×* I u)
+ J_Bᵀ I a_g, J_B the link's Jacobian in its own axes, u = J_B q̇ its twist, I the load's spatial
inertia, a_g gravity) enters x_k as

    x_k = −(J_Bᵀ Y_D(u))_k − (J_Bᵀ Y_D(u))_{k−1}) / Δt · π
          + [ ((J_B,k − J_B,k−1) / Δt)ᵀ ½ (Y_D(u_k) + Y_D(u_{k−1})) − ½ ((J_Bᵀ Y_Z)_k + (J_Bᵀ Y_Z)_{k−1}) ] π

(Y_D, Y_Z: `payload.momentum_regressor`, `payload.bias_regressor`; the observer's own difference
quotient and trapezoid; J̇_B by the difference of successive Jacobians). So r_k = W_k π with W
that same lag applied to those matrices, sample by sample, without any acceleration: the estimate
sees the load exactly as the observer does, lag included (10 to 20 ms at the usual gains, which
at 1 Hz of motion would otherwise be 6 to 13 % of the load's inertial wrench, and J's change over
the lag another ~1 %). The joints that move the link give the rows. One gain K_O for the whole
chain (with per-joint gains, the median).

The rotation check uses the load's apparent gravity b = v̇ + ω × v − Rᵀg (link axes), filtered
the same way. The filters run from the stream's first sample (after a reset: a model change, a
gap), started at rest on their first input; the first WARMUP_CONSTANTS / K_O seconds are not used
(the observer and these filters converge from their start). Each cycle only stores its sample;
the regressor and the lag are computed once per sample, when samples are asked for or, `eager`,
BATCH samples at a time. A ring buffer keeps the last `capacity` samples (older ones not yet
processed: the filters start again from the oldest held).

Units: s, rad, m, N, N m, 1/s.
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

from rnea_ros.algorithms.dynamics import GRAVITY
from rnea_ros.compiled.entry_points import LINK_JACOBIAN
from rnea_ros.errors import RneaError
from rnea_ros.estimation.payload import (
    DEFAULT_LIMITS,
    PayloadEstimate,
    PayloadLimits,
    ancestor_joints,
    bias_regressor,
    fit_payload,
    momentum_regressor,
    payload_parameters,
)
from rnea_ros.model.robot_model import Payload, RobotModel

__all__ = ["BATCH", "WARMUP_CONSTANTS", "PayloadStream", "lag", "lag_increments"]

WARMUP_CONSTANTS = 8.0  # observer time constants of samples before a span, for its filters


BLOCK = 30.0  # time constants per vectorised block of the lag (e^30 ≈ 1e13: no overflow, no loss)


def lag(t: np.ndarray, x: np.ndarray, gain: float, derivative: bool) -> np.ndarray:
    """The observer's discrete first-order lag over samples t (N,) of x (N, ...): s_k = α_k s_{k−1}
    + (1 − α_k) d_k, α_k = e^{−gain (t_k − t_{k−1})}, d_k the difference quotient (x_k − x_{k−1}) /
    Δt (derivative) or the trapezoid ½ (x_k + x_{k−1}); s_0 = d_1: the filter as if its input had
    been that for long (its error then decays as e^{−gain t} from the change of d)."""
    shape = (-1,) + (1,) * (x.ndim - 1)
    d = np.empty_like(x)
    if derivative:
        d[1:] = (x[1:] - x[:-1]) / np.diff(t).reshape(shape)
    else:
        d[1:] = 0.5 * (x[1:] + x[:-1])
    if x.shape[0] < 2:
        return np.zeros_like(x)
    return lag_increments(t, d, gain, d[1])


def lag_increments(t: np.ndarray, d: np.ndarray, gain: float, start: np.ndarray) -> np.ndarray:
    """s_k = α_k s_{k−1} + (1 − α_k) d_k (d_0 unused) from s_0 = `start`, vectorised in blocks of
    at most BLOCK time constants: s_k = e^{−L_k} (s_a + Σ_j e^{L_j} (1 − α_j) d_j), L the
    cumulative gain × time from the block's first sample a."""
    n = t.size
    out = np.empty_like(d)
    out[0] = start
    dt = np.diff(t)
    shape = (-1,) + (1,) * (d.ndim - 1)
    inc = (1.0 - np.exp(-gain * dt)).reshape(shape) * d[1:]
    decay = np.concatenate(([0.0], np.cumsum(gain * dt)))
    a = 0
    while a < n - 1:
        b = int(np.searchsorted(decay, decay[a] + BLOCK, side="right"))
        b = min(max(b, a + 2), n)
        rel = (decay[a + 1 : b] - decay[a]).reshape(shape)
        out[a + 1 : b] = np.exp(-rel) * (out[a] + np.cumsum(np.exp(rel) * inc[a : b - 1], axis=0))
        a = b - 1
    return out


BATCH = 50  # samples processed (regressor and lag) together while `eager`


class PayloadStream:
    """`update(t, q, qd, r)` once per cycle (model order; r: the observer's external torques);
    `estimate()` over the samples of a time span. The link must move with a joint of a model with
    a fixed root. Each cycle stores the link's Jacobian, velocity, gravity and r; the samples not
    processed yet get their regressor W and its lag when samples are asked for, or, `eager`, every
    BATCH samples as they come (while an estimation is under way: the cycle that estimates then
    only fits); the filters go on from the last processed sample."""

    def __init__(
        self, model: RobotModel, link: str, gain: float, capacity: int, *, gravity: npt.ArrayLike = GRAVITY
    ) -> None:
        frame = model.link_frame(link)
        if model.root_nv:
            raise RneaError("payload estimation needs a fixed root")
        if frame.body < 0:
            raise RneaError(f"link '{link}' is fixed to the root: no joint carries a payload there")
        if not (math.isfinite(gain) and gain > 0):
            raise RneaError(f"observer gain must be finite and > 0, got {gain!r}")
        if capacity < 2 * BATCH:
            raise RneaError(f"capacity must be at least {2 * BATCH} samples, got {capacity}")
        g = np.array(gravity, dtype=float).reshape(-1)
        if g.shape != (3,) or not np.isfinite(g).all() or not np.linalg.norm(g) > 0:
            raise RneaError(f"gravity must be 3 finite values, not zero, got {gravity!r}")
        self.model, self.link, self.gain, self.gravity = model, link, float(gain), g
        self.joints = ancestor_joints(model, link)
        k = self.joints.size
        self._tree = model.kernel_tree()
        self._data = model.create_data()
        self._point = np.array([frame.body, *frame.translation], dtype=float)
        self._frame_rotation = frame.rotation
        self._rot = np.empty(9)
        self._pos = np.empty(3 * model.nv)
        self._jac = np.empty(6 * model.nv)
        self.capacity = int(capacity)
        self._t = np.zeros(capacity)
        self._jb = np.zeros((capacity, 6, k))  # J_B, link axes
        self._g = np.zeros((capacity, 3))  # gravity, link axes
        self._qd = np.zeros((capacity, k))
        self._r = np.zeros((capacity, k))
        self._w = np.zeros((capacity, k, 10))  # W, once processed
        self._u = np.zeros((capacity, 3))  # direction of the lagged apparent gravity b, once processed
        self._ok = np.zeros(capacity, dtype=bool)  # processed, and past its filters' warm-up
        self.reset()

    @property
    def warmup(self) -> float:
        """Seconds after a reset whose samples are not used (the observer and these filters
        converge from their start)."""
        return WARMUP_CONSTANTS / self.gain

    eager = False  # process every BATCH samples as they come (else when samples are asked for)

    def reset(self) -> None:
        """Forget every sample (after an observer restart)."""
        self._count = 0  # samples since the reset; the newest at (count − 1) % capacity
        self._done = 0  # samples processed (W and the direction of b) or skipped
        self._ok[:] = False
        self._last = -math.inf
        self._start = math.nan  # time of the first sample since the reset
        # the last processed sample's t, J_B, Y_D, J_Bᵀ Y_D, J_Bᵀ Y_Z, v, ω × v − g and the
        # filters' state there (lag of d(J_Bᵀ Y_D)/dt, of the trapezoid part, of dv/dt, of ω × v − g)
        self._prev: tuple | None = None

    def __len__(self) -> int:
        return min(self._count, self.capacity)

    def update(self, t: float, q: np.ndarray, qd: np.ndarray, residual: np.ndarray) -> None:
        """One cycle: the state (model order) and the observer's r (model order) at time t (s); a
        time that does not advance is ignored."""
        if not t > self._last:
            return
        if self._count == 0:
            self._start = t
        self._last = t
        self._ok[self._count % self.capacity] = False
        LINK_JACOBIAN.call(self._tree, q, self._data.ws, self._point, self._pos, self._rot, self._jac)
        jac = self._jac.reshape(6, -1)[:, self.joints]
        rt = (self._rot.reshape(3, 3) @ self._frame_rotation).T  # root → link axes
        i = self._count % self.capacity
        jb = self._jb[i]
        np.matmul(rt, jac[:3], out=jb[:3])
        np.matmul(rt, jac[3:], out=jb[3:])
        np.matmul(rt, self.gravity, out=self._g[i])
        self._t[i] = t
        self._qd[i] = qd[self.joints]
        self._r[i] = residual[self.joints]
        self._count += 1
        if self.eager and self._count - self._done >= BATCH:
            self._process()

    def skip_before(self, t: float) -> None:
        """Samples older than `t` (s) not processed yet never will be: the filters start again from
        the first one at or after it (what an estimation about to start needs, without the backlog
        of an idle stretch)."""
        first = max(self._done, self._count - self.capacity)
        if first >= self._count or self._t[first % self.capacity] >= t:
            return
        times = self._t[np.arange(first, self._count) % self.capacity]
        skip = first + int(np.searchsorted(times, t))
        self._prev, self._done = None, skip  # the skipped ones stay not ok
        if skip < self._count:
            self._start = float(self._t[skip % self.capacity])

    def _process(self) -> None:
        """W and the direction of b for the samples not processed yet (see the module docstring),
        the filters going on from the last processed sample (the first two start them)."""
        first = max(self._done, self._count - self.capacity)
        if first > self._done:  # samples overwritten before processing: the filters start again
            self._prev, self._done = None, first
            self._start = float(self._t[first % self.capacity])
        if self._count - first < (1 if self._prev is not None else 2):
            return
        index = np.arange(first, self._count) % self.capacity
        t, jb, qd, g = self._t[index], self._jb[index], self._qd[index], self._g[index]
        u = np.einsum("nij,nj->ni", jb, qd)
        v, w = u[:, :3], u[:, 3:]
        yd = momentum_regressor(v, w)
        jt = np.transpose(jb, (0, 2, 1))
        a = jt @ yd  # J_Bᵀ Y_D
        z = jt @ bias_regressor(v, w, g)  # J_Bᵀ Y_Z
        bz = np.cross(w, v) - g
        prev = self._prev
        if prev is not None:  # the last processed sample ahead of these
            t = np.concatenate(([prev[0]], t))
            jb, yd, a, z = (
                np.concatenate((p[None], x)) for p, x in zip(prev[1:5], (jb, yd, a, z), strict=True)
            )
            v, bz = np.concatenate((prev[5][None], v)), np.concatenate((prev[6][None], bz))
        dt = np.diff(t)
        da = (a[1:] - a[:-1]) / dt[:, None, None]
        dx = np.transpose((jb[1:] - jb[:-1]) / dt[:, None, None], (0, 2, 1)) @ (0.5 * (yd[1:] + yd[:-1]))
        dx -= 0.5 * (z[1:] + z[:-1])
        dv = (v[1:] - v[:-1]) / dt[:, None]
        db = 0.5 * (bz[1:] + bz[:-1])
        # the four filters as one (N, 146): their state at the last processed sample, or at rest on
        # their first input (s_0 = d_1)
        m, k = dv.shape[0], self.joints.size
        d = np.concatenate((da.reshape(m, -1), dx.reshape(m, -1), dv, db), axis=1)
        state = d[0] if prev is None else prev[7]
        lagged = lag_increments(t, np.concatenate((state[None], d)), self.gain, state)
        out = lagged[1:] if prev is not None else lagged
        n_a = 10 * k
        self._w[index] = (out[:, n_a : 2 * n_a] - out[:, :n_a]).reshape(-1, k, 10)
        self._ok[index] = self._t[index] >= self._start + self.warmup
        b = out[:, 2 * n_a : 2 * n_a + 3] + out[:, 2 * n_a + 3 :]
        self._u[index] = b / np.maximum(np.linalg.norm(b, axis=1, keepdims=True), 1e-300)
        self._prev = (t[-1], jb[-1], yd[-1], a[-1], z[-1], v[-1], bz[-1], lagged[-1].copy())
        self._done = self._count

    def _order(self) -> np.ndarray:
        n = len(self)
        if n < self.capacity:
            return np.arange(n)
        return (np.arange(n) + self._count) % self.capacity

    def times(self) -> np.ndarray:
        """Times of the samples held, oldest first."""
        return self._t[self._order()]

    def span(self) -> float:
        """Seconds an estimate could use now: from the oldest usable sample (processed and past
        its filters' warm-up, or, not processed yet, past the warm-up from the oldest held or the
        filters' last start) to the newest held."""
        order = self._order()
        if order.size < 2:
            return 0.0
        t = self._t[order]
        first = max(float(t[0]), self._start) + self.warmup
        ok = t[self._ok[order]]
        if ok.size:
            first = min(first, float(ok[0]))
        return max(float(t[-1]) - first, 0.0)

    def samples(self, since: float = -math.inf) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(t (N,), W (N, k, 10), r (N, k), directions of b (N, 3)) of the usable samples held
        from time `since` (s)."""
        self.skip_before(since - self.warmup)
        self._process()
        order = self._order()
        keep = order[self._ok[order] & (self._t[order] >= since)]
        return self._t[keep], self._w[keep], self._r[keep], self._u[keep]

    def estimate(
        self,
        since: float = -math.inf,
        current: Payload | None = None,
        limits: PayloadLimits = DEFAULT_LIMITS,
    ) -> PayloadEstimate:
        """The payload over the samples from time `since` (s), adding `current`, the payload the
        model carries on this link (the observer sees only what the model misses). PayloadRefused
        with the reason (`payload.fit_payload`)."""
        _, w, r, directions = self.samples(since)
        targets = r + w @ payload_parameters(current)
        return fit_payload(w, targets, directions, self.link, observed=r, limits=limits)
