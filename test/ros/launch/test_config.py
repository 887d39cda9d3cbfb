"""The shipped configuration: config/inverse_dynamics.yaml and config/trajectory_feedforward.yaml
(every parameter, its default, a comment, loadable by the node), config/controllers.yaml (a
ForwardCommandController on the effort interface of the Panda arm), config/controllers_jtc.yaml
(joint_trajectory_controller on the effort interface) and the arguments of the launch files."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import yaml
from paths import REPO
from std_msgs.msg import Float64MultiArray, String

from rnea_ros import RobotModel
from rnea_ros.model.example_robots import example_urdf_path
from rnea_ros.nodes.inverse_dynamics.params import INVERSE_DYNAMICS as SPECS
from rnea_ros.nodes.trajectory_feedforward import TRAJECTORY_FEEDFORWARD
from rnea_ros.ros.processes import die_with_parent
from rnea_ros.testing.rosgraph import Driver, stop

ROOT = REPO
NODE_CONFIG = ROOT / "config" / "inverse_dynamics.yaml"
CONTROLLERS = ROOT / "config" / "controllers.yaml"
LAUNCH_FILE = ROOT / "launch" / "inverse_dynamics.launch.py"
FEEDFORWARD_CONFIG = ROOT / "config" / "trajectory_feedforward.yaml"
CONTROLLERS_JTC = ROOT / "config" / "controllers_jtc.yaml"
FEEDFORWARD_LAUNCH = ROOT / "launch" / "trajectory_feedforward.launch.py"
# every node config file and the schema it must list
CONFIGS = {
    "inverse_dynamics": (NODE_CONFIG, SPECS),
    "trajectory_feedforward": (FEEDFORWARD_CONFIG, TRAJECTORY_FEEDFORWARD),
}
PANDA = example_urdf_path("panda").read_text()
ARM = [f"panda_joint{i}" for i in range(1, 8)]


def flatten(tree: dict, prefix: str = "") -> dict:
    """Nested ROS parameter YAML → {"a.b.c": value}, as rcl reads it."""
    out = {}
    for key, value in tree.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            out.update(flatten(value, f"{name}."))
        else:
            out[name] = value
    return out


def node_parameters(path: Path = NODE_CONFIG) -> dict:
    document = yaml.safe_load(path.read_text())
    assert list(document) == ["/**"], "one section, for the node under any name and namespace"
    assert list(document["/**"]) == ["ros__parameters"]
    return flatten(document["/**"]["ros__parameters"])


def same_typed(value, default) -> bool:
    """Equal and of the same ROS type (a YAML `1` is an integer, not the double 1.0)."""
    if isinstance(default, list):
        return isinstance(value, list) and len(value) == len(default) and all(map(same_typed, value, default))
    return type(value) is type(default) and value == default


@pytest.mark.parametrize("node", sorted(CONFIGS))
def test_node_config_lists_every_parameter_with_its_default(node: str) -> None:
    path, specs = CONFIGS[node]
    params = node_parameters(path)
    assert sorted(params) == sorted(specs)
    for name, spec in specs.items():
        assert same_typed(params[name], spec.default), f"{name}: {params[name]!r} != {spec.default!r}"


def explanations(config: Path, specs: dict) -> dict[str, str]:
    """Parameter name → the comment lines right above its line in a config file."""
    path: list[tuple[int, str]] = []  # (indent, key) of the enclosing mappings
    comment = ""  # the comment lines right above the current line
    explained = {}
    for line in config.read_text().splitlines():
        stripped = line.strip()
        if not stripped:
            comment = ""
            continue
        if stripped.startswith("#"):
            comment += stripped + "\n"
            continue
        if ":" in stripped:
            indent = len(line) - len(line.lstrip())
            key = stripped.split(":", 1)[0].strip()
            while path and path[-1][0] >= indent:
                path.pop()
            name = ".".join(k for _, k in path[2:] + [(indent, key)])  # below /**: ros__parameters:
            if name in specs:
                explained[name] = comment
            path.append((indent, key))
        comment = ""
    return explained


@pytest.mark.parametrize("node", sorted(CONFIGS))
def test_node_config_explains_every_parameter(node: str) -> None:
    """Every parameter line follows comment lines (units, frames); read-only ones say so."""
    config, specs = CONFIGS[node]
    explained = explanations(config, specs)
    assert sorted(explained) == sorted(specs)
    for name, comment in explained.items():
        assert len(comment) > 10, f"{name} has no comment line above it"
    for name, spec in specs.items():
        if spec.read_only:
            assert "(read-only)" in explained[name], name


@pytest.mark.parametrize("node", sorted(CONFIGS))
def test_node_config_names_every_choice_and_range_of_the_schema(node: str) -> None:
    """The comment of a parameter with choices names each of them in quotes (ee_wrench_frame:
    "root", "link", "tip"), and one that states a range ("in [a, b]") states the schema's."""
    config, specs = CONFIGS[node]
    explained = explanations(config, specs)
    for name, spec in specs.items():
        for choice in spec.choices or ():
            assert f'"{choice}"' in explained[name], f"{name}: '{choice}' not named"
        stated = re.search(r"in \[([-+.\de]+), ([-+.\de]+)\]", explained[name])
        if stated and spec.bounds is not None and spec.type == "double":
            assert tuple(map(float, stated.groups())) == spec.bounds, f"{name}: {stated[0]} vs {spec.bounds}"


