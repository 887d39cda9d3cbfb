"""What the tools share: rclpy started without its signal handlers, and a stop flag that
SIGINT and SIGTERM set (the tool finishes its work, e.g. closes a bag, and exits)."""

from __future__ import annotations

import signal
import sys
from types import FrameType

import rclpy
from rclpy.signals import SignalHandlerOptions

EXIT_BAD_INPUT = 2


class StopFlag:
    """Set by SIGINT or SIGTERM (or by the tool); the handler only sets it, so no write is cut."""

    def __init__(self) -> None:
        self.reason = ""
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, self._on_signal)

    def _on_signal(self, signum: int, _frame: FrameType | None) -> None:
        self.set(signal.Signals(signum).name)

    def set(self, reason: str) -> None:
        if not self.reason:
            self.reason = reason

    def __bool__(self) -> bool:
        return bool(self.reason)


def start_rclpy() -> None:
    """rclpy without its own SIGINT/SIGTERM handlers (the tools handle them with StopFlag)."""
    rclpy.init(args=[], signal_handler_options=SignalHandlerOptions.NO)


def fail(prog: str, message: str) -> int:
    """One error line on stderr; EXIT_BAD_INPUT."""
    print(f"{prog}: error: {message}", file=sys.stderr)
    return EXIT_BAD_INPUT
