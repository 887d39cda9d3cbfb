"""The ROS declaration of a node's parameter schema (`rnea_ros.ros.schema`; each node's schema
lives next to it, NODE_SCHEMAS in rnea_ros.node_schemas lists them all).

Every parameter is declared with dynamic typing so that `1` is accepted for `1.0`;
`rnea_ros.ros.schema.validate_value` checks and converts each value instead of rclpy, with a
reason naming the parameter. An integer (or integer array) given for a double (or double array),
in a params file or by `ros2 param set`, is stored as a double (`as_schema_types`), so `ros2 param
describe` and rqt_reconfigure keep showing the schema's type. rclpy writes a dynamically typed
parameter's type into its descriptor before any callback can refuse the value (`ros2 param set
/inverse_dynamics joint_states_timeout 1e9`: YAML reads a string), and leaves it there when the
set is refused: `on_set` puts the type of the value kept back, and `as_schema_types` lets rclpy
check every parameter of the right type before one of another type, so that no refusal of
rclpy's own (a range, read-only) comes after that write.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rcl_interfaces.msg import FloatingPointRange, ParameterDescriptor, SetParametersResult
from rclpy.exceptions import (
    InvalidParameterTypeException,
    InvalidParameterValueException,
    ParameterUninitializedException,
)
from rclpy.node import Node
from rclpy.parameter import Parameter

from rnea_ros.errors import ParameterError
from rnea_ros.ros.schema import Param, did_you_mean, one_value_list, validate_value

# Parameters rclpy itself declares or reads; not reported as unknown.
ROS_PARAMS = ("use_sim_time", "start_type_description_service", "qos_overrides.")


def descriptor(param: Param) -> ParameterDescriptor:
    """The ParameterDescriptor of a schema parameter: its description with the rules, read-only,
    dynamic typing, and a floating_point_range for a bounded double (rqt_reconfigure: a slider)."""
    descriptor = ParameterDescriptor(
        name=param.name, description=param.doc(), read_only=param.read_only, dynamic_typing=True
    )
    if param.type == "double" and param.bounds is not None:
        low, high = param.bounds
        descriptor.floating_point_range = [FloatingPointRange(from_value=low, to_value=high, step=0.0)]
    return descriptor


def _as_schema_type(param: Param | None, p: Parameter) -> Parameter:
    """`p` with an integer value turned into the double (array) `param` declares, and a single
    element given for an array of any length into a list of one (`contacts.types: point`); else `p`."""
    if param is None:
        return p
    if param.type == "double" and p.type_ == Parameter.Type.INTEGER:
        return Parameter(p.name, Parameter.Type.DOUBLE, float(p.value))
    if p.type_ != Parameter.Type.NOT_SET and one_value_list(param, p.value):
        if param.type == "string_array":
            return Parameter(p.name, Parameter.Type.STRING_ARRAY, [p.value])
        return Parameter(p.name, Parameter.Type.DOUBLE_ARRAY, [float(p.value)])
    if param.type == "double_array" and p.type_ == Parameter.Type.INTEGER_ARRAY:
        return Parameter(p.name, Parameter.Type.DOUBLE_ARRAY, [float(x) for x in p.value])
    return p


ROS_TYPES = {
    "bool": Parameter.Type.BOOL,
    "int": Parameter.Type.INTEGER,
    "double": Parameter.Type.DOUBLE,
    "string": Parameter.Type.STRING,
    "double_array": Parameter.Type.DOUBLE_ARRAY,
    "string_array": Parameter.Type.STRING_ARRAY,
}


def _of_schema_type(schema: dict[str, Param], p: Parameter) -> bool:
    param = schema.get(p.name)
    return param is None or p.type_ == ROS_TYPES[param.type]


def as_schema_types(schema: dict[str, Param]) -> Callable[[list[Parameter]], list[Parameter]]:
    """A pre-set parameters callback (`Node.add_pre_set_parameters_callback`) that stores integers
    given for doubles as doubles, and puts the parameters of another type than the schema's last
    (module docstring)."""

    def convert(params: list[Parameter]) -> list[Parameter]:
        converted = [_as_schema_type(schema.get(p.name), p) for p in params]
        return sorted(converted, key=lambda p: not _of_schema_type(schema, p))  # stable

    return convert


def on_set(
    node: Node,
    schema: dict[str, Param],
    check: Callable[[list[Parameter]], SetParametersResult],
    pre: Callable[[list[Parameter]], list[Parameter]] | None = None,
) -> None:
    """Register the pre-set callback `pre` (default: `as_schema_types(schema)`) and `check` (the
    node's on-set parameters callback) on `node`; when `check` refuses a set, each parameter's
    descriptor gets back the type of the value it keeps (rclpy wrote the refused value's type
    there: `ros2 param describe` would say string)."""
    node.add_pre_set_parameters_callback(pre or as_schema_types(schema))

    def checked(params: list[Parameter]) -> SetParametersResult:
        result = check(params)
        if not result.successful:
            for p in params:
                if node.has_parameter(p.name):
                    kept = node.get_parameter(p.name).type_
                    node.describe_parameter(p.name).type = kept.value  # the stored descriptor
        return result

    node.add_on_set_parameters_callback(checked)


def declare(
    node: Node,
    schema: dict[str, Param],
    later: tuple[str, ...] = (),
    report_unknown: bool = True,
    deferred: Callable[[str], bool] | None = None,
) -> dict[str, Any]:
    """Declare every parameter of `schema` and return their validated start-up values.

    Raises ParameterError naming the first invalid value (the caller ends start-up with it), and
    logs a warning for every override addressed to this node that is not a parameter, with the
    closest known name; names starting with a prefix in `later`, or for which `deferred(name)`
    holds, are declared later (per joint, once the model is known) and not reported
    (`report_unknown=False`: nothing is).
    """
    values = {}
    overrides = getattr(node, "_parameter_overrides", {})
    for name, param in schema.items():
        # the start-up value (a params file, -p): pre-set callbacks do not see declarations
        start = param.default
        if name in overrides:
            start = _as_schema_type(param, overrides[name]).value
            if start is not None:  # the schema's message before rclpy's own range check
                validate_value(param, start if isinstance(start, (str, bool, int, float)) else list(start))
        try:
            value = node.declare_parameter(name, start, descriptor(param), ignore_override=True).value
        except (
            InvalidParameterTypeException,
            InvalidParameterValueException,
            ParameterUninitializedException,
        ) as exc:
            raise ParameterError(name, str(exc)) from None
        values[name] = validate_value(param, value)
    for name in sorted(overrides if report_unknown else {}):
        if name in schema or (deferred is not None and deferred(name)):
            continue
        if not name.startswith(ROS_PARAMS + tuple(later)):
            node.get_logger().warn(f"unknown parameter '{name}' ignored{did_you_mean(name, schema)}")
    return values


def proposed(
    schema: dict[str, Param], current: dict[str, Any], params: list[Parameter], n_joints: int | None
):
    """`current` with the proposed parameters applied and validated; ParameterError naming the
    first invalid one. An unset parameter (type NOT_SET) is invalid."""
    new = dict(current)
    for p in params:
        param = schema.get(p.name)
        if param is None:
            continue  # not ours (use_sim_time and the like): rclpy handles it
        if p.type_ == Parameter.Type.NOT_SET or p.value is None:
            raise ParameterError(p.name, "cannot be unset")
        value = p.value if isinstance(p.value, (str, bool, int, float)) else list(p.value)
        new[p.name] = validate_value(param, value, n_joints)
    return new


__all__ = [
    "ROS_TYPES",
    "as_schema_types",
    "declare",
    "descriptor",
    "on_set",
    "proposed",
]
