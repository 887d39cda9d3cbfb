"""rnea_ros.identification.excitation: `design` with its `ExcitationOptions` keeps a multi-sine
within the limits it is given, checked on a dense sampling (finite differences of the positions,
not the module's own bounds), and refuses impossible options when they are made."""

from __future__ import annotations

import numpy as np
import pytest

from rnea_ros.identification.excitation import ExcitationOptions, design

HOME = np.array([0.2, -0.5, 1.0])
LOWER, UPPER = np.array([-1.0, -1.2, 0.4]), np.array([1.5, 0.6, 2.5])
VELOCITY, ACCELERATION = np.array([2.0, 1.5, 2.5]), np.array([3.0, 6.0, 4.0])


@pytest.mark.parametrize("seed", [0, 1, 7])
def test_a_design_stays_within_every_limit_and_its_options(seed: int) -> None:
    options = ExcitationOptions(
        duration=6.0,
        ramp=1.0,
        components=4,
        frequency_range=(0.2, 0.9),
        max_amplitude=0.5,
        position_margin=0.15,
        velocity_scale=0.6,
        seed=seed,
    )
    motion = design(HOME, LOWER, UPPER, VELOCITY, ACCELERATION, options)
    assert motion.duration == 6.0 and motion.ramp == 1.0
    assert np.shape(motion.frequencies) == (3, 4)
    assert np.all((motion.frequencies >= 0.2) & (motion.frequencies <= 0.9))
    dt = 1e-4
    t = np.arange(0.0, 6.0 + dt / 2, dt)
    q = motion.sample(t)[0].T  # (n, samples)
    qd = np.gradient(q, dt, axis=1)  # finite differences: independent of the module's derivatives
    qdd = np.gradient(qd, dt, axis=1)
    room = np.minimum(UPPER - 0.15 - HOME, HOME - LOWER - 0.15)
    assert np.all(np.abs(q - HOME[:, None]).max(axis=1) <= np.minimum(room, 0.5) + 1e-9)
    assert np.all(np.abs(qd).max(axis=1) <= 0.6 * VELOCITY * (1 + 1e-3))
    assert np.all(np.abs(qdd[:, 2:-2]).max(axis=1) <= ACCELERATION * (1 + 1e-3))
    assert np.allclose(q[:, [0, -1]], HOME[:, None], atol=1e-12)  # from home, back to home
    # the largest excursion is a real share of what the limits allow (not a trivially small motion)
    assert np.abs(q - HOME[:, None]).max() > 0.05


def test_the_same_options_give_the_same_motion_and_another_seed_another() -> None:
    a = design(HOME, LOWER, UPPER, VELOCITY, ACCELERATION, ExcitationOptions(seed=3))
    b = design(HOME, LOWER, UPPER, VELOCITY, ACCELERATION, ExcitationOptions(seed=3))
    c = design(HOME, LOWER, UPPER, VELOCITY, ACCELERATION, ExcitationOptions(seed=4))
    assert np.array_equal(a.amplitudes, b.amplitudes) and np.array_equal(a.phases, b.phases)
    assert not np.array_equal(a.phases, c.phases)


@pytest.mark.parametrize(
    ("options", "match"),
    [
        ({"components": 0}, "components must be >= 1"),
        ({"frequency_range": (0.0, 1.0)}, "frequency_range"),
        ({"frequency_range": (0.6, 0.2)}, "frequency_range"),
        ({"frequency_range": (0.1, np.inf)}, "frequency_range"),
    ],
)
def test_impossible_options_are_refused_when_made(options: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        ExcitationOptions(**options)


def test_a_home_within_the_margin_of_a_limit_is_refused_naming_the_joint() -> None:
    home = np.array([0.2, 0.55, 1.0])  # joint 1 is 0.05 below its upper limit
    with pytest.raises(ValueError, match=r"home of joint 1 \(0.5500\) is within 0.1 of a limit"):
        design(home, LOWER, UPPER, VELOCITY, ACCELERATION)
