"""Uniform time scaling: the spline identity, the effort decomposition, the closed form against
brute force, and minimal feasible k on a set of robots and trajectories (effort-, velocity- and
friction-bound, with a wrench), rejections, limits checks."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import pytest
from robot_files import urdf_text

from rnea_ros import Friction, RobotModel, friction_torques, gravity_torques, mass_matrix, nonlinear_effects
from rnea_ros.control.effort_law import EffortLaw
from rnea_ros.demo import PANDA_ARM, PANDA_HOME
from rnea_ros.identification.excitation import ExcitationOptions, design
from rnea_ros.trajectory.efforts import DEFAULT_RESAMPLE_PERIOD, resample, trajectory_efforts
from rnea_ros.trajectory.sampling import TrajectorySampler
from rnea_ros.trajectory.time_scaling import (
    _above,
    _largest_feasible,
    check_limits,
    minimal_time_scale,
    scale_trajectory,
)

UR5_HOME = np.array([0.0, -1.0, 1.0, -1.5, -1.5, 0.0])


@pytest.fixture(scope="module")
def panda() -> RobotModel:
    return RobotModel.from_urdf(urdf_text("panda"))


@pytest.fixture(scope="module")
def ur5() -> RobotModel:
    return RobotModel.from_urdf(urdf_text("ur5"))


def panda_multisine(model: RobotModel, seed: int, fast: bool = True):
    """Model-order points of an arm multi-sine, fingers held at the demo's home."""
    arm = slice(0, 7)
    home = np.array([PANDA_HOME[j] for j in model.joint_names])
    lo, hi, vlim = model.position_lower[arm], model.position_upper[arm], model.velocity_limit[arm]
    if fast:
        options = ExcitationOptions(
            duration=4.0,
            ramp=0.5,
            frequency_range=(0.5, 2.0),
            max_amplitude=0.8,
            velocity_scale=1.0,
            seed=seed,
        )
        motion = design(home[arm], lo, hi, 10 * vlim, 60.0, options)
    else:
        motion = design(home[arm], lo, hi, vlim, 3.0, ExcitationOptions(seed=seed))
    t, q, qd, qdd = motion.points(100)
    held, zeros = np.broadcast_to(home[7:], (t.size, 2)), np.zeros((t.size, 2))
    return t, np.hstack([q, held]), np.hstack([qd, zeros]), np.hstack([qdd, zeros])


def point_to_point(q0, dq, duration: float):
    q0 = np.asarray(q0, dtype=float)
    zero = np.zeros((2, q0.size))
    return np.array([0.0, duration]), np.stack([q0, q0 + np.asarray(dq, dtype=float)]), zero, zero


def worst_ratio(model, points, k, law, effort_limit, velocity_limit, joints):
    """Independently: the largest |τ|/limit and |q̇|/limit over the points JTC would receive."""
    t, q, qd, qdd = resample(scale_trajectory(*points, k=k), DEFAULT_RESAMPLE_PERIOD)
    tau = trajectory_efforts(model, q, qd, qdd, EffortLaw(**law))
    idx = [model.joint_index(j) for j in joints]
    with np.errstate(divide="ignore"):
        eff = np.abs(tau[:, idx]) / np.broadcast_to(effort_limit, (model.nv,))[idx]
        vel = np.abs(qd[:, idx]) / np.broadcast_to(velocity_limit, (model.nv,))[idx]
    return eff.max(), vel.max(), eff, vel, t


# ----------------------------------------------------------------------------- the identities


@pytest.mark.parametrize("order", [1, 2, 3])
def test_scaled_points_give_the_time_stretched_spline(order) -> None:
    rng = np.random.default_rng(order)
    times = np.array([0.0, 0.4, 0.9, 1.5])
    knots = [rng.normal(size=(4, 3)) for _ in range(3)][:order]
    k = 1.7
    original = TrajectorySampler(times, *knots)
    scaled = TrajectorySampler(*scale_trajectory(times, *knots, *[None] * (3 - order), k=k)[: order + 1])
    t = np.linspace(0.0, 1.5, 301)
    q, qd, qdd = original.sample(t, inclusive=True)
    qs, qds, qdds = scaled.sample(k * t, inclusive=True)
    np.testing.assert_allclose(qs, q, atol=1e-10)
    np.testing.assert_allclose(qds, qd / k, atol=1e-9)
    np.testing.assert_allclose(qdds, qdd / k**2, atol=1e-8)


