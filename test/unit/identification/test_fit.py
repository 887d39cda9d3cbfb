"""Identification (rnea_ros.identification.fit) recovers known parameters from synthetic data (our
rnea + friction on a perturbed model): exactly without noise, within stated bounds with it; what
the data cannot see keeps the model's values; its validation RMS recomputed from the prediction."""

from __future__ import annotations

import numpy as np
import pytest
from identification_data import ROBOTS, perturbed, relerr, torques, trajectory, urdf_model

from rnea_ros import Friction, friction_torques, rnea
from rnea_ros.identification.fit import FitOptions, identify, identify_friction, identify_payload
from rnea_ros.identification.identifiability import base_parameters
from rnea_ros.identification.prediction import predict
from rnea_ros.identification.regressor import (
    PER_BODY,
    body_columns,
    joint_columns,
    parameter_count,
    regressor,
    standard_parameters,
    with_parameters,
)
from rnea_ros.identification.signals import Samples


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
    a = identify(model, samples, ("inertial", "friction"), FitOptions(physical=False))
    b = identify(shifted, samples, ("inertial", "friction"), FitOptions(physical=False))
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
        model,
        Samples(t, q, qd, qdd, torques(point, q, qd, qdd)),
        ("payload", "friction"),
        FitOptions(payload_link=link),
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
    res = identify(model, Samples(t, q, qd, qdd, tau), ("inertial", "friction"), FitOptions(armature=False))
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


def test_bad_requests_raise_value_error() -> None:
    model = urdf_model("double_pendulum")
    t, q, qd, qdd = trajectory(model, seed=16, duration=10.0)
    s = Samples(t, q, qd, qdd, torques(model, q, qd, qdd))
    with pytest.raises(ValueError, match="payload"):
        identify(model, s, ("inertial", "payload"))
    with pytest.raises(ValueError, match="what"):
        identify(model, s, ("mass",))
    with pytest.raises(ValueError, match="split"):
        identify(model, s, options=FitOptions(split=0.0))
    with pytest.raises(ValueError, match="too few samples"):
        identify(model, s.part(slice(0, 5)), ("inertial", "friction"))
    with pytest.raises(ValueError, match="payload_link"):
        identify(model, s, ("payload",), FitOptions(payload_link="nowhere"))


def test_validation_rms_over_every_sample_and_over_the_moving_ones() -> None:
    """rms_* over every held-out sample and rms_*_moving over the rows with |q̇_j| ≥ min_speed,
    both recomputed here from the prediction of each parameter vector."""
    model = urdf_model("ur5")
    truth, _ = perturbed(model, seed=21)
    t, q, qd, qdd = trajectory(model, seed=22, duration=20.0)
    tau = torques(truth, q, qd, qdd) + np.random.default_rng(23).normal(0, 0.2, q.shape)
    samples = Samples(t, q, qd, qdd, tau)
    for min_speed in (0.0, 0.05):
        res = identify(model, samples, ("inertial", "friction"), FitOptions(split=0.6, min_speed=min_speed))
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
