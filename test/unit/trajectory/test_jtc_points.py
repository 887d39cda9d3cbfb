"""The pipeline for the node: a subset trajectory in any order, slowed down, resampled, with
efforts, back in the trajectory's order; rejections."""

from __future__ import annotations

import numpy as np
import pytest
from robot_files import urdf_text
from test_time_scaling import panda_multisine

from rnea_ros import Friction, RobotModel
from rnea_ros.control.effort_law import EffortLaw
from rnea_ros.demo import PANDA_ARM, PANDA_HOME
from rnea_ros.trajectory.efforts import DEFAULT_RESAMPLE_PERIOD, trajectory_efforts
from rnea_ros.trajectory.jtc_points import effort_trajectory


@pytest.fixture(scope="module")
def panda() -> RobotModel:
    return RobotModel.from_urdf(urdf_text("panda"))


def subset(model: RobotModel, points, names):
    idx = [model.joint_index(j) for j in names]
    return (points[0], *(x[:, idx] for x in points[1:]))


def test_subset_in_any_order_gives_the_same_points_permuted(panda) -> None:
    points = panda_multisine(panda, 1)
    law = EffortLaw(friction=Friction.from_model(panda), effort_limit_scale=0.45)
    held = {j: PANDA_HOME[j] for j in panda.joint_names}
    shuffled = [
        "panda_joint3",
        "panda_joint7",
        "panda_joint1",
        "panda_joint5",
        "panda_joint2",
        "panda_joint6",
    ]
    shuffled.append("panda_joint4")
    a = effort_trajectory(panda, PANDA_ARM, *subset(panda, points, PANDA_ARM), held=held, law=law)
    b = effort_trajectory(panda, shuffled, *subset(panda, points, shuffled), held=held, law=law)
    assert a.accepted and b.accepted and a.scale.k == b.scale.k > 1.0
    assert b.joint_names == tuple(shuffled)
    perm = [PANDA_ARM.index(j) for j in shuffled]
    assert np.array_equal(a.times, b.times)
    for x, y in [(a.positions, b.positions), (a.velocities, b.velocities), (a.efforts, b.efforts)]:
        assert np.array_equal(x[:, perm], y)
    # uniform points, every effort within the limit, the binding one at it
    assert np.allclose(np.diff(a.times[:-1]), DEFAULT_RESAMPLE_PERIOD)
    assert a.times[-1] == pytest.approx(a.scale.duration)
    ratio = np.abs(a.efforts) / (0.45 * panda.effort_limit[:7])
    assert ratio.max() <= 1.0 and ratio.max() >= 0.99
    # the efforts are those of the full model with the fingers held
    full = np.hstack(
        [a.positions, np.broadcast_to([PANDA_HOME[j] for j in panda.joint_names[7:]], (a.times.size, 2))]
    )
    zeros = np.zeros((a.times.size, 2))
    tau = trajectory_efforts(
        panda,
        full,
        np.hstack([a.velocities, zeros]),
        np.hstack([a.accelerations, zeros]),
        EffortLaw(friction=law.friction),
    )
    np.testing.assert_allclose(a.efforts, tau[:, :7], rtol=1e-12, atol=1e-12)


def test_terms_add_up_to_the_efforts(panda) -> None:
    points = subset(panda, panda_multisine(panda, 0, fast=False), ["panda_joint2", "panda_joint4"])
    held = {j: PANDA_HOME[j] for j in panda.joint_names}
    out = effort_trajectory(panda, ["panda_joint2", "panda_joint4"], *points, held=held, with_terms=True)
    assert (
        out.accepted
        and out.scale.k == 1.0
        and set(out.terms)
        == {
            "gravity",
            "coriolis",
            "inertia",
            "friction",
            "wrench",
        }
    )
    np.testing.assert_allclose(sum(out.terms.values()), out.efforts, rtol=1e-12, atol=1e-9)
    assert not out.terms["friction"].any()  # no Friction given: none


def test_rejections_give_no_points_and_a_reason(panda) -> None:
    held = {j: PANDA_HOME[j] for j in panda.joint_names}
    points = subset(panda, panda_multisine(panda, 1), PANDA_ARM)
    out = effort_trajectory(panda, PANDA_ARM, *points, held=held, slow_down=False)
    assert not out.accepted and out.times.size == 0 and out.efforts.shape == (0, 7)
    assert "exceeded" in out.scale.reason
    out = effort_trajectory(panda, PANDA_ARM, *points, held=held, law=EffortLaw(effort_limit_scale=0.2))
    assert not out.accepted and "gravity" in out.scale.reason and out.scale.ratio > 1.0
    with pytest.raises(ValueError, match="held positions"):
        effort_trajectory(panda, PANDA_ARM, *points)