def test_scaled_efforts_follow_the_decomposition(ur5) -> None:
    """τ(s) = s² (M q̈ + c) + s F_v q̇ + g + Coulomb(s q̇), each part from single-state references
    at the original state, against the efforts on the scaled trajectory."""
    rng = np.random.default_rng(2)
    n = ur5.nv
    friction = Friction(rng.uniform(0, 1, n), rng.uniform(0, 2, n), 0.05)
    coulomb_only = Friction(np.zeros(n), friction.coulomb, 0.05)
    times = np.array([0.0, 0.5, 1.2])
    knots = [UR5_HOME + rng.normal(0, 0.5, (3, n)), rng.normal(0, 1, (3, n)), rng.normal(0, 3, (3, n))]
    k = 2.3
    t = np.linspace(0.0, 1.2, 25)
    q, qd, qdd = TrajectorySampler(times, *knots).sample(t, inclusive=True)
    qs, qds, qdds = TrajectorySampler(*scale_trajectory(times, *knots, k=k)).sample(k * t, inclusive=True)
    got = trajectory_efforts(ur5, qs, qds, qdds, EffortLaw(friction=friction))
    for i in range(t.size):
        g = gravity_torques(ur5, q[i])
        dynamic = mass_matrix(ur5, q[i]) @ qdd[i] + nonlinear_effects(ur5, q[i], qd[i]) - g
        want = dynamic / k**2 + friction.viscous * qd[i] / k + g + friction_torques(coulomb_only, qd[i] / k)
        np.testing.assert_allclose(got[i], want, rtol=1e-9, atol=1e-9)


def test_quadratic_sets_and_largest_feasible_point_match_brute_force() -> None:
    rng = np.random.default_rng(0)
    s = np.linspace(1e-6, 1.0, 200_001)
    for trial in range(200):
        m = 5
        a, b, c = rng.normal(0, 1, (3, m))
        if trial % 4 == 0:
            a[0] = 0.0  # linear
        if trial % 8 == 0:
            b[1] = 0.0
        lo, hi = _above(a, b, c)
        value = a[:, None] * s**2 + b[:, None] * s + c[:, None]
        inside = np.zeros_like(value, dtype=bool)
        for i in range(2):
            inside |= (lo[i][:, None] < s) & (s < hi[i][:, None])
        clear = np.abs(value) > 1e-9  # away from the roots
        assert np.array_equal(inside[clear], (value > 0)[clear]), trial
        best, index = _largest_feasible(lo.reshape(-1), hi.reshape(-1))
        feasible = np.all(value <= 0, axis=0)
        brute = s[feasible].max() if feasible.any() else 0.0
        if brute > 0:
            assert best == pytest.approx(brute, abs=2e-5), trial
            assert (index < 0) == (best == 1.0)
        else:
            assert best <= 1e-5


def test_largest_feasible_point_is_not_the_minimum_of_per_sample_maxima() -> None:
    """Sample A is infeasible on (0.3, 0.6) only (a concave quadratic), sample B beyond 0.5: the
    answer is 0.3, not min(1, 0.5)."""
    lo = np.array([0.3, 0.5, np.nan])
    hi = np.array([0.6, np.inf, np.nan])
    assert _largest_feasible(lo, hi) == (0.3, 0)
    assert _largest_feasible(np.array([0.7]), np.array([0.9])) == (1.0, -1)


# ------------------------------------------------------------------ minimal k on a set of cases


class Case(NamedTuple):
    name: str
    model: RobotModel
    points: tuple
    law: dict
    effort_limit: np.ndarray
    velocity_limit: np.ndarray | float
    joints: list[str]
    kind: str = "effort"  # the limit expected to bind


