"""rnea_ros_record: record sensor_msgs/JointState topics into a rosbag2 directory, the pip-only
stand-in for `ros2 bag record` that `rnea_ros_identify` needs (no ROS install).

    rnea_ros_record -o run_a [--topic /joint_states ...] [--storage mcap|sqlite3]
        [--qos auto|reliable|best_effort] [--duration S] [--stop-topic TOPIC]

Each topic is subscribed once a publisher of it is seen, with the QoS its publishers offer
(`auto`, as rosbag2 adapts: reliable when every publisher is reliable, else best effort; a
best-effort subscription matches both kinds), keep-last 1000, and the serialized messages are
written unchanged with their receive time (the node's clock). Storage: mcap by default, the
default of rosbag2 in Jazzy; sqlite3 on request (rnea_ros.identification.bag reads both).

It stops on Ctrl-C (SIGINT), SIGTERM, after `--duration` s (wall clock, from the start), or on any
message on `--stop-topic` (std_msgs/Empty, e.g. `rnea_ros_trigger TOPIC`); then it takes what is
already queued (until none arrives for DRAIN s, at most DRAIN_MAX s) and closes the bag, so the
bag is readable. Only SIGKILL or a crash loses it (rosbags writes the metadata when the bag is closed).
Exit status: 0 recorded, 1 nothing recorded (the bag is written empty), 2 bad arguments.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Sequence
from functools import partial
from pathlib import Path

import rclpy
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node
from rclpy.qos import HistoryPolicy, QoSProfile, ReliabilityPolicy
from rosbags.rosbag2 import Writer
from sensor_msgs.msg import JointState
from std_msgs.msg import Empty

from rnea_ros.identification.bag import JOINT_STATE, STORAGES, typestore
from rnea_ros.tools.common import StopFlag, fail, start_rclpy

PROG = "rnea_ros_record"
DEPTH = 1000  # messages queued per topic while the bag is written
DRAIN = 0.2  # s: after a stop, queued messages are taken until none arrives for this long,
DRAIN_MAX = 1.0  # s: or for this long at most (a publisher that goes on)
POLL = 0.05  # s: longest wait for a message before the stop conditions are checked again


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0])
    ap.add_argument("-o", "--output", type=Path, required=True, help="rosbag2 directory to create")
    ap.add_argument(
        "--topic",
        action="append",
        help="sensor_msgs/JointState topic to record (repeatable; default /joint_states)",
    )
    ap.add_argument("--storage", choices=tuple(STORAGES), default="mcap", help="default mcap (Jazzy's)")
    ap.add_argument(
        "--qos",
        choices=("auto", "reliable", "best_effort"),
        default="auto",
        help="subscription reliability (auto: as the publishers offer)",
    )
    ap.add_argument("--duration", type=float, help="stop after this many seconds (wall clock)")
    ap.add_argument("--stop-topic", help="stop on any std_msgs/Empty message on this topic")
    args = ap.parse_args(argv)
    args.topic = args.topic or ["/joint_states"]
    return args


def absolute(node: Node, topic: str) -> str:
    return node.resolve_topic_name(topic)


class Recorder:
    """Subscribes each topic when its publishers appear; writes every message it takes."""

    def __init__(self, node: Node, writer: Writer, path: Path, topics: list[str], qos: str) -> None:
        self.node, self.writer, self.qos, self.path = node, writer, qos, path
        self.pending = list(topics)
        store = typestore()
        self.connections = {t: writer.add_connection(t, JOINT_STATE, typestore=store) for t in topics}
        self.counts = dict.fromkeys(topics, 0)
        self.last_message = time.monotonic()

    def subscribe_ready(self) -> None:
        """Subscribe the topics whose publishers are now known."""
        for topic in list(self.pending):
            publishers = self.node.get_publishers_info_by_topic(topic)
            if not publishers and self.qos == "auto":
                continue
            reliable = self.qos == "reliable" or (
                self.qos == "auto"
                and all(p.qos_profile.reliability == ReliabilityPolicy.RELIABLE for p in publishers)
            )
            profile = QoSProfile(
                depth=DEPTH,
                history=HistoryPolicy.KEEP_LAST,
                reliability=ReliabilityPolicy.RELIABLE if reliable else ReliabilityPolicy.BEST_EFFORT,
            )
            self.node.create_subscription(
                JointState, topic, partial(self._on_message, topic), profile, raw=True
            )
            self.pending.remove(topic)
            kind = "reliable" if reliable else "best effort"
            print(f"{PROG}: recording {topic} ({kind}) into {self.path}", file=sys.stderr)

    def _on_message(self, topic: str, raw: bytes) -> None:
        self.writer.write(self.connections[topic], self.node.get_clock().now().nanoseconds, raw)
        self.counts[topic] += 1
        self.last_message = time.monotonic()


def record(args: argparse.Namespace, stop: StopFlag) -> int:
    start_rclpy()
    node = Node(f"rnea_ros_record_{os.getpid()}")
    executor = SingleThreadedExecutor()
    executor.add_node(node)
    writer = Writer(args.output, version=Writer.VERSION_LATEST, storage_plugin=STORAGES[args.storage])
    writer.open()
    try:
        recorder = Recorder(node, writer, args.output, [absolute(node, t) for t in args.topic], args.qos)
        if args.stop_topic:
            node.create_subscription(Empty, args.stop_topic, lambda _: stop.set(args.stop_topic), 10)
        deadline = None if args.duration is None else time.monotonic() + args.duration
        next_discovery = 0.0
        while not stop:
            if recorder.pending and time.monotonic() >= next_discovery:
                recorder.subscribe_ready()
                next_discovery = time.monotonic() + 0.1
            executor.spin_once(timeout_sec=POLL)
            if deadline is not None and time.monotonic() >= deadline:
                stop.set(f"--duration {args.duration:g}")
        recorder.last_message = stopped = time.monotonic()
        while time.monotonic() - recorder.last_message < DRAIN and time.monotonic() - stopped < DRAIN_MAX:
            executor.spin_once(timeout_sec=DRAIN / 4)  # what is already queued
    finally:
        writer.close()
        executor.shutdown()
        node.destroy_node()
        rclpy.try_shutdown()
    counts = ", ".join(f"{n} on {t}" for t, n in recorder.counts.items())
    print(f"{PROG}: stopped ({stop.reason}); wrote {counts} to {args.output}", file=sys.stderr)
    if not any(recorder.counts.values()):
        print(f"{PROG}: warning: nothing recorded", file=sys.stderr)
        return 1
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    stop = StopFlag()
    if args.output.exists():
        return fail(PROG, f"'{args.output}' exists (rosbag2 needs a new directory)")
    if args.duration is not None and not args.duration > 0:
        return fail(PROG, f"--duration must be > 0, got {args.duration}")
    return record(args, stop)


if __name__ == "__main__":
    sys.exit(main())
