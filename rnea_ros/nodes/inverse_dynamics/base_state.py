"""The state of a floating (or planar) base from standard messages, for `root_joint: floating |
planar`: the root joint's configuration and velocity in Pinocchio's layout
(rnea_ros.algorithms.configuration; docs/floating_base.md).

~/odometry (nav_msgs/Odometry), as REP 105 and the message define it: `pose` is the pose of
`child_frame_id` in `header.frame_id` (the world frame of the dynamics: odom or map, z up, the
frame of the `gravity` parameter and of contacts.normal), `twist` is the velocity of
`child_frame_id` in its own axes. `child_frame_id` must be the model's root link (the base link
of the URDF, e.g. base_link); `header.frame_id` must not be empty. Then
    floating: q_base = (position, orientation (x, y, z, w)), v_base = (twist.linear, twist.angular);
    planar:   q_base = (x, y, cos ψ, sin ψ), ψ the yaw of the orientation, v_base = (v_x, v_y, ω_z)
    (the planar root ignores z, roll and pitch).
~/imu (sensor_msgs/Imu), with base.source odometry_imu or imu: its frame_id names a URDF link fixed
to the base (as for gravity_source; imu_gravity.py and rnea_ros.estimation.base_gravity.imu_mount),
its orientation is that link's in the world, its angular velocity in its own axes; the base's
follow from the link's fixed mount: R_world_base = R_world_imu R_base_imuᵀ,
ω_base = R_base_imu ω_imu. It must carry both (covariance[0] = -1 marks a field as absent).

Staleness, clock and diagnostics as for joint_states: a message older than its timeout
(odometry.timeout, imu.timeout; 0: no check) or stamped that far ahead is dropped
(odometry_stale, odometry_clock_skew, imu_stale, imu_clock_skew, with the use_sim_time hint when
the clocks are far apart), and while the newest accepted one is older than the timeout at a cycle
no command goes out (odometry_stale, imu_stale; no_odometry, no_imu before the first). Stamp 0
counts as now. A message with a bad frame, a non-finite or implausible number is dropped
(bad_odometry, bad_imu) with a text naming the frame or field and the bound: an orientation whose
norm is not 1 within 1e-3, a position farther than MAX_BASE_DISTANCE from the world frame's
origin, a linear velocity beyond MAX_BASE_SPEED, an angular velocity beyond 2000 °/s (the bounds
of rnea_ros.estimation.base_gravity).
"""

from __future__ import annotations

import math

import numpy as np
from diagnostic_msgs.msg import KeyValue
from nav_msgs.msg import Odometry
from sensor_msgs.msg import Imu

from rnea_ros.algorithms.configuration import base_placement, neutral
from rnea_ros.errors import RneaError
from rnea_ros.estimation.base_gravity import (
    MAX_ANGULAR_VELOCITY,
    ImuMount,
    check_vector,
    imu_mount,
    quaternion_matrix,
    unit_quaternion,
)
from rnea_ros.model.robot_model import RobotModel

CLOCK_MIXUP = 1e6  # s: stamps this far from the node clock come from another clock source
SOURCES = ("odometry", "odometry_imu", "imu")
MAX_BASE_DISTANCE = 1e6  # m: a base farther from the origin of odom or map is a corrupt pose
MAX_BASE_SPEED = 100.0  # m/s: 360 km/h, beyond any legged or wheeled robot


class BaseDrop(RneaError):
    """A message or cycle that gives no base state; `reason` is the diagnostics counter."""

    def __init__(self, reason: str, text: str) -> None:
        super().__init__(text)
        self.reason = reason


def age_drop(topic: str, prefix: str, age: float, timeout: float, parameter: str) -> BaseDrop:
    """The drop of a message `age` s old (negative: from the future) outside its timeout."""
    hint = ""
    if abs(age) > CLOCK_MIXUP:
        hint = (
            f"; stamps and this node's clock are {abs(age):.2g} s apart: is use_sim_time set on one "
            "side only (simulated vs wall-clock time)?"
        )
    if age > 0:
        return BaseDrop(f"{prefix}_stale", f"{topic} is {age:.3f} s old ({parameter} {timeout} s){hint}")
    return BaseDrop(
        f"{prefix}_clock_skew", f"{topic} is stamped {-age:.3f} s in the future (clock skew){hint}"
    )


