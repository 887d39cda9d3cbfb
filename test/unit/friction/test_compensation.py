"""The friction compensation rules (rnea_ros.friction.compensation) against closed forms, an
independent optimiser, the per-sample energy balance they are derived from, and the effort law
that applies them (rnea_ros.control.effort_law)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import minimize_scalar

from rnea_ros import Friction, RobotModel, friction_torques, mass_matrix
from rnea_ros.control.effort_law import EffortLaw, Efforts, compute_efforts
from rnea_ros.friction.compensation import (
    KAPPA,
    CompensationRules,
    feedback_friction,
    gate,
    gate_constants,
    loop_bounds,
)
from rnea_ros.model.example_robots import example_urdf_path

ROBOTS = ("xarm_description/urdf/xarm7.urdf", "z1_description/urdf/z1.urdf", "panda", "ur5")


def test_gate_is_the_stated_smooth_deadband() -> None:
    v_d = 0.05
    w = gate([0.0, v_d, -v_d, 2 * v_d, 1.0], v_d)
    np.testing.assert_allclose(w, [0.0, 1 - np.exp(-1), 1 - np.exp(-1), 1 - np.exp(-4), 1 - np.exp(-400)])
    np.testing.assert_array_equal(gate([0.0, 0.3], 0.0), [1.0, 1.0])


@pytest.mark.parametrize(("deadband", "smoothing"), [(0.05, 0.01), (0.1, 0.01), (0.02, 0.02), (0.2, 0.005)])
def test_gate_constants_match_a_bounded_optimiser(deadband: float, smoothing: float) -> None:
    """G_v = max (w + v w')² / w and K_c = min h / (v h'²), h = w tanh(v/v_ε), found by scipy's
    bounded scalar minimiser on the analytic derivatives (not the module's grid)."""

    def w_and_slope(v):
        x = v / deadband
        return 1 - np.exp(-x * x), 2 * x / deadband * np.exp(-x * x)

    def viscous(v):
        w, dw = w_and_slope(v)
        return -((w + v * dw) ** 2) / w

    def coulomb(v):
        w, dw = w_and_slope(v)
        th = np.tanh(v / smoothing)
        h, dh = w * th, dw * th + w * (1 - th * th) / smoothing
        return h / (v * dh * dh)

    g_v, k_c = gate_constants(deadband, smoothing)
    tight = {"method": "bounded", "options": {"xatol": 1e-12}}
    best_v = minimize_scalar(viscous, bounds=(0.2 * deadband, 5 * deadband), **tight)
    best_c = minimize_scalar(coulomb, bounds=(0.1 * deadband, 5 * deadband), **tight)
    assert g_v == pytest.approx(-best_v.fun, rel=1e-5)
    assert k_c == pytest.approx(best_c.fun, rel=1e-4)


def test_gate_constants_without_deadband_are_closed_forms() -> None:
    """No deadband: w = 1, so G_v = 1; h = tanh(v/v_ε) gives h/(v h'²) = v_ε sinh(x) cosh³(x)/x,
    smallest (v_ε) at x → 0."""
    for eps in (0.001, 0.01, 0.1):
        g_v, k_c = gate_constants(0.0, eps)
        assert g_v == 1.0
        assert k_c == pytest.approx(eps, rel=1e-6)


def test_bounds_scale_with_inertia_over_period_and_the_margin() -> None:
    rules = CompensationRules(scale=0.5, deadband=0.05)
    g_v, k_c = gate_constants(0.05, 0.01)
    a, c = loop_bounds([1e-4, 0.1, 2.0], 1e-3, rules, 0.01)
    r = (1 - 0.5) / 0.5
    np.testing.assert_allclose(a, KAPPA * r * np.array([1e-4, 0.1, 2.0]) / 1e-3 / g_v)
    np.testing.assert_allclose(c, KAPPA * r * np.array([1e-4, 0.1, 2.0]) / 1e-3 * k_c)
    a2, c2 = loop_bounds([0.1], 2e-3, CompensationRules(scale=0.8, deadband=0.05), 0.01)
    assert a2[0] == pytest.approx(a[1] / 2 * (0.25 / 1.0))  # twice the period, margin 1/4 instead of 1
    assert c2[0] == pytest.approx(c[1] / 2 * (0.25 / 1.0))
    assert loop_bounds([0.1], 0.0, rules, 0.01)[0][0] == 0.0  # no period known: no feedback compensation
    a1, c1 = loop_bounds([0.1], 1e-3, CompensationRules(scale=1.0), 0.01)
    assert a1[0] == 0.0 and c1[0] == 0.0  # no margin left: nothing from the measured velocity


def _plant_step(m: float, period: float, v: float, push: float, viscous: float, coulomb: float) -> float:
    """One period of a joint of inertia m under a constant effort `push` with friction acting
    continuously: viscous d v and dry friction C (sticking when it can hold), integrated
    implicitly: m (v⁺ − v) = T (push − d v⁺ − C sign v⁺)."""
    momentum = m * v + period * push
    if abs(momentum) <= period * coulomb:
        return 0.0
    return (momentum - np.sign(momentum) * period * coulomb) / (m + period * viscous)


def test_every_sample_dissipates_with_the_bound_and_the_energy_inequality_holds() -> None:
    """The derivation: ΔE = T(φ(v) − f(v⁺))(v⁺ + v)/2 ≤ −T v⁺² [D(v⁺) − T L²/(2m)] for the
    compensation φ from the sampled velocity v, the plant friction f acting over the period. With
    the plant's friction as large as the model's (or 1/3 of the margin lower), no sample gains
    energy, over random inertias, periods, frictions and velocities."""
    rng = np.random.default_rng(5)
    rules = CompensationRules()
    worst = -np.inf
    for _ in range(300):
        m = 10 ** rng.uniform(-4.5, 0.5)
        period = 10 ** rng.uniform(-3.7, -2)
        fv, fc = rng.uniform(0, 10), rng.uniform(0, 3)
        friction = Friction([fv], [fc])
        plant = rng.uniform(rules.scale + KAPPA * (1 - rules.scale), 1.5)  # plant friction / model's
        for v in rng.normal(0, 0.5, 20) * 10 ** rng.uniform(-2, 1):
            phi = feedback_friction(friction, rules, [v], [m], period)[0]
            v1 = _plant_step(m, period, v, phi, plant * fv, plant * fc)
            gained = 0.5 * m * (v1 * v1 - v * v)
            worst = max(worst, gained / max(0.5 * m * v * v, 1e-300))
            # the exact identity the bound starts from
            f1 = plant * fv * v1 + (np.sign(v1) * plant * fc if v1 != 0 else (phi - m * (v1 - v) / period))
            assert gained == pytest.approx(period * (phi - f1) * (v1 + v) / 2, rel=1e-9, abs=1e-15)
    assert worst <= 1e-12


def test_without_the_deadband_and_bound_a_light_joint_is_driven() -> None:
    """The rule is needed: the whole model Coulomb friction F_c tanh(v/v_ε) fed back from the
    sampled velocity of xArm7's last joint (1e-4 kg m², 1 kHz) against a plant whose friction is
    soft near zero (MuJoCo's frictionloss: ~95 M v below F_c) makes the joint gain energy, the
    bounded rule does not."""
    m, period, fc = 1e-4, 1e-3, 1.0
    soft = 95 * m  # N m s/rad, the plant's friction slope below saturation
    friction = Friction([0.0], [fc])

    def run(compensation) -> float:
        v = 0.02
        energy0 = 0.5 * m * v * v
        for _ in range(200):
            v = (m * v + period * compensation(v)) / (m + period * soft)
            v = float(np.clip(v, -fc / soft, fc / soft))  # beyond saturation the plant gives F_c
        return 0.5 * m * v * v / energy0

    naive = run(lambda v: friction_torques(friction, [v])[0])
    bounded = run(lambda v: feedback_friction(friction, CompensationRules(), [v], [m], period)[0])
    assert naive > 100.0
    assert bounded < 1.0


def test_rules_reject_values_out_of_range() -> None:
    with pytest.raises(ValueError, match="friction.scale"):
        CompensationRules(scale=1.5)
    with pytest.raises(ValueError, match="friction.feedforward_scale"):
        CompensationRules(feedforward_scale=-0.1)
    with pytest.raises(ValueError, match="friction.deadband"):
        CompensationRules(deadband=float("nan"))


# --- the effort law applying the rules ---------------------------------------------------------


@pytest.mark.parametrize("name", ROBOTS)
def test_effort_law_friction_term_follows_the_rules_per_joint(name: str) -> None:
    """Joints a trajectory drives: feedforward_scale × τ_f(q̇_des); the others: the bounded
    feedback from the measured velocity with M_ii(q) from mass_matrix and the period from the
    times of the calls; the other terms do not change with the friction rule."""
    model = RobotModel.from_urdf(example_urdf_path(name).read_text())
    n = model.nv
    rng = np.random.default_rng(2)
    friction = Friction(rng.uniform(0.5, 5, n), rng.uniform(0.2, 2, n), 0.02)
    rules = CompensationRules(scale=0.6, feedforward_scale=0.9, deadband=0.08)
    efforts = Efforts(model, EffortLaw(friction_rules=rules, friction=friction))
    driven = rng.uniform(size=n) < 0.5
    q = rng.uniform(-1, 1, n)
    qd, qd_des = rng.normal(0, 0.3, n), rng.normal(0, 0.3, n)
    desired = (q, qd_des, np.zeros(n))
    compute_efforts(efforts, q, qd, desired, driven=driven, t=10.0)
    first = efforts.table[3].copy()
    np.testing.assert_array_equal(first[~driven], 0.0)  # no period known yet: no feedback term
    compute_efforts(efforts, q, qd, desired, driven=driven, t=10.002)
    assert efforts.period == pytest.approx(0.002)
    want = np.where(
        driven,
        0.9 * friction_torques(friction, qd_des),
        feedback_friction(friction, rules, qd, np.diag(mass_matrix(model, q)), 0.002),
    )
    np.testing.assert_allclose(efforts.table[3], want, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(first[driven], want[driven], rtol=1e-12, atol=1e-14)
    # the light joints are capped well below scale × the model
    a_max, c_max = loop_bounds(np.diag(mass_matrix(model, q)), 0.002, rules, 0.02)
    assert np.all(a_max >= 0) and np.all(c_max >= 0)


def test_default_driven_is_every_joint_and_friction_off_means_zero() -> None:
    model = RobotModel.from_urdf(example_urdf_path("xarm_description/urdf/xarm7.urdf").read_text())
    n = model.nv
    friction = Friction.from_model(model)
    q, qd, qd_des = np.zeros(n), np.full(n, 0.3), np.full(n, -0.2)
    efforts = compute_efforts(Efforts(model, EffortLaw(friction=friction)), q, qd, (q, qd_des, np.zeros(n)))
    np.testing.assert_allclose(efforts.table[3], friction_torques(friction, qd_des), rtol=1e-13)
    off = Efforts(model, EffortLaw(compensate=frozenset({"gravity"}), friction=friction))
    compute_efforts(off, q, qd, (q, qd_des, np.zeros(n)), driven=np.zeros(n, dtype=bool), t=0.0)
    compute_efforts(off, q, qd, (q, qd_des, np.zeros(n)), driven=np.zeros(n, dtype=bool), t=0.001)
    np.testing.assert_array_equal(off.table[3], 0.0)


def test_adopt_shares_the_loop_state_and_rearms_the_guard_on_request() -> None:
    model = RobotModel.from_urdf(example_urdf_path("z1_description/urdf/z1.urdf").read_text())
    friction = Friction.from_model(model)
    n = model.nv
    old = Efforts(model, EffortLaw(friction=friction))
    compute_efforts(old, np.zeros(n), np.zeros(n), (np.zeros(n),) * 3, driven=np.zeros(n, bool), t=1.0)
    compute_efforts(old, np.zeros(n), np.zeros(n), (np.zeros(n),) * 3, driven=np.zeros(n, bool), t=1.004)
    old.guard.state[1, 2] = 1.0  # joint 2 tripped
    kept, rearmed = Efforts(model, EffortLaw(friction=friction)), Efforts(model, EffortLaw(friction=friction))
    kept.adopt(old, keep_guard=True)
    rearmed.adopt(old, keep_guard=False)
    assert kept.period == rearmed.period == pytest.approx(0.004)
    assert kept.guard.tripped[2] and not rearmed.guard.tripped.any()
    compute_efforts(old, np.zeros(n), np.zeros(n), (np.zeros(n),) * 3, driven=np.zeros(n, bool), t=1.005)
    assert kept.loop.t == 1.005  # shared: calls on the old one until the swap keep it current
