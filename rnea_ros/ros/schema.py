"""Declarative parameter schemas (no ROS): one `Param` per parameter gives its type, default,
description, bounds or choices, length rule and whether it is per joint or read-only.

The same table drives the ROS declaration (`rnea_ros.ros.parameters`), validation (`validate`),
the config YAML and the README table (checked by test/ros/launch/test_config.py), in the spirit of
generate_parameter_library. Integers are accepted wherever a double is expected, as ROS users
write `1` for `1.0` in YAML and in `ros2 param set`.
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from rnea_ros.errors import ParameterError

TYPES = ("bool", "int", "double", "string", "double_array", "string_array")
URDF_DEFAULT = [-1.0]  # per-joint value meaning "from the URDF"


@dataclass(frozen=True)
class Param:
    """One parameter. `length`: exact array length; `per_joint`: one value per joint of `joints`
    ("n"), one value or one per joint ("1|n"), or the URDF marker [-1] or one per joint ("urdf|n");
    `bounds` apply to every number; `choices` to strings."""

    name: str
    type: str
    default: Any
    description: str
    read_only: bool = False
    bounds: tuple[float, float] | None = None
    choices: tuple[str, ...] | None = None
    length: int | None = None
    per_joint: str = ""

    def __post_init__(self) -> None:
        assert self.type in TYPES, self.type
        assert self.per_joint in ("", "n", "1|n", "urdf|n"), self.per_joint

    def doc(self) -> str:
        """The description with the rules appended, as rqt_reconfigure and the README show it."""
        rules = []
        if self.bounds is not None:
            rules.append(f"in [{self.bounds[0]:g}, {self.bounds[1]:g}]")
        if self.choices is not None:
            rules.append("one of " + ", ".join(self.choices))
        if self.length is not None:
            rules.append(f"{self.length} values")
        return self.description + (f" ({'; '.join(rules)})" if rules else "")


def _number(name: str, value: Any, integer: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ParameterError(name, f"must be a number, got {value!r}")
    if integer:
        if not isinstance(value, int):
            raise ParameterError(name, f"must be an integer, got {value!r}")
        return value
    x = float(value)
    if not math.isfinite(x):
        raise ParameterError(name, f"must be finite, got {value!r}")
    return x


def _check_bounds(param: Param, values: list[float]) -> None:
    if param.bounds is None:
        return
    lo, hi = param.bounds
    for x in values:
        if not lo <= x <= hi:
            raise ParameterError(param.name, f"must be in [{lo:g}, {hi:g}], got {x:g}")


def validate_value(param: Param, value: Any, n_joints: int | None = None) -> Any:
    """`value` converted to the parameter's type (ints become floats where doubles are expected;
    None, an empty list from YAML, means the default); ParameterError naming it when invalid.
    n_joints: joints of `joints`, for per-joint lengths (None: not known yet, any length)."""
    name = param.name
    if value is None:
        value = param.default
    if param.type == "bool":
        if not isinstance(value, bool):
            raise ParameterError(name, f"must be true or false, got {value!r}")
        return value
    if param.type in ("double", "int"):
        x = _number(name, value, integer=param.type == "int")
        _check_bounds(param, [x])
        return x
    if param.type == "string":
        if not isinstance(value, str):
            raise ParameterError(name, f"must be a string, got {value!r}")
        if param.choices is not None and value not in param.choices:
            hint = difflib.get_close_matches(value, param.choices, 1)
            raise ParameterError(
                name,
                f"must be one of {', '.join(param.choices)}, got '{value}'"
                + (f" (did you mean '{hint[0]}'?)" if hint else ""),
            )
        return value
    if one_value_list(param, value):  # `types: point` in YAML for [point], as the table allows
        value = [value]
    if isinstance(value, (str, bytes)) or not isinstance(value, Iterable):
        raise ParameterError(name, f"must be a list, got {value!r}")
    items = list(value)
    if param.type == "string_array":
        if not all(isinstance(v, str) for v in items):
            raise ParameterError(name, f"must be a list of strings, got {items!r}")
        if param.choices is not None:
            for i, v in enumerate(items):
                if v not in param.choices:
                    hint = difflib.get_close_matches(v, param.choices, 1)
                    raise ParameterError(
                        name,
                        f"value {i} '{v}' is not one of {', '.join(param.choices)}"
                        + (f" (did you mean '{hint[0]}'?)" if hint else ""),
                    )
        _check_per_joint(param, len(items), n_joints)
        return items
    numbers = [_number(name, v) for v in items]
    if param.length is not None and len(numbers) != param.length:
        raise ParameterError(name, f"must have {param.length} values, got {len(numbers)}")
    if param.per_joint == "urdf|n" and numbers == URDF_DEFAULT:
        return numbers
    _check_bounds(param, numbers)
    _check_per_joint(param, len(numbers), n_joints)
    return numbers


def one_value_list(param: Param, value: Any) -> bool:
    """Whether `value` is a single element (a string for a string array, a number for a double
    array) given for an array that takes any number of values: it stands for a list of one, as
    rcl reads `types: point` or `gain: 50` from YAML and `ros2 param set` types it."""
    if param.length is not None or isinstance(value, bool):
        return False
    if param.type == "string_array":
        return isinstance(value, str)
    return param.type == "double_array" and isinstance(value, (int, float))


def _check_per_joint(param: Param, size: int, n_joints: int | None) -> None:
    """A per-joint array's length against `joints` (n_joints None: not known yet, any length)."""
    if not param.per_joint:
        return
    sizes = {n_joints} if n_joints is not None else {size}
    if param.per_joint == "1|n":
        sizes.add(1)
    if not size or size not in sizes:
        allowed = " or ".join(str(s) for s in sorted(sizes))
        raise ParameterError(
            param.name, f"must have {allowed} values (one per joint of 'joints'), got {size}"
        )


