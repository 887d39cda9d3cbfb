"""The desired state's trajectory rules (joint_trajectory_controller's timing and joining) over
random joint subsets of a 7-joint model, random stamps (zero, past, future) and random sequences
of trajectories, against an independent per-joint reference: each segment a polynomial solved
from its boundary conditions (np.linalg.solve), not the sampler's closed-form coefficients."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rnea_ros.errors import RneaError, TrajectoryInPastError
from rnea_ros.trajectory.desired_state import MAX_STATE_AGE, DesiredState, sample_time_ns

NV = 7
NS = 1_000_000_000
MS10 = 10_000_000  # stamps, receipts and point times on a 10 ms grid: every join lasts ≥ 10 ms
T0 = 1000 * NS  # node clock at the first event


# --- the independent reference ------------------------------------------------------------------


def _segment(t_a: float, t_b: float, a: tuple, b: tuple, kind: str):
    """Polynomial through (t_a, a) and (t_b, b), a/b = (q, q̇, q̈), matching q only (linear),
    q and q̇ (cubic) or all three (quintic): its coefficients in s = t - t_a."""
    d = t_b - t_a
    order = {"linear": 1, "cubic": 3, "quintic": 5}[kind]
    rows, rhs = [], []
    for s, state in ((0.0, a), (d, b)):
        for der in range((order + 1) // 2):
            rows.append([_deriv_power(i, der, s) for i in range(order + 1)])
            rhs.append(state[der])
    return np.linalg.solve(np.array(rows), np.array(rhs))


def _deriv_power(i: int, der: int, s: float) -> float:
    """d^der/ds^der of s^i."""
    if der > i:
        return 0.0
    c = 1.0
    for k in range(der):
        c *= i - k
    return c * s ** (i - der)


def _eval(c: np.ndarray, s: float) -> tuple[float, float, float]:
    return tuple(sum(_deriv_power(i, der, s) * c[i] for i in range(len(c))) for der in range(3))  # type: ignore[return-value]


@dataclass
class Piecewise:
    """One joint's desired state from a trajectory: knots (ns, (q, q̇, q̈)), held after the last."""

    knots: list[tuple[int, tuple[float, float, float]]]
    kind: str

    def __call__(self, t_ns: int) -> tuple[float, float, float]:
        knots = self.knots
        if t_ns >= knots[-1][0]:
            return (knots[-1][1][0], 0.0, 0.0)
        if t_ns < knots[0][0]:
            return (knots[0][1][0], 0.0, 0.0)
        k = max(i for i, (t, _) in enumerate(knots) if t <= t_ns)
        (ta, a), (tb, b) = knots[k], knots[k + 1]
        c = _segment(0.0, (tb - ta) * 1e-9, a, b, self.kind)
        return _eval(c, (t_ns - ta) * 1e-9)


def _hold(x: float):
    return lambda t_ns: (x, 0.0, 0.0)


@dataclass
class Sent:
    joints: list[int]
    times: np.ndarray  # s
    positions: np.ndarray
    velocities: np.ndarray | None
    accelerations: np.ndarray | None
    stamp: int  # 0 = now

    @property
    def kind(self) -> str:
        return "linear" if self.velocities is None else "cubic" if self.accelerations is None else "quintic"

    def point(self, k: int, col: int) -> tuple[float, float, float]:
        v = 0.0 if self.velocities is None else self.velocities[k, col]
        a = 0.0 if self.accelerations is None else self.accelerations[k, col]
        return (self.positions[k, col], v, a)


class Reference:
    """The rules written out per joint: None = free (measured), else a function of time."""

    def __init__(self) -> None:
        self.joint: list = [None] * NV
        self.waiting: list[tuple[Sent, int, int]] = []  # (trajectory, start, takeover)

    def receive(self, sent: Sent, now: int) -> bool:
        start = sent.stamp or now
        if start + round(sent.times[-1] * NS) < now:
            return False
        if self.waiting and self.waiting[-1][2] > now:  # not started: replaced
            self.waiting.pop()
        self.waiting.append((sent, start, max(start, now)))  # started ones take over first
        return True

    def cancel(self) -> None:
        self.joint, self.waiting = [None] * NV, []

    def state(self, j: int, t: int, q, qd) -> tuple[float, float, float]:
        f = self.joint[j]
        return (q[j], qd[j], 0.0) if f is None else f(t)

    def sample(self, t: int, q, qd) -> np.ndarray:
        while self.waiting and t >= self.waiting[0][2]:
            self._take_over(*self.waiting.pop(0), q, qd)
        return np.array([self.state(j, t, q, qd) for j in range(NV)]).T

    def _take_over(self, sent: Sent, start: int, at: int, q, qd) -> None:
        now = [self.state(j, at, q, qd) for j in range(NV)]
        for j in range(NV):
            if self.joint[j] is not None and j not in sent.joints:
                self.joint[j] = _hold(now[j][0])
        times_ns = [start + round(t * NS) for t in sent.times]
        for col, j in enumerate(sent.joints):
            knots = [(t, sent.point(k, col)) for k, t in enumerate(times_ns)]
            if times_ns[0] > at:  # joined from the desired state at the takeover
                knots.insert(0, (at, now[j]))
            self.joint[j] = Piecewise(knots, sent.kind)


