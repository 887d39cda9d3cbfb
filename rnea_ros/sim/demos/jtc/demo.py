"""joint_trajectory_controller demo: effort-annotated trajectories vs JTC's PID alone, on a
MuJoCo-simulated Panda.

    python -m rnea_ros.demo --controller jtc [--duration 8] [--out out] [--no-plot] [--json FILE]

Separate processes over real DDS (ROS_LOCALHOST_ONLY=1, a ROS_DOMAIN_ID of the demo's own):
`trajectory_feedforward` (rnea_ros.nodes.trajectory_feedforward, `~/trajectory_out` remapped to
`/jtc/joint_trajectory`) for the whole demo, and for each run a fresh robot. With
`--controllers ros2_control` (auto: when installed, rnea_ros.sim.ros2_control) that is the real
thing: `ros2_control_node` with the Panda's URDF and a topic_based_ros2_control block, the
spawner loading joint_state_broadcaster and a joint_trajectory_controller `jtc` on the effort
interface, and `mujoco_sim` (`controller_type: ros2_control`) as the robot behind its topics, in
lock-step: the controller manager runs on the simulator's /clock, one cycle per physics step.
Each run then also replays the simulated JTC (rnea_ros.sim.jtc) on the real one's inputs and
reports how far their commands differ. With `--controllers simulated`, `mujoco_sim` runs JTC's
law itself (`controller_type: joint_trajectory_controller`, rnea_ros.sim.jtc) inside every
1 kHz physics step. Either way a run does not depend on the machine's speed, and it starts from
rest at the Panda's home pose when JTC takes its trajectory (stamp 0), with the same PID gains:

1. JTC PID alone: a multi-sine sent straight to `/jtc/joint_trajectory` (no efforts);
2. JTC PID + annotated efforts: the same multi-sine through trajectory_feedforward;
3. a trajectory too fast for the Panda's effort limits, through the node with `on_limit:
   reject` (nothing may reach JTC; the reason is on /diagnostics), then with `slow_down`
   (executed; every annotated effort within its limit).

It prints the table, writes `jtc_demo.png` and exits 1 when a target is missed (RMS tracking
error >= 10x lower with the efforts on every joint; the rejected trajectory never reaches JTC;
every annotated effort of the slowed-down one within its limit). Every child process is stopped
on exit, Ctrl-C or error; every wait is bounded.
"""

from __future__ import annotations

import io
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import cast

import numpy as np
import yaml

from rnea_ros.control.effort_law import EffortLaw
from rnea_ros.friction.model import Friction
from rnea_ros.model.example_robots import example_urdf_path
from rnea_ros.model.robot_model import RobotModel
from rnea_ros.sim.cli import (
    MISSED,
    OK,
    REFUSED,
    add_output_options,
    add_plant_arguments,
    add_ros_options,
    check_plant,
    controllers_json,
    demo_parser,
    ended,
    write_json,
)
from rnea_ros.sim.demos.jtc.report import Points, Run, agreement, plot, summarize, table
from rnea_ros.sim.jtc import Gains
from rnea_ros.sim.processes import Processes, start_controllers
from rnea_ros.sim.ros2_control import (
    BROADCASTER,
    CHOICES,
    Stack,
    choose,
    hardware_urdf,
    jtc_parameters,
    why_not,
)
from rnea_ros.sim.scenario import multisine
from rnea_ros.sim.step_log import load
from rnea_ros.trajectory.efforts import resample, trajectory_efforts
from rnea_ros.trajectory.joint_map import JointMap

ARM = [f"panda_joint{i}" for i in range(1, 8)]
FINGERS = ["panda_finger_joint1", "panda_finger_joint2"]
HOME = [0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785]  # rad
FINGER_HOME = 0.02  # m
# JTC's gains.<joint>.p / .d: moderate (PD alone lets joint 4 sag ~13 degrees under gravity).
KP = [100.0, 100.0, 100.0, 100.0, 30.0, 30.0, 10.0]  # N m/rad
KD = [10.0, 10.0, 10.0, 10.0, 2.0, 2.0, 0.5]  # N m s/rad
CONTROLLER = "jtc"
JTC_TOPIC = f"/{CONTROLLER}/joint_trajectory"
NODE = "/trajectory_feedforward"
TAIL = 0.5  # s recorded after each trajectory
STALL = 30.0  # s of wall time without simulated time advancing: the loop is dead
# The too-fast trajectory: home → home + d → home → home − d → home, quintic rest-to-rest
# segments of SHAKE_SEGMENT s each (1.7x the effort limit of panda_joint3).
SHAKE = [0.15, 0.15, 0.15, 0.15, 0.15, 0.15, 0.15]  # rad
SHAKE_SEGMENT = 0.1  # s


