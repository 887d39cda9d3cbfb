"""joint_states merged per joint (rnea_ros.ros.joint_states): several publishers, ages, mimic
joints and model swaps, without ROS."""

from __future__ import annotations

import numpy as np
import pytest

from rnea_ros import RobotModel
from rnea_ros.model.example_robots import example_urdf_path
from rnea_ros.ros.joint_states import JointStateCache, efforts_of, layout

PANDA = RobotModel.from_urdf(example_urdf_path("panda").read_text())  # 7 arm + 2 finger joints
ARM = [f"panda_joint{i}" for i in range(1, 8)]
OUTPUT = np.arange(7)  # the arm is commanded, the fingers are not
MS = 1_000_000


def test_two_publishers_complete_the_state_and_only_commanded_joints_trigger() -> None:
    cache = JointStateCache(PANDA)
    arm = layout(PANDA, OUTPUT, [*reversed(ARM), "other_robot_joint"])
    fingers = layout(PANDA, OUTPUT, ["panda_finger_joint1"])
    assert arm.commanded and not fingers.commanded
    q_arm = np.linspace(-1, 1, 7)
    cache.update(arm, np.array([*q_arm[::-1], 5.0]), np.array([*np.ones(7), 9.0]), 100 * MS)
    assert cache.state(50 * MS) == ["panda_finger_joint1"]  # never received; the mimic finger follows
    cache.update(fingers, np.array([0.03]), None, 110 * MS)
    q, qd = cache.state(50 * MS)
    assert np.array_equal(q, [*q_arm, 0.03, 0.03]) and np.array_equal(qd, [*np.ones(7), 0.0, 0.0])
    assert cache.state(105 * MS) == ARM  # the arm's values are now too old, the finger's are not


def test_a_fresh_mimic_joint_is_its_own_measurement() -> None:
    cache = JointStateCache(PANDA)
    everything = layout(PANDA, OUTPUT, list(PANDA.joint_names))
    cache.update(everything, np.full(9, 0.02), None, 10 * MS)
    both = layout(PANDA, OUTPUT, ["panda_finger_joint1", "panda_finger_joint2"])
    cache.update(both, np.array([0.01, 0.035]), None, 20 * MS)
    assert cache.state(0)[0][8] == 0.035
    leader = layout(PANDA, OUTPUT, ["panda_finger_joint1"])
    cache.update(leader, np.array([0.015]), None, 40 * MS)
    assert cache.state(30 * MS) == ARM
    cache.update(layout(PANDA, OUTPUT, ARM), np.zeros(7), None, 40 * MS)
    assert cache.state(30 * MS)[0][8] == 0.015  # its own value is stale: it follows its leader


def test_no_age_check_and_duplicates() -> None:
    cache = JointStateCache(PANDA)
    cache.update(layout(PANDA, OUTPUT, list(PANDA.joint_names)), np.arange(9.0), None, 1)
    assert np.array_equal(cache.state(None)[0], np.arange(9.0))
    with pytest.raises(ValueError, match="joint 'panda_joint3' appears twice"):
        layout(PANDA, OUTPUT, ["panda_joint3", "panda_joint1", "panda_joint3"])


def test_a_model_swap_keeps_what_is_known_of_the_shared_joints_only() -> None:
    arm_only = RobotModel.from_urdf(example_urdf_path("panda").read_text(), tip_link="panda_hand")
    old = JointStateCache(arm_only)
    old.update(layout(arm_only, OUTPUT, ARM), np.arange(7.0), np.ones(7), 5 * MS)
    new = JointStateCache(PANDA, old)
    assert np.array_equal(new.q[:7], np.arange(7.0)) and np.array_equal(new.stamp[:7], np.full(7, 5 * MS))
    assert new.state(0) == ["panda_finger_joint1"]


def test_efforts_are_kept_per_joint_with_the_stamp_of_the_message_that_carried_them() -> None:
    cache = JointStateCache(PANDA)
    names = [*reversed(ARM), "other_robot_joint"]
    arm = layout(PANDA, OUTPUT, names)
    effort = np.array([*np.arange(7.0)[::-1], 99.0])
    cache.update(arm, np.zeros(8), None, 100 * MS, efforts_of(effort.tolist(), arm))
    assert np.array_equal(cache.effort[:7], np.arange(7.0)) and np.all(cache.effort_stamp[:7] == 100 * MS)
    assert np.all(cache.effort_stamp[7:] < 0)  # the fingers' efforts were never received
    # no effort, a short effort list or a NaN on a carried joint: positions move on, efforts go stale
    for bad in ([], [1.0] * 3, [*[1.0] * 6, float("nan"), 1.0]):
        assert efforts_of(bad, arm) is None
        cache.update(arm, np.ones(8), None, 200 * MS, efforts_of(bad, arm))
    assert np.all(cache.stamp[:7] == 200 * MS) and np.all(cache.effort_stamp[:7] == 100 * MS)
    # a NaN on a joint the model does not have is no reason to drop the message's efforts
    assert efforts_of([*[1.0] * 7, float("nan")], arm) is not None
    swapped = JointStateCache(PANDA, cache)  # a model swap keeps them like positions
    assert np.array_equal(swapped.effort, cache.effort) and np.array_equal(
        swapped.effort_stamp, cache.effort_stamp
    )