def cases(panda: RobotModel, ur5: RobotModel) -> list[Case]:
    heavy = panda.with_payload("panda_hand", mass=3.0, com=(0.0, 0.0, 0.1))
    home = np.array([PANDA_HOME[j] for j in panda.joint_names])
    n = ur5.nv
    friction = Friction(np.full(n, 0.5), np.full(n, 2.0), 0.01, static=np.full(n, 3.0))
    rng = np.random.default_rng(4)
    pendulum = RobotModel.from_urdf(urdf_text("double_pendulum"))
    knots = (
        np.array([0.0, 0.3, 0.7, 1.0]),
        rng.uniform(-1, 1, (4, 2)),
        rng.normal(0, 2, (4, 2)),
        np.zeros((4, 2)),
    )
    g_max = np.abs(gravity_torques(pendulum, resample(knots)[1])).max(axis=0)
    none = np.inf
    arm, ur5_joints = PANDA_ARM, list(ur5.joint_names)
    push = {"wrenches": {"panda_hand": [0, 0, -30, 0, 0, 0]}}
    return [
        Case(
            "panda multi-sine 45 %",
            panda,
            panda_multisine(panda, 1),
            {},
            0.45 * panda.effort_limit,
            none,
            arm,
        ),
        Case(
            "panda multi-sine",
            panda,
            panda_multisine(panda, 0),
            {},
            panda.effort_limit,
            panda.velocity_limit,
            arm,
            "velocity",
        ),
        Case(
            "panda + 3 kg point-to-point",
            heavy,
            point_to_point(home, [0, 0.2, 0, -0.2, 0, 0, 0, 0, 0], 0.1),
            {},
            heavy.effort_limit,
            heavy.velocity_limit,
            arm,
        ),
        Case(
            "panda pushing 30 N", panda, panda_multisine(panda, 2), push, 0.4 * panda.effort_limit, none, arm
        ),
        Case(
            "ur5 point-to-point",
            ur5,
            point_to_point(UR5_HOME, [0, 0.2, -0.2, 0, 0, 0], 0.1),
            {},
            ur5.effort_limit,
            ur5.velocity_limit,
            ur5_joints,
        ),
        Case(
            "ur5 with Coulomb + Stribeck",
            ur5,
            point_to_point(UR5_HOME, [0.3, 0.2, -0.2, 0.3, 0.3, 0.3], 0.1),
            {"friction": friction},
            ur5.effort_limit,
            none,
            ur5_joints,
        ),
        Case(
            "double pendulum",
            pendulum,
            knots,
            {"gravity": (0, 0, -9.81)},
            1.3 * g_max,
            none,
            list(pendulum.joint_names),
        ),
    ]


def test_minimal_scale_is_feasible_tight_and_minimal(panda, ur5) -> None:
    for name, model, points, law, tau_lim, v_lim, joints, kind in cases(panda, ur5):
        result = minimal_time_scale(
            model, *points, law=EffortLaw(**law, effort_limit=tau_lim, velocity_limit=v_lim), joints=joints
        )
        assert result.feasible and result.k > 1.0, (name, result)
        assert result.limit == kind, (name, result)
        eff, vel, eff_all, vel_all, t = worst_ratio(model, points, result.k, law, tau_lim, v_lim, joints)
        worst = max(eff, vel)
        assert worst <= 1.0 + 1e-12, (name, worst)
        assert worst >= 0.99, (name, worst)  # the binding joint is within 1 % of its limit
        assert result.ratio == pytest.approx(worst, rel=1e-12), name
        table = eff_all if kind == "effort" else vel_all
        row, col = np.unravel_index(np.argmax(table), table.shape)
        assert result.joint == joints[col] and result.time == pytest.approx(t[row]), name
        assert result.duration == pytest.approx(result.k * points[0][-1])
        # minimal: 1 % faster exceeds a limit
        eff_fast, vel_fast, *_ = worst_ratio(model, points, 0.99 * result.k, law, tau_lim, v_lim, joints)
        assert max(eff_fast, vel_fast) > 1.0, (name, eff_fast, vel_fast)