def multisine_points(model: RobotModel, duration: float, seed: int) -> Points:
    """The multi-sine of the closed-loop demo (100 Hz points with q, q̇, q̈), from home at rest."""
    index = [model.joint_index(j) for j in ARM]
    motion = multisine(model, index, HOME, 3.0, duration, min(1.5, duration / 4), seed)
    t, q, qd, qdd = motion.points(100.0)
    return Points(t, q, qd, qdd)


def shake_points() -> Points:
    home, d = np.array(HOME), np.array(SHAKE)
    q = np.array([home, home + d, home, home - d, home])
    return Points(np.arange(len(q)) * SHAKE_SEGMENT, q, np.zeros_like(q), np.zeros_like(q))


def unscaled_efforts(
    model: RobotModel, points: Points, period: float = 0.005
) -> tuple[np.ndarray, np.ndarray]:
    """(t, τ (N, 7)) the trajectory needs as sent (k = 1): what the node checks against the limits."""
    jmap = JointMap(model, ARM)
    held = {j: FINGER_HOME for j in FINGERS}
    q, qd, qdd = jmap.expand_trajectory(points.positions, points.velocities, points.accelerations, held)
    t, qs, qds, qdds = resample((points.times, q, qd, qdd), period)
    tau = trajectory_efforts(model, qs, qds, qdds, EffortLaw(friction=Friction.from_model(model)))
    return t, jmap.restrict(tau)


def node_parameters(urdf: str) -> dict:
    return {
        "robot_description": urdf,
        "joints": ARM,
        "on_limit": "slow_down",
        "diagnostics_period": 0.2,
    }


def sim_parameters(urdf: str, plant: str = "", plant_joints: tuple[str, ...] = ()) -> dict:
    """The simulator's parameters; `plant`: an MJCF it runs instead of the URDF (--plant)."""
    gains = {}
    for j, p, d in zip(ARM, KP, KD, strict=True):
        gains[f"gains.{j}.p"], gains[f"gains.{j}.d"] = p, d
    return {
        "robot_description": urdf,
        "controller_type": "joint_trajectory_controller",
        "controller_name": CONTROLLER,
        "joints": ARM,
        "initial_joints": [*ARM, *FINGERS],
        "initial_positions": [*HOME, FINGER_HOME, FINGER_HOME],
        "rate": 1000.0,
        "start_subscribers": 2,  # the node (held joints) and the recorder: the run is seen from rest
        "plant": plant,
        "plant_joints": list(plant_joints) or [""],
        **gains,
    }


def hardware_parameters(
    urdf: str, lockstep: bool = True, plant: tuple[str, tuple[str, ...]] = ("", ())
) -> dict:
    """The simulator as the robot behind the real controller manager: lock-step on its /clock,
    or real time on the wall clock; `plant`: an MJCF and its joint pairs (--plant)."""
    home = dict(zip([*ARM, *FINGERS], [*HOME, FINGER_HOME, FINGER_HOME], strict=True))
    return {
        "robot_description": hardware_urdf(urdf, ARM, FINGERS, home),
        "controller_type": "ros2_control",
        "joints": ARM,
        "initial_joints": list(home),
        "initial_positions": list(home.values()),
        "rate": 1000.0,
        "lockstep": lockstep,
        "wall_clock": not lockstep,
        "publish_clock": lockstep,
        "answer_topic": "",  # nobody answers its states: the controller manager's command is all
        "record": True,  # the run is read from the simulator (~/save), not over DDS
        "start_subscribers": 1,  # topic_based_ros2_control
        "plant": plant[0],
        "plant_joints": list(plant[1]) or [""],
    }


def jtc_gains() -> Gains:
    """The demo's JTC gains (i = 0, no velocity feedforward)."""
    return Gains.of(len(ARM), p=KP, d=KD)


