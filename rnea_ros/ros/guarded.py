"""The safety net every callback goes through (`guarded`): an exception costs that one call, never
the process."""

from __future__ import annotations

import inspect
from collections.abc import Callable


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
