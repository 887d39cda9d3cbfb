"""The loop's period and state-age estimates (rnea_ros.control.loop_timing): closed forms of the
filter, and the feedback bound they feed (compute_efforts on the Panda) against the same bound
with a constant age."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rnea_ros import RobotModel, mass_matrix
from rnea_ros.control.effort_law import EffortLaw, Efforts, compute_efforts
from rnea_ros.control.loop_timing import ATTACK, RELEASE, update_delay, update_period
from rnea_ros.model.example_robots import example_urdf_path

MODEL = RobotModel.from_urdf(example_urdf_path("panda").read_text(), tip_link="panda_hand")
POSE = np.array([0.0, -0.6, 0.0, -2.2, 0.0, 1.6, 0.8])
KP = np.full(MODEL.nv, 200.0)
KD = 2.0 * np.sqrt(KP * np.diag(mass_matrix(MODEL, POSE)))  # critically damped per joint
PERIOD, USUAL, LATE = 1e-3, 0.3e-3, 1.5e-3  # s: states every 1 ms, 0.3 ms old; one 1.5 ms old


def test_a_longer_sample_is_followed_with_the_attack_time_constant() -> None:
    rise = -math.expm1(-PERIOD / ATTACK)  # for a state 1 ms after the previous one
    assert update_period(PERIOD, 2e-3) == pytest.approx(PERIOD - math.expm1(-0.2) * PERIOD, rel=1e-12)
    assert update_delay(USUAL, LATE, PERIOD) == pytest.approx(USUAL + rise * (LATE - USUAL), rel=1e-12)
    # sustained: 63 % of the way within ATTACK of state time, 95 % within 3 ATTACK
    delay = USUAL
    for k in range(1, int(round(3 * ATTACK / PERIOD)) + 1):
        delay = update_delay(delay, LATE, PERIOD)
        if k == int(round(ATTACK / PERIOD)):
            assert delay == pytest.approx(USUAL + (1 - math.exp(-1)) * (LATE - USUAL), rel=1e-9)
    assert delay == pytest.approx(USUAL + (1 - math.exp(-3)) * (LATE - USUAL), rel=1e-9)
    # states 5 ms apart: 39 % of the difference per state
    assert update_period(PERIOD, 5e-3) == pytest.approx(PERIOD + -math.expm1(-0.5) * 4e-3, rel=1e-12)


def test_a_shorter_sample_is_followed_slowly_and_the_first_or_after_a_gap_at_once() -> None:
    assert update_period(3e-3, PERIOD) == pytest.approx(3e-3 - RELEASE * 2e-3, rel=1e-12)
    assert update_delay(LATE, USUAL, PERIOD) == pytest.approx(LATE - RELEASE * (LATE - USUAL), rel=1e-12)
    period = 3e-3
    for _ in range(1000):
        period = update_period(period, PERIOD)
    assert period == pytest.approx(PERIOD, rel=1e-6)
    assert update_period(0.0, 4e-3) == 4e-3  # the first period
    assert update_delay(0.0, LATE) == LATE  # no previous state (dt NaN)
    assert update_delay(USUAL, LATE, 2.0) == LATE  # after a gap of 2 s
    # samples that say nothing leave the estimates alone; a negative age (clock skew) counts as 0
    assert update_period(PERIOD, -1e-3) == PERIOD and update_period(PERIOD, 5.0) == PERIOD
    assert update_period(PERIOD, math.nan) == PERIOD and update_delay(USUAL, math.nan, PERIOD) == USUAL
    assert update_delay(USUAL, -1.0, PERIOD) == pytest.approx(USUAL * (1 - RELEASE), rel=1e-12)


def _scales(ages: list[float], period: float = PERIOD) -> np.ndarray:
    """The feedback scale of each command (lowest joint) for states `period` apart, aged `ages`."""
    efforts = Efforts(MODEL, EffortLaw(kp=KP, kd=KD, max_phase_lag=0.5))
    zero = np.zeros(MODEL.nv)
    out = []
    for k, age in enumerate(ages):
        desired = (POSE + 0.01, zero, zero)
        compute_efforts(efforts, POSE, zero, desired, t=k * period, delay=age)
        out.append(efforts.feedback_scale.min())
    return np.array(out)


def test_one_late_state_keeps_the_gains_a_sustained_one_lowers_them_as_at_once() -> None:
    usual, late = _scales([USUAL] * 100)[-1], _scales([LATE] * 100)[-1]
    assert usual == 1.0 and late < 0.6  # the bound: as given at the usual age, lowered at 1.5 ms
    one = _scales([USUAL] * 50 + [LATE] + [USUAL] * 49)
    assert one.min() == 1.0  # the old estimate (up at once) gave this command `late`'s gains
    sustained = _scales([USUAL] * 50 + [LATE] * 150)
    k = 50 + int(round(3 * ATTACK / PERIOD))
    assert sustained[k] <= late * 1.1  # within 3 ATTACK: near the constant loop's scale
    assert sustained[-1] == pytest.approx(late, rel=1e-6)


@pytest.mark.parametrize("every", [2, 5])
def test_intermittent_late_states_lower_the_gains_below_their_mean_age_s(every: int) -> None:
    """Every `every`-th state 5 ms old, the others 0.3 ms: a loop with that timing lags by about
    the mean age, and the bound ends at most at the scale a constant mean age gives."""
    ages = [5e-3 if k % every == 0 else USUAL for k in range(400)]
    mean_age = float(np.mean(ages))
    assert _scales(ages)[-every:].max() <= _scales([mean_age] * 400)[-1]
