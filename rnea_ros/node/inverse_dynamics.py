"""The inverse_dynamics node: robot_description in, RNEA on every joint_states, efforts out.

A thin adapter: parameters (parameters.py), the model/parameter bundle (runtime.py), the effort
law (rnea_ros.feedforward), trajectory sampling (rnea_ros.trajectory) and diagnostics
(diagnostics.py). All callbacks run in one thread; a new model or parameter set is built
aside and swapped in whole, so a cycle never sees half an update.
"""

from __future__ import annotations

import time

import numpy as np
from diagnostic_msgs.msg import DiagnosticArray
from geometry_msgs.msg import WrenchStamped
from rcl_interfaces.msg import SetParametersResult
from rclpy.clock import Clock, ClockType
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
from rclpy.time import Time
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray, String
from trajectory_msgs.msg import JointTrajectory

from ..errors import URDFError
from ..feedforward import TERMS, compute_efforts
from ..kernels import OUT_CLAMPED, OUT_TOTAL
from ..model import RobotModel
from ..trajectory import TrajectorySampler
from . import parameters
from .diagnostics import CycleStats, diagnostic_status
from .runtime import Layout, Runtime, build_runtime

# Best effort, keep last 1: matches reliable and best-effort publishers, and a late cycle
# always works on the newest state instead of a queue.
JOINT_STATES_QOS = QoSProfile(
    depth=1, reliability=ReliabilityPolicy.BEST_EFFORT, history=HistoryPolicy.KEEP_LAST
)
# How often the node looks for subscribers of ~/joint_efforts and ~/terms/* (s): counting them
# costs more than a cycle's dynamics, so it is kept out of the cycle.
LISTENER_PERIOD = 0.1
DESCRIPTION_QOS = QoSProfile(
    depth=1, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL
)


class Desired:
    """A received trajectory for some model joints, sampled on the node clock."""

    def __init__(self, sampler: TrajectorySampler, joints: np.ndarray, start_ns: int) -> None:
        self.sampler, self.joints, self.start_ns = sampler, joints, start_ns

    def sample(self, now_ns: int, q: np.ndarray, qd: np.ndarray):
        """Desired (q, q̇, q̈) in model order; joints outside the trajectory follow the measurement."""
        q_d, qd_d, qdd_d = q.copy(), qd.copy(), np.zeros_like(q)
        tq, tqd, tqdd = self.sampler.sample((now_ns - self.start_ns) * 1e-9)
        q_d[self.joints], qd_d[self.joints], qdd_d[self.joints] = tq, tqd, tqdd
        return q_d, qd_d, qdd_d


