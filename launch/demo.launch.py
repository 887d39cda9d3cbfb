"""The closed-loop demo under a ROS 2 install: a MuJoCo-simulated arm, the inverse_dynamics node
and the multi-sine trajectory source as launch_ros nodes, plus the demo's supervisor, which runs
the three phases (hold, PD alone, PD + RNEA), prints the table and writes the plot. The launch
ends when the supervisor does.

    ros2 launch rnea_ros demo.launch.py [urdf_file:=...] [duration:=30] [lockstep:=false] [plot:=true]

The nodes get exactly the parameters `python -m rnea_ros.demo` gives them
(rnea_ros.sim.scenario.parameters); that command starts the same processes without launch and is
what `make demo` runs. Needs the Python packages mujoco and matplotlib next to the ROS install.
"""

from __future__ import annotations

import sys

from launch import LaunchDescription
from launch.actions import (
    DeclareLaunchArgument,
    EmitEvent,
    ExecuteProcess,
    OpaqueFunction,
    RegisterEventHandler,
)
from launch.event_handlers import OnProcessExit
from launch.events import Shutdown
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node
from launch_ros.parameter_descriptions import ParameterValue

PACKAGE = "rnea_ros"
ARGUMENTS = {
    "urdf_file": ("", "URDF of the simulated robot; empty: example-robot-data's Panda"),
    "duration": ("30", "simulated seconds of the whole demo"),
    "hold": ("5", "seconds of phase 1 (gravity compensation, at rest)"),
    "lockstep": ("false", "every physics step waits for its command (true/false)"),
    "plot": ("true", "write <out>/demo.png (true/false)"),
    "out": ("out", "directory of the plot"),
    "seed": ("0", "seed of the multi-sine trajectories"),
}


def truthy(value: str, name: str) -> bool:
    lowered = value.strip().lower()
    if lowered not in ("true", "false", "1", "0"):
        raise ValueError(f"{name} must be true or false, got '{value}'")
    return lowered in ("true", "1")


def demo_arguments(arg: dict[str, str]) -> list[str]:
    """The launch arguments as options of `python -m rnea_ros.demo`."""
    argv = ["--duration", arg["duration"], "--hold", arg["hold"], "--seed", arg["seed"], "--out", arg["out"]]
    if arg["urdf_file"]:
        argv += ["--urdf", arg["urdf_file"]]
    if truthy(arg["lockstep"], "lockstep"):
        argv.append("--lockstep")
    if not truthy(arg["plot"], "plot"):
        argv.append("--no-plot")
    return argv


def launch_demo(context, *args, **kwargs):
    from rnea_ros.sim.demo import argument_parser
    from rnea_ros.sim.scenario import make_config, parameters

    arg = {name: LaunchConfiguration(name).perform(context) for name in ARGUMENTS}
    argv = demo_arguments(arg)
    params = parameters(make_config(argument_parser().parse_args(argv)))

    def node_parameters(name: str) -> list[dict]:
        values = dict(params[name])
        # value_type=str: the URDF is passed as text, never interpreted as YAML.
        values["robot_description"] = ParameterValue(values["robot_description"], value_type=str)
        return [values]

    inverse_dynamics = Node(
        package=PACKAGE,
        executable="inverse_dynamics_node",
        name="inverse_dynamics",
        output="screen",
        parameters=node_parameters("inverse_dynamics"),
        remappings=[("~/effort_commands", "/effort_controller/commands")],
    )
    trajectory = Node(
        package=PACKAGE,
        executable="multisine_trajectory",
        name="multisine_trajectory",
        output="screen",
        parameters=node_parameters("multisine_trajectory"),
    )
    simulator = Node(
        package=PACKAGE,
        executable="mujoco_sim_node",
        name="mujoco_sim",
        output="screen",
        parameters=node_parameters("mujoco_sim"),
    )
    supervisor = ExecuteProcess(
        cmd=[sys.executable, "-m", "rnea_ros.demo", "--attach", *argv],
        name="demo_supervisor",
        output="screen",
    )
    finished = RegisterEventHandler(
        OnProcessExit(target_action=supervisor, on_exit=[EmitEvent(event=Shutdown(reason="demo finished"))])
    )
    return [inverse_dynamics, trajectory, simulator, supervisor, finished]


def generate_launch_description() -> LaunchDescription:
    declared = [
        DeclareLaunchArgument(name, default_value=default, description=text)
        for name, (default, text) in ARGUMENTS.items()
    ]
    return LaunchDescription([*declared, OpaqueFunction(function=launch_demo)])
