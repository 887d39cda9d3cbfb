"""rnea_ros_param: list, get, set and describe a running node's parameters through its
rcl_interfaces services, the pip-only stand-in for `ros2 param`.

    rnea_ros_param list NODE
    rnea_ros_param get NODE NAME
    rnea_ros_param set NODE NAME VALUE
    rnea_ros_param describe NODE NAME
    [--timeout 5]

VALUE is read as YAML, as `ros2 param set` does (true, 3, 2.5, [0.0, 0.0, -9.81], text). Unlike
`ros2 param set`, an integer (or a list of integers) given for a parameter the node declared as a
double (array) is sent as a double, so the parameter keeps its type.
Exit status: 0 done, 1 the node refused or does not have the parameter, 2 bad arguments or no
such node (its services did not answer within --timeout).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import Any

import rclpy
import yaml
from rcl_interfaces.msg import Parameter, ParameterDescriptor, ParameterType, ParameterValue
from rcl_interfaces.srv import DescribeParameters, GetParameters, ListParameters, SetParameters
from rclpy.node import Node

from rnea_ros.errors import RneaError
from rnea_ros.tools.common import EXIT_BAD_INPUT, fail, start_rclpy

PROG = "rnea_ros_param"
TYPE_NAMES = {
    ParameterType.PARAMETER_NOT_SET: "not set",
    ParameterType.PARAMETER_BOOL: "boolean",
    ParameterType.PARAMETER_INTEGER: "integer",
    ParameterType.PARAMETER_DOUBLE: "double",
    ParameterType.PARAMETER_STRING: "string",
    ParameterType.PARAMETER_BYTE_ARRAY: "byte array",
    ParameterType.PARAMETER_BOOL_ARRAY: "boolean array",
    ParameterType.PARAMETER_INTEGER_ARRAY: "integer array",
    ParameterType.PARAMETER_DOUBLE_ARRAY: "double array",
    ParameterType.PARAMETER_STRING_ARRAY: "string array",
}
_FIELDS = {
    ParameterType.PARAMETER_BOOL: "bool_value",
    ParameterType.PARAMETER_INTEGER: "integer_value",
    ParameterType.PARAMETER_DOUBLE: "double_value",
    ParameterType.PARAMETER_STRING: "string_value",
    ParameterType.PARAMETER_BYTE_ARRAY: "byte_array_value",
    ParameterType.PARAMETER_BOOL_ARRAY: "bool_array_value",
    ParameterType.PARAMETER_INTEGER_ARRAY: "integer_array_value",
    ParameterType.PARAMETER_DOUBLE_ARRAY: "double_array_value",
    ParameterType.PARAMETER_STRING_ARRAY: "string_array_value",
}


class NoAnswer(RneaError):
    """The node's service did not answer in time."""


def value_of(pv: ParameterValue) -> Any:
    """The Python value of a ParameterValue (None when not set)."""
    if pv.type == ParameterType.PARAMETER_NOT_SET:
        return None
    value = getattr(pv, _FIELDS[pv.type])
    return list(value) if pv.type >= ParameterType.PARAMETER_BYTE_ARRAY else value


def parameter_value(value: Any, declared: int = ParameterType.PARAMETER_NOT_SET) -> ParameterValue:
    """A ParameterValue of a YAML-read value; integers become doubles when `declared` is double."""
    pv = ParameterValue()
    items = value if isinstance(value, list) else None
    if declared == ParameterType.PARAMETER_DOUBLE and type(value) is int:
        value = float(value)
    if (
        declared == ParameterType.PARAMETER_DOUBLE_ARRAY
        and items
        and all(type(v) in (int, float) for v in items)
    ):
        items = [float(v) for v in items]
    if type(value) is bool:
        pv.type, pv.bool_value = ParameterType.PARAMETER_BOOL, value
    elif type(value) is int:
        pv.type, pv.integer_value = ParameterType.PARAMETER_INTEGER, value
    elif type(value) is float:
        pv.type, pv.double_value = ParameterType.PARAMETER_DOUBLE, value
    elif isinstance(value, str):
        pv.type, pv.string_value = ParameterType.PARAMETER_STRING, value
    elif items is not None and all(type(v) is bool for v in items):
        pv.type, pv.bool_array_value = ParameterType.PARAMETER_BOOL_ARRAY, items
    elif items is not None and all(type(v) is int for v in items):
        pv.type, pv.integer_array_value = ParameterType.PARAMETER_INTEGER_ARRAY, items
    elif items is not None and all(type(v) in (int, float) for v in items):
        pv.type, pv.double_array_value = ParameterType.PARAMETER_DOUBLE_ARRAY, [float(v) for v in items]
    elif items is not None and all(isinstance(v, str) for v in items):
        pv.type, pv.string_array_value = ParameterType.PARAMETER_STRING_ARRAY, items
    else:
        raise ValueError(f"cannot make a parameter of {value!r} (mixed or nested list?)")
    return pv


