"""The running node with `root_joint: floating` on solo12 (example-robot-data) standing on four
point contacts: its efforts against contact_inverse_dynamics on the core, its contact wrenches
against the floating-base rnea (they and gravity make the base rows vanish), the contact mask of
~/contact_state, the base state's staleness and frame rules (~/odometry, ~/imu), and an
infeasible stance (diagnostics say so, the command stays finite)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from geometry_msgs.msg import WrenchStamped
from nav_msgs.msg import Odometry
from sensor_msgs.msg import Imu
from std_msgs.msg import UInt8MultiArray
from visualization_msgs.msg import MarkerArray

from rnea_ros import RobotModel, link_pose, rnea
from rnea_ros.algorithms.contact_dynamics import Contact, ContactStatus, contact_inverse_dynamics
from rnea_ros.model.example_robots import example_urdf_path
from rnea_ros.testing.rosgraph import FRICTION_OFF, NODE, Driver, start_node, stop

XML = example_urdf_path("solo_description/robots/solo12.urdf").read_text()
FLOATING = RobotModel.from_urdf(XML, root_joint="floating")
NAMES = list(FLOATING.joint_names)
FEET = ["FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT"]
TIMEOUT = 0.5
Q = np.array([0.05, 0.8, -1.6, -0.05, 0.8, -1.6, 0.05, -0.8, 1.6, -0.05, -0.8, 1.6])
QD = np.array([0.1, -0.2, 0.3, 0.0, 0.1, -0.1, 0.2, 0.0, -0.3, 0.1, 0.1, 0.0])
POSITION = np.array([0.3, -0.1, 0.24])
YAW = 0.4
QUAT = (0.0, 0.0, math.sin(YAW / 2), math.cos(YAW / 2))  # (x, y, z, w): yawed 0.4 rad in odom
LINEAR, ANGULAR = np.array([0.05, -0.03, 0.01]), np.array([0.02, -0.01, 0.08])  # base axes


def expected(feet=FEET, quat=QUAT, angular=ANGULAR):
    q = np.concatenate([POSITION, quat, Q])
    v = np.concatenate([LINEAR, angular, QD])
    contacts = [Contact(foot, "point", 0.7, (0.0, 0.0, 1.0), min_normal_force=1.0) for foot in feet]
    return q, v, contact_inverse_dynamics(FLOATING, q, v, np.zeros(FLOATING.nv), contacts)


@pytest.fixture(scope="module")
def node(tmp_path_factory):
    params = {
        "robot_description": XML,
        "root_joint": "floating",
        "contacts.links": FEET,
        "contacts.friction": [0.7],
        "joint_states_timeout": TIMEOUT,
        "odometry.timeout": TIMEOUT,
        "imu.timeout": TIMEOUT,
        **FRICTION_OFF,
    }
    proc = start_node(tmp_path_factory.mktemp("floating"), params)
    d = Driver("floating_driver", dict(zip(NAMES, FLOATING.effort_limit, strict=True)))
    n = d.node
    d.odometry = n.create_publisher(Odometry, f"{NODE}/odometry", 10)  # type: ignore[attr-defined]
    d.imu = n.create_publisher(Imu, f"{NODE}/imu", 10)  # type: ignore[attr-defined]
    d.mask = n.create_publisher(UInt8MultiArray, f"{NODE}/contact_state", 10)  # type: ignore[attr-defined]
    d.wrenches = {foot: [] for foot in FEET}  # type: ignore[attr-defined]
    for foot in FEET:
        n.create_subscription(WrenchStamped, f"{NODE}/contact_wrenches/{foot}", d.wrenches[foot].append, 10)
    d.markers = []  # type: ignore[attr-defined]
    n.create_subscription(MarkerArray, f"{NODE}/contact_markers", d.markers.append, 10)
    yield d
    d.close()
    output = stop(proc)
    assert "Traceback" not in output, output


def odometry(d: Driver, child: str = "base_link", world: str = "odom", stamp_offset: float = 0.0) -> Odometry:
    msg = Odometry()
    msg.header.frame_id, msg.child_frame_id = world, child
    now = d.node.get_clock().now().nanoseconds + int(stamp_offset * 1e9)
    msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(now, 1_000_000_000)
    p, o = msg.pose.pose.position, msg.pose.pose.orientation
    p.x, p.y, p.z = map(float, POSITION)
    o.x, o.y, o.z, o.w = QUAT
    t = msg.twist.twist
    t.linear.x, t.linear.y, t.linear.z = map(float, LINEAR)
    t.angular.x, t.angular.y, t.angular.z = map(float, ANGULAR)
    return msg


def command(d: Driver, odom: Odometry | None = None) -> np.ndarray | None:
    d.odometry.publish(odometry(d) if odom is None else odom)
    d.spin(0.05)
    return d.command_for(d.state(NAMES, Q, QD))


def first_command(d: Driver) -> np.ndarray:
    for _ in range(80):  # the node may be starting
        got = command(d)
        if got is not None:
            return got
    raise AssertionError(f"no command: {d.latest_diagnostics()}")


def statuses(d: Driver, timeout: float = 3.0) -> dict[str, dict]:
    """Every status of the next /diagnostics, by the part of its name after ': '."""
    d.diagnostics.clear()
    d.spin(0.05)
    d.diagnostics.clear()
    while not d.diagnostics and timeout > 0:
        d.spin(0.05)
        timeout -= 0.05
    assert d.diagnostics, "no /diagnostics"
    out = {}
    for s in d.diagnostics[-1].status:
        level = int.from_bytes(s.level, "little") if isinstance(s.level, bytes) else s.level
        out[s.name.split(": ")[-1]] = {
            "level": level,
            "message": s.message,
            **{kv.key: kv.value for kv in s.values},
        }
    return out


def latest_wrenches(d: Driver, stamp) -> dict[str, np.ndarray]:
    """Each foot's published wrench (link on environment, link axes) for the cycle stamped `stamp`."""
    out = {}
    for _ in range(100):
        d.spin(0.01)
        for foot in FEET:
            for msg in reversed(d.wrenches[foot][-10:]):
                if (msg.header.stamp.sec, msg.header.stamp.nanosec) == stamp and foot not in out:
                    assert msg.header.frame_id == foot
                    f, t = msg.wrench.force, msg.wrench.torque
                    out[foot] = np.array([f.x, f.y, f.z, t.x, t.y, t.z])
        if len(out) == len(FEET):
            return out
    raise AssertionError(f"contact wrenches missing: {sorted(out)}")


