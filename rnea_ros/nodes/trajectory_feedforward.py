"""The trajectory_feedforward node: JointTrajectory in, the same trajectory out with `effort` on
every point, slowed down (or rejected) where the effort or velocity limits demand it, for
joint_trajectory_controller (JTC, Jazzy >= 4.22) with an effort command interface.

A thin adapter over `rnea_ros.trajectory.jtc_points` (model and parameters as the inverse_dynamics
node: rnea_ros.ros.model_source and rnea_ros.ros.law_params; the schema TRAJECTORY_FEEDFORWARD is
below). ~/trajectory_in names any subset of the model's joints (`joints`) in any order; the other
joints stay at their last measured position on joint_states (0 before any arrives).
~/trajectory_out keeps the input's header (stamp = start time, 0 = on arrival at JTC) and joint
order; its points are JTC's spline through the input resampled every
`resample_period` s, each with positions, velocities, accelerations and efforts. A first point
later than 0 is joined to the measured state, which becomes the first output point at 0 (what JTC
itself would do), so that part is annotated too. An empty trajectory (JTC: cancel) goes out as
is. A trajectory with implausible values (rnea_ros.trajectory.plausible) or more than
`rnea_ros.trajectory.efforts.MAX_SAMPLES` output points (duration / resample_period, after any
slow-down) is rejected with the reason. All callbacks go through `_guard`: no exception ends the
process, and /diagnostics' last_reason always says what became of the last trajectory.
"""

from __future__ import annotations

if __name__ == "__main__" and __spec__ is not None:  # python -m: a stop while importing is one line
    from rnea_ros.ros.entry import run_module

    run_module("trajectory_feedforward", __spec__.name)

import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import partial

import numpy as np
from builtin_interfaces.msg import Duration
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
from rcl_interfaces.msg import SetParametersResult
from rclpy.clock import Clock, ClockType
from rclpy.node import Node
from rclpy.qos import QoSProfile
from sensor_msgs.msg import JointState
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from rnea_ros.control.effort_law import EffortLaw
from rnea_ros.errors import ParameterError
from rnea_ros.model.robot_model import RobotModel
from rnea_ros.ros import diagnostics, parameters, qos
from rnea_ros.ros.diagnostics import NodeStats
from rnea_ros.ros.guarded import guarded
from rnea_ros.ros.kernel_startup import prepare_kernels
from rnea_ros.ros.law_params import (
    LAW_JOINT_KINDS,
    LAW_PARAMS,
    compensated,
    ee_wrench,
    friction_of,
    with_armature,
    with_payload,
)
from rnea_ros.ros.messages import trajectory_points
from rnea_ros.ros.model_source import (
    MODEL_PARAMS,
    model_from_urdf,
    output_joints,
    per_joint_parameters_fit,
    start_model_source,
)
from rnea_ros.ros.per_joint import JointParameters, is_joint_parameter, pre_set
from rnea_ros.ros.qos import JOINT_STATES_QOS
from rnea_ros.ros.run_node import run_node
from rnea_ros.ros.schema import Param, table
from rnea_ros.ros.throttled_log import ThrottledLog
from rnea_ros.ros.unheard import UnheardTopic
from rnea_ros.trajectory.efforts import DEFAULT_RESAMPLE_PERIOD, trajectory_efforts
from rnea_ros.trajectory.joint_map import JointMap
from rnea_ros.trajectory.jtc_points import effort_trajectory
from rnea_ros.trajectory.plausible import JointBounds, check_rates, check_trajectory
from rnea_ros.trajectory.sampling import TrajectorySampler
from rnea_ros.trajectory.time_scaling import minimal_time_scale


def _joints_for_trajectories() -> Param:
    base = {p.name: p for p in MODEL_PARAMS}["joints"]
    return replace(
        base,
        description="joints trajectories may move, and the order of per-joint friction values (empty: "
        "the model's movable joints)",
    )


