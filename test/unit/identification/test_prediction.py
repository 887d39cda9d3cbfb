"""Efforts as the fit models them (rnea_ros.identification.prediction) against rnea + friction
computed directly: without a filter Y π is the model's efforts; with one the Coulomb term is the
low-passed tanh(q̇ / v_ε); chunking changes nothing; the held-out RMS counted by hand."""

from __future__ import annotations

import numpy as np
import pytest
from identification_data import perturbed, torques, trajectory, urdf_model

from rnea_ros import rnea
from rnea_ros.identification import prediction
from rnea_ros.identification.prediction import held_out_rms, predict
from rnea_ros.identification.regressor import standard_parameters
from rnea_ros.identification.signals import Samples, lowpass


@pytest.fixture(scope="module")
def case():
    model = urdf_model("ur5")
    truth, pi = perturbed(model, seed=7, armature=False)
    t, q, qd, qdd = trajectory(model, seed=8, duration=10.0)
    return model, truth, pi, Samples(t, q, qd, qdd, torques(truth, q, qd, qdd))


def test_unfiltered_prediction_is_the_models_efforts(case, monkeypatch) -> None:
    model, truth, pi, samples = case
    expected = torques(truth, samples.q, samples.qd, samples.qdd)
    got = predict(model, samples, pi)
    assert np.max(np.abs(got - expected)) < 1e-9 * np.max(np.abs(expected))
    monkeypatch.setattr(prediction, "CHUNK_FLOATS", 1000)  # many chunks
    np.testing.assert_array_equal(predict(model, samples, pi), got)


def test_filtered_samples_filter_the_coulomb_term(case) -> None:
    model, truth, pi, samples = case
    filtered = Samples(samples.t, samples.q, samples.qd, samples.qdd, samples.tau, cutoff=5.0)
    v = 0.01
    coulomb = truth.coulomb * lowpass(samples.t, np.tanh(samples.qd / v), 5.0)
    expected = rnea(truth, samples.q, samples.qd, samples.qdd) + truth.damping * samples.qd + coulomb
    got = predict(model, filtered, pi, smoothing_velocity=v)
    assert np.max(np.abs(got - expected)) < 1e-9 * np.max(np.abs(expected))


def test_held_out_rms_by_hand(case) -> None:
    model, truth, pi, samples = case
    pi0 = standard_parameters(model)
    start = len(samples) // 2
    every, moving = held_out_rms(model, samples, pi0, start, min_speed=0.1)
    residual = (samples.tau - predict(model, samples, pi0))[start:]
    fast = np.abs(samples.qd[start:]) >= 0.1
    assert 0 < fast.mean() < 1
    np.testing.assert_allclose(every, np.sqrt(np.mean(residual**2, axis=0)), rtol=1e-12)
    for j in range(model.nv):
        np.testing.assert_allclose(moving[j], np.sqrt(np.mean(residual[fast[:, j], j] ** 2)), rtol=1e-12)