def test_standing_efforts_are_contact_inverse_dynamics_and_wrenches_balance_the_base(node: Driver) -> None:
    d = node
    got = first_command(d)
    q, v, reference = expected()
    assert reference.status is ContactStatus.OK
    assert np.allclose(got, reference.tau, rtol=0, atol=1e-9)
    # the published wrenches (each foot's on the ground, its own axes) with gravity, Coriolis and
    # the joints' efforts: the floating-base rnea's base rows vanish, its joint rows are the command
    stamp = (d.joint_efforts[-1].header.stamp.sec, d.joint_efforts[-1].header.stamp.nanosec)
    published = latest_wrenches(d, stamp)
    world = {}
    for foot, w in published.items():
        rot = link_pose(FLOATING, q, foot)[0]
        world[foot] = np.concatenate([rot @ w[:3], rot @ w[3:]])
        assert np.allclose(w[3:], 0.0)  # point contacts: no moment
        assert w[:3] @ (rot.T @ np.array([0.0, 0.0, 1.0])) < -1.0  # feet push down on the ground
    tau = rnea(FLOATING, q, v, np.zeros(FLOATING.nv), wrenches=world)
    assert np.abs(tau[:6]).max() < 1e-8, tau[:6]
    assert np.allclose(tau[6:], got, rtol=0, atol=1e-8)
    total = sum(world.values())
    weight = np.linalg.norm(rnea(FLOATING, q, np.zeros(18), np.zeros(18))[:3])  # m g
    assert abs(total[2] + weight) < 0.05 * weight  # the feet press with about the weight
    for _ in range(30):  # the node publishes markers once it has seen this subscriber: more cycles
        markers = [m for m in d.markers if len(m.markers) == 4]
        if markers:
            break
        command(d)
    assert markers and all(m.header.frame_id == f for m, f in zip(markers[-1].markers, FEET, strict=True))
    diag = statuses(d)
    assert diag["contacts"]["level"] == 0 and diag["contacts"]["contact_mask"] == "1111"
    assert diag["inverse dynamics"]["base_world_frame"] == "odom"


def test_contact_mask_takes_effect(node: Driver) -> None:
    d = node
    first_command(d)
    d.mask.publish(UInt8MultiArray(data=[1, 1, 1, 0]))  # the right hind foot lifts off
    d.until(lambda: statuses(d)["contacts"]["contact_mask"] == "1110", what="the mask 1110 taken")
    try:
        got = command(d)
        _, _, three = expected(FEET[:3])
        assert got is not None and np.allclose(got, three.tau, rtol=0, atol=1e-9)
        _, _, four = expected()
        assert not np.allclose(got, four.tau, atol=1e-3)
        stamp = (d.joint_efforts[-1].header.stamp.sec, d.joint_efforts[-1].header.stamp.nanosec)
        assert not latest_wrenches(d, stamp)["HR_FOOT"].any()
        assert statuses(d)["contacts"]["contact_mask"] == "1110"
        d.mask.publish(UInt8MultiArray(data=[1, 1]))  # wrong length: dropped, the mask kept
        wrong = "~/contact_state has 2 values, contacts.links has 4"
        d.diagnostics_until(lambda s: wrong in s.get("last_drop", ""))
        got = command(d)
        assert got is not None and np.allclose(got, three.tau, rtol=0, atol=1e-9)
    finally:
        d.mask.publish(UInt8MultiArray(data=[1, 1, 1, 1]))
        d.until(lambda: statuses(d)["contacts"]["contact_mask"] == "1111", what="the mask 1111 taken")
    got = command(d)
    assert got is not None and np.allclose(got, expected()[2].tau, rtol=0, atol=1e-9)


