"""Efforts along resampled trajectories: the grid, every term against single-state references and
the node's effort law, and the error of JTC's linear effort interpolation."""

from __future__ import annotations

import itertools
from dataclasses import replace

import numpy as np
import pytest
from robot_files import urdf_text

from rnea_ros import (
    Friction,
    RobotModel,
    friction_torques,
    gravity_torques,
    jacobian,
    mass_matrix,
    nonlinear_effects,
)
from rnea_ros.control.effort_law import COMPENSABLE, EffortLaw, Efforts, compute_efforts
from rnea_ros.trajectory.efforts import (
    DEFAULT_RESAMPLE_PERIOD,
    FEEDFORWARD,
    effort_terms,
    interpolation_error,
    period_for_tolerance,
    resample,
    trajectory_efforts,
)
from rnea_ros.trajectory.sampling import TrajectorySampler
from rnea_ros.trajectory.time_scaling import minimal_time_scale, scale_trajectory

ROBOTS = {"panda": "panda_hand", "ur5": "tool0", "double_pendulum": "link2"}  # robot: leaf link
GRAVITY = (0.4, -0.3, -9.6)
SUBSETS = [set(c) for r in (0, 1, 2, 5) for c in itertools.combinations(COMPENSABLE, r)]


@pytest.fixture(scope="module", params=list(ROBOTS))
def robot(request) -> tuple[RobotModel, str]:
    return RobotModel.from_urdf(urdf_text(request.param)), ROBOTS[request.param]


def random_knots(model: RobotModel, rng: np.random.Generator, count: int = 6, duration: float = 2.0):
    times = np.sort(rng.uniform(0.0, duration, count))
    times[0], times[-1] = 0.0, duration
    n = model.nv
    return times, rng.uniform(-1, 1, (count, n)), rng.normal(0, 1, (count, n)), rng.normal(0, 3, (count, n))


def friction_of(model: RobotModel, rng: np.random.Generator) -> Friction:
    n = model.nv
    coulomb = rng.uniform(0.1, 1.0, n)
    return Friction(rng.uniform(0.0, 0.5, n), coulomb, 0.05, static=coulomb + rng.uniform(0, 0.5, n),
                    stribeck_velocity=rng.uniform(0.05, 0.2, n))  # fmt: skip


def reference_terms(model, q, qd, qdd, friction, link, wrench) -> dict[str, np.ndarray]:
    """One state at a time, each term from a different single-state function."""
    g = gravity_torques(model, q, gravity=GRAVITY)
    return {
        "gravity": g,
        "coriolis": nonlinear_effects(model, q, qd, gravity=GRAVITY) - g,
        "inertia": mass_matrix(model, q) @ qdd,
        "friction": friction_torques(friction, qd),
        "wrench": jacobian(model, q, link).T @ wrench,
    }


def test_resample_is_uniform_ends_on_the_last_point_and_follows_the_spline() -> None:
    times = np.array([0.0, 0.3, 1.003])
    pos = np.array([[0.0, 1.0], [0.5, -1.0], [1.0, 0.0]])
    vel = np.array([[0.0, 0.0], [1.0, 0.2], [0.7, -0.3]])
    acc = np.array([[0.0, 0.0], [0.5, 0.1], [-2.0, 1.5]])
    t, q, qd, qdd = resample((times, pos, vel, acc), 0.01)
    assert t.size == 102 and t[-1] == 1.003 and np.allclose(np.diff(t[:-1]), 0.01)
    assert t[-1] - t[-2] == pytest.approx(0.003)
    sampler = TrajectorySampler(times, pos, vel, acc)
    q_ref, qd_ref, qdd_ref = sampler.sample(t[:-1])
    assert (
        np.array_equal(q[:-1], q_ref)
        and np.array_equal(qd[:-1], qd_ref)
        and np.array_equal(qdd[:-1], qdd_ref)
    )
    # the last point as the quintic reaches it, not the hold
    assert np.allclose(q[-1], pos[-1], atol=1e-12) and np.allclose(qd[-1], vel[-1], atol=1e-10)
    assert np.allclose(qdd[-1], acc[-1], atol=1e-8)
    with pytest.raises(ValueError, match="period"):
        resample(sampler, 0.0)
    with pytest.raises(ValueError, match="TrajectorySampler or"):
        resample([1.0], 0.01)


