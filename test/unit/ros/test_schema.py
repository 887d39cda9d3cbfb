"""Parameter schemas (rnea_ros.ros.schema): every parameter of every node accepts what ROS users
write (integers for doubles, [] for the default) and refuses the rest naming itself."""

from __future__ import annotations

import math

import pytest

from rnea_ros.errors import ParameterError
from rnea_ros.node_schemas import NODE_SCHEMAS
from rnea_ros.nodes.inverse_dynamics.params import INVERSE_DYNAMICS
from rnea_ros.ros.schema import Param, is_per_joint_value, markdown_table, validate, validate_value
from rnea_ros.sim.sim_node import gain_params

SCHEMAS = {**NODE_SCHEMAS, "mujoco_sim": {**NODE_SCHEMAS["mujoco_sim"], **gain_params(["panda_joint1"])}}
ALL = [(node, p) for node, schema in SCHEMAS.items() for p in schema.values()]
IDS = [f"{node}:{p.name}" for node, p in ALL]


def _bad_values(p: Param) -> list:
    """Values of the wrong type, outside the bounds, of the wrong length or not a choice."""
    bad: list = [object()]
    if p.type == "bool":
        bad += ["true", 1, [True]]
    elif p.type in ("double", "int"):
        bad += ["1.0", True, [1.0], math.nan, math.inf]
        if p.bounds:
            bad += [p.bounds[0] - 1.0, p.bounds[1] * 2 + 1.0]
    elif p.type == "string":
        bad += [1, ["a"]]
        if p.choices:
            bad += ["definitely not a choice"]
    elif p.type == "string_array":
        bad += [[1.0], 1.0]
        if p.choices:
            bad += ["definitely not a choice", ["definitely not a choice"], [p.choices[0], "nope"]]
        if p.per_joint:
            bad += [[p.default[0]] * 2]  # neither 1 nor 3 values
    else:
        bad += ["1.0", ["x"], [math.nan] * (p.length or 1), math.nan]
        if p.length:
            bad += [[0.0] * (p.length + 1), 1.0]  # a fixed length: one number is no list
        if p.bounds:
            bad += [[p.bounds[1] * 2 + 1.0] * (p.length or 1)]
    return bad


@pytest.mark.parametrize(("node", "param"), ALL, ids=IDS)
def test_default_is_valid_and_every_bad_value_is_refused_naming_the_parameter(node, param) -> None:
    assert validate_value(param, param.default, 3 if param.per_joint else None) == param.default
    assert validate_value(param, None) == param.default  # `name: []` in YAML reaches rclpy as unset
    for value in _bad_values(param):
        with pytest.raises(ParameterError, match=f"^{param.name}: ") as info:
            validate_value(param, value, 3)
        assert info.value.name == param.name


ANY_LENGTH = [a for a in ALL if a[1].type.endswith("_array") and a[1].length is None]


@pytest.mark.parametrize(("node", "param"), ANY_LENGTH, ids=[f"{n}:{p.name}" for n, p in ANY_LENGTH])
def test_one_value_for_an_array_of_any_length_is_a_list_of_one(node, param) -> None:
    """`contacts.types: point` in a params file (rcl reads a string) is `[point]`, as the table
    says one value is allowed; so is a number for a double array (then its own rules apply)."""
    one = param.default[0] if param.type == "string_array" else 0.5
    if param.choices:
        one = param.choices[-1]
    if param.bounds:
        one = param.bounds[0] if param.bounds[0] > 0 else 0.5
    assert validate_value(param, one) == validate_value(param, [one]) == [one]
    assert type(validate_value(param, one)) is list


@pytest.mark.parametrize(("node", "param"), [a for a in ALL if a[1].type.startswith("double")], ids=str)
def test_integers_are_accepted_for_doubles(node, param) -> None:
    if param.type == "double":
        low = param.bounds[0] if param.bounds else 0.0
        value = math.ceil(low)
        assert validate_value(param, value) == float(value)
        assert type(validate_value(param, value)) is float
    else:
        n = param.length or 3
        low = max(param.bounds[0], 0.0) if param.bounds else 0.0
        got = validate_value(param, [int(math.ceil(low))] * n, n)
        assert got == [float(math.ceil(low))] * n and all(type(x) is float for x in got)


def test_per_joint_lengths_and_the_urdf_marker() -> None:
    kp, viscous = INVERSE_DYNAMICS["feedback.kp"], INVERSE_DYNAMICS["friction.viscous"]
    assert validate_value(kp, [10], 7) == [10.0]
    assert validate_value(kp, [1] * 7, 7) == [1.0] * 7
    with pytest.raises(ParameterError, match="feedback.kp: must have 1 or 7 values"):
        validate_value(kp, [1.0, 2.0], 7)
    assert validate_value(viscous, [-1], 7) == [-1.0]  # the URDF marker, despite the bounds
    with pytest.raises(ParameterError, match=r"friction.viscous: must be in \[0, "):
        validate_value(viscous, [0.1, -0.1], 2)
    assert is_per_joint_value(kp, [1.0] * 7) and not is_per_joint_value(kp, [1.0])
    assert is_per_joint_value(viscous, [0.1, 0.2]) and not is_per_joint_value(viscous, [-1.0])


def test_string_array_choices_per_value_and_per_joint_lengths() -> None:
    unit = INVERSE_DYNAMICS["effort_unit"]
    assert validate_value(unit, ["current", "joint_torque", "motor_torque"], 3) == [
        "current",
        "joint_torque",
        "motor_torque",
    ]
    assert validate_value(unit, ["current"], 7) == ["current"]
    with pytest.raises(
        ParameterError,
        match="effort_unit: value 1 'amps' is not one of joint_torque, motor_torque, current",
    ):
        validate_value(unit, ["current", "amps"])
    with pytest.raises(ParameterError, match="did you mean 'current'"):
        validate_value(unit, ["curent"])
    with pytest.raises(ParameterError, match="effort_unit: must have 1 or 7 values"):
        validate_value(unit, ["current"] * 2, 7)
    assert is_per_joint_value(unit, ["current"] * 7) and not is_per_joint_value(unit, ["current"])


def test_unknown_names_get_the_closest_known_one() -> None:
    with pytest.raises(ParameterError, match="did you mean 'effort_limit_scale'"):
        validate(INVERSE_DYNAMICS, {"effort_limit_scal": 1.0})
    with pytest.raises(ParameterError, match="did you mean 'desired'"):
        validate_value(INVERSE_DYNAMICS["state_source"], "desried")


def test_every_node_has_one_schema_and_a_table_of_it() -> None:
    nodes = {"inverse_dynamics", "trajectory_feedforward", "mujoco_sim", "multisine_trajectory"}
    assert set(NODE_SCHEMAS) == nodes
    for node, schema in NODE_SCHEMAS.items():
        rows = markdown_table(schema).splitlines()
        assert len(rows) == 2 + len(schema), node
        for row, (name, param) in zip(rows[2:], schema.items(), strict=True):
            assert row.startswith(f"| `{name}`") and param.doc().replace("<", "&lt;") in row, (node, name)
    # the shared pieces are the same objects in every node that evaluates the model
    for name in ("gravity", "friction.smoothing_velocity", "payload.mass", "robot_description"):
        assert NODE_SCHEMAS["inverse_dynamics"][name] is NODE_SCHEMAS["trajectory_feedforward"][name]
