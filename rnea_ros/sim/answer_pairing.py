"""Pairing published joint states with the effort commands that answer them (no ROS).

A controller answers the state stamped s with one command (values v, no stamp) and repeats v with
s's stamp on an answer topic (the inverse_dynamics node's ~/joint_efforts). A command is paired
with an answer of equal values; each command and each answer is used once, oldest first, so
equal commands for different states (an arm at rest) are still told apart. Times are seconds of
any monotonic clock, stamps integers (ns).
"""

from __future__ import annotations

from collections import OrderedDict, deque


class AnswerMatcher:
    """Which published stamps have been answered, and how long each answer took."""

    def __init__(self, keep: int = 256) -> None:
        self._keep = keep
        self._sent: OrderedDict[int, float] = OrderedDict()  # stamp → publish time
        self._commands: deque[tuple[tuple[float, ...], float]] = deque(maxlen=keep)  # unpaired
        self._answers: deque[tuple[tuple[float, ...], int]] = deque(maxlen=keep)  # unpaired
        self._answered: OrderedDict[int, float] = OrderedDict()  # stamp → command arrival time
        self.latencies: list[float] = []  # publish → command arrival, s, in pairing order

    def published(self, stamp: int, t: float) -> None:
        """A state with `stamp` was published at t (again: the latency counts from the last time)."""
        self._sent[stamp] = t
        self._sent.move_to_end(stamp)
        while len(self._sent) > self._keep:
            self._sent.popitem(last=False)

    def command(self, values, t: float) -> None:
        """A command with `values` arrived at t."""
        values = tuple(values)
        for i, (v, stamp) in enumerate(self._answers):
            if v == values:
                del self._answers[i]
                self._pair(stamp, t)
                return
        self._commands.append((values, t))

    def answer(self, stamp: int, values) -> None:
        """The answer to the state `stamp` arrived, repeating the command's `values`."""
        values = tuple(values)
        for i, (v, t) in enumerate(self._commands):
            if v == values:
                del self._commands[i]
                self._pair(stamp, t)
                return
        self._answers.append((values, stamp))

    def _pair(self, stamp: int, t: float) -> None:
        if stamp in self._answered:
            return  # a second answer to a republished state
        self._answered[stamp] = t
        while len(self._answered) > self._keep:
            self._answered.popitem(last=False)
        sent = self._sent.get(stamp)
        if sent is not None:
            self.latencies.append(t - sent)

    def answered(self, stamp: int) -> bool:
        """Whether both the command answering `stamp` and its answer have arrived."""
        return stamp in self._answered


class TickAnswers:
    """Answers that carry the stamp of the state they answer, without a command to pair them
    with: behind ros2_control the commands reach the simulator from the controller manager, and
    the node answers joint_state_broadcaster's /joint_states, stamped with the controller
    manager's time. In lock-step that time is the simulator's own /clock, so a stamp names a
    step the simulator published (latency: from that publication, on its clock `t`); in real
    time it is the wall clock (latency: wall time of arrival − stamp)."""

    def __init__(self, keep: int = 256) -> None:
        self._keep = keep
        self._sent: OrderedDict[int, float] = OrderedDict()  # stamp → publish time
        self._answers: OrderedDict[int, tuple[float, ...]] = OrderedDict()  # stamp → values
        self.latencies: list[float] = []  # s, in arrival order

    def published(self, stamp: int, t: float) -> None:
        """A state with `stamp` was published at t (again: the latency counts from the first time)."""
        self._sent.setdefault(stamp, t)
        while len(self._sent) > self._keep:
            self._sent.popitem(last=False)

    def answer(self, stamp: int, values, t: float, wall_ns: int) -> None:
        """The answer to the state `stamp` (its `values`) arrived at t, wall clock `wall_ns`."""
        if stamp in self._answers:
            return
        self._answers[stamp] = tuple(values)
        while len(self._answers) > self._keep:
            self._answers.popitem(last=False)
        sent = self._sent.get(stamp)
        self.latencies.append(t - sent if sent is not None else (wall_ns - stamp) * 1e-9)

    def answered(self, stamp: int) -> bool:
        return stamp in self._answers

    def values(self, stamp: int) -> tuple[float, ...] | None:
        """The values answering `stamp`, None when none arrived (or too long ago)."""
        return self._answers.get(stamp)

    @property
    def seen(self) -> bool:
        """Whether any answer arrived."""
        return bool(self.latencies)