# --- strategies ----------------------------------------------------------------------------------


@st.composite
def trajectories(draw, now: int) -> Sent:
    joints = draw(st.permutations(range(NV)))[: draw(st.integers(1, NV))]
    n_points = draw(st.integers(1, 3))
    first = draw(st.integers(0, 40))  # ×10 ms
    gaps = draw(st.lists(st.integers(5, 40), min_size=n_points - 1, max_size=n_points - 1))
    times = np.cumsum([first, *gaps]) * (MS10 / NS)
    kind = draw(st.sampled_from(["linear", "cubic", "quintic"]))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    shape = (n_points, len(joints))
    p = rng.uniform(-1.5, 1.5, shape)
    v = None if kind == "linear" else rng.uniform(-1.0, 1.0, shape)
    a = None if kind != "quintic" else rng.uniform(-2.0, 2.0, shape)
    which = draw(st.sampled_from(["zero", "past", "future"]))
    offset = draw(st.integers(1, 60)) * MS10
    stamp = {"zero": 0, "past": now - offset, "future": now + offset}[which]
    return Sent(list(joints), times, p, v, a, stamp)


def _send(desired: DesiredState, sent: Sent, now: int) -> bool:
    try:
        desired.receive(
            sent.joints,
            sent.times,
            sent.positions,
            sent.velocities,
            sent.accelerations,
            start_ns=sent.stamp,
            now_ns=now,
        )
    except TrajectoryInPastError:
        return False
    return True


def _close(got, want, scale: float = 1.0) -> bool:
    return np.allclose(got, want, rtol=1e-7, atol=1e-7 * scale)


# --- tests ---------------------------------------------------------------------------------------


@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_random_sequences_match_the_reference(data) -> None:
    """Trajectories, cancels and samples in any order: every sampled q, q̇, q̈ and the driven
    mask equal the reference's."""
    desired, ref = DesiredState(NV), Reference()
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    now = T0
    for _ in range(data.draw(st.integers(1, 6))):
        if data.draw(st.integers(0, 9)) == 0:
            desired.cancel()
            ref.cancel()
        else:
            sent = data.draw(trajectories(now))
            accepted = _send(desired, sent, now)
            assert accepted == ref.receive(sent, now)
        span = data.draw(st.integers(0, 80)) * MS10
        for t in sorted(rng.integers(now, now + span + 1, size=4)):
            q, qd = rng.uniform(-2, 2, NV), rng.uniform(-2, 2, NV)
            want = ref.sample(int(t), q, qd)
            *got, driven = desired.sample(int(t), q, qd)
            scale = 1.0 + float(np.abs(want).max())
            for row in range(3):
                assert _close(got[row], want[row], scale), (row, t - now, got[row], want[row])
            assert driven.tolist() == [int(f is not None) for f in ref.joint]
        now += span


