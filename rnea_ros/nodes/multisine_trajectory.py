"""multisine_trajectory: publishes a multi-sine JointTrajectory starting from the current pose
(thin adapter over rnea_ros.identification.excitation).

On `~/start` (std_msgs/Empty), or once at start-up with `autostart`, the node takes the next
`joint_states`, designs a multi-sine around that pose within the URDF's position and velocity
limits and `max_acceleration` (and, with `effort_scale`, the efforts its URDF model needs within
the effort limits), samples positions, velocities and accelerations every
1/`sample_rate` s and publishes them on `/inverse_dynamics/joint_trajectory` (remappable),
stamped `start_delay` s after that joint_states stamp, or 0.1 s more than the design took when that
was longer (the receiver interpolates them quintic).
"""

from __future__ import annotations

if __name__ == "__main__" and __spec__ is not None:  # python -m: a stop while importing is one line
    from rnea_ros.ros.entry import run_module

    run_module("multisine_trajectory", __spec__.name)

import sys

import numpy as np
from builtin_interfaces.msg import Duration
from rcl_interfaces.msg import SetParametersResult
from rclpy.node import Node
from rclpy.subscription import Subscription
from sensor_msgs.msg import JointState
from std_msgs.msg import Empty, String
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from rnea_ros.identification.excitation import ExcitationOptions, design, within_effort_limits
from rnea_ros.model.robot_model import RobotModel
from rnea_ros.ros import parameters
from rnea_ros.ros.kernel_startup import prepare_kernels
from rnea_ros.ros.qos import DESCRIPTION_QOS, LATEST_STATE_QOS
from rnea_ros.ros.run_node import run_node
from rnea_ros.ros.schema import Param, table
from rnea_ros.ros.stamps import set_stamp, stamp_ns

MULTISINE = table(
    (
        Param(
            "robot_description",
            "string",
            "",
            "URDF text (limits); empty: listen to the robot_description topic",
            True,
        ),
        Param("joints", "string_array", [""], "joints of the trajectory (empty: every movable joint)", True),
        Param(
            "duration",
            "double",
            10.0,
            "length of the trajectory including both ramps, s",
            bounds=(0.1, 3600.0),
        ),
        Param("ramp", "double", 1.5, "smooth ramp from and back to rest at each end, s", bounds=(0.0, 600.0)),
        Param("components", "int", 3, "sines per joint", bounds=(1, 20)),
        Param("frequency_min", "double", 0.15, "lowest sine frequency, Hz", bounds=(1e-3, 100.0)),
        Param("frequency_max", "double", 0.6, "highest sine frequency, Hz", bounds=(1e-3, 100.0)),
        Param(
            "max_amplitude",
            "double",
            0.4,
            "largest excursion from the start pose, rad or m",
            bounds=(0.0, 10.0),
        ),
        Param(
            "position_margin",
            "double",
            0.1,
            "distance kept from the URDF position limits, rad or m",
            bounds=(0.0, 10.0),
        ),
        Param(
            "velocity_scale",
            "double",
            0.5,
            "fraction of the URDF velocity limit the trajectory may use",
            bounds=(0.0, 1.0),
        ),
        Param(
            "effort_scale",
            "double",
            1.0,
            "amplitudes shrink until the URDF model's efforts along the trajectory stay within "
            "effort limit x this; 0: no effort check",
            bounds=(0.0, 10.0),
        ),
        Param(
            "max_acceleration",
            "double_array",
            [3.0],
            "acceleration limit, one value or one per joint, rad/s^2",
            bounds=(1e-6, 1e4),
            per_joint="1|n",
        ),
        Param("seed", "int", 0, "seed of frequencies, phases and amplitude mix", bounds=(0, 2**31 - 1)),
        Param("sample_rate", "double", 100.0, "trajectory points per second, Hz", bounds=(1.0, 10000.0)),
        Param(
            "start_delay",
            "double",
            0.5,
            "trajectory start after the joint_states it starts from, s",
            bounds=(0.0, 60.0),
        ),
        Param("autostart", "bool", True, "publish once after start-up, without waiting for ~/start"),
    )
)


