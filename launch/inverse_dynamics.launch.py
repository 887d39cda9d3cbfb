"""Start the inverse_dynamics node with its parameter file, a robot description and the ros2_control
command topic.

    ros2 launch rnea_ros inverse_dynamics.launch.py urdf_file:=/path/to/robot.urdf tip_link:=panda_hand

Arguments (`ros2 launch rnea_ros inverse_dynamics.launch.py --show-args`):

- urdf_file: URDF (or .xacro, when the xacro package is installed) passed as the node's
  robot_description parameter; empty: the node listens on the robot_description topic, as
  published by robot_state_publisher.
- params_file: the node's parameters; default: the package's config/inverse_dynamics.yaml.
- extra_params_file: a second parameter file, applied after params_file (e.g. what `identify
  --out-params` wrote); default: none.
- commands_topic: where ~/effort_commands goes; default /effort_controller/commands (the
  ForwardCommandController of config/controllers.yaml).
- namespace, use_sim_time, log_level: as usual.
- root_link, tip_link: override the parameter file's values when not empty.
"""

from __future__ import annotations

from pathlib import Path

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, OpaqueFunction
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node
from launch_ros.parameter_descriptions import ParameterValue

PACKAGE = "rnea_ros"


def default_params_file() -> str:
    """config/inverse_dynamics.yaml of the installed package (or of this source tree)."""
    try:
        from ament_index_python.packages import PackageNotFoundError, get_package_share_directory

        try:
            return str(Path(get_package_share_directory(PACKAGE)) / "config" / "inverse_dynamics.yaml")
        except PackageNotFoundError:
            pass
    except ImportError:
        pass
    return str(Path(__file__).resolve().parent.parent / "config" / "inverse_dynamics.yaml")


def read_description(path: str) -> str:
    """The URDF text of `path`, expanded by xacro when it is a .xacro file."""
    file = Path(path).expanduser()
    if not file.is_file():
        raise FileNotFoundError(f"urdf_file: no such file '{path}'")
    if file.suffix == ".xacro":
        try:
            import xacro
        except ImportError as exc:
            raise RuntimeError(f"urdf_file: '{path}' needs the xacro package (or pass a URDF)") from exc
        return xacro.process_file(str(file)).toxml()
    return file.read_text()


def truthy(value: str, name: str) -> bool:
    lowered = value.strip().lower()
    if lowered not in ("true", "false", "1", "0"):
        raise ValueError(f"{name} must be true or false, got '{value}'")
    return lowered in ("true", "1")


def launch_node(context, *args, **kwargs):
    arg = {name: LaunchConfiguration(name).perform(context) for name in ARGUMENTS}
    overrides: dict = {"use_sim_time": truthy(arg["use_sim_time"], "use_sim_time")}
    for name in ("root_link", "tip_link"):
        if arg[name]:
            overrides[name] = arg[name]
    if arg["urdf_file"]:
        # value_type=str: the URDF is passed as text, never interpreted as YAML.
        overrides["robot_description"] = ParameterValue(read_description(arg["urdf_file"]), value_type=str)
    files = [arg[name] for name in ("params_file", "extra_params_file") if arg[name]]
    node = Node(
        package=PACKAGE,
        executable="inverse_dynamics_node",
        name="inverse_dynamics",
        namespace=arg["namespace"],
        output="screen",
        parameters=[*files, overrides],
        remappings=[("~/effort_commands", arg["commands_topic"])],
        arguments=["--ros-args", "--log-level", arg["log_level"]],
    )
    return [node]


ARGUMENTS = {
    "urdf_file": ("", "URDF (or .xacro) of the robot; empty: listen on the robot_description topic"),
    "params_file": (
        None,
        "parameter file of the node (default: the package's config/inverse_dynamics.yaml; empty: none)",
    ),
    "extra_params_file": ("", "a second parameter file, applied after params_file (empty: none)"),
    "commands_topic": ("/effort_controller/commands", "topic ~/effort_commands is remapped to"),
    "namespace": ("", "namespace of the node (joint_states and robot_description are relative)"),
    "use_sim_time": ("false", "use the /clock topic (true/false)"),
    "root_link": ("", "root link of the model; empty: the params file's value"),
    "tip_link": ("", "tip of the chain and end-effector link; empty: the params file's value"),
    "log_level": ("info", "log level of the node (debug, info, warn, error, fatal)"),
}


def generate_launch_description() -> LaunchDescription:
    declared = [
        DeclareLaunchArgument(
            name, default_value=default_params_file() if default is None else default, description=text
        )
        for name, (default, text) in ARGUMENTS.items()
    ]
    return LaunchDescription([*declared, OpaqueFunction(function=launch_node)])
