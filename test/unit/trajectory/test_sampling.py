"""Trajectory sampling: linear / cubic / quintic segments, start join, hold, errors."""

from __future__ import annotations

import numpy as np
import pytest

from rnea_ros.trajectory.sampling import TrajectorySampler


def test_quintic_reproduces_a_quintic_polynomial_exactly() -> None:
    coeffs = np.array([0.3, -0.2, 0.5, 0.1, -0.04, 0.006])
    poly = np.polynomial.Polynomial(coeffs)
    times = np.array([0.0, 0.7, 1.5, 3.0])
    pts = [poly(times), poly.deriv(1)(times), poly.deriv(2)(times)]
    traj = TrajectorySampler(times, *(p[:, None] for p in pts))
    t = np.linspace(0.0, 2.999, 97)  # at 3.0 the last point is held at rest
    q, qd, qdd = traj.sample(t)
    assert np.allclose(q[:, 0], poly(t), atol=1e-12)
    assert np.allclose(qd[:, 0], poly.deriv(1)(t), atol=1e-11)
    assert np.allclose(qdd[:, 0], poly.deriv(2)(t), atol=1e-10)


def test_cubic_matches_points_and_velocities_and_is_c1() -> None:
    times = [0.0, 1.0, 2.5]
    pos = [[0.0, 1.0], [1.0, -1.0], [0.5, 0.0]]
    vel = [[0.0, 0.0], [0.5, 0.2], [0.0, 0.0]]
    traj = TrajectorySampler(times, pos, vel)
    for t, p, v in zip(times, pos, vel, strict=True):
        q, qd, _ = traj.sample(t)
        assert np.allclose(q, p) and np.allclose(qd, v)
    eps = 1e-7
    q_lo, qd_lo, _ = traj.sample(1.0 - eps)
    q_hi, qd_hi, _ = traj.sample(1.0 + eps)
    assert np.allclose(q_lo, q_hi, atol=1e-6) and np.allclose(qd_lo, qd_hi, atol=1e-5)
    # q̇ is the derivative of q (central difference inside a segment)
    q_a, _, _ = traj.sample(1.7 - 1e-6)
    q_b, _, _ = traj.sample(1.7 + 1e-6)
    assert np.allclose((q_b - q_a) / 2e-6, traj.sample(1.7)[1], atol=1e-6)


def test_positions_only_is_linear_with_zero_acceleration() -> None:
    traj = TrajectorySampler([0.0, 2.0], [[0.0], [1.0]])
    q, qd, qdd = traj.sample(0.5)
    assert q[0] == pytest.approx(0.25) and qd[0] == pytest.approx(0.5) and qdd[0] == 0.0


def test_start_state_is_joined_to_a_first_point_in_the_future() -> None:
    traj = TrajectorySampler([1.0], [[2.0]], [[0.0]], [[0.0]], start=([0.0], [0.0], [0.0]))
    q, qd, qdd = traj.sample(np.array([0.0, 0.5, 1.0]))
    assert q[:, 0] == pytest.approx([0.0, 1.0, 2.0])  # symmetric quintic rest-to-rest: midpoint
    assert qd[0, 0] == 0.0 and qd[2, 0] == pytest.approx(0.0, abs=1e-12)
    assert qd[1, 0] == pytest.approx(15 / 8 * 2.0)  # peak velocity of a rest-to-rest quintic


def test_hold_after_the_last_point_and_before_the_first() -> None:
    traj = TrajectorySampler([0.5, 1.0], [[1.0, 2.0], [3.0, 4.0]], [[1.0, 1.0], [1.0, 1.0]])
    q, qd, qdd = traj.sample(5.0)
    assert np.array_equal(q, [3.0, 4.0]) and not qd.any() and not qdd.any()
    q, qd, _ = traj.sample(0.1)
    assert np.array_equal(q, [1.0, 2.0]) and not qd.any()
    assert traj.duration == 1.0


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (([0.0, 0.0], [[0.0], [1.0]]), "strictly increasing"),
        (([1.0, 0.5], [[0.0], [1.0]]), "strictly increasing"),
        (([0.0, 1.0], [[0.0], [1.0, 2.0]]), "positions must have shape"),
        (([0.0, 1.0], [[0.0], [np.nan]]), "positions contains NaN"),
        (([0.0, 1.0], [[0.0], [1.0]], [[0.0]]), "velocities must have shape"),
        (([], []), "at least one point"),
        (([-1.0], [[0.0]]), ">= 0"),
        (([0.0, 1.0], [[0.0], [1.0]], None, [[0.0], [0.0]]), "accelerations need velocities"),
    ],
)
def test_bad_trajectories_are_rejected(args, message) -> None:
    with pytest.raises(ValueError, match=message):
        TrajectorySampler(*args)


@pytest.mark.parametrize("order", [1, 2, 3])
def test_inclusive_sampling_reaches_the_last_point_with_its_derivatives(order) -> None:
    """Linear / cubic / quintic: with inclusive=True the last point's time gives the end of the
    last segment (the spline's left limit there), otherwise the hold at rest."""
    times = np.array([0.0, 0.4, 1.0])
    pos = np.array([[0.0, 1.0], [0.5, -1.0], [1.0, 0.0]])
    vel = np.array([[0.0, 0.0], [1.0, 0.2], [0.7, -0.3]])
    acc = np.array([[0.0, 0.0], [0.5, 0.1], [-2.0, 1.5]])
    traj = TrajectorySampler(times, *[pos, vel, acc][:order])
    left = traj.sample(np.array([1.0 - 1e-9]))
    end = traj.sample(np.array([1.0]), inclusive=True)
    for got, near in zip(end, left, strict=True):
        assert np.allclose(got, near, atol=1e-5)
    assert np.allclose(end[0][0], pos[-1], atol=1e-12)
    if order >= 2:
        assert np.allclose(end[1][0], vel[-1], atol=1e-12)
    if order == 3:
        assert np.allclose(end[2][0], acc[-1], atol=1e-9)
    q, qd, qdd = traj.sample(1.0)
    assert np.array_equal(q, pos[-1]) and not qd.any() and not qdd.any()


@pytest.mark.parametrize("kind", ["linear", "cubic", "quintic"])
def test_sample_at_equals_sample_at_every_time(kind: str) -> None:
    """The one-time fast path gives `sample`'s values: before, on, between and after the points,
    with and without a joined start state."""
    rng = np.random.default_rng(3)
    times = np.array([0.2, 0.5, 0.55, 1.3])
    p = rng.normal(size=(4, 3))
    v = None if kind == "linear" else rng.normal(size=(4, 3))
    a = None if kind != "quintic" else rng.normal(size=(4, 3))
    for start in (None, (rng.normal(size=3), rng.normal(size=3), rng.normal(size=3))):
        traj = TrajectorySampler(times, p, v, a, start=start)
        grid = np.concatenate([np.linspace(-0.1, 1.5, 101), times, traj.times])
        for t in grid:
            want = np.array(traj.sample(float(t)))
            assert np.allclose(traj.sample_at(float(t)), want, rtol=1e-12, atol=1e-12), t