def test_stale_odometry_gives_no_command(node: Driver) -> None:
    d = node
    first_command(d)
    d.spin(TIMEOUT + 0.2)  # odometry falls silent: joint_states alone get no command
    assert d.no_command_for(d.state(NAMES, Q, QD))
    diag = d.diagnostics_until(lambda s: "no recent ~/odometry" in s.get("last_drop", ""))
    assert int(diag["rejected.odometry_stale"]) >= 1
    d.odometry.publish(odometry(d, stamp_offset=-2 * TIMEOUT))  # an old one is dropped on arrival
    d.diagnostics_until(lambda s: "s old (odometry.timeout" in s.get("last_drop", ""))
    assert d.no_command_for(d.state(NAMES, Q, QD))
    d.odometry.publish(odometry(d, stamp_offset=-1.7e9))  # sim-time stamps, wall-clock node
    d.diagnostics_until(lambda s: "use_sim_time" in s.get("last_drop", ""))
    assert command(d) is not None  # a fresh one: commands again


def test_bad_frames_are_refused_by_name(node: Driver) -> None:
    d = node
    first_command(d)
    d.spin(TIMEOUT + 0.1)
    got = command(d, odometry(d, child="FL_UPPER_LEG"))
    assert got is None
    diag = d.latest_diagnostics()
    assert "child_frame_id 'FL_UPPER_LEG' is not the model's root link 'base_link'" in diag["last_drop"]
    assert int(diag["rejected.bad_odometry"]) >= 1
    assert command(d, odometry(d, world="")) is None
    assert "header.frame_id is empty" in d.latest_diagnostics()["last_drop"]
    assert command(d) is not None


def test_imu_gives_the_base_orientation_and_angular_velocity(node: Driver) -> None:
    d = node
    assert d.set_parameters({"base.source": "odometry_imu"})[0].successful
    try:
        roll = 0.1  # the IMU on base_link: rolled 0.1 rad in the world, spinning about z
        quat = (math.sin(roll / 2), 0.0, 0.0, math.cos(roll / 2))
        omega = np.array([0.0, 0.05, -0.1])
        imu = Imu()
        imu.header.frame_id = "base_link"
        imu.orientation.x, imu.orientation.y, imu.orientation.z, imu.orientation.w = quat
        imu.angular_velocity.x, imu.angular_velocity.y, imu.angular_velocity.z = map(float, omega)
        imu.linear_acceleration_covariance[0] = -1.0
        got = None
        for _ in range(20):
            now = d.node.get_clock().now().nanoseconds
            imu.header.stamp.sec, imu.header.stamp.nanosec = divmod(now, 1_000_000_000)
            d.imu.publish(imu)
            got = command(d)
            if got is not None:
                break
        _, _, reference = expected(quat=quat, angular=omega)
        assert got is not None and np.allclose(got, reference.tau, rtol=0, atol=1e-9)
        assert not np.allclose(got, expected()[2].tau, atol=1e-3)
        assert d.latest_diagnostics()["base_imu_link"] == "base_link"
        imu.header.frame_id = "FL_LOWER_LEG"  # moves with a joint: not a mount for the base
        now = d.node.get_clock().now().nanoseconds
        imu.header.stamp.sec, imu.header.stamp.nanosec = divmod(now, 1_000_000_000)
        d.imu.publish(imu)
        d.diagnostics_until(lambda s: "moves with joint" in s.get("last_drop", ""))
    finally:
        assert d.set_parameters({"base.source": "odometry"})[0].successful


