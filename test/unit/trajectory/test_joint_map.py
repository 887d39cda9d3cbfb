"""JointMap: a trajectory's joints (subset, any order) to model order with held joints, and back."""

from __future__ import annotations

import numpy as np
import pytest
from robot_files import urdf_text

from rnea_ros import RobotModel
from rnea_ros.trajectory.joint_map import JointMap


@pytest.fixture(scope="module")
def panda() -> RobotModel:
    return RobotModel.from_urdf(urdf_text("panda"))


def test_expand_places_columns_by_name_and_holds_the_others(panda) -> None:
    names = ["panda_joint4", "panda_joint1", "panda_joint7"]  # any order
    jm = JointMap(panda, names)
    rng = np.random.default_rng(0)
    pos, vel, acc = rng.normal(size=(3, 5, 3))
    held = {j: 0.1 * i for i, j in enumerate(panda.joint_names)}
    q, qd, qdd = jm.expand_trajectory(pos, vel, acc, held)
    for col, name in enumerate(names):
        i = panda.joint_names.index(name)
        assert np.array_equal(q[:, i], pos[:, col])
        assert np.array_equal(qd[:, i], vel[:, col]) and np.array_equal(qdd[:, i], acc[:, col])
    for name in set(panda.joint_names) - set(names):
        i = panda.joint_names.index(name)
        assert np.all(q[:, i] == held[name]) and not qd[:, i].any() and not qdd[:, i].any()
    assert np.array_equal(jm.restrict(q), pos)
    assert jm.others == tuple(j for j in panda.joint_names if j not in names)


def test_held_positions_as_a_model_order_array_and_none_stays_none(panda) -> None:
    jm = JointMap(panda, ["panda_finger_joint2", "panda_joint2"])
    held = np.arange(panda.nv, dtype=float)
    q, qd, qdd = jm.expand_trajectory([[5.0, 6.0]], held=held)
    expected = held.copy()
    expected[[8, 1]] = [5.0, 6.0]
    assert np.array_equal(q[0], expected) and qd is None and qdd is None


def test_all_joints_need_no_held_positions_and_restrict_limits_to_the_trajectorys_order(panda) -> None:
    order = list(reversed(panda.joint_names))
    jm = JointMap(panda, order)
    q, _, _ = jm.expand_trajectory(np.arange(panda.nv)[None, :])
    assert np.array_equal(q[0], np.arange(panda.nv)[::-1])
    assert np.array_equal(jm.restrict(panda.effort_limit), panda.effort_limit[::-1])


@pytest.mark.parametrize(
    ("names", "held", "message"),
    [
        (["panda_joint1", "panda_joint1"], None, "appears twice"),
        (["panda_joint1", "nope"], None, r"\['nope'\] are not movable"),
        ([], None, "at least one joint"),
        (["panda_joint1"], None, "held positions needed"),
        (["panda_joint1"], {"panda_joint2": 0.0}, "no value for joints"),
        (["panda_joint1"], [0.0, 1.0], "must have 9 values"),
        (["panda_joint1"], np.full(9, np.nan), "NaN or Inf"),
    ],
)
def test_bad_names_and_held_positions_are_named(panda, names, held, message) -> None:
    with pytest.raises(ValueError, match=message):
        JointMap(panda, names).expand_trajectory(np.zeros((1, len(names))), held=held)


def test_wrong_column_counts_are_rejected(panda) -> None:
    jm = JointMap(panda, ["panda_joint1", "panda_joint2"])
    with pytest.raises(ValueError, match="2 columns"):
        jm.expand(np.zeros((3, 3)), 0.0)
    with pytest.raises(ValueError, match="9 columns"):
        jm.restrict(np.zeros((3, 2)))
