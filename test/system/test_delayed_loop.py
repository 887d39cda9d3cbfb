"""The feedback bound (rnea_ros.control.effort_law.feedback_bound_kernel) against MuJoCo when the law
sees late states (rnea_ros.sim.closed_loop.delayed_hold, in one process, no ROS).

Every arm of example-robot-data the demo accepts starts 0.02 rad from home on every joint and is
held there by the demo's gains and model terms, computed from states 5 and 20 ms old. With the
bound the deviation stays bounded and ends no larger than it started (the gains are lowered
instead); without it, the arms whose PD is
stiff for their inertia (z1, xarm7) oscillate with a growing amplitude: the bound is what keeps
them stable, not the plant."""

from __future__ import annotations

import numpy as np
import pytest
from test_closed_loop import accepted_arms

from rnea_ros.model.example_robots import example_robots_dir
from rnea_ros.sim.closed_loop import delayed_hold
from rnea_ros.sim.demos.forward import argument_parser
from rnea_ros.sim.scenario import make_config

OFFSET = 0.02  # rad, on every commanded joint


def _config(arm: str):
    return make_config(argument_parser().parse_args(["--urdf", str(example_robots_dir() / arm)]))


def test_the_arm_set_is_the_demo_s() -> None:
    assert len(accepted_arms()) >= 16


@pytest.mark.parametrize("delay", [0.005, 0.020])
@pytest.mark.parametrize("arm", accepted_arms())
def test_a_late_loop_never_grows_with_the_bound(arm: str, delay: float) -> None:
    deviation = delayed_hold(_config(arm), OFFSET, delay, max_phase_lag=0.5)
    assert np.all(np.isfinite(deviation))
    # bounded (coupled joints overshoot a little) and, at the end, no further than at the start
    assert deviation.max() <= 1.5 * OFFSET, (arm, delay, deviation.max(axis=0))
    assert deviation[-1].max() <= OFFSET, (arm, delay, deviation[-1])


@pytest.mark.parametrize("arm", ["z1_description/urdf/z1.urdf", "xarm_description/urdf/xarm7.urdf"])
def test_without_the_bound_a_late_loop_destabilises_a_stiff_arm(arm: str) -> None:
    assert arm in accepted_arms()
    deviation = delayed_hold(_config(arm), OFFSET, 0.020, max_phase_lag=0.0)
    # the oscillation grows well past the initial offset (or the efforts saturate at the limits)
    assert deviation.max() > 5 * OFFSET, deviation.max(axis=0)
