"""The running node with `gravity_source: imu_acceleration | imu_orientation` and ~/imu
(sensor_msgs/Imu): its efforts against rnea with the IMU's gravity rotated into the root frame,
and ~/imu's staleness, clock and frame rules (no command on a stale IMU, the reason on
/diagnostics), and the lifecycle node's hold command on deactivate."""

from __future__ import annotations

import math
import time

import numpy as np
import pytest
from lifecycle_msgs.msg import Transition
from lifecycle_msgs.srv import ChangeState
from sensor_msgs.msg import Imu

from rnea_ros import RobotModel, gravity_torques, rnea
from rnea_ros.model.example_robots import example_urdf_path
from rnea_ros.testing.rosgraph import FRICTION_OFF, NODE, START_TIMEOUT, Driver, start_node, stop

IMU_XYZ, IMU_RPY = (0.1, -0.05, 0.02), (0.0, 0.4, 1.5707963267948966)
# the Panda with an IMU link fixed to its base, rotated and offset (as a deck-mounted IMU)
PANDA = (
    example_urdf_path("panda")
    .read_text()
    .replace(
        "</robot>",
        '<link name="imu_link"/><joint name="imu_mount" type="fixed"><parent link="panda_link0"/>'
        f'<child link="imu_link"/><origin xyz="{" ".join(map(str, IMU_XYZ))}" '
        f'rpy="{" ".join(map(str, IMU_RPY))}"/></joint></robot>',
    )
)
MODEL = RobotModel.from_urdf(PANDA)
ARM = [f"panda_joint{i}" for i in range(1, 8)]
NAMES = list(MODEL.joint_names)
TIMEOUT = 0.5
ERROR, WARN, OK = 2, 1, 0
Q = np.array([0.3, -0.6, 0.2, -2.0, 0.1, 1.4, 0.7, 0.02, 0.02])
QD = np.array([0.2, -0.1, 0.3, 0.1, -0.2, 0.1, 0.05, 0.0, 0.0])


def rot(axis: int, a: float) -> np.ndarray:
    c, s = math.cos(a), math.sin(a)
    i, j = (axis + 1) % 3, (axis + 2) % 3
    r = np.eye(3)
    r[i, i], r[i, j], r[j, i], r[j, j] = c, -s, s, c
    return r


R_ROOT_IMU = rot(2, IMU_RPY[2]) @ rot(1, IMU_RPY[1]) @ rot(0, IMU_RPY[0])


def expected(gravity: np.ndarray) -> np.ndarray:
    return rnea(MODEL, Q, QD, np.zeros(MODEL.nv), gravity=tuple(gravity))[:7]


