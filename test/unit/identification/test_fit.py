"""Identification recovers known parameters from synthetic data (our rnea + friction on a perturbed
model), base parameters against closed-form counts and null-space identities, consistency checks,
derivative estimation against analytic signals."""

from __future__ import annotations

import numpy as np
import pytest

from rnea_ros import Friction, RobotModel, friction_torques, rnea
from rnea_ros.identification.excitation import design
from rnea_ros.identification.fit import (
    Samples,
    base_parameters,
    consistency,
    identify,
    identify_friction,
    identify_payload,
    predict,
    prepare,
    pseudo_inertia,
    stretches,
)
from rnea_ros.identification.regressor import (
    PER_BODY,
    body_columns,
    joint_columns,
    parameter_count,
    regressor,
    standard_parameters,
    with_parameters,
)
from rnea_ros.model.example_robots import example_urdf_path

ROBOTS = {"panda": "panda_hand", "ur5": None, "double_pendulum": None}


def urdf_model(name: str) -> RobotModel:
    return RobotModel.from_urdf(example_urdf_path(name).read_text(), tip_link=ROBOTS.get(name))


def perturbed(model: RobotModel, seed: int, armature: bool = True) -> tuple[RobotModel, np.ndarray]:
    """Each body's 10 parameters scaled by its own factor in [0.8, 1.2] (stays physical), friction
    and armature drawn at random."""
    rng = np.random.default_rng(seed)
    n = model.nv
    pi = standard_parameters(model)
    for b in range(n):
        pi[body_columns(model, b)] *= rng.uniform(0.8, 1.2)
    pi[joint_columns(model, "viscous")] = rng.uniform(0.1, 1.0, n)
    pi[joint_columns(model, "coulomb")] = rng.uniform(0.5, 2.0, n)
    pi[joint_columns(model, "armature")] = rng.uniform(0.02, 0.2, n) if armature else 0.0
    return with_parameters(model, pi), pi


def trajectory(model: RobotModel, seed: int, duration: float = 30.0, rate: float = 100.0):
    lower = np.where(np.isfinite(model.position_lower), model.position_lower, -10.0)
    upper = np.where(np.isfinite(model.position_upper), model.position_upper, 10.0)
    home = np.where(upper - lower < 1.2, 0.5 * (lower + upper), np.clip(0.3, lower + 0.5, upper - 0.5))
    traj = design(
        home,
        model.position_lower,
        model.position_upper,
        np.minimum(model.velocity_limit, 2.0),
        10.0,
        duration=duration,
        components=5,
        frequency_range=(0.1, 1.0),
        max_amplitude=1.2,
        position_margin=0.05,
        seed=seed,
    )
    return traj.points(rate)


def torques(model: RobotModel, q, qd, qdd) -> np.ndarray:
    return rnea(model, q, qd, qdd) + friction_torques(Friction(model.damping, model.coulomb), qd)


def relerr(a, b) -> float:
    return float(np.max(np.abs(np.asarray(a) - b)) / max(1e-300, float(np.max(np.abs(b)))))


@pytest.mark.parametrize("name", sorted(ROBOTS))
def test_noiseless_inertial_and_friction_recovered(name: str) -> None:
    model = urdf_model(name)
    truth, pi_true = perturbed(model, seed=1)
    t, q, qd, qdd = trajectory(model, seed=2)
    result = identify(model, Samples(t, q, qd, qdd, torques(truth, q, qd, qdd)), ("inertial", "friction"))
    # torques on another trajectory
    _, q2, qd2, qdd2 = trajectory(model, seed=3, duration=20.0)
    predicted = regressor(model, q2, qd2, qdd2) @ result.parameters
    assert relerr(predicted, torques(truth, q2, qd2, qdd2)) < 1e-6
    assert (
        relerr(
            rnea(result.model, q2, qd2, qdd2) + friction_torques(Friction.from_model(result.model), qd2),
            torques(truth, q2, qd2, qdd2),
        )
        < 1e-6
    )
    # base parameters (identifiable combinations) and friction
    basis = base_parameters(model)
    assert relerr(basis.of(result.parameters), basis.of(pi_true)) < 1e-6
    n = model.nv
    np.testing.assert_allclose(result.viscous, pi_true[10 * n : 11 * n], rtol=1e-7)
    np.testing.assert_allclose(result.coulomb, pi_true[11 * n : 12 * n], rtol=1e-7)
    assert all(c.ok for c in result.consistency)
    assert np.all(result.rms_identified < 1e-6 * result.rms_model.max())
    assert result.rank == basis.rank and result.free == parameter_count(model)


