"""The closed-loop demo's scenario (no ROS): which robots it accepts, their pose and PD gains, the
phases' timing and the parameters of the three nodes.

**Arm.** A URDF is an arm when it has 6 to 9 movable joints and, leaving out its gripper, the
rest is one serial chain of at least 5 joints starting at the root link. The gripper is every
joint whose name contains "gripper", "finger" or "jaw", every joint below the first branching
of the joint tree (two fingers), and everything below those. The demo commands the chain and the
simulator holds the gripper where it starts (its own stiff servo), for every robot alike.

**Refusals**, up front with the reason: not an arm; a joint whose gravity torque at home exceeds
its effort limit; a joint whose PD loop, sampled at the simulator's rate, would be unstable.

**Gains** (the same in every phase), per commanded joint i with M_ii its inertia at home:
kp_i = max(ω² M_ii, F_c,i / e_c), kd_i = 2 √(kp_i M_ii), ω = 2π · 2 Hz, e_c = 0.25°: each joint
alone is a critically damped oscillator of at least 2 Hz, stiff enough that its URDF Coulomb
friction F_c deflects it by at most e_c.

Units: rad, N m/rad, N m s/rad, kg m², s (or m, N/m, N s/m, kg for prismatic joints).
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import yaml

from rnea_ros.algorithms.dynamics import gravity_torques, mass_matrix
from rnea_ros.errors import RneaError
from rnea_ros.identification.excitation import ExcitationOptions, MultiSine, design
from rnea_ros.model.example_robots import example_urdf_path, find_urdf
from rnea_ros.model.robot_model import RobotModel
from rnea_ros.sim.ros2_control import forward_parameters, hardware_urdf

PANDA_ARM = [f"panda_joint{i}" for i in range(1, 8)]
PANDA_HOME = {
    **dict(zip(PANDA_ARM, [0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785], strict=True)),
    "panda_finger_joint1": 0.02,
    "panda_finger_joint2": 0.02,
}
GRIPPER_WORDS = ("gripper", "finger", "jaw")
MOVABLE = (6, 9)  # movable joints of an arm, gripper included
MIN_CHAIN = 5
BANDWIDTH = 2.0  # Hz
FRICTION_DEFLECTION = np.radians(0.25)  # e_c, rad
RATE = 1000.0  # Hz, physics and joint_states
MODEL_TERMS = ("gravity", "coriolis", "inertia", "friction")
RECORDED_TERMS = (*MODEL_TERMS, "feedback")
LEAD = 0.5  # s from a trajectory request to its start (multisine start_delay)
SETTLE = 1.5  # s between switching feedforward on and the phase-3 trajectory
TAIL = 0.5  # s recorded after the last trajectory
NODE = "/inverse_dynamics"


# MuJoCo Menagerie's arm folders whose robot example-robot-data has: the URDF --plant defaults to
MENAGERIE_URDFS = {
    "franka_emika_panda": "panda",
    "ufactory_xarm7": "xarm_description/urdf/xarm7.urdf",
}


def menagerie_urdf(plant: str) -> str | None:
    """example-robot-data's name for the robot of a Menagerie model file (by its folder), or None."""
    return MENAGERIE_URDFS.get(Path(plant).resolve().parent.name) if plant else None


class Refused(RneaError):
    """The demo cannot run this robot (the message says why)."""


@dataclass(frozen=True)
class Arm:
    """A robot split as the demo uses it (model joint names)."""

    chain: list[str]  # the serial chain from the root, commanded
    gripper: list[str]  # held by the simulator


