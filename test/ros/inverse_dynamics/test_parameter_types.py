"""`ros2 param describe` and rqt_reconfigure keep the schema's type: integers given for double (and
double-array) parameters are stored as doubles, for every double parameter of both nodes'
schemas, from a params file at start-up and through the set_parameters service (as `ros2 param
set` and rqt_reconfigure call it); a value of another type is refused and leaves the type as it
was, for every tunable parameter; against the running node."""

from __future__ import annotations

import math
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from rcl_interfaces.msg import ParameterType
from rcl_interfaces.srv import DescribeParameters, GetParameters, SetParameters, SetParametersAtomically
from rclpy.parameter import Parameter as RclpyParameter

from rnea_ros.nodes.inverse_dynamics.params import INVERSE_DYNAMICS
from rnea_ros.nodes.trajectory_feedforward import TRAJECTORY_FEEDFORWARD
from rnea_ros.ros.parameters import ROS_TYPES
from rnea_ros.ros.processes import die_with_parent
from rnea_ros.ros.schema import Param
from rnea_ros.testing.rosgraph import Driver, stop

NODES = {
    "inverse_dynamics": ("rnea_ros.nodes.inverse_dynamics", INVERSE_DYNAMICS),
    "trajectory_feedforward": ("rnea_ros.nodes.trajectory_feedforward", TRAJECTORY_FEEDFORWARD),
}
DOUBLE_TYPES = {
    "double": ParameterType.PARAMETER_DOUBLE,
    "double_array": ParameterType.PARAMETER_DOUBLE_ARRAY,
}


def integer_value(param: Param) -> int | list[int]:
    """A valid integer (array) for a double (array) parameter: its default rounded, moved into
    its bounds."""

    def one(x: float) -> int:
        n = round(x)
        if param.bounds is not None and not param.bounds[0] <= n <= param.bounds[1]:
            n = math.ceil(param.bounds[0])
        return n

    return [one(x) for x in param.default] if param.type.endswith("_array") else one(param.default)


def doubles(schema: dict[str, Param]) -> dict[str, Param]:
    return {name: p for name, p in schema.items() if p.type in DOUBLE_TYPES}


def get_parameters(driver: Driver, node: str, names: list[str]) -> dict[str, object]:
    """name → rcl_interfaces/ParameterValue through the node's get_parameters service."""
    client = driver.node.create_client(GetParameters, f"/{node}/get_parameters")
    try:
        assert client.wait_for_service(30.0), f"/{node}/get_parameters not available"
        # a first call right after discovery can lose its response, and the node answers only
        # once its kernels are loaded (a cold numba cache compiles them: tens of seconds here)
        for _ in range(30):
            future = client.call_async(GetParameters.Request(names=names))
            end = time.monotonic() + 3.0
            while not future.done() and time.monotonic() < end:
                driver.spin(0.01)
            if future.done():
                return dict(zip(names, future.result().values, strict=True))
            client.remove_pending_request(future)
        raise AssertionError(f"/{node}/get_parameters did not answer")
    finally:
        driver.node.destroy_client(client)


def wait_for_log(path: Path, text: str, timeout: float = 180.0) -> None:
    """Until the node's log holds `text` (it answers services once its kernels are loaded)."""
    end = time.monotonic() + timeout
    while text not in path.read_text() and time.monotonic() < end:
        time.sleep(0.2)
    assert text in path.read_text(), path.read_text()


def assert_doubles(values: dict[str, object], expected: dict[str, int | list[int]], schema: dict) -> None:
    for name, value in values.items():
        want = DOUBLE_TYPES[schema[name].type]
        assert value.type == want, f"{name}: type {value.type}, not {want} (double)"
        got = value.double_value if want == ParameterType.PARAMETER_DOUBLE else list(value.double_array_value)
        assert got == expected[name], f"{name}: {got} != {expected[name]}"