def test_unseen_combinations_keep_the_model_values() -> None:
    """Moving the prior along a combination no torque depends on moves the result by exactly that:
    what the data cannot see keeps the model's values, what it sees comes from the data."""
    model = urdf_model("panda")
    truth, _ = perturbed(model, seed=4, armature=False)
    t, q, qd, qdd = trajectory(model, seed=5)
    samples = Samples(t, q, qd, qdd, torques(truth, q, qd, qdd))
    basis = base_parameters(model)
    null = np.zeros((parameter_count(model), basis.dependent.size))
    null[basis.dependent, np.arange(basis.dependent.size)] = 1.0
    null[basis.independent] = -basis.K
    masses = np.arange(0, 10 * model.nv, PER_BODY)
    inertial_only = ~np.any(null[10 * model.nv :] != 0, axis=0) & np.any(null[: 10 * model.nv] != 0, axis=0)
    null = null[:, ~np.any(null[masses] != 0, axis=0) & inertial_only]
    v = null @ np.random.default_rng(6).normal(0, 1e-3, null.shape[1])
    shifted = with_parameters(model, standard_parameters(model) + v)
    a = identify(model, samples, ("inertial", "friction"), physical=False)
    b = identify(shifted, samples, ("inertial", "friction"), physical=False)
    assert np.max(np.abs(b.parameters - a.parameters - v)) < 1e-9 * np.max(np.abs(v)) + 1e-12
    # parameters in no combination at all (zero columns, e.g. body 1's mass: its origin is fixed)
    untouched = [
        i
        for i in range(10 * model.nv)
        if i in basis.dependent and not np.any(basis.K[:, list(basis.dependent).index(i)])
    ]
    assert body_columns(model, 0).start in untouched
    np.testing.assert_allclose(
        a.parameters[untouched], standard_parameters(model)[untouched], rtol=0, atol=1e-12
    )


def test_base_parameters_closed_form_count_and_null_space() -> None:
    """Planar 2R (double pendulum, gravity in the plane): Khalil's regrouping leaves ZZ1R, MX1R, MY1R,
    ZZ2, MX2, MY2 and armature 2 (armature 1 joins ZZ1R): 7 inertial + 4 friction = 11."""
    model = urdf_model("double_pendulum")
    basis = base_parameters(model)
    assert basis.rank == 11
    for name in ("UR5", "Panda"):
        m = urdf_model(name.lower())
        b = base_parameters(m)
        # moving π along any dependent direction changes no torque, on states not used to find them
        rng = np.random.default_rng(7)
        q, qd, qdd = (rng.normal(0, 1, (30, m.nv)) for _ in range(3))
        y = regressor(m, q, qd, qdd).reshape(-1, parameter_count(m))
        null = np.zeros((parameter_count(m), b.dependent.size))
        null[b.dependent, np.arange(b.dependent.size)] = 1.0
        null[b.independent] = -b.K
        assert np.max(np.abs(y @ null)) < 1e-9 * np.max(np.abs(y))
        assert np.linalg.matrix_rank(y[:, b.independent]) == b.rank


