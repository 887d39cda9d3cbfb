"""Samples from a recording (rnea_ros.identification.signals): derivatives and zero-phase
filtering against analytic signals, with and without lost messages."""

from __future__ import annotations

import numpy as np
import pytest

from rnea_ros.identification.signals import prepare, stretches


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