@pytest.fixture(scope="module")
def node(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("imu")
    params = {
        "robot_description": PANDA,
        "joints": ARM,
        "joint_states_timeout": TIMEOUT,
        "gravity_source": "imu_acceleration",
        "imu.cutoff_frequency": 0.0,
        "imu.timeout": TIMEOUT,
        **FRICTION_OFF,
    }
    proc = start_node(tmp, params)
    driver = Driver("imu_driver", dict(zip(MODEL.joint_names, MODEL.effort_limit, strict=True)))
    driver.imu = driver.node.create_publisher(Imu, f"{NODE}/imu", 10)  # type: ignore[attr-defined]
    driver.diagnostics_until(lambda s: s["model_loaded"] == "True", START_TIMEOUT)  # the node is up
    yield driver
    driver.close()
    output = stop(proc)
    assert "Traceback" not in output, output


def imu(d: Driver, frame: str = "imu_link", f=None, quat=None, omega=None, stamp_offset: float = 0.0) -> Imu:
    msg = Imu()
    msg.header.frame_id = frame
    now = d.node.get_clock().now().nanoseconds + int(stamp_offset * 1e9)
    msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(now, 1_000_000_000)
    if f is None:
        msg.linear_acceleration_covariance[0] = -1.0
    else:
        msg.linear_acceleration.x, msg.linear_acceleration.y, msg.linear_acceleration.z = map(float, f)
    if quat is None:
        msg.orientation_covariance[0] = -1.0
    else:
        o = msg.orientation
        o.x, o.y, o.z, o.w = map(float, quat)
    if omega is None:
        msg.angular_velocity_covariance[0] = -1.0
    else:
        msg.angular_velocity.x, msg.angular_velocity.y, msg.angular_velocity.z = map(float, omega)
    return msg


def command_with_imu(d: Driver, msg: Imu) -> np.ndarray | None:
    d.imu.publish(msg)
    d.spin(0.1)
    return d.command_for(d.state(NAMES, Q, QD))


def first_command(d: Driver, make_imu) -> np.ndarray:
    """Publish make_imu() then joint_states until a command comes (the node may be starting)."""
    for _ in range(60):
        got = command_with_imu(d, make_imu())
        if got is not None:
            return got
    raise AssertionError(f"no command: {d.latest_diagnostics()}")


def quat_xyzw(r: np.ndarray) -> np.ndarray:
    w = 0.5 * math.sqrt(max(1.0 + r[0, 0] + r[1, 1] + r[2, 2], 0.0))
    return np.array(
        [(r[2, 1] - r[1, 2]) / (4 * w), (r[0, 2] - r[2, 0]) / (4 * w), (r[1, 0] - r[0, 1]) / (4 * w), w]
    )


def test_acceleration_source_commands_rnea_with_the_rotated_effective_gravity(node: Driver) -> None:
    d = node
    # a base heaving up at 2.5 m/s² and rolled 6 degrees: g_eff = R_root_world g − a_root
    g_eff = rot(0, math.radians(6)).T @ np.array([0.0, 0.0, -9.81]) - np.array([0.3, 0.0, 2.5])
    f_imu = R_ROOT_IMU.T @ -g_eff  # what the accelerometer reads, imu axes (+up at rest)
    got = first_command(d, lambda: imu(d, f=f_imu))
    assert np.allclose(got, expected(g_eff), atol=1e-9)
    assert not np.allclose(got, expected(np.array([0.0, 0.0, -9.81])), atol=0.5)  # the IMU matters
    # a base spinning about root z at 2 rad/s: the IMU's centripetal acceleration is not the root's
    w_root = np.array([0.0, 0.0, 2.0])
    a_imu = np.cross(w_root, np.cross(w_root, IMU_XYZ))
    f_spin = R_ROOT_IMU.T @ (a_imu - np.array([0.0, 0.0, -9.81]))
    spinning = lambda: d.imu.publish(imu(d, f=f_spin, omega=R_ROOT_IMU.T @ w_root))  # noqa: E731
    got = d.command_after(spinning, d.state(NAMES, Q, QD), [expected(g_eff)])
    assert np.allclose(got, expected(np.array([0.0, 0.0, -9.81])), atol=1e-6)
    diag = d.latest_diagnostics()
    assert diag["gravity_source"] == "imu_acceleration" and diag["imu_link"] == "imu_link"


def test_orientation_source_uses_the_tilt_and_the_gravity_magnitude(node: Driver) -> None:
    d = node
    assert d.set_parameters({"gravity_source": "imu_orientation", "gravity": [0.0, 0.0, -9.8]})[0].successful
    try:
        r_world_root = rot(1, math.radians(-4)) @ rot(0, math.radians(7))
        quat = quat_xyzw(r_world_root @ R_ROOT_IMU)
        # the samples before carry no orientation: no command until this one is in
        got = d.command_after(lambda: d.imu.publish(imu(d, quat=quat)), d.state(NAMES, Q, QD))
        assert np.allclose(got, expected(r_world_root.T @ np.array([0.0, 0.0, -9.8])), atol=1e-9)
        # an acceleration-only IMU gives no orientation: rejected, with the reason
        d.imu.publish(imu(d, f=(0, 0, 9.81)))
        d.diagnostics_until(lambda s: "carries no orientation" in s.get("last_drop", ""))
    finally:
        assert d.set_parameters({"gravity_source": "imu_acceleration", "gravity": [0.0, 0.0, -9.81]})[
            0
        ].successful


def test_stale_imu_stops_the_commands_with_the_reason(node: Driver) -> None:
    d = node
    f_level = R_ROOT_IMU.T @ np.array([0.0, 0.0, 9.81])
    first_command(d, lambda: imu(d, f=f_level))
    d.spin(TIMEOUT + 0.2)  # the IMU falls silent: joint_states alone get no command
    assert d.no_command_for(d.state(NAMES, Q, QD))
    diag = d.diagnostics_until(lambda s: "no recent ~/imu" in s.get("last_drop", ""))
    assert int(diag["rejected.imu_stale"]) >= 1
    # old and future stamps are dropped as for joint_states, with the same hints
    d.imu.publish(imu(d, f=f_level, stamp_offset=-2 * TIMEOUT))
    d.diagnostics_until(lambda s: "s old (imu.timeout" in s.get("last_drop", ""))
    assert d.no_command_for(d.state(NAMES, Q, QD))
    d.imu.publish(imu(d, f=f_level, stamp_offset=-1.7e9))  # sim-time stamps, wall-clock node
    d.diagnostics_until(lambda s: "use_sim_time" in s.get("last_drop", ""))
    d.imu.publish(imu(d, f=f_level, stamp_offset=2 * TIMEOUT))
    diag = d.diagnostics_until(lambda s: "future (clock skew)" in s.get("last_drop", ""))
    assert int(diag["rejected.imu_clock_skew"]) >= 1
    # commands stay off long enough: ERROR naming the IMU, while joint_states keep coming
    diag = d.diagnostics_while_publishing(lambda: d.state(NAMES, Q, QD))
    diag = d.diagnostics_while_publishing(lambda: d.state(NAMES, Q, QD))
    assert diag["level"] == ERROR and "~/imu" in diag["message"], diag
    got = command_with_imu(d, imu(d, f=f_level))  # a fresh one: commands again
    assert got is not None and np.allclose(got, expected(np.array([0.0, 0.0, -9.81])), atol=1e-9)


def test_imu_frames_must_be_links_fixed_to_the_root(node: Driver) -> None:
    d = node
    f_level = R_ROOT_IMU.T @ np.array([0.0, 0.0, 9.81])
    d.imu.publish(imu(d, frame="deck_imu", f=f_level))
    diag = d.diagnostics_until(lambda s: "'deck_imu' is not a link" in s.get("last_drop", ""))
    assert "imu_link" in diag["last_drop"]
    assert int(diag["rejected.bad_imu"]) >= 1
    d.imu.publish(imu(d, frame="panda_link3", f=f_level))
    d.diagnostics_until(lambda s: "moves with joint 'panda_joint3'" in s.get("last_drop", ""))
    # on panda_link0 (the root itself) the specific force is in root axes
    got = command_with_imu(d, imu(d, frame="panda_link0", f=(0.0, 1.0, 9.81)))
    assert got is not None and np.allclose(got, expected(np.array([0.0, -1.0, -9.81])), atol=1e-9)


def test_parameter_source_ignores_the_imu(node: Driver) -> None:
    d = node
    assert d.set_parameters({"gravity_source": "parameter"})[0].successful
    try:
        d.spin(TIMEOUT + 0.1)  # no fresh IMU needed
        got = command_with_imu(d, imu(d, frame="panda_link0", f=(5.0, 0.0, 9.81)))
        assert got is not None and np.allclose(got, expected(np.array([0.0, 0.0, -9.81])), atol=1e-9)
        assert d.latest_diagnostics()["gravity"] == "0.0000 0.0000 -9.8100"
    finally:
        assert d.set_parameters({"gravity_source": "imu_acceleration"})[0].successful


def change_state(d: Driver, transition: int) -> bool:
    client = d.node.create_client(ChangeState, f"{NODE}/change_state")
    assert client.wait_for_service(20.0)
    try:
        for _ in range(4):  # a first call right after discovery can lose its answer: ask again
            future = client.call_async(ChangeState.Request(transition=Transition(id=transition)))
            end = time.monotonic() + 60.0
            while not future.done() and time.monotonic() < end:
                d.spin(0.01)
            if future.done():
                return future.result().success
            client.remove_pending_request(future)
        raise AssertionError("change_state did not answer")
    finally:
        d.node.destroy_client(client)


def test_lifecycle_hold_on_deactivate_uses_the_imu_gravity(tmp_path) -> None:
    params = {
        "robot_description": PANDA,
        "joints": ARM,
        "gravity_source": "imu_acceleration",
        "imu.cutoff_frequency": 0.0,
        "imu.timeout": TIMEOUT,
        "joint_states_timeout": TIMEOUT,
        **FRICTION_OFF,
    }
    proc = start_node(tmp_path, params, module="rnea_ros.nodes.inverse_dynamics.lifecycle")
    d = Driver("imu_lifecycle_driver", dict(zip(MODEL.joint_names, MODEL.effort_limit, strict=True)))
    imu_pub = d.node.create_publisher(Imu, f"{NODE}/imu", 10)
    try:
        assert change_state(d, Transition.TRANSITION_CONFIGURE)
        assert change_state(d, Transition.TRANSITION_ACTIVATE)
        g_eff = rot(1, math.radians(8)).T @ np.array([0.0, 0.0, -9.81]) - np.array([0.0, 0.0, 1.5])
        d.imu = imu_pub  # type: ignore[attr-defined]
        got = first_command(d, lambda: imu(d, f=R_ROOT_IMU.T @ -g_eff))
        assert np.allclose(got, expected(g_eff), atol=1e-9)
        d.settle()  # answers to earlier tries still on their way
        before = len(d.commands)
        assert change_state(d, Transition.TRANSITION_DEACTIVATE)
        hold = gravity_torques(MODEL, Q, gravity=tuple(g_eff))[:7]
        holds = lambda: [c for _, c in d.commands[before:] if np.allclose(c, hold, atol=1e-9)]  # noqa: E731
        seen = lambda: f"the hold {hold}; after deactivate: {d.commands[before:]}"  # noqa: E731
        d.until(lambda: holds(), 30.0, seen)
        d.settle()
        assert len(holds()) == 1  # (a late answer to an earlier state is no hold: it has the q̇ terms)
        assert not np.allclose(hold, gravity_torques(MODEL, Q)[:7], atol=0.5)  # not the parameter's
    finally:
        d.close()
        output = stop(proc)
        assert "Traceback" not in output, output
