"""The real ros2_control in the demos' loop (no ROS imports): where the stack is, the environment
its programs need, the robot's `<ros2_control>` block and the controller manager's parameters.

The stack is ros2_control's `ros2_control_node` (controller_manager) with
joint_state_broadcaster, forward_command_controller and joint_trajectory_controller
(ros2_controllers), and PickNik's topic_based_ros2_control as the hardware: a system interface
that publishes the command interfaces as sensor_msgs/JointState on a topic and reads the state
from another, so that the MuJoCo simulator node (`mujoco_sim` with `controller_type:
ros2_control`) is the robot behind it. It is found in one of two places:

* the prebuilt of ../shared/ros2-control installed into this Python environment by `make`'s
  set-up (`<sys.prefix>/share/ros2_control_prebuilt/setup.sh`): that file is sourced for every
  program of the stack (AMENT_PREFIX_PATH, LD_LIBRARY_PATH, PATH, RMW_IMPLEMENTATION), so nobody
  has to source it by hand;
* a ROS 2 install whose environment is sourced: `ros2_control_node` and the plugins on
  AMENT_PREFIX_PATH.

Without either, the demos fall back to their simulated controllers (rnea_ros.sim.sim_node's
forward command controller and rnea_ros.sim.jtc) and say so.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

PREBUILT_SETUP = Path("share") / "ros2_control_prebuilt" / "setup.sh"
NODE = Path("lib") / "controller_manager" / "ros2_control_node"
SPAWNER = Path("lib") / "controller_manager" / "spawner"
# the packages a demo loads, besides controller_manager: each must be on AMENT_PREFIX_PATH
PLUGINS = (
    "topic_based_ros2_control",
    "joint_state_broadcaster",
    "forward_command_controller",
    "joint_trajectory_controller",
)
VERSIONED = ("controller_manager", "joint_trajectory_controller", "topic_based_ros2_control")
CHOICES = ("auto", "ros2_control", "simulated")  # the demos' --controllers
HARDWARE = "topic_based_ros2_control/TopicBasedSystem"
CONTROLLER_MANAGER = "controller_manager"
UPDATE_RATE = 1000  # Hz, the controller manager's loop (the simulator's physics rate)
# the simulator's topics behind topic_based_ros2_control (its ~/joint_commands, ~/joint_states)
COMMANDS_TOPIC = "/mujoco_sim/joint_commands"
STATES_TOPIC = "/mujoco_sim/joint_states"
BROADCASTER = "joint_state_broadcaster"
FORWARD = "effort_controller"  # the name config/controllers.yaml gives it


@dataclass(frozen=True)
class Stack:
    """An installed ros2_control stack: `prefix` holds ros2_control_node; `setup` is the
    prebuilt's setup.sh (None: a sourced ROS 2 install)."""

    prefix: Path
    setup: Path | None = None
    versions: dict[str, str] = field(default_factory=dict)

    @property
    def prebuilt(self) -> bool:
        return self.setup is not None

    @property
    def node(self) -> Path:
        return self.prefix / NODE

    def env(self) -> dict[str, str]:
        """The environment its programs run in: this process's now, with setup.sh applied."""
        return sourced(self.setup) if self.setup is not None else dict(os.environ)

    def spawner(self, *args: str) -> list[str]:
        """The command line of controller_manager's spawner (a Python script) with `args`."""
        return [sys.executable, str(self.prefix / SPAWNER), *args]

    def describe(self) -> str:
        """One line: which implementation, which versions, from where."""
        where = "prebuilt, ../shared/ros2-control" if self.prebuilt else "ROS 2 install"
        versions = ", ".join(f"{k} {v}" for k, v in self.versions.items())
        return f"ros2_control ({versions}; {where} in {self.prefix})"


def _version(prefix: Path, package: str) -> str:
    try:
        text = (prefix / "share" / package / "package.xml").read_text()
    except OSError:
        return "?"
    found = re.search(r"<version>([^<]+)</version>", text)
    return found.group(1).strip() if found else "?"


