"""The loop's period and state age as the stability bounds read them (no ROS).

The friction bound (rnea_ros.friction.compensation) scales with the `joint_states` period T and
the feedback bound (rnea_ros.control.feedback_bound) with the lag T/2 + age. Both are bounds on
a loop's *sustained* timing: a PD's phase margin and a sample's energy balance are lost when
states keep coming slower or older, not when one of them does. One late state (the node's own
thread busy for a millisecond: a model rebuilt, a regressor computed) changes the loop's phase at
its crossover by a fraction of a degree, but a bound that took it as the new timing would lower
the gains for that command at once and step it (issue 38: 7.7 N m in one 1 ms step).

So each estimate rises towards a longer sample with a time constant ATTACK of state time
(1 − exp(−dt/ATTACK) of the difference, dt the time since the previous state) and falls towards a
shorter one by RELEASE of the difference per sample. With states 1 ms apart one state 1 ms late
moves the age estimate by 0.1 ms; a sustained change is followed to 63 % within ATTACK and 95 %
within 3 ATTACK (states 5 ms apart: 39 % per state). A sequence of late states counts in full:
with every other state 5 ms old the estimate settles near the late states' age, above their mean.
The first sample, or one after a gap of over a second, is taken at once.

Units: s."""

from __future__ import annotations

import math

ATTACK = 0.01  # s of state time: the rise time constant towards a longer period or age
RELEASE = 0.02  # of the difference per sample towards a shorter one

__all__ = ["ATTACK", "RELEASE", "update_delay", "update_period"]


def _follow(estimate: float, sample: float, dt: float) -> float:
    if sample <= estimate:
        return estimate + RELEASE * (sample - estimate)
    if not 0.0 < dt <= 1.0:  # no previous state, or a gap: nothing to weigh the sample against
        return sample
    return estimate + -math.expm1(-dt / ATTACK) * (sample - estimate)


def update_period(period: float, dt: float) -> float:
    """The period estimate after a state dt s after the previous one: towards a longer dt with
    the time constant ATTACK, towards a shorter one by RELEASE per sample; the first dt (period
    0) at once. dt outside (0, 1] s (a gap, a reordered stamp) leaves it unchanged."""
    if not 0.0 < dt <= 1.0:
        return period
    if period <= 0.0:
        return dt
    return _follow(period, dt, dt)


def update_delay(delay: float, age: float, dt: float = math.nan) -> float:
    """The state-age estimate after a command computed `age` s after its state's stamp, dt s of
    state time after the previous one (NaN: none, the age is taken at once if longer). A
    negative age (clock skew) counts as 0; a non-finite one leaves it unchanged."""
    if not math.isfinite(age):
        return delay
    return _follow(delay, max(age, 0.0), dt)
