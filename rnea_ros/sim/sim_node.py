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

With `controller_type: joint_trajectory_controller` the simulator runs ros2_control's
joint_trajectory_controller with an effort command interface inside its loop instead
(rnea_ros.sim.jtc): trajectory_msgs/JointTrajectory on `/<controller_name>/joint_trajectory`
(joint names any order of `joints`; points may carry `effort`, the feedforward τ_d), and at every
physics step u = τ_d + PID(e, ė) with gains `gains.<joint>.p/i/d/i_clamp/ff_velocity_scale` (all
0 by default, as JTC's). The physics starts with the first trajectory (stamp 0: at once). The law
runs inside every step, so the loop is lock-step by construction: `lockstep` and `answer_topic`
do not apply, steps are paced in real time.

With `controller_type: ros2_control` no controller is simulated: the real controller manager
(`ros2_control_node`, rnea_ros.sim.ros2_control) runs them, and this node is the robot behind
its topic_based_ros2_control hardware. It publishes the URDF it simulates (with the
`<ros2_control>` block) on /robot_description (transient local), its state on `~/joint_states`
(position, velocity, effort of every joint), and takes sensor_msgs/JointState commands on
`~/joint_commands`: the efforts of `joints`, in that order, first in the message (the plugin
names every joint of its block, efforts only for those with an effort command interface).
Brakes: the physics starts with the first command that is not all zeros (the controllers send
zeros until one is active and commanding). In real time (`wall_clock`) the controller manager's
loop and this one are two 1 kHz loops, as with a robot. In lock-step the controller manager runs
on this node's /clock (`use_sim_time`: one cycle per /clock step): each step publishes the state,
then /clock, and waits for the command of that cycle (stamped, on the wall clock, after the
/clock went out; older ones are stale and dropped) and, once the node on `answer_topic` has
answered, for its answer to that step (at most ANSWER_PATIENCE; the next cycle carries it to
the arm). Before the brakes are released /clock advances without physics, one step per command
of the controller manager (or per `answer_timeout` while none comes), so that it can activate
its controllers; the state goes out every IDLE_STATE_EVERY steps only.
"""

from __future__ import annotations

if __name__ == "__main__" and __spec__ is not None:  # python -m: a stop while importing is one line
    from rnea_ros.ros.entry import run_module

    run_module("mujoco_sim", __spec__.name)

import sys
import time
from collections import deque

import numpy as np
import rclpy
from rclpy.event_handler import PublisherEventCallbacks, SubscriptionEventCallbacks
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray, String
from trajectory_msgs.msg import JointTrajectory

from rnea_ros.ros.parameters import declare
from rnea_ros.ros.qos import DESCRIPTION_QOS
from rnea_ros.ros.run_node import run_node
from rnea_ros.ros.schema import Param, table
from rnea_ros.ros.signals import join_signal_shutdown
from rnea_ros.ros.stamps import set_stamp, stamp_ns
from rnea_ros.ros.throttled_log import say
from rnea_ros.sim.answer_pairing import AnswerMatcher, TickAnswers
from rnea_ros.sim.jtc import GAIN_NAMES, Gains, JointTrajectoryController
from rnea_ros.sim.mujoco_arm import COULOMB_MODELS, INTEGRATORS, MujocoArm
from rnea_ros.sim.step_log import StepLog

PROGRESS_PERIOD = 0.05  # s between two ~/progress messages
MAX_CATCH_UP = 50  # physics steps a late wall-clock loop catches up at once
# ros2_control lock-step, brakes on: the state goes out every this many /clock steps only.
# topic_based_ros2_control takes one state message per cycle from a queue of 5: states sent
# faster than the controller manager cycles would queue up and be read that many cycles late.
IDLE_STATE_EVERY = 20
# ros2_control lock-step: how long a step waits for the node's answer before it goes on without
# (the controller manager's command then holds the node's previous one), s. Long: a step taken
# without the answer is a step of the node's loop at a lower rate, which light joints (SO-101's
# wrist) do not stand many times in a row. Not longer: joint_state_broadcaster's real-time
# publisher can skip a cycle's /joint_states (the previous one still going out), and then
# no answer comes (a few times in a 12 s run on a loaded machine).
ANSWER_PATIENCE = 1.0
# ros2_control lock-step with a node answering: the wall time between its answer and the next
# /clock grows by doubling (+ SETTLE_STEP, up to SETTLE_MAX) after each command that reached the
# controller manager too late for its cycle and halves after each that did not. The forward
# controller takes the node's command in the controller manager's executor thread, which the
# real-time loop does not wait for: many late commands in a row would be many steps of the
# node's loop at a lower rate.
SETTLE_STEP, SETTLE_MAX = 1e-4, 0.02  # s

# No QoS event handlers: each one is an entity in every wait set, and the loop waits ~2000 times a second.
LEAN_PUB = PublisherEventCallbacks(use_default_callbacks=False)
LEAN_SUB = SubscriptionEventCallbacks(use_default_callbacks=False)
FORWARD, JTC, ROS2_CONTROL = "forward_command_controller", "joint_trajectory_controller", "ros2_control"


def _p(name: str, type_: str, default, description: str, **rules) -> Param:
    return Param(name, type_, default, description, read_only=True, **rules)


SIM = table(
    (
        _p("robot_description", "string", "", "URDF text; empty: listen to the robot_description topic"),
        _p(
            "plant",
            "string",
            "",
            "an MJCF file simulated instead of the URDF, as written (rnea_ros.sim.foreign_plant); "
            "joint_states and commands still use the URDF's joints",
        ),
        _p(
            "plant_joints",
            "string_array",
            [""],
            "pairs URDF_JOINT=PLANT_JOINT (empty: by chain order)",
        ),
        _p(
            "controller_type",
            "string",
            FORWARD,
            "the ros2_control controller simulated, on the effort interface (ros2_control: none, "
            "the robot behind the real controller manager's topic_based_ros2_control)",
            choices=(FORWARD, JTC, ROS2_CONTROL),
        ),
        _p(
            "controller_name",
            "string",
            "effort_controller",
            "commands on /<controller_name>/commands (forward) or trajectories on "
            "/<controller_name>/joint_trajectory (JTC)",
        ),
        _p(
            "joints",
            "string_array",
            [""],
            "joints of the controller, in command order (empty: every movable joint)",
        ),
        _p(
            "initial_joints",
            "string_array",
            [""],
            "joints with an initial position (others start at 0, within limits)",
        ),
        _p(
            "initial_positions",
            "double_array",
            [0.0],
            "initial positions of initial_joints, rad or m",
            bounds=(-1e3, 1e3),
        ),
        _p(
            "hold_kp",
            "double",
            200.0,
            "stiffness of the servo holding joints outside 'joints', N m/rad or N/m",
            bounds=(0.0, 1e9),
        ),
        _p("hold_kd", "double", 2.0, "damping of that servo, N m s/rad or N s/m", bounds=(0.0, 1e9)),
        _p("rate", "double", 1000.0, "physics and joint_states rate, Hz", bounds=(1.0, 1e5)),
        _p("integrator", "string", "implicitfast", "MuJoCo integrator", choices=tuple(INTEGRATORS)),
        _p(
            "coulomb_model",
            "string",
            "implicit",
            "how the URDF's dry friction is simulated: an implicit tanh or MuJoCo's frictionloss (a "
            "plant: its own frictionloss)",
            choices=COULOMB_MODELS,
        ),
        _p(
            "armature",
            "double_array",
            [0.0],
            "rotor inertia added to the joints of 'joints' (the URDF has none; a plant keeps its own), "
            "one value or one per joint, kg m^2 or kg",
            bounds=(0.0, 1e4),
        ),
        _p(
            "lockstep",
            "bool",
            False,
            "forward controller or ros2_control: each step waits for the command answering the "
            "previous joint_states",
        ),
        _p(
            "answer_topic",
            "string",
            "/inverse_dynamics/joint_efforts",
            "stamped answers (JointState) pairing commands",
        ),
        _p(
            "answer_timeout",
            "double",
            0.2,
            "lockstep: publish an unanswered joint_states again after this, s",
            bounds=(0.001, 60.0),
        ),
        _p("publish_clock", "bool", True, "publish simulated time on /clock (not with wall_clock)"),
        _p(
            "wall_clock",
            "bool",
            False,
            "real time with the forward controller only: stamp joint_states with the wall clock, as "
            "a robot's driver does (plant time = wall time since the physics started; a late loop "
            "catches up with the last command held), no /clock; the nodes run with use_sim_time false",
        ),
        _p(
            "state_delay",
            "double",
            0.0,
            "wall_clock only: joint_states carry the state of this long ago (stamped when it held), "
            "as a slow driver or network delivers them late, s",
            bounds=(0.0, 1.0),
        ),
        _p(
            "record",
            "bool",
            False,
            "keep every physics step (time, q, qd, applied effort) for ~/save (std_msgs/String: an "
            ".npz path; answered on ~/saved)",
        ),
        _p(
            "start_subscribers",
            "int",
            1,
            "physics starts once joint_states has this many subscribers (and a command or trajectory)",
            bounds=(0, 1000),
        ),
    )
)


def gain_params(joints: list[str]) -> dict[str, Param]:
    """JTC's per-joint gains `gains.<joint>.<gain>` for the controller's joints."""
    what = {
        "p": "proportional gain, N m/rad or N/m",
        "i": "integral gain, N m/(rad s) or N/(m s)",
        "d": "derivative gain on the velocity error, N m s/rad or N s/m",
        "i_clamp": "bound of the integral term, N m or N",
        "ff_velocity_scale": "feedforward gain on the desired velocity, N m s/rad or N s/m",
    }
    return table(
        Param(
            f"gains.{j}.{g}",
            "double",
            1e9 if g == "i_clamp" else 0.0,
            f"JTC {what[g]} of {j}",
            read_only=True,
            bounds=(0.0, 1e9),
        )
        for j in joints
        for g in GAIN_NAMES
    )


class SimNode(Node):
    """A simulated robot; `run()` drives the physics loop (see the module docstring)."""

    def __init__(self, **kwargs) -> None:
        super().__init__("mujoco_sim", **kwargs)
        self.p = declare(self, SIM, later=("gains.",))
        self.arm: MujocoArm | None = None
        self.jtc: JointTrajectoryController | None = None  # controller_type: JTC
        self.trajectories = 0
        self.command: np.ndarray | None = None  # last valid command, `joints` order
        self.dropped = {"size": 0, "not_finite": 0}
        self.hardware = self.p["controller_type"] == ROS2_CONTROL
        # forward controller: commands paired with answers by their values; ros2_control: answers
        # by the stamp of the state they answer (rnea_ros.sim.answer_pairing)
        self.matcher: AnswerMatcher | TickAnswers = TickAnswers() if self.hardware else AnswerMatcher()
        self.counts = {"stale_commands": 0, "late_commands": 0, "unanswered": 0, "idle_steps": 0}
        self._tick_sent = 0  # ros2_control lock-step: wall ns just before this step's /clock
        self._fresh = False  # ros2_control lock-step: the command of this step arrived
        self._idle_ns = 0  # ros2_control lock-step: /clock before the physics starts
        self.overruns = 0
        self._running = False
        self.clock_pub = (
            self.create_publisher(Clock, "/clock", 10, event_callbacks=LEAN_PUB)
            if self.p["publish_clock"]
            else None
        )
        # Deep enough that a reliable recorder lagging up to 1 s of steps loses nothing; the
        # controller's keep-last-1 subscription still gets only the newest state.
        self.state_pub = self.create_publisher(
            JointState, "~/joint_states" if self.hardware else "joint_states", 1000, event_callbacks=LEAN_PUB
        )
        self.latency_pub = self.create_publisher(
            Float64MultiArray, "~/command_latency", 10, event_callbacks=LEAN_PUB
        )
        self._latency_sent = 0
        # what a supervisor needs instead of every joint_states: the newest stamp at 20 Hz, the
        # stamp of plant time 0 (latched), and the run's steps on request (~/save)
        self.progress_pub = self.create_publisher(Clock, "~/progress", 10, event_callbacks=LEAN_PUB)
        self.origin_pub = self.create_publisher(
            Clock, "~/time_origin", DESCRIPTION_QOS, event_callbacks=LEAN_PUB
        )
        self.saved_pub = self.create_publisher(String, "~/saved", 10, event_callbacks=LEAN_PUB)
        self.create_subscription(String, "~/save", self._on_save, 10, event_callbacks=LEAN_SUB)
        self.wall = self.p["wall_clock"] and not self.p["lockstep"]
        self._delay_ns = round(self.p["state_delay"] * 1e9)
        self._late: deque | None = deque() if self._delay_ns > 0 else None
        self.origin_ns = 0  # stamp of plant time 0 (wall_clock: set when the physics starts)
        self.log: StepLog | None = None
        self._next_progress = 0.0  # monotonic s
        if self.p["robot_description"]:
            self._load(self.p["robot_description"])
            if self.hardware:  # for the controller manager, as a robot's bring-up publishes it
                self.description_pub = self.create_publisher(String, "/robot_description", DESCRIPTION_QOS)
                self.description_pub.publish(String(data=self.p["robot_description"]))
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
        plant = {"plant": p["plant"], "plant_joints": [j for j in p["plant_joints"] if j]}
        names = MujocoArm(urdf, **plant).joint_names
        commanded = [j for j in p["joints"] if j] or list(names)
        held = tuple(j for j in names if j not in commanded)
        arm = MujocoArm(
            urdf,
            1.0 / p["rate"],
            p["integrator"],
            held,
            p["hold_kp"],
            p["hold_kd"],
            coulomb=p["coulomb_model"],
            **plant,
        )
        armature = p["armature"]
        if len(armature) not in (1, len(commanded)):
            raise ValueError(f"armature must have 1 or {len(commanded)} values (joints), got {len(armature)}")
        arm.add_armature(commanded, armature)
        if arm.match is not None:
            self.get_logger().info(f"plant {p['plant']}: {arm.match.describe()}")
        initial = [j for j in p["initial_joints"] if j]
        if initial and len(initial) != len(p["initial_positions"]):
            raise ValueError("initial_positions must have one value per joint of initial_joints")
        arm.reset(dict(zip(initial, p["initial_positions"], strict=False)))
        self.commanded = arm.indices(commanded)
        self.arm = arm
        self.state = JointState(name=list(arm.joint_names))
        if p["record"]:
            self.log = StepLog(list(arm.joint_names))
        if p["wall_clock"] and (p["lockstep"] or p["controller_type"] == JTC):
            raise ValueError("wall_clock needs real time with the forward command controller")
        if self.hardware and not (p["lockstep"] or p["wall_clock"]):
            raise ValueError("ros2_control needs lockstep (the controller manager on /clock) or wall_clock")
        if p["state_delay"] > 0 and not self.wall:
            raise ValueError("state_delay needs wall_clock")
        if p["controller_type"] == JTC:
            self._load_jtc(commanded)
            return
        if self.hardware:
            self._load_hardware(commanded)
            return
        topic = f"/{p['controller_name']}/commands"
        self.create_subscription(Float64MultiArray, topic, self._on_command, 10, event_callbacks=LEAN_SUB)
        if p["answer_topic"]:
            self.create_subscription(
                JointState, p["answer_topic"], self._on_answer, 10, event_callbacks=LEAN_SUB
            )
        elif p["lockstep"]:
            raise ValueError("lockstep needs answer_topic")
        mode = "lock-step" if p["lockstep"] else "real time"
        self.get_logger().info(
            f"simulating {arm.nv} joints at {p['rate']:g} Hz ({mode}); efforts for "
            f"{commanded} on {topic}; holding {list(held)}; physics starts with the first command"
        )

    def _load_jtc(self, commanded: list[str]) -> None:
        """joint_trajectory_controller inside the loop: its gains, its trajectory topic."""
        schema = gain_params(commanded)
        values = declare(self, schema, report_unknown=False)
        for name in sorted(getattr(self, "_parameter_overrides", {})):
            if name.startswith("gains.") and name not in schema:
                self.get_logger().warn(f"unknown parameter '{name}' ignored (gains of joints {commanded})")
        gains = Gains.of(
            len(commanded),
            **{g: [values[f"gains.{j}.{g}"] for j in commanded] for g in GAIN_NAMES},
        )
        arm = self.arm
        assert arm is not None  # _load builds the arm before it calls this
        self.jtc = JointTrajectoryController(len(commanded), gains, arm.timestep)
        self.jtc.hold(arm.q[self.commanded])
        self.commanded_names = list(commanded)
        topic = f"/{self.p['controller_name']}/joint_trajectory"
        self.create_subscription(JointTrajectory, topic, self._on_trajectory, 10)
        table_ = ", ".join(
            f"{j}: p {gains.p[k]:g} i {gains.i[k]:g} d {gains.d[k]:g}" for k, j in enumerate(commanded)
        )
        self.get_logger().info(
            f"simulating {arm.nv} joints at {self.p['rate']:g} Hz; joint_trajectory_controller "
            f"(effort interface) for {commanded} on {topic}, gains {table_}; physics starts with "
            "the first trajectory"
        )

    def _load_hardware(self, commanded: list[str]) -> None:
        """The robot behind topic_based_ros2_control: its command topic, the answers it waits for."""
        self.commanded_names = list(commanded)
        self.create_subscription(
            JointState, "~/joint_commands", self._on_hardware_command, 10, event_callbacks=LEAN_SUB
        )
        if self.p["answer_topic"]:
            self.create_subscription(
                JointState, self.p["answer_topic"], self._on_answer, 100, event_callbacks=LEAN_SUB
            )
        arm = self.arm
        assert arm is not None  # _load builds the arm before it calls this
        mode = "lock-step on its /clock" if self.p["lockstep"] else "real time"
        self.get_logger().info(
            f"simulating {arm.nv} joints at {self.p['rate']:g} Hz ({mode}) behind ros2_control: efforts "
            f"for {commanded} on {self.resolve_topic_name('~/joint_commands')}, state on "
            f"{self.resolve_topic_name('~/joint_states')}; physics starts with the first command that "
            "is not all zeros"
        )

    # --- inputs ----------------------------------------------------------------------------

    def _on_hardware_command(self, msg: JointState) -> None:
        """A command from topic_based_ros2_control (see the module docstring)."""
        if self.p["lockstep"]:
            if stamp_ns(msg.header.stamp) <= self._tick_sent:
                self.counts["stale_commands"] += 1  # computed before this step's /clock went out
                return
            self._fresh = True
        n = len(self.commanded_names)
        if len(msg.effort) != n or list(msg.name[:n]) != self.commanded_names:
            self.dropped["size"] += 1
            self.get_logger().warn(
                f"command for {list(msg.name[: len(msg.effort)])} dropped: the efforts must be for "
                f"{self.commanded_names}, in that order",
                throttle_duration_sec=2.0,
            )
            return
        values = np.asarray(msg.effort, dtype=float)
        if not np.all(np.isfinite(values)):
            self.dropped["not_finite"] += 1
            self.get_logger().warn("command with NaN or Inf dropped", throttle_duration_sec=2.0)
            return
        if self.command is None and not np.any(values):
            return  # brakes on: no controller commands yet
        self.command = values

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
        assert isinstance(self.matcher, AnswerMatcher)  # this subscription is the forward controller's
        self.matcher.command(msg.data, now)

    def _on_trajectory(self, msg: JointTrajectory) -> None:
        """A trajectory for the simulated JTC: checked, reordered, started at its stamp."""
        try:
            start, points = self._trajectory_points(msg)
            assert self.jtc is not None  # this subscription is created once the JTC exists
            self.jtc.receive(start, *points)
        except ValueError as exc:
            self.dropped["trajectory"] = self.dropped.get("trajectory", 0) + 1
            self.get_logger().warn(f"trajectory rejected: {exc}")
            return
        self.trajectories += 1
        if self.command is None:
            self.command = np.zeros(len(self.commanded))  # brakes released
        self.get_logger().info(
            f"trajectory {self.trajectories}: {len(msg.points)} points over "
            f"{points[0][-1]:.3f} s from t = {start:.3f} s"
            + (", with efforts" if points[4] is not None else ", without efforts")
        )

    def _trajectory_points(self, msg: JointTrajectory):
        """(start s, (times, P, V, A, E) in `joints` order), as JTC checks them: names are the
        controller's joints (all of them here), every point the same fields."""
        names = list(msg.joint_names)
        if sorted(names) != sorted(self.commanded_names) or len(set(names)) != len(names):
            raise ValueError(f"joint_names {names} must be the controller's joints {self.commanded_names}")
        if not msg.points:
            raise ValueError("no points (cancelling is not simulated)")
        order = [names.index(j) for j in self.commanded_names]

        def field_of(attr: str):
            rows = [list(getattr(p, attr)) for p in msg.points]
            if all(len(r) == 0 for r in rows):
                return None
            if any(len(r) != len(names) for r in rows):
                raise ValueError(f"every point needs {len(names)} {attr} (or none at all)")
            return np.array(rows, dtype=float)[:, order]

        times = np.array([p.time_from_start.sec + p.time_from_start.nanosec * 1e-9 for p in msg.points])
        positions = field_of("positions")
        if positions is None:
            raise ValueError("points have no positions")
        stamp = stamp_ns(msg.header.stamp)
        assert self.arm is not None  # trajectories are subscribed to once the arm is built
        start = stamp * 1e-9 if stamp else self.arm.time
        points = (times, positions, field_of("velocities"), field_of("accelerations"), field_of("effort"))
        return start, points

    def _on_save(self, msg: String) -> None:
        """Write the recorded steps to the .npz path in the message; answer on ~/saved with the
        path, or with 'error: ...'."""
        if self.log is None:
            answer = "error: not recording (parameter record is false)"
        else:
            self._publish_latency()  # the latencies paired since the last batch go in too
            try:
                answer = str(self.log.save(msg.data))
            except (OSError, ValueError) as exc:
                answer = f"error: {exc}"
        self.saved_pub.publish(String(data=answer))

    def _on_answer(self, msg: JointState) -> None:
        if isinstance(self.matcher, TickAnswers):
            self.matcher.answer(stamp_ns(msg.header.stamp), msg.effort, time.perf_counter(), time.time_ns())
        else:
            self.matcher.answer(stamp_ns(msg.header.stamp), msg.effort)

    # --- loop ------------------------------------------------------------------------------

    def _stamp(self) -> int:
        """The stamp of the current state, ns: plant time, or with wall_clock the wall time at
        which the state holds (before the physics starts: now)."""
        arm = self.arm
        assert arm is not None  # the loop starts once the arm is built
        if not self.wall:
            if self.hardware and not self._running:
                return self._idle_ns
            return self.origin_ns + round(arm.time * 1e9)
        if not self._running:
            return time.time_ns()
        return self.origin_ns + round(arm.time * 1e9)

    def _publish_state(self) -> int:
        """Publish /clock and joint_states for the current simulated time; return the stamp (ns).
        Behind ros2_control the state goes first: the controller manager's cycle starts with the
        /clock and reads the newest state."""
        arm = self.arm
        assert arm is not None  # the loop starts once the arm is built
        stamp = self._stamp()
        if not self.wall and not self.hardware:
            self._publish_clock(stamp)
        msg = self.state
        state = (stamp, arm.q.tolist(), arm.qd.tolist(), arm.applied.tolist())
        if self._late is not None:  # state_delay: the newest state at least that old
            self._late.append(state)
            while len(self._late) > 1 and self._late[1][0] <= stamp - self._delay_ns:
                self._late.popleft()
            state = self._late[0]
            stamp = state[0]
        set_stamp(msg.header.stamp, stamp)
        msg.position, msg.velocity, msg.effort = state[1], state[2], state[3]
        now = time.perf_counter()
        self.matcher.published(stamp, now)
        self.state_pub.publish(msg)
        if self.log is not None and self.hardware:
            self.log.add_sent(stamp, time.time_ns())
        if now > self._next_progress:
            progress = Clock()
            set_stamp(progress.clock, stamp)
            self.progress_pub.publish(progress)
            self._next_progress = now + PROGRESS_PERIOD
        if not self.wall and self.hardware:
            self._publish_clock(stamp)
        return stamp

    def _ready(self) -> bool:
        """Whether the physics runs: a command arrived and everyone expected listens."""
        if self._running:
            return True
        self._running = (
            self.command is not None
            and self.state_pub.get_subscription_count() >= self.p["start_subscribers"]
        )
        if self._running:
            self.origin_ns = time.time_ns() if self.wall else self._idle_ns
            origin = Clock()
            set_stamp(origin.clock, self.origin_ns)
            self.origin_pub.publish(origin)
        return self._running

    def _step(self) -> None:
        arm = self.arm
        assert arm is not None  # the loop starts once the arm is built
        effort = np.zeros(arm.nv)
        if self.jtc is not None:
            index = self.commanded
            effort[index] = self.jtc.update(arm.time, arm.q[index], arm.qd[index])
        elif self.command is not None:
            effort[self.commanded] = self.command
        if self.log is not None:
            self.log.append(self._stamp(), arm.time, arm.q, arm.qd, effort)
        arm.step(effort)

    def _publish_latency(self) -> None:
        """The latencies paired since the last call: on ~/command_latency (the supervisor's
        real-time check) and into the step log (the run's record: a topic may drop a batch)."""
        samples = self.matcher.latencies[self._latency_sent :]
        if samples:
            self.latency_pub.publish(Float64MultiArray(data=samples))
            if self.log is not None:
                self.log.add_latencies(samples)
            self._latency_sent += len(samples)
        if len(self.matcher.latencies) > 100_000:
            del self.matcher.latencies[: self._latency_sent]
            self._latency_sent = 0

    def run(self, executor: SingleThreadedExecutor) -> None:
        """The physics loop, until shutdown."""
        while self.arm is None and rclpy.ok():
            executor.spin_once(timeout_sec=0.1)
        if self.p["lockstep"] and self.hardware:
            self._run_hardware_lockstep(executor)
        elif self.p["lockstep"] and self.jtc is None:
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

    def _run_hardware_lockstep(self, executor: SingleThreadedExecutor) -> None:
        """Lock-step behind ros2_control (module docstring): state, /clock, the controller
        manager's command of this cycle (waiting, /clock sent again after each `answer_timeout`)
        and the node's answer (at most ANSWER_PATIENCE), step; before the brakes are released,
        no physics and no more than `answer_timeout` per /clock step."""
        timeout = self.p["answer_timeout"]
        next_latency = time.perf_counter() + 0.5
        previous: int | None = None  # stamp of the previous step
        settle = 0.0  # s after the node's answer before the next /clock (see below)
        while rclpy.ok():
            self._fresh = False
            self._tick_sent = time.time_ns()
            if self._running or self.counts["idle_steps"] % IDLE_STATE_EVERY == 0:
                stamp = self._publish_state()
            else:  # at rest: the controller manager has the state (and must not queue it up)
                stamp = self._stamp()
                self._publish_clock(stamp)
            if not self._running:  # the command of this cycle, or a timeout (no controller manager yet)
                deadline = time.perf_counter() + timeout
                while not self._fresh and time.perf_counter() < deadline and rclpy.ok():
                    executor.spin_once(timeout_sec=max(0.0, deadline - time.perf_counter()))
                if not (self._fresh and self._ready()):
                    self._idle_ns += round(1e9 / self.p["rate"])
                    self.counts["idle_steps"] += 1
                    continue
            else:
                deadline = time.perf_counter() + timeout
                while not self._fresh and rclpy.ok():
                    executor.spin_once(timeout_sec=max(0.0, deadline - time.perf_counter()))
                    if not self._fresh and time.perf_counter() >= deadline:
                        self._publish_clock(stamp)  # in case the controller manager missed it
                        deadline = time.perf_counter() + timeout
                if not rclpy.ok():
                    break
                late = self._check_answer(previous)
                answers = self.matcher
                if isinstance(answers, TickAnswers) and answers.seen:
                    deadline = time.perf_counter() + ANSWER_PATIENCE
                    while not answers.answered(stamp) and time.perf_counter() < deadline and rclpy.ok():
                        executor.spin_once(timeout_sec=max(0.0, deadline - time.perf_counter()))
                    if not answers.answered(stamp):
                        self.counts["unanswered"] += 1
                    # the answer went to the controller manager too: give its executor time to
                    # take it before the next cycle, more while commands come late
                    settle = min(2.0 * settle + SETTLE_STEP, SETTLE_MAX) if late else 0.5 * settle
                    _spin_for(executor, settle)
            previous = stamp
            self._step()
            if time.perf_counter() > next_latency:
                self._publish_latency()
                next_latency += 0.5

    def _check_answer(self, previous: int | None) -> bool:
        """Whether the command is not the node's answer to the previous step (it reached the
        controller manager after this cycle began: the command before it went out again);
        counted."""
        if previous is None or not isinstance(self.matcher, TickAnswers) or self.command is None:
            return False
        answer = self.matcher.values(previous)
        late = answer is not None and answer != tuple(self.command.tolist())
        self.counts["late_commands"] += late
        return late

    def _publish_clock(self, stamp: int) -> None:
        if self.clock_pub is not None:
            clock = Clock()
            set_stamp(clock.clock, stamp)
            self.clock_pub.publish(clock)

    def _run_real_time(self, executor: SingleThreadedExecutor) -> None:
        """Step and publish every 1/rate s of wall time with the last command received."""
        if self.wall:
            self._run_wall_clock(executor)
            return
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

    def _run_wall_clock(self, executor: SingleThreadedExecutor) -> None:
        """Plant time follows wall time: after a late wake-up the physics catches up step by step
        with the last command held (as a real arm moves on while its controller is late), then
        the newest state is published. More than MAX_CATCH_UP steps behind, the plant slips
        (counted as an overrun: the machine did not keep real time)."""
        arm = self.arm
        assert arm is not None  # run() waits for the arm
        period = 1.0 / self.p["rate"]
        next_latency = time.monotonic()
        while rclpy.ok():
            if self._ready():
                behind = (time.time_ns() - self.origin_ns) * 1e-9 - arm.time
                steps = min(max(int(behind / period + 0.5), 1), MAX_CATCH_UP)
                for _ in range(steps):
                    self._step()
                if behind > (MAX_CATCH_UP + 1) * period:
                    self.overruns += 1
                    self.origin_ns = time.time_ns() - round(arm.time * 1e9)  # slip
                wake = self.origin_ns * 1e-9 + arm.time + period - time.time()
            else:
                wake = period
            self._publish_state()
            _spin_for(executor, wake)
            now = time.monotonic()
            if now > next_latency:
                self._publish_latency()
                next_latency = now + 0.5


def _spin_for(executor: SingleThreadedExecutor, seconds: float) -> None:
    end = time.perf_counter() + seconds
    while (remaining := end - time.perf_counter()) > 0 and rclpy.ok():
        executor.spin_once(timeout_sec=remaining)


def _spin(node: SimNode) -> None:
    """Step the simulation until shutdown, then say where it stopped."""
    executor = SingleThreadedExecutor()
    executor.add_node(node)
    try:
        node.run(executor)
    finally:
        # rclpy's signal thread may be shutting the context down right now: let it finish, so that
        # `say` sees whether the context is up (else rcl prints "Failed to publish log message to
        # rosout", seen in CI under Kilted)
        join_signal_shutdown()
        if node.arm is not None:
            counts = f", {node.counts}" if node.hardware else ""
            say(  # after a Ctrl-C the context is down already
                node,
                f"stopped at t = {node.arm.time:.3f} s; dropped commands {node.dropped}, "
                f"overruns {node.overruns}{counts}",
            )
        executor.shutdown()


def main(args: list[str] | None = None) -> int:
    """Run the mujoco_sim node."""
    return run_node(args, SimNode, "mujoco_sim", _spin)


if __name__ == "__main__":
    sys.exit(main())
