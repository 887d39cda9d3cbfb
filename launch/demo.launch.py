"""The closed-loop demo under a ROS 2 install: a MuJoCo-simulated arm, the inverse_dynamics node
and the multi-sine trajectory source as launch_ros nodes, plus the demo's supervisor, which runs
the three phases (hold, PD alone, PD + RNEA), prints the table and writes the plot. The launch
ends when the supervisor does. With ros2_control (`controllers:=auto`, the default, when it is
installed: rnea_ros.sim.ros2_control) the real controller manager sits between simulator and
node: `ros2_control_node` with the arm's URDF and a topic_based_ros2_control block, and the
spawner loading joint_state_broadcaster and the effort forward_command_controller
`effort_controller`, both run with the stack's environment (its setup.sh applied).

    ros2 launch rnea_ros demo.launch.py [urdf_file:=...] [duration:=30] [lockstep:=false] [plot:=true]

The nodes get exactly the parameters `python -m rnea_ros.demo` gives them
(rnea_ros.sim.scenario.parameters); that command starts the same processes without launch and is
what `make demo` runs. Needs the Python packages mujoco and matplotlib next to the ROS install.
"""

from __future__ import annotations

import os
import shlex
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

from rnea_ros.demo import EXTRA_ARGS

PACKAGE = "rnea_ros"
ARGUMENTS = {
    "urdf_file": ("", "URDF of the simulated robot; empty: example-robot-data's Panda"),
    "duration": ("30", "simulated seconds of the whole demo"),
    "hold": ("5", "seconds of phase 1 (gravity compensation, at rest)"),
    "lockstep": ("false", "every physics step waits for its command (true/false)"),
    "plot": ("true", "write <out>/demo.png (true/false)"),
    "out": ("out", "directory of the plot"),
    "seed": ("0", "seed of the multi-sine trajectories"),
    "controllers": (
        "auto",
        "ros2_control (the real controller manager), simulated, or auto: ros2_control when installed",
    ),
}


def truthy(value: str, name: str) -> bool:
    lowered = value.strip().lower()
    if lowered not in ("true", "false", "1", "0"):
        raise ValueError(f"{name} must be true or false, got '{value}'")
    return lowered in ("true", "1")


def demo_arguments(arg: dict[str, str]) -> list[str]:
    """The launch arguments as options of `python -m rnea_ros.demo`, then those of
    RNEA_ROS_DEMO_ARGS (environment; rnea_ros.demo), which win."""
    argv = ["--duration", arg["duration"], "--hold", arg["hold"], "--seed", arg["seed"], "--out", arg["out"]]
    argv += ["--controllers", arg["controllers"]]
    if arg["urdf_file"]:
        argv += ["--urdf", arg["urdf_file"]]
    if truthy(arg["lockstep"], "lockstep"):
        argv.append("--lockstep")
    if not truthy(arg["plot"], "plot"):
        argv.append("--no-plot")
    return argv + shlex.split(os.environ.get(EXTRA_ARGS, ""))


def launch_demo(context, *args, **kwargs):
    from rnea_ros.sim.demos.forward import argument_parser
    from rnea_ros.sim.ros2_control import choose
    from rnea_ros.sim.scenario import make_config, parameters

    arg = {name: LaunchConfiguration(name).perform(context) for name in ARGUMENTS}
    argv = demo_arguments(arg)
    config = make_config(argument_parser().parse_args(argv))
    stack = choose(arg["controllers"])
    config.ros2_control = stack is not None
    params = parameters(config)

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
    return [inverse_dynamics, trajectory, simulator, *controllers(stack, params), supervisor, finished]


def controllers(stack, params: dict[str, dict]) -> list:
    """ros2_control_node with the demo's controller parameters and the spawner, in the stack's
    environment (none without a stack); both end with the launch, however it ends
    (rnea_ros.ros.with_parent)."""
    if stack is None:
        return []
    import tempfile
    from pathlib import Path

    from rnea_ros.ros.with_parent import command
    from rnea_ros.sim.processes import SPAWN_TIMEOUT
    from rnea_ros.sim.ros2_control import BROADCASTER, CONTROLLER_MANAGER, FORWARD
    from rnea_ros.sim.scenario import write_parameters

    folder = Path(tempfile.mkdtemp(prefix="rnea_demo_launch_"))
    path = write_parameters(
        {k: params[k] for k in (CONTROLLER_MANAGER, FORWARD)}, folder / "controllers.yaml"
    )
    env = stack.env()
    manager = ExecuteProcess(
        cmd=command([str(stack.node), "--ros-args", "--params-file", str(path)]),
        name="ros2_control_node",
        output="screen",
        env=env,
    )
    timeout = ["--controller-manager-timeout", f"{SPAWN_TIMEOUT:g}"]
    spawner = ExecuteProcess(
        cmd=command(stack.spawner(BROADCASTER, FORWARD, "-c", f"/{CONTROLLER_MANAGER}", *timeout)),
        name="spawner",
        output="screen",
        env=env,
    )
    return [manager, spawner]


def generate_launch_description() -> LaunchDescription:
    declared = [
        DeclareLaunchArgument(name, default_value=default, description=text)
        for name, (default, text) in ARGUMENTS.items()
    ]
    return LaunchDescription([*declared, OpaqueFunction(function=launch_demo)])