def _quaternion_of(r: np.ndarray) -> tuple[float, float, float, float]:
    """(x, y, z, w) of a rotation matrix (Shepperd's method, w >= 0)."""
    tr = r[0, 0] + r[1, 1] + r[2, 2]
    if tr > 0.0:
        s = 2.0 * math.sqrt(tr + 1.0)
        x, y, z, w = (r[2, 1] - r[1, 2]) / s, (r[0, 2] - r[2, 0]) / s, (r[1, 0] - r[0, 1]) / s, 0.25 * s
    elif r[0, 0] > r[1, 1] and r[0, 0] > r[2, 2]:
        s = 2.0 * math.sqrt(1.0 + r[0, 0] - r[1, 1] - r[2, 2])
        x, y, z, w = 0.25 * s, (r[0, 1] + r[1, 0]) / s, (r[0, 2] + r[2, 0]) / s, (r[2, 1] - r[1, 2]) / s
    elif r[1, 1] > r[2, 2]:
        s = 2.0 * math.sqrt(1.0 + r[1, 1] - r[0, 0] - r[2, 2])
        x, y, z, w = (r[0, 1] + r[1, 0]) / s, 0.25 * s, (r[1, 2] + r[2, 1]) / s, (r[0, 2] - r[2, 0]) / s
    else:
        s = 2.0 * math.sqrt(1.0 + r[2, 2] - r[0, 0] - r[1, 1])
        x, y, z, w = (r[0, 2] + r[2, 0]) / s, (r[1, 2] + r[2, 1]) / s, 0.25 * s, (r[1, 0] - r[0, 1]) / s
    if w < 0.0:
        x, y, z, w = -x, -y, -z, -w
    return float(x), float(y), float(z), float(w)


