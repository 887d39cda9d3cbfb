"""What every executable of the package shares on the ROS side: QoS profiles, stamp conversions,
throttled warnings, guarded callbacks, JointTrajectory parsing, kernels at start-up
and `run_node` (start, spin, Ctrl-C/SIGTERM, invalid parameters)."""

from __future__ import annotations

import array
import faulthandler
import gc
import inspect
import os
import sys
import threading
import time
from collections.abc import Callable
from typing import NoReturn, TypeVar

import numpy as np
import rclpy
from builtin_interfaces.msg import Time as TimeMsg
from rclpy.clock import Clock, ClockType
from rclpy.executors import ExternalShutdownException
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState
from std_msgs.msg import Header
from trajectory_msgs.msg import JointTrajectory

from rnea_ros.ros.processes import end_with_parent
from rnea_ros.ros.signals import join_signal_shutdown, shutdown_is_a_stop

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
COLD_COMPILE_S = "20-60"  # every kernel, empty numba cache, 2-core VM: 17 s quiet, 57 s loaded


def stamp_ns(stamp: TimeMsg) -> int:
    """A builtin_interfaces/Time as integer nanoseconds (0 for an unset stamp)."""
    return stamp.sec * NS + stamp.nanosec


def clock_ns(clock: Clock) -> int:
    """`clock.now().nanoseconds` without building a Time (about 2 µs instead of 10): the value of
    the same rcl clock, read through its handle as Clock.now does (`handle.get_now()`, rclpy's
    implementation API; Clock.now where a handle lacks it)."""
    get_now = getattr(clock.handle, "get_now", None)
    return clock.now().nanoseconds if get_now is None else get_now().nanoseconds


class ReusedJointState:
    """One JointState per output, refilled per cycle rather than built (a JointState costs about
    10 µs to build; publishing serializes it at once, so reuse is safe). Its effort field is one
    array.array refilled in place through a numpy view: no list or array is built per cycle."""

    __slots__ = ("msg", "values")

    def __init__(self) -> None:
        self.msg = JointState()
        self.values = InPlaceDoubles()

    def filled(self, header: Header, names: list[str], effort: np.ndarray) -> JointState:
        msg = self.msg
        msg.header = header
        if msg.name is not names:  # the names change with the model only
            msg.name = names
        msg.effort = self.values.filled(effort)
        return msg


class InPlaceDoubles:
    """An array.array('d') (what a message's float64[] field holds) refilled in place from a numpy
    vector: `filled(values)` copies through a numpy view of its buffer and returns it, allocating
    only when the length changes. Assign the result to the field (the setter keeps the object)."""

    __slots__ = ("array", "view")

    def __init__(self) -> None:
        self.array = array.array("d")
        self.view = np.frombuffer(self.array, dtype=np.float64)

    def filled(self, values: np.ndarray) -> array.array:
        if len(self.view) != len(values):
            self.array = array.array("d", bytes(8 * len(values)))
            self.view = np.frombuffer(self.array, dtype=np.float64)
        np.copyto(self.view, values)
        return self.array


def set_stamp(stamp: TimeMsg, ns: int) -> None:
    """Write integer nanoseconds into a builtin_interfaces/Time."""
    stamp.sec, stamp.nanosec = divmod(int(ns), NS)


def spin_default(node: Node) -> None:
    """Spin `node` with rclpy's default executor (`rclpy.spin`) until shutdown."""
    node.get_logger().info("spinning rclpy's default executor (RNEA_ROS_EXECUTOR=default)")
    with shutdown_is_a_stop(node.context):  # it builds a wait set in every wait
        rclpy.spin(node)


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
        with shutdown_is_a_stop(node.context):
            while node.context.ok():
                executor.spin_once(timeout_sec=0.1)
    finally:
        join_signal_shutdown()
        executor.shutdown()


N = TypeVar("N", bound=Node)

# RNEA_ROS_EXECUTOR values → how the nodes spin (README "Executor").
EXECUTOR_ENV = "RNEA_ROS_EXECUTOR"
EXECUTORS = ("waitset", "default", "events")
GC_FREEZE_ENV = "RNEA_ROS_GC_FREEZE"  # "0": run_node does not freeze the collector after start-up