def controller_parameters(lockstep: bool = True) -> dict[str, dict]:
    """joint_state_broadcaster and the JTC `jtc` with the demo's gains, by node name."""
    g = jtc_gains()
    gains = {k: getattr(g, k).tolist() for k in ("p", "i", "d", "ff_velocity_scale")}
    return jtc_parameters(CONTROLLER, ARM, gains, lockstep)


def _params_file(path: Path, node: str, values: dict) -> Path:
    path.write_text(yaml.safe_dump({node: {"ros__parameters": values}}))
    return path


def _nodes_file(path: Path, nodes: dict[str, dict]) -> Path:
    path.write_text(yaml.safe_dump({node: {"ros__parameters": v} for node, v in nodes.items()}))
    return path


class Supervisor:
    """Sends the trajectories and records the runs (ROS imported here, after the environment)."""

    def __init__(
        self,
        children: Processes,
        deadline: float,
        sim_params: Path,
        stack: Stack | None = None,
        controllers: Path | None = None,
    ) -> None:
        import rclpy
        from diagnostic_msgs.msg import DiagnosticArray
        from rcl_interfaces.srv import SetParameters
        from rclpy.executors import SingleThreadedExecutor
        from rclpy.node import Node
        from rclpy.qos import QoSProfile, ReliabilityPolicy
        from sensor_msgs.msg import JointState
        from trajectory_msgs.msg import JointTrajectory

        self.children, self.deadline, self.sim_params = children, deadline, sim_params
        self.stack, self.controllers = stack, controllers
        if not rclpy.ok():
            rclpy.init()
        self.node = node = Node("jtc_demo_supervisor")
        self.states: list = []
        self.jtc_received: list = []
        self.diagnostics: dict[str, str] = {}
        states_qos = QoSProfile(depth=1000, reliability=ReliabilityPolicy.RELIABLE)
        node.create_subscription(JointState, "joint_states", self.states.append, states_qos)
        node.create_subscription(JointTrajectory, JTC_TOPIC, self.jtc_received.append, 10)
        node.create_subscription(DiagnosticArray, "/diagnostics", self._on_diagnostics, 10)
        self.to_jtc = node.create_publisher(JointTrajectory, JTC_TOPIC, 10)
        self.to_node = node.create_publisher(JointTrajectory, f"{NODE}/trajectory_in", 10)
        self.set_client = node.create_client(SetParameters, f"{NODE}/set_parameters")
        self.executor = SingleThreadedExecutor()
        self.executor.add_node(node)

    def _on_diagnostics(self, msg) -> None:
        for status in msg.status:
            if status.name.startswith(f"{NODE}:"):
                self.diagnostics = {"message": status.message, **{kv.key: kv.value for kv in status.values}}

    def spin_until(self, done, what: str, limit: float = 60.0) -> None:
        end = min(self.deadline, time.monotonic() + limit)
        while not done():
            self.children.check()
            if time.monotonic() > end:
                raise TimeoutError(f"timed out waiting for {what}")
            self.executor.spin_once(timeout_sec=0.05)

    def spin_for(self, seconds: float) -> None:
        end = time.monotonic() + seconds
        self.spin_until(lambda: time.monotonic() > end, "nothing", seconds + 10)

    def wait_for_node(self) -> None:
        self.spin_until(
            lambda: self.diagnostics.get("model_loaded") == "True", "trajectory_feedforward's model"
        )

    def set_on_limit(self, value: str) -> None:
        from rcl_interfaces.srv import SetParameters
        from rclpy.parameter import Parameter

        self.spin_until(self.set_client.service_is_ready, "the node's set_parameters service")
        request = SetParameters.Request(parameters=[Parameter("on_limit", value=value).to_parameter_msg()])
        future = self.set_client.call_async(request)
        self.spin_until(future.done, "set_parameters")
        bad = [r.reason for r in future.result().results if not r.successful]
        if bad:
            raise RuntimeError(f"on_limit {value} rejected: {bad}")

    def message(self, points: Points):
        from builtin_interfaces.msg import Duration
        from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

        # the demo's trajectories (multisine_points, shake_points) carry velocities and accelerations
        assert points.velocities is not None and points.accelerations is not None
        msg = JointTrajectory(joint_names=list(ARM))  # stamp 0: start on arrival
        for k, t in enumerate(points.times):
            sec, nanosec = divmod(round(float(t) * 1e9), 1_000_000_000)
            msg.points.append(
                JointTrajectoryPoint(
                    positions=points.positions[k].tolist(),
                    velocities=points.velocities[k].tolist(),
                    accelerations=points.accelerations[k].tolist(),
                    time_from_start=Duration(sec=sec, nanosec=nanosec),
                )
            )
        return msg

    def run(self, name: str, points: Points, through_node: bool) -> Run:
        """A fresh simulator executes `points` (sent to the node or straight to JTC); its
        joint_states are recorded until the trajectory's end + TAIL."""
        if self.stack is not None:
            return self._run_ros2_control(name, points, through_node)
        sim = f"mujoco_sim_{name}"
        publisher = self.to_node if through_node else self.to_jtc

        def listeners() -> int:  # of the trajectories JTC gets: the simulator's and ours
            if through_node:
                return int(self.diagnostics.get("trajectory_out_subscribers", "0"))
            return publisher.get_subscription_count()

        self.spin_until(lambda: listeners() <= 1, "the previous simulator to leave")
        self.children.start(
            sim, ["-m", "rnea_ros.sim.sim_node", "--ros-args", "--params-file", str(self.sim_params)]
        )
        try:
            self.states.clear()
            # the simulator publishes (at rest, time 0) and listens for trajectories
            self.spin_until(
                lambda: from_rest(self.states) and listeners() >= 2, f"{sim} to listen for trajectories"
            )
            self.spin_until(lambda: publisher.get_subscription_count() > 0, "the trajectory's receiver")
            self.spin_for(0.5)  # discovery settles on every side
            self.jtc_received.clear()
            publisher.publish(self.message(points))
            self.spin_until(lambda: self.jtc_received, f"the trajectory on {JTC_TOPIC}", 30.0)
            executed = self._points(self.jtc_received[-1])
            end = executed.times[-1] + TAIL
            now = [0.0, time.monotonic()]

            def done() -> bool:
                t = _stamp(self.states[-1]) if self.states else 0.0
                if t > now[0]:
                    now[:] = [t, time.monotonic()]
                elif time.monotonic() - now[1] > STALL:
                    raise TimeoutError(f"{sim}: simulated time stuck at {t:.3f} s")
                return t >= end

            self.spin_until(done, f"{sim} to reach {end:.2f} s", 600.0)
        finally:
            self.children.stop(sim)
        return self._run(name, executed)

    def _run_ros2_control(self, name: str, points: Points, through_node: bool) -> Run:
        """The run on the real controllers: a fresh robot (simulator, controller manager, JTC
        spawned), the trajectory, the simulator's steps from its ~/save (rnea_ros.sim.step_log);
        the run's time 0 is the real JTC's first sample of the trajectory (from its
        ~/controller_state: stamp − reference.time_from_start)."""
        from control_msgs.msg import JointTrajectoryControllerState
        from rclpy.qos import QoSProfile, ReliabilityPolicy
        from rosgraph_msgs.msg import Clock
        from std_msgs.msg import String

        assert self.stack is not None and self.controllers is not None  # run() checked
        publisher = self.to_node if through_node else self.to_jtc

        def listeners() -> int:  # of the trajectories JTC gets: JTC's and ours
            if through_node:
                return int(self.diagnostics.get("trajectory_out_subscribers", "0"))
            return publisher.get_subscription_count()

        self.spin_until(lambda: listeners() <= 1, "the previous JTC to leave")
        node = self.node
        now = [-1.0, time.monotonic()]  # newest plant stamp (s), when it last advanced
        starts: list[float] = []  # the real JTC's trajectory start of each controller_state, s
        saved: list[str] = []

        def on_progress(msg) -> None:
            t = _stamp_of(msg.clock)
            if t > now[0]:
                now[:] = [t, time.monotonic()]

        def on_saved(msg) -> None:
            saved.append(msg.data)

        def on_state(msg) -> None:
            tfs = msg.reference.time_from_start
            starts.append(_stamp(msg) - (tfs.sec + tfs.nanosec * 1e-9))

        latest = QoSProfile(depth=1, reliability=ReliabilityPolicy.BEST_EFFORT)
        subscriptions = [
            node.create_subscription(Clock, "/mujoco_sim/progress", on_progress, 10),
            node.create_subscription(String, "/mujoco_sim/saved", on_saved, 10),
            node.create_subscription(
                JointTrajectoryControllerState, f"/{CONTROLLER}/controller_state", on_state, latest
            ),
        ]
        save = node.create_publisher(String, "/mujoco_sim/save", 10)
        sim = f"mujoco_sim_{name}"
        try:
            self.children.start(
                sim, ["-m", "rnea_ros.sim.sim_node", "--ros-args", "--params-file", str(self.sim_params)]
            )
            start_controllers(self.children, self.stack, self.controllers, [BROADCASTER, CONTROLLER])
            self.spin_until(lambda: listeners() >= 2 and starts, f"{CONTROLLER} to listen")
            self.spin_for(0.5)  # discovery settles on every side
            self.jtc_received.clear()
            holding = starts[-1]  # since activation JTC holds its position: a trajectory from then
            publisher.publish(self.message(points))
            self.spin_until(lambda: self.jtc_received, f"the trajectory on {JTC_TOPIC}", 30.0)
            executed = self._points(self.jtc_received[-1])
            self.spin_until(lambda: starts[-1] > holding + 5e-4, f"{CONTROLLER} to take the trajectory")
            begin = starts[-1]
            end = begin + executed.times[-1] + TAIL

            def done() -> bool:
                if time.monotonic() - now[1] > STALL:
                    raise TimeoutError(f"{sim}: simulated time stuck at {now[0]:.3f} s")
                return now[0] >= end

            self.spin_until(done, f"{sim} to reach {end:.2f} s", 600.0)
            path = Path(tempfile.mkdtemp(prefix="rnea_jtc_demo_")) / "steps.npz"
            save.publish(String(data=str(path)))
            self.spin_until(lambda: saved, f"{sim} to save its steps")
            if saved[-1].startswith("error"):
                raise RuntimeError(f"{sim} did not save the run: {saved[-1]}")
            steps = load(path)
        finally:
            for subscription in subscriptions:
                node.destroy_subscription(subscription)
            node.destroy_publisher(save)
            for child in (sim, "ros2_control_node"):
                if child in self.children.children:
                    self.children.stop(child)
        names = [str(n) for n in steps["names"]]
        index = [names.index(j) for j in ARM]
        t = steps["stamp_ns"] * 1e-9 - begin
        keep = t <= executed.times[-1] + TAIL
        return Run(
            name,
            list(ARM),
            t[keep],
            steps["q"][keep][:, index],
            steps["applied"][keep][:, index],
            executed,
            steps["qd"][keep][:, index],
        )

    def reject(self, points: Points) -> tuple[bool, str]:
        """Send `points` to the node (on_limit reject): (nothing reached JTC, the diagnostics
        reason)."""
        before = int(self.diagnostics.get("trajectories_rejected", "0"))
        self.jtc_received.clear()
        self.to_node.publish(self.message(points))
        self.spin_until(
            lambda: int(self.diagnostics.get("trajectories_rejected", "0")) > before, "the rejection"
        )
        self.spin_for(1.0)
        return not self.jtc_received, self.diagnostics.get("last_reason", "")

    def _points(self, msg) -> Points:
        order = [list(msg.joint_names).index(j) for j in ARM]

        def field_of(attr: str):
            rows = [list(getattr(p, attr)) for p in msg.points]
            return np.array(rows)[:, order] if rows and rows[0] else None

        times = np.array([p.time_from_start.sec + p.time_from_start.nanosec * 1e-9 for p in msg.points])
        return Points(
            times,
            field_of("positions"),
            field_of("velocities"),
            field_of("accelerations"),
            field_of("effort"),
        )

    def _run(self, name: str, points: Points) -> Run:
        by_stamp = {}
        for msg in self.states:
            by_stamp[_stamp(msg)] = msg
        stamps = sorted(by_stamp)
        t = np.array(stamps)
        end = float(points.times[-1])
        if not np.any((t >= 0.0) & (t <= end)):  # a report of nothing would only crash later
            raise RuntimeError(
                f"run {name}: no joint_states stamped within the trajectory (0 … {end:.2f} s; "
                f"{len(stamps)} states recorded): the simulator's states did not cover it"
            )
        index = [list(by_stamp[stamps[0]].name).index(j) for j in ARM]
        q = np.array([np.asarray(by_stamp[s].position)[index] for s in stamps])
        u = np.array([np.asarray(by_stamp[s].effort)[index] for s in stamps])
        return Run(name, list(ARM), t, q, u, points)

    def close(self) -> None:
        import rclpy

        self.executor.shutdown()
        self.node.destroy_node()
        rclpy.try_shutdown()