class BaseStateInput:
    """The newest base pose and twist from ~/odometry and ~/imu (one per node)."""

    def __init__(self) -> None:
        # ~/odometry: position (3), orientation (x, y, z, w), linear and angular velocity (base axes)
        self.odometry: tuple[np.ndarray, tuple[float, ...], np.ndarray, np.ndarray] | None = None
        self.odometry_ns = 0
        self.world_frame = ""
        # ~/imu: the base's orientation (x, y, z, w) in the world and angular velocity (base axes)
        self.imu: tuple[tuple[float, ...], np.ndarray] | None = None
        self.imu_ns = 0
        self.imu_link = ""
        self._mount: tuple[RobotModel, str, ImuMount] | None = None
        self.rejected = {"odometry": "", "imu": ""}  # why the last message was dropped ("" if kept)

    @staticmethod
    def needs(params: dict) -> tuple[bool, bool]:
        """(odometry needed, imu needed) by base.source."""
        source = params["base.source"]
        return source != "imu", source != "odometry"

    def _fresh(self, stamp: int, now_ns: int, timeout: float, topic: str, prefix: str, parameter: str) -> int:
        stamp = stamp or now_ns
        age = (now_ns - stamp) * 1e-9
        if timeout > 0 and not -timeout <= age <= timeout:
            raise age_drop(topic, prefix, age, timeout, parameter)
        return stamp

    def receive(
        self, topic: str, model: RobotModel, params: dict, msg: Odometry | Imu, stamp: int, now_ns: int
    ) -> None:
        """receive_odometry (topic "odometry") or receive_imu ("imu"), remembering why a message
        was dropped: the no-command text of a later cycle names it."""
        try:
            if topic == "odometry":
                self.receive_odometry(model, params, msg, stamp, now_ns)
            else:
                self.receive_imu(model, params, msg, stamp, now_ns)
        except BaseDrop as exc:
            self.rejected[topic] = str(exc)
            raise
        self.rejected[topic] = ""

    def receive_odometry(
        self, model: RobotModel, params: dict, msg: Odometry, stamp: int, now_ns: int
    ) -> None:
        """Check and keep one ~/odometry message (`model`: the joints' fixed-base model, whose
        root link is the base); BaseDrop saying why not."""
        stamp = self._fresh(
            stamp, now_ns, params["odometry.timeout"], "~/odometry", "odometry", "odometry.timeout"
        )
        child, world = msg.child_frame_id, msg.header.frame_id
        if child != model.root_link:
            raise BaseDrop(
                "bad_odometry",
                f"~/odometry child_frame_id '{child}' is not the model's root link '{model.root_link}': "
                "the pose and twist must be the base link's (REP 105: pose in header.frame_id, twist in "
                "child_frame_id)",
            )
        if not world:
            raise BaseDrop(
                "bad_odometry",
                "~/odometry header.frame_id is empty: name the world frame of the pose (odom, map)",
            )
        p, o = msg.pose.pose.position, msg.pose.pose.orientation
        lin, ang = msg.twist.twist.linear, msg.twist.twist.angular
        values = (p.x, p.y, p.z, o.x, o.y, o.z, o.w, lin.x, lin.y, lin.z, ang.x, ang.y, ang.z)
        if not all(math.isfinite(x) for x in values):
            raise BaseDrop(
                "bad_odometry", f"~/odometry from '{world}' to '{child}' has a NaN or Inf: dropped"
            )
        try:
            quat = unit_quaternion(o.x, o.y, o.z, o.w, "~/odometry pose.orientation")
            position = check_vector((p.x, p.y, p.z), MAX_BASE_DISTANCE, "~/odometry pose.position", "m")
            linear = check_vector((lin.x, lin.y, lin.z), MAX_BASE_SPEED, "~/odometry twist.linear", "m/s")
            angular = check_vector(
                (ang.x, ang.y, ang.z), MAX_ANGULAR_VELOCITY, "~/odometry twist.angular", "rad/s"
            )
        except RneaError as exc:
            raise BaseDrop("bad_odometry", f"{exc}: dropped") from None
        self.odometry = (position, quat, linear, angular)
        self.odometry_ns = max(self.odometry_ns, stamp)
        self.world_frame = world

    def receive_imu(self, model: RobotModel, params: dict, msg: Imu, stamp: int, now_ns: int) -> None:
        """Check and keep one ~/imu message as the base's orientation and angular velocity;
        BaseDrop saying why not."""
        stamp = self._fresh(stamp, now_ns, params["imu.timeout"], "~/imu", "imu", "imu.timeout")
        link = msg.header.frame_id
        cached = self._mount
        if cached is None or cached[0] is not model or cached[1] != link:
            try:
                cached = self._mount = (model, link, imu_mount(model, link))
            except RneaError as exc:
                raise BaseDrop("bad_imu", f"~/imu rejected: {exc}") from None
        mount = cached[2]
        if msg.orientation_covariance[0] == -1.0:
            raise BaseDrop(
                "bad_imu", f"~/imu from '{link}' carries no orientation (orientation_covariance[0] = -1)"
            )
        if msg.angular_velocity_covariance[0] == -1.0:
            raise BaseDrop(
                "bad_imu",
                f"~/imu from '{link}' carries no angular velocity (angular_velocity_covariance[0] = -1)",
            )
        o, w = msg.orientation, msg.angular_velocity
        if not all(math.isfinite(x) for x in (o.x, o.y, o.z, o.w, w.x, w.y, w.z)):
            raise BaseDrop("bad_imu", f"~/imu from '{link}' has a NaN or Inf: dropped")
        try:
            r_world_imu = quaternion_matrix(*unit_quaternion(o.x, o.y, o.z, o.w, "orientation"))
            omega_imu = check_vector((w.x, w.y, w.z), MAX_ANGULAR_VELOCITY, "angular_velocity", "rad/s")
        except RneaError as exc:
            raise BaseDrop("bad_imu", f"~/imu from '{link}': {exc}: dropped") from None
        r_world_base = r_world_imu @ mount.rotation.T
        omega = mount.rotation @ omega_imu
        self.imu = (_quaternion_of(r_world_base), omega)
        self.imu_ns = max(self.imu_ns, stamp)
        self.imu_link = link

    def _current(self, params: dict, now_ns: int) -> None:
        """BaseDrop when a needed input is missing or stale now."""
        odom, imu = self.needs(params)
        for needed, got, stamp, topic, prefix, timeout_name in (
            (odom, self.odometry, self.odometry_ns, "~/odometry", "odometry", "odometry.timeout"),
            (imu, self.imu, self.imu_ns, "~/imu", "imu", "imu.timeout"),
        ):
            if not needed:
                continue
            why = f"; the last {topic} was dropped: {self.rejected[prefix]}" if self.rejected[prefix] else ""
            if got is None or stamp == 0:
                raise BaseDrop(
                    f"no_{prefix}", f"no {topic} yet (base.source {params['base.source']}): no command{why}"
                )
            timeout = params[timeout_name]
            age = (now_ns - stamp) * 1e-9
            if timeout > 0 and age > timeout:
                raise BaseDrop(
                    f"{prefix}_stale",
                    f"no recent {topic} (the newest is {age:.3f} s old, {timeout_name} {timeout} s): "
                    f"no command, the base state would be stale{why}",
                )

    def state(self, model: RobotModel, params: dict, now_ns: int) -> tuple[np.ndarray, np.ndarray]:
        """(q_base (root_nq), v_base (root_nv)) of the floating or planar `model` now; BaseDrop
        when an input base.source needs is missing or stale."""
        self._current(params, now_ns)
        source = params["base.source"]
        position = np.zeros(3)
        linear = np.zeros(3)
        quat: tuple[float, ...] = (0.0, 0.0, 0.0, 1.0)
        angular = np.zeros(3)
        if self.odometry is not None and source != "imu":
            position, quat, linear, angular = self.odometry
        if self.imu is not None and source != "odometry":
            quat, angular = self.imu
        q_world = _root_q(model, position, quat)
        if model.root_joint == "floating":
            return q_world, np.concatenate([linear, angular])
        return q_world, np.array([linear[0], linear[1], angular[2]])

    def values(self, params: dict, now_ns: int) -> list[KeyValue]:
        """Diagnostics: the base source, world frame, IMU link and the inputs' ages."""

        def age(stamp: int) -> str:
            return f"{(now_ns - stamp) * 1e-9:.4f}" if stamp else "none"

        return [
            KeyValue(key="base_source", value=params["base.source"]),
            KeyValue(key="base_world_frame", value=self.world_frame),
            KeyValue(key="odometry_age_s", value=age(self.odometry_ns)),
            KeyValue(key="base_imu_link", value=self.imu_link),
            KeyValue(key="base_imu_age_s", value=age(self.imu_ns)),
        ]


def _root_q(model: RobotModel, position: np.ndarray, quat: tuple[float, ...]) -> np.ndarray:
    """The root joint's q for the base at `position` with orientation `quat` in the world: the
    pose itself, less the root joint's own placement (a URDF floating joint's origin)."""
    r0, p0 = base_placement(model, neutral(model))
    rot = quaternion_matrix(*quat)
    identity = bool(np.array_equal(r0, np.eye(3)) and not p0.any())
    if not identity:
        rot, position = r0.T @ rot, r0.T @ (position - p0)
        quat = _quaternion_of(rot)
    if model.root_joint == "floating":
        return np.array([position[0], position[1], position[2], *quat])
    yaw = math.atan2(rot[1, 0], rot[0, 0])
    return np.array([position[0], position[1], math.cos(yaw), math.sin(yaw)])


__all__ = ["SOURCES", "BaseDrop", "BaseStateInput", "age_drop"]
