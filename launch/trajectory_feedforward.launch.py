"""Start the trajectory_feedforward node with its parameter file, a robot description and the
topics of joint_trajectory_controller (JTC, Jazzy >= 4.22, effort command interface).

    ros2 launch rnea_ros trajectory_feedforward.launch.py urdf_file:=/path/to/robot.urdf tip_link:=panda_hand

Arguments (`ros2 launch rnea_ros trajectory_feedforward.launch.py --show-args`):

- urdf_file: URDF (or .xacro, when the xacro package is installed) passed as the node's
  robot_description parameter; empty: the node listens on the robot_description topic.
- params_file: the node's parameters; default: the package's config/trajectory_feedforward.yaml.
- input_topic: where ~/trajectory_in listens; default /trajectory_feedforward/trajectory_in (send
  your trajectories there instead of to JTC).
- output_topic: where ~/trajectory_out goes; default /joint_trajectory_controller/joint_trajectory
  (the controller of config/controllers_jtc.yaml).
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
CONFIG = "trajectory_feedforward.yaml"


def default_params_file() -> str:
    """config/trajectory_feedforward.yaml of the installed package (or of this source tree)."""
    try:
        from ament_index_python.packages import PackageNotFoundError, get_package_share_directory

        try:
            return str(Path(get_package_share_directory(PACKAGE)) / "config" / CONFIG)
        except PackageNotFoundError:
            pass
    except ImportError:
        pass
    return str(Path(__file__).resolve().parent.parent / "config" / CONFIG)


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
    node = Node(
        package=PACKAGE,
        executable="trajectory_feedforward_node",
        name="trajectory_feedforward",
        namespace=arg["namespace"],
        output="screen",
        parameters=[arg["params_file"], overrides] if arg["params_file"] else [overrides],
        remappings=[("~/trajectory_in", arg["input_topic"]), ("~/trajectory_out", arg["output_topic"])],
        arguments=["--ros-args", "--log-level", arg["log_level"]],
    )
    return [node]


ARGUMENTS = {
    "urdf_file": ("", "URDF (or .xacro) of the robot; empty: listen on the robot_description topic"),
    "params_file": (
        None,
        "parameter file of the node (default: the package's config/trajectory_feedforward.yaml; empty: none)",
    ),
    "input_topic": ("/trajectory_feedforward/trajectory_in", "topic ~/trajectory_in is remapped to"),
    "output_topic": (
        "/joint_trajectory_controller/joint_trajectory",
        "topic ~/trajectory_out is remapped to (JTC's joint_trajectory)",
    ),
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