def from_rest(states: list) -> bool:
    """Whether a new simulator's first state (at rest, stamped 0) is in `states`; the states
    before it are removed. They are the previous simulator's last ones, still queued (depth
    1000) when a loaded supervisor fell behind: stamped beyond the trajectory's end, they would
    end the new run before it started."""
    for k, msg in enumerate(states):
        if _stamp(msg) == 0.0:
            del states[:k]
            return True
    states.clear()
    return False


def _stamp(msg) -> float:
    return _stamp_of(msg.header.stamp)


def _stamp_of(stamp) -> float:
    return stamp.sec + stamp.nanosec * 1e-9


def check(summary, rejected_nothing_out: bool) -> list[str]:
    failed = []
    for name, ratio in zip(summary.joints, summary.improvement, strict=True):
        if ratio < 10.0:
            failed.append(f"{name}: RMS improvement {ratio:.1f}x < 10x")
    if not rejected_nothing_out:
        failed.append("on_limit reject: a trajectory reached JTC")
    fast = summary.fast
    if max(fast["unscaled_ratio"]) <= 1.0:
        failed.append("the too-fast trajectory is within the limits: nothing to show")
    if max(fast["annotated_ratio"]) > 1.0 + 1e-9:
        failed.append(f"slow_down: annotated effort beyond a limit ({max(fast['annotated_ratio']):.4f})")
    return failed


