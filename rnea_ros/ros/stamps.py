"""Stamps as integer nanoseconds: builtin_interfaces/Time read and written, an rcl clock read
without building a Time."""

from __future__ import annotations

from builtin_interfaces.msg import Time as TimeMsg
from rclpy.clock import Clock

NS = 1_000_000_000


def stamp_ns(stamp: TimeMsg) -> int:
    """A builtin_interfaces/Time as integer nanoseconds (0 for an unset stamp)."""
    return stamp.sec * NS + stamp.nanosec


def clock_ns(clock: Clock) -> int:
    """`clock.now().nanoseconds` without building a Time (cheaper, on every message): the value of
    the same rcl clock, read through its handle as Clock.now does (`handle.get_now()`, rclpy's
    implementation API; Clock.now where a handle lacks it)."""
    get_now = getattr(clock.handle, "get_now", None)
    return clock.now().nanoseconds if get_now is None else get_now().nanoseconds


def set_stamp(stamp: TimeMsg, ns: int) -> None:
    """Write integer nanoseconds into a builtin_interfaces/Time."""
    stamp.sec, stamp.nanosec = divmod(int(ns), NS)