@settings(max_examples=100, deadline=None)
@given(data=st.data())
def test_nothing_changes_before_the_start_then_the_join_is_continuous(data) -> None:
    """A future trajectory: until its stamp the desired state is the one without it (a twin that
    never received it); at the stamp position is continuous for every joint, velocity too for
    cubic and quintic joins, acceleration too for quintic; each point is reached at its time."""
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    q, qd = rng.uniform(-2, 2, NV), rng.uniform(-2, 2, NV)
    with_it, twin = DesiredState(NV), DesiredState(NV)
    now = T0
    first = data.draw(trajectories(now))
    first.stamp = 0  # started: the new one cannot replace it (it would one still to start)
    assert _send(with_it, first, now) and _send(twin, first, now)
    now += data.draw(st.integers(0, 50)) * MS10
    sent = data.draw(trajectories(now))
    sent.stamp = now + data.draw(st.integers(1, 60)) * MS10
    assert _send(with_it, sent, now)
    for t in np.linspace(now, sent.stamp - 1, 7).astype(np.int64):
        a, b = with_it.sample(int(t), q, qd), twin.sample(int(t), q, qd)
        for x, y in zip(a, b, strict=True):
            assert np.array_equal(x, y)
    before = twin.sample(sent.stamp, q, qd)
    at = with_it.sample(sent.stamp, q, qd)
    joined = sent.times[0] > 0
    others = [j for j in range(NV) if j not in sent.joints]
    assert _close(at[0][others], before[0][others])  # held where they were, or measured
    assert _close(at[0][sent.joints], before[0][sent.joints] if joined else sent.positions[0])
    if joined and sent.kind != "linear":
        assert _close(at[1][sent.joints], before[1][sent.joints])
    if joined and sent.kind == "quintic":
        assert _close(at[2][sent.joints], before[2][sent.joints])
    for k, t in enumerate(sent.times[:-1]):
        got = with_it.sample(sent.stamp + round(t * NS), q, qd)
        assert _close(got[0][sent.joints], sent.positions[k])
        if sent.velocities is not None:
            assert _close(got[1][sent.joints], sent.velocities[k], 10.0)
    end = with_it.sample(sent.stamp + round(sent.times[-1] * NS) + 5 * NS, q, qd)
    assert np.array_equal(end[0][sent.joints], sent.positions[-1])
    assert not end[1][sent.joints].any() and not end[2][sent.joints].any()


@settings(max_examples=100, deadline=None)
@given(data=st.data())
def test_partial_trajectory_holds_the_other_targets_and_leaves_free_joints_free(data) -> None:
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    desired, now = DesiredState(NV), T0
    first = data.draw(trajectories(now))
    first.stamp = 0
    assert _send(desired, first, now)
    now += data.draw(st.integers(0, 100)) * MS10  # the first still running or done
    q, qd = rng.uniform(-2, 2, NV), rng.uniform(-2, 2, NV)
    at_switch = desired.sample(now, q, qd)
    second = data.draw(trajectories(now))
    second.stamp = 0
    assert _send(desired, second, now)
    held = [j for j in first.joints if j not in second.joints]
    free = [j for j in range(NV) if j not in first.joints + second.joints]
    for t in np.linspace(now, now + 3 * NS, 9).astype(np.int64):
        q2, qd2 = rng.uniform(-2, 2, NV), rng.uniform(-2, 2, NV)
        got_q, got_qd, got_qdd, driven = desired.sample(int(t), q2, qd2)
        assert np.array_equal(got_q[held], at_switch[0][held])
        assert not got_qd[held].any() and not got_qdd[held].any()
        assert np.array_equal(got_q[free], q2[free]) and np.array_equal(got_qd[free], qd2[free])
        assert not got_qdd[free].any()
        assert sorted(np.flatnonzero(driven)) == sorted(set(first.joints + second.joints))


