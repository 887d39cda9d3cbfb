"""The demo's supervisor: runs the three phases against the running nodes and records the loop
(thin ROS adapter; the timeline is plant time since the physics started, s).

It follows the run through the simulator's ~/progress (20 Hz) and ~/time_origin, not through
joint_states: a subscriber taking every 1 kHz state costs a callback per step, which the
machine running the controller in real time cannot spare. At the end the simulator saves every
step and its command latencies (~/save, rnea_ros.sim.step_log). It records the trajectories
sent to the node, the friction runaway guard's and the feedback bound's keys on
/diagnostics and, when asked, the node's ~/terms (the plot; lock-step) or every joint_states
message (keep_messages); switches the node's compensate.* through its set_parameters service and
asks multisine_trajectory for a trajectory on ~/start. In real time it ends the run early when
the machine does not keep real time (RealTimeLost).
"""

from __future__ import annotations

import functools
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import rclpy
from diagnostic_msgs.msg import DiagnosticArray
from rcl_interfaces.srv import SetParameters
from rclpy.duration import Duration as RclDuration
from rclpy.event_handler import SubscriptionEventCallbacks
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node
from rclpy.parameter import Parameter
from rclpy.qos import QoSProfile, ReliabilityPolicy
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import JointState
from std_msgs.msg import Empty, Float64MultiArray, String
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from rnea_ros.ros.qos import DESCRIPTION_QOS
from rnea_ros.ros.stamps import stamp_ns
from rnea_ros.sim.processes import Processes
from rnea_ros.sim.report import RealTimeLost, Recording
from rnea_ros.sim.scenario import MODEL_TERMS, NODE, RATE, RECORDED_TERMS, SETTLE, TAIL, Config
from rnea_ros.sim.step_log import load
from rnea_ros.trajectory.sampling import TrajectorySampler

# joint_states (the numbers) reliable: nothing lost, also not the first states sent while
# discovery is still settling; the terms (the plot only) best effort, which costs less.
STATES_QOS = QoSProfile(depth=1000, reliability=ReliabilityPolicy.RELIABLE)
TERMS_QOS = QoSProfile(depth=1000, reliability=ReliabilityPolicy.BEST_EFFORT)
GATE_QOS = QoSProfile(depth=1, reliability=ReliabilityPolicy.BEST_EFFORT)  # keeps the newest state only
# smaller wait sets
LEAN: dict[str, Any] = {"event_callbacks": SubscriptionEventCallbacks(use_default_callbacks=False)}
STALL = 20.0  # s of wall time without simulated time advancing: the loop is dead
SIM = "/mujoco_sim"
# Real time is lost when, over a WINDOW of plant time, the node answered less than MIN_ANSWERED of
# the states the simulator published at RATE, or its median answer came later than MAX_LATENCY.
WINDOW, MIN_ANSWERED, MAX_LATENCY = 2.0, 0.2, 0.010  # s, share, s
LOOP_START = 180.0  # s for the nodes to come up
GRACE = 2.0  # s of plant time before the check starts (discovery, the first cycles)