def split_joints(names: list[str], parent: list[int]) -> tuple[list[int], list[int]]:
    """(chain, gripper) of a joint tree (each joint's parent joint, -1 at the root), as index
    lists (see the module docstring); Refused when the joints outside the gripper are not one
    serial chain from the root."""
    n = len(names)
    children: dict[int, list[int]] = {}
    for i, p in enumerate(parent):
        children.setdefault(p, []).append(i)
    gripper = {i for i in range(n) if any(w in names[i].lower() for w in GRIPPER_WORDS)}
    node = -1
    while len(children.get(node, [])) == 1:  # the first branching of the tree
        node = children[node][0]
    if len(children.get(node, [])) > 1:
        gripper.update(children[node])
    for i in range(n):  # everything below a gripper joint (parents come first)
        if parent[i] in gripper:
            gripper.add(i)
    chain = [i for i in range(n) if i not in gripper]
    for k, i in enumerate(chain):
        expected = -1 if k == 0 else chain[k - 1]
        if parent[i] != expected:
            where = "the root link" if expected < 0 else f"'{names[expected]}'"
            raise Refused(
                f"not an arm: '{names[i]}' does not follow {where} (the joints outside the gripper "
                "branch; an arm is one serial chain from the root)"
            )
    return chain, sorted(gripper)


def split_arm(model: RobotModel) -> Arm:
    """The chain and the gripper of an arm (see the module docstring); Refused with the reason."""
    names, parent = model.joint_names, [int(p) for p in model.parent]
    n = len(names)
    if not MOVABLE[0] <= n <= MOVABLE[1]:
        raise Refused(f"not an arm: {n} movable joints (an arm has {MOVABLE[0]} to {MOVABLE[1]})")
    chain, gripper = split_joints(list(names), parent)
    if len(chain) < MIN_CHAIN:
        raise Refused(f"not an arm: {len(chain)} joints besides the gripper (at least {MIN_CHAIN})")
    return Arm([names[i] for i in chain], [names[i] for i in gripper])


def default_home(model: RobotModel, margin: float = 0.2) -> dict[str, float]:
    """0 for every joint, moved inside its limits less `margin` (the middle for narrow ranges)."""
    home = {}
    for name, lo, hi in zip(model.joint_names, model.position_lower, model.position_upper, strict=True):
        home[name] = float(np.clip(0.0, lo + margin, hi - margin) if hi - lo > 2 * margin else (lo + hi) / 2)
    return home


def home_of(model: RobotModel) -> dict[str, float]:
    """The Panda's usual ready pose, else `default_home`."""
    return dict(PANDA_HOME) if set(PANDA_HOME) <= set(model.joint_names) else default_home(model)


def gains(
    model: RobotModel,
    home: dict[str, float],
    joints: list[str],
    hz: float = BANDWIDTH,
    deflection: float = FRICTION_DEFLECTION,
) -> tuple[list[float], list[float]]:
    """(kp, kd) per joint of `joints` by the rule of the module docstring."""
    q = np.array([home.get(j, 0.0) for j in model.joint_names])
    index = [model.joint_index(j) for j in joints]
    inertia = np.maximum(np.diag(mass_matrix(model, q))[index], 1e-9)
    kp = np.maximum((2 * np.pi * hz) ** 2 * inertia, model.coulomb[index] / deflection)
    kd = 2 * np.sqrt(kp * inertia)
    return [float(x) for x in kp], [float(x) for x in kd]


def sampled_pd_radius(inertia: float, damping: float, kp: float, kd: float, period: float) -> float:
    """Spectral radius of one joint's PD loop as the demo samples it: the command from the state
    at the start of a step, held over it; the joint's URDF damping d integrated implicitly, the
    position semi-implicitly (as MuJoCo steps). < 1: stable."""
    t, m = period, inertia
    s = 1.0 / (1.0 + t * damping / m)
    a = np.array(
        [
            [1.0 - t * t * kp / m * s, t * (1.0 - t * kd / m) * s],
            [-t * kp / m * s, (1.0 - t * kd / m) * s],
        ]
    )
    return float(np.abs(np.linalg.eigvals(a)).max())


