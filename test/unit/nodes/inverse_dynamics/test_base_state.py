"""The floating base's state from nav_msgs/Odometry and sensor_msgs/Imu messages (base_state.py, no
ROS process): the free-flyer and planar q, v in Pinocchio's layout, a base-mounted IMU rotated on
its link, a URDF floating joint with an origin, and the staleness and frame rules."""

from __future__ import annotations

import math

import numpy as np
import pytest
from nav_msgs.msg import Odometry
from sensor_msgs.msg import Imu

from rnea_ros import RobotModel, base_placement
from rnea_ros.model.example_robots import example_urdf_path
from rnea_ros.nodes.inverse_dynamics.base_state import BaseDrop, BaseStateInput

XML = example_urdf_path("solo_description/robots/solo12.urdf").read_text()
JOINTS = RobotModel.from_urdf(XML, root_joint="fixed")
PARAMS = {"base.source": "odometry", "odometry.timeout": 0.1, "imu.timeout": 0.1}
NOW = 1_000_000_000_000


def rot_z(a: float) -> np.ndarray:
    c, s = math.cos(a), math.sin(a)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def odometry(yaw: float, child: str = "base_link") -> Odometry:
    msg = Odometry()
    msg.header.frame_id, msg.child_frame_id = "odom", child
    p, o, t = msg.pose.pose.position, msg.pose.pose.orientation, msg.twist.twist
    p.x, p.y, p.z = 1.0, -2.0, 0.3
    o.z, o.w = math.sin(yaw / 2), math.cos(yaw / 2)
    t.linear.x, t.linear.y, t.linear.z = 0.4, -0.1, 0.05
    t.angular.x, t.angular.y, t.angular.z = 0.01, 0.02, 0.3
    return msg


def test_free_flyer_and_planar_layouts() -> None:
    base = BaseStateInput()
    base.receive("odometry", JOINTS, PARAMS, odometry(0.7), NOW, NOW)
    floating = RobotModel.from_urdf(XML, root_joint="floating")
    q, v = base.state(floating, PARAMS, NOW)
    assert np.allclose(q, [1.0, -2.0, 0.3, 0.0, 0.0, math.sin(0.35), math.cos(0.35)], atol=1e-15)
    assert np.allclose(v, [0.4, -0.1, 0.05, 0.01, 0.02, 0.3], atol=0)
    rot, pos = base_placement(floating, np.concatenate([q, np.zeros(12)]))
    assert np.allclose(rot, rot_z(0.7), atol=1e-12) and np.allclose(pos, [1.0, -2.0, 0.3])
    planar = RobotModel.from_urdf(XML, root_joint="planar")
    q, v = base.state(planar, PARAMS, NOW)
    assert np.allclose(q, [1.0, -2.0, math.cos(0.7), math.sin(0.7)], atol=1e-12)
    assert np.allclose(v, [0.4, -0.1, 0.3], atol=0)


def test_urdf_floating_joint_origin_is_taken_out() -> None:
    # a URDF whose own floating joint has an origin: the odometry pose is the base's in the world
    xml = XML.replace(
        "</robot>",
        '<link name="world"/><joint name="root" type="floating"><parent link="world"/>'
        '<child link="base_link"/><origin xyz="0.5 0 0.1" rpy="0 0 0.4"/></joint></robot>',
    )
    floating = RobotModel.from_urdf(xml)
    assert floating.root_joint == "floating"
    base = BaseStateInput()
    base.receive("odometry", RobotModel.from_urdf(xml, root_joint="fixed"), PARAMS, odometry(1.1), NOW, NOW)
    q, _ = base.state(floating, PARAMS, NOW)
    rot, pos = base_placement(floating, np.concatenate([q, np.zeros(12)]))
    assert np.allclose(rot, rot_z(1.1), atol=1e-12) and np.allclose(pos, [1.0, -2.0, 0.3], atol=1e-12)


def test_imu_on_a_rotated_mount_gives_the_base_orientation_and_rate() -> None:
    xml = XML.replace(
        "</robot>",
        '<link name="imu"/><joint name="imu_mount" type="fixed"><parent link="base_link"/>'
        '<child link="imu"/><origin xyz="0.1 0 0.02" rpy="0 0 1.5707963267948966"/></joint></robot>',
    )
    joints = RobotModel.from_urdf(xml, root_joint="fixed")
    floating = RobotModel.from_urdf(xml, root_joint="floating")
    params = {**PARAMS, "base.source": "imu"}
    msg = Imu()
    msg.header.frame_id = "imu"
    r_world_imu = rot_z(0.3) @ rot_z(math.pi / 2)  # the base yawed 0.3 rad
    msg.orientation.z, msg.orientation.w = (
        math.sin((0.3 + math.pi / 2) / 2),
        math.cos((0.3 + math.pi / 2) / 2),
    )
    omega_base = np.array([0.1, -0.2, 0.5])
    w = rot_z(math.pi / 2).T @ omega_base  # the gyro reads in its own axes
    msg.angular_velocity.x, msg.angular_velocity.y, msg.angular_velocity.z = map(float, w)
    base = BaseStateInput()
    base.receive("imu", joints, params, msg, NOW, NOW)
    q, v = base.state(floating, params, NOW)
    rot, pos = base_placement(floating, np.concatenate([q, np.zeros(12)]))
    assert np.allclose(rot, r_world_imu @ rot_z(math.pi / 2).T, atol=1e-12) and not pos.any()
    assert np.allclose(v, [0.0, 0.0, 0.0, *omega_base], atol=1e-12)


def test_stale_and_bad_frames_are_refused_by_name() -> None:
    floating = RobotModel.from_urdf(XML, root_joint="floating")
    base = BaseStateInput()
    with pytest.raises(BaseDrop, match="no ~/odometry yet"):
        base.state(floating, PARAMS, NOW)
    with pytest.raises(BaseDrop, match="child_frame_id 'FL_FOOT' is not the model's root link 'base_link'"):
        base.receive("odometry", JOINTS, PARAMS, odometry(0.0, "FL_FOOT"), NOW, NOW)
    with pytest.raises(BaseDrop, match="0.200 s old") as old:
        base.receive("odometry", JOINTS, PARAMS, odometry(0.0), NOW - 200_000_000, NOW)
    assert old.value.reason == "odometry_stale"
    base.receive("odometry", JOINTS, PARAMS, odometry(0.0), NOW, NOW)
    base.state(floating, PARAMS, NOW + 50_000_000)
    with pytest.raises(BaseDrop, match="no recent ~/odometry") as stale:
        base.state(floating, PARAMS, NOW + 150_000_000)
    assert stale.value.reason == "odometry_stale"