def test_infeasible_stance_is_reported_and_the_command_stays_finite(node: Driver) -> None:
    d = node
    first_command(d)
    assert d.set_parameters({"contacts.links": ["FL_FOOT"]})[0].successful  # one point: no moment
    try:
        got = command(d)
        _, _, one = expected(["FL_FOOT"])
        assert one.status is ContactStatus.INFEASIBLE
        assert got is not None and np.all(np.isfinite(got))
        assert np.allclose(got, one.tau, rtol=0, atol=1e-9)  # the least-violating forces
        for _ in range(3):
            diag = statuses(d)["contacts"]
            if diag["level"] == 1:
                break
            command(d)
        assert diag["level"] == 1 and "no admissible contact force" in diag["message"], diag
        assert diag["contact_status"] == "infeasible" and float(diag["base_residual_max"]) > 1.0
        # contacts.links that are not links: refused by name, the contacts kept
        result = d.set_parameters({"contacts.links": ["FL_FOOT", "NOSE"]})[0]
        assert not result.successful and "'NOSE' is not a link" in result.reason
    finally:
        assert d.set_parameters({"contacts.links": FEET})[0].successful
    got = command(d)
    assert got is not None and np.allclose(got, expected()[2].tau, rtol=0, atol=1e-9)


def test_absurd_base_inputs_are_refused_naming_the_field(node: Driver) -> None:
    """~/odometry and ~/imu with absurd but finite numbers (a twist of 1e150 once saturated all
    12 joints; a base IMU rate of 1e308 was blamed on joint_states; a quaternion of norm 2 or 1e-8
    was normalised) are refused under bad_odometry or bad_imu naming the field, and the next
    command, on the last good base state, is contact_inverse_dynamics' (1e-9)."""
    d = node
    first_command(d)
    want = expected()[2].tau

    def absurd(**fields) -> Odometry:
        msg = odometry(d)
        p, o, t = msg.pose.pose.position, msg.pose.pose.orientation, msg.twist.twist
        for name, value in fields.items():
            where, axis = name.split("_")
            target = {"position": p, "orientation": o, "linear": t.linear, "angular": t.angular}[where]
            setattr(target, axis, float(value))
        return msg

    cases = [  # stamped when sent
        ({"linear_x": 1e150}, "twist.linear"),
        ({"angular_z": -1e308}, "twist.angular"),
        ({"position_z": 1e308}, "pose.position"),
        ({"orientation_x": 0, "orientation_y": 1e-8, "orientation_z": 0, "orientation_w": 0}, "not 1"),
        ({"orientation_w": 2.0 * QUAT[3], "orientation_z": 2.0 * QUAT[2]}, "has norm 2"),
    ]
    for fields, said in cases:
        d.odometry.publish(odometry(d))
        d.spin(0.02)
        d.odometry.publish(absurd(**fields))
        d.spin(0.05)
        got = d.command_for(d.state(NAMES, Q, QD))  # on the last good odometry, still fresh
        assert got is not None and np.allclose(got, want, rtol=0, atol=1e-9), said
        diag = d.latest_diagnostics()
        assert "~/odometry" in diag["last_drop"] and said in diag["last_drop"], (said, diag["last_drop"])
        assert int(diag["rejected.bad_odometry"]) >= 1
    assert d.set_parameters({"base.source": "odometry_imu"})[0].successful
    try:
        imu = Imu()
        imu.header.frame_id = "base_link"
        imu.orientation.x, imu.orientation.y, imu.orientation.z, imu.orientation.w = QUAT
        imu.angular_velocity.x, imu.angular_velocity.y, imu.angular_velocity.z = map(float, ANGULAR)
        imu.linear_acceleration_covariance[0] = -1.0

        def send(quat=QUAT, omega=ANGULAR) -> None:
            imu.orientation.x, imu.orientation.y, imu.orientation.z, imu.orientation.w = map(float, quat)
            imu.angular_velocity.x, imu.angular_velocity.y, imu.angular_velocity.z = map(float, omega)
            now = d.node.get_clock().now().nanoseconds
            imu.header.stamp.sec, imu.header.stamp.nanosec = divmod(now, 1_000_000_000)
            d.imu.publish(imu)

        for _ in range(20):
            send()
            if command(d) is not None:
                break
        for quat, omega, said in (
            (QUAT, [0.0, 1e308, 0.0], "angular_velocity"),
            ((0.0, 1e-8, 0.0, 0.0), ANGULAR, "not 1 within 0.001"),
            ((0.0, 0.0, 0.0, 2.0), ANGULAR, "not 1 within 0.001"),
        ):
            send()
            d.odometry.publish(odometry(d))
            d.spin(0.02)
            send(quat, omega)
            d.spin(0.05)
            got = d.command_for(d.state(NAMES, Q, QD))  # on the last good IMU, still fresh
            assert got is not None and np.allclose(got, want, rtol=0, atol=1e-9), said
            diag = d.latest_diagnostics()
            assert "~/imu" in diag["last_drop"] and said in diag["last_drop"], (said, diag["last_drop"])
            assert int(diag["rejected.bad_imu"]) >= 1
    finally:
        assert d.set_parameters({"base.source": "odometry"})[0].successful