@dataclass
class Config:
    """Robot, gains and timing of a demo run (simulated seconds)."""

    urdf: str
    joints: list[str]  # joints the node commands (the arm)
    home: dict[str, float]  # initial positions by joint, rad or m (others start at 0)
    kp: list[float]
    kd: list[float]
    duration: float = 30.0
    hold: float = 5.0
    lockstep: bool = False
    seed: int = 0
    urdf_path: str = ""
    held: tuple[str, ...] = ()  # the gripper, held by the simulator
    state_delay: float = 0.0  # s, real time only: joint_states delivered this late
    max_phase_lag: float = 0.5  # rad, the node's feedback.max_phase_lag (0: gains unbounded)
    plant: str = ""  # an MJCF file the simulator runs instead of the URDF (rnea_ros.sim.foreign_plant)
    plant_joints: tuple[str, ...] = ()  # its joint pairs URDF_JOINT=PLANT_JOINT (empty: chain order)
    ros2_control: bool = False  # the real controller manager between simulator and node

    @property
    def trajectory(self) -> float:
        """Length of each of the two trajectories, s."""
        return (self.duration - self.hold - 2 * LEAD - SETTLE - TAIL) / 2

    @property
    def ramp(self) -> float:
        return min(1.5, self.trajectory / 4)


def check_arm(model: RobotModel, home: dict[str, float], joints: list[str], kp, kd) -> None:
    """Refused when the arm cannot hold itself at home or a PD loop would be unstable."""
    q = np.array([home.get(j, 0.0) for j in model.joint_names])
    g = gravity_torques(model, q)
    m = np.diag(mass_matrix(model, q))
    for k, name in enumerate(joints):
        i = model.joint_index(name)
        if abs(g[i]) > model.effort_limit[i]:
            raise Refused(
                f"'{name}' needs {abs(g[i]):.3g} N m against gravity at home, more than its effort "
                f"limit {model.effort_limit[i]:.3g} N m"
            )
        radius = sampled_pd_radius(max(m[i], 1e-9), model.damping[i], kp[k], kd[k], 1.0 / RATE)
        if not radius < 1.0:
            raise Refused(
                f"'{name}': kp {kp[k]:.3g} N m/rad, kd {kd[k]:.3g} N m s/rad on M_ii = {m[i]:.3g} kg m^2 "
                f"make the {RATE:g} Hz loop unstable (spectral radius {radius:.3g})"
            )


def make_config(args: argparse.Namespace, plant_home: dict[str, float] | None = None) -> Config:
    """The run's configuration from the demo's options; Refused (a ValueError) with the reason
    when the robot is not one the demo runs, OSError when the file is missing. `plant_home`: the
    start pose of a --plant's own (its home keyframe) instead of `home_of`'s."""
    plant = getattr(args, "plant", None) or ""
    path = find_urdf(args.urdf) if args.urdf else example_urdf_path(menagerie_urdf(plant) or "panda")
    urdf = path.read_text()
    model = RobotModel.from_urdf(urdf)
    arm = split_arm(model)
    joints = list(args.joints or arm.chain)
    unknown = [j for j in joints if j not in arm.chain]
    if unknown:
        raise ValueError(f"--joints: {unknown} are not joints of the arm's chain {arm.chain}")
    home = {**home_of(model), **(plant_home or {})}
    kp, kd = gains(model, home, joints)

    def given(value: list[float] | None, default: list[float]) -> list[float]:
        if value is None:
            return list(default)
        if len(value) not in (1, len(joints)) or min(value) < 0:
            raise ValueError(f"gains must be >= 0, one value or {len(joints)}, got {value}")
        return value * len(joints) if len(value) == 1 else value

    config = Config(
        urdf,
        joints,
        home,
        given(args.kp, kp),
        given(args.kd, kd),
        args.duration,
        args.hold,
        args.lockstep,
        args.seed,
        str(path),
        tuple(j for j in model.joint_names if j not in joints),
        getattr(args, "state_delay", 0.0),
        getattr(args, "max_phase_lag", 0.5),
        plant,
        tuple(getattr(args, "plant_joints", None) or ()),
    )
    if config.state_delay > 0 and config.lockstep:
        raise ValueError("--state-delay is for real-time runs (not with --lockstep)")
    if not 0.0 <= config.state_delay <= 1.0 or not 0.0 <= config.max_phase_lag <= 1.5:
        raise ValueError("--state-delay must be in [0, 1] s and --max-phase-lag in [0, 1.5] rad")
    check_arm(model, home, joints, config.kp, config.kd)
    if config.trajectory < 2.0:
        raise ValueError(f"--duration {args.duration} is too short for --hold {args.hold}")
    return config


