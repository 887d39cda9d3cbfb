"""Per-joint parameters (rnea_ros.ros.per_joint) without ROS: names, ranges, and the values the
arrays give each joint (one value, one per joint, friction's [-1] = the URDF's)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rnea_ros import RobotModel
from rnea_ros.errors import ParameterError
from rnea_ros.model.example_robots import example_urdf_path
from rnea_ros.nodes.inverse_dynamics.params import JOINT_KINDS, KP
from rnea_ros.ros.law_params import ARMATURE, VISCOUS
from rnea_ros.ros.per_joint import expand, is_joint_parameter, joint_values, markdown_rows

UR5 = RobotModel.from_urdf(example_urdf_path("ur5").read_text())
OUTPUT = np.array([2, 0, 1], dtype=np.int64)  # three joints, not in model order
NAMES = [UR5.joint_names[i] for i in OUTPUT]


def test_names_and_their_joint() -> None:
    assert KP.name("elbow_joint") == "feedback.elbow_joint.kp" and ARMATURE.name("j1") == "armature.j1"
    assert KP.joint_of("feedback.elbow_joint.kp") == "elbow_joint"
    assert ARMATURE.joint_of("armature.j1") == "j1"
    for other in ("feedback.kp", "feedback..kp", "feedback.max_phase_lag", "friction.j1.viscous", "armature"):
        assert KP.joint_of(other) is None, other
    assert ARMATURE.joint_of("armature.a.b") is None  # armature.<joint> has no suffix
    assert is_joint_parameter(JOINT_KINDS, "friction.j1.coulomb")
    assert not is_joint_parameter(JOINT_KINDS, "friction.scale")


def test_ranges_follow_the_effort_limit_and_hold_the_start_value() -> None:
    assert KP.upper(87.0, 10.0) == 8700.0 and ARMATURE.upper(87.0, 0.0) == 8.7  # 8.7, not 8.700000000000001
    assert KP.upper(12.0, 5000.0) == 5000.0  # a start value beyond the rule widens the range
    assert KP.upper(math.inf, 0.0) == KP.unlimited
    assert KP.param("j", 12.0, 3.0).bounds == (0.0, 1200.0)


def test_the_arrays_give_each_joint_its_value() -> None:
    params = {"feedback.kp": [7.0], "friction.viscous": [-1.0]}
    assert expand(KP, params, UR5, OUTPUT) == [7.0] * 3
    assert expand(KP, {"feedback.kp": [1.0, 2.0, 3.0]}, UR5, OUTPUT) == [1.0, 2.0, 3.0]  # `joints` order
    np.testing.assert_array_equal(expand(VISCOUS, params, UR5, OUTPUT), UR5.damping[OUTPUT])
    with pytest.raises(ParameterError, match="feedback.kp: must have 1 or 3 values"):
        expand(KP, {"feedback.kp": [1.0, 2.0]}, UR5, OUTPUT)
    with pytest.raises(ParameterError, match=r"friction.viscous: must have 3 values .* or be \[-1\]"):
        expand(VISCOUS, {"friction.viscous": [0.5]}, UR5, OUTPUT)
    # a joint's parameter wins over the array's value for that joint
    got = joint_values({**params, f"feedback.{NAMES[1]}.kp": 40.0}, KP, UR5, OUTPUT)
    np.testing.assert_array_equal(got, [7.0, 40.0, 7.0])
    armature = joint_values({f"armature.{NAMES[2]}": 0.2}, ARMATURE, UR5, OUTPUT)
    np.testing.assert_array_equal(armature, [0.0, 0.0, 0.2])


def test_the_docs_rows_name_every_kind() -> None:
    rows = markdown_rows(JOINT_KINDS)
    assert [r.split("`")[1] for r in rows] == [k.name("<joint>") for k in JOINT_KINDS]
    assert all("declared once the model is known" in r and "<joint>" not in r.split("|")[3] for r in rows)
