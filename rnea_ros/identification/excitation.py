"""A multi-sine joint trajectory for exciting and tracking tests (no ROS).

Per joint j: q_j(t) = home_j + w(t) Σ_k a_jk sin(2π f_jk t + φ_jk), 0 ≤ t ≤ duration, where the
window w rises from 0 to 1 over `ramp` seconds and falls back to 0 over the last `ramp` seconds
with a quintic smoothstep (w' = w'' = 0 at both ends of each ramp). So the trajectory starts and
ends at `home` at rest with zero acceleration, and q, q̇, q̈ are continuous. `design` keeps it
within position, velocity and acceleration limits; `within_effort_limits` then shrinks the
amplitudes until the model's efforts along it (rnea + friction) fit the effort limits, which
makes it an excitation for identification (large and fast, within every URDF limit).

Units: rad (or m), rad/s, rad/s², Hz, s; arrays (n,) or (n, K) in the caller's joint order.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from rnea_ros.algorithms.dynamics import rnea
from rnea_ros.errors import RneaError
from rnea_ros.friction.model import Friction, friction_torques
from rnea_ros.model.robot_model import RobotModel

_W1_MAX = 15.0 / 8.0  # max of the smoothstep's first derivative (per 1/ramp)
_W2_MAX = 10.0 / np.sqrt(3.0)  # max |second derivative| (per 1/ramp²)


def _smoothstep(s: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """10s³ − 15s⁴ + 6s⁵ and its first two derivatives with respect to s, for s in [0, 1]."""
    s = np.clip(s, 0.0, 1.0)
    w = s**3 * (10 + s * (-15 + 6 * s))
    w1 = 30 * s**2 * (1 - s) ** 2
    w2 = 60 * s * (1 - s) * (1 - 2 * s)
    return w, w1, w2


@dataclass(frozen=True)
class MultiSine:
    """A windowed sum of sines per joint; see the module docstring."""

    home: np.ndarray  # (n,) rad or m
    amplitudes: np.ndarray  # (n, K) rad or m
    frequencies: np.ndarray  # (n, K) Hz
    phases: np.ndarray  # (n, K) rad
    duration: float  # s
    ramp: float  # s

    def __post_init__(self) -> None:
        home = np.asarray(self.home, dtype=float).reshape(-1)
        shape = (home.size, np.size(self.amplitudes) // max(home.size, 1))
        arrays = {}
        for name in ("amplitudes", "frequencies", "phases"):
            a = np.asarray(getattr(self, name), dtype=float)
            if a.ndim == 1:
                a = a[:, None]
            if a.shape != shape:
                raise RneaError(f"{name} must have shape {shape}, got {a.shape}")
            arrays[name] = a
        if not all(np.all(np.isfinite(a)) for a in (home, *arrays.values())):
            raise RneaError("home, amplitudes, frequencies and phases must be finite")
        if not (0 < 2 * self.ramp <= self.duration < np.inf):
            raise RneaError(f"need 0 < 2 ramp <= duration, got ramp {self.ramp}, duration {self.duration}")
        object.__setattr__(self, "home", home)
        for name, a in arrays.items():
            object.__setattr__(self, name, a)

    @property
    def nv(self) -> int:
        return self.home.size

    def window(self, t) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """w(t), ẇ (1/s), ẅ (1/s²) for times t (array)."""
        t = np.asarray(t, dtype=float)
        up = _smoothstep(t / self.ramp)
        down = _smoothstep((self.duration - t) / self.ramp)
        w = up[0] * down[0]
        w1 = (up[1] * down[0] - up[0] * down[1]) / self.ramp
        w2 = (up[2] * down[0] - 2 * up[1] * down[1] + up[0] * down[2]) / self.ramp**2
        return w, w1, w2

    def sample(self, t) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(q, q̇, q̈) at time(s) t in s: (n,) each for a scalar t, (N, n) for an array. Before 0
        and after `duration` the trajectory rests at home."""
        ts = np.atleast_1d(np.asarray(t, dtype=float))
        w, w1, w2 = (x[:, None] for x in self.window(ts))
        omega = 2 * np.pi * self.frequencies  # (n, K) rad/s
        arg = ts[:, None, None] * omega + self.phases  # (N, n, K)
        sin, cos = np.sin(arg), np.cos(arg)
        x = np.sum(self.amplitudes * sin, axis=-1)
        xd = np.sum(self.amplitudes * omega * cos, axis=-1)
        xdd = -np.sum(self.amplitudes * omega**2 * sin, axis=-1)
        q = self.home + w * x
        qd = w1 * x + w * xd
        qdd = w2 * x + 2 * w1 * xd + w * xdd
        if np.ndim(t) == 0:
            return q[0], qd[0], qdd[0]
        return q, qd, qdd

    def bounds(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Guaranteed bounds per joint on |q − home|, |q̇| and |q̈| over the whole trajectory."""
        a = np.abs(self.amplitudes)
        omega = 2 * np.pi * self.frequencies
        s, v, acc = a.sum(-1), (a * omega).sum(-1), (a * omega**2).sum(-1)
        r = self.ramp
        return s, _W1_MAX / r * s + v, _W2_MAX / r**2 * s + 2 * _W1_MAX / r * v + acc

    def points(self, rate: float) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Samples every 1/rate s from 0 to duration inclusive: times (N,), q, q̇, q̈ (N, n)."""
        if not (np.isfinite(rate) and rate > 0):
            raise RneaError(f"rate must be > 0 Hz, got {rate}")
        count = int(np.ceil(self.duration * rate - 1e-9))
        times = np.minimum(np.arange(count + 1) / rate, self.duration)
        return (times, *self.sample(times))


@dataclass(frozen=True)
class ExcitationOptions:
    """How `design` shapes a multi-sine; checked when made.

    duration, ramp: s (the window's rise and fall, module docstring); components: sines per
    joint; frequency_range: (low, high) Hz of their frequencies; max_amplitude: rad (or m)
    from home at most; position_margin: rad (or m) kept from every position limit;
    velocity_scale: the share of each velocity limit used; seed: of the frequencies, phases and
    amplitude mix (reproducible).
    """

    duration: float = 10.0
    ramp: float = 1.5
    components: int = 3
    frequency_range: tuple[float, float] = (0.15, 0.6)
    max_amplitude: float = 0.4
    position_margin: float = 0.1
    velocity_scale: float = 0.5
    seed: int = 0

    def __post_init__(self) -> None:
        if self.components < 1:
            raise RneaError("components must be >= 1")
        f_lo, f_hi = self.frequency_range
        if not (0 < f_lo <= f_hi < np.inf):
            raise RneaError(f"frequency_range must be 0 < low <= high, got {self.frequency_range}")


def design(
    home,
    lower,
    upper,
    velocity_limit,
    acceleration_limit,
    options: ExcitationOptions = ExcitationOptions(),
) -> MultiSine:
    """A multi-sine around `home` that provably stays within the limits, shaped by `options`.

    Every joint gets its own frequencies (in `options.frequency_range`, Hz), phases and amplitude
    mix (seeded, reproducible). Each joint's amplitudes are then scaled down until the bounds of
    `MultiSine.bounds` fit: |q − home| ≤ min(max_amplitude, room to the position limits less
    `position_margin`), |q̇| ≤ velocity_scale × velocity_limit, |q̈| ≤ acceleration_limit.
    Limits are per joint (infinite = none). ValueError when home is within the margin of a limit.
    """
    o = options
    home = np.asarray(home, dtype=float).reshape(-1)
    n = home.size
    lower, upper, vlim, alim = (
        np.broadcast_to(np.asarray(x, dtype=float), (n,))
        for x in (lower, upper, velocity_limit, acceleration_limit)
    )
    room = np.minimum(upper - o.position_margin - home, home - lower - o.position_margin)
    if np.any(room <= 0):
        j = int(np.argmin(room))
        raise RneaError(f"home of joint {j} ({home[j]:.4f}) is within {o.position_margin} of a limit")
    f_lo, f_hi = o.frequency_range
    components, duration, ramp = o.components, o.duration, o.ramp
    rng = np.random.default_rng(o.seed)
    frequencies = np.sort(rng.uniform(f_lo, f_hi, (n, components)), axis=1)
    phases = rng.uniform(0, 2 * np.pi, (n, components))
    mix = rng.uniform(0.5, 1.0, (n, components))
    mix /= mix.sum(axis=1, keepdims=True)  # Σ_k mix = 1: the position bound is the scale itself
    unit = MultiSine(home, mix, frequencies, phases, duration, ramp)
    s, v, a = unit.bounds()
    with np.errstate(divide="ignore"):
        scale = np.min(
            np.stack([np.minimum(room, o.max_amplitude) / s, o.velocity_scale * vlim / v, alim / a]), axis=0
        )
    return MultiSine(home, mix * scale[:, None], frequencies, phases, duration, ramp)


def peak_effort_ratio(
    motion: MultiSine, model: RobotModel, joints: np.ndarray, rest: np.ndarray, rate: float = 500.0
) -> tuple[float, int]:
    """Largest |τ| / effort limit along `motion` sampled at `rate` Hz, and its joint (model index):
    τ = rnea + friction of `model` (URDF friction), the trajectory driving model joints `joints`,
    the others at `rest` (model order, rad or m). Joints without a finite positive limit are
    not checked ((0.0, -1) when none is)."""
    t = np.linspace(0.0, motion.duration, int(np.ceil(motion.duration * rate)) + 1)
    q_path, qd_path, qdd_path = motion.sample(t)
    q = np.tile(np.asarray(rest, dtype=float), (t.size, 1))
    qd, qdd = np.zeros_like(q), np.zeros_like(q)
    q[:, joints], qd[:, joints], qdd[:, joints] = q_path, qd_path, qdd_path
    tau = rnea(model, q, qd, qdd) + friction_torques(Friction.from_model(model), qd)
    limit = model.effort_limit
    checked = np.isfinite(limit) & (limit > 0)
    if not checked.any():
        return 0.0, -1
    ratio = np.where(checked, np.abs(tau).max(axis=0) / np.where(checked, limit, 1.0), 0.0)
    worst = int(np.argmax(ratio))
    return float(ratio[worst]), worst


def within_effort_limits(
    motion: MultiSine,
    model: RobotModel,
    joints: np.ndarray,
    rest: np.ndarray,
    effort_scale: float = 1.0,
    iterations: int = 20,
) -> tuple[MultiSine, float]:
    """`motion` with every amplitude multiplied by the largest s ≤ 1 (bisection) for which the
    model's efforts along it (`peak_effort_ratio`) stay within effort_scale × the effort limits;
    (trajectory, s). ValueError naming the joint when even holding `home` needs more."""
    ratio, worst = peak_effort_ratio(motion, model, joints, rest)
    if ratio <= effort_scale:
        return motion, 1.0
    still = replace(motion, amplitudes=motion.amplitudes * 0.0)
    held, worst = peak_effort_ratio(still, model, joints, rest)
    if held > effort_scale:
        raise RneaError(
            f"holding the start pose needs {held:.3g} x the effort limit of "
            f"'{model.joint_names[worst]}' (effort_scale {effort_scale:g})"
        )
    lo, hi = 0.0, 1.0
    for _ in range(iterations):
        mid = 0.5 * (lo + hi)
        scaled = replace(motion, amplitudes=motion.amplitudes * mid)
        if peak_effort_ratio(scaled, model, joints, rest)[0] <= effort_scale:
            lo = mid
        else:
            hi = mid
    return replace(motion, amplitudes=motion.amplitudes * lo), lo