class Client:
    """Calls the rcl_interfaces services of `target` (bounded waits)."""

    def __init__(self, node: Node, target: str, timeout: float) -> None:
        self.node, self.timeout = node, timeout
        self.target = target if target.startswith("/") else "/" + target

    def call(self, srv_type: Any, service: str, request: Any) -> Any:
        client = self.node.create_client(srv_type, f"{self.target}/{service}")
        try:
            if not client.wait_for_service(timeout_sec=self.timeout):
                raise NoAnswer(
                    f"node '{self.target}' not found (no {service} service within {self.timeout:g} s)"
                )
            future = client.call_async(request)
            rclpy.spin_until_future_complete(self.node, future, timeout_sec=self.timeout)
            if not future.done() or future.result() is None:
                raise NoAnswer(f"'{self.target}/{service}' did not answer within {self.timeout:g} s")
            return future.result()
        finally:
            self.node.destroy_client(client)

    def describe(self, name: str) -> ParameterDescriptor:
        return self.call(
            DescribeParameters, "describe_parameters", DescribeParameters.Request(names=[name])
        ).descriptors[0]


def run(client: Client, args: argparse.Namespace) -> int:
    if args.command == "list":
        names = client.call(ListParameters, "list_parameters", ListParameters.Request()).result.names
        for name in sorted(names):
            print(f"  {name}")
        return 0
    if args.command == "describe":
        d = client.describe(args.name)
        if d.type == ParameterType.PARAMETER_NOT_SET:
            print(f"Parameter not set: {args.name}", file=sys.stderr)
            return 1
        print(f"Parameter name: {d.name}\n  Type: {TYPE_NAMES[d.type]}")
        if d.description:
            print(f"  Description: {d.description}")
        for r in d.floating_point_range:
            print(f"  Constraints: min {r.from_value:g}, max {r.to_value:g}")
        for r in d.integer_range:
            print(f"  Constraints: min {r.from_value}, max {r.to_value}")
        if d.read_only:
            print("  Read only: true")
        return 0
    if args.command == "get":
        values = client.call(GetParameters, "get_parameters", GetParameters.Request(names=[args.name])).values
        if not values or values[0].type == ParameterType.PARAMETER_NOT_SET:
            print(f"Parameter not set: {args.name}", file=sys.stderr)
            return 1
        kind = TYPE_NAMES[values[0].type]
        print(f"{kind[0].upper()}{kind[1:]} value is: {value_of(values[0])}")
        return 0
    declared = client.describe(args.name).type  # NoAnswer (an RneaError) goes to main
    try:
        value = parameter_value(yaml.safe_load(args.value) if args.value != "" else "", declared)
    except (yaml.YAMLError, ValueError) as exc:
        return fail(PROG, f"VALUE '{args.value}': {exc}")
    request = SetParameters.Request(parameters=[Parameter(name=args.name, value=value)])
    result = client.call(SetParameters, "set_parameters", request).results[0]
    if not result.successful:
        print(f"Setting parameter failed: {result.reason}", file=sys.stderr)
        return 1
    print("Set parameter successful")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0])
    ap.add_argument("--timeout", type=float, default=5.0, help="s to wait for the node's services")
    sub = ap.add_subparsers(dest="command", required=True)
    sub.add_parser("list", help="the node's parameter names").add_argument("node")
    for command in ("get", "describe"):
        p = sub.add_parser(command, help=f"{command} one parameter")
        p.add_argument("node")
        p.add_argument("name")
    p = sub.add_parser("set", help="set one parameter (VALUE as YAML)")
    p.add_argument("node")
    p.add_argument("name")
    p.add_argument("value")
    args = ap.parse_args(argv)
    start_rclpy()
    node = Node(f"rnea_ros_param_{os.getpid()}")
    try:
        return run(Client(node, args.node, args.timeout), args)
    except NoAnswer as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        return 130
    finally:
        node.destroy_node()
        rclpy.try_shutdown()


if __name__ == "__main__":
    sys.exit(main())
