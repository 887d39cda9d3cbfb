"""The real joint_trajectory_controller (ros2_controllers 4.42.1, effort command interface) with
mujoco_sim as its robot behind topic_based_ros2_control, in lock-step on the simulator's /clock:
what it does with a trajectory's `effort`, checked against the docs of rnea_ros.sim.jtc and
docs/trajectories.md, and rnea_ros.sim.jtc replayed on the same states.

One run: trajectory A (an effort-annotated multi-sine, stamp 0) and, 1 s into it, trajectory B
whose first point lies 0.2 s in the future (a new goal JTC joins from its current state), held
after its last point. The simulator logs every step (state, command). Independent of
rnea_ros.sim.jtc's feedforward, `u − u(same trajectories without effort)` must be the effort JTC
adds: A's efforts interpolated linearly, one update ahead; on the join, a straight line from the
last command to B's first effort; after B's last point, its effort. Skips without ros2_control.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pytest
import rclpy
from builtin_interfaces.msg import Duration
from control_stack import require_stack
from rclpy.node import Node
from rclpy.qos import QoSProfile, ReliabilityPolicy
from rosgraph_msgs.msg import Clock
from std_msgs.msg import String
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from rnea_ros import RobotModel, gravity_torques
from rnea_ros.model.example_robots import example_urdf_path
from rnea_ros.sim.demos.jtc.demo import (
    ARM,
    CONTROLLER,
    FINGER_HOME,
    FINGERS,
    HOME,
    controller_parameters,
    hardware_parameters,
    jtc_gains,
    multisine_points,
)
from rnea_ros.sim.jtc import JointTrajectoryController
from rnea_ros.sim.processes import Processes, start_robot
from rnea_ros.sim.ros2_control import BROADCASTER
from rnea_ros.sim.step_log import load
from rnea_ros.trajectory.jtc_points import effort_trajectory

pytestmark = pytest.mark.jazzy_tools  # ../shared/ros2-control: built for Jazzy

URDF = example_urdf_path("panda").read_text()
MODEL = RobotModel.from_urdf(URDF)
DT = 1e-3  # s, the controller manager's period (update_rate 1000)
B_AFTER = 1.0  # s of A before B is sent
B_TIMES = np.array([0.2, 0.4])  # s, B's points from its start: the first in the future
HOLD = 0.3  # s recorded after B's last point
# N m: the real JTC against rnea_ros.sim.jtc and against the efforts by hand on the same states
# (the same sums in another order, commands up to ~90 N m; measured <= 1e-10)
TOLERANCE = 1e-8


def _seconds(stamp) -> float:
    return stamp.sec + stamp.nanosec * 1e-9


def message(times, positions, velocities, accelerations, efforts) -> JointTrajectory:
    msg = JointTrajectory(joint_names=list(ARM))  # stamp 0: from JTC's next update
    for k, t in enumerate(times):
        sec, nanosec = divmod(round(float(t) * 1e9), 10**9)
        msg.points.append(
            JointTrajectoryPoint(
                positions=list(positions[k]),
                velocities=list(velocities[k]),
                accelerations=list(accelerations[k]),
                effort=list(efforts[k]),
                time_from_start=Duration(sec=sec, nanosec=nanosec),
            )
        )
    return msg


class Run:
    """The robot on the real controllers and a test node that follows it."""

    def __init__(self, folder: Path) -> None:
        stack = require_stack()
        from control_msgs.msg import JointTrajectoryControllerState  # installed with the stack

        self.children = Processes(folder / "logs")
        self.node = Node("jtc_semantics")
        self.now = -1.0  # newest plant stamp, s
        self.starts: list[float] = []  # trajectory start of each controller_state seen, s
        self.saved: list[str] = []
        node = self.node
        node.create_subscription(Clock, "/mujoco_sim/progress", self._on_progress, 10)
        node.create_subscription(String, "/mujoco_sim/saved", lambda m: self.saved.append(m.data), 10)
        latest = QoSProfile(depth=1, reliability=ReliabilityPolicy.BEST_EFFORT)
        node.create_subscription(
            JointTrajectoryControllerState, f"/{CONTROLLER}/controller_state", self._on_state, latest
        )
        self.save = node.create_publisher(String, "/mujoco_sim/save", 10)
        self.to_jtc = node.create_publisher(JointTrajectory, f"/{CONTROLLER}/joint_trajectory", 10)
        start_robot(
            self.children,
            stack,
            folder,
            hardware_parameters(URDF),
            controller_parameters(),
            [BROADCASTER, CONTROLLER],
        )

    def _on_progress(self, msg: Clock) -> None:
        self.now = max(self.now, _seconds(msg.clock))

    def _on_state(self, msg) -> None:
        self.starts.append(_seconds(msg.header.stamp) - _seconds(msg.reference.time_from_start))

    def spin_until(self, done, what: str, limit: float = 120.0) -> None:
        end = time.monotonic() + limit
        while not done():
            self.children.check()
            assert time.monotonic() < end, f"timed out waiting for {what} (plant at {self.now:.3f} s)"
            rclpy.spin_once(self.node, timeout_sec=0.05)

    def send(self, msg: JointTrajectory) -> float:
        """Publish a trajectory; the time JTC took it (its first sample), s."""
        self.spin_until(lambda: self.starts, "JTC's controller_state")
        before = self.starts[-1]  # the start of what it follows now (its hold since activation)
        self.to_jtc.publish(msg)
        self.spin_until(lambda: self.starts[-1] > before + DT / 2, "JTC to take the trajectory")
        return self.starts[-1]

    def steps(self, path: Path) -> dict:
        self.save.publish(String(data=str(path)))
        self.spin_until(lambda: self.saved, "the simulator's step log")
        assert not self.saved[-1].startswith("error"), self.saved[-1]
        return load(path)

    def close(self) -> None:
        self.children.stop()
        self.node.destroy_node()


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    """A, then B 1 s into it; every step of the run and the trajectories as JTC took them."""
    if not rclpy.ok():  # the worker's other ROS tests share the default context
        rclpy.init()
    folder = tmp_path_factory.mktemp("jtc_semantics")
    run = Run(folder)
    try:
        run.spin_until(lambda: run.to_jtc.get_subscription_count() > 0 and run.now > 0, "JTC to listen")
        sine = multisine_points(MODEL, 2.0, 3)
        held = {j: FINGER_HOME for j in FINGERS}
        a = effort_trajectory(
            MODEL, ARM, sine.times, sine.positions, sine.velocities, sine.accelerations, held=held
        )
        t_a = run.send(message(a.times, a.positions, a.velocities, a.accelerations, a.efforts))
        run.spin_until(lambda: run.now >= t_a + B_AFTER, "A to run 1 s")
        q_b = np.array(HOME) + 0.05
        full = np.array([*q_b, FINGER_HOME, FINGER_HOME])
        e_b = gravity_torques(MODEL, full)[: len(ARM)]  # holds the arm at q_b
        zeros = np.zeros((2, len(ARM)))
        b = (B_TIMES, np.array([q_b, q_b]), zeros, zeros, np.array([e_b, 1.01 * e_b]))
        t_b = run.send(message(*b))
        run.spin_until(lambda: run.now >= t_b + B_TIMES[-1] + HOLD, "B to end")
        steps = run.steps(folder / "steps.npz")
    finally:
        run.close()
    index = [[str(n) for n in steps["names"]].index(j) for j in ARM]
    return {
        "t": steps["stamp_ns"] * 1e-9,
        "q": steps["q"][:, index],
        "qd": steps["qd"][:, index],
        "u": steps["applied"][:, index],
        "a": (t_a, (a.times, a.positions, a.velocities, a.accelerations, a.efforts)),
        "b": (t_b, b),
    }


def replay(rec: dict, with_efforts: bool) -> np.ndarray:
    """rnea_ros.sim.jtc on the recorded states, each trajectory received at the update at which
    the real JTC took it (`with_efforts` False: the same trajectories without `effort`)."""
    jtc = JointTrajectoryController(len(ARM), jtc_gains(), DT)
    jtc.hold(rec["q"][0])
    out = np.zeros_like(rec["u"])
    pending = [rec["a"], rec["b"]]
    for k, (t, q, qd) in enumerate(zip(rec["t"], rec["q"], rec["qd"], strict=True)):
        if pending and t >= pending[0][0] - DT / 2:
            start, (times, p, v, a, e) = pending.pop(0)
            jtc.receive(start, times, p, v, a, e if with_efforts else None)
        out[k] = jtc.update(t, q, qd)
    return out


def test_the_run_covers_a_then_b_from_the_first_step(recorded) -> None:
    t, (t_a, _), (t_b, _) = recorded["t"], recorded["a"], recorded["b"]
    assert abs(t[0] - t_a) < DT / 2  # the physics started when JTC took A (brakes released)
    assert np.allclose(np.diff(t), DT, atol=1e-9)  # one step per controller manager cycle
    assert t_a + B_AFTER <= t_b < t_a + B_AFTER + 0.1
    assert t[-1] >= t_b + B_TIMES[-1] + HOLD - DT


def test_simulated_jtc_agrees_with_the_real_one_on_the_same_states(recorded) -> None:
    """Including B's join from the last command and the hold after its last point."""
    diff = recorded["u"] - replay(recorded, with_efforts=True)
    assert np.max(np.abs(diff)) < TOLERANCE, np.max(np.abs(diff), axis=0)


