"""mujoco_sim: a MuJoCo-simulated robot behind a ros2_control-like interface (thin adapter).

Physics (rnea_ros.sim.mujoco_arm) steps at `rate` Hz; after every step the node publishes
`/clock` (simulated time) and `joint_states` (every joint, stamped with simulated time; effort =
what was applied). Efforts come like from ros2_control's forward_command_controller with an
effort interface: std_msgs/Float64MultiArray on `/<controller_name>/commands`, values in the order
of `joints`, the last command held; messages with the wrong size or NaN/Inf are dropped. Joints
outside `joints` (e.g. the fingers of a gripper) are held where they start by a stiff PD servo.

Clocks: in real time (default) a step runs every 1/rate s of wall time, with the last command
received. With `lockstep` every step waits for the command answering the previous joint_states
(paired through `answer_topic`, the inverse_dynamics node's ~/joint_efforts that repeats the
command with the input's stamp), so a run does not depend on the machine's speed. In both the
physics starts with the first command (brakes released) once `start_subscribers` listen to
joint_states (a recorder can ask to see the run from rest); simulated time is 0 until then.
Every wait is bounded: an unanswered joint_states is published again after `answer_timeout`.
"""

from __future__ import annotations

import sys
import time
from typing import Any

import numpy as np
import rclpy
from rclpy.event_handler import PublisherEventCallbacks, SubscriptionEventCallbacks
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray, String

from ..node.common import DESCRIPTION_QOS, run_node, set_stamp, stamp_ns
from .answers import AnswerMatcher
from .mujoco_arm import INTEGRATORS, MujocoArm

# No QoS event handlers: each one is an entity in every wait set, and the loop waits ~2000 times a second.
LEAN_PUB: dict[str, Any] = {"event_callbacks": PublisherEventCallbacks(use_default_callbacks=False)}
LEAN_SUB: dict[str, Any] = {"event_callbacks": SubscriptionEventCallbacks(use_default_callbacks=False)}
PARAMETERS = {
    "robot_description": ("", "URDF text; empty: listen to the robot_description topic"),
    "controller_name": ("effort_controller", "commands arrive on /<controller_name>/commands"),
    "joints": ([""], "joints of the effort commands, in order (empty: every movable joint)"),
    "initial_joints": ([""], "joints with an initial position (others start at 0, within limits)"),
    "initial_positions": ([0.0], "initial positions of initial_joints, rad or m"),
    "hold_kp": (200.0, "stiffness of the servo holding joints outside 'joints', N m/rad or N/m"),
    "hold_kd": (2.0, "damping of that servo, N m s/rad or N s/m"),
    "rate": (1000.0, "physics and joint_states rate, Hz"),
    "integrator": ("implicitfast", f"MuJoCo integrator: one of {', '.join(INTEGRATORS)}"),
    "lockstep": (False, "each step waits for the command answering the previous joint_states"),
    "answer_topic": ("/inverse_dynamics/joint_efforts", "stamped answers (JointState) pairing commands"),
    "answer_timeout": (0.2, "lockstep: publish an unanswered joint_states again after this, s"),
    "publish_clock": (True, "publish simulated time on /clock"),
    "start_subscribers": (1, "physics starts once joint_states has this many subscribers (and a command)"),
}


