"""Absurd but finite numbers on every input of the fixed-base node (Panda to panda_hand with a
deck IMU, `gravity_source: imu_acceleration` low-passed at 5 Hz): ~/imu (specific force, angular
velocity, orientation), ~/ee_wrench, ~/payload, ~/joint_trajectory and joint_states. Each is
refused under its input's `rejected.<reason>`, with a log line naming the field and the bound,
and the next good input gets the core's command (1e-9): no absurd value is ever taken for a
state, a target, a wrench or a gravity. Before, a 1e308 m/s² IMU sample held the filtered
gravity off for 23 s, a 1e7 N wrench saturated every joint until cleared, a trajectory to
1e308 rad silenced the node and blamed joint_states, and a quaternion of norm 1e-8 flipped
gravity. The floating base's ~/odometry and ~/imu: test_floating_base_node.py."""

from __future__ import annotations

import math
import time

import numpy as np
import pytest
from builtin_interfaces.msg import Duration
from geometry_msgs.msg import InertiaStamped, WrenchStamped
from sensor_msgs.msg import Imu
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from rnea_ros import RobotModel, rnea
from rnea_ros.model.example_robots import example_urdf_path
from rnea_ros.testing.rosgraph import FRICTION_OFF, NODE, Driver, start_node, stop

PANDA = (
    example_urdf_path("panda")
    .read_text()
    .replace(
        "</robot>",
        '<link name="imu_link"/><joint name="imu_mount" type="fixed"><parent link="panda_link0"/>'
        '<child link="imu_link"/><origin xyz="0.1 -0.05 0.02" rpy="0 0 0"/></joint></robot>',
    )
)
MODEL = RobotModel.from_urdf(PANDA, tip_link="panda_hand")
NAMES = list(MODEL.joint_names)
Q = np.array([0.3, -0.6, 0.2, -2.0, 0.1, 1.4, 0.7])
QD = np.array([0.2, -0.1, 0.3, 0.1, -0.2, 0.1, 0.05])
G_EFF = np.array([0.4, -0.3, -9.6])  # a gently tilted, heaving deck: what the IMU gives (root axes)
F_IMU = -G_EFF  # the accelerometer's specific force (the IMU's axes are the root's)
LOG = {}


def expected(gravity=G_EFF) -> np.ndarray:
    tau = rnea(MODEL, Q, QD, np.zeros(MODEL.nv), gravity=tuple(gravity))
    return np.clip(tau, -MODEL.effort_limit, MODEL.effort_limit)


