"""~/imu (sensor_msgs/Imu) for `gravity_source: imu_orientation | imu_acceleration`: the
root-frame gravity of a fixed-base arm on a moving or tilted base (rnea_ros.estimation.base_gravity).

The message's frame_id names a URDF link fixed to the root (its pose in the root frame is
used). imu_orientation uses `orientation` (|gravity| down the world's z axis);
imu_acceleration uses `linear_acceleration` (the specific force: +9.81 up at rest) and, when
given, `angular_velocity` for the IMU's lever arm, low-passed at imu.cutoff_frequency. A field
whose covariance[0] is -1 is "not provided" (REP 145 / the message's comment).

Staleness, clock and diagnostics as for joint_states: a message older than imu.timeout (or
stamped that far ahead) is dropped (reasons imu_stale, imu_clock_skew, with the use_sim_time hint
when the clocks are far apart); while the newest accepted one is older than imu.timeout at a
cycle, no command goes out (reason imu_stale; no_imu before the first). Stamp 0 counts as now.
"""

from __future__ import annotations

import math

import numpy as np
from diagnostic_msgs.msg import KeyValue
from sensor_msgs.msg import Imu

from rnea_ros.errors import RneaError
from rnea_ros.estimation.base_gravity import BaseGravity, imu_mount
from rnea_ros.model.robot_model import RobotModel

SOURCES = {"imu_orientation": "orientation", "imu_acceleration": "specific_force"}
CLOCK_MIXUP = 1e6  # s: stamps this far from the node clock come from another clock source


class ImuDrop(RneaError):
    """A ~/imu message or cycle that gives no gravity; `reason` is the diagnostics counter."""

    def __init__(self, reason: str, text: str) -> None:
        super().__init__(text)
        self.reason = reason


def _age_text(age: float, timeout: float) -> tuple[str, str]:
    hint = ""
    if abs(age) > CLOCK_MIXUP:
        hint = (
            f"; stamps and this node's clock are {abs(age):.2g} s apart: is use_sim_time set on one "
            "side only (simulated vs wall-clock time)?"
        )
    if age > 0:
        return "imu_stale", f"~/imu is {age:.3f} s old (imu.timeout {timeout} s){hint}"
    return "imu_clock_skew", f"~/imu is stamped {-age:.3f} s in the future (clock skew){hint}"


class ImuGravity:
    """The gravity from ~/imu for the current model and parameters (one per node)."""

    def __init__(self) -> None:
        self._estimator: BaseGravity | None = None
        self._key: tuple = ()
        self.stamp_ns = 0  # stamp (node clock if unstamped) of the newest accepted message
        self.link = ""

    @staticmethod
    def active(params: dict) -> bool:
        return params["gravity_source"] != "parameter"

    @staticmethod
    def _settings(params: dict) -> tuple:
        """What an estimate depends on besides the model and the IMU link."""
        magnitude = math.sqrt(sum(float(g) ** 2 for g in params["gravity"]))
        return SOURCES[params["gravity_source"]], params["imu.cutoff_frequency"], magnitude

    def _estimator_for(self, model: RobotModel, params: dict, link: str) -> BaseGravity:
        source, cutoff, magnitude = settings = self._settings(params)
        key = (model, link, *settings)
        if self._estimator is None or key != self._key:  # a new model, link or setting: restart
            try:
                mount = imu_mount(model, link)
            except RneaError as exc:
                raise ImuDrop("bad_imu", f"~/imu rejected: {exc}") from None
            self._estimator = BaseGravity(mount, source, cutoff, magnitude)
            self._key, self.link, self.stamp_ns = key, link, 0
        return self._estimator

    def receive(self, model: RobotModel, params: dict, msg: Imu, stamp: int, now_ns: int) -> None:
        """Fold one message (stamped `stamp` ns, 0: now) into the estimate; ImuDrop saying why not."""
        stamp = stamp or now_ns
        timeout = params["imu.timeout"]
        age = (now_ns - stamp) * 1e-9
        if timeout > 0 and not -timeout <= age <= timeout:
            raise ImuDrop(*_age_text(age, timeout))
        estimator = self._estimator_for(model, params, msg.header.frame_id)
        t = stamp * 1e-9
        try:
            if estimator.source == "orientation":
                if msg.orientation_covariance[0] == -1.0:
                    raise RneaError("it carries no orientation (orientation_covariance[0] = -1)")
                o = msg.orientation
                estimator.update(t, orientation=(o.x, o.y, o.z, o.w))
            else:
                if msg.linear_acceleration_covariance[0] == -1.0:
                    raise RneaError("it carries no acceleration (linear_acceleration_covariance[0] = -1)")
                a, w = msg.linear_acceleration, msg.angular_velocity
                omega = None if msg.angular_velocity_covariance[0] == -1.0 else (w.x, w.y, w.z)
                estimator.update(t, specific_force=(a.x, a.y, a.z), angular_velocity=omega)
        except RneaError as exc:
            raise ImuDrop("bad_imu", f"~/imu from '{msg.header.frame_id}' rejected: {exc}") from None
        self.stamp_ns = max(self.stamp_ns, stamp)

    def gravity(self, params: dict, now_ns: int) -> np.ndarray:
        """The root-frame gravity for a cycle now (m/s²); ImuDrop when there is none or it is stale."""
        estimator = self._estimator
        if estimator is None or estimator.gravity is None or self.stamp_ns == 0:
            raise ImuDrop("no_imu", f"no ~/imu yet (gravity_source {params['gravity_source']}): no command")
        if self._key[2:] != self._settings(params):  # the estimate of other settings is not this one
            raise ImuDrop(
                "no_imu",
                "no ~/imu since gravity_source, imu.cutoff_frequency or gravity changed: no command",
            )
        timeout = params["imu.timeout"]
        age = (now_ns - self.stamp_ns) * 1e-9
        if timeout > 0 and age > timeout:
            raise ImuDrop(
                "imu_stale",
                f"no recent ~/imu (the newest is {age:.3f} s old, imu.timeout {timeout} s): no command, "
                "its gravity would be stale",
            )
        return estimator.gravity

    def latest(self, params: dict) -> tuple[float, ...]:
        """The gravity in use now (root frame, m/s²): the newest from ~/imu with an imu source
        (whatever its age), else (or before the first) the gravity parameter."""
        est = self._estimator
        if self.active(params) and est is not None and est.gravity is not None:
            return tuple(float(x) for x in est.gravity)
        return tuple(float(x) for x in params["gravity"])

    def values(self, params: dict, now_ns: int) -> list[KeyValue]:
        """Diagnostics: the source, the gravity in use (root frame), the IMU link and its age."""
        source = params["gravity_source"]
        g = params["gravity"]
        age = "none"
        if self.active(params):
            est = self._estimator
            g = None if est is None or est.gravity is None else est.gravity
            if self.stamp_ns:
                age = f"{(now_ns - self.stamp_ns) * 1e-9:.4f}"
        return [
            KeyValue(key="gravity_source", value=source),
            KeyValue(key="gravity", value="none" if g is None else " ".join(f"{float(x):.4f}" for x in g)),
            KeyValue(key="imu_link", value=self.link if self.active(params) else ""),
            KeyValue(key="imu_age_s", value=age),
        ]


__all__ = ["ImuDrop", "ImuGravity"]
