"""The inverse_dynamics node: robot_description in, RNEA on every joint_states, efforts out.

A thin adapter: parameters (params.py), the model source (rnea_ros.ros.model_source), what the
cycle evaluates on the model (cycle_model.py), joint_states merged per joint (joint_states.py),
the effort law (rnea_ros.control.effort_law), the desired state of trajectories timed as
joint_trajectory_controller's (rnea_ros.trajectory.desired_state) and diagnostics
(diagnostics.py). All callbacks run in one thread and go through `_guard`, so no exception can end
the process. joint_states come in through joint_states_intake.py. Everything that belongs to a
model (the cycle model, the joint cache, the desired state, the name layouts) lives in one
`LoadedModel` (loaded_model.py) that a new model or parameter set replaces whole, so a cycle never
sees half an update.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace
from functools import partial

import numpy as np
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from geometry_msgs.msg import InertiaStamped, WrenchStamped
from nav_msgs.msg import Odometry
from rcl_interfaces.msg import SetParametersResult
from rclpy.clock import Clock, ClockType
from rclpy.node import Node
from rclpy.publisher import Publisher
from rclpy.qos import QoSProfile
from sensor_msgs.msg import Imu, JointState
from std_msgs.msg import Float64, Float64MultiArray, UInt8MultiArray
from trajectory_msgs.msg import JointTrajectory

from rnea_ros.algorithms.task_space import tip_apparent_mass
from rnea_ros.control.effort_law import compute_efforts
from rnea_ros.control.floating_efforts import compute_floating_efforts
from rnea_ros.control.terms import TERMS
from rnea_ros.errors import ParameterError, TrajectoryInPastError, URDFError
from rnea_ros.model.robot_model import Payload, RobotModel
from rnea_ros.nodes.inverse_dynamics import collision, payload_estimation
from rnea_ros.nodes.inverse_dynamics.base_state import BaseDrop, BaseStateInput
from rnea_ros.nodes.inverse_dynamics.contact_forces import ContactOutputs
from rnea_ros.nodes.inverse_dynamics.contact_params import contacts_of
from rnea_ros.nodes.inverse_dynamics.cycle_model import CycleModel, build_cycle_model
from rnea_ros.nodes.inverse_dynamics.diagnostics import SCALED, CycleStats, diagnostic_status
from rnea_ros.nodes.inverse_dynamics.feedback_log import FeedbackScaleLog
from rnea_ros.nodes.inverse_dynamics.imu_gravity import ImuDrop, ImuGravity
from rnea_ros.nodes.inverse_dynamics.joint_states_intake import CLOCK_MIXUP, JointStatesIntake
from rnea_ros.nodes.inverse_dynamics.loaded_model import LoadedModel
from rnea_ros.nodes.inverse_dynamics.overrides import (
    NONE,
    PAYLOAD_PARAMS,
    Overrides,
    message_link,
    payload_of,
    wrench_of,
)
from rnea_ros.nodes.inverse_dynamics.params import INVERSE_DYNAMICS, JOINT_KINDS
from rnea_ros.ros import diagnostics, parameters, qos
from rnea_ros.ros.cdr import Float64ArrayWriter, JointStateWriter, WireJointState
from rnea_ros.ros.guarded import guarded
from rnea_ros.ros.joint_states import JointStateCache
from rnea_ros.ros.kernel_startup import KernelsInBackground
from rnea_ros.ros.messages import InPlaceDoubles, ReusedJointState, trajectory_points
from rnea_ros.ros.model_source import (
    PARAMETER_SOURCE,
    model_from_urdf,
    output_joints,
    per_joint_parameters_fit,
    start_model_source,
)
from rnea_ros.ros.per_joint import JointParameters, is_joint_parameter, pre_set
from rnea_ros.ros.qos import JOINT_STATES_QOS
from rnea_ros.ros.run_node import run_node
from rnea_ros.ros.stamps import clock_ns, stamp_ns
from rnea_ros.ros.throttled_log import ThrottledLog
from rnea_ros.ros.unheard import UnheardTopic
from rnea_ros.ros.waitset_loop import stream
from rnea_ros.trajectory.desired_state import DesiredState, sample_time_ns
from rnea_ros.trajectory.plausible import JointBounds, check_rates, check_trajectory
from rnea_ros.trajectory.sampling import TrajectorySampler

# ~/effort_commands and ~/joint_trajectory: reliable, keep last 10 (qos_overrides.* may change it).
COMMAND_QOS = QoSProfile(depth=10)
# How often the node looks for subscribers of ~/joint_efforts and ~/terms/* (s): counting them
# costs more than a cycle's dynamics, so it is kept out of the cycle.
LISTENER_PERIOD = 0.1
UNHEARD_PERIOD = 0.5  # s between looks for a subscriber of ~/effort_commands (rnea_ros.ros.unheard)


class InverseDynamicsNode(Node):
    """See the README's node section for topics and parameters."""

    def __init__(self, managed: bool = False, **kwargs) -> None:
        """managed: leave kernels, topics, timers and the model to `_start` (lifecycle.py calls it
        on configure); otherwise the node starts at once."""
        super().__init__("inverse_dynamics", **kwargs)
        # feedback.<joint>.kp ... (rnea_ros.ros.per_joint), declared once the model is known
        self._joint_params = JointParameters(self, JOINT_KINDS, INVERSE_DYNAMICS)
        deferred = partial(is_joint_parameter, JOINT_KINDS)
        self._params = _checked(parameters.declare(self, INVERSE_DYNAMICS, deferred=deferred))
        self._loaded: LoadedModel | None = None
        self._pending: tuple[dict, CycleModel | None, Overrides] | None = None
        self._overrides = NONE  # what ~/ee_wrench and ~/payload set (kept across model swaps)
        self._payload_estimation: payload_estimation.PayloadEstimation | None = None  # from _start
        self._log = ThrottledLog(self)
        self._feedback_log = FeedbackScaleLog(self.get_logger())  # said on change, summed up now and then
        self._missing = ""  # the joints the model lacks at the last diagnostics ("" if none)
        self._guard_trips_logged = 0
        self.stats = CycleStats()
        self._intake = JointStatesIntake(self, self._drop, self._command_cycle)  # joint_states in
        self._collision = collision.CollisionMonitor(self)
        self._imu = ImuGravity()  # gravity_source imu_*: the gravity from ~/imu
        self._base = BaseStateInput()  # root_joint floating | planar: ~/odometry and ~/imu
        self._contacts = ContactOutputs(self)  # root_joint floating | planar: contacts out
        # one pre-set callback (rclpy joins the lists of several): `payload.estimation: off` (YAML
        # false) as "off", the schema's types (1 → 1.0), the per-joint mirrors
        joint_pre = pre_set(self._joint_params, lambda: self._params)
        pre = lambda ps: joint_pre(payload_estimation.off_as_string(ps))  # noqa: E731
        parameters.on_set(self, INVERSE_DYNAMICS, self._on_set_parameters, pre)  # types kept on refusal
        self.add_post_set_parameters_callback(self._guard("parameters", self._on_parameters_set))
        if not managed:
            self._start()

    def _start(self) -> None:
        """Kernels, publishers, subscriptions, timers and the model: what a running node has.
        ParameterError when the robot_description parameter gives no model."""
        # The parameter's model first, built without the kernels: a parameter file that gives no
        # model ends start-up here, before any kernel loads or compiles (however busy the machine)
        self._from_parameter = self._parameter_model()
        # Kernels before any cycle: a warm cache loads within KernelsInBackground's wait; a cold
        # one compiles on while the node serves its parameters, joint_states unanswered till then.
        self._kernels = KernelsInBackground(self, self._on_kernels_ready)
        self._deferred: tuple[str, str] | None = None  # (URDF, source) that waits for the kernels
        self._effort_pub = qos.publisher(self, Float64MultiArray, "~/effort_commands", COMMAND_QOS)
        self._command = Float64MultiArray()
        self._command_data = InPlaceDoubles()  # its data, refilled per cycle (where not sent as bytes)
        self._command_bytes = Float64ArrayWriter(self._command)
        # nobody subscribed 2 s after the first command: a remap that matched nothing, said so
        self._unheard = UnheardTopic(self, self._effort_pub, "~/effort_commands:=/effort_controller/commands")
        self._joint_efforts_pub = self.create_publisher(JointState, "~/joint_efforts", 10)
        self._term_pubs = {t: self.create_publisher(JointState, f"~/terms/{t}", 10) for t in TERMS}
        self._answers = {t: ReusedJointState() for t in (None, *TERMS)}  # per output, refilled
        self._answer_bytes = {t: JointStateWriter() for t in (None, *TERMS)}  # ... or sent as bytes
        self._diag_pub = self.create_publisher(DiagnosticArray, "/diagnostics", 10)
        guard = self._guard
        self._intake.subscribe(guard("joint_states", self._on_joint_states), self._kernels)
        # the inputs a cycle may need at once are streams (waitset_loop): served at every wait
        stream(
            qos.subscription(
                self,
                JointTrajectory,
                "~/joint_trajectory",
                guard("joint_trajectory", self._on_trajectory),
                COMMAND_QOS,
            )
        )
        on_wrench = guard("ee_wrench", self._on_wrench)
        stream(self.create_subscription(WrenchStamped, "~/ee_wrench", on_wrench, 10))
        stream(self.create_subscription(Imu, "~/imu", guard("imu", self._on_imu), JOINT_STATES_QOS))
        self.create_subscription(InertiaStamped, "~/payload", guard("payload", self._on_payload), 10)
        self._payload_estimation = payload_estimation.PayloadEstimation(self, self._apply_estimate)
        if self._params["root_joint"] != "fixed":  # base state and contacts (floating_base_node.md)
            stream(
                self.create_subscription(
                    Odometry, "~/odometry", guard("odometry", self._on_odometry), JOINT_STATES_QOS
                )
            )
            self.create_subscription(
                UInt8MultiArray, "~/contact_state", guard("contact_state", self._on_contact_state), 10
            )
        self.create_timer(self._params["diagnostics_period"], guard("diagnostics", self._publish_diagnostics))
        self._listened: list[tuple[str | None, Publisher]] = []  # (term or None for the total, publisher)
        self._find_listeners()
        # Steady clock: who listens is a wall-time matter, and with use_sim_time a simulator that
        # waits for ~/joint_efforts before its clock moves would otherwise never be found.
        steady = Clock(clock_type=ClockType.STEADY_TIME)
        self.create_timer(LISTENER_PERIOD, guard("listeners", self._find_listeners), clock=steady)
        self.create_timer(UNHEARD_PERIOD, guard("unheard", self._check_unheard), clock=steady)

        rate = self._params["tip_apparent_mass.rate"]
        if rate > 0:  # off the command path, well below its rate
            self._apparent_mass_pub = self.create_publisher(Float64, "~/tip_apparent_mass", 10)
            self.create_timer(1.0 / rate, guard("tip_apparent_mass", self._publish_apparent_mass))

        qos.warn_unmatched(self)  # qos_overrides.* naming no topic (remapped, misspelled)
        self._description_sub = start_model_source(self, self._params, self._load_description, guard)

    # --- safety net ------------------------------------------------------------------------

    def _guard(self, where: str, callback: Callable) -> Callable:
        """`callback` guarded: an unexpected exception is counted under internal_error with its
        text on diagnostics and logged (see rnea_ros.ros.guarded)."""
        return guarded(where, callback, self._internal_error)

    def _internal_error(self, where: str, text: str) -> None:
        self.stats.internal_error(where, text)
        self._drop(f"internal_error.{where}", f"{where} callback failed ({text})")

    def _drop(self, reason: str, text: str) -> None:
        self.stats.reject(reason, text)
        self._log.warn(reason, text)

    # --- model -----------------------------------------------------------------------------

    def _on_kernels_ready(self) -> None:
        """The kernels compiled in the background (a cold cache): build the model that waited."""
        if self._deferred is not None:
            (xml, source), self._deferred = self._deferred, None
            self._load_description(xml, source)

    def _load_description(self, xml: str, source: str) -> None:
        """A description installed, or rejected with the previous model kept; from the read-only
        robot_description parameter, a model it cannot give ended start-up before (`_start`).
        While the kernels compile in the background (a cold cache), the first cycle would compile
        in this thread: the description is parsed at once and waits (`_on_kernels_ready`)."""
        prebuilt, self._from_parameter = self._from_parameter, None
        if not self._kernels.ready:  # (the parameter's model was checked by _start)
            if source != PARAMETER_SOURCE:
                try:
                    model_from_urdf(xml, self._params, "fixed")
                    if self._params["root_joint"] != "fixed":
                        model_from_urdf(xml, self._params, self._params["root_joint"])
                except URDFError as exc:
                    self._reject_description(source, exc)
                    return
            self._deferred = (xml, source)
            return
        if source == PARAMETER_SOURCE:  # as built by _start, unless parameters were set meanwhile
            built = prebuilt or self._parameter_model()
            if built is not None:
                self._install(built, source)
            return
        try:
            built = self._build(xml)
        except ValueError as exc:
            self._reject_description(source, exc)
            return
        self._install(built, source)

    def _reject_description(self, source: str, exc: Exception) -> None:
        self.stats.model_rejected(f"{source}: {exc}")
        kept = "the previous model keeps commanding" if self._loaded else "no model loaded"
        self.get_logger().error(f"rejected robot description from {source}: {exc} ({kept})")

    def _parameter_model(self) -> tuple[LoadedModel, Overrides, dict] | None:
        """The model of the robot_description parameter (None when empty); ParameterError naming
        the parameter at fault. Builds no kernel (the model and the law are plain data)."""
        xml = self._params["robot_description"]
        if not xml:
            return None
        try:
            return self._build(xml)
        except URDFError as exc:
            raise ParameterError("robot_description", str(exc)) from None

    def _build(self, xml: str) -> tuple[LoadedModel, Overrides, dict]:
        """The LoadedModel of a description with the current parameters (and the message
        overrides it keeps) and the parameters with the per-joint ones of its joints; ValueError
        naming the link, joint or parameter at fault."""
        params, old = self._params, self._loaded
        base = model_from_urdf(xml, params, "fixed")
        floating = (
            None if params["root_joint"] == "fixed" else model_from_urdf(xml, params, params["root_joint"])
        )
        joints, output = output_joints(base, params)
        if old is not None:
            per_joint_parameters_fit(params, old.cycle.output_names, joints, INVERSE_DYNAMICS)
        params = self._joint_params.for_model(params, base, output)  # feedback.<joint>.kp ...
        cycle, override = self._cycle_for(base, params, floating)
        collision.check(params, cycle.model, len(cycle.output_names))
        payload_estimation.check(params, cycle.model)
        cache = JointStateCache(cycle.model, old.cache if old else None)
        loaded = LoadedModel(base, cycle, cache, DesiredState(cycle.model.nv), floating=floating)
        return loaded, override, params

    def _install(self, built: tuple[LoadedModel, Overrides, dict], source: str) -> None:
        old = self._loaded
        if old is not None and not old.desired.idle:
            self.get_logger().warn(
                "the running trajectory is cancelled, held positions released: the model was replaced"
            )
        self._loaded, self._overrides, self._params = built
        self._log.reset()  # the new model's reasons to drop a state are said at once
        for name in self._joint_params.declare(self._params):  # the model's joints' parameters
            self.get_logger().warn(self._joint_params.unknown_text(name))
        base, cycle = self._loaded.base, self._loaded.cycle
        self.stats.model_error = ""
        self.stats.last_drop = ""  # the reasons of another model do not say why this one is silent
        self._intake.uncommanded = ()
        self.get_logger().info(
            f"model '{base.name}' from {source}: {base.nv} joints, commands for {cycle.output_names}"
        )
        for warning in base.warnings:
            self.get_logger().warn(
                f"robot description: {warning} (loaded as written; strict_model refuses it)"
            )

    def _cycle_for(
        self, base: RobotModel, params: dict, floating: RobotModel | None = None
    ) -> tuple[CycleModel, Overrides]:
        """The cycle model of a new model; message wrenches and payload that do not fit it are dropped."""
        overrides, dropped = self._overrides.fitting(base)
        for text in dropped:
            self.get_logger().warning(f"{text}: dropped with the model change")
        if overrides != NONE:
            try:
                return build_cycle_model(base, params, overrides, floating=floating), overrides
            except ValueError as exc:
                self.get_logger().warning(f"~/ee_wrench and ~/payload dropped with the model change: {exc}")
        return build_cycle_model(base, params, NONE, floating=floating), NONE

    # --- parameters -----------------------------------------------------------------------

    def _on_set_parameters(self, params) -> SetParametersResult:
        if self._joint_params.syncing:  # the per-joint parameters of a model, as `_params` has them
            return SetParametersResult(successful=True)
        try:
            loaded = self._loaded
            n = None if loaded is None else len(loaded.cycle.output_names)
            new = _checked(parameters.proposed(self._joint_params.schema(), self._params, params, n))
            override = self._overrides.after_parameters((p.name for p in params), new["tip_link"] or None)
            previous = None if loaded is None else (loaded.cycle, self._params)
            cycle = (
                None
                if loaded is None
                else build_cycle_model(loaded.base, new, override, previous, floating=loaded.floating)
            )
            collision.check(new, None if cycle is None else cycle.model, n)
            payload_estimation.check(new, None if cycle is None else cycle.model)
        except ValueError as exc:
            self.get_logger().warn(f"parameters rejected: {exc}")
            return SetParametersResult(successful=False, reason=str(exc))
        except Exception as exc:  # noqa: BLE001 - a bug rejects the change, never ends the node
            self.stats.internal_errors["parameters"] = f"{type(exc).__name__}: {exc}"
            return SetParametersResult(successful=False, reason=f"internal error: {exc}")
        self._pending = (new, cycle, override)
        return SetParametersResult(successful=True)

    def _on_parameters_set(self, params) -> None:
        if self._pending is None:
            return
        self._params, cycle, self._overrides = self._pending
        self._pending = None
        if any(p.name in PAYLOAD_PARAMS for p in params):
            self._estimation_cancel("a payload parameter was set")
        if cycle is not None and self._loaded is not None:
            self._loaded = replace(self._loaded, cycle=cycle)

    # --- inputs ----------------------------------------------------------------------------

    def _on_wrench(self, msg: WrenchStamped) -> None:
        """A wrench exerted by the link named in frame_id (empty: tip_link), axes per ee_wrench_frame."""
        loaded = self._loaded
        if loaded is None:
            self.stats.reject("wrench_without_model")
            return
        f, t = msg.wrench.force, msg.wrench.torque
        axes = "root" if self._params["ee_wrench_frame"] == "root" else "link"
        try:
            link = message_link(
                loaded.base, msg.header.frame_id, self._params["tip_link"] or None, "~/ee_wrench"
            )
            overrides = self._overrides.with_wrench(link, wrench_of((f.x, f.y, f.z, t.x, t.y, t.z), axes))
        except ValueError as exc:
            self._drop("bad_wrench", f"{exc}: rejected")
            return
        self._apply_overrides(loaded, overrides, "bad_wrench")

    def _on_payload(self, msg: InertiaStamped) -> None:
        """The payload of the link named in frame_id (empty: tip_link); mass 0 removes it. The
        node's own estimates, published there, are not taken back."""
        if self._payload_estimation is not None and self._payload_estimation.is_echo(msg):
            return
        loaded = self._loaded
        if loaded is None:
            self.stats.reject("payload_without_model")
            return
        i = msg.inertia
        try:
            if i.m == 0:  # an empty message: no link needed
                payload = payload_of(loaded.base, msg.header.frame_id, 0.0, (0, 0, 0), (0,) * 6)
            else:
                link = message_link(
                    loaded.base, msg.header.frame_id, self._params["tip_link"] or None, "~/payload"
                )
                com, inertia = (i.com.x, i.com.y, i.com.z), (i.ixx, i.ixy, i.ixz, i.iyy, i.iyz, i.izz)
                payload = payload_of(loaded.base, link, i.m, com, inertia)
        except ValueError as exc:
            self._drop("bad_payload", f"{exc}: rejected")
            return
        if self._apply_overrides(loaded, self._overrides.with_payload(payload), "bad_payload"):
            what = "removed" if payload.mass == 0 else f"{payload.mass:g} kg on {payload.link}"
            self.get_logger().info(f"~/payload: {what}")
            self._estimation_cancel("a ~/payload message set the payload")

    def _apply_estimate(self, payload: Payload) -> bool:
        """A payload estimate (or a step of its blend) into the model, as ~/payload would."""
        loaded = self._loaded
        if loaded is None:
            return False
        return self._apply_overrides(loaded, self._overrides.with_payload(payload, "estimate"), "bad_payload")

    def _estimation_cancel(self, why: str) -> None:
        if self._payload_estimation is not None:
            self._payload_estimation.cancel(why)

    def _apply_overrides(self, loaded: LoadedModel, overrides: Overrides, reason: str) -> bool:
        """Swap in the cycle model with new message overrides, whole; rejected with a reason if it fails."""
        try:
            cycle = build_cycle_model(
                loaded.base, self._params, overrides, (loaded.cycle, self._params), floating=loaded.floating
            )
        except ValueError as exc:
            self._drop(reason, f"{exc}: rejected")
            return False
        self._loaded, self._overrides = replace(loaded, cycle=cycle), overrides
        return True

    def _on_imu(self, msg: Imu) -> None:
        """The base's IMU: its orientation and angular velocity with a floating root and base.source
        *imu (base_state.py); its gravity for gravity_source imu_* (imu_gravity.py); else ignored."""
        loaded = self._loaded
        if loaded is not None and loaded.floating is not None:
            if BaseStateInput.needs(self._params)[1]:
                try:
                    now_ns = clock_ns(self.get_clock())
                    self._base.receive(
                        "imu", loaded.base, self._params, msg, stamp_ns(msg.header.stamp), now_ns
                    )
                except BaseDrop as exc:
                    self._drop(exc.reason, str(exc))
            return
        if loaded is None or not ImuGravity.active(self._params):
            return
        try:
            now_ns = clock_ns(self.get_clock())
            self._imu.receive(loaded.base, self._params, msg, stamp_ns(msg.header.stamp), now_ns)
        except ImuDrop as exc:
            self._drop(exc.reason, str(exc))

    def _on_odometry(self, msg: Odometry) -> None:
        """The floating base's pose and twist (base_state.py); ignored with base.source imu."""
        loaded = self._loaded
        if loaded is None or loaded.floating is None or not BaseStateInput.needs(self._params)[0]:
            return
        try:
            now_ns = clock_ns(self.get_clock())
            self._base.receive("odometry", loaded.base, self._params, msg, stamp_ns(msg.header.stamp), now_ns)
        except BaseDrop as exc:
            self._drop(exc.reason, str(exc))

    def _on_contact_state(self, msg: UInt8MultiArray) -> None:
        """Which contacts of contacts.links are closed, in that order (contact_forces.py)."""
        loaded = self._loaded
        if loaded is None or loaded.floating is None:
            return
        try:
            self._contacts.receive_mask(loaded.cycle.contacts, msg)
        except ValueError as exc:
            self._drop("bad_contact_state", f"{exc}: dropped")

    def _on_trajectory(self, msg: JointTrajectory) -> None:
        """A trajectory for some model joints, timed as joint_trajectory_controller does (see
        rnea_ros.trajectory.desired_state); an empty one cancels every target."""
        loaded = self._loaded
        if loaded is None:
            self.stats.reject("trajectory_without_model")
            return
        if not msg.points:
            loaded.desired.cancel()
            return
        now_ns = self.get_clock().now().nanoseconds
        try:
            joints, points = _trajectory_input(loaded.cycle.model, loaded.bounds, msg)
            start_ns = stamp_ns(msg.header.stamp)
            if start_ns and (start_ns - now_ns) * 1e-9 > CLOCK_MIXUP:
                raise ValueError(
                    f"it starts {(start_ns - now_ns) * 1e-9:.3g} s in the future: is use_sim_time set on "
                    "one side only (simulated vs wall-clock time)?"
                )
            loaded.desired.receive(joints, *points, start_ns=start_ns, now_ns=now_ns)
        except TrajectoryInPastError as exc:
            self._drop("trajectory_in_past", f"~/joint_trajectory rejected: {exc}")
        except (ValueError, TypeError, OverflowError) as exc:
            self._drop("bad_trajectory", f"~/joint_trajectory rejected: {exc}")

    def _on_joint_states(self, raw: bytes | None) -> None:
        """joint_states (raw), merged per joint; a command for the newest state (joint_states_intake.py)."""
        self._intake.receive(raw, self._loaded, self._params, self.stats)

    def _command_cycle(self, loaded: LoadedModel, msg: WireJointState, now_ns: int, t0: float) -> None:
        """Compute and publish the command for the cached state (`msg` triggered it)."""
        timeout = self._params["joint_states_timeout"]
        state = loaded.cache.state(now_ns - int(timeout * 1e9) if timeout > 0 else None)
        if isinstance(state, list):
            self._drop("missing_joints", self._intake.missing_text(loaded, state, timeout))
            return
        q, qd = state
        cycle = loaded.cycle
        if ImuGravity.active(self._params):  # the base's gravity, fresh, or no command
            try:
                cycle.efforts.set_gravity(self._imu.gravity(self._params, now_ns))
            except ImuDrop as exc:
                self._drop(exc.reason, str(exc))
                return
        # the state's time: the desired state's instant, loop period (friction bound, runaway
        # guard, feedback bound) and age
        stamp = msg.stamp_ns or now_ns
        desired = (q, qd, loaded.rest)
        driven = loaded.undriven
        if not loaded.desired.idle:
            q_d, qd_d, qdd_d, targets = loaded.desired.sample(sample_time_ns(stamp, now_ns), q, qd)
            if np.isfinite(q_d).all() and np.isfinite(qd_d).all() and np.isfinite(qdd_d).all():
                desired, driven = (q_d, qd_d, qdd_d), targets
            else:  # never fall silent on a trajectory: drop it and compensate the measured state
                loaded.desired.cancel()
                self._drop("bad_trajectory", "~/joint_trajectory cancelled: its desired state is not finite")
        floating = cycle.floating
        if floating is not None:  # the base's state, fresh, or no command
            try:
                base_q, base_v = self._base.state(floating.floating, self._params, now_ns)
            except BaseDrop as exc:
                self._drop(exc.reason, str(exc))
                return
        try:  # non-finite desired state or result: ValueError naming it, no command
            wrenches = cycle.wrenches(q)
            if floating is None:
                efforts = compute_efforts(
                    cycle.efforts, q, qd, desired, wrenches, driven=driven, t=stamp * 1e-9,
                    delay=(now_ns - stamp) * 1e-9,
                )  # fmt: skip
            else:
                efforts = compute_floating_efforts(
                    floating, base_q, base_v, q, qd, desired, self._contacts.active(cycle.contacts),
                    cycle.wrench_root if wrenches is None else wrenches, driven=driven, t=stamp * 1e-9,
                    delay=(now_ns - stamp) * 1e-9,
                )  # fmt: skip
        except ValueError as exc:  # every input was checked: numbers that overflow together
            self._drop("not_finite", f"no command for this cycle's inputs: {exc}")
            return
        total = self._send(cycle, efforts.total)  # first: the robot waits
        if total is None:
            return
        out = None if cycle.output_is_model_order else cycle.output
        names = cycle.output_names
        if self._listened:
            terms = efforts.terms
            for term, publisher in self._listened:
                values = total if term is None else terms[term] if out is None else terms[term][out]
                answer = self._answer_bytes[term].bytes_for(msg, names, values)
                if answer is None:
                    answer = self._answers[term].filled(msg.header, names, values)
                publisher.publish(answer)
        clamped = efforts.clamped_joints(names, cycle.output_list)
        self.stats.published(now_ns, time.perf_counter() - t0, clamped)
        if clamped:
            text = f"effort clamped to its limit x effort_limit_scale on {', '.join(clamped)}"
            self._log.warn("clamped", text)
        self._feedback_log.cycle(cycle, min(efforts.feedback_scale.tolist(), default=1.0) < SCALED, t0)
        if floating is not None and floating.solution is not None:  # after the command
            solution = floating.solution
            infeasible = self._contacts.publish(
                floating.floating, floating.q_full, cycle.contacts, solution, msg.header,
                self._params["contacts.marker_scale"],
            )  # fmt: skip
            if infeasible:  # not a planar base's drive carrying its rows without contacts
                self._log.warn("contacts_infeasible", f"no admissible contact force: {solution.message}")
        if self._params["observer.enabled"]:  # after the command: the robot does not wait for it
            cache = loaded.cache
            fresh = cache.effort_stamp == cache.stamp
            r = self._collision.cycle(cycle, self._params, q, qd, cache.effort, fresh, msg.header, stamp)
            estimation = self._payload_estimation
            if estimation is not None and (self._params["payload.estimation"] != "off" or estimation.busy):
                estimation.cycle(
                    cycle, loaded.base, self._params, q, qd, r, self._collision.collision, msg.header, stamp
                )

    def _send(self, cycle: CycleModel, tau: np.ndarray) -> np.ndarray | None:
        """Publish the command for joint torques `tau` (model order) on ~/effort_commands: the one
        place a command leaves the node (cycles, the lifecycle hold), through the output stage
        `cycle.command` (output order, effort limit × effort_limit_scale, effort_unit). The values
        sent (the stage's workspace), or None when not finite: nothing is sent then."""
        values = cycle.command(tau)
        if values is None:
            self._drop("not_finite", "the command is not finite: not published")
            return None
        command = self._command_bytes.bytes_for(values)
        if command is None:
            self._command.data = self._command_data.filled(values)
        self._effort_pub.publish(self._command if command is None else command)
        return values

    def _publish_apparent_mass(self) -> None:
        """Apparent mass of tip_link (kg) along its velocity, or the rest direction when still."""
        loaded = self._loaded
        if loaded is None or not self._kernels.ready:
            return
        timeout = self._params["joint_states_timeout"]
        now_ns = self.get_clock().now().nanoseconds
        state = loaded.cache.state(now_ns - int(timeout * 1e9) if timeout > 0 else None)
        if isinstance(state, list):
            return  # no current state: nothing to say
        q, qd = state
        p = self._params
        mass = tip_apparent_mass(
            loaded.cycle.model,
            q,
            qd,
            p["tip_link"],
            p["tip_apparent_mass.direction"],
            p["tip_apparent_mass.rest_speed"],
        )
        self._apparent_mass_pub.publish(Float64(data=mass))

    def _find_listeners(self) -> None:
        """Refresh which of ~/joint_efforts and ~/terms/* have subscribers (publish only to those)."""
        pubs: list[tuple[str | None, Publisher]] = [(None, self._joint_efforts_pub)]
        if self._params["publish_terms"]:
            pubs += [(term, self._term_pubs[term]) for term in TERMS]
        self._listened = [(term, pub) for term, pub in pubs if pub.get_subscription_count() > 0]

    def _check_unheard(self) -> None:
        self._unheard.check(self.stats.commands > 0)
        self.stats.unheard = self._unheard.text

    # --- diagnostics -----------------------------------------------------------------------

    def _publish_diagnostics(self) -> None:
        self._log_guard_trips()
        now = self.get_clock().now()
        statuses = [self._diagnostic_status(now.nanoseconds)]
        unheard = self._unheard
        statuses[0].values.extend(
            [KeyValue(key="command_topic", value=unheard.topic),
             KeyValue(key="command_subscribers", value=str(unheard.subscribers))]
        )  # fmt: skip
        if statuses[0].level != DiagnosticStatus.OK and self._missing:  # said in the log too
            self._log.warn("silent_missing_joints", self._missing)
        statuses[0].values.extend(self._imu.values(self._params, now.nanoseconds))
        loaded = self._loaded
        if self._params["root_joint"] != "fixed":
            statuses[0].values.extend(self._base.values(self._params, now.nanoseconds))
            contacts = () if loaded is None else loaded.cycle.contacts
            statuses.append(self._contacts.status(self.get_fully_qualified_name(), len(contacts)))
        if self._params["observer.enabled"]:
            statuses.append(self._collision.status(self.get_fully_qualified_name()))
        if self._params["payload.estimation"] != "off":
            statuses.append(self._payload_estimation.status(self.get_fully_qualified_name()))  # type: ignore[union-attr]
        diagnostics.publish(self._diag_pub, now.to_msg(), statuses)
        self.stats.new_period()

    def _diagnostic_status(self, now_ns: int) -> DiagnosticStatus:
        loaded = self._loaded
        return diagnostic_status(
            self.get_fully_qualified_name(),
            None if loaded is None else loaded.base,
            None if loaded is None else loaded.cycle,
            self._params["joint_states_timeout"],
            now_ns,
            self.stats,
            self._silence_reason(now_ns),
        )

    def _silence_reason(self, now_ns: int) -> str:
        """Why no command would go out now (a reason kept from another model would be stale): the
        input rejected in this diagnostics period, else the joints the current model lacks.
        `_missing` keeps the latter (empty when none lacks)."""
        self._missing = ""
        loaded = self._loaded
        if loaded is None:
            return "no model loaded"
        if self.stats.rejected_in_period and self.stats.last_drop:
            return self.stats.last_drop
        timeout = self._params["joint_states_timeout"]
        state = loaded.cache.state(now_ns - int(timeout * 1e9) if timeout > 0 else None)
        if isinstance(state, list):
            if not self.stats.last_receive_ns:
                return "waiting for joint_states"
            self._missing = self._intake.missing_text(loaded, state, timeout)
            return self._missing
        return self.stats.last_drop

    def _log_guard_trips(self) -> None:
        """A warning when the friction runaway guard faded a joint's friction term out since the
        last diagnostics (the log, not only /diagnostics, says so)."""
        loaded = self._loaded
        if loaded is None:
            return
        cycle = loaded.cycle
        guard = cycle.efforts.guard
        if guard.trips > self._guard_trips_logged:
            faded = [n for n, t in zip(cycle.output_names, guard.tripped[cycle.output], strict=True) if t]
            self.get_logger().warn(
                f"friction runaway guard: friction term faded out on {', '.join(faded) or 'no joint now'} "
                f"({guard.trips} trips): it was driving the joint; check friction.* or the URDF's friction"
            )
        self._guard_trips_logged = guard.trips