@pytest.fixture(scope="module")
def node(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("absurd")
    params = {
        "robot_description": PANDA, "tip_link": "panda_hand", "joint_states_timeout": 5.0,
        "gravity_source": "imu_acceleration", "imu.cutoff_frequency": 5.0, "imu.timeout": 5.0,
        "diagnostics_period": 0.2, **FRICTION_OFF,
    }  # fmt: skip
    proc = start_node(tmp, params)
    d = Driver("absurd_driver", dict(zip(NAMES, MODEL.effort_limit, strict=True)))
    n = d.node
    d.imu = n.create_publisher(Imu, f"{NODE}/imu", 10)  # type: ignore[attr-defined]
    d.wrench = n.create_publisher(WrenchStamped, f"{NODE}/ee_wrench", 10)  # type: ignore[attr-defined]
    d.payload = n.create_publisher(InertiaStamped, f"{NODE}/payload", 10)  # type: ignore[attr-defined]
    d.trajectory = n.create_publisher(JointTrajectory, f"{NODE}/joint_trajectory", 10)  # type: ignore[attr-defined]
    try:
        yield d
    finally:
        d.close()
        LOG["output"] = stop(proc)
    assert "Traceback" not in LOG["output"], LOG["output"]


def imu(d: Driver, f=F_IMU, omega=None, quat=None) -> Imu:
    msg = Imu()
    msg.header.frame_id = "imu_link"
    msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(d.node.get_clock().now().nanoseconds, 10**9)
    a = msg.linear_acceleration
    a.x, a.y, a.z = map(float, f)
    if omega is None:
        msg.angular_velocity_covariance[0] = -1.0
    else:
        w = msg.angular_velocity
        w.x, w.y, w.z = map(float, omega)
    if quat is None:
        msg.orientation_covariance[0] = -1.0
    else:
        o = msg.orientation
        o.x, o.y, o.z, o.w = map(float, quat)
    return msg


def good_command(d: Driver, make_imu=None, want=None) -> None:
    """Good IMU samples (at about 100 Hz) and the state until the core's command comes (the
    trajectory cancelled, the tip's wrench cleared: the good inputs back; they travel on topics of
    their own, so the first answers may come before them)."""
    d.trajectory.publish(JointTrajectory())
    d.wrench.publish(WrenchStamped())  # frame_id empty: the tip; zero clears it
    got = None
    end = time.monotonic() + 120.0  # the node may be starting on a loaded machine
    want = expected() if want is None else want
    while time.monotonic() < end:
        d.imu.publish(make_imu() if make_imu else imu(d))
        d.spin(0.01)
        got = d.command_for(d.state(NAMES, Q, QD), timeout=0.05)
        if got is not None and np.allclose(got, want, rtol=0, atol=1e-9):
            return
    raise AssertionError(f"not the core's command: {got} != {want}; {d.latest_diagnostics()}")


def refused(d: Driver, reason: str, said: str, publish, good=None, want=None) -> None:
    """`publish()` an absurd input among good IMU samples (`good()`, else `imu(d)`): counted under
    rejected.<reason> with `said` in last_drop, and the next good input commands as the core
    does (`want`, else expected())."""
    before = int(d.latest_diagnostics().get(f"rejected.{reason}", "0"))
    publish()
    for _ in range(10):  # the IMU keeps coming (100 Hz) while the absurd input is on its way
        d.imu.publish(good() if good else imu(d))
        d.spin(0.01)
    diag = d.latest_diagnostics()
    assert int(diag.get(f"rejected.{reason}", "0")) > before, (reason, diag)
    assert said in diag["last_drop"], (said, diag["last_drop"])
    d.imu.publish(good() if good else imu(d))
    d.spin(0.01)
    got = d.command_for(d.state(NAMES, Q, QD))  # the first command after the absurd input
    want = expected() if want is None else want
    assert got is not None and np.allclose(got, want, rtol=0, atol=1e-9), (said, got)


def wrench(values, frame: str = "panda_hand") -> WrenchStamped:
    msg = WrenchStamped()
    msg.header.frame_id = frame
    f, t = msg.wrench.force, msg.wrench.torque
    f.x, f.y, f.z, t.x, t.y, t.z = map(float, values)
    return msg


def trajectory(position: float = 0.0, time: float = 1.0, velocity: float | None = None) -> JointTrajectory:
    point = JointTrajectoryPoint(positions=[float(q) for q in Q])
    point.positions[3] = float(position) if position else point.positions[3]
    if velocity is not None:
        point.velocities = [float(velocity)] * MODEL.nv
    sec = math.floor(time)
    point.time_from_start = Duration(sec=int(sec), nanosec=int((time - sec) * 1e9))
    return JointTrajectory(joint_names=NAMES, points=[point])


def test_imu_samples(node: Driver) -> None:
    d = node
    good_command(d)
    for f in ([0.0, 0.0, 1e308], [1e3, 0.0, 9.81], [-5e3, 1e150, 0.0]):
        refused(d, "bad_imu", "specific force", lambda f=f: d.imu.publish(imu(d, f=f)))
    refused(d, "bad_imu", "angular velocity", lambda: d.imu.publish(imu(d, omega=[0.0, 1e308, 0.0])))
    refused(d, "bad_imu", "beyond the plausible", lambda: d.imu.publish(imu(d, omega=[1e3, 0.0, 0.0])))


def test_imu_orientations(node: Driver) -> None:
    d = node
    assert d.set_parameters({"gravity_source": "imu_orientation"})[0].successful
    try:
        level = np.array([0.0, 0.0, -math.sqrt(9.81**2)])  # |gravity| 9.81 down the world z
        tilted = (math.sin(0.05), 0.0, 0.0, math.cos(0.05))  # rolled 0.1 rad
        g_tilted = np.array([0.0, -9.81 * math.sin(0.1), -9.81 * math.cos(0.1)])
        good_command(d, lambda: imu(d, quat=tilted), expected(g_tilted))
        for quat in ((0.0, 1e-8, 0.0, 0.0), (0.0, 0.0, 0.0, 2.0), (0.0, 0.0, 1e308, 0.0)):
            refused(
                d, "bad_imu", "not 1 within 0.001", lambda quat=quat: d.imu.publish(imu(d, quat=quat)),
                lambda: imu(d, quat=tilted), expected(g_tilted),
            )  # fmt: skip
        assert not np.allclose(expected(g_tilted), expected(level), atol=0.1)  # the tilt matters
    finally:
        assert d.set_parameters({"gravity_source": "imu_acceleration"})[0].successful


def test_wrenches_payloads_trajectories_and_joint_states(node: Driver) -> None:
    d = node
    good_command(d)
    for values in ([1e7, 0, 0, 0, 0, 0], [0, 0, 1e308, 0, 0, 0], [0, 0, 0, 0, -2e6, 0]):
        refused(
            d, "bad_wrench", "the ee_wrench parameter's bounds", lambda v=values: d.wrench.publish(wrench(v))
        )
    payload = InertiaStamped()
    payload.header.frame_id = "panda_hand"
    payload.inertia.m = 1e308
    refused(d, "bad_payload", "inertia.m", lambda: d.payload.publish(payload))
    refused(
        d,
        "bad_trajectory",
        "position of 'panda_joint4' is 1e+308",
        lambda: d.trajectory.publish(trajectory(1e308)),
    )
    refused(
        d, "bad_trajectory", "time_from_start 1e+08 s", lambda: d.trajectory.publish(trajectory(time=1e8))
    )
    refused(
        d,
        "bad_trajectory",
        "velocity of 'panda_joint1' is 1e+150",
        lambda: d.trajectory.publish(trajectory(velocity=1e150)),
    )
    for q, qd, said in (
        (np.where(np.arange(7) == 3, 1e308, Q), QD, "joint_states position of 'panda_joint4' is 1e+308"),
        (np.where(np.arange(7) == 2, -2e9, Q), QD, "joint_states position of 'panda_joint3' is -2e+09"),
        (Q, np.where(np.arange(7) == 0, 1e150, QD), "joint_states velocity of 'panda_joint1' is 1e+150"),
    ):
        refused(d, "implausible", said, lambda q=q, qd=qd: d.joint_states.publish(d.state(NAMES, q, qd)))