def test_controllers_config_drives_the_panda_arm_in_effort() -> None:
    document = yaml.safe_load(CONTROLLERS.read_text())
    manager = document["controller_manager"]["ros__parameters"]
    assert manager["update_rate"] > 0
    assert manager["effort_controller"]["type"] == "forward_command_controller/ForwardCommandController"
    assert manager["joint_state_broadcaster"]["type"] == "joint_state_broadcaster/JointStateBroadcaster"
    controller = document["effort_controller"]["ros__parameters"]
    assert controller["interface_name"] == "effort"
    model = RobotModel.from_urdf(PANDA)
    assert set(controller["joints"]) <= set(model.joint_names), "joints the Panda URDF does not move"
    assert controller["joints"] == ARM
    # the node's output with tip_link: panda_hand (the controllers.yaml recipe) is that list
    assert list(RobotModel.from_urdf(PANDA, tip_link="panda_hand").joint_names) == controller["joints"]


def test_controllers_jtc_config_runs_jtc_on_the_effort_interface() -> None:
    """JTC with `effort` as its only command interface (feedforward + PID), position and velocity
    state, a PID per joint, for exactly the Panda arm joints the node annotates."""
    document = yaml.safe_load(CONTROLLERS_JTC.read_text())
    manager = document["controller_manager"]["ros__parameters"]
    assert manager["update_rate"] > 0
    jtc = "joint_trajectory_controller"
    assert manager[jtc]["type"] == "joint_trajectory_controller/JointTrajectoryController"
    assert manager["joint_state_broadcaster"]["type"] == "joint_state_broadcaster/JointStateBroadcaster"
    controller = document[jtc]["ros__parameters"]
    assert controller["command_interfaces"] == ["effort"]
    assert controller["state_interfaces"] == ["position", "velocity"]
    assert controller["joints"] == ARM
    assert sorted(controller["gains"]) == sorted(ARM)
    for gains in controller["gains"].values():
        assert set(gains) <= {"p", "i", "d", "i_clamp", "ff_velocity_scale"} and gains["p"] > 0
    model = RobotModel.from_urdf(PANDA, tip_link="panda_hand")
    assert list(model.joint_names) == controller["joints"]
    # the launch file's default output is this controller's trajectory topic
    assert launch_arguments(FEEDFORWARD_LAUNCH)["output_topic"] == f"/{jtc}/joint_trajectory"


def launch_arguments(path: Path) -> dict:
    """The ARGUMENTS table of a launch file: name → default (static, no launch import)."""
    tree = ast.parse(path.read_text())
    functions = {f.name for f in tree.body if isinstance(f, ast.FunctionDef)}
    assert "generate_launch_description" in functions
    (arguments,) = [
        node.value
        for node in tree.body
        if isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "ARGUMENTS" for t in node.targets)
    ]
    return {
        ast.literal_eval(k): ast.literal_eval(v)[0]
        for k, v in zip(arguments.keys, arguments.values, strict=True)
    }


