"""A stand-alone joint_states publisher process for fault tests: a fixed state at a fixed rate.

python test/support/joint_state_publisher.py RATE_HZ NAME=Q:QD ...
"""

from __future__ import annotations

import sys
import time

import rclpy
from rclpy.node import Node
from sensor_msgs.msg import JointState


def main() -> None:
    rate = float(sys.argv[1])
    joints = [arg.split("=") for arg in sys.argv[2:]]
    names = [name for name, _ in joints]
    q = [float(value.split(":")[0]) for _, value in joints]
    qd = [float(value.split(":")[1]) for _, value in joints]
    rclpy.init()
    node = Node("fault_test_joint_state_publisher")
    pub = node.create_publisher(JointState, "joint_states", 10)
    try:
        while rclpy.ok():
            msg = JointState(name=names, position=q, velocity=qd)
            msg.header.stamp = node.get_clock().now().to_msg()
            pub.publish(msg)
            time.sleep(1.0 / rate)
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
