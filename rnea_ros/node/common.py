"""What every executable of the package shares on the ROS side: QoS profiles, stamp conversions,
throttled warnings, guarded callbacks, JointTrajectory parsing, kernels at start-up
and `run_node` (start, spin, Ctrl-C/SIGTERM, invalid parameters)."""

from __future__ import annotations

import inspect
import sys
import time
from collections.abc import Callable
from typing import TypeVar

import numpy as np
import rclpy
from builtin_interfaces.msg import Time as TimeMsg
from rclpy.executors import ExternalShutdownException
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
from trajectory_msgs.msg import JointTrajectory

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
    arrive, without rebuilding a wait set per callback as the default executor does (less
    latency and CPU per message). Opt-in only: its event queue is unbounded, one event per
    arriving message whatever the QoS depth, so when messages come faster than the callbacks
    finish, memory grows without limit (a 20 kHz joint_states flood: +2.4 MiB/s here, while the
    default executor stays flat; rclcpp's EventsExecutor has the same limitation). Its spin()
    never runs a callback in this rclpy, so it is driven by spin_once in a loop, which serves
    timers too."""
    from rclpy.experimental import EventsExecutor

    executor = EventsExecutor(context=node.context)
    executor.add_node(node)
    node.get_logger().info("spinning rclpy's EventsExecutor (RNEA_ROS_EXECUTOR=events, unbounded queue)")
    try:
        while node.context.ok():
            executor.spin_once(timeout_sec=0.1)
    finally:
        executor.shutdown()


N = TypeVar("N", bound=Node)


LOG_PERIOD = 2.0  # s between two log lines of the same reason


class ThrottledLog:
    """Warnings at most once per LOG_PERIOD per reason, so a frequent reason hides no rare one
    (rclpy's own throttling is per call site, shared by every reason logged there)."""

    def __init__(self, node: Node) -> None:
        self._logger = node.get_logger()
        self._last: dict[str, float] = {}  # reason → when it was last logged (monotonic s)

    def warn(self, reason: str, text: str) -> None:
        now = time.monotonic()
        if now - self._last.get(reason, -LOG_PERIOD) >= LOG_PERIOD:
            self._last[reason] = now
            self._logger.warn(text)


def _positional_parameters(callback: Callable) -> int:
    """How many positional arguments `callback` takes (a large number for *args)."""
    count = 0
    for param in inspect.signature(callback).parameters.values():
        if param.kind == param.VAR_POSITIONAL:
            return 1 << 30
        if param.kind in (param.POSITIONAL_ONLY, param.POSITIONAL_OR_KEYWORD):
            count += 1
    return count


def guarded(where: str, callback: Callable, on_error: Callable[[str, str], None]) -> Callable:
    """`callback` such that an unexpected exception costs that one call: on_error(where, text)
    records it; nothing is raised into the executor, so no callback can end the process.

    The wrapper takes any arguments and passes on as many as `callback` has parameters: Kilted's
    EventsExecutor (rclpy 9) calls every timer callback that accepts an argument with a TimerInfo,
    Jazzy's (rclpy 7) with none; a timer callback without parameters works on both."""
    n = _positional_parameters(callback)

    def call(*args):
        try:
            return callback(*args[:n])
        except Exception as exc:  # noqa: BLE001 - the point: no callback may end the process
            on_error(where, f"{type(exc).__name__}: {exc}")
            return None

    return call


def trajectory_points(
    msg: JointTrajectory,
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, np.ndarray | None]:
    """(times (K,) s, positions, velocities or None, accelerations or None (K, n)) of a
    JointTrajectory; ValueError when a point's arrays do not match its joint_names."""
    n, points = len(msg.joint_names), msg.points

    def field_of(attr: str) -> np.ndarray | None:
        rows = [list(getattr(p, attr)) for p in points]
        if all(len(r) == 0 for r in rows):
            return None
        if any(len(r) != n for r in rows):
            raise ValueError(f"every point needs {n} {attr} (or none at all)")
        return np.array(rows, dtype=float)

    times = np.array([p.time_from_start.sec + p.time_from_start.nanosec * 1e-9 for p in points])
    positions = field_of("positions")
    if positions is None:
        raise ValueError("points have no positions")
    return times, positions, field_of("velocities"), field_of("accelerations")


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