TRAJECTORY_FEEDFORWARD = table(
    (
        *(_joints_for_trajectories() if p.name == "joints" else p for p in MODEL_PARAMS),
        *LAW_PARAMS,
        Param(
            "resample_period",
            "double",
            DEFAULT_RESAMPLE_PERIOD,
            "time between the output points, s (JTC interpolates the efforts linearly between them)",
            bounds=(0.0005, 1.0),
        ),
        Param(
            "on_limit",
            "string",
            "slow_down",
            "a trajectory beyond the effort or velocity limits: 'slow_down' (smallest uniform time "
            "stretch k >= 1), 'reject' (nothing goes out) or 'time_optimal' (TOPP-RA re-timing, needs "
            "the toppra package)",
            choices=("slow_down", "reject", "time_optimal"),
        ),
        Param("diagnostics_period", "double", 1.0, "period of /diagnostics, s", True, bounds=(0.05, 60.0)),
    )
)
SCHEMA = TRAJECTORY_FEEDFORWARD
TRAJECTORY_QOS = QoSProfile(depth=10)  # ~/trajectory_in and ~/trajectory_out (qos_overrides.* may change it)
UNHEARD_PERIOD = 0.5  # s between looks for a subscriber of ~/trajectory_out (rnea_ros.ros.unheard)
MAX_JOINTS = 1000  # joint_states names remembered before a model is loaded


def toppra_available() -> bool:
    """Whether the optional TOPP-RA package (on_limit: time_optimal) can be imported."""
    try:
        import toppra  # noqa: F401
    except ImportError:
        return False
    return True


def check_parameters(params: dict) -> None:
    """What the schema cannot say: ParameterError when on_limit asks for TOPP-RA and toppra is
    not installed, or for a non-zero ee_wrench in tip axes (it would turn along the trajectory)."""
    if params["on_limit"] == "time_optimal" and not toppra_available():
        raise ParameterError(
            "on_limit",
            "'time_optimal' needs the optional package toppra (pip install toppra); "
            "use 'slow_down' or 'reject'",
        )
    if params["ee_wrench_frame"] != "root" and any(x != 0 for x in params["ee_wrench"]):
        raise ParameterError(
            "ee_wrench_frame",
            "must be 'root' for trajectory_feedforward: the wrench is held constant in root axes "
            "along a trajectory",
        )


@dataclass(frozen=True)
class Setup:
    """A model with everything the node evaluates on it (replaced whole, never edited)."""

    base: RobotModel
    model: RobotModel  # payload applied
    joints: list[str]  # joints trajectories may move (the order of per-joint values)
    law: EffortLaw  # gravity, friction (× feedforward_scale), terms, wrenches (root axes), limits
    effort_limit: np.ndarray  # (n,) URDF × effort_limit_scale
    velocity_limit: np.ndarray  # (n,) URDF


def build_setup(base: RobotModel, params: dict) -> Setup:
    """The model combined with the parameters; ParameterError naming the parameter at fault."""
    joints, output = output_joints(base, params)
    model = with_armature(with_payload(base, params), params, output)
    check_parameters(params)
    link, root, _ = ee_wrench(base, params)  # link axes refused by check_parameters
    law = EffortLaw(
        gravity=tuple(float(g) for g in params["gravity"]),  # 3: parameters.LAW_PARAMS' length rule
        compensate=compensated(params),
        effort_limit_scale=params["effort_limit_scale"],
        friction=friction_of(model, params, output, params["friction.feedforward_scale"]),
        wrenches=None if link is None else {link: root},
    )
    effort_limit, velocity_limit = law.limits(model)
    return Setup(base, model, joints, law, effort_limit, velocity_limit)


@dataclass
class Decision:
    """What happened to one trajectory (for the log and /diagnostics)."""

    outcome: str  # "within limits", "slowed down", "re-timed", "rejected", "forwarded (empty)"
    reason: str
    k: float = 1.0  # time stretch (output duration / input duration for time_optimal)
    joint: str = ""
    limit: str = ""
    time: float = float("nan")  # s, where the binding joint is closest to its limit
    ratio: float = float("nan")
    points_in: int = 0
    points_out: int = 0
    duration_out: float = 0.0
    compute_ms: float = 0.0

    def values(self) -> dict[str, str]:
        return {
            "last_outcome": self.outcome,
            "last_reason": self.reason,
            "last_k": f"{self.k:.6g}",
            "last_binding_joint": self.joint,
            "last_binding_limit": self.limit,
            "last_binding_time_s": f"{self.time:.4f}",
            "last_binding_ratio": f"{self.ratio:.6f}",
            "last_points_in": str(self.points_in),
            "last_points_out": str(self.points_out),
            "last_duration_out_s": f"{self.duration_out:.4f}",
            "last_compute_ms": f"{self.compute_ms:.1f}",
        }