@pytest.mark.parametrize("node", sorted(NODES))
def test_integers_for_doubles_are_stored_as_doubles(tmp_path: Path, node: str) -> None:
    module, schema = NODES[node]
    params = {name: integer_value(p) for name, p in doubles(schema).items()}
    assert len(params) >= 10, "the schema walk found too few double parameters"
    path = tmp_path / "params.yaml"
    path.write_text(yaml.safe_dump({node: {"ros__parameters": params}}))
    assert "effort_limit_scale: 1\n" in path.read_text()  # integers in the file
    log = (tmp_path / "node.log").open("w+")
    proc = subprocess.Popen(
        [sys.executable, "-m", module, "--ros-args", "--params-file", str(path)],
        stdout=log,
        stderr=subprocess.STDOUT,
        text=True,
        preexec_fn=die_with_parent,
    )
    proc.log = log  # type: ignore[attr-defined]
    driver = Driver(f"types_driver_{node}")
    try:
        wait_for_log(tmp_path / "node.log", "waiting for a URDF on topic robot_description")
        names = sorted(params)
        assert_doubles(get_parameters(driver, node, names), params, schema)  # the params file
        driver.set_client = driver.node.create_client(SetParameters, f"/{node}/set_parameters")
        tunable = {n: v for n, v in params.items() if not schema[n].read_only}
        results = driver.set_parameters(tunable)
        assert all(r.successful for r in results), [r.reason for r in results]
        assert_doubles(get_parameters(driver, node, sorted(tunable)), tunable, schema)  # the service
    finally:
        driver.close()
        output = stop(proc)
    assert "Traceback" not in output, output


def wrong_type(param: Param):
    """A value of another type than the parameter's: what YAML makes of `1e9` (a string) for the
    numbers and booleans, a double for the strings."""
    return 1e9 if param.type.startswith("string") else "1e9"


def describe(driver: Driver, node: str, names: list[str]) -> dict[str, int]:
    """name → the type `ros2 param describe` shows, through the describe_parameters service."""
    client = driver.node.create_client(DescribeParameters, f"/{node}/describe_parameters")
    try:
        assert client.wait_for_service(30.0), f"/{node}/describe_parameters not available"
        for _ in range(30):
            future = client.call_async(DescribeParameters.Request(names=names))
            end = time.monotonic() + 3.0
            while not future.done() and time.monotonic() < end:
                driver.spin(0.01)
            if future.done():
                return {d.name: d.type for d in future.result().descriptors}
            client.remove_pending_request(future)
        raise AssertionError(f"/{node}/describe_parameters did not answer")
    finally:
        driver.node.destroy_client(client)


@pytest.mark.parametrize("node", sorted(NODES))
def test_a_refused_set_leaves_the_declared_type(tmp_path: Path, node: str) -> None:
    """Every tunable parameter set to a value of another type is refused and `ros2 param describe`
    still gives the schema's type (it said string after `ros2 param set ... 1e9`), also when an
    atomic set is refused by rclpy's own range check after such a value."""
    module, schema = NODES[node]
    tunable = {name: p for name, p in schema.items() if not p.read_only}
    log = (tmp_path / "node.log").open("w+")
    proc = subprocess.Popen(
        [sys.executable, "-m", module], stdout=log, stderr=subprocess.STDOUT, text=True,
        preexec_fn=die_with_parent,
    )  # fmt: skip
    proc.log = log  # type: ignore[attr-defined]
    driver = Driver(f"describe_driver_{node}")
    try:
        wait_for_log(tmp_path / "node.log", "waiting for a URDF on topic robot_description")
        driver.set_client = driver.node.create_client(SetParameters, f"/{node}/set_parameters")
        results = driver.set_parameters({name: wrong_type(p) for name, p in tunable.items()})
        assert not any(r.successful for r in results), [r.reason for r in results]
        # the schema's reason, naming the parameter
        assert all(name + ":" in r.reason for name, r in zip(tunable, results, strict=True))
        want = {name: int(ROS_TYPES[p.type].value) for name, p in tunable.items()}
        assert describe(driver, node, sorted(tunable)) == want
        # atomically: a string for a double, then a double beyond its range (rclpy refuses it)
        client = driver.node.create_client(SetParametersAtomically, f"/{node}/set_parameters_atomically")
        assert client.wait_for_service(10.0)
        request = SetParametersAtomically.Request(
            parameters=[
                RclpyParameter("effort_limit_scale", value="1e9").to_parameter_msg(),
                RclpyParameter("diagnostics_period", value=1e9).to_parameter_msg(),
                RclpyParameter("gravity", value=[0.0, 0.0, -1e9]).to_parameter_msg(),
            ]
        )
        future = client.call_async(request)
        end = time.monotonic() + 10.0
        while not future.done() and time.monotonic() < end:
            driver.spin(0.01)
        assert future.done() and not future.result().result.successful
        assert describe(driver, node, sorted(tunable)) == want
    finally:
        driver.close()
        output = stop(proc)
    assert "Traceback" not in output, output