def test_efforts_and_terms_match_single_state_references_for_every_switch(robot) -> None:
    model, link = robot
    rng = np.random.default_rng(7)
    friction = friction_of(model, rng)
    wrench = rng.normal(0, 20, 6)
    _, q, qd, qdd = resample(random_knots(model, rng), 0.05)
    ref = [reference_terms(model, *x, friction, link, wrench) for x in zip(q, qd, qdd, strict=True)]
    for on in SUBSETS:
        law = EffortLaw(GRAVITY, frozenset(on), friction=friction, wrenches={link: wrench})
        tau = trajectory_efforts(model, q, qd, qdd, law)
        terms = effort_terms(model, q, qd, qdd, law)
        assert set(terms) == on
        want = np.array([sum((r[k] for k in on), np.zeros(model.nv)) for r in ref])
        np.testing.assert_allclose(tau, want, rtol=1e-9, atol=1e-9, err_msg=str(on))
        for name, value in terms.items():
            want_term = np.array([r[name] for r in ref])
            np.testing.assert_allclose(value, want_term, rtol=1e-9, atol=1e-9, err_msg=name)


def test_efforts_equal_the_nodes_effort_law_at_the_desired_state(robot) -> None:
    model, link = robot
    rng = np.random.default_rng(11)
    friction = friction_of(model, rng)
    wrench = {link: rng.normal(0, 20, 6)}
    _, q, qd, qdd = resample(random_knots(model, rng), 0.1)
    for on in SUBSETS:
        law = EffortLaw(
            GRAVITY, frozenset(on), use_desired_state=True, effort_limit_scale=1e9, friction=friction
        )
        node = Efforts(model, law)
        tau = trajectory_efforts(model, q, qd, qdd, replace(law, wrenches=wrench))
        for i in range(len(q)):
            measured = (np.zeros(model.nv), np.zeros(model.nv))  # feedback gains are zero
            compute_efforts(node, *measured, (q[i], qd[i], qdd[i]), wrench)
            np.testing.assert_allclose(tau[i], node.total, rtol=1e-9, atol=1e-9)


def test_no_friction_object_means_no_friction_term() -> None:
    model = RobotModel.from_urdf(urdf_text("double_pendulum"))  # URDF damping 0.05
    q, qd, qdd = np.zeros((1, 2)), np.ones((1, 2)), np.zeros((1, 2))
    only_friction = EffortLaw(compensate=frozenset({"friction"}))
    assert np.array_equal(trajectory_efforts(model, q, qd, qdd, only_friction), np.zeros((1, 2)))
    with_urdf = trajectory_efforts(
        model, q, qd, qdd, replace(only_friction, friction=Friction.from_model(model))
    )
    np.testing.assert_allclose(with_urdf, [[0.05, 0.05]], rtol=1e-12)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"compensate": {"gravity", "magic"}}, r"unknown terms \['magic'\]"),
        ({"friction": Friction(np.zeros(3), np.zeros(3))}, "friction must have 2 joints"),
        ({"wrenches": {"nowhere": np.zeros(6)}}, "nowhere"),
    ],
)
def test_bad_arguments_are_named(kwargs, message) -> None:
    model = RobotModel.from_urdf(urdf_text("double_pendulum"))
    with pytest.raises(ValueError, match=message):
        trajectory_efforts(model, np.zeros((2, 2)), np.zeros((2, 2)), np.zeros((2, 2)), EffortLaw(**kwargs))
    with pytest.raises(ValueError, match="qd must have shape"):
        trajectory_efforts(model, np.zeros((2, 2)), np.zeros((2, 3)), np.zeros((2, 2)))
    with pytest.raises(ValueError, match="same number of samples"):
        trajectory_efforts(model, np.zeros((2, 2)), np.zeros((3, 2)), np.zeros((2, 2)))


def dense_interpolation_error(model, points, period, refine, law=FEEDFORWARD) -> np.ndarray:
    """Independent: np.interp per joint between the resampled efforts, exact τ on a dense grid."""
    t, q, qd, qdd = resample(points, period)
    tau = trajectory_efforts(model, q, qd, qdd, law)
    fine = np.unique(np.concatenate([np.linspace(a, b, refine + 1) for a, b in itertools.pairwise(t)]))
    exact = trajectory_efforts(model, *TrajectorySampler(*points).sample(fine, inclusive=True), law)
    linear = np.stack([np.interp(fine, t, tau[:, j]) for j in range(model.nv)], axis=1)
    return np.max(np.abs(linear - exact), axis=0)


