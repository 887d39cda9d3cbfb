"""launch_testing test of launch/inverse_dynamics.launch.py: the launch file starts the node with the
Panda URDF (urdf_file) and the package's parameter file (params_file: a copy of it with the
friction term off, so the expected efforts are the rigid-body terms whatever the loop period;
the friction rules have their own tests); joint_states in, effort commands out on
/effort_controller/commands; the node exits cleanly on shutdown.

Needs a ROS 2 install (launch, launch_ros, launch_testing and the package built with colcon). In a
sourced workspace:

    python -m launch_testing.launch_test test/ros/launch/test_inverse_dynamics_launch.py

`make test` runs it so (test/system/test_launch_files.py) when the ROS 2 wheels are there
(test/support/ros_install.py); pytest does not collect it itself (conftest.py).
"""

from __future__ import annotations

import atexit
import os
import tempfile
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
import yaml  # noqa: E402
from launch.actions import IncludeLaunchDescription  # noqa: E402
from launch.launch_description_sources import PythonLaunchDescriptionSource  # noqa: E402
from rclpy.executors import SingleThreadedExecutor  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from std_msgs.msg import Float64MultiArray  # noqa: E402

from rnea_ros import RobotModel, rnea  # noqa: E402
from rnea_ros.model.example_robots import example_urdf_path  # noqa: E402
from rnea_ros.testing.rosgraph import FRICTION_OFF  # noqa: E402

LAUNCH_FILE = Path(__file__).resolve().parents[3] / "launch" / "inverse_dynamics.launch.py"
CONFIG = LAUNCH_FILE.parent.parent / "config" / "inverse_dynamics.yaml"
try:
    PANDA_URDF = example_urdf_path("panda")
except FileNotFoundError:
    pytest.skip(
        "the Panda URDF comes from example-robot-data (pip install example-robot-data)",
        allow_module_level=True,
    )
# s: the node first loads its kernels (a cold numba cache, as in a fresh workspace, compiles them:
# a minute on a loaded 2-core machine)
START = 180.0
COMMANDS = "/effort_controller/commands"
MODEL = RobotModel.from_urdf(PANDA_URDF.read_text(), tip_link="panda_hand")
ARM = list(MODEL.joint_names)  # panda_joint1..7: the effort_controller of config/controllers.yaml


def params_without_friction() -> str:
    """A copy of the package's config/inverse_dynamics.yaml with FRICTION_OFF applied."""
    config = yaml.safe_load(CONFIG.read_text())
    for dotted, value in FRICTION_OFF.items():
        group, name = dotted.split(".")
        config["/**"]["ros__parameters"][group][name] = value
    fd, path = tempfile.mkstemp(prefix="inverse_dynamics_", suffix=".yaml")
    atexit.register(os.unlink, path)
    with os.fdopen(fd, "w") as file:
        yaml.safe_dump(config, file)
    return path


@pytest.mark.launch_test
def generate_test_description():
    arguments = {
        "urdf_file": str(PANDA_URDF),
        "tip_link": "panda_hand",
        "commands_topic": COMMANDS,
        "params_file": params_without_friction(),
    }
    include = IncludeLaunchDescription(
        PythonLaunchDescriptionSource(str(LAUNCH_FILE)), launch_arguments=arguments.items()
    )
    return launch.LaunchDescription([include, launch_testing.actions.ReadyToTest()]), {}


class TestEffortCommands(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        # a context of its own: other tests of the same pytest process may hold the default one
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

    def test_joint_states_in_effort_commands_out(self) -> None:
        received: list[list[float]] = []
        self.node.create_subscription(
            Float64MultiArray, COMMANDS, lambda m: received.append(list(m.data)), 10
        )
        publisher = self.node.create_publisher(JointState, "joint_states", 10)
        q, qd = np.linspace(-0.5, 0.5, 7), np.full(7, 0.1)
        end = time.monotonic() + START
        while not received and time.monotonic() < end:
            msg = JointState(name=ARM, position=q.tolist(), velocity=qd.tolist())
            msg.header.stamp = self.node.get_clock().now().to_msg()
            publisher.publish(msg)
            self.executor.spin_once(timeout_sec=0.1)
        self.assertTrue(received, f"no effort command on {COMMANDS}")
        expected = rnea(MODEL, q, qd, np.zeros(7))  # no trajectory: gravity + Coriolis
        np.testing.assert_allclose(received[-1], expected, rtol=0, atol=1e-9)


@launch_testing.post_shutdown_test()
class TestShutdown(unittest.TestCase):
    def test_exit_codes(self, proc_info) -> None:
        launch_testing.asserts.assertExitCodes(proc_info)
