"""What every executable of the package shares on the ROS side: QoS profiles, stamp conversions
and `run_node` (start, spin, Ctrl-C/SIGTERM, invalid parameters)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TypeVar

import rclpy
from builtin_interfaces.msg import Time as TimeMsg
from rclpy.executors import ExternalShutdownException
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy

# Best effort (matches reliable and best-effort publishers), keep last 10: a gripper driver's
# message is not overwritten by the arm's next one; the node drains the queue each cycle, so the
# newest state still wins.
JOINT_STATES_QOS = QoSProfile(
    depth=10, reliability=ReliabilityPolicy.BEST_EFFORT, history=HistoryPolicy.KEEP_LAST
)
# The newest state only (a trajectory source that needs no other).
LATEST_STATE_QOS = QoSProfile(
    depth=1, reliability=ReliabilityPolicy.BEST_EFFORT, history=HistoryPolicy.KEEP_LAST
)
# robot_description as robot_state_publisher offers it: reliable, latched.
DESCRIPTION_QOS = QoSProfile(
    depth=1, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL
)
NS = 1_000_000_000


def stamp_ns(stamp: TimeMsg) -> int:
    """A builtin_interfaces/Time as integer nanoseconds (0 for an unset stamp)."""
    return stamp.sec * NS + stamp.nanosec


def set_stamp(stamp: TimeMsg, ns: int) -> None:
    """Write integer nanoseconds into a builtin_interfaces/Time."""
    stamp.sec, stamp.nanosec = divmod(int(ns), NS)


def spin_events(node: Node) -> None:
    """Spin `node` with rclpy's EventsExecutor until shutdown: callbacks run as their events
    arrive, without rebuilding a wait set per callback as the default executor does (about half
    its latency, a third of its p99). Its spin() never runs a callback in this rclpy, so it is
    driven by spin_once in a loop, which serves timers too."""
    from rclpy.experimental import EventsExecutor

    executor = EventsExecutor(context=node.context)
    executor.add_node(node)
    try:
        while node.context.ok():
            executor.spin_once(timeout_sec=0.1)
    finally:
        executor.shutdown()


N = TypeVar("N", bound=Node)


def prepare_kernels(node: Node) -> None:
    """Compile (or load from numba's disk cache) every dynamics kernel before the node subscribes,
    so that no control cycle compiles; logged before and after, since a cold cache takes seconds."""
    from ..compiled import compile_kernels

    log = node.get_logger()
    log.info("loading the compiled dynamics kernels (an empty numba cache compiles them once: about 10 s)")
    done = compile_kernels()
    how = "compiled, the numba cache was cold" if done.cold_cache else "from numba's disk cache"
    if not done.numba:
        how = "numba is not installed: pure-Python kernels, about 40x slower"
    log.info(f"kernels ready in {done.seconds:.2f} s ({how})")


def run_node(
    args: list[str] | None,
    make_node: Callable[[], N],
    name: str,
    spin: Callable[[N], None] = rclpy.spin,
) -> int:
    """Build a node and spin it until Ctrl-C or shutdown: 0, or 2 when the command line or the
    parameters are invalid (one line naming the culprit, no traceback)."""
    log = rclpy.logging.get_logger(name)
    try:
        rclpy.init(args=args)
    except Exception as exc:  # noqa: BLE001 - e.g. a params file rcl cannot parse
        hint = ""
        if "same type" in str(exc):
            hint = " (write every number of a list the same way, e.g. [0.0, 0.0, -9.81], not [0, 0, -9.81])"
        print(f"[FATAL] [{name}]: cannot start: {str(exc).splitlines()[0]}{hint}", file=sys.stderr)
        return 2
    node = None
    try:
        try:
            node = make_node()
        except ValueError as exc:  # an invalid parameter file: fail at launch, naming it
            log.fatal(f"cannot start, invalid parameter {exc}")
            return 2
        spin(node)
    except (KeyboardInterrupt, ExternalShutdownException):  # Ctrl-C also during start-up
        pass
    finally:
        if node is not None:
            node.destroy_node()
        rclpy.try_shutdown()
    return 0