def validate(
    schema: Mapping[str, Param], values: Mapping[str, Any], n_joints: int | None = None
) -> dict[str, Any]:
    """Every value of `values` validated (`validate_value`); the first invalid one raises."""
    out = {}
    for name, value in values.items():
        param = schema.get(name)
        if param is None:
            raise ParameterError(name, f"is not a parameter{did_you_mean(name, schema)}")
        out[name] = validate_value(param, value, n_joints)
    return out


def is_per_joint_value(param: Param, value: Any) -> bool:
    """Whether a validated value assigns one number to each joint (bound to the joints' names)."""
    if not param.per_joint or value == URDF_DEFAULT:
        return False
    return not (param.per_joint == "1|n" and len(value) == 1)


def did_you_mean(name: str, known: Iterable[str]) -> str:
    """' (did you mean 'x'?)' for the closest known name, or ''."""
    match = difflib.get_close_matches(name, list(known), 1, 0.6)
    return f" (did you mean '{match[0]}'?)" if match else ""


def defaults(schema: Mapping[str, Param]) -> dict[str, Any]:
    """Every parameter at its default."""
    return {name: param.default for name, param in schema.items()}


def table(params: Iterable[Param]) -> dict[str, Param]:
    """A schema from Params, keyed by name (names must be unique)."""
    out: dict[str, Param] = {}
    for param in params:
        assert param.name not in out, param.name
        out[param.name] = param
    return out


def _shown(value: Any) -> str:
    if isinstance(value, str):
        return f'`"{value}"`'
    if isinstance(value, bool):
        return f"`{str(value).lower()}`"
    return f"`{value}`"


def markdown_table(schema: Mapping[str, Param]) -> str:
    """The README's parameter table of a schema (test/ros/launch/test_config.py checks the README has it)."""
    rows = ["| parameter | default | meaning |", "| --- | --- | --- |"]
    for name, param in schema.items():
        flags = " (read-only)" if param.read_only else ""
        joints = {"n": ", per joint", "1|n": ", one value or per joint", "urdf|n": ", per joint"}
        meaning = param.doc() + joints.get(param.per_joint, "")
        meaning = meaning.replace("<", "&lt;")  # ~/terms/<term>: text, not an HTML tag
        rows.append(f"| `{name}`{flags} | {_shown(param.default)} | {meaning} |")
    return "\n".join(rows)