def _trajectory_input(
    model: RobotModel, bounds: JointBounds, msg: JointTrajectory
) -> tuple[np.ndarray, tuple]:
    """(model indices of msg's joints, (times, positions, velocities, accelerations)); ValueError
    naming the point and joint at fault (bounds: the plausible values)."""
    names = list(msg.joint_names)
    for k, name in enumerate(names):
        if name in names[:k]:
            raise ValueError(f"joint '{name}' is listed twice in joint_names")
        if name not in model.joint_names:
            valid = ", ".join(model.joint_names)
            raise ValueError(f"joint '{name}' is not a movable joint of the model (its joints: {valid})")
    joints = np.array([model.joint_index(j) for j in names], dtype=np.int64)
    points = trajectory_points(msg)
    for what, values in zip(("positions", "velocities", "accelerations"), points[1:], strict=True):
        if values is not None and not np.isfinite(values).all():
            k, j = np.argwhere(~np.isfinite(values))[0]
            raise ValueError(f"point {k}: {what} of '{names[j]}' is NaN or Inf")
    check_trajectory(bounds, joints, *points)  # plausible: no absurd target
    check_rates(TrajectorySampler(*points), names)  # nor an absurd rate between the points
    return joints, points


def _checked(params: dict) -> dict:
    """Rules between parameters that the schema cannot state; ParameterError naming one."""
    if params["tip_apparent_mass.rate"] > 0 and not params["tip_link"]:
        raise ParameterError(
            "tip_apparent_mass.rate", "needs tip_link (the link whose apparent mass is published)"
        )
    if not any(params["tip_apparent_mass.direction"]):
        raise ParameterError("tip_apparent_mass.direction", "must not be zero")
    payload_estimation.check(params)  # without the model (its link: once it is loaded)
    if params["root_joint"] != "fixed":
        contacts_of(params, None)  # the contacts.* parameters agree with each other
        if params["gravity_source"] != "parameter":
            raise ParameterError(
                "gravity_source",
                f"must be 'parameter' with root_joint {params['root_joint']}: gravity is the world's "
                "(the frame of ~/odometry); ~/imu gives the base's orientation (base.source)",
            )
    return params


def main(args: list[str] | None = None) -> int:
    """Run the node (its executable starts here through rnea_ros.ros.entry: __main__.py)."""
    return run_node(args, InverseDynamicsNode, "inverse_dynamics")


__all__ = ["InverseDynamicsNode", "main"]