class MultisineNode(Node):
    """See the module docstring."""

    def __init__(self, **kwargs) -> None:
        super().__init__("multisine_trajectory", **kwargs)
        self.params = parameters.declare(self, MULTISINE)
        prepare_kernels(self)  # the effort check runs rnea; no trajectory waits for a compilation
        parameters.on_set(self, MULTISINE, self._on_set_parameters)
        self.model: RobotModel | None = None
        self._armed = self.params["autostart"]
        self._state_sub: Subscription | None = None
        self.published = 0
        self.pub = self.create_publisher(JointTrajectory, "/inverse_dynamics/joint_trajectory", 10)
        self.create_subscription(Empty, "~/start", self._on_start, 10)
        urdf = self.params["robot_description"]
        if urdf:
            self.model = RobotModel.from_urdf(urdf)
        else:
            self.create_subscription(String, "robot_description", self._on_description, DESCRIPTION_QOS)
        self._update_subscription()

    def _on_set_parameters(self, params) -> SetParametersResult:
        try:
            self.params = parameters.proposed(MULTISINE, self.params, params, None)
        except ValueError as exc:
            return SetParametersResult(successful=False, reason=str(exc))
        return SetParametersResult(successful=True)

    def _on_description(self, msg: String) -> None:
        try:
            self.model = RobotModel.from_urdf(msg.data)
        except ValueError as exc:
            self.get_logger().error(f"robot_description rejected: {exc}")
        self._update_subscription()

    def _on_start(self, _msg: Empty) -> None:
        self._armed = True
        self._update_subscription()

    def _update_subscription(self) -> None:
        """Listen to joint_states only while a trajectory is due (it comes at 1 kHz)."""
        if self._armed and self.model is not None and self._state_sub is None:
            self._state_sub = self.create_subscription(
                JointState, "joint_states", self._on_state, LATEST_STATE_QOS
            )

    def _on_state(self, msg: JointState) -> None:
        if not self._armed:
            return
        self._armed = False
        if self._state_sub is not None:  # always: this is its callback
            self.destroy_subscription(self._state_sub)
        self._state_sub = None
        try:
            self.pub.publish(self.trajectory(msg))
            self.published += 1
        except (ValueError, KeyError) as exc:
            self.get_logger().error(f"no trajectory: {exc}")

    def trajectory(self, state: JointState) -> JointTrajectory:
        """The multi-sine starting at `state`'s pose, stamped start_delay after it (later when its
        design took longer)."""
        began = self.get_clock().now().nanoseconds
        p = self.params
        model = self.model
        if model is None:  # not reached: the state subscription waits for a model
            raise ValueError("no robot_description yet")
        joints = [j for j in p["joints"] if j] or list(model.joint_names)
        position = dict(zip(state.name, state.position, strict=False))
        missing = [j for j in joints if j not in position]
        if missing:
            raise ValueError(f"joint_states lacks {missing}")
        index = [model.joint_index(j) for j in joints]
        acceleration = np.asarray(p["max_acceleration"], dtype=float)
        motion = design(
            [position[j] for j in joints],
            model.position_lower[index],
            model.position_upper[index],
            model.velocity_limit[index],
            acceleration if acceleration.size > 1 else acceleration[0],
            ExcitationOptions(
                duration=p["duration"],
                ramp=p["ramp"],
                components=p["components"],
                frequency_range=(p["frequency_min"], p["frequency_max"]),
                max_amplitude=p["max_amplitude"],
                position_margin=p["position_margin"],
                velocity_scale=p["velocity_scale"],
                seed=p["seed"],
            ),
        )
        scale = 1.0
        if p["effort_scale"] > 0:
            rest = np.array([position.get(j, 0.0) for j in model.joint_names])
            motion, scale = within_effort_limits(motion, model, np.array(index), rest, p["effort_scale"])
        times, q, qd, qdd = motion.points(p["sample_rate"])
        msg = JointTrajectory(joint_names=joints)
        # start_delay after the state, or later when the design took longer (shrinking a long
        # trajectory to the effort limits takes seconds): never a start in the past
        elapsed = (self.get_clock().now().nanoseconds - began) * 1e-9
        start = stamp_ns(state.header.stamp) + round(max(p["start_delay"], elapsed + 0.1) * 1e9)
        set_stamp(msg.header.stamp, start)
        for t, a, b, c in zip(times, q, qd, qdd, strict=True):
            sec, nanosec = divmod(round(t * 1e9), 1_000_000_000)
            msg.points.append(
                JointTrajectoryPoint(
                    positions=a.tolist(),
                    velocities=b.tolist(),
                    accelerations=c.tolist(),
                    time_from_start=Duration(sec=sec, nanosec=nanosec),
                )
            )
        self.get_logger().info(
            f"multi-sine for {joints}: {motion.duration:g} s, {len(times)} points, starts at "
            f"{start * 1e-9:.3f} s; amplitude sums {np.round(motion.bounds()[0], 3).tolist()} rad"
            + (f" (shrunk to {scale:.3f} for the effort limits)" if scale < 1.0 else "")
        )
        return msg


def main(args: list[str] | None = None) -> int:
    """Run the multisine_trajectory node."""
    return run_node(args, MultisineNode, "multisine_trajectory")


if __name__ == "__main__":
    sys.exit(main())