@settings(max_examples=100, deadline=None)
@given(data=st.data())
def test_a_trajectory_that_ends_in_the_past_is_refused_and_changes_nothing(data) -> None:
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    q, qd = rng.uniform(-2, 2, NV), rng.uniform(-2, 2, NV)
    desired, twin, now = DesiredState(NV), DesiredState(NV), T0
    first = data.draw(trajectories(now))
    first.stamp = 0
    assert _send(desired, first, now) and _send(twin, first, now)
    late = data.draw(trajectories(now))
    late.stamp = now - round(late.times[-1] * NS) - data.draw(st.integers(1, 10**9))
    with pytest.raises(TrajectoryInPastError, match="ends in the past"):
        _send_raw(desired, late, now)
    for t in (now, now + NS // 3, now + 5 * NS):
        for x, y in zip(desired.sample(t, q, qd), twin.sample(t, q, qd), strict=True):
            assert np.array_equal(x, y)


def _send_raw(desired: DesiredState, sent: Sent, now: int) -> None:
    desired.receive(
        sent.joints,
        sent.times,
        sent.positions,
        sent.velocities,
        sent.accelerations,
        start_ns=sent.stamp,
        now_ns=now,
    )


@given(data=st.data())
@settings(max_examples=50, deadline=None)
def test_zero_stamp_is_the_time_of_receipt(data) -> None:
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    sent = data.draw(trajectories(T0))
    zero, now_stamped = DesiredState(NV), DesiredState(NV)
    sent.stamp = 0
    _send_raw(zero, sent, T0)
    sent.stamp = T0
    _send_raw(now_stamped, sent, T0)
    q, qd = rng.uniform(-2, 2, NV), rng.uniform(-2, 2, NV)
    for t in np.linspace(T0, T0 + 2 * NS, 11).astype(np.int64):
        for x, y in zip(zero.sample(int(t), q, qd), now_stamped.sample(int(t), q, qd), strict=True):
            assert np.array_equal(x, y)


def test_one_point_from_rest_is_a_ramp_not_a_step() -> None:
    """The issue's case: +0.1 rad at time_from_start 0.4 s from the measured pose is half-way at
    0.2 s (linear), and a rest-to-rest quintic with velocities and accelerations 0 is half-way
    too, at 15/8 of the mean velocity (closed forms)."""
    q0 = np.linspace(-1.0, 1.0, NV)
    for velocities in (None, np.zeros((1, NV))):
        desired = DesiredState(NV)
        desired.receive(range(NV), [0.4], [q0 + 0.1], velocities, velocities, start_ns=0, now_ns=T0)
        q, qd, qdd, driven = desired.sample(T0, q0, np.zeros(NV))
        assert np.array_equal(q, q0) and driven.all()
        q, qd, _, _ = desired.sample(T0 + 200_000_000, q0 + 1.0, np.ones(NV))  # the measurement moved
        assert np.allclose(q - q0, 0.05, atol=1e-12)
        assert np.allclose(qd, 0.25 if velocities is None else 15 / 8 * 0.25, atol=1e-12)
        q, qd, qdd, _ = desired.sample(T0 + 400_000_000, q0, np.zeros(NV))
        assert np.allclose(q, q0 + 0.1, atol=1e-15) and not qd.any() and not qdd.any()


def test_a_first_point_at_zero_is_taken_at_once_and_cancel_frees_every_joint() -> None:
    desired = DesiredState(NV)
    target = np.full((1, 3), 0.7)
    desired.receive([4, 0, 2], [0.0], target, start_ns=T0 + NS, now_ns=T0)
    q, qd = np.zeros(NV), np.ones(NV)
    assert np.array_equal(desired.sample(T0 + NS - 1, q, qd)[0], q)  # before its start: measured
    got_q, got_qd, _, driven = desired.sample(T0 + NS, q, qd)
    assert got_q.tolist() == [0.7, 0, 0.7, 0, 0.7, 0, 0] and got_qd.tolist() == [0, 1, 0, 1, 0, 1, 1]
    assert driven.tolist() == [1, 0, 1, 0, 1, 0, 0] and not desired.idle
    desired.cancel()
    got_q, got_qd, got_qdd, driven = desired.sample(T0 + 2 * NS, q, qd)
    assert np.array_equal(got_q, q) and np.array_equal(got_qd, qd) and not got_qdd.any() and not driven.any()
    assert desired.idle


def test_bad_input_is_refused_with_a_reason_and_changes_nothing() -> None:
    desired = DesiredState(NV)
    cases = [
        ([0, 0], [1.0], [[0.0, 0.0]], "distinct"),
        ([7], [1.0], [[0.0]], r"0\.\.6"),
        ([0, 1], [1.0], [[0.0]], "1 values for 2 joints"),
        ([0], [1.0, 0.5], [[0.0], [1.0]], "increasing"),
        ([0], [1.0], [[np.nan]], "NaN"),
        ([], [1.0], [[]], "at least one joint"),
    ]
    for joints, times, positions, reason in cases:
        with pytest.raises(RneaError, match=reason):
            desired.receive(joints, times, positions, start_ns=0, now_ns=T0)
    assert desired.idle


@pytest.mark.parametrize(
    ("age_s", "at_stamp"),
    [(0.0, True), (0.0005, True), (0.05, True), (MAX_STATE_AGE, True), (MAX_STATE_AGE + 1e-9, False),
     (3600.0, False), (-0.001, False), (-1e6, False)],
)  # fmt: skip
def test_a_state_is_compared_with_the_desired_state_of_its_stamp(age_s: float, at_stamp: bool) -> None:
    """Within MAX_STATE_AGE of the node's clock (not ahead of it) the desired state is sampled at
    the state's stamp (JTC: the desired state of the instant the state was read); an older
    stamp, one from another clock or one ahead of the node's clock gives the node's clock."""
    now = T0 + 123_456_789
    stamp = now - round(age_s * NS)
    assert sample_time_ns(stamp, now) == (stamp if at_stamp else now)