def point_to_point(model: RobotModel, q0, dq, duration: float):
    q0 = np.asarray(q0, dtype=float)
    zero = np.zeros((2, model.nv))
    return np.array([0.0, duration]), np.stack([q0, q0 + dq]), zero, zero


def test_interpolation_error_equals_an_independent_computation(robot) -> None:
    model, _ = robot
    rng = np.random.default_rng(5)
    points = random_knots(model, rng)
    law = EffortLaw(GRAVITY, friction=friction_of(model, rng))
    for period in (0.01, 0.037):
        got = interpolation_error(model, points, period, refine=8, law=law)
        np.testing.assert_allclose(
            got, dense_interpolation_error(model, points, period, 8, law), rtol=1e-12, atol=1e-12
        )


def test_interpolation_error_shrinks_with_the_square_of_the_period(robot) -> None:
    model, _ = robot
    points = point_to_point(model, np.full(model.nv, 0.2), np.full(model.nv, 0.5), 1.0)  # one quintic
    coarse = interpolation_error(model, points, 0.02)
    fine = interpolation_error(model, points, 0.01)
    assert np.all(fine < coarse)
    assert 3.5 < coarse.max() / fine.max() < 4.5


def test_default_period_keeps_the_interpolation_within_one_percent_of_the_limit() -> None:
    """At their limits after minimal_time_scale: Panda + 3 kg and UR5 point-to-point moves, and a
    Panda multi-sine like the demo's; the error on a 5x denser grid than `interpolation_error`'s."""
    from rnea_ros.demo import PANDA_HOME
    from rnea_ros.identification.excitation import design

    panda = RobotModel.from_urdf(urdf_text("panda"))
    heavy = panda.with_payload("panda_hand", mass=3.0, com=(0.0, 0.0, 0.1))
    ur5 = RobotModel.from_urdf(urdf_text("ur5"))
    home = np.array([PANDA_HOME[j] for j in panda.joint_names])
    dq = np.array([0, 0.2, 0, -0.2, 0, 0, 0, 0, 0])
    ur5_home = np.array([0.0, -1.0, 1.0, -1.5, -1.5, 0.0])
    arm = slice(0, 7)
    ms = design(
        home[arm], panda.position_lower[arm], panda.position_upper[arm], panda.velocity_limit[arm], 3.0
    )
    t, q, qd, qdd = ms.points(100)
    held = np.broadcast_to(home[7:], (t.size, 2))
    zeros = np.zeros_like(held)
    demo = (t, np.hstack([q, held]), np.hstack([qd, zeros]), np.hstack([qdd, zeros]))
    for model, points in [
        (heavy, point_to_point(heavy, home, dq, 0.1)),
        (ur5, point_to_point(ur5, ur5_home, [0, 0.2, -0.2, 0, 0, 0], 0.1)),
        (panda, demo),
    ]:
        law = EffortLaw(friction=Friction.from_model(model))
        k = minimal_time_scale(model, *points, law=law).k
        scaled = scale_trajectory(*points, k=k)
        error = dense_interpolation_error(model, scaled, DEFAULT_RESAMPLE_PERIOD, 40, law)
        estimate = interpolation_error(model, scaled, law=law)
        assert np.all(error <= 0.01 * model.effort_limit), (error / model.effort_limit).max()
        assert np.all(estimate <= error + 1e-12) and np.all(estimate >= 0.9 * error)


def test_period_for_tolerance_meets_the_tolerance() -> None:
    model = RobotModel.from_urdf(urdf_text("ur5"))
    points = point_to_point(model, [0.0, -1.0, 1.0, -1.5, -1.5, 0.0], [0, 0.4, -0.4, 0, 0, 0], 0.5)
    tol = 0.001 * model.effort_limit
    period, error = period_for_tolerance(model, points, tol, max_period=0.02)
    assert period < 0.02 and np.all(error <= tol)
    np.testing.assert_array_equal(error, interpolation_error(model, points, period))
    loose, _ = period_for_tolerance(model, points, 1e6, max_period=0.02)
    assert loose == 0.02
    with pytest.raises(ValueError, match="tolerance"):
        period_for_tolerance(model, points, 0.0)