def selected_spin() -> Callable[[Node], None]:
    """How run_node spins, from RNEA_ROS_EXECUTOR: "waitset" (the default: one wait set, see
    waitset_loop), "default" (rclpy.spin, rclpy's SingleThreadedExecutor) or "events" (rclpy's
    EventsExecutor, unbounded queue). An unknown value is reported and the default used."""
    from rnea_ros.ros.waitset_loop import spin_waitset

    name = os.environ.get(EXECUTOR_ENV, "") or EXECUTORS[0]
    if name == "default":
        return spin_default
    if name == "events":
        return spin_events
    if name != "waitset":
        print(
            f"[WARN] {EXECUTOR_ENV}={name!r} is not one of {', '.join(EXECUTORS)}: using waitset",
            file=sys.stderr,
        )
    return spin_waitset


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

    def reset(self) -> None:
        """Every reason may be logged again at once (a new model: what it lacks is news)."""
        self._last.clear()


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
    so that no control cycle compiles. A cold cache (a fresh install the set-up did not prepare,
    a read-only install, another user) is said with where it compiles and how to prepare it."""
    from rnea_ros.compiled.cache import cache_is_cold, cache_location
    from rnea_ros.compiled.entry_points import compile_kernels

    log = node.get_logger()
    if cache_is_cold():
        log.warn(
            f"numba's cache {cache_location()} has no compiled kernels for this installation: "
            f"compiling them now, about {COLD_COMPILE_S} s (once; `python3 -m rnea_ros.compiled.cache` "
            "prepares the cache beforehand)"
        )
    done = compile_kernels()
    how = f"from numba's cache {cache_location()}"
    if done.cold_cache:
        how = f"compiled into numba's cache {cache_location()}"
    if not done.numba:
        how = "numba is not installed: pure-Python kernels, about 40x slower"
    log.info(f"kernels ready in {done.seconds:.2f} s ({how})")


# How long start-up waits for the kernels before it goes on serving without them (s): a warm
# cache loads in about 1 s, so a warm start is unchanged; a cold one compiles in the background.
KERNEL_WAIT_S = 3.0
KERNEL_POLL_S = 0.05  # s between two looks (in the executor's thread) whether they are ready
KERNEL_PROGRESS_S = 10.0  # s between two "still compiling" log lines


class KernelsInBackground:
    """`prepare_kernels` in a thread of its own, so that a node whose kernels compile (a cold or
    unusable numba cache: tens of seconds) still serves its parameter services, diagnostics and
    timers meanwhile. Start-up waits up to `wait` s for it (a warm cache is done within, and
    nothing changes); otherwise `ready` turns True once every kernel is compiled, and a steady
    timer of the node calls `on_ready()` in the executor's thread then (and logs every
    KERNEL_PROGRESS_S that it is still compiling). The node must call no kernel before `ready`:
    that would compile it in the executor's thread and stall the services. When done, a process
    whose collector was frozen (`run_node`) freezes what compiling built as well."""

    def __init__(
        self, node: Node, on_ready: Callable[[], None] | None = None, wait: float = KERNEL_WAIT_S
    ) -> None:
        self.ready = False
        self.error = ""  # why compiling failed ("" while compiling or once ready)
        self._node = node
        self._on_ready = on_ready
        self._started = time.monotonic()
        self._next_progress = self._started + KERNEL_PROGRESS_S
        self._thread = threading.Thread(target=self._run, name="rnea_ros_kernels", daemon=True)
        self._thread.start()
        self._thread.join(wait)
        self._timer = None
        if not self.ready and not self.error:
            node.get_logger().warn(
                f"kernels still compiling after {wait:g} s: the parameter services answer meanwhile; "
                "the model is built and joint_states get their first command once the kernels are ready"
            )
            steady = Clock(clock_type=ClockType.STEADY_TIME)  # serves with use_sim_time and no /clock
            self._timer = node.create_timer(KERNEL_POLL_S, self._poll, clock=steady)

    def wait(self) -> bool:
        """Block until the kernels are compiled (or compiling failed): whether they are ready.
        For a transition that must end with everything in place (a lifecycle configure)."""
        self._thread.join()
        return self.ready

    def _run(self) -> None:
        try:
            prepare_kernels(self._node)
        except Exception as exc:  # noqa: BLE001 - said in the log; the node stays up, answering nothing
            self.error = f"{type(exc).__name__}: {exc}"
            self._node.get_logger().error(f"compiling the kernels failed ({self.error}): no command is sent")
            return
        if gc.isenabled() and gc.get_freeze_count() > 0:  # run_node froze start-up: this belongs to it
            gc.collect()
            gc.freeze()
        self.ready = True

    def _poll(self) -> None:
        if self.ready or self.error:
            timer, self._timer = self._timer, None
            if timer is not None:
                self._node.destroy_timer(timer)
            if self.ready and self._on_ready is not None:
                self._on_ready()
            return
        now = time.monotonic()
        if now >= self._next_progress:
            self._next_progress = now + KERNEL_PROGRESS_S
            self._node.get_logger().info(
                f"still compiling the kernels ({now - self._started:.0f} s so far, about "
                f"{COLD_COMPILE_S} s in all): joint_states not answered yet"
            )


def run_node(
    args: list[str] | None,
    make_node: Callable[[], N],
    name: str,
    spin: Callable[[N], None] | None = None,
) -> int:
    """Build a node and spin it until Ctrl-C or shutdown (`spin`, else as RNEA_ROS_EXECUTOR
    selects: `selected_spin`): 0, or 2 when the command line or the parameters are invalid (one
    line naming the culprit, no traceback)."""
    end_with_parent()  # done already when started through rnea_ros.ros.entry (its executables)
    # a fatal signal (SIGSEGV in a C extension) prints every thread's Python stack to stderr:
    # the node's log then says where it died
    faulthandler.enable()
    log = rclpy.logging.get_logger(name)
    try:
        spin_node = selected_spin() if spin is None else spin
        rclpy.init(args=args)
    except KeyboardInterrupt:  # Ctrl-C before the node exists: nothing to tear down
        join_signal_shutdown()
        rclpy.try_shutdown()
        _exit_after_interrupt()
    except Exception as exc:  # noqa: BLE001 - e.g. a params file rcl cannot parse
        hint = ""
        if "same type" in str(exc):
            hint = " (write every number of a list the same way, e.g. [0.0, 0.0, -9.81], not [0, 0, -9.81])"
        print(f"[FATAL] [{name}]: cannot start: {str(exc).splitlines()[0]}{hint}", file=sys.stderr)
        return 2
    node = None
    started = interrupted_in_start_up = False
    try:
        try:
            node = make_node()
        except ValueError as exc:  # an invalid parameter file: fail at launch, naming it
            if not rclpy.ok():
                raise
            log.fatal(f"cannot start, invalid parameter {exc}")
            return 2
        # What start-up built (imports, kernels, model: ~130,000 tracked objects) is never
        # garbage: out of the collector's sight, a full collection takes ~10 µs, not ~50 ms.
        # RNEA_ROS_GC_FREEZE=0 leaves it tracked (to measure what freezing changes).
        if os.environ.get(GC_FREEZE_ENV, "1") != "0":
            gc.collect()
            gc.freeze()
        started = True
        spin_node(node)
    except ExternalShutdownException:
        pass
    except KeyboardInterrupt:  # Ctrl-C, also during start-up
        interrupted_in_start_up = not started
    except Exception:
        # SIGTERM (or SIGINT) shut the context down under a start-up still under way, and rcl
        # refused to create the next entity (RCLError): a stop, not a fault
        if rclpy.ok():
            raise
    finally:
        join_signal_shutdown()  # rclpy's signal thread may be shutting the context down right now
        if node is not None:
            node.destroy_node()
        rclpy.try_shutdown()
    if interrupted_in_start_up:
        _exit_after_interrupt()
    return 0


def _exit_after_interrupt() -> NoReturn:
    """End the process with 0 after a Ctrl-C handled during start-up. Not by returning: when the
    KeyboardInterrupt passed through an `exec` of a string on its way (dataclasses build their
    methods so while a module is imported), CPython 3.11 marks it unhandled even though it was
    caught, and ends the interpreter by SIGINT (exit -2) after a clean return; 4 of 30 stops
    0.37-0.43 s after spawn did. (A Ctrl-C while spinning returns normally.)"""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)