def test_friction_only_and_armature_exact_with_inertials_held() -> None:
    model = urdf_model("ur5")
    rng = np.random.default_rng(8)
    n = model.nv
    pi = standard_parameters(model)
    fv, fc, ia = rng.uniform(0.1, 1.0, n), rng.uniform(0.5, 2.0, n), rng.uniform(0.01, 0.1, n)
    pi[joint_columns(model, "viscous")], pi[joint_columns(model, "coulomb")] = fv, fc
    pi[joint_columns(model, "armature")] = ia
    truth = with_parameters(model, pi)
    t, q, qd, qdd = trajectory(model, seed=9)
    samples = Samples(t, q, qd, qdd, torques(truth, q, qd, qdd))
    result = identify_friction(model, samples, armature=True)
    np.testing.assert_allclose(result.viscous, fv, rtol=1e-9)
    np.testing.assert_allclose(result.coulomb, fc, rtol=1e-9)
    np.testing.assert_allclose(result.armature, ia, rtol=1e-9)
    np.testing.assert_array_equal(result.parameters[: 10 * n], standard_parameters(model)[: 10 * n])
    without = identify_friction(
        model, Samples(t, q, qd, qdd, torques(truth.with_armature(np.zeros(n)), q, qd, qdd))
    )
    np.testing.assert_array_equal(without.armature, np.zeros(n))
    np.testing.assert_allclose(without.viscous, fv, rtol=1e-9)


@pytest.mark.parametrize(("name", "link"), [("panda", "panda_hand"), ("ur5", "tool0")])
def test_payload_exact_with_inertia_and_as_point_mass(name: str, link: str) -> None:
    model = urdf_model(name)
    t, q, qd, qdd = trajectory(model, seed=10)
    com = np.array([0.02, -0.03, 0.08])
    inertia = np.array([[0.004, 0.0005, 0.0], [0.0005, 0.006, -0.0003], [0.0, -0.0003, 0.003]])
    loaded = model.with_payload(link, 1.5, com, inertia)
    res = identify_payload(model, Samples(t, q, qd, qdd, torques(loaded, q, qd, qdd)), link, inertia=True)
    p = res.payload
    assert p.link == link and p.mass == pytest.approx(1.5, rel=1e-9)
    np.testing.assert_allclose(p.com, com, atol=1e-10)
    np.testing.assert_allclose(p.inertia, inertia, atol=1e-10)
    assert res.model.payload is not None and res.model.payload.mass == pytest.approx(1.5, rel=1e-9)
    # a point mass is found exactly by the point-mass fit, with friction at the same time
    rng = np.random.default_rng(11)
    fv, fc = rng.uniform(0.1, 1.0, model.nv), rng.uniform(0.5, 2.0, model.nv)
    point = with_parameters(
        model.with_payload(link, 0.8, com),
        np.concatenate(
            [
                standard_parameters(model.with_payload(link, 0.8, com))[: 10 * model.nv],
                fv,
                fc,
                np.zeros(model.nv),
            ]
        ),
    )
    res = identify(
        model, Samples(t, q, qd, qdd, torques(point, q, qd, qdd)), ("payload", "friction"), payload_link=link
    )
    assert res.payload.mass == pytest.approx(0.8, rel=1e-7)
    np.testing.assert_allclose(res.payload.com, com, atol=1e-7)
    np.testing.assert_allclose(res.viscous, fv, rtol=1e-6)
    np.testing.assert_allclose(res.coulomb, fc, rtol=1e-6)


def test_noisy_data_within_stated_bounds() -> None:
    """UR5, 60 s at 100 Hz, torque noise σ = 0.1 N m: the identified model's held-out RMS is the
    noise level within 10 %, friction within 0.05 (N m s/rad, N m), a 1.5 kg payload within 2 % and
    its com within 5 mm."""
    model = urdf_model("ur5")
    truth, pi_true = perturbed(model, seed=12, armature=False)
    t, q, qd, qdd = trajectory(model, seed=13, duration=60.0)
    rng = np.random.default_rng(14)
    sigma = 0.1
    tau = torques(truth, q, qd, qdd) + rng.normal(0, sigma, q.shape)
    res = identify(model, Samples(t, q, qd, qdd, tau), ("inertial", "friction"), armature=False)
    assert np.all(np.abs(res.rms_identified / sigma - 1) < 0.1)
    n = model.nv
    assert np.max(np.abs(res.viscous - pi_true[10 * n : 11 * n])) < 0.05
    assert np.max(np.abs(res.coulomb - pi_true[11 * n : 12 * n])) < 0.05
    com = np.array([0.0, 0.05, 0.1])
    loaded = truth.with_payload("tool0", 1.5, com, np.diag([0.003, 0.004, 0.002]))
    tau = torques(loaded, q, qd, qdd) + rng.normal(0, sigma, q.shape)
    res = identify_payload(res.model, Samples(t, q, qd, qdd, tau), "tool0")
    assert abs(res.payload.mass - 1.5) < 0.03
    assert np.linalg.norm(res.payload.com - com) < 0.005