class SimNode(Node):
    """A simulated robot; `run()` drives the physics loop (see the module docstring)."""

    def __init__(self, **kwargs) -> None:
        super().__init__("mujoco_sim", **kwargs)
        for name, (default, description) in PARAMETERS.items():
            self.declare_parameter(name, default, _descriptor(description))
        self.p = {name: self.get_parameter(name).value for name in PARAMETERS}
        self.arm: MujocoArm | None = None
        self.command: np.ndarray | None = None  # last valid command, `joints` order
        self.dropped = {"size": 0, "not_finite": 0}
        self.matcher = AnswerMatcher()
        self.overruns = 0
        self._running = False
        self.clock_pub = (
            self.create_publisher(Clock, "/clock", 10, **LEAN_PUB) if self.p["publish_clock"] else None
        )
        # Deep enough that a reliable recorder lagging up to 1 s of steps loses nothing; the
        # controller's keep-last-1 subscription still gets only the newest state.
        self.state_pub = self.create_publisher(JointState, "joint_states", 1000, **LEAN_PUB)
        self.latency_pub = self.create_publisher(Float64MultiArray, "~/command_latency", 10, **LEAN_PUB)
        self._latency_sent = 0
        if self.p["robot_description"]:
            self._load(self.p["robot_description"])
        else:
            self.create_subscription(String, "robot_description", self._on_description, DESCRIPTION_QOS)
            self.get_logger().info("waiting for a URDF on topic robot_description")

    # --- set-up --------------------------------------------------------------------------

    def _on_description(self, msg: String) -> None:
        if self.arm is not None:
            return
        try:
            self._load(msg.data)
        except ValueError as exc:
            self.get_logger().error(f"robot_description rejected: {exc}")

    def _load(self, urdf: str) -> None:
        p = self.p
        if not p["rate"] > 0:
            raise ValueError(f"rate must be > 0 Hz, got {p['rate']}")
        names = MujocoArm(urdf).joint_names
        commanded = [j for j in p["joints"] if j] or list(names)
        held = tuple(j for j in names if j not in commanded)
        arm = MujocoArm(urdf, 1.0 / p["rate"], p["integrator"], held, p["hold_kp"], p["hold_kd"])
        initial = [j for j in p["initial_joints"] if j]
        if initial and len(initial) != len(p["initial_positions"]):
            raise ValueError("initial_positions must have one value per joint of initial_joints")
        arm.reset(dict(zip(initial, p["initial_positions"], strict=False)))
        self.commanded = arm.indices(commanded)
        self.arm = arm
        self.state = JointState(name=list(arm.joint_names))
        topic = f"/{p['controller_name']}/commands"
        self.create_subscription(Float64MultiArray, topic, self._on_command, 10, **LEAN_SUB)
        if p["answer_topic"]:
            self.create_subscription(JointState, p["answer_topic"], self._on_answer, 10, **LEAN_SUB)
        elif p["lockstep"]:
            raise ValueError("lockstep needs answer_topic")
        mode = "lock-step" if p["lockstep"] else "real time"
        self.get_logger().info(
            f"simulating {arm.nv} joints at {p['rate']:g} Hz ({mode}); efforts for "
            f"{commanded} on {topic}; holding {list(held)}; physics starts with the first command"
        )

    # --- inputs ----------------------------------------------------------------------------

    def _on_command(self, msg: Float64MultiArray) -> None:
        now = time.perf_counter()
        values = np.asarray(msg.data, dtype=float)
        if values.shape != (len(self.commanded),):
            self.dropped["size"] += 1
            self.get_logger().warn(
                f"command with {values.size} values for {len(self.commanded)} joints dropped",
                throttle_duration_sec=2.0,
            )
            return
        if not np.all(np.isfinite(values)):
            self.dropped["not_finite"] += 1
            self.get_logger().warn("command with NaN or Inf dropped", throttle_duration_sec=2.0)
            return
        self.command = values
        self.matcher.command(msg.data, now)

    def _on_answer(self, msg: JointState) -> None:
        self.matcher.answer(stamp_ns(msg.header.stamp), msg.effort)

    # --- loop ------------------------------------------------------------------------------

    def _publish_state(self) -> int:
        """Publish /clock and joint_states for the current simulated time; return the stamp (ns)."""
        arm = self.arm
        assert arm is not None  # the loop starts once the arm is built
        stamp = round(arm.time * 1e9)
        if self.clock_pub is not None:
            clock = Clock()
            set_stamp(clock.clock, stamp)
            self.clock_pub.publish(clock)
        msg = self.state
        set_stamp(msg.header.stamp, stamp)
        msg.position, msg.velocity, msg.effort = arm.q.tolist(), arm.qd.tolist(), arm.applied.tolist()
        self.matcher.published(stamp, time.perf_counter())
        self.state_pub.publish(msg)
        return stamp

    def _ready(self) -> bool:
        """Whether the physics runs: a command arrived and everyone expected listens."""
        if self._running:
            return True
        self._running = (
            self.command is not None
            and self.state_pub.get_subscription_count() >= self.p["start_subscribers"]
        )
        return self._running

    def _step(self) -> None:
        arm = self.arm
        assert arm is not None  # the loop starts once the arm is built
        effort = np.zeros(arm.nv)
        if self.command is not None:
            effort[self.commanded] = self.command
        arm.step(effort)

    def _publish_latency(self) -> None:
        samples = self.matcher.latencies[self._latency_sent :]
        if samples:
            self.latency_pub.publish(Float64MultiArray(data=samples))
            self._latency_sent += len(samples)
        if len(self.matcher.latencies) > 100_000:
            del self.matcher.latencies[: self._latency_sent]
            self._latency_sent = 0

    def run(self, executor: SingleThreadedExecutor) -> None:
        """The physics loop, until shutdown."""
        while self.arm is None and rclpy.ok():
            executor.spin_once(timeout_sec=0.1)
        if self.p["lockstep"]:
            self._run_lockstep(executor)
        else:
            self._run_real_time(executor)

    def _run_lockstep(self, executor: SingleThreadedExecutor) -> None:
        """Publish, wait (bounded, publishing again) for the answer, step; repeat."""
        timeout = self.p["answer_timeout"]
        next_latency = time.perf_counter() + 0.5
        while rclpy.ok():
            stamp = self._publish_state()
            deadline = time.perf_counter() + timeout
            while not self.matcher.answered(stamp) and rclpy.ok():
                executor.spin_once(timeout_sec=max(0.0, deadline - time.perf_counter()))
                if time.perf_counter() >= deadline and not self.matcher.answered(stamp):
                    stamp = self._publish_state()
                    deadline = time.perf_counter() + timeout
            if not self._ready():
                _spin_for(executor, timeout)
                continue
            self._step()
            if time.perf_counter() > next_latency:
                self._publish_latency()
                next_latency += 0.5

    def _run_real_time(self, executor: SingleThreadedExecutor) -> None:
        """Step and publish every 1/rate s of wall time with the last command received."""
        period = 1.0 / self.p["rate"]
        tick = time.perf_counter()
        next_latency = tick + 0.5
        while rclpy.ok():
            if self._ready():
                self._step()
            self._publish_state()
            tick += period
            _spin_for(executor, tick - time.perf_counter())
            if time.perf_counter() - tick > 20 * period:  # far behind: slow down, don't burst
                self.overruns += 1
                tick = time.perf_counter()
            if tick > next_latency:
                self._publish_latency()
                next_latency += 0.5


def _spin_for(executor: SingleThreadedExecutor, seconds: float) -> None:
    end = time.perf_counter() + seconds
    while (remaining := end - time.perf_counter()) > 0 and rclpy.ok():
        executor.spin_once(timeout_sec=remaining)


def _descriptor(description: str):
    from rcl_interfaces.msg import ParameterDescriptor

    return ParameterDescriptor(description=description, read_only=True)


def _spin(node: SimNode) -> None:
    """Step the simulation until shutdown, then say where it stopped."""
    executor = SingleThreadedExecutor()
    executor.add_node(node)
    try:
        node.run(executor)
    finally:
        if node.arm is not None:
            node.get_logger().info(
                f"stopped at t = {node.arm.time:.3f} s; dropped commands {node.dropped}, "
                f"overruns {node.overruns}"
            )
        executor.shutdown()


def main(args: list[str] | None = None) -> int:
    """Run the mujoco_sim node."""
    return run_node(args, SimNode, "mujoco_sim", _spin)


if __name__ == "__main__":
    sys.exit(main())