def test_feedforward_launch_file_declares_its_arguments() -> None:
    declared = launch_arguments(FEEDFORWARD_LAUNCH)
    assert {"urdf_file", "params_file", "input_topic", "output_topic", "namespace", "use_sim_time"} <= set(
        declared
    )
    assert declared["input_topic"] == "/trajectory_feedforward/trajectory_in"
    assert declared["urdf_file"] == "" and declared["params_file"] is None  # None: the package's file
    text = FEEDFORWARD_LAUNCH.read_text()
    assert '"trajectory_feedforward_node"' in text and "config/trajectory_feedforward.yaml" in text


def test_launch_file_declares_its_arguments() -> None:
    """Static check (launch itself is tested by test_inverse_dynamics_launch.py under ROS)."""
    tree = ast.parse(LAUNCH_FILE.read_text())
    functions = {f.name for f in tree.body if isinstance(f, ast.FunctionDef)}
    assert "generate_launch_description" in functions
    (arguments,) = [
        node.value
        for node in tree.body
        if isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "ARGUMENTS" for t in node.targets)
    ]
    declared = {
        ast.literal_eval(k): ast.literal_eval(v)[0]
        for k, v in zip(arguments.keys, arguments.values, strict=True)
    }
    assert {"urdf_file", "params_file", "commands_topic", "namespace", "use_sim_time"} <= set(declared)
    assert declared["commands_topic"] == "/effort_controller/commands"
    assert declared["urdf_file"] == ""


def test_node_runs_on_the_config_files(tmp_path) -> None:
    """The node started as the README says (params file + remap to the controller's topic) takes
    every value of the file, and with the model from the topic commands the controller's joints."""
    args = [sys.executable, "-m", "rnea_ros.nodes.inverse_dynamics"]
    args += ["--ros-args", "--params-file", str(NODE_CONFIG)]
    args += ["-p", "tip_link:=panda_hand", "-r", "~/effort_commands:=/effort_controller/commands"]
    proc = subprocess.Popen(
        args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, preexec_fn=die_with_parent
    )
    model = RobotModel.from_urdf(PANDA, tip_link="panda_hand")
    driver = Driver("config_driver", dict(zip(model.joint_names, model.effort_limit, strict=True)))
    controller = []
    driver.node.create_subscription(
        Float64MultiArray, "/effort_controller/commands", lambda m: controller.append(list(m.data)), 10
    )
    try:
        got = driver.get_parameters(list(SPECS))
        expected = {**node_parameters(), "tip_link": "panda_hand"}
        for name, value in expected.items():
            assert got[name] == value, f"{name}: node has {got[name]!r}, file says {value!r}"

        driver.description.publish(String(data=PANDA))
        q, qd = np.linspace(-0.5, 0.5, 7), np.full(7, 0.1)
        driver.wait_for_commands(lambda: driver.state(ARM, q, qd))
        end = time.monotonic() + 30.0  # the remapped topic's copy may come after ~/joint_efforts'
        while not controller and time.monotonic() < end:
            driver.spin(0.05)
        assert (
            list(driver.joint_efforts[-1].name)
            == yaml.safe_load(CONTROLLERS.read_text())["effort_controller"]["ros__parameters"]["joints"]
        )
        assert controller and len(controller[-1]) == 7, "nothing on /effort_controller/commands"
        assert not driver.commands, "~/effort_commands was not remapped"
    finally:
        driver.close()
        output = stop(proc)
    assert proc.returncode == 0 and "Traceback" not in output, output


def test_excitation_config_is_valid_and_is_what_the_mismatch_demo_records() -> None:
    from rnea_ros.nodes.multisine_trajectory import MULTISINE
    from rnea_ros.ros.schema import validate
    from rnea_ros.sim.demos.mismatch.demo import EXCITATION

    values = yaml.safe_load((ROOT / "config" / "excitation.yaml").read_text())["multisine_trajectory"][
        "ros__parameters"
    ]
    assert set(values) <= set(MULTISINE)
    assert validate(MULTISINE, values) == values  # every value valid as written
    assert {k: v for k, v in values.items() if k not in ("duration", "autostart")} == EXCITATION
