"""rnea_ros.sim.report.largest_errors: which error of a run that stopped early counts as "model
compensated" and which as "PD alone" (the demo's exit 3 message and its real-time test)."""

from __future__ import annotations

import numpy as np

from rnea_ros.sim.report import Recording, largest_errors


def recording(pd: tuple[float, float]) -> Recording:
    """5 s of hold at 0 rad, then the arm sags to 0.2 rad (11.5 deg) from 5.2 s: the model terms
    were switched off as phase 2's trajectory was requested, 0.3 s before it starts at 5.5 s."""
    t = np.arange(0.0, 8.0, 0.001)
    q = np.where(t >= 5.2, 0.2, 0.0)[:, None] * [1.0, 0.5]
    q_des = np.full_like(q, np.nan)
    return Recording(["a", "b"], t, q, q_des, (0.0, 5.0), pd, (np.inf, np.inf))


def test_the_sag_after_the_model_terms_went_off_is_pd_alone_before_its_trajectory_starts() -> None:
    compensated, alone = largest_errors(recording((5.5, 7.5)))
    assert compensated == 0.0  # hold: no error
    assert alone == np.degrees(0.2)


def test_before_phase_2_is_requested_everything_is_compensated() -> None:
    compensated, alone = largest_errors(recording((np.inf, np.inf)))
    assert compensated == np.degrees(0.2) and alone is None