@dataclass
class Stats(NodeStats):
    """NodeStats' counters and the trajectories'."""

    received: int = 0
    published: int = 0
    slowed: int = 0
    last: Decision | None = None


class TrajectoryFeedforwardNode(Node):
    """See the module docstring and the README's trajectory_feedforward section."""

    def __init__(self, **kwargs) -> None:
        super().__init__("trajectory_feedforward", **kwargs)
        # friction.<joint>.viscous ... (rnea_ros.ros.per_joint), declared once the model is known
        self._joint_params = JointParameters(self, LAW_JOINT_KINDS, SCHEMA)
        deferred = partial(is_joint_parameter, LAW_JOINT_KINDS)
        self._params = parameters.declare(self, SCHEMA, deferred=deferred)
        check_parameters(self._params)  # a bad parameter file ends start-up before the kernels load
        prepare_kernels(self)  # before any subscription: no cycle compiles
        self._setup: Setup | None = None
        self._pending: tuple[dict, Setup | None] | None = None
        self._measured: dict[str, tuple[float, float]] = {}  # joint → (position, velocity)
        self._log = ThrottledLog(self).warn
        self.stats = Stats()
        guard = self._guard
        self._out = qos.publisher(self, JointTrajectory, "~/trajectory_out", TRAJECTORY_QOS)
        self._diag_pub = self.create_publisher(DiagnosticArray, "/diagnostics", 10)
        on_trajectory = guard("trajectory_in", self._on_trajectory)
        qos.subscription(self, JointTrajectory, "~/trajectory_in", on_trajectory, TRAJECTORY_QOS)
        on_state = guard("joint_states", self._on_joint_states)
        qos.subscription(self, JointState, "joint_states", on_state, JOINT_STATES_QOS)
        qos.warn_unmatched(self)  # qos_overrides.* naming no topic (remapped, misspelled)
        # nobody subscribed 2 s after the first trajectory: a remap that matched nothing, said so
        remap = "~/trajectory_out:=/joint_trajectory_controller/joint_trajectory"
        self._unheard = UnheardTopic(self, self._out, remap)
        steady = Clock(clock_type=ClockType.STEADY_TIME)
        self.create_timer(UNHEARD_PERIOD, guard("unheard", self._check_unheard), clock=steady)
        # 1 → 1.0, per-joint mirrors; types kept on refusal
        pre = pre_set(self._joint_params, lambda: self._params)
        parameters.on_set(self, SCHEMA, self._on_set_parameters, pre)
        self.add_post_set_parameters_callback(guard("parameters", self._on_parameters_set))
        self.create_timer(self._params["diagnostics_period"], guard("diagnostics", self._publish_diagnostics))
        start_model_source(self, self._params, self._load_description, guard)

    # --- safety net ------------------------------------------------------------------------

    def _guard(self, where: str, callback: Callable) -> Callable:
        """`callback` guarded: an unexpected exception is counted and shown on diagnostics under
        internal_error.<where> and logged (see rnea_ros.ros.guarded)."""
        return guarded(where, callback, self._internal_error)

    def _internal_error(self, where: str, text: str) -> None:
        self.stats.internal_error(where, text)
        if where == "trajectory_in":  # last_reason says what became of the last trajectory
            self.stats.last = Decision("rejected", f"internal error: {text}")
        self._log(f"internal_error.{where}", f"{where} callback failed ({text})")

    # --- model and parameters --------------------------------------------------------------

    def _load_description(self, xml: str, source: str) -> None:
        params, old = self._params, self._setup
        try:
            base = model_from_urdf(xml, params)
            joints, output = output_joints(base, params)
            if old is not None:
                per_joint_parameters_fit(params, old.joints, joints, SCHEMA)
            params = self._joint_params.for_model(params, base, output)  # friction.<joint>.viscous ...
            setup = build_setup(base, params)
        except ValueError as exc:
            self.stats.model_rejected(f"{source}: {exc}")
            kept = "the previous model stays" if old else "no model loaded"
            self.get_logger().error(f"rejected robot description from {source}: {exc} ({kept})")
            return
        self._setup, self._params = setup, params
        for name in self._joint_params.declare(params):  # the model's joints' parameters
            self.get_logger().warn(self._joint_params.unknown_text(name))
        self.stats.model_error = ""
        self.get_logger().info(
            f"model '{base.name}' from {source}: {base.nv} joints; trajectories for {setup.joints}"
        )
        for warning in base.warnings:
            self.get_logger().warn(
                f"robot description: {warning} (loaded as written; strict_model refuses it)"
            )

    def _on_set_parameters(self, params) -> SetParametersResult:
        if self._joint_params.syncing:  # the per-joint parameters of a model, as `_params` has them
            return SetParametersResult(successful=True)
        try:
            setup = self._setup
            n = None if setup is None else len(setup.joints)
            new = parameters.proposed(self._joint_params.schema(), self._params, params, n)
            check_parameters(new)
            rebuilt = None if setup is None else build_setup(setup.base, new)
        except ValueError as exc:
            self.get_logger().warn(f"parameters rejected: {exc}")
            return SetParametersResult(successful=False, reason=str(exc))
        except Exception as exc:  # noqa: BLE001 - a bug rejects the change, never ends the node
            self.stats.internal_errors["parameters"] = f"{type(exc).__name__}: {exc}"
            return SetParametersResult(successful=False, reason=f"internal error: {exc}")
        self._pending = (new, rebuilt)
        return SetParametersResult(successful=True)

    def _on_parameters_set(self, params) -> None:
        if self._pending is None:
            return
        self._params, setup = self._pending
        self._pending = None
        if setup is not None:
            self._setup = setup

    # --- inputs ----------------------------------------------------------------------------

    def _on_joint_states(self, msg: JointState) -> None:
        """Remember each joint's latest finite position (and velocity)."""
        n = len(msg.name)
        if len(msg.position) != n or len(msg.velocity) not in (0, n):
            self._log("bad_joint_states", "joint_states position/velocity lengths differ from name: ignored")
            return
        setup = self._setup
        known = None if setup is None else setup.model.joint_names
        for i, name in enumerate(msg.name):
            if known is not None and name not in known:
                continue  # another robot's joint
            if known is None and name not in self._measured and len(self._measured) >= MAX_JOINTS:
                continue  # bounded while no model says which joints matter
            q = msg.position[i]
            v = msg.velocity[i] if msg.velocity else 0.0
            if np.isfinite(q) and np.isfinite(v):
                self._measured[name] = (float(q), float(v))

    def _reject(self, reason_key: str, text: str, decision: Decision | None = None) -> None:
        self.stats.reject(reason_key, text)
        self.stats.last = decision or Decision("rejected", text)
        self.get_logger().warn(f"trajectory rejected: {text}")

    def _on_trajectory(self, msg: JointTrajectory) -> None:
        self.stats.received += 1
        setup = self._setup
        if setup is None:
            self._reject("no_model", "no model loaded")
            return
        if not msg.points:  # JTC: an empty trajectory cancels the running one
            self._out.publish(msg)
            self.stats.published += 1
            self.stats.last = Decision("forwarded (empty)", "empty trajectory forwarded: JTC stops")
            self.get_logger().info("empty trajectory forwarded (JTC cancels the running one)")
            return
        t0 = time.perf_counter()
        try:
            names, times, positions, velocities, accelerations = self._parse(setup, msg)
            times, positions, velocities, accelerations, joined = self._join_start(
                names, times, positions, velocities, accelerations
            )
            held = self._held(setup)
            out, decision = self._plan(setup, names, times, positions, velocities, accelerations, held)
        except (ValueError, TypeError, OverflowError) as exc:
            self._reject("bad_trajectory", f"{exc}")
            return
        except MemoryError:  # bounded (trajectory.efforts.MAX_SAMPLES): not expected, never fatal
            self._reject("bad_trajectory", "out of memory while resampling it: split the trajectory")
            return
        decision.points_in = len(msg.points)
        decision.compute_ms = (time.perf_counter() - t0) * 1e3
        if out is None:
            self._reject("limits", decision.reason, decision)
            return
        t, q, qd, qdd, tau = out
        decision.points_out = t.size
        decision.duration_out = float(t[-1])
        self._out.publish(_message(msg, names, t, q, qd, qdd, tau))
        self.stats.published += 1
        self.stats.slowed += decision.outcome != "within limits"
        self.stats.last = decision
        start = "" if not joined else " (joined from the measured state at t = 0)"
        self.get_logger().info(
            f"trajectory for {names}: {decision.outcome}, {decision.reason}; {t.size} points every "
            f"{self._params['resample_period'] * 1e3:g} ms over {t[-1]:.3f} s{start} "
            f"({decision.compute_ms:.1f} ms)"
        )

    def _parse(self, setup: Setup, msg: JointTrajectory):
        """Names and (times, P, V, A) of a message; ValueError naming what is wrong."""
        names = [str(j) for j in msg.joint_names]
        JointMap(setup.model, names)  # unknown, repeated or no joints
        outside = [j for j in names if j not in setup.joints]
        if outside:
            raise ValueError(f"joints {outside} are not among this node's joints (parameter 'joints')")
        points = msg.points
        times, positions, velocities, accelerations = trajectory_points(msg)
        if accelerations is not None and velocities is None:
            raise ValueError("points have accelerations but no velocities")
        joints = np.array([setup.model.joint_index(j) for j in names], dtype=np.int64)
        check_trajectory(JointBounds.of(setup.model), joints, times, positions, velocities, accelerations)
        check_rates(TrajectorySampler(times, positions, velocities, accelerations), names)
        if len(points) == 1 and times[0] == 0:
            raise ValueError("a single point at time 0: nothing to interpolate (give it a time > 0)")
        return names, times, positions, velocities, accelerations

    def _join_start(self, names, times, positions, velocities, accelerations):
        """A first point later than 0 gets the measured state in front of it at time 0, as JTC
        joins its current state to it; ValueError when a joint was never measured."""
        if times[0] <= 0:
            return times, positions, velocities, accelerations, False
        missing = [j for j in names if j not in self._measured]
        if missing:
            raise ValueError(
                f"the first point is at {times[0]:.3f} s and there is no joint_states for {missing} to "
                "start from: publish joint_states, or start the trajectory with a point at time 0"
            )
        q0 = np.array([self._measured[j][0] for j in names])
        v0 = np.array([self._measured[j][1] for j in names])
        times = np.concatenate([[0.0], times])
        positions = np.vstack([q0, positions])
        if velocities is not None:
            velocities = np.vstack([v0, velocities])
        if accelerations is not None:
            accelerations = np.vstack([np.zeros(len(names)), accelerations])
        return times, positions, velocities, accelerations, True

    def _held(self, setup: Setup) -> np.ndarray:
        """Model-order positions of the last joint_states (0 for joints never measured)."""
        return np.array([self._measured.get(j, (0.0, 0.0))[0] for j in setup.model.joint_names])

    def _plan(self, setup: Setup, names, times, positions, velocities, accelerations, held):
        """((t, q, q̇, q̈, τ) in `names` order, or None when rejected) and the Decision."""
        mode = self._params["on_limit"]
        period = self._params["resample_period"]
        if mode == "time_optimal":
            return self._time_optimal(setup, names, times, positions, velocities, accelerations, held)
        result = effort_trajectory(
            setup.model,
            names,
            times,
            positions,
            velocities,
            accelerations,
            held=held,
            period=period,
            slow_down=mode == "slow_down",
            law=setup.law,
        )
        s = result.scale
        decision = Decision(
            "within limits" if s.k == 1.0 else "slowed down",
            s.reason,
            s.k,
            s.joint,
            s.limit,
            s.time,
            s.ratio,
        )
        if not result.accepted:
            decision.outcome = "rejected"
            if mode == "reject" and np.isfinite(s.ratio):
                jmap = JointMap(setup.model, names)
                q, qd, qdd = jmap.expand_trajectory(positions, velocities, accelerations, held)
                needed = minimal_time_scale(
                    setup.model,
                    times,
                    q,
                    qd,
                    qdd,
                    period=period,
                    joints=names,
                    law=setup.law,
                )
                decision.reason += (
                    f"; on_limit 'slow_down' would stretch it {needed.k:.4f}x"
                    if needed.feasible
                    else f"; no slow-down helps either ({needed.reason})"
                )
            return None, decision
        out = (result.times, result.positions, result.velocities, result.accelerations, result.efforts)
        return out, decision

    def _time_optimal(self, setup: Setup, names, times, positions, velocities, accelerations, held):
        from rnea_ros.trajectory.time_optimal import time_optimal_parameterisation

        jmap = JointMap(setup.model, names)
        q, qd, qdd = jmap.expand_trajectory(positions, velocities, accelerations, held)
        duration = float(times[-1])
        try:
            t, qs, qds, qdds = time_optimal_parameterisation(
                setup.model,
                times,
                q,
                qd,
                qdd,
                period=self._params["resample_period"],
                law=setup.law,
                joints=names,
            )
        except ValueError as exc:
            return None, Decision("rejected", f"TOPP-RA: {exc}", float("inf"))
        tau = trajectory_efforts(setup.model, qs, qds, qdds, setup.law)
        cols = jmap.index
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.nan_to_num(np.abs(tau[:, cols]) / setup.effort_limit[cols], nan=0.0)
        i, c = np.unravel_index(np.argmax(ratio), ratio.shape)
        k = float(t[-1]) / duration if duration > 0 else float("nan")
        reason = (
            f"re-timed by TOPP-RA: duration {duration:.3f} -> {t[-1]:.3f} s; closest effort "
            f"{names[c]} at {ratio[i, c]:.1%} at t = {t[i]:.3f} s"
        )
        decision = Decision("re-timed", reason, k, names[c], "effort", float(t[i]), float(ratio[i, c]))
        return (t, jmap.restrict(qs), jmap.restrict(qds), jmap.restrict(qdds), jmap.restrict(tau)), decision

    # --- diagnostics -----------------------------------------------------------------------

    def _check_unheard(self) -> None:
        self._unheard.check(self.stats.published > 0)

    def _publish_diagnostics(self) -> None:
        setup, stats = self._setup, self.stats
        values = {
            "model_loaded": str(setup is not None),
            "model": "" if setup is None else f"{setup.base.name} ({setup.base.nv} joints)",
            "joints": "" if setup is None else " ".join(setup.joints),
            "on_limit": self._params["on_limit"],
            "resample_period_s": f"{self._params['resample_period']:g}",
            "trajectories_received": str(stats.received),
            "trajectories_published": str(stats.published),
            "trajectories_slowed_down": str(stats.slowed),
            "trajectories_rejected": str(sum(stats.rejected.values())),
            **stats.rejected_values(),
            "joints_measured": str(len(self._measured)),
            "trajectory_out": self._unheard.topic,
            "trajectory_out_subscribers": str(self._out.get_subscription_count()),
            "last_model_error": stats.model_error,
            **({} if stats.last is None else stats.last.values()),
            **stats.internal_error_values(),
        }
        last = stats.last
        if setup is None:
            level, message = DiagnosticStatus.ERROR, "no model loaded"
        elif self._unheard.text:  # trajectories that go nowhere: a remap that matched nothing
            level, message = DiagnosticStatus.WARN, self._unheard.text
        elif last is not None and last.outcome == "rejected":  # until a trajectory goes out
            level, message = DiagnosticStatus.WARN, f"last trajectory rejected: {last.reason}"
        elif stats.problems_in_period:
            level, message = DiagnosticStatus.WARN, "rejected input or internal error"
        elif last is None:
            level, message = DiagnosticStatus.OK, "waiting for a trajectory"
        else:
            level, message = DiagnosticStatus.OK, f"last trajectory {last.outcome}: {last.reason}"
        name = f"{self.get_fully_qualified_name()}: trajectory feedforward"
        status = diagnostics.status(name, level, message, "" if setup is None else setup.base.name, values)
        diagnostics.publish(self._diag_pub, self.get_clock().now().to_msg(), [status])
        stats.new_period()


def _duration(t: float) -> Duration:
    sec, nanosec = divmod(round(t * 1e9), 1_000_000_000)
    return Duration(sec=int(sec), nanosec=int(nanosec))


def _message(msg: JointTrajectory, names, t, q, qd, qdd, tau) -> JointTrajectory:
    """The output message: the input's header, its joint order, one point per row."""
    out = JointTrajectory(header=msg.header, joint_names=list(names))
    out.points = [
        JointTrajectoryPoint(
            positions=a.tolist(),
            velocities=b.tolist(),
            accelerations=c.tolist(),
            effort=e.tolist(),
            time_from_start=_duration(s),
        )
        for s, a, b, c, e in zip(t.tolist(), q, qd, qdd, tau, strict=True)
    ]
    return out


def main(args: list[str] | None = None) -> int:
    """Run the trajectory_feedforward node (`ros2 run rnea_ros trajectory_feedforward_node`)."""
    return run_node(args, TrajectoryFeedforwardNode, "trajectory_feedforward")


__all__ = ["TRAJECTORY_FEEDFORWARD", "TrajectoryFeedforwardNode", "build_setup", "check_parameters", "main"]

if __name__ == "__main__":
    sys.exit(main())