def parameters(config: Config) -> dict[str, dict]:
    """ROS parameters of the three nodes, by node name (also used by launch/demo.launch.py); with
    `config.ros2_control` the simulator is the robot behind the real controller manager, whose
    parameters (config/controllers.yaml's, on the arm's joints) are in too."""
    params = _node_parameters(config)
    if config.ros2_control:
        params["mujoco_sim"].update(
            controller_type="ros2_control",
            robot_description=hardware_urdf(config.urdf, config.joints, config.held, config.home),
        )
        params.update(forward_parameters(config.joints, config.lockstep))
    return params


def _node_parameters(config: Config) -> dict[str, dict]:
    names = list(config.home)
    return {
        "mujoco_sim": {
            "robot_description": config.urdf,
            "joints": list(config.joints),
            "initial_joints": names,
            "initial_positions": [float(config.home[n]) for n in names],
            "rate": RATE,
            "lockstep": config.lockstep,
            # real time as on a robot: wall-clock stamps, no /clock for every node to take at 1 kHz
            "wall_clock": not config.lockstep,
            "publish_clock": config.lockstep,
            "record": True,  # the supervisor reads the run from the simulator, not from DDS
            "state_delay": config.state_delay,
            "answer_topic": f"{NODE}/joint_efforts",
            "start_subscribers": 1,  # the node
            "plant": config.plant,
            "plant_joints": list(config.plant_joints) or [""],
        },
        "inverse_dynamics": {
            "robot_description": config.urdf,
            "joints": list(config.joints),
            "use_sim_time": config.lockstep,
            "feedback.kp": [float(x) for x in config.kp],
            "feedback.kd": [float(x) for x in config.kd],
            "feedback.max_phase_lag": config.max_phase_lag,
            **{f"compensate.{t}": True for t in MODEL_TERMS},
        },
        "multisine_trajectory": {
            "robot_description": config.urdf,
            "joints": list(config.joints),
            "duration": float(config.trajectory),
            "ramp": float(config.ramp),
            "start_delay": LEAD,
            "autostart": False,
            "seed": config.seed,
        },
    }


class _NoAliases(yaml.SafeDumper):
    def ignore_aliases(self, data) -> bool:
        return True  # rcl's parameter-file parser rejects YAML aliases


def write_parameters(config: Config | dict[str, dict], path: Path) -> Path:
    """One ROS parameter file with a section per node: `parameters(config)`, or the given
    parameters by node name."""
    nodes = parameters(config) if isinstance(config, Config) else config
    params = {name: {"ros__parameters": values} for name, values in nodes.items()}
    path.write_text(yaml.dump(params, Dumper=_NoAliases))
    return path


def multisine(
    model: RobotModel, index, q0, acceleration: float, duration: float, ramp: float, seed: int, **shape
) -> MultiSine:
    """The demos' multi-sine (rnea_ros.identification.excitation.design) on the model's joints
    `index` (velocity indices) from `q0`, within their position and velocity limits and
    |q̈| <= `acceleration` (rad/s²); `shape`: design's other options (frequencies, amplitude...)."""
    lower, upper = model.position_lower[index], model.position_upper[index]
    speed = model.velocity_limit[index]
    options = ExcitationOptions(duration=duration, ramp=ramp, seed=seed, **shape)
    return design(q0, lower, upper, speed, acceleration, options)
