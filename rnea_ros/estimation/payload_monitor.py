"""When a controller estimates its payload, and how the estimate goes into the model (no ROS):
the inverse_dynamics node's `payload.estimation` (on_request, auto), cycle by cycle.

Every cycle feeds the observer's external torques to a `PayloadStream` (the last `max_window`
seconds and more are kept). Then:

- `request(t)` (on_request, and auto too): an estimate over the last `window` seconds at once.
- auto: the collision flag (|r_i| above its threshold: the wrench the tip exerts changed) held
  for `hold` seconds starts a collection (a shorter flag is a collision: ignored); from `window`
  seconds on, an estimate is tried every RETRY seconds until one passes or `max_window` seconds
  have gone by (only "too little rotation" is retried: the arm may still turn the load). A flag
  that drops during the collection ends it: a contact, not a load.
- auto, refinement: once a load's estimate is in (not a removal) and while the flag stays
  down, more seconds are collected (as many as before: the data double each time, `window` at
  least) and the load re-estimated from all its windows together (the targets are absolute:
  each window's own model payload added back), until they add up to `max_window` seconds; each
  refined estimate is blended in as the first. Longer data pin down the centre of mass along
  gravity better (the load's unmodelled inertia and a short window's small rotation bias it by
  millimetres).
- An accepted estimate is blended in over `blend` seconds: the payload the model carries goes
  from the old one to the new one linearly in (mass, first moment, inertia about the link origin)
  (`payload.blend_payloads`: a rigid body all along), a step every BLEND_PERIOD seconds, so that
  the command changes in many small steps instead of one. An estimate of no payload (the load
  released) removes it the same way.
- After a blend, or a refusal, auto waits until the flag has been down (the observer restarts
  with every model change and needs its time constants to settle): one change, one estimate.

The estimate is of the whole load on the link: the observer sees what the model misses, so the
payload the model carries on that link is added back (`PayloadStream.estimate`'s `current`).

Times in s of the caller's clock (the joint_states stamps).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from rnea_ros.errors import PayloadRefused, RneaError
from rnea_ros.estimation.payload import (
    PayloadEstimate,
    PayloadLimits,
    blend_payloads,
    fit_payload,
    payload_parameters,
)
from rnea_ros.estimation.payload_stream import PayloadStream
from rnea_ros.model.robot_model import Payload

__all__ = ["BLEND_PERIOD", "MODES", "RETRY", "MonitorSettings", "Outcome", "PayloadMonitor"]

MODES = ("off", "on_request", "auto")
RETRY = 0.1  # s between two attempts while the rotation is too small
BLEND_PERIOD = 0.005  # s between two payloads of a blend
SAMPLE_RATE = 2000.0  # Hz: the stream holds (max_window + margin) s at this rate
HISTORY = 20  # outcomes kept


@dataclass(frozen=True)
class MonitorSettings:
    """The node's payload.* estimation parameters (s, and the estimate's limits)."""

    mode: str = "off"
    window: float = 0.5
    max_window: float = 3.0
    hold: float = 0.15
    blend: float = 0.3
    limits: PayloadLimits = field(default_factory=PayloadLimits)

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise RneaError(f"mode must be one of {MODES}, got '{self.mode}'")
        if not (0 < self.window <= self.max_window) or self.hold < 0 or self.blend < 0:
            raise RneaError("need 0 < window <= max_window, hold >= 0, blend >= 0")


@dataclass(frozen=True)
class Outcome:
    """What an estimation ended with, at time `t`: `estimate` (applied) or a refusal (`reason`, a
    payload.REASONS entry or "busy", "no_data", "restart", "cancelled"), `text` for people; `source`
    "auto", "refined" (auto, more data for the same load) or "request"."""

    t: float
    source: str
    text: str
    estimate: PayloadEstimate | None = None
    reason: str = ""

    @property
    def refused(self) -> bool:
        return self.estimate is None


class PayloadMonitor:
    """One link's payload estimation; `cycle` once per control cycle returns the payload to put in
    the model now (a blend's step) or None; `outcomes` collects what happened (the node logs and
    reports them)."""

    def __init__(self, stream: PayloadStream, settings: MonitorSettings) -> None:
        self.stream = stream
        self.settings = settings
        self.state = "idle"  # idle | holding | collecting | blending | settling | refining
        self.armed = False  # auto: the flag has been down since the last estimate
        self.outcomes: list[Outcome] = []  # new ones, drained by the caller
        self.history: list[Outcome] = []  # the last HISTORY ones
        self.last: Outcome | None = None
        self.estimates = 0
        self.refusals = 0
        self.ignored_collisions = 0
        self.pending_final: Payload | None = None  # a blend finished: the payload to announce
        self._since = 0.0  # start of the flag (holding) or of the collection
        self._next_try = 0.0
        # the load's windows: (W, targets, directions, seconds, the observer's r)
        self._data: list[tuple[np.ndarray, np.ndarray, np.ndarray, float, np.ndarray]] = []
        self._refine = False  # the blend in progress is of a load to refine afterwards
        # (start, from, to, time of the last step) while blending
        self._blend: tuple[float, Payload | None, Payload | None, float] | None = None

    @property
    def link(self) -> str:
        return self.stream.link

    def restart(self, why: str = "", t: float = math.nan) -> None:
        """The observer restarted (`why`: a model change, a gap): forget the samples; a collection
        in progress ends (an outcome says why, unless a blend of ours made the change)."""
        self.stream.reset()
        if self.state == "refining":
            self.state, self._since = "settling", t  # a fresh window after the restart
        if self.state in ("holding", "collecting"):
            if self.state == "collecting":
                self._finish(
                    Outcome(
                        t,
                        "auto",
                        f"collection abandoned: {why or 'the observer restarted'}",
                        reason="restart",
                    )
                )
            self.state = "idle"
            self.armed = False

    def cancel(self, why: str, t: float) -> None:
        """The payload was set otherwise (parameters, ~/payload): a blend or collection ends."""
        if self.state in ("blending", "holding", "collecting", "refining"):
            self._finish(Outcome(t, "auto", f"estimation cancelled: {why}", reason="cancelled"))
        self.state = "idle"
        self.armed = False
        self._blend = None
        self._data = []

    def cycle(
        self, t: float, q: np.ndarray, qd: np.ndarray, residual: np.ndarray, collision: bool,
        current: Payload | None,
    ) -> Payload | None:  # fmt: skip
        """One cycle at time t: the state and the observer's r (model order), its collision flag
        and the payload the model carries now (None: none). Returns a payload to apply now."""
        self.stream.eager = self.settings.mode == "auto" and self.state != "idle"
        self.stream.update(t, q, qd, residual)
        if self.state == "blending":
            return self._blend_step(t)
        if self.state == "settling":
            if t - self._since >= max(self.stream.warmup, self.settings.hold):
                refine = (
                    self._refine
                    and self.settings.mode == "auto"
                    and self._collected() < self.settings.max_window
                )
                self.state, self._since = ("refining", t) if refine else ("idle", self._since)
                self.armed = False
            return None
        if self.settings.mode != "auto":
            self.state = "idle"
            return None
        if self.state == "refining":
            if collision:  # something changed again: a new estimation from scratch
                self.state, self._since, self._data = "holding", t, []
                self.stream.skip_before(t - self.stream.warmup)
                return None
            if t - self._since < self._refine_window():
                return None
            try:
                estimate = self._estimate(self._since, current)
            except PayloadRefused as exc:
                self.state, self._data = "idle", []
                self._finish(Outcome(t, "auto", f"refinement refused: {exc}", reason=exc.reason))
                return None
            return self._accept(t, "refined", estimate, current)
        if self.state == "idle":
            if not collision:
                self.armed = True
            elif self.armed:
                self.state, self._since = "holding", t
                self.stream.skip_before(t - self.stream.warmup)  # not an idle stretch's backlog
            return None
        if self.state == "holding":
            if not collision:
                self.state = "idle"
                self.ignored_collisions += 1
                return None
            if t - self._since >= self.settings.hold:
                self.state, self._since, self._next_try = "collecting", t, t + self.settings.window
            return None
        # collecting
        if not collision:
            self.state, self.armed = "idle", True
            self._finish(
                Outcome(
                    t, "auto",
                    f"the external wrench went away {t - self._since:.2f} s into the window: a contact, "
                    "not a load (no estimate)",
                    reason="changing",
                )
            )  # fmt: skip
            return None
        if t < self._next_try:
            return None
        try:
            self._data = []  # a new load
            estimate = self._estimate(self._since, current)
        except PayloadRefused as exc:
            self._data = []
            if exc.reason == "rotation" and t - self._since < self.settings.max_window:
                self._next_try = t + RETRY
                return None
            self.state, self.armed = "idle", False
            self._finish(Outcome(t, "auto", f"refused: {exc}", reason=exc.reason))
            return None
        return self._accept(t, "auto", estimate, current)

    def request(self, t: float, current: Payload | None) -> Outcome:
        """An estimate over the last `window` seconds, now (the service): its outcome; accepted,
        it is blended in from the next cycle."""
        window = self.settings.window
        if self.state == "blending":
            outcome = Outcome(t, "request", "busy: an estimate is being blended in", reason="busy")
        elif self.stream.span() < window - 1e-9:
            outcome = Outcome(
                t, "request",
                f"not enough data: {self.stream.span():.2f} s since the observer (re)started, the window "
                f"is {window:g} s (payload.estimation_window)",
                reason="no_data",
            )  # fmt: skip
        else:
            try:
                estimate = self.stream.estimate(t - window, current, self.settings.limits)
            except PayloadRefused as exc:
                outcome = Outcome(t, "request", f"refused: {exc}", reason=exc.reason)
            else:
                self._accept(t, "request", estimate, current)
                return self.last  # type: ignore[return-value]
        self._finish(outcome)
        return outcome

    def _estimate(self, since: float, current: Payload | None) -> PayloadEstimate:
        """The load from the stream's samples since `since` and the load's earlier windows (kept
        when the estimate passes). PayloadRefused with the reason."""
        t, w, r, directions = self.stream.samples(since)
        span = float(t[-1] - t[0]) if t.size else 0.0
        window = (w, r + w @ payload_parameters(current), directions, span, r)
        data = [*self._data, window]
        estimate = fit_payload(
            np.concatenate([d[0] for d in data]),
            np.concatenate([d[1] for d in data]),
            np.concatenate([d[2] for d in data]),
            self.link,
            observed=np.concatenate([d[4] for d in data]),
            limits=self.settings.limits,
        )
        self._data = data
        return estimate

    def _collected(self) -> float:
        """Seconds of data behind the load's estimate."""
        return sum(d[3] for d in self._data)

    def _refine_window(self) -> float:
        """The next refinement's window: as long as all before it (the data double each time), at
        least `window`, at most what is left of `max_window`."""
        collected = self._collected()
        return max(self.settings.window, min(collected, self.settings.max_window - collected))

    def _accept(
        self, t: float, source: str, estimate: PayloadEstimate, current: Payload | None
    ) -> Payload | None:
        target = estimate.payload() if estimate.present else None
        self._refine = source != "request" and estimate.present
        if not self._refine:
            self._data = []
        self.estimates += 1
        self._finish(Outcome(t, source, estimate.text(), estimate))
        old = current if current is not None and current.mass > 0 else None
        self.state, self.armed = "blending", False
        self._blend = (t, old, target, -math.inf)
        return self._blend_step(t)

    def _blend_step(self, t: float) -> Payload | None:
        assert self._blend is not None
        t0, old, new, last = self._blend
        blend = self.settings.blend
        s = 1.0 if blend <= 0 else min((t - t0) / blend, 1.0)
        if s < 1.0 and t - last < BLEND_PERIOD:
            return None
        self._blend = (t0, old, new, t)
        payload = blend_payloads(old, new, s, self.link)
        if s >= 1.0:
            self.state, self._since, self._blend = "settling", t, None
            self.pending_final = payload
        return payload

    def _finish(self, outcome: Outcome) -> None:
        if outcome.refused and outcome.reason != "cancelled":
            self.refusals += 1
        self.last = outcome
        self.outcomes.append(outcome)
        self.history.append(outcome)
        del self.history[:-HISTORY]