class InverseDynamicsNode(Node):
    """See the README's node section for topics and parameters."""

    def __init__(self, **kwargs) -> None:
        super().__init__("inverse_dynamics", **kwargs)
        parameters.declare(self)
        self._params = parameters.snapshot(self)
        parameters.check(self._params, None)
        self._base: RobotModel | None = None
        self._runtime: Runtime | None = None
        self._pending: tuple[dict, Runtime | None] | None = None
        self._layouts: dict[tuple[str, ...], Layout] = {}
        self._trajectory: Desired | None = None
        self._wrench_override = None
        self._last_measured: tuple[np.ndarray, np.ndarray] | None = None
        self.stats = CycleStats()

        self._effort_pub = self.create_publisher(Float64MultiArray, "~/effort_commands", 10)
        self._command = Float64MultiArray()
        self._joint_efforts_pub = self.create_publisher(JointState, "~/joint_efforts", 10)
        self._term_pubs = {t: self.create_publisher(JointState, f"~/terms/{t}", 10) for t in TERMS}
        self._diag_pub = self.create_publisher(DiagnosticArray, "/diagnostics", 10)
        self.create_subscription(JointState, "joint_states", self._on_joint_states, JOINT_STATES_QOS)
        self.create_subscription(JointTrajectory, "~/joint_trajectory", self._on_trajectory, 10)
        self.create_subscription(WrenchStamped, "~/ee_wrench", self._on_wrench, 10)
        self.add_on_set_parameters_callback(self._on_set_parameters)
        self.add_post_set_parameters_callback(self._on_parameters_set)
        self.create_timer(self._params["diagnostics_period"], self._publish_diagnostics)
        self._listened: list[tuple[int, object]] = []  # (row of the efforts table, publisher)
        self._find_listeners()
        # Steady clock: who listens is a wall-time matter, and with use_sim_time a simulator that
        # waits for ~/joint_efforts before its clock moves would otherwise never be found.
        steady = Clock(clock_type=ClockType.STEADY_TIME)
        self.create_timer(LISTENER_PERIOD, self._find_listeners, clock=steady)

        if self._params["robot_description"]:
            self._load_description(self._params["robot_description"], "parameter robot_description")
        else:
            self.create_subscription(String, "robot_description", self._on_description, DESCRIPTION_QOS)
            self.get_logger().info("waiting for a URDF on topic robot_description")

    # --- model -----------------------------------------------------------------------------

    def _on_description(self, msg: String) -> None:
        self._load_description(msg.data, "topic robot_description")

    def _load_description(self, xml: str, source: str) -> None:
        root, tip = self._params["root_link"] or None, self._params["tip_link"] or None
        try:
            base = RobotModel.from_urdf(xml, root_link=root, tip_link=tip)
            runtime = build_runtime(base, self._params, self._wrench_override)
        except (URDFError, ValueError) as exc:
            self.stats.model_error = f"{source}: {exc}"
            kept = "keeping the previous model" if self._runtime else "no model loaded"
            self.get_logger().error(f"rejected robot description from {source}: {exc} ({kept})")
            return
        self._install(base, runtime)
        self.stats.model_error = ""
        self.get_logger().info(
            f"model '{base.name}' from {source}: {base.nv} joints, commands for {runtime.output_names}"
        )

    def _install(self, base: RobotModel, runtime: Runtime) -> None:
        self._base, self._runtime = base, runtime
        self._layouts = {}
        if self._trajectory is not None and self._trajectory.joints.max(initial=-1) >= base.nv:
            self._trajectory = None

    # --- parameters -----------------------------------------------------------------------

    def _on_set_parameters(self, params) -> SetParametersResult:
        try:
            new = parameters.updated(self._params, params)
            n = None if self._runtime is None else len(self._runtime.output_names)
            parameters.check(new, n)
            override = None if any(p.name == "ee_wrench" for p in params) else self._wrench_override
            runtime = None if self._base is None else build_runtime(self._base, new, override)
        except ValueError as exc:
            self.get_logger().warn(f"parameters rejected: {exc}")
            return SetParametersResult(successful=False, reason=str(exc))
        self._pending = (new, runtime, override)
        return SetParametersResult(successful=True)

    def _on_parameters_set(self, params) -> None:
        if self._pending is None:
            return
        self._params, runtime, self._wrench_override = self._pending
        self._pending = None
        if runtime is not None:
            self._runtime = runtime

    # --- inputs ----------------------------------------------------------------------------

    def _on_wrench(self, msg: WrenchStamped) -> None:
        if self._base is None:
            return
        f, t = msg.wrench.force, msg.wrench.torque
        override = (msg.header.frame_id or "root", np.array([f.x, f.y, f.z, t.x, t.y, t.z]))
        if not np.all(np.isfinite(override[1])):
            self.stats.reject("bad_wrench")
            return
        try:
            runtime = build_runtime(self._base, self._params, override)
        except ValueError as exc:
            self.stats.reject("bad_wrench")
            self.get_logger().warn(f"~/ee_wrench rejected: {exc}", throttle_duration_sec=2.0)
            return
        self._runtime, self._wrench_override = runtime, override

    def _on_trajectory(self, msg: JointTrajectory) -> None:
        runtime = self._runtime
        if runtime is None:
            self.stats.reject("trajectory_without_model")
            return
        try:
            self._trajectory = self._make_trajectory(runtime.model, msg)
        except (ValueError, TypeError, OverflowError) as exc:
            self.stats.reject("bad_trajectory")
            self.get_logger().warn(f"~/joint_trajectory rejected: {exc}", throttle_duration_sec=2.0)

    def _make_trajectory(self, model: RobotModel, msg: JointTrajectory) -> Desired | None:
        if not msg.points:
            return None  # an empty trajectory cancels the current one
        names = list(msg.joint_names)
        if len(set(names)) != len(names):
            raise ValueError("joint_names has duplicates")
        joints = np.array([model.joint_index(j) if j in model.joint_names else -1 for j in names])
        if np.any(joints < 0):
            raise ValueError(f"joint '{names[int(np.argmin(joints))]}' is not a movable joint of the model")
        points = msg.points

        def field(attr: str):
            rows = [list(getattr(p, attr)) for p in points]
            if all(len(r) == 0 for r in rows):
                return None
            if any(len(r) != len(names) for r in rows):
                raise ValueError(f"every point needs {len(names)} {attr} (or none at all)")
            return rows

        times = [p.time_from_start.sec + p.time_from_start.nanosec * 1e-9 for p in points]
        positions = field("positions")
        if positions is None:
            raise ValueError("points have no positions")
        start = None
        if self._last_measured is not None:
            q, qd = self._last_measured
            start = (q[joints], qd[joints], np.zeros(len(joints)))
        sampler = TrajectorySampler(times, positions, field("velocities"), field("accelerations"), start)
        stamp = Time.from_msg(msg.header.stamp).nanoseconds
        return Desired(sampler, joints, stamp or self.get_clock().now().nanoseconds)

    def _on_joint_states(self, msg: JointState) -> None:
        try:
            self._cycle(msg)
        except Exception as exc:  # a bug must cost one command, never the node
            self._drop("internal_error", f"joint_states not handled ({type(exc).__name__}: {exc})")

    def _cycle(self, msg: JointState) -> None:
        t0 = time.perf_counter()
        runtime = self._runtime
        if runtime is None:
            self.stats.reject("no_model")
            return
        key = tuple(msg.name)
        layout = self._layouts.get(key)
        if layout is None:
            try:
                layout = runtime.layout(msg.name)
            except ValueError as exc:
                self._drop("bad_names", str(exc))
                return
            if len(self._layouts) > 16:
                self._layouts.clear()
            self._layouts[key] = layout
        if layout.missing:
            self._drop("missing_joints", f"joint_states lacks {', '.join(layout.missing)}: no command")
            return
        n_msg = len(msg.name)
        if len(msg.position) != n_msg or len(msg.velocity) not in (0, n_msg):
            self._drop("bad_length", "joint_states position/velocity lengths differ from name")
            return
        q = np.asarray(msg.position, dtype=float)[layout.index]
        qd = (
            np.asarray(msg.velocity, dtype=float)[layout.index]
            if n_msg and len(msg.velocity)
            else np.zeros(len(q))
        )
        for i, leader, mult, offset in layout.mimic:
            q[i] = mult * q[leader] + offset
            qd[i] = mult * qd[leader]
        now_ns = self.get_clock().now().nanoseconds
        stamp_ns = msg.header.stamp.sec * 1_000_000_000 + msg.header.stamp.nanosec
        age = (now_ns - stamp_ns) * 1e-9 if stamp_ns else 0.0
        self.stats.input_age = age
        if age > self._params["joint_states_timeout"]:
            self._drop("stale", f"joint_states is {age:.3f} s old: no command")
            return
        desired = (
            (q, qd, np.zeros(len(q))) if self._trajectory is None else self._trajectory.sample(now_ns, q, qd)
        )
        try:  # non-finite measured or desired state: ValueError naming it, no command
            efforts = compute_efforts(runtime.efforts, q, qd, desired, runtime.wrenches(q))
        except ValueError as exc:
            self._drop("not_finite", f"joint_states not used: {exc}")
            return
        self._last_measured = (q, qd)
        table = efforts.table[:, runtime.output]
        self._command.data = table[OUT_TOTAL].tolist()
        self._effort_pub.publish(self._command)  # first: the robot waits for this one
        names = runtime.output_names
        for row, publisher in self._listened:
            publisher.publish(JointState(header=msg.header, name=names, effort=table[row].tolist()))
        clamped = [names[k] for k in np.flatnonzero(table[OUT_CLAMPED])]
        self.stats.published(time.perf_counter() - t0, clamped)

    def _find_listeners(self) -> None:
        """Refresh which of ~/joint_efforts and ~/terms/* have subscribers (publish only to those)."""
        pubs = [(OUT_TOTAL, self._joint_efforts_pub)]
        if self._params["publish_terms"]:
            pubs += [(row, self._term_pubs[term]) for row, term in enumerate(TERMS)]
        self._listened = [(row, pub) for row, pub in pubs if pub.get_subscription_count() > 0]

    def _drop(self, reason: str, text: str) -> None:
        self.stats.reject(reason)
        self.get_logger().warn(text, throttle_duration_sec=2.0)

    # --- diagnostics -----------------------------------------------------------------------

    def _publish_diagnostics(self) -> None:
        msg = DiagnosticArray()
        msg.header.stamp = self.get_clock().now().to_msg()
        msg.status = [
            diagnostic_status(
                self.get_fully_qualified_name(), self._base, self._runtime, self._params, self.stats
            )
        ]
        self._diag_pub.publish(msg)
        self.stats.new_period()
