"""The effort law of the inverse_dynamics node, term by term (no ROS).

τ = g(q) + c(q, q̇) + M(q) q̈_des + τ_friction + Jᵀ F + Kp (q_des − q) + Kd (q̇_des − q̇)

The model terms are evaluated at the measured or the desired state (`state_source`); the
feedback term always compares desired with measured. The friction term follows
`rnea_ros.friction.compensation`: feedforward at the desired velocity for joints a trajectory
drives, bounded feedback from the measured velocity for the others, each faded out by the runaway
guard (`rnea_ros.friction.runaway_guard`) when it drives its joint. All arrays in `model.joint_names`
order, efforts in N m or N. The total is clamped to the effort limit × scale. One compiled call
(`compiled.kernels.cycle.cycle_kernel`) computes every term of a cycle into a preallocated table
from one kinematics pass per configuration, as Pinocchio's computeAllTerms: M(q) and the friction
row, the feedback bound, the model terms, the total, then the runaway guard's period.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from rnea_ros.algorithms.dynamics import GRAVITY, raise_not_finite, wrench_arrays
from rnea_ros.compiled.kernels.cycle import (
    OPT_BOUND,
    OPT_DESIRED,
    OPT_DT,
    OPT_FRICTION,
    OPT_LAG,
    OPT_MAX_LAG,
    OPT_PERIOD,
    OPT_REFRESH,
    OPT_RUN_GUARD,
    OPT_TERMS,
    OUT_CLAMPED,
    OUT_TOTAL,
    cycle_kernel,
    cycle_slices,
)
from rnea_ros.compiled.kernels.friction_guard import SAMPLE_ROWS
from rnea_ros.compiled.kernels.layout import (
    BAD_SIZE,
    LAW_KD,
    LAW_KD_NOW,
    LAW_KP,
    LAW_KP_NOW,
    LAW_LIMIT,
    LAW_SCALE,
    NOT_FINITE,
    OK,
    packed_slices,
)
from rnea_ros.control.feedback_bound import REFRESH
from rnea_ros.control.loop_timing import update_delay, update_period
from rnea_ros.control.terms import COMPENSABLE, TERMS, compensable_terms
from rnea_ros.errors import RneaError
from rnea_ros.friction.compensation import CompensationRules, coefficient_table
from rnea_ros.friction.model import Friction
from rnea_ros.friction.runaway_guard import RunawayGuard
from rnea_ros.model.robot_model import RobotModel

__all__ = ["COMPENSABLE", "TERMS", "EffortLaw", "Efforts", "LoopState", "compute_efforts"]


@dataclass(frozen=True)
class EffortLaw:
    """The one effort law: which terms, with which gravity, friction, wrenches, limits and gains.
    Immutable, swapped whole on a change; every evaluation of the law takes one: the node's
    cycle (`Efforts` + `compute_efforts`), trajectory annotation (`rnea_ros.trajectory.efforts`,
    `jtc_points`), uniform time scaling (`time_scaling`) and time-optimal re-timing
    (`time_optimal`). Trajectories evaluate its feedforward part only (no feedback, friction as
    `friction_torques` of `friction`); the node all of it.

    friction: None, no friction term (the node then compensates none). wrenches: each link's
    wrench on its environment [f, m about the link origin], root axes, constant (a call of
    `compute_efforts` may pass the cycle's own instead). effort_limit / velocity_limit: per joint
    (n,) or one value, None: the model's (inf: none); the effort limit is multiplied by
    effort_limit_scale.
    """

    gravity: tuple[float, ...] = GRAVITY  # root frame, m/s², 3 values
    compensate: frozenset[str] = frozenset(COMPENSABLE)
    kp: np.ndarray | float = 0.0  # N m/rad (or N/m), per joint or one value for all
    kd: np.ndarray | float = 0.0  # N m s/rad (or N s/m)
    use_desired_state: bool = False  # evaluate model terms at the desired state
    effort_limit_scale: float = 1.0
    friction_rules: CompensationRules = CompensationRules()  # scale, feedforward scale, deadband
    guard_window: float = 0.2  # s, window of the runaway guard; 0: no guard
    max_phase_lag: float = 0.5  # rad, bound of the PD gains (rnea_ros.control.feedback_bound); 0: none
    friction: Friction | None = field(default=None, compare=False)
    wrenches: Mapping[str, npt.ArrayLike] | None = field(default=None, compare=False)
    effort_limit: npt.ArrayLike | None = field(default=None, compare=False)  # N m or N
    velocity_limit: npt.ArrayLike | None = field(default=None, compare=False)  # rad/s or m/s

    def __post_init__(self) -> None:
        object.__setattr__(self, "compensate", compensable_terms(self.compensate))

    def friction_for(self, model: RobotModel) -> Friction | None:
        """`friction`, checked against the model's joints (RneaError)."""
        if self.friction is not None and self.friction.viscous.shape != (model.nv,):
            raise RneaError(f"friction must have {model.nv} joints, got {self.friction.viscous.size}")
        return self.friction

    def limits(self, model: RobotModel) -> tuple[np.ndarray, np.ndarray]:
        """(effort limit × effort_limit_scale, velocity limit), (n,) each, for the model's joints;
        RneaError for a wrong size or a negative or NaN value."""
        effort = _per_joint(self.effort_limit, model.effort_limit, "effort_limit")
        velocity = _per_joint(self.velocity_limit, model.velocity_limit, "velocity_limit")
        return effort * self.effort_limit_scale, velocity


def _per_joint(value: npt.ArrayLike | None, default: np.ndarray, name: str) -> np.ndarray:
    if value is None:
        return np.asarray(default, dtype=float).copy()
    try:
        a = np.broadcast_to(np.asarray(value, dtype=float), default.shape).copy()
    except (TypeError, ValueError):
        raise RneaError(f"{name} must be one value or {default.size} (one per joint)") from None
    if np.any(np.isnan(a)) or np.any(a < 0):
        raise RneaError(f"{name} must be >= 0 (inf = none) per joint")
    return a


class LoopState:
    """What the friction compensation remembers between calls: the loop period estimate (s), the
    last call's time t (s), and the last sample the friction path stored (its time sample_t, its
    q, q̇, applied total and friction term as rows SAMPLE_* of `prev`). `period` and `delay` (the
    state age) follow sustained changes, not one late state (rnea_ros.control.loop_timing)."""

    def __init__(self, n: int) -> None:
        self.period = 0.0
        self.delay = 0.0  # s, age of the states when their commands were computed (filtered)
        self.t = np.nan
        self.sample_t = np.nan
        self.prev = np.zeros((SAMPLE_ROWS, n))


class Efforts:
    """A model and an effort law packed for `compute_efforts`, with the table each call
    overwrites (like Pinocchio's Data: one per thread, results valid until the next call).

    Everything the compiled cycle reads or writes, but the runaway guard and the loop state (which
    an Efforts may share with the one it replaces: `adopt`), is one array, `record`
    (`rnea_ros.compiled.kernels.cycle`): the model's tree and workspace, then named tables, each
    also an attribute here (a view): `options` (the switches and each call's numbers, OPT_*),
    `law_table` (the gains and limit per joint, and the gains of the last cycle, LAW_*), `coef`
    (friction compensation), `work` (scratch), `mass` and `minv` (M(q), M(q)⁻¹) and `table` (the
    result, OUT_*). An input of the cycle is a slot or a row of one of them."""

    def __init__(self, model: RobotModel, law: EffortLaw) -> None:
        n = model.nv
        friction = law.friction_for(model)
        if friction is None:
            friction = Friction(np.zeros(n), np.zeros(n))
        self.model = model
        self.law = law
        slices = cycle_slices(n)
        self.record = np.zeros(slices["out"][0].stop)
        packed = model.kernel_record  # the tree and the default gravity; this record's own workspace
        self.record[: packed.size] = packed
        tables = {name: self.record[where].reshape(shape) for name, (where, shape) in slices.items()}
        self._gravity = self.record[packed_slices(n)[1]]
        self.set_gravity(np.asarray(law.gravity, dtype=float).reshape(3))
        self.options = options = tables["options"]
        for row, term in enumerate(COMPENSABLE):
            options[OPT_TERMS + row] = term in law.compensate
        options[OPT_DESIRED] = law.use_desired_state
        options[OPT_MAX_LAG] = law.max_phase_lag
        self.law_table = tables["law"]
        self.law_table[LAW_KP] = law.kp
        self.law_table[LAW_KD] = law.kd
        self.law_table[LAW_LIMIT] = law.limits(model)[0]
        self.law_table[LAW_KP_NOW] = self.law_table[LAW_KP]  # the gains as given until a bound applies
        self.law_table[LAW_KD_NOW] = self.law_table[LAW_KD]
        self.law_table[LAW_SCALE] = 1.0
        self.feedback_scale = self.law_table[LAW_SCALE]  # per joint: the last cycle's scale s (kp s², kd s)
        self._bounded = law.max_phase_lag > 0 and bool(np.any(self.law_table[LAW_KP : LAW_KD + 1]))
        self._wrench = wrench_arrays(model, law.wrenches)  # the law's constant wrenches
        self.mass = tables["mass"]
        self.minv = tables["minv"]  # M(q)⁻¹ of the bound, refreshed every REFRESH s
        self._minv_t = np.nan
        self.work = tables["work"]
        self.table = tables["out"]
        # friction compensation and its runaway guard (state kept between calls)
        self.friction = friction
        self.rules = law.friction_rules
        self.coef = tables["coef"]
        self.coef[:] = coefficient_table(friction, law.friction_rules)
        self._friction_on = "friction" in law.compensate and bool(
            np.any(friction.viscous) or np.any(friction.coulomb) or np.any(friction.static)
        )
        options[OPT_FRICTION] = self._friction_on
        self.guard = RunawayGuard(n, law.guard_window)
        self.loop = LoopState(n)
        self._all_driven = np.ones(n, dtype=np.int64)

    def set_gravity(self, gravity: np.ndarray) -> None:
        """Gravity in the root frame (m/s², 3 values) for the next calls, in place of the law's:
        an effective gravity that follows the base (rnea_ros.estimation.base_gravity)."""
        g = self._gravity
        g[0], g[1], g[2] = float(gravity[0]), float(gravity[1]), float(gravity[2])

    @property
    def gravity(self) -> np.ndarray:
        """The gravity the calls use, root frame, m/s² (copy)."""
        return self._gravity.copy()

    @property
    def period(self) -> float:
        """The loop period estimated from the states' times, s (0: unknown yet)."""
        return self.loop.period

    def adopt(self, previous: Efforts, keep_guard: bool = True) -> None:
        """Share the friction state of `previous` (same joints), which this one replaces: the loop
        state (period, last sample) and, with keep_guard, the runaway guard (else a re-armed one).
        Shared, not copied: calls on `previous` until the swap keep it current."""
        if previous.model.nv != self.model.nv:
            return
        self.loop = previous.loop
        if keep_guard and previous.guard.window == self.guard.window:
            self.guard = previous.guard

    @property
    def delay(self) -> float:
        """The state age the feedback bound allows for (filtered), s."""
        return self.loop.delay

    @property
    def total(self) -> np.ndarray:
        """The clamped command of the last call (view of `table`)."""
        return self.table[OUT_TOTAL]

    @property
    def clamped(self) -> np.ndarray:
        """Where the last command was clamped (bool copy)."""
        return self.table[OUT_CLAMPED] != 0.0

    def clamped_joints(self, names: Sequence[str], index: Sequence[int]) -> list[str]:
        """names[i] for every i whose joint (model index index[i]) the last command clamped; one
        row read as a list, cheaper per cycle than `clamped` and a numpy reduction."""
        row = self.table[OUT_CLAMPED].tolist()
        if not any(row):
            return []
        return [name for name, j in zip(names, index, strict=True) if row[j]]

    @property
    def terms(self) -> dict[str, np.ndarray]:
        """Each term of the last call by name (views of `table`)."""
        return {term: self.table[row] for row, term in enumerate(TERMS)}


def compute_efforts(
    efforts: Efforts,
    q: np.ndarray,
    qd: np.ndarray,
    desired: tuple[np.ndarray, np.ndarray, np.ndarray],
    wrenches: Mapping[str, np.ndarray] | None = None,
    *,
    driven: np.ndarray | None = None,
    t: float | None = None,
    delay: float | None = None,
) -> Efforts:
    """Every term of the law for the measured (q, q̇) and desired (q, q̇, q̈) into `efforts.table`;
    raises ValueError (naming the input) on non-finite input instead of returning a non-finite
    command. q, q̇ and the desired arrays: float64, (n,). wrenches: this cycle's link wrenches
    (root axes, see EffortLaw), None: the law's.

    driven: per joint, whether a trajectory drives it (its friction is feedforward at the desired
    velocity; else feedback from the measured one); None: every joint. t: time of the measured
    state, s (any clock; the loop period and the runaway guard come from successive calls; without
    it no feedback friction compensation is applied). delay: how old the measured state is when
    this command is computed, s (the caller's clock minus the state's stamp); with t, the
    feedback gains are bounded by the loop's period and delay (rnea_ros.control.feedback_bound); without
    t the gains are applied as given."""
    q_des, qd_des, qdd_des = desired
    wb, wd = efforts._wrench if wrenches is None else wrench_arrays(efforts.model, wrenches)
    friction_on = efforts._friction_on
    if driven is None:
        driven = efforts._all_driven
    elif driven.dtype != np.int64:
        driven = driven.astype(np.int64)
    loop, guard = efforts.loop, efforts.guard
    dt, last_t = np.nan, loop.t
    if t is not None:
        dt = t - last_t
        loop.period = update_period(loop.period, dt)
        loop.t = t
        if delay is not None:
            loop.delay = update_delay(loop.delay, delay, dt)
    bound = efforts._bounded and t is not None
    refresh = t is not None and bound and not abs(t - efforts._minv_t) < REFRESH  # also at first (NaN)
    # the guard integrates the period since the previous call if that call left its sample
    run_guard = friction_on and guard.enabled and 0.0 < dt <= 1.0 and loop.sample_t == last_t
    options = efforts.options
    options[OPT_BOUND] = bound
    options[OPT_REFRESH] = refresh
    options[OPT_RUN_GUARD] = run_guard
    options[OPT_PERIOD] = loop.period
    options[OPT_DT] = dt
    options[OPT_LAG] = 0.5 * loop.period + loop.delay  # zero-order hold of one period, plus the delay
    try:
        status = cycle_kernel(
            efforts.record, q, qd, q_des, qd_des, qdd_des, driven, wb, wd, guard.state, guard.clock, loop.prev
        )
    except (ValueError, OverflowError):  # pure-Python fallback only: math.cos(inf) and the like
        status = NOT_FINITE
    except IndexError:  # pure-Python fallback only: wrongly sized input
        status = BAD_SIZE
    if t is not None and refresh and (status == OK or not friction_on or np.isfinite(efforts.mass).all()):
        efforts._minv_t = t  # M⁻¹ was refreshed (or failed at this t): next refresh REFRESH s on
    if status == BAD_SIZE:
        raise RneaError(f"q, qd and the desired state must have {efforts.model.nv} values each")
    if status != OK:
        named = {"q": q, "qd": qd, "desired q": q_des, "desired qd": qd_des, "desired qdd": qdd_des}
        raise_not_finite(named)
    if friction_on:
        loop.sample_t = np.nan if t is None else t
    return efforts