class Supervisor:
    """One demo run; every wait is bounded by `timeout` (wall s) and by STALL."""

    def __init__(
        self,
        config: Config,
        processes: Processes | None,
        timeout: float,
        record_terms: bool,
        keep_messages: bool = False,
        hold: bool = False,
    ):
        self.config, self.processes = config, processes
        self.messages: list[JointState] | None = [] if keep_messages else None  # every joint_states
        self.deadline = time.monotonic() + timeout
        if not rclpy.ok():
            rclpy.init()
        self.node = node = Node("demo_supervisor")
        self.hold_pub = node.create_publisher(JointTrajectory, f"{NODE}/joint_trajectory", 10)
        if hold:  # before joint_states is subscribed: the physics waits for that subscriber
            self._hold_home()
        self.terms: dict[str, list[tuple[int, object]]] = {t: [] for t in RECORDED_TERMS}
        self.trajectories: list[JointTrajectory] = []
        self._window: list[tuple[float, list[float]]] = []  # (plant time, latencies) of the last WINDOW
        self.origin_ns: int | None = None  # stamp of plant time 0
        self.saved: str | None = None
        # The physics' gate (the simulator's start_subscribers 2: the node and this): created once
        # the node has the hold, so that the arm never runs without it. A hold published just as
        # the node's reader appeared can reach it only with the writer's next heartbeat, seconds
        # later (seen: the arm fell 146 degrees on joint 2 meanwhile, 3 runs in 10).
        self.gate: Node | None = None
        if keep_messages:
            node.create_subscription(JointState, "joint_states", self._on_state, STATES_QOS, **LEAN)
        elif hold:  # a node never spun: its reader keeps the newest state, no Python runs for it
            self.gate = Node("demo_supervisor_gate")
            self.gate.create_subscription(JointState, "joint_states", _ignore, GATE_QOS, raw=True, **LEAN)
        node.create_subscription(Clock, f"{SIM}/progress", self._on_progress, 10, **LEAN)
        node.create_subscription(Clock, f"{SIM}/time_origin", self._on_origin, DESCRIPTION_QOS)
        node.create_subscription(String, f"{SIM}/saved", self._on_saved, 10)
        self.save_pub = node.create_publisher(String, f"{SIM}/save", 10)
        if record_terms:
            for term in RECORDED_TERMS:
                node.create_subscription(
                    JointState,
                    f"{NODE}/terms/{term}",
                    functools.partial(self._on_term, term),
                    TERMS_QOS,
                    **LEAN,
                )
        node.create_subscription(JointTrajectory, f"{NODE}/joint_trajectory", self._on_trajectory, 10)
        node.create_subscription(Float64MultiArray, "/mujoco_sim/command_latency", self._on_latency, 100)
        node.create_subscription(DiagnosticArray, "/diagnostics", self._on_diagnostics, 10)
        self.guard_trips = 0
        self.faded: list[str] = []
        self.start_pub = node.create_publisher(Empty, "/multisine_trajectory/start", 10)
        self.set_client = node.create_client(SetParameters, f"{NODE}/set_parameters")
        self.executor = SingleThreadedExecutor()  # kept: rclpy.spin_once(node) re-adds the node each call
        self.executor.add_node(node)
        self.now = -1.0  # latest simulated time, s
        self._advanced = time.monotonic()
        self.lost = False  # real time was lost: no more checks (the run is being read)

    def _hold_home(self, acked: bool = True) -> None:
        """Send the node a one-point trajectory at the configured home pose, so that its PD holds
        the arm there from now on (without one the node compensates the model alone and an arm
        unlike its model, or with its compensation switched off, sags). `acked`: wait until the
        readers have it (not once this supervisor's own trajectory reader exists: it would only
        ack seconds later)."""
        c = self.config
        pub = self.hold_pub
        topic = f"{NODE}/joint_trajectory"
        while not any(i.node_name == NODE[1:] for i in self.node.get_subscriptions_info_by_topic(topic)):
            if self.processes is not None:
                self.processes.check()
            if time.monotonic() > self.deadline:
                raise TimeoutError(f"{NODE} did not subscribe to its trajectory topic")
            time.sleep(0.05)
        point = JointTrajectoryPoint(positions=[float(c.home[j]) for j in c.joints])
        point.velocities = point.accelerations = [0.0] * len(c.joints)
        point.time_from_start.nanosec = 1_000_000  # 1 ms: from the state at rest to the same pose
        pub.publish(JointTrajectory(joint_names=list(c.joints), points=[point]))
        if acked and not pub.wait_for_all_acked(RclDuration(seconds=10)):
            raise TimeoutError(f"{NODE} did not take the hold trajectory")

    # --- recording -------------------------------------------------------------------------

    def _on_trajectory(self, msg: JointTrajectory) -> None:
        if stamp_ns(msg.header.stamp):  # this supervisor's own holds (unstamped) are not recorded
            self.trajectories.append(msg)

    def _on_state(self, msg: JointState) -> None:
        if self.messages is not None:
            self.messages.append(msg)

    def _on_origin(self, msg: Clock) -> None:
        self.origin_ns = stamp_ns(msg.clock)

    def _on_progress(self, msg: Clock) -> None:
        if self.origin_ns is None:
            return
        t = self.plant_time(stamp_ns(msg.clock))
        if t > self.now:
            self.now = t
            self._advanced = time.monotonic()

    def _on_saved(self, msg: String) -> None:
        self.saved = msg.data

    def plant_time(self, stamp: int) -> float:
        """A stamp as plant time since the physics started, s."""
        return (stamp - (self.origin_ns or 0)) * 1e-9

    def _on_term(self, term: str, msg: JointState) -> None:
        self.terms[term].append((stamp_ns(msg.header.stamp), msg.effort))

    def _on_latency(self, msg: Float64MultiArray) -> None:
        if self.config.lockstep or self.lost or self.now < GRACE:
            return
        self._window.append((self.now, list(msg.data)))
        while self._window and self._window[0][0] < self.now - WINDOW:
            self._window.pop(0)
        self.check_real_time()

    def check_real_time(self) -> None:
        """RealTimeLost when, over the last WINDOW s, the node answered too few states or too late
        (real time only; the simulator reports its latencies every 0.5 s)."""
        if len(self._window) < 2:
            return
        span = self._window[-1][0] - self._window[0][0]
        if span < 0.5 * WINDOW:
            return
        samples = [x for _, batch in self._window[1:] for x in batch]
        answered = len(samples) / (span * RATE)
        late = float(np.median(samples)) if samples else np.inf
        if answered < MIN_ANSWERED or late > MAX_LATENCY:
            raise RealTimeLost(
                f"the machine did not keep real time at {self.now:.1f} s: over the last {span:.1f} s "
                f"the node answered {100 * answered:.0f} % of the {RATE:g} Hz joint_states "
                f"(median answer {late * 1e3:.1f} ms after the state; needed: {100 * MIN_ANSWERED:.0f} % "
                f"within {MAX_LATENCY * 1e3:g} ms). Stopped before the results say more about the "
                "machine than about the controller: close other programs, or run with --lockstep "
                "(each physics step waits for its command; the results do not depend on the machine)"
            )

    def _on_diagnostics(self, msg: DiagnosticArray) -> None:
        for status in msg.status:
            if not status.name.endswith("inverse dynamics"):
                continue
            values = {kv.key: kv.value for kv in status.values}
            if "friction_guard_trips" in values:
                self.guard_trips = max(self.guard_trips, int(values["friction_guard_trips"]))
                self.faded = sorted(set(self.faded) | set(values["friction_faded_joints"].split()))

    # --- waiting ---------------------------------------------------------------------------

    def _spin_until(self, done, what: str, stall: bool = True) -> None:
        """Spin until done(); TimeoutError after the run's deadline or when the loop stalls."""
        self._advanced = time.monotonic()
        while not done():
            if self.processes is not None:
                self.processes.check()
            now = time.monotonic()
            if now > self.deadline:
                raise TimeoutError(f"run timeout while waiting for {what}")
            if stall and now - self._advanced > STALL:
                raise TimeoutError(f"simulated time stuck at {self.now:.3f} s while waiting for {what}")
            self.executor.spin_once(timeout_sec=0.05)

    def wait_until(self, t: float) -> None:
        """Spin until simulated time reaches t (s)."""
        self._spin_until(lambda: self.now >= t, f"simulated time {t:.3f} s")

    def set_parameters(self, values: dict) -> None:
        """Set the node's parameters through its service, as rqt_reconfigure does."""
        end = time.monotonic() + 10.0
        self._spin_until(lambda: self.set_client.service_is_ready() or time.monotonic() > end, "a service")
        request = SetParameters.Request(
            parameters=[Parameter(k, value=v).to_parameter_msg() for k, v in values.items()]
        )
        future = self.set_client.call_async(request)
        end = time.monotonic() + 10.0
        self._spin_until(lambda: future.done() or time.monotonic() > end, "set_parameters answer")
        if not future.done():
            raise TimeoutError(f"{NODE}/set_parameters did not answer")
        bad = [r.reason for r in future.result().results if not r.successful]
        if bad:
            raise RuntimeError(f"parameters rejected: {bad}")

    def request_trajectory(self) -> float:
        """Ask for a multi-sine from the current pose; return its start (simulated s)."""
        count = len(self.trajectories)
        self.start_pub.publish(Empty())
        end = time.monotonic() + 30.0  # its design runs rnea along it (seconds on a busy machine)
        self._spin_until(lambda: len(self.trajectories) > count or time.monotonic() > end, "a trajectory")
        if len(self.trajectories) == count:
            raise TimeoutError("multisine_trajectory sent no trajectory")
        return self.plant_time(stamp_ns(self.trajectories[-1].header.stamp))

    # --- the run ---------------------------------------------------------------------------

    def wait_for_loop(self) -> None:
        """Until the physics runs and multisine_trajectory listens (LOOP_START s at most: a first
        run on a machine whose numba cache is empty compiles the kernels first)."""
        ready = time.monotonic() + LOOP_START
        self._spin_until(
            lambda: (
                (self.now > 0 and self.start_pub.get_subscription_count() > 0) or time.monotonic() > ready
            ),
            "the loop to start",
            stall=False,
        )
        if self.now <= 0:
            raise TimeoutError(
                f"the closed loop did not start within {LOOP_START:g} s (no command reached the simulator; "
                "the nodes' logs say why)"
            )

    def track(self, duration: float, settle: float = SETTLE) -> tuple[float, float]:
        """From rest: wait `settle` s, run one multi-sine of `duration` s and TAIL s after it; its
        window (simulated s)."""
        self.wait_for_loop()
        self.wait_until(settle)
        start = self.request_trajectory()
        self.wait_until(start + duration + TAIL)
        return start, start + duration

    def run(self) -> Recording:
        """The three phases; on RealTimeLost, the exception carries the recording so far (its
        `recording` attribute, None when the simulator could not save it)."""
        try:
            return self._phases()
        except RealTimeLost as exc:
            self.lost = True  # reading the run spins on: a late batch must not raise again
            try:
                exc.recording = self.recording(*self.windows)
            except (RuntimeError, TimeoutError, ValueError) as why:
                exc.recording = None
                exc.unrecorded = str(why)
            raise

    def _phases(self) -> Recording:
        c = self.config
        self.windows = ((0.0, c.hold), (np.inf, np.inf), (np.inf, np.inf))
        self.wait_for_loop()
        print(f"  loop running; phase 1: hold {c.hold:g} s, no trajectory, model terms compensated")
        self.wait_until(c.hold)
        # PD holds the pose until the trajectory's stamp (the node follows a trajectory from its
        # stamp on, as joint_trajectory_controller does; without a target the arm would fall
        # meanwhile, its model terms switched off)
        self._hold_home(acked=False)  # long before the trajectory: a design takes ≥ 10 ms
        pd = self.request_trajectory()  # first: it starts from the pose at rest
        self.windows = ((0.0, c.hold), (pd, pd + c.trajectory), (np.inf, np.inf))
        self.set_parameters({f"compensate.{t}": False for t in MODEL_TERMS})
        print(f"  phase 2 at {self.now:.2f} s: PD alone, trajectory {pd:.2f}..{pd + c.trajectory:.2f} s")
        self.wait_until(pd + c.trajectory)
        self.set_parameters({f"compensate.{t}": True for t in MODEL_TERMS})
        self.wait_until(pd + c.trajectory + SETTLE)
        ff = self.request_trajectory()
        self.windows = ((0.0, c.hold), (pd, pd + c.trajectory), (ff, ff + c.trajectory))
        print(f"  phase 3 at {self.now:.2f} s: PD + RNEA, trajectory {ff:.2f}..{ff + c.trajectory:.2f} s")
        self.wait_until(ff + c.trajectory + TAIL)
        return self.recording((0.0, c.hold), (pd, pd + c.trajectory), (ff, ff + c.trajectory))

    def steps(self) -> dict[str, np.ndarray]:
        """Every physics step of the run so far, saved by the simulator (rnea_ros.sim.step_log)."""
        path = Path(tempfile.mkdtemp(prefix="rnea_demo_")) / "steps.npz"
        self.saved = None
        self._spin_until(lambda: self.save_pub.get_subscription_count() > 0, "the simulator's ~/save")
        self.save_pub.publish(String(data=str(path)))
        end = time.monotonic() + 30.0
        self._spin_until(lambda: self.saved is not None or time.monotonic() > end, "~/saved", stall=False)
        if self.saved is None or self.saved.startswith("error"):
            raise RuntimeError(f"the simulator did not save the run: {self.saved or 'no answer'}")
        return load(path)

    def recording(self, hold, pd, ff) -> Recording:
        """The recorded data as arrays, with the desired positions the node was sampling."""
        steps = self.steps()
        names = [str(n) for n in steps["names"]]
        index = [names.index(j) for j in self.config.joints]
        t = (steps["stamp_ns"] - (self.origin_ns or 0)) * 1e-9  # exact ns, as the stamps
        q, applied = steps["q"][:, index], steps["applied"][:, index]
        q_des = np.full_like(q, np.nan)
        for k, msg in enumerate(self.trajectories):
            start = self.plant_time(stamp_ns(msg.header.stamp))
            later = self.trajectories[k + 1 :]
            stop = self.plant_time(stamp_ns(later[0].header.stamp)) if later else np.inf
            order = [list(msg.joint_names).index(j) for j in self.config.joints]
            points = msg.points
            sampler = TrajectorySampler(
                [p.time_from_start.sec + p.time_from_start.nanosec * 1e-9 for p in points],
                [np.asarray(p.positions)[order] for p in points],
                [np.asarray(p.velocities)[order] for p in points],
                [np.asarray(p.accelerations)[order] for p in points],
            )
            mask = (t >= start) & (t < stop)
            q_des[mask] = sampler.sample(t[mask] - start)[0]
        terms = {}
        for term, samples in self.terms.items():
            samples = sorted({s: e for s, e in samples}.items())
            if not samples:
                continue
            terms[term] = (
                np.array([self.plant_time(s) for s, _ in samples]),
                np.array([np.asarray(e) for _, e in samples]).reshape(len(samples), len(self.config.joints)),
            )
        return Recording(
            list(self.config.joints),
            t,
            q,
            q_des,
            hold,
            pd,
            ff,
            terms,
            steps["latency"],  # every pairing (the ~/command_latency batches may drop one)
            self.guard_trips,
            list(self.faded),
            applied,
        )

    def close(self) -> None:
        self.executor.shutdown()
        if self.gate is not None:
            self.gate.destroy_node()
        self.node.destroy_node()
        rclpy.try_shutdown()


def _ignore(_: object) -> None:
    """The gate's callback, never called (its node is not spun)."""
