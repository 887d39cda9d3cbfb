"""A node's log lines: warnings throttled per reason (`ThrottledLog`), and lines that may come
after the context was shut down (`say`: a Ctrl-C's last words, a background thread's news)."""

from __future__ import annotations

import sys
import time

from rclpy.node import Node

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


def say(node: Node, text: str, level: str = "info") -> None:
    """`text` through the node's logger while its context is up; after a shutdown (rclpy's signal
    handler may have ended it meanwhile) on stderr in the same form, instead of rcl's "Failed to
    publish log message to rosout: publisher's context is invalid"."""
    if node.context.ok():
        try:
            getattr(node.get_logger(), level)(text)
            return
        except Exception:  # noqa: BLE001 - shut down between the check and the call
            pass
    print(f"[{level.upper()}] [{node.get_name()}]: {text}", file=sys.stderr, flush=True)
