"""External joint torques from measured efforts: the generalised-momentum observer (De Luca and
Mattone 2003/2005; Haddadin et al. 2017), and the tip wrench that explains them.

Convention. τ_ext is the torque the environment applies to the joints:

    M q̈ + C q̇ + g = τ_m + τ_ext,    τ_m = τ_measured − τ_friction(q̇)

A wrench F that a link exerts on its environment (the guide's convention, as in `rnea`'s
`wrenches`: τ = M q̈ + c + g + Jᵀ F) gives τ_ext = −Jᵀ F. A hand pushing the link with force f
(the environment on the link) is F = −f, τ_ext = Jᵀ f.

Observer. With p = M q̇ and ṗ = τ_m + Cᵀ q̇ − g + τ_ext,

    r(t) = K_O [p(t) − p(0) − ∫₀ᵗ (τ_m + Cᵀ q̇ − g + r) ds],   so   ṙ = K_O (τ_ext − r):

r follows τ_ext through a first-order lag of gain K_O (rad/s, per joint), with no acceleration
and no force sensor. Discretisation, for a measured (variable) period Δt: the known part is
integrated with the trapezoidal rule, y_k = p_k − p_0 − ∫ (τ_m + Cᵀ q̇ − g), and the lag exactly,
taking ẏ constant over the step:

    r_k = e^{−K_O Δt} r_{k−1} + (1 − e^{−K_O Δt}) (y_k − y_{k−1}) / Δt

which is stable for any Δt and reproduces e^{−K_O t} exactly at the samples for a step.
p and Cᵀ q̇ come from `rnea_ros.estimation.momentum` (O(n), compiled).

`effort_includes_gravity=False` is for drivers that report efforts with the gravity torque taken
out (τ_measured = τ − g(q)): g(q) is then added back.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from rnea_ros.algorithms.dynamics import gravity_torques, jacobian
from rnea_ros.compiled.entry_points import DAMPED_WRENCH, LINK_JACOBIAN, OBSERVER_STEP
from rnea_ros.compiled.kernels.layout import OK, packed_slices
from rnea_ros.compiled.kernels.momentum_observer import (
    OB_DT,
    OB_FIRST,
    OB_FRICTION,
    OB_GRAVITY,
    OB_SIZE,
    OB_SMOOTHING,
    OR_COULOMB,
    OR_GAIN,
    OR_RESIDUAL,
    OR_ROWS,
    OR_STATIC,
    OR_STRIBECK,
    OR_VISCOUS,
)
from rnea_ros.errors import RneaError
from rnea_ros.estimation.momentum import S_STRIDE, momentum_terms
from rnea_ros.friction.model import Friction, friction_torques
from rnea_ros.model.robot_model import GRAVITY, RobotModel

__all__ = ["MomentumObserver", "TipWrench", "observe", "tip_wrench"]


def _gain(gain: npt.ArrayLike, n: int) -> np.ndarray:
    g = (
        np.broadcast_to(np.asarray(gain, dtype=float), (n,)).copy()
        if np.ndim(gain) == 0
        else np.asarray(gain, dtype=float)
    )
    if g.shape != (n,) or not np.all(np.isfinite(g)) or np.any(g <= 0):
        raise RneaError(
            f"observer gain must be one value or {n} values, finite and > 0 (rad/s), got {gain!r}"
        )
    return g


class MomentumObserver:
    """Streaming momentum observer: `update(t, q, qd, tau_measured)` once per sample returns the
    estimate r of τ_ext (n,), see the module docstring. The first sample only initialises (r = 0);
    a sample whose time does not advance is ignored (the last r is returned). One compiled step
    per sample (`kernels.momentum_observer.observer_step_kernel`): momentum, gravity, friction and the lag."""

    def __init__(
        self,
        model: RobotModel,
        gain: npt.ArrayLike,
        *,
        friction: Friction | None = None,
        effort_includes_gravity: bool = True,
        gravity: npt.ArrayLike = GRAVITY,
    ) -> None:
        n = model.nv
        self.model = model
        # the compiled step's tables: the model's packed record (the tree, this observer's gravity,
        # its own workspace), the per-joint table (OR_*: friction, gain, state) and the options
        self._record = model.kernel_record.copy()
        self._gravity = self._record[packed_slices(model.njoints)[1]]
        self._table = np.zeros((OR_ROWS, n))
        self._scratch = np.empty(n * S_STRIDE + 2 * n)
        self._options = np.zeros(OB_SIZE)
        self.set_gain(gain)
        self.configure(friction, effort_includes_gravity, gravity)
        self.residual = self._table[OR_RESIDUAL]
        self.reset()

    def reset(self) -> None:
        """Forget the history: the next sample initialises, r = 0."""
        self.residual[:] = 0.0
        self._t: float | None = None

    def set_gain(self, gain: npt.ArrayLike) -> None:
        """New K_O (one value or per joint), effective from the next sample; keeps the state."""
        self.gain = _gain(gain, self.model.nv)
        self._table[OR_GAIN] = self.gain

    def configure(
        self, friction: Friction | None, effort_includes_gravity: bool, gravity: npt.ArrayLike = GRAVITY
    ) -> None:
        """Friction subtracted from the measured effort (None: none), whether that effort includes
        the gravity torque, and gravity (root frame, m/s²); keeps the state."""
        n = self.model.nv
        self.friction = friction
        self.effort_includes_gravity = bool(effort_includes_gravity)
        g = np.array(gravity, dtype=float).reshape(-1)
        if g.shape != (3,) or not np.all(np.isfinite(g)):
            raise RneaError(f"gravity must be 3 finite values, got {gravity!r}")
        self.gravity = g
        self._gravity[:] = g
        opts = self._options
        opts[OB_GRAVITY] = 1.0 if self.effort_includes_gravity else 0.0
        opts[OB_FRICTION] = 0.0 if friction is None else 1.0
        if friction is not None:
            if friction.viscous.size != n:
                raise RneaError(f"friction has {friction.viscous.size} joints, the model {n}")
            table = self._table
            table[OR_VISCOUS] = friction.viscous
            table[OR_COULOMB] = friction.coulomb
            table[OR_STATIC] = friction.coulomb if friction.static is None else friction.static
            table[OR_STRIBECK] = np.broadcast_to(np.asarray(friction.stribeck_velocity, dtype=float), (n,))
            opts[OB_SMOOTHING] = friction.smoothing_velocity

    def update(self, t: float, q: np.ndarray, qd: np.ndarray, tau_measured: np.ndarray) -> np.ndarray:
        """r at time t (s) from the state and measured effort (model order); returns
        self.residual (updated in place by the next call: copy it to keep it)."""
        opts = self._options
        t = float(t)
        if self._t is None:
            opts[OB_FIRST], opts[OB_DT] = 1.0, 0.0
        else:
            dt = t - self._t
            if not dt > 0.0:
                return self.residual
            opts[OB_FIRST], opts[OB_DT] = 0.0, dt
        q, qd, tau = (
            _vector(x, name, self.model.nv) for x, name in ((q, "q"), (qd, "qd"), (tau_measured, "tau"))
        )
        status = OBSERVER_STEP.call(self._record, q, qd, tau, self._table, self._scratch, opts)
        if status != OK:
            self.reset()
            raise RneaError(
                "observer: q, qd or tau_measured is NaN or Inf, or the result overflowed (restarted)"
            )
        self._t = t
        return self.residual


def _vector(x: npt.ArrayLike, name: str, n: int) -> np.ndarray:
    if type(x) is np.ndarray and x.dtype == np.float64 and x.shape == (n,):
        return x
    a = np.asarray(x, dtype=float)
    if a.shape != (n,):
        raise RneaError(f"{name} must have {n} values, got shape {a.shape}")
    return a


def observe(
    model: RobotModel,
    t: npt.ArrayLike,
    q: npt.ArrayLike,
    qd: npt.ArrayLike,
    tau_measured: npt.ArrayLike,
    gain: npt.ArrayLike,
    *,
    friction: Friction | None = None,
    effort_includes_gravity: bool = True,
    gravity: npt.ArrayLike = GRAVITY,
) -> np.ndarray:
    """The observer over recorded samples: t (N,), q, qd, tau_measured (N, n) → r (N, n); the same
    numbers as `MomentumObserver.update` sample by sample (times must increase)."""
    t = np.asarray(t, dtype=float)
    q, qd, tau = (np.atleast_2d(np.asarray(x, dtype=float)) for x in (q, qd, tau_measured))
    n = model.nv
    if not (q.shape == qd.shape == tau.shape == (t.size, n)):
        raise RneaError(
            f"observe: t (N,), q, qd, tau_measured (N, {n}) expected, "
            f"got {t.shape}, {q.shape}, {qd.shape}, {tau.shape}"
        )
    if t.size > 1 and not np.all(np.diff(t) > 0):
        raise RneaError("observe: times must increase strictly")
    gain = _gain(gain, n)
    data = model.create_data()
    scratch = np.empty(n * S_STRIDE)
    p = np.empty((t.size, n))
    ctqd = np.empty((t.size, n))
    for i in range(t.size):
        momentum_terms(model, q[i], qd[i], data=data, scratch=scratch, out=(p[i], ctqd[i]))
    known = ctqd + tau
    if effort_includes_gravity:
        known -= gravity_torques(model, q, gravity=gravity)
    if friction is not None:
        known -= friction_torques(friction, qd)
    r = np.zeros((t.size, n))
    if t.size < 2:
        return r
    dt = np.diff(t)[:, None]
    rate = (p[1:] - p[:-1] - 0.5 * dt * (known[1:] + known[:-1])) / dt
    a = np.exp(-gain * dt)
    for i in range(1, t.size):
        r[i] = a[i - 1] * r[i - 1] + (1.0 - a[i - 1]) * rate[i - 1]
    return r


class TipWrench:
    """`tip_wrench` for one link, compiled Jacobian and preallocated: for a control cycle.
    `__call__(q, tau_ext)` → (F root axes (6,), the link's rotation in the root frame (3, 3))."""

    def __init__(self, model: RobotModel, link: str, damping: float = 1e-3) -> None:
        frame = model.link_frame(link)
        self.model, self.link, self.damping = model, link, float(damping)
        self._point = np.array([max(frame.body, 0), *frame.translation], dtype=float)
        self._fixed = frame.body < 0
        self._frame_rotation = frame.rotation
        self._data = model.create_data()
        self._rot = np.empty(9)
        self._pos = np.empty(3 * model.nv)
        self._jac = np.empty(6 * model.nv)
        self._tree = model.kernel_tree()
        self._damping = np.array([self.damping])
        self._a = np.empty(36)

    def __call__(self, q: np.ndarray, tau_ext: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        if self._fixed:  # a link fixed to the root: no joint moves it, no wrench can be seen
            return np.zeros(6), self._frame_rotation.copy()
        n = self.model.nv
        q = _vector(q, "q", n)
        tau_ext = _vector(tau_ext, "tau_ext", n)
        LINK_JACOBIAN.call(self._tree, q, self._data.ws, self._point, self._pos, self._rot, self._jac)
        wrench = np.empty(6)
        if DAMPED_WRENCH.call(self._jac, tau_ext, self._damping, self._a, wrench) != OK:
            jac = self._jac.reshape(6, -1)  # singular without damping: the smallest wrench
            wrench = -np.linalg.lstsq(jac.T, tau_ext, rcond=None)[0]
        return wrench, self._rot.reshape(3, 3) @ self._frame_rotation


def tip_wrench(
    model: RobotModel, q: npt.ArrayLike, tau_ext: npt.ArrayLike, link: str, *, damping: float = 1e-3
) -> np.ndarray:
    """The wrench [fx, fy, fz, tx, ty, tz] that `link` exerts on its environment (root axes, moment
    about the link origin; N, N m) explaining τ_ext = −Jᵀ F, by the damped least squares
    F = −(J Jᵀ + λ² 1)⁻¹ J τ_ext (λ = `damping`). Unique when the Jacobian has rank 6; otherwise the
    smallest such wrench. The force on the link is −F."""
    jac = jacobian(model, q, link)
    tau_ext = np.asarray(tau_ext, dtype=float)
    return -np.linalg.solve(jac @ jac.T + damping**2 * np.eye(6), jac @ tau_ext)
