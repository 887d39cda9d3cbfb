"""Memory allocated per control cycle of the inverse_dynamics node, measured with tracemalloc in
one process (no publisher, no receiver): the node (Panda to panda_hand, friction and feedback as
configured) is built in-process, a listener subscribes ~/joint_efforts as the latency bench's
receiver does, and the joint_states subscription's callback (the guarded one the executor calls)
is called N times with one message.

Per cycle: the transient bytes (tracemalloc's peak above the cycle's start: what the cycle
allocated and still held at its fullest; numpy's data buffers are traced too), the bytes still
held after it (a leak shows as > 0 on average) and the wall time (indicative; the executor's own
cost is not in it).

    .venv/bin/python bench/cycle_allocations.py [--cycles 20000] [--warmup 2000] [--top 12]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import tracemalloc

import numpy as np

os.environ.setdefault("ROS_DOMAIN_ID", str(100 + os.getpid() % 100))
os.environ.setdefault("ROS_LOCALHOST_ONLY", "1")

import rclpy  # noqa: E402
from rclpy.executors import SingleThreadedExecutor  # noqa: E402
from rclpy.node import Node  # noqa: E402
from rclpy.parameter import Parameter  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402

from rnea_ros.model.example_robots import example_urdf_path  # noqa: E402
from rnea_ros.model.robot_model import RobotModel  # noqa: E402
from rnea_ros.nodes.inverse_dynamics.node import InverseDynamicsNode  # noqa: E402

URDF = example_urdf_path("panda").read_text()


def print_lines(callback, msg: JointState, top: int) -> None:
    """One cycle under sys.settrace: each line of the package (its callees outside the package
    included) charged with tracemalloc's peak above the line's start."""
    root = os.path.dirname(sys.modules["rnea_ros"].__file__)
    charged: dict[tuple[str, int], int] = {}
    state = {"where": None, "base": 0}

    def charge() -> None:
        current, peak = tracemalloc.get_traced_memory()
        if state["where"] is not None:
            charged[state["where"]] = charged.get(state["where"], 0) + peak - state["base"]
        tracemalloc.reset_peak()
        state["base"] = tracemalloc.get_traced_memory()[0]

    def local(frame, event, arg):
        if event in ("line", "return"):
            charge()
            state["where"] = (frame.f_code.co_filename, frame.f_lineno) if event == "line" else None
        return local

    def global_trace(frame, event, arg):
        return local if frame.f_code.co_filename.startswith(root) else None

    def calibration() -> None:  # lines that allocate nothing: the tracer's own bytes per line
        a = 1
        a = a
        a = a
        a = a

    tracemalloc.start(1)
    sys.settrace(lambda frame, event, arg: local)
    calibration()
    sys.settrace(None)
    charge()
    own = min(charged.values(), default=0)
    charged.clear()
    state["where"] = None
    sys.settrace(global_trace)
    try:
        callback(msg)
    finally:
        sys.settrace(None)
        charge()
        tracemalloc.stop()
    charged = {k: v - own for k, v in charged.items() if v > own}
    print(
        f"\none cycle, bytes allocated (peak) per line of rnea_ros, the {top} largest "
        f"({own} B per line, the tracer's own, taken off; callees outside rnea_ros in their line):"
    )
    for (path, line), size in sorted(charged.items(), key=lambda kv: -kv[1])[:top]:
        with open(path) as source:
            text = source.read().splitlines()[line - 1].strip()
        print(f"  {size:6d} B  {os.path.relpath(path, os.path.dirname(root))}:{line}  {text[:90]}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cycles", type=int, default=20000)
    parser.add_argument("--warmup", type=int, default=2000)
    parser.add_argument("--top", type=int, default=0, help="also list the N lines that allocate most")
    parser.add_argument(
        "--lines",
        type=int,
        default=0,
        help="attribute one cycle's transient bytes to the package's lines (N largest)",
    )
    parser.add_argument("--no-listener", action="store_true", help="nobody subscribes ~/joint_efforts")
    args = parser.parse_args()

    rclpy.init()
    listener = Node("cycle_allocations_listener")
    if not args.no_listener:
        listener.create_subscription(JointState, "/inverse_dynamics/joint_efforts", lambda _: None, 10)
    overrides = [
        Parameter("robot_description", value=URDF),
        Parameter("tip_link", value="panda_hand"),
        Parameter("publish_terms", value=False),
    ]
    node = InverseDynamicsNode(parameter_overrides=overrides)
    executor = SingleThreadedExecutor()
    for n in (node, listener):
        executor.add_node(n)
    callback = next(s.callback for s in node.subscriptions if s.topic_name == "/joint_states")
    names = list(RobotModel.from_urdf(URDF, tip_link="panda_hand").joint_names)
    msg = JointState(
        name=names, position=np.linspace(-0.5, 0.5, 7).tolist(), velocity=np.linspace(0.2, -0.2, 7).tolist()
    )  # unstamped: the node's clock
    # kernels ready (a cold cache compiles in the background) and the listener found
    end = time.monotonic() + 900.0
    while node.stats.commands == 0 and time.monotonic() < end:
        executor.spin_once(timeout_sec=0.05)
        callback(msg)
    settle = time.monotonic() + 0.5
    while time.monotonic() < settle:
        executor.spin_once(timeout_sec=0.05)
    node.stats.rejected.clear()

    for _ in range(args.warmup):
        callback(msg)
    tracemalloc.start(8)
    transient = np.empty(args.cycles)
    held = np.empty(args.cycles)
    seconds = np.empty(args.cycles)
    for k in range(args.cycles):
        tracemalloc.reset_peak()
        before = tracemalloc.get_traced_memory()[0]
        t0 = time.perf_counter()
        callback(msg)
        seconds[k] = time.perf_counter() - t0
        current, peak = tracemalloc.get_traced_memory()
        transient[k] = peak - before
        held[k] = current - before
    snapshot = tracemalloc.take_snapshot() if args.top else None
    tracemalloc.stop()
    # the same cycles without tracing: the time a cycle takes untraced
    plain = np.empty(args.cycles)
    for k in range(args.cycles):
        t0 = time.perf_counter()
        callback(msg)
        plain[k] = time.perf_counter() - t0
    if args.lines:
        print_lines(callback, msg, args.lines)
    errors = dict(node.stats.internal_errors)
    rejected = dict(node.stats.rejected)
    node.destroy_node()
    listener.destroy_node()
    rclpy.try_shutdown()

    print(
        f"inverse_dynamics joint_states cycle, Panda 7 joints, {args.cycles} cycles after {args.warmup}, "
        f"listener on ~/joint_efforts: {not args.no_listener}, load {os.getloadavg()[0]:.1f}\n"
    )
    print("| per cycle | median | p99 | max | mean |\n| --- | --: | --: | --: | --: |")
    for label, v, f in (
        ("transient bytes (tracemalloc peak above the start)", transient, ".0f"),
        ("bytes still held after it", held, ".1f"),
        ("wall time traced, µs", seconds * 1e6, ".1f"),
        ("wall time untraced, µs", plain * 1e6, ".1f"),
    ):
        cells = (np.median(v), np.percentile(v, 99), v.max(), v.mean())
        print(f"| {label} | " + " | ".join(format(c, f) for c in cells) + " |")
    print(f"\nrejected: {rejected or 'none'}; internal errors: {errors or 'none'}")
    if snapshot is not None:
        print(f"\nthe {args.top} lines holding most traced memory at the end (not per cycle):")
        for stat in snapshot.statistics("lineno")[: args.top]:
            print(f"  {stat}")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
