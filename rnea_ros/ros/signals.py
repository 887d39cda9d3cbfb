"""Ending a node process on SIGINT/SIGTERM without racing rclpy's signal thread.

rclpy's signal handler (installed by `rclpy.init`) wakes a thread of its own, which triggers the
executors' guard conditions and then shuts every context down (`rcl_shutdown`). The main thread
wakes from the same signal at once and starts destroying wait sets, publishers and the node. Both
at the same time ended 31 of 60 trajectory_feedforward stops one second after start with SIGSEGV
in `Publisher.destroy` (and a CI run).
`uninstall_signal_handlers` (public `rclpy.signals` API since Humble) joins that thread, so
whatever shutdown it began has finished before the first entity is destroyed.

The same thread can shut the context down between an executor's check that the context is ok and
its next rcl call (building a wait set, a guard condition): rcl then refuses the call ("the given
context is not valid"). That is a stop, not a fault: `shutdown_is_a_stop` turns it into rclpy's
`ExternalShutdownException`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import rclpy.signals
from rclpy.executors import ExternalShutdownException


def join_signal_shutdown() -> None:
    """Wait until rclpy's signal thread has finished any shutdown a signal started, and stop it
    (a later SIGINT raises KeyboardInterrupt as in plain Python). Call it after spinning ends and
    before destroying anything; calling it again does nothing."""
    rclpy.signals.uninstall_signal_handlers()


@contextlib.contextmanager
def shutdown_is_a_stop(context: Any) -> Iterator[None]:
    """An exception raised while `context` has been shut down (rcl refused a call because the
    context went down meanwhile) becomes ExternalShutdownException; with the context still ok
    it is raised as it is."""
    try:
        yield
    except ExternalShutdownException:
        raise
    except Exception as exc:
        if context.ok():
            raise
        raise ExternalShutdownException() from exc
