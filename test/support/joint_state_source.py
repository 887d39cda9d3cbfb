"""A joint_states publisher process for the recorder tests: message k carries known numbers.

python test/support/joint_state_source.py {reliable,best_effort} COUNT RATE_HZ   (COUNT 0: until SIGINT)

Waits (bounded) for a subscriber, then publishes message k = 0, 1, ... with header stamp 1000 + k s
and `values(k)`; prints "published K" every 10 messages and "done" once COUNT are acknowledged.
"""

from __future__ import annotations

import sys
import time

import numpy as np

NAMES = ["j0", "j1", "j2"]


def values(k: int) -> np.ndarray:
    """(3, n): position, velocity, effort of message k (full doubles, negative and tiny ones too)."""
    return np.random.default_rng([7, k]).normal(size=(3, len(NAMES))) * [[1.0], [1e-7], [1e3]]


def main() -> int:
    import rclpy
    from rclpy.duration import Duration
    from rclpy.node import Node
    from rclpy.qos import HistoryPolicy, QoSProfile, ReliabilityPolicy
    from sensor_msgs.msg import JointState

    reliability, count, rate = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
    rclpy.init()
    node = Node("joint_state_source")
    policy = ReliabilityPolicy.RELIABLE if reliability == "reliable" else ReliabilityPolicy.BEST_EFFORT
    qos = QoSProfile(depth=1000, history=HistoryPolicy.KEEP_LAST, reliability=policy)
    pub = node.create_publisher(JointState, "joint_states", qos)
    deadline = time.monotonic() + 30.0
    while pub.get_subscription_count() == 0 and time.monotonic() < deadline:
        time.sleep(0.02)
    print("matched", flush=True)
    k = 0
    try:
        while count == 0 or k < count:
            pos, vel, eff = values(k)
            msg = JointState(name=NAMES, position=pos.tolist(), velocity=vel.tolist(), effort=eff.tolist())
            msg.header.stamp.sec = 1000 + k
            pub.publish(msg)
            k += 1
            if k % 10 == 0:
                print(f"published {k}", flush=True)
            time.sleep(1.0 / rate)
        if reliability == "reliable":
            pub.wait_for_all_acked(Duration(seconds=10))
        print("done", flush=True)
        while True:
            time.sleep(0.1)
    except KeyboardInterrupt:
        return 0


if __name__ == "__main__":
    sys.exit(main())