def test_consistency_flags_each_condition() -> None:
    model = urdf_model("ur5")
    assert all(c.ok for c in consistency(model))
    pi = standard_parameters(model)
    bad_mass, bad_pd, bad_triangle = pi.copy(), pi.copy(), pi.copy()
    bad_mass[body_columns(model, 0).start] = -1.0
    m, h = pi[PER_BODY], pi[PER_BODY + 1 : PER_BODY + 4]
    c = h / m
    shift = m * (c @ c * np.eye(3) - np.outer(c, c))  # inertia about the com = I_o − shift
    for target, moments in ((bad_pd, (-0.01, 0.02, 0.03)), (bad_triangle, (0.01, 0.01, 0.05))):
        i_o = np.diag(moments) + shift
        target[PER_BODY + 4 : 2 * PER_BODY] = [
            i_o[0, 0],
            i_o[0, 1],
            i_o[1, 1],
            i_o[0, 2],
            i_o[1, 2],
            i_o[2, 2],
        ]
    r = consistency(with_parameters(model, bad_mass))
    assert not r[0].mass_ok and all(x.ok for x in r[1:])
    r = consistency(with_parameters(model, bad_pd))
    assert r[1].mass_ok and not r[1].inertia_ok
    np.testing.assert_allclose(r[1].principal_moments, [-0.01, 0.02, 0.03], atol=1e-12)
    r = consistency(with_parameters(model, bad_triangle))
    assert r[1].inertia_ok and not r[1].triangle_ok
    for target in (bad_mass, bad_pd, bad_triangle):  # the pseudo-inertia test says the same
        flags = [
            np.linalg.eigvalsh(pseudo_inertia(target[body_columns(model, b)]))[0] >= 0
            for b in range(model.nv)
        ]
        assert flags == [c.ok for c in consistency(with_parameters(model, target))]


def test_prepare_differentiates_and_filters_analytic_signals() -> None:
    t = np.arange(0, 20, 1e-3)
    w = 2 * np.pi * np.array([0.3, 0.7])
    q = np.sin(np.outer(t, w))
    tau = np.cos(np.outer(t, w))
    rng = np.random.default_rng(15)
    s = prepare(t, q + rng.normal(0, 1e-6, q.shape), tau, cutoff=10.0)
    assert s.t[0] > 0 and s.t[-1] < t[-1]  # one cut-off period trimmed at each end
    tt = s.t[:, None]
    assert np.max(np.abs(s.qd - w * np.cos(tt * w))) < 2e-3 * w.max()
    assert np.max(np.abs(s.qdd + w**2 * np.sin(tt * w))) < 2e-2 * w.max() ** 2
    assert np.max(np.abs(s.tau - np.cos(tt * w))) < 5e-4  # zero phase: a 1 ms lag would be 4e-3
    raw = prepare(t, q, tau)  # no filter: central differences, O(h²)
    assert len(raw) == len(t)
    err = np.abs(raw.qd[1:-1] - w * np.cos(t[1:-1, None] * w))
    assert np.all(err <= 1.01 * 1e-6 * w**3 / 6)  # central difference: h² ω³ / 6
    with pytest.raises(ValueError, match="cutoff"):
        prepare(t, q, tau, cutoff=600.0)
    with pytest.raises(ValueError, match="increasing"):
        prepare(t[::-1], q, tau)


