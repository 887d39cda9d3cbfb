"""The inverse_dynamics node's friction compensation as a real process (xArm7: URDF damping
2-10 N m s/rad and 1 N m friction on every joint): feedforward at the desired velocity along a
trajectory, bounded feedback from the measured velocity without one (the loop period taken from
the joint_states stamps), the runaway guard fading a joint out and reporting it on /diagnostics,
and re-armed by a friction parameter change.

joint_states are stamped on a synthetic clock 1 ms apart (joint_states_timeout 0: no age check),
so the period the node measures is exact; every wait is bounded."""

from __future__ import annotations

import numpy as np
import pytest
from builtin_interfaces.msg import Duration
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from rnea_ros import Friction, RobotModel, friction_torques, mass_matrix, rnea
from rnea_ros.friction.compensation import CompensationRules, feedback_friction
from rnea_ros.model.example_robots import example_urdf_path
from rnea_ros.testing.rosgraph import Driver, rclpy, start_node, stop

URDF = example_urdf_path("xarm_description/urdf/xarm7.urdf").read_text()
MODEL = RobotModel.from_urdf(URDF)
FRICTION = Friction.from_model(MODEL)
NAMES = list(MODEL.joint_names)
PERIOD = 1e-3


class Clock:
    """Synthetic stamps PERIOD apart, sent one by one, each answered before the next."""

    def __init__(self, driver: Driver, start: float = 100.0) -> None:
        self.driver, self.t = driver, start

    def wait_for_node(self, timeout: float = 30.0) -> None:
        """Send states (still PERIOD apart on this clock) until the node answers one."""
        for _ in range(int(timeout / 0.05)):
            try:
                self.send(np.zeros(7), np.zeros(7), timeout=0.05)
                return
            except TimeoutError:
                continue
        raise TimeoutError("no effort command from the node")

    def send(self, q, qd, timeout: float = 5.0) -> np.ndarray:
        self.t += PERIOD
        msg = self.driver.state(NAMES, q, qd, stamp=False)
        msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(round(self.t * 1e9), 1_000_000_000)
        stamp = (msg.header.stamp.sec, msg.header.stamp.nanosec)
        self.driver.joint_states.publish(msg)
        for _ in range(int(timeout / 0.005)):
            rclpy.spin_once(self.driver.node, timeout_sec=0.005)
            for js in reversed(self.driver.joint_efforts[-5:]):
                if (js.header.stamp.sec, js.header.stamp.nanosec) == stamp:
                    return np.array(js.effort)
        raise TimeoutError("no answer")

    def friction_term(self) -> np.ndarray:
        """The node's last ~/terms/friction (spun until it matches the last stamp)."""
        for _ in range(400):
            terms = self.driver.terms["friction"]
            stamp = terms[-1].header.stamp if terms else None
            if stamp is not None and abs(stamp.sec + stamp.nanosec * 1e-9 - self.t) < 1e-7:
                return np.array(terms[-1].effort)
            rclpy.spin_once(self.driver.node, timeout_sec=0.005)
        raise TimeoutError("no friction term")