def test_a_trajectory_within_its_limits_is_not_slowed_down(panda) -> None:
    points = panda_multisine(panda, 0, fast=False)  # the demo's: 27 % of the effort limit at most
    result = minimal_time_scale(panda, *points, joints=PANDA_ARM)
    eff, vel, *_ = worst_ratio(panda, points, 1.0, {}, panda.effort_limit, panda.velocity_limit, PANDA_ARM)
    assert result.feasible and result.k == 1.0 and result.ratio == pytest.approx(max(eff, vel), rel=1e-12)
    assert result.ratio < 0.5 and "within limits" in result.reason


def test_check_limits_at_k_one_and_at_the_minimal_k(ur5) -> None:
    points = point_to_point(UR5_HOME, [0, 0.2, -0.2, 0, 0, 0], 0.1)
    at_one = check_limits(ur5, *points)
    assert not at_one.feasible and at_one.ratio > 1.0 and "exceeded" in at_one.reason
    k = minimal_time_scale(ur5, *points).k
    at_k = check_limits(ur5, *points, k=k)
    assert at_k.feasible and 0.99 <= at_k.ratio <= 1.0


# ---------------------------------------------------------------------------------- rejections


def test_gravity_beyond_a_limit_is_rejected_with_joint_time_and_ratio(panda) -> None:
    points = panda_multisine(panda, 0, fast=False)
    limit = 0.2 * panda.effort_limit  # the demo pose needs ~26 % of joint 4's limit against gravity
    result = minimal_time_scale(panda, *points, law=EffortLaw(effort_limit=limit), joints=PANDA_ARM)
    assert not result.feasible and result.k == np.inf and result.duration == np.inf
    assert result.joint in PANDA_ARM and "rejected" in result.reason and "gravity" in result.reason
    q, _, _ = TrajectorySampler(*points).sample(result.time, inclusive=True)
    j = panda.joint_index(result.joint)
    assert result.ratio == pytest.approx(abs(gravity_torques(panda, q)[j]) / limit[j], rel=1e-9)
    assert result.ratio > 1.0


def test_a_wrench_or_coulomb_friction_beyond_a_limit_is_rejected(ur5) -> None:
    points = point_to_point(UR5_HOME, [0, 0.2, -0.2, 0, 0, 0], 1.0)
    push = {"wrenches": {"tool0": [0, 0, -2000.0, 0, 0, 0]}}
    result = minimal_time_scale(ur5, *points, law=EffortLaw(**push))
    assert not result.feasible and "wrench" in result.reason
    # gravity alone fits, gravity + Coulomb (at full magnitude, with the sign of q̇) does not
    g = np.abs(gravity_torques(ur5, resample(points)[1])).max(axis=0)
    friction = Friction(np.zeros(6), np.full(6, 5.0), 0.01)
    result = minimal_time_scale(ur5, *points, law=EffortLaw(friction=friction, effort_limit=g + 2.0))
    assert not result.feasible and "Coulomb" in result.reason


def test_more_than_max_k_is_rejected(ur5) -> None:
    points = point_to_point(UR5_HOME, [0, 0.2, -0.2, 0, 0, 0], 0.1)
    needed = minimal_time_scale(ur5, *points).k
    result = minimal_time_scale(ur5, *points, max_k=1.2)
    assert not result.feasible and result.k == pytest.approx(needed, rel=1e-3) and "max_k" in result.reason


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"joints": ["shoulder_pan_joint", "nope"]}, r"\['nope'\] are not movable"),
        ({"effort_limit": -1.0}, "effort_limit must be >= 0"),
        ({"velocity_limit": [np.nan] * 6}, "velocity_limit must be >= 0"),
        ({"compensate": ["gravity", "magic"]}, "unknown terms"),
    ],
)
def test_bad_arguments_are_named(ur5, kwargs, message) -> None:
    with pytest.raises(ValueError, match=message):
        law = EffortLaw(**{key: v for key, v in kwargs.items() if key != "joints"})
        minimal_time_scale(
            ur5, *point_to_point(UR5_HOME, np.zeros(6), 1.0), law=law, joints=kwargs.get("joints")
        )
    with pytest.raises(ValueError, match="6 columns"):
        minimal_time_scale(ur5, [0.0, 1.0], np.zeros((2, 5)))
    with pytest.raises(ValueError, match="k must be"):
        scale_trajectory([0.0, 1.0], np.zeros((2, 6)), k=0.0)
