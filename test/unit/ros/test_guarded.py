"""rnea_ros.ros.guarded: the safety net every callback goes through (no ROS processes)."""

from __future__ import annotations

from rnea_ros.ros.guarded import guarded


class Timers:
    def __init__(self) -> None:
        self.calls: list[tuple] = []

    def tick(self) -> None:
        self.calls.append(())

    def on_message(self, msg: object) -> None:
        self.calls.append((msg,))

    def fails(self) -> None:
        raise RuntimeError("boom")


def test_extra_arguments_are_dropped_as_kilted_events_executor_passes_a_timer_info() -> None:
    errors: list[tuple[str, str]] = []
    timers = Timers()
    tick = guarded("tick", timers.tick, lambda where, text: errors.append((where, text)))
    tick()  # Jazzy: timers are called without arguments
    tick(object())  # Kilted's EventsExecutor: with a TimerInfo
    on_message = guarded("msg", timers.on_message, lambda where, text: errors.append((where, text)))
    on_message("m")
    assert timers.calls == [(), (), ("m",)] and errors == []


def test_an_exception_is_recorded_and_not_raised() -> None:
    errors: list[tuple[str, str]] = []
    fails = guarded("timer", Timers().fails, lambda where, text: errors.append((where, text)))
    assert fails(object()) is None
    assert errors == [("timer", "RuntimeError: boom")]
    varargs = guarded("any", lambda *args: len(args), lambda where, text: None)
    assert varargs(1, 2, 3) == 3
