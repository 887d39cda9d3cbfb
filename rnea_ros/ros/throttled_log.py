"""Warnings throttled per reason (`ThrottledLog`)."""

from __future__ import annotations

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