@pytest.fixture(scope="module")
def node(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("friction_node")
    params = {"robot_description": URDF, "joint_states_timeout": 0.0, "diagnostics_period": 0.2}
    proc = start_node(tmp, params)
    driver = Driver("friction_driver", dict(zip(NAMES, MODEL.effort_limit, strict=True)))
    clock = Clock(driver)
    try:
        clock.wait_for_node()  # only synthetic stamps: the node's period estimate is exactly PERIOD
        yield driver, clock
    finally:
        driver.close()
        output = stop(proc)
        assert "Traceback" not in output, output


def test_without_a_trajectory_friction_is_the_bounded_feedback_at_the_measured_period(node) -> None:
    driver, clock = node
    rng = np.random.default_rng(4)
    q = rng.uniform(-1.0, 1.0, 7)
    for _ in range(5):
        clock.send(q, np.zeros(7))
    for _ in range(3):
        qd = rng.normal(0, 0.5, 7)
        got = clock.send(q, qd)
        inertia = np.diag(mass_matrix(MODEL, q))
        want_friction = feedback_friction(FRICTION, CompensationRules(), qd, inertia, PERIOD)
        np.testing.assert_allclose(clock.friction_term(), want_friction, rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(got, rnea(MODEL, q, qd, np.zeros(7)) + want_friction, rtol=0, atol=1e-9)
    # the light wrist joints get a small share of scale x the model, the base joints all of it
    assert abs(want_friction[6]) < 0.05 * 0.5 * abs(friction_torques(FRICTION, qd)[6])
    diag = driver.latest_diagnostics()
    assert float(diag["friction_period_ms"]) == pytest.approx(1.0, abs=1e-6)
    assert diag["friction_faded_joints"] == "" and diag["friction_guard_trips"] == "0"


def test_along_a_trajectory_friction_is_feedforward_at_the_desired_velocity(node) -> None:
    """A constant-velocity trajectory (after the node's 1 s join from the measured state): q̇_des = v
    whenever it is sampled (on the node's clock), so the friction term is exactly τ_f(v), whatever
    the measured velocity."""
    driver, clock = node
    v = np.linspace(-0.4, 0.4, 7) + 0.05
    q0 = np.zeros(7)
    want = friction_torques(FRICTION, v)
    msg = JointTrajectory(joint_names=NAMES)  # stamp 0: starts when received
    for t in (1.0, 20.0):  # within 20 s: the targets stay near the joints' range (9 rad at most)
        msg.points.append(
            JointTrajectoryPoint(
                positions=(q0 + v * t).tolist(), velocities=v.tolist(), accelerations=[0.0] * 7,
                time_from_start=Duration(sec=int(t)),
            )
        )  # fmt: skip
    publisher = driver.node.create_publisher(JointTrajectory, "/inverse_dynamics/joint_trajectory", 10)
    clock.send(q0, np.zeros(7))
    driver.spin(0.2)
    publisher.publish(msg)
    driver.spin(1.5)
    try:
        for _ in range(20):
            clock.send(q0, np.zeros(7))
        np.testing.assert_allclose(clock.friction_term(), want, rtol=1e-9, atol=1e-12)
        clock.send(q0, -v)  # measured velocity opposite: the feedforward does not care
        np.testing.assert_allclose(clock.friction_term(), want, rtol=1e-9, atol=1e-12)
    finally:
        publisher.publish(JointTrajectory(joint_names=NAMES))  # cancel
        driver.spin(0.3)


def test_guard_fades_a_driven_joint_reports_it_and_is_rearmed_by_a_friction_parameter(node) -> None:
    """joint_states of a runaway: joint 1 accelerating at 20 rad/s² with nothing in the commands
    to explain it. The friction term adds energy while the joint gains speed the model cannot
    account for; the guard trips, fades joint 1's friction term to 0 and says so on /diagnostics;
    a friction parameter change re-arms it."""
    driver, clock = node
    q, qd = np.zeros(7), np.zeros(7)
    for _ in range(5):
        clock.send(q, qd)
    for _ in range(900):
        qd[0] += 20.0 * PERIOD
        q[0] += qd[0] * PERIOD
        clock.send(q, qd)
    assert clock.friction_term()[0] == 0.0
    diag = driver.latest_diagnostics()
    assert diag["friction_faded_joints"] == "joint1"
    assert int(diag["friction_guard_trips"]) == 1
    assert diag["level"] == 1 and "runaway guard" in diag["message"]
    assert driver.set_parameters({"friction.deadband": 0.04})[0].successful
    clock.send(q, qd)
    assert clock.friction_term()[0] != 0.0
    diag = driver.latest_diagnostics()
    assert diag["friction_faded_joints"] == "" and diag["friction_guard_trips"] == "0"
    assert driver.set_parameters({"friction.deadband": 0.05})[0].successful
