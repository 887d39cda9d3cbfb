"""The dynamics kernels at a node's start-up: loaded from numba's disk cache, or compiled
(`prepare_kernels`), in the background when that takes long (`KernelsInBackground`)."""

from __future__ import annotations

import gc
import threading
import time
from collections.abc import Callable

from rclpy.clock import Clock, ClockType
from rclpy.node import Node

from rnea_ros.ros.throttled_log import say

# What the log says a cold compile of every kernel takes, in s (the figures: docs/performance.md,
# "Cold and warm start").
COLD_COMPILE_S = "20-60"


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
    say(node, f"kernels ready in {done.seconds:.2f} s ({how})")  # the node may be stopping


# How long start-up waits for the kernels before it goes on serving without them (s): longer than
# a warm cache takes to load (docs/performance.md, "Cold and warm start"), so a warm start is
# unchanged; a cold one compiles in the background.
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
            say(self._node, f"compiling the kernels failed ({self.error}): no command is sent", "error")
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
