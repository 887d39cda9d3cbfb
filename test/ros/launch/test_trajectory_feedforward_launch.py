"""launch_testing test of launch/trajectory_feedforward.launch.py: the launch file starts the node
with the Panda URDF (urdf_file) and the package's parameter file; a JointTrajectory on the input
topic comes out on /joint_trajectory_controller/joint_trajectory with efforts (Pinocchio's rnea +
the URDF's viscous friction at every point); the node exits cleanly on shutdown.

Needs a ROS 2 install (launch, launch_ros, launch_testing and the package built with colcon). In a
sourced workspace:

    python -m launch_testing.launch_test test/ros/launch/test_trajectory_feedforward_launch.py

`make test` runs it so (test/system/test_launch_files.py) when the ROS 2 wheels are there
(test/support/ros_install.py); pytest does not collect it itself (conftest.py).
"""

from __future__ import annotations

import os
import time
import unittest
from pathlib import Path

import pytest

os.environ.setdefault("ROS_DOMAIN_ID", str(100 + os.getpid() % 100))

import launch  # noqa: E402
import launch_testing.actions  # noqa: E402
import launch_testing.asserts  # noqa: E402
import numpy as np  # noqa: E402
import rclpy  # noqa: E402
from builtin_interfaces.msg import Duration  # noqa: E402
from launch.actions import IncludeLaunchDescription  # noqa: E402
from launch.launch_description_sources import PythonLaunchDescriptionSource  # noqa: E402
from rclpy.executors import SingleThreadedExecutor  # noqa: E402
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint  # noqa: E402

from rnea_ros import Friction, RobotModel, friction_torques, rnea  # noqa: E402
from rnea_ros.model.example_robots import example_urdf_path  # noqa: E402

LAUNCH_FILE = Path(__file__).resolve().parents[3] / "launch" / "trajectory_feedforward.launch.py"
try:
    PANDA_URDF = example_urdf_path("panda")
except FileNotFoundError:
    pytest.skip("the Panda URDF comes from example-robot-data", allow_module_level=True)
# s: the node first loads its kernels (a cold numba cache, as in a fresh workspace, compiles them:
# a minute on a loaded 2-core machine)
START = 180.0
INPUT, OUTPUT = "/trajectory_feedforward/trajectory_in", "/joint_trajectory_controller/joint_trajectory"
MODEL = RobotModel.from_urdf(PANDA_URDF.read_text(), tip_link="panda_hand")
ARM = list(MODEL.joint_names)


@pytest.mark.launch_test
def generate_test_description():
    arguments = {"urdf_file": str(PANDA_URDF), "tip_link": "panda_hand"}
    include = IncludeLaunchDescription(
        PythonLaunchDescriptionSource(str(LAUNCH_FILE)), launch_arguments=arguments.items()
    )
    return launch.LaunchDescription([include, launch_testing.actions.ReadyToTest()]), {}


class TestAnnotatedTrajectory(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.context = rclpy.Context()
        rclpy.init(context=cls.context)
        cls.node = rclpy.create_node("launch_test_driver", context=cls.context)
        cls.executor = SingleThreadedExecutor(context=cls.context)
        cls.executor.add_node(cls.node)

    @classmethod
    def tearDownClass(cls) -> None:
        cls.executor.shutdown()
        cls.node.destroy_node()
        cls.context.try_shutdown()

    def test_model_from_the_urdf_file(self, proc_output) -> None:
        proc_output.assertWaitFor("from parameter robot_description: 7 joints", timeout=START)

    def test_trajectory_in_annotated_trajectory_out(self) -> None:
        received: list[JointTrajectory] = []
        self.node.create_subscription(JointTrajectory, OUTPUT, received.append, 10)
        publisher = self.node.create_publisher(JointTrajectory, INPUT, 10)
        home = np.array([0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785])
        msg = JointTrajectory(joint_names=ARM)
        for t, q in ((0, home), (2, home + 0.1)):
            msg.points.append(
                JointTrajectoryPoint(
                    positions=q.tolist(),
                    velocities=[0.0] * 7,
                    accelerations=[0.0] * 7,
                    time_from_start=Duration(sec=t),
                )
            )
        end = time.monotonic() + START
        while not received and time.monotonic() < end:
            if publisher.get_subscription_count() > 0:
                publisher.publish(msg)
            self.executor.spin_once(timeout_sec=0.5)
        self.assertTrue(received, f"nothing on {OUTPUT}")
        friction = Friction.from_model(MODEL)
        for point in received[-1].points:
            q, qd, qdd = (np.array(x) for x in (point.positions, point.velocities, point.accelerations))
            expected = rnea(MODEL, q, qd, qdd) + friction_torques(friction, qd)
            np.testing.assert_allclose(point.effort, expected, rtol=0, atol=1e-9)


@launch_testing.post_shutdown_test()
class TestShutdown(unittest.TestCase):
    def test_exit_codes(self, proc_info) -> None:
        launch_testing.asserts.assertExitCodes(proc_info)
