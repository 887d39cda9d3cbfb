"""rnea_ros_trigger: publish one std_msgs/Empty on a topic once it has a subscriber, the pip-only
stand-in for `ros2 topic pub --once TOPIC std_msgs/msg/Empty` (e.g. /multisine_trajectory/start,
or a recorder's --stop-topic).

    rnea_ros_trigger TOPIC [--timeout 10]

Reliable QoS (as `ros2 topic pub`); it waits until every subscriber has acknowledged the message
(bounded by --timeout). Exit status: 0 delivered, 1 no subscriber or no acknowledgement within
--timeout, 2 bad arguments.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Sequence

import rclpy
from rclpy.duration import Duration
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node
from std_msgs.msg import Empty

from rnea_ros.tools.common import StopFlag, fail, start_rclpy

PROG = "rnea_ros_trigger"


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0])
    ap.add_argument("topic", help="topic of type std_msgs/msg/Empty")
    ap.add_argument("--timeout", type=float, default=10.0, help="s to wait for a subscriber (default 10)")
    args = ap.parse_args(argv)
    if not args.timeout > 0:
        return fail(PROG, f"--timeout must be > 0, got {args.timeout}")
    stop = StopFlag()
    start_rclpy()
    node = Node(f"rnea_ros_trigger_{os.getpid()}")
    executor = SingleThreadedExecutor()
    executor.add_node(node)
    try:
        pub = node.create_publisher(Empty, args.topic, 10)
        deadline = time.monotonic() + args.timeout
        while pub.get_subscription_count() == 0:
            if stop or time.monotonic() >= deadline:
                print(f"{PROG}: no subscriber on {pub.topic_name} within {args.timeout:g} s", file=sys.stderr)
                return 1
            executor.spin_once(timeout_sec=0.05)
        pub.publish(Empty())
        left = max(deadline - time.monotonic(), 0.1)
        if not pub.wait_for_all_acked(Duration(nanoseconds=int(left * 1e9))):
            print(f"{PROG}: the message on {pub.topic_name} was not acknowledged", file=sys.stderr)
            return 1
        print(f"{PROG}: published std_msgs/Empty on {pub.topic_name}", file=sys.stderr)
        return 0
    finally:
        executor.shutdown()
        node.destroy_node()
        rclpy.try_shutdown()


if __name__ == "__main__":
    sys.exit(main())