def test_the_points_effort_is_added_interpolated_one_update_ahead(recorded) -> None:
    """u − u(without effort) = A's efforts, linearly interpolated at t + one period: fails if JTC
    ignored the annotation (the difference would be 0, efforts here reach tens of N m)."""
    t, (t_a, (times, *_, efforts)), (t_b, _) = recorded["t"], recorded["a"], recorded["b"]
    added = recorded["u"] - replay(recorded, with_efforts=False)
    inside = (t >= t_a - DT / 2) & (t < t_b - DT / 2)
    expected = np.stack(
        [np.interp(t[inside] + DT - t_a, times, efforts[:, j]) for j in range(len(ARM))], axis=1
    )
    assert np.max(np.abs(expected)) > 10.0
    np.testing.assert_allclose(added[inside], expected, rtol=0, atol=TOLERANCE)


def test_a_new_goal_joins_from_the_last_command_and_the_last_point_is_held(recorded) -> None:
    """B's first point 0.2 s ahead: over the join JTC's feedforward goes straight from its last
    command u (PID included: its current state takes `effort` from the command interface) to B's
    first effort; after B's last point it keeps that point's effort."""
    t, u = recorded["t"], recorded["u"]
    t_b, (times, _, _, _, efforts) = recorded["b"]
    added = u - replay(recorded, with_efforts=False)
    k_b = int(np.argmin(np.abs(t - t_b)))
    last = u[k_b - 1]  # the command JTC wrote the cycle before it took B
    join = (t >= t_b - DT / 2) & (t < t_b + times[0] - DT / 2)
    frac = (t[join] + DT - t_b) / times[0]
    expected = last + frac[:, None] * (efforts[0] - last)
    np.testing.assert_allclose(added[join], expected, rtol=0, atol=TOLERANCE)
    after = t >= t_b + times[-1] - DT / 2  # the sample one update ahead is past the last point
    assert after.sum() >= HOLD / DT - 1
    np.testing.assert_allclose(
        added[after], np.broadcast_to(efforts[-1], added[after].shape), rtol=0, atol=TOLERANCE
    )
