"""Ending a node process on SIGINT/SIGTERM without racing rclpy's signal thread.

rclpy's signal handler (installed by `rclpy.init`) wakes a thread of its own, which triggers the
executors' guard conditions and then shuts every context down (`rcl_shutdown`). The main thread
wakes from the same signal at once and starts destroying wait sets, publishers and the node. Both
at the same time ended 31 of 60 trajectory_feedforward stops one second after start with SIGSEGV
in `Publisher.destroy` (and a CI run).
`uninstall_signal_handlers` (public `rclpy.signals` API since Humble) joins that thread, so
whatever shutdown it began has finished before the first entity is destroyed."""

from __future__ import annotations

import rclpy.signals


def join_signal_shutdown() -> None:
    """Wait until rclpy's signal thread has finished any shutdown a signal started, and stop it
    (a later SIGINT raises KeyboardInterrupt as in plain Python). Call it after spinning ends and
    before destroying anything; calling it again does nothing."""
    rclpy.signals.uninstall_signal_handlers()
