"""The running node with `root_joint: planar`: a Panda on a mobile base (x, y, yaw), no contacts.
The base's motion comes from ~/odometry (x, y and yaw of the pose, v_x, v_y, ω_z of the twist in
the base's axes); the command for the arm's joints must be Pinocchio's rnea on the same URDF with
a planar root joint (`pin.JointModelPlanar`, configuration (x, y, cos ψ, sin ψ), velocity in the
base's axes), base acceleration zero, actuated rows. A turning base adds centrifugal and Coriolis
torques that the fixed-base command has not: the difference is checked to be large, so that
ignoring the base's motion cannot pass."""

from __future__ import annotations

import math
import time

import numpy as np
import pinocchio as pin
import pytest
from nav_msgs.msg import Odometry

from rnea_ros import RobotModel, rnea
from rnea_ros.model.example_robots import example_urdf_path
from rnea_ros.testing.rosgraph import FRICTION_OFF, NODE, Driver, start_node, stop

URDF_PATH = example_urdf_path("panda")
XML = URDF_PATH.read_text()
FIXED = RobotModel.from_urdf(XML, tip_link="panda_hand")
NAMES = list(FIXED.joint_names)
Q = np.array([0.3, -0.5, 0.2, -2.0, 0.4, 1.6, 0.7])
QD = np.array([0.4, -0.3, 0.5, 0.2, -0.6, 0.3, 0.1])
X, Y, YAW = 1.2, -0.7, 0.9
V_BASE = np.array([0.6, -0.2, 1.5])  # v_x, v_y (base axes, m/s), ω_z (rad/s)


def pinocchio_planar() -> tuple[pin.Model, list[int]]:
    """Pinocchio's model of the URDF with a planar root, and the velocity index of each of NAMES."""
    model = pin.buildModelFromUrdf(str(URDF_PATH), pin.JointModelPlanar())
    return model, [model.joints[model.getJointId(name)].idx_v for name in NAMES]


def expected(v_base: np.ndarray = V_BASE) -> np.ndarray:
    """The arm's torques on the moving base: rnea with the base's acceleration zero."""
    model, idx_v = pinocchio_planar()
    q = pin.neutral(model)
    q[:4] = X, Y, math.cos(YAW), math.sin(YAW)
    v = np.zeros(model.nv)
    v[:3] = v_base
    for name, value, rate in zip(NAMES, Q, QD, strict=True):
        joint = model.joints[model.getJointId(name)]
        q[joint.idx_q], v[joint.idx_v] = value, rate
    tau = pin.rnea(model, model.createData(), q, v, np.zeros(model.nv))
    return tau[idx_v]


@pytest.fixture(scope="module")
def node(tmp_path_factory):
    params = {
        "robot_description": XML,
        "tip_link": "panda_hand",
        "root_joint": "planar",
        "odometry.timeout": 0.5,
        **FRICTION_OFF,
    }
    proc = start_node(tmp_path_factory.mktemp("planar"), params)
    d = Driver("planar_driver", dict(zip(NAMES, FIXED.effort_limit, strict=True)))
    d.odometry = d.node.create_publisher(Odometry, f"{NODE}/odometry", 10)  # type: ignore[attr-defined]
    d.bases = []  # type: ignore[attr-defined]  # the base twists sent so far (command())
    yield d
    d.close()
    output = stop(proc)
    assert "Traceback" not in output, output


def odometry(d: Driver, v_base: np.ndarray) -> Odometry:
    msg = Odometry()
    msg.header.frame_id, msg.child_frame_id = "odom", "panda_link0"
    now = d.node.get_clock().now().nanoseconds
    msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(now, 1_000_000_000)
    p, o = msg.pose.pose.position, msg.pose.pose.orientation
    p.x, p.y, p.z = X, Y, 0.3  # z, roll and pitch are not the planar root's
    o.z, o.w = math.sin(YAW / 2), math.cos(YAW / 2)
    t = msg.twist.twist
    t.linear.x, t.linear.y, t.linear.z = float(v_base[0]), float(v_base[1]), 0.05
    t.angular.x, t.angular.y, t.angular.z = 0.02, -0.01, float(v_base[2])
    return msg


def command(d: Driver, v_base: np.ndarray) -> np.ndarray:
    """The command for (Q, QD) once the node has the odometry of `v_base` (Driver.command_after:
    the odometry sent before may still be the node's)."""
    earlier = [expected(v) for v in d.bases if not np.array_equal(v, v_base)]  # type: ignore[attr-defined]
    d.bases.append(v_base)  # type: ignore[attr-defined]
    return d.command_after(lambda: d.odometry.publish(odometry(d, v_base)), d.state(NAMES, Q, QD), earlier)


@pytest.mark.parametrize("v_base", [V_BASE, np.zeros(3)], ids=["turning", "still"])
def test_arm_efforts_on_a_moving_planar_base_are_pinocchios_rnea(node: Driver, v_base: np.ndarray) -> None:
    got = command(node, v_base)
    want = expected(v_base)
    assert np.abs(got - want).max() < 1e-9, (got, want)
    on_fixed_base = rnea(FIXED, Q, QD, np.zeros(FIXED.nv))
    if v_base.any():  # the base's motion is in the command, by far more than the tolerance
        assert np.abs(want - on_fixed_base).max() > 0.1
    else:  # a base at rest: yaw and position change nothing, the fixed-base arm's torques
        assert np.abs(got - on_fixed_base).max() < 1e-9


def test_without_contacts_the_drive_carries_the_base_and_nothing_warns(node: Driver) -> None:
    """The docs' mobile manipulator (no contacts): the commands above are right, and /diagnostics
    says so: the contacts status is OK, the base rows (x, y, yaw) carried by the base's drive, with
    the wrench it carries as base_residual_max; not WARN 'no admissible contact force'."""
    command(node, V_BASE)
    node.diagnostics.clear()
    contacts = None
    end = time.monotonic() + 20.0
    while contacts is None and time.monotonic() < end:  # a period with cycles in it
        node.odometry.publish(odometry(node, V_BASE))
        node.joint_states.publish(node.state(NAMES, Q, QD))
        node.spin(0.02)
        for msg in node.diagnostics:
            for s in msg.status:
                values = {kv.key: kv.value for kv in s.values}
                if s.name.endswith(": contacts") and values.get("contact_status") not in (None, "none"):
                    contacts = (s, values)
    assert contacts is not None, "no contacts status with cycles in its period"
    status, values = contacts
    level = int.from_bytes(status.level, "little") if isinstance(status.level, bytes) else status.level
    assert level == 0 and "drive (wheels) carries the base rows" in status.message, status
    assert values["infeasible_cycles"] == "0" and values["contact_status"] == "drive carries the base"
    assert float(values["base_residual_max"]) > 1.0  # the turning base's wrench: the drive's