def implementation(stack: Stack | None, choice: str) -> str:
    """Which JTC runs, in one line."""
    if stack is not None:
        return f"{stack.describe()}: the real joint_trajectory_controller in ros2_control_node"
    reason = "--controllers simulated" if choice == "simulated" else why_not()
    return f"simulated: rnea_ros.sim.jtc inside the simulator ({reason})"


def agreement_table(numbers: dict[str, dict]) -> str:
    """The simulated JTC (rnea_ros.sim.jtc) replayed on the real JTC's inputs: per run, the largest
    per-joint RMS and max |u_real − u_sim|."""
    lines = ["rnea_ros.sim.jtc on the real JTC's states (same trajectory, gains, times): |u_real - u_sim|"]
    for name, a in numbers.items():
        lines.append(
            f"  run {name:<5} {a['steps']:6d} steps: RMS per joint <= {max(a['rms']):.2e} N m, "
            f"max <= {max(a['max']):.2e} N m"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = demo_parser("--controller jtc", __doc__)
    parser.add_argument("--duration", type=float, default=8.0, help="multi-sine length, s (default 8)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the multi-sine")
    add_output_options(parser, "the plot and logs")
    add_ros_options(parser, 900.0)
    parser.add_argument(
        "--controllers",
        choices=CHOICES,
        default="auto",
        help="ros2_control: the real joint_trajectory_controller in ros2_control_node; simulated: "
        "rnea_ros.sim.jtc inside the simulator; auto (default): ros2_control when installed",
    )
    add_plant_arguments(parser)
    args = parser.parse_args(argv)
    cast(io.TextIOWrapper, sys.stdout).reconfigure(line_buffering=True)
    if args.duration < 2.0:
        print("--duration must be >= 2 s", file=sys.stderr)
        return REFUSED
    try:
        stack = choose(args.controllers)
    except RuntimeError as exc:
        print(exc, file=sys.stderr)
        return REFUSED
    os.environ["ROS_DOMAIN_ID"] = str(args.domain_id)
    os.environ["ROS_LOCALHOST_ONLY"] = "1"
    urdf_path = example_urdf_path("panda")
    urdf = urdf_path.read_text()
    plant = (args.plant or "", tuple(args.plant_joints or ()))
    try:
        plant_line = check_plant(urdf, *plant)[0] if args.plant else ""
    except ValueError as exc:
        print(f"JTC demo: {exc}", file=sys.stderr)
        return REFUSED
    model = RobotModel.from_urdf(urdf)
    limit = model.effort_limit[[model.joint_index(j) for j in ARM]]
    sine, shake = multisine_points(model, args.duration, args.seed), shake_points()
    out = Path(args.out)
    children = Processes(out / "jtc_demo_logs")
    print(
        f"JTC demo: {urdf_path}\n  multi-sine {args.duration:g} s, JTC gains p {KP} d {KD} (i = 0), "
        f"physics and JTC at 1 kHz\n  controllers: {implementation(stack, args.controllers)}"
        + (f"\n  {plant_line}" if plant_line else "")
    )
    started = time.monotonic()
    supervisor = None
    try:
        with tempfile.TemporaryDirectory(prefix="rnea_jtc_demo_") as tmp:
            node_file = _params_file(Path(tmp) / "node.yaml", "trajectory_feedforward", node_parameters(urdf))
            real = stack is not None
            sim_values = hardware_parameters(urdf, plant=plant) if real else sim_parameters(urdf, *plant)
            sim_file = _params_file(Path(tmp) / "sim.yaml", "mujoco_sim", sim_values)
            cm_file = _nodes_file(Path(tmp) / "controllers.yaml", controller_parameters())
            children.start(
                "trajectory_feedforward",
                ["-m", "rnea_ros.nodes.trajectory_feedforward", "--ros-args", "--params-file", str(node_file)]
                + ["-r", f"~/trajectory_out:={JTC_TOPIC}"],
            )
            supervisor = Supervisor(children, started + args.timeout, sim_file, stack, cm_file)
            supervisor.wait_for_node()
            print("  run 1: JTC PID alone (multi-sine straight to JTC)")
            pid = supervisor.run("pid", sine, through_node=False)
            print("  run 2: JTC PID + annotated efforts (multi-sine through trajectory_feedforward)")
            ff = supervisor.run("ff", sine, through_node=True)
            print("  run 3: too-fast trajectory, on_limit reject")
            supervisor.set_on_limit("reject")
            nothing_out, reject_reason = supervisor.reject(shake)
            print(f"    nothing reached JTC: {nothing_out}; reason: {reject_reason}")
            print("  run 4: too-fast trajectory, on_limit slow_down")
            supervisor.set_on_limit("slow_down")
            fast = supervisor.run("fast", shake, through_node=True)
            slow_reason = supervisor.diagnostics.get("last_reason", "")
    except (KeyboardInterrupt, RuntimeError, TimeoutError) as exc:
        return ended(exc, "JTC demo", args.json)
    finally:
        if supervisor is not None:
            supervisor.close()
        children.stop()

    t_unscaled, tau_unscaled = unscaled_efforts(model, shake)
    window = (fast.t >= 0) & (fast.t <= fast.duration)
    assert fast.points.efforts is not None  # trajectory_feedforward puts effort on every point
    fast_numbers = {
        "reject": reject_reason,
        "reject_nothing_out": nothing_out,
        "slow_down": slow_reason,
        "k": fast.duration / float(shake.times[-1]),
        "unscaled_ratio": (np.max(np.abs(tau_unscaled), axis=0) / limit).tolist(),
        "annotated_ratio": (np.max(np.abs(fast.points.efforts), axis=0) / limit).tolist(),
        "applied_ratio": (np.max(np.abs(fast.u[window]), axis=0) / limit).tolist(),
        "tracking_rms_deg": fast.tracking()[0].tolist(),
    }
    summary = summarize(pid, ff, limit, fast_numbers)
    print(f"\nran in {time.monotonic() - started:.1f} s wall\n")
    print(table(summary))
    failed = check(summary, nothing_out)
    numbers = {**summary.to_dict(), "controllers": controllers_json(stack)}
    if stack is not None:
        numbers["agreement"] = {run.name: agreement(run, jtc_gains(), 1e-3) for run in (pid, ff, fast)}
        print("\n" + agreement_table(numbers["agreement"]))
    if args.json:
        write_json(args.json, {**numbers, "failed": failed})
    print(
        "\ntargets (RMS ratio >= 10x on every joint, rejected trajectory never reaches JTC, annotated "
        "efforts within limits after slowing down): "
        + ("all met" if not failed else "MISSED\n  " + "\n  ".join(failed))
    )
    if args.plot:
        path = plot(pid, ff, fast, (t_unscaled, tau_unscaled), limit, out / "jtc_demo.png")
        print(f"plot: {path.resolve()}")
    return MISSED if failed else OK


if __name__ == "__main__":
    sys.exit(main())