def lost(n: int, rng: np.random.Generator) -> np.ndarray:
    """The samples kept of n at 1 kHz when 2 % of the messages are lost one by one and three
    bursts (0.08, 0.3 and 1 s) go missing: a bag recorded under load."""
    keep = np.ones(n, dtype=bool)
    keep[rng.choice(np.arange(1, n - 1), n // 50, replace=False)] = False
    for start, length in ((4000, 80), (9000, 300), (14000, 1000)):
        keep[start : start + length] = False
    return keep


def test_prepare_takes_derivatives_within_the_stretches_between_lost_messages() -> None:
    t_all = np.arange(0, 20, 1e-3)
    keep = lost(t_all.size, np.random.default_rng(3))
    t = t_all[keep]
    w = 2 * np.pi * np.array([0.3, 0.7])
    q, qd, tau = np.sin(np.outer(t, w)), w * np.cos(np.outer(t, w)), np.cos(np.outer(t, w))
    # filtered: single losses are bridged for the filter, the three bursts cut the recording
    assert len(stretches(t, 10.0)) == 4
    s = prepare(t, q, tau, qd=qd, cutoff=10.0)
    assert np.all(np.isin(s.t, t))  # only recorded samples; the bridging ones are gone again
    tt = s.t[:, None]
    assert np.max(np.abs(s.qdd + w**2 * np.sin(tt * w))) < 2e-2 * w.max() ** 2  # as without losses
    assert np.max(np.abs(s.tau - np.cos(tt * w))) < 5e-4
    # a cut-off period (100 samples) trimmed at both ends of each of the 4 stretches, no more
    expected = keep.copy()
    for a, b in ((0, 4000), (4080, 9000), (9300, 14000), (15000, t_all.size)):
        expected[a : a + 100] = expected[b - 100 : b] = False
    np.testing.assert_array_equal(s.t, t_all[expected])
    # unfiltered: every sample, q̈ of the recorded q̇ by central differences on the actual times
    # (one-sided at the edge of a long gap: h ω³ / 2)
    raw = prepare(t, q, tau, qd=qd)
    assert len(stretches(t)) == 1 and len(raw) == len(t)
    assert np.max(np.abs(raw.qdd + w**2 * np.sin(np.outer(t, w)))) <= 1.01 * 1e-3 * w.max() ** 3 / 2


def test_bad_requests_raise_value_error() -> None:
    model = urdf_model("double_pendulum")
    t, q, qd, qdd = trajectory(model, seed=16, duration=10.0)
    s = Samples(t, q, qd, qdd, torques(model, q, qd, qdd))
    with pytest.raises(ValueError, match="payload"):
        identify(model, s, ("inertial", "payload"))
    with pytest.raises(ValueError, match="what"):
        identify(model, s, ("mass",))
    with pytest.raises(ValueError, match="split"):
        identify(model, s, split=0.0)
    with pytest.raises(ValueError, match="too few samples"):
        identify(model, s.part(slice(0, 5)), ("inertial", "friction"))
    with pytest.raises(ValueError, match="payload_link"):
        identify(model, s, ("payload",), payload_link="nowhere")


def test_validation_rms_over_every_sample_and_over_the_moving_ones() -> None:
    """rms_* over every held-out sample and rms_*_moving over the rows with |q̇_j| ≥ min_speed,
    both recomputed here from the prediction of each parameter vector."""
    model = urdf_model("ur5")
    truth, _ = perturbed(model, seed=21)
    t, q, qd, qdd = trajectory(model, seed=22, duration=20.0)
    tau = torques(truth, q, qd, qdd) + np.random.default_rng(23).normal(0, 0.2, q.shape)
    samples = Samples(t, q, qd, qdd, tau)
    for min_speed in (0.0, 0.05):
        res = identify(model, samples, ("inertial", "friction"), split=0.6, min_speed=min_speed)
        valid = samples.part(slice(res.train_samples, len(samples)))
        fast = np.abs(valid.qd) >= min_speed
        assert 0.2 < fast.mean() <= 1.0 and (min_speed == 0.0) == bool(fast.all())
        for pi, every, moving in (
            (res.model_parameters, res.rms_model, res.rms_model_moving),
            (res.parameters, res.rms_identified, res.rms_identified_moving),
        ):
            r2 = (valid.tau - predict(model, valid, pi)) ** 2
            np.testing.assert_allclose(every, np.sqrt(r2.mean(0)), rtol=1e-9)
            np.testing.assert_allclose(moving, np.sqrt((r2 * fast).sum(0) / fast.sum(0)), rtol=1e-9)
