"""mujoco_sim and multisine_trajectory as real processes, driven by a real rclpy test node.

mujoco_sim must behave like a ros2_control robot with an effort forward_command_controller
(commands in `joints` order, last one held, bad ones dropped) and, in lock-step, advance one
physics step per answered joint_states. Every wait is bounded; nothing asserts on durations.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import rclpy
import yaml
from rclpy.node import Node
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import JointState
from std_msgs.msg import Empty, Float64MultiArray
from trajectory_msgs.msg import JointTrajectory

from rnea_ros import RobotModel, gravity_torques, mass_matrix
from rnea_ros.model.example_robots import example_urdf_path
from rnea_ros.ros.processes import die_with_parent
from rnea_ros.testing.rosgraph import stop  # sets ROS_DOMAIN_ID and ROS_LOCALHOST_ONLY before rclpy.init

URDF = example_urdf_path("panda").read_text()
MODEL = RobotModel.from_urdf(URDF)
ARM = [f"panda_joint{i}" for i in range(1, 8)]
ALL = [*ARM, "panda_finger_joint1", "panda_finger_joint2"]
HOME = np.array([0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785, 0.02, 0.02])
GRAVITY = dict(zip(MODEL.joint_names, gravity_torques(MODEL, HOME), strict=True))


def start(tmp: Path, module: str, node: str, params: dict) -> subprocess.Popen:
    path = tmp / f"{node}_{time.monotonic_ns()}.yaml"
    path.write_text(yaml.safe_dump({node: {"ros__parameters": params}}))
    args = [sys.executable, "-m", module, "--ros-args", "--params-file", str(path)]
    return subprocess.Popen(
        args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, preexec_fn=die_with_parent
    )


def sim_params(**extra) -> dict:
    return {
        "robot_description": URDF,
        "joints": ARM[::-1],  # reversed: commands follow this order, not the model's
        "initial_joints": ALL,
        "initial_positions": HOME.tolist(),
        "controller_name": "test_controller",
        **extra,
    }


class Probe:
    """Records joint_states and /clock; publishes commands and answers."""

    def __init__(self, name: str) -> None:
        if not rclpy.ok():
            rclpy.init()
        self.node = Node(name)
        self.states: list[JointState] = []
        self.clock: list[Clock] = []
        self.trajectories: list[JointTrajectory] = []
        self.node.create_subscription(JointState, "joint_states", self.states.append, 1000)
        self.node.create_subscription(Clock, "/clock", self.clock.append, 100)
        self.node.create_subscription(
            JointTrajectory, "/inverse_dynamics/joint_trajectory", self.trajectories.append, 10
        )
        self.commands = self.node.create_publisher(Float64MultiArray, "/test_controller/commands", 10)
        self.answers = self.node.create_publisher(JointState, "/test_answers", 10)
        self.joint_states = self.node.create_publisher(JointState, "joint_states", 10)
        self.start = self.node.create_publisher(Empty, "/multisine_trajectory/start", 10)

    def spin_until(self, done, timeout: float = 20.0) -> bool:
        end = time.monotonic() + timeout
        while not done() and time.monotonic() < end:
            rclpy.spin_once(self.node, timeout_sec=0.01)
        return bool(done())

    def latest(self) -> tuple[float, dict[str, float], dict[str, float]]:
        """(time s, positions by name, efforts by name) of the newest joint_states."""
        msg = self.states[-1]
        t = msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9
        return t, dict(zip(msg.name, msg.position, strict=True)), dict(zip(msg.name, msg.effort, strict=True))

    def close(self) -> None:
        self.node.destroy_node()


def arm_command(efforts: dict[str, float]) -> Float64MultiArray:
    return Float64MultiArray(data=[float(efforts[j]) for j in ARM[::-1]])


@pytest.fixture
def probe(request):
    p = Probe(f"probe_{request.node.name.split('[')[0]}")
    yield p
    p.close()


def test_real_time_sim_is_an_effort_forward_command_controller(tmp_path, probe: Probe) -> None:
    proc = start(tmp_path, "rnea_ros.sim.sim_node", "mujoco_sim", sim_params(answer_topic=""))
    try:
        assert probe.spin_until(lambda: len(probe.states) > 20), "no joint_states"
        t, q, _ = probe.latest()
        assert probe.states[-1].name == ALL and t == 0.0  # no command yet: brakes on, time stands
        assert np.allclose([q[j] for j in ALL], HOME, atol=1e-12)

        probe.commands.publish(arm_command(GRAVITY))  # held from now on
        # events, not wall-clock guesses: wait until the command is applied, then 0.3 s of sim time
        assert probe.spin_until(lambda: all(abs(probe.latest()[2][j] - GRAVITY[j]) <= 1e-12 for j in ARM))
        t_applied = probe.latest()[0]
        assert probe.spin_until(lambda: probe.latest()[0] > t_applied + 0.3)
        t, q, effort = probe.latest()
        assert max(abs(q[j] - h) for j, h in zip(ALL, HOME, strict=True)) < 1e-6  # held still
        assert all(effort[j] == pytest.approx(GRAVITY[j], abs=1e-12) for j in ARM)  # in `joints` order
        assert probe.clock and probe.clock[-1].clock.sec * 1e9 + probe.clock[-1].clock.nanosec > 0

        probe.commands.publish(Float64MultiArray(data=[0.0, 0.0, 0.0]))  # wrong size: dropped
        probe.commands.publish(Float64MultiArray(data=[float("nan")] + [0.0] * 6))  # NaN: dropped
        t_bad = probe.latest()[0]
        assert probe.spin_until(lambda: probe.latest()[0] > t_bad + 0.3)
        _, q, effort = probe.latest()
        assert all(effort[j] == pytest.approx(GRAVITY[j], abs=1e-12) for j in ARM)
        assert max(abs(q[j] - h) for j, h in zip(ALL, HOME, strict=True)) < 1e-6

        probe.commands.publish(Float64MultiArray(data=[0.0] * 7))  # zeros, held: the arm falls
        assert probe.spin_until(lambda: all(probe.latest()[2][j] == 0.0 for j in ARM))
        t_zero = probe.latest()[0]
        assert probe.spin_until(lambda: probe.latest()[0] > t_zero + 0.3)
        _, q, effort = probe.latest()
        assert all(effort[j] == 0.0 for j in ARM)
        assert abs(q["panda_joint2"] - HOME[1]) > 1e-2
    finally:
        output = stop(proc)
    assert "Traceback" not in output, output
    assert "dropped commands {'size': 1, 'not_finite': 1}" in output, output


def test_lockstep_sim_steps_once_per_answered_state(tmp_path, probe: Probe) -> None:
    """Each answered joint_states advances exactly 1 ms; an unanswered one is published again
    with the same stamp (the physics waits, however slow the controller)."""
    params = sim_params(lockstep=True, answer_topic="/test_answers", answer_timeout=0.1)
    proc = start(tmp_path, "rnea_ros.sim.sim_node", "mujoco_sim", params)
    try:
        answered: list[int] = []
        for _ in range(100):
            assert probe.spin_until(lambda: probe.states and (not answered or _stamp(probe) > answered[-1]))
            stamp = _stamp(probe)
            _, q, _ = probe.latest()
            g = gravity_torques(MODEL, [q[j] for j in MODEL.joint_names])
            efforts = dict(zip(MODEL.joint_names, g, strict=True))
            command = arm_command(efforts)
            probe.commands.publish(command)
            answer = JointState(name=ARM[::-1], effort=list(command.data))
            answer.header = probe.states[-1].header
            probe.answers.publish(answer)
            answered.append(stamp)
        assert answered[0] == 0 and np.array_equal(np.diff(answered), np.full(99, 1_000_000))  # 1 ms a step
        # no answer now: the same state comes again, time does not advance
        count = len(probe.states)
        assert probe.spin_until(lambda: len(probe.states) > count + 2)
        stamps = {_stamp_of(m) for m in probe.states[count:]}
        assert stamps == {answered[-1] + 1_000_000}
        _, q, _ = probe.latest()
        assert max(abs(q[j] - h) for j, h in zip(ALL, HOME, strict=True)) < 1e-6
    finally:
        output = stop(proc)
    assert "Traceback" not in output, output


def _stamp_of(msg: JointState) -> int:
    return msg.header.stamp.sec * 1_000_000_000 + msg.header.stamp.nanosec


def _stamp(probe: Probe) -> int:
    return _stamp_of(probe.states[-1])


def test_multisine_node_publishes_a_trajectory_from_the_current_pose(tmp_path, probe: Probe) -> None:
    params = {
        "robot_description": URDF,
        "joints": ARM,
        "duration": 4.0,
        "ramp": 1.0,
        "start_delay": 0.5,
        "sample_rate": 100.0,
        "autostart": True,
    }
    proc = start(tmp_path, "rnea_ros.nodes.multisine_trajectory", "multisine_trajectory", params)

    def state(q: np.ndarray, sec: int, nanosec: int) -> JointState:
        msg = JointState(name=ALL, position=q.tolist(), velocity=[0.0] * 9)
        msg.header.stamp.sec, msg.header.stamp.nanosec = sec, nanosec
        return msg

    def publish_until_trajectory(msg: JointState, count: int) -> JointTrajectory:
        end = time.monotonic() + 20.0
        while len(probe.trajectories) < count and time.monotonic() < end:
            probe.joint_states.publish(msg)
            probe.spin_until(lambda: len(probe.trajectories) >= count, 0.05)
        assert len(probe.trajectories) >= count, "no trajectory"
        return probe.trajectories[count - 1]

    try:
        traj = publish_until_trajectory(state(HOME, 7, 250_000_000), 1)
        assert list(traj.joint_names) == ARM
        assert (traj.header.stamp.sec, traj.header.stamp.nanosec) == (7, 750_000_000)
        pts = traj.points
        assert len(pts) == 401
        times = np.array([p.time_from_start.sec + p.time_from_start.nanosec * 1e-9 for p in pts])
        assert np.allclose(np.diff(times), 0.01, atol=1e-9) and times[-1] == 4.0
        q = np.array([p.positions for p in pts])
        qd = np.array([p.velocities for p in pts])
        qdd = np.array([p.accelerations for p in pts])
        for k in (0, -1):  # from and back to the pose at rest
            assert np.allclose(q[k], HOME[:7], atol=1e-12)
            assert np.allclose(qd[k], 0) and np.allclose(qdd[k], 0)
        assert np.all(q >= MODEL.position_lower[:7] + 0.1) and np.all(q <= MODEL.position_upper[:7] - 0.1)
        assert np.all(np.abs(qd) <= 0.5 * MODEL.velocity_limit[:7]) and np.all(np.abs(qdd) <= 3.0)
        assert np.all(np.ptp(q, axis=0) > 0.05)  # every joint moves

        # on ~/start: another one, from wherever the arm is now
        for _ in range(10):  # autostart publishes once
            probe.joint_states.publish(state(HOME, 8, 0))
            probe.spin_until(lambda: len(probe.trajectories) > 1, 0.05)
        assert len(probe.trajectories) == 1
        other = HOME.copy()
        other[0] = 0.5
        probe.start.publish(Empty())
        traj = publish_until_trajectory(state(other, 20, 0), 2)
        assert (traj.header.stamp.sec, traj.header.stamp.nanosec) == (20, 500_000_000)
        assert np.allclose(traj.points[0].positions, other[:7], atol=1e-12)
    finally:
        output = stop(proc)
    assert "Traceback" not in output, output


def test_sim_runs_joint_trajectory_controller_with_effort_feedforward(tmp_path, probe: Probe) -> None:
    """controller_type joint_trajectory_controller, zero PID gains: the effort applied in the step
    that ends at stamp s is the trajectory's effort linearly interpolated at s (JTC samples one
    update ahead), joint names in any order; gravity as feedforward holds the arm still; a
    trajectory for other joints is dropped; the physics starts with the first trajectory."""
    from builtin_interfaces.msg import Duration
    from trajectory_msgs.msg import JointTrajectoryPoint

    params = sim_params(controller_type="joint_trajectory_controller", answer_topic="")
    params.update({f"gains.{j}.p": 0 for j in ARM})  # ints for doubles, as users write them
    params["gains.panda_jiont1.d"] = 1.0  # a typo: warned about, ignored
    proc = start(tmp_path, "rnea_ros.sim.sim_node", "mujoco_sim", params)
    publisher = probe.node.create_publisher(JointTrajectory, "/test_controller/joint_trajectory", 10)
    names = ARM[::-1]
    g = np.array([GRAVITY[j] for j in names])
    delta = np.linspace(0.1, 0.7, 7)

    def message(joints, e0, e1) -> JointTrajectory:
        msg = JointTrajectory(joint_names=list(joints))
        home = [HOME[ALL.index(j)] for j in joints]
        for t, e in ((0, e0), (1, e1)):
            point = JointTrajectoryPoint(positions=home, velocities=[0.0] * len(joints), effort=list(e))
            point.time_from_start = Duration(sec=t)
            msg.points.append(point)
        return msg

    try:
        assert probe.spin_until(lambda: len(probe.states) > 20 and publisher.get_subscription_count() > 0)
        assert probe.latest()[0] == 0.0  # no trajectory yet: time stands
        publisher.publish(message(ARM[:3], [0.0] * 3, [0.0] * 3))  # not the controller's joints: dropped
        publisher.publish(message(names, g, g))  # gravity from t = 0 to 1 s
        assert probe.spin_until(lambda: probe.latest()[0] > 0.5)
        _, q, effort = probe.latest()
        assert max(abs(q[j] - h) for j, h in zip(ALL, HOME, strict=True)) < 1e-6  # held by the feedforward
        assert all(effort[j] == pytest.approx(GRAVITY[j], abs=1e-12) for j in ARM)

        count = len(probe.states)
        publisher.publish(message(names, g, g + delta))  # replaces it at once, from its arrival

        def applied_of(msg: JointState) -> np.ndarray:
            efforts = dict(zip(msg.name, msg.effort, strict=True))
            return np.array([efforts[j] for j in names])

        def taken() -> int | None:
            return next(
                (
                    k
                    for k, m in enumerate(probe.states[count:])
                    if not np.allclose(applied_of(m), g, atol=1e-12)
                ),
                None,
            )

        assert probe.spin_until(lambda: taken() is not None), "the new trajectory never took over"
        first = count + taken()
        assert probe.spin_until(lambda: len(probe.states) > first + 300)
        start_ns = None
        for msg in probe.states[count:]:
            applied = applied_of(msg)
            if start_ns is None:
                if np.allclose(applied, g, rtol=0, atol=1e-12):
                    continue  # the old trajectory
                # the first step of the new one seen (a probe far behind on a busy machine may
                # have lost a few before): it ends k steps after the start, τ_d = g + delta · k dt
                steps = float(np.median((applied - g) / delta)) / 1e-3
                assert steps == pytest.approx(round(steps), abs=1e-6) and round(steps) >= 1, steps
                start_ns = _stamp_of(msg) - round(steps) * 1_000_000
            s = (_stamp_of(msg) - start_ns) * 1e-9
            np.testing.assert_allclose(applied, g + delta * min(s, 1.0), rtol=0, atol=1e-9)
        assert start_ns is not None, "the new trajectory never took over"
    finally:
        output = stop(proc)
    assert "Traceback" not in output, output
    assert "joint_names ['panda_joint1', 'panda_joint2', 'panda_joint3'] must be the controller's" in output
    assert "unknown parameter 'gains.panda_jiont1.d'" in output, output


def test_sim_armature_parameter_adds_rotor_inertia(tmp_path, probe: Probe) -> None:
    """At rest with gravity compensated, a step Δτ on panda_joint7 accelerates the arm by
    (M + diag(armature))⁻¹ Δτ: measured from the simulator's velocities against rnea_ros's M."""
    armature, step, dt = 0.2, 1.0, 0.02  # kg m², N m, s
    params = sim_params(answer_topic="", armature=[armature])
    proc = start(tmp_path, "rnea_ros.sim.sim_node", "mujoco_sim", params)
    try:
        assert probe.spin_until(lambda: len(probe.states) > 5), "no joint_states"
        command = {**GRAVITY, "panda_joint7": GRAVITY["panda_joint7"] + step}
        probe.commands.publish(arm_command(command))
        assert probe.spin_until(
            lambda: abs(probe.latest()[2]["panda_joint7"] - command["panda_joint7"]) < 1e-12
        )
        first = probe.states[-1]
        t0 = first.header.stamp.sec + first.header.stamp.nanosec * 1e-9
        assert probe.spin_until(lambda: probe.latest()[0] >= t0 + dt)
        last = probe.states[-1]
        t1 = last.header.stamp.sec + last.header.stamp.nanosec * 1e-9
    finally:
        stop(proc)
    index = [ALL.index(j) for j in ARM]
    measured = (np.asarray(last.velocity)[index] - np.asarray(first.velocity)[index]) / (t1 - t0)
    m = mass_matrix(MODEL, HOME)[np.ix_(index, index)] + armature * np.eye(7)
    expected = np.linalg.solve(m, np.eye(7)[6] * step)
    bare = np.linalg.solve(mass_matrix(MODEL, HOME)[np.ix_(index, index)], np.eye(7)[6] * step)
    assert measured[6] == pytest.approx(expected[6], rel=0.03)
    assert abs(measured[6] - bare[6]) > 10 * abs(measured[6] - expected[6])  # the armature is seen


def test_sim_refuses_an_armature_of_the_wrong_length(tmp_path) -> None:
    proc = start(tmp_path, "rnea_ros.sim.sim_node", "mujoco_sim", sim_params(armature=[0.1, 0.2]))
    try:
        code = proc.wait(60)
    finally:
        output = stop(proc)
    assert code == 2, output
    assert "armature must have 1 or 7 values (joints), got 2" in output, output
    assert "Traceback" not in output, output
