"""The simulator's step log: every step and every paired latency come back from the saved file
exactly as appended, across the preallocated blocks."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from rnea_ros.sim.step_log import CHUNK, StepLog, load


def test_saved_log_returns_every_step_and_latency(tmp_path: Path) -> None:
    names = ["j1", "j2"]
    log = StepLog(names)
    steps = CHUNK + 5  # spans two blocks
    rng = np.random.default_rng(0)
    q, qd, applied = rng.normal(size=(3, steps, 2))
    stamps = 1_795_000_000_000_000_000 + np.arange(steps, dtype=np.int64) * 1_000_001
    latencies = rng.uniform(1e-4, 5e-3, 1234)
    for k in range(steps):
        log.append(int(stamps[k]), k * 1e-3, q[k], qd[k], applied[k])
    log.add_latencies(list(latencies[:1000]))
    log.add_latencies(list(latencies[1000:]))
    got = load(log.save(tmp_path / "steps.npz"))
    assert len(log) == steps
    np.testing.assert_array_equal(got["stamp_ns"], stamps)  # int64: wall-clock ns exactly
    np.testing.assert_array_equal(got["t"], np.arange(steps) * 1e-3)
    np.testing.assert_array_equal(got["q"], q)
    np.testing.assert_array_equal(got["qd"], qd)
    np.testing.assert_array_equal(got["applied"], applied)
    np.testing.assert_array_equal(got["latency"], latencies)
    assert list(got["names"]) == names