def sourced(setup: Path, base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment after `. setup` in bash, from `base` (default: this process's)."""
    done = subprocess.run(
        ["bash", "-c", f'. "{setup}" && env -0'],
        env=dict(os.environ if base is None else base),
        capture_output=True,
        timeout=60,
        check=True,
    )
    return dict(item.split("=", 1) for item in done.stdout.decode().split("\0") if "=" in item)


def _complete(prefixes: Sequence[Path]) -> Path | None:
    """The prefix of ros2_control_node when every plugin is in one of `prefixes`."""
    node = next((p for p in prefixes if (p / NODE).is_file()), None)
    if node is None:
        return None
    have = all(any((p / "share" / pkg / "package.xml").is_file() for p in prefixes) for pkg in PLUGINS)
    return node if have else None


def find(environ: Mapping[str, str] | None = None) -> Stack | None:
    """The ros2_control stack this Python environment can run, or None (see `why_not`)."""
    environ = dict(os.environ if environ is None else environ)
    venv = Path(sys.prefix)
    if (venv / PREBUILT_SETUP).is_file() and _complete([venv]) is not None:
        return Stack(venv, venv / PREBUILT_SETUP, {p: _version(venv, p) for p in VERSIONED})
    prefixes = [Path(p) for p in environ.get("AMENT_PREFIX_PATH", "").split(os.pathsep) if p]
    prefix = _complete(prefixes)
    if prefix is None:
        return None
    versions = {}
    for package in VERSIONED:
        home = next((p for p in prefixes if (p / "share" / package).is_dir()), prefix)
        versions[package] = _version(home, package)
    return Stack(prefix, None, versions)


def why_not() -> str:
    """Why `find()` found nothing, in one sentence."""
    return (
        f"ros2_control is not installed: no {PREBUILT_SETUP} in {sys.prefix} (`make` installs "
        "../shared/ros2-control when that folder exists) and no ros2_control_node with "
        f"{', '.join(PLUGINS)} on AMENT_PREFIX_PATH"
    )


def choose(choice: str) -> Stack | None:
    """The stack for the demos' --controllers: `auto` (the stack when installed), `ros2_control`
    (RuntimeError when it is not) or `simulated` (None)."""
    if choice not in CHOICES:
        raise ValueError(f"--controllers must be one of {CHOICES}, got '{choice}'")
    if choice == "simulated":
        return None
    stack = find()
    if stack is None and choice == "ros2_control":
        raise RuntimeError(f"--controllers ros2_control: {why_not()}")
    return stack


# --- the robot description ----------------------------------------------------------------


def hardware_urdf(
    urdf: str,
    commanded: Sequence[str],
    state_only: Sequence[str] = (),
    initial: Mapping[str, float] | None = None,
    name: str = "mujoco_sim",
) -> str:
    """The URDF with a `<ros2_control>` system on topic_based_ros2_control: an `effort` command
    interface and `position`, `velocity`, `effort` state interfaces for each joint of
    `commanded` (in that order, first: topic_based_ros2_control sends the efforts of the joints
    with an effort command interface in the block's order), then `state_only` joints (a gripper
    the simulator holds itself: joint_state_broadcaster still publishes them). Commands go out
    every cycle (`trigger_joint_command_threshold` -1: the plugin's default publishes only when
    position commands differ from the positions, never with efforts alone). `initial`: the
    positions the state interfaces hold before the first state arrives. A `<ros2_control>` block
    the URDF already has (its real hardware) is replaced: the simulator is the hardware now.
    ValueError when the URDF misses a joint."""
    try:
        robot = ET.fromstring(urdf)
    except ET.ParseError as exc:
        raise ValueError(f"robot description is not XML: {exc}") from None
    for old in robot.findall("ros2_control"):
        robot.remove(old)
    joints = {j.get("name") for j in robot.iter("joint")}
    missing = [j for j in [*commanded, *state_only] if j not in joints]
    if missing:
        raise ValueError(f"joints {missing} are not in the robot description")
    block = ET.SubElement(robot, "ros2_control", {"name": name, "type": "system"})
    hardware = ET.SubElement(block, "hardware")
    ET.SubElement(hardware, "plugin").text = HARDWARE
    for key, value in (
        ("joint_commands_topic", COMMANDS_TOPIC),
        ("joint_states_topic", STATES_TOPIC),
        ("trigger_joint_command_threshold", "-1"),
    ):
        ET.SubElement(hardware, "param", {"name": key}).text = value
    initial = initial or {}
    for joint, command in [(j, True) for j in commanded] + [(j, False) for j in state_only]:
        element = ET.SubElement(block, "joint", {"name": joint})
        if command:
            ET.SubElement(element, "command_interface", {"name": "effort"})
        for interface in ("position", "velocity", "effort"):
            state = ET.SubElement(element, "state_interface", {"name": interface})
            if interface == "position" and joint in initial:
                ET.SubElement(state, "param", {"name": "initial_value"}).text = repr(float(initial[joint]))
    return ET.tostring(robot, encoding="unicode")


# --- the controller manager's parameters --------------------------------------------------


def manager_parameters(controllers: Mapping[str, str], lockstep: bool) -> dict:
    """controller_manager's own section: the loop rate, its clock (lock-step: the simulator's
    /clock paces the loop, one cycle per physics step) and the controllers' types by name."""
    values: dict = {"update_rate": UPDATE_RATE, "use_sim_time": bool(lockstep)}
    values.update({name: {"type": type_} for name, type_ in controllers.items()})
    return values


def forward_parameters(joints: Sequence[str], lockstep: bool) -> dict[str, dict]:
    """The parameters config/controllers.yaml gives (joint_state_broadcaster and the effort
    forward_command_controller `effort_controller` on `joints`), by node name."""
    types = {
        BROADCASTER: "joint_state_broadcaster/JointStateBroadcaster",
        FORWARD: "forward_command_controller/ForwardCommandController",
    }
    return {
        CONTROLLER_MANAGER: manager_parameters(types, lockstep),
        FORWARD: {"joints": list(joints), "interface_name": "effort"},
    }


def jtc_parameters(
    name: str, joints: Sequence[str], gains: Mapping[str, Sequence[float]], lockstep: bool
) -> dict[str, dict]:
    """joint_state_broadcaster and a joint_trajectory_controller `name` on the effort interface
    alone (u = effort_d + ff_velocity_scale v_d + PID), with `gains` {p, i, d, ff_velocity_scale,
    ...: one value per joint}, by node name."""
    types = {
        BROADCASTER: "joint_state_broadcaster/JointStateBroadcaster",
        name: "joint_trajectory_controller/JointTrajectoryController",
    }
    per_joint = {
        joint: {gain: float(values[k]) for gain, values in gains.items()} for k, joint in enumerate(joints)
    }
    return {
        CONTROLLER_MANAGER: manager_parameters(types, lockstep),
        name: {
            "joints": list(joints),
            "command_interfaces": ["effort"],
            "state_interfaces": ["position", "velocity"],
            "gains": per_joint,
        },
    }


__all__ = [
    "CHOICES",
    "Stack",
    "choose",
    "find",
    "forward_parameters",
    "hardware_urdf",
    "jtc_parameters",
    "why_not",
]
