"""The payload demo's scenario (no ROS; rnea_ros.sim.demos.payload.demo): the arm, its gains, the node's
observer and estimation parameters, the schedule's times and the three processes.

Gains: Franka's joint impedance example's stiffness (kp 600, 600, 600, 600, 250, 150, 50 N m/rad),
kd critically damped on each joint's inertia at home (2 √(kp M_ii)). Collision thresholds: 2 N m
on the shoulder and elbow joints, 1 N m on the wrist's (tens of times the contact-free |r| of the
free run: its figure says how many). Times in plant seconds.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from rnea_ros.algorithms.dynamics import mass_matrix
from rnea_ros.model.example_robots import example_urdf_path
from rnea_ros.model.robot_model import RobotModel
from rnea_ros.sim.demos.payload.plant import Schedule
from rnea_ros.sim.processes import Processes
from rnea_ros.sim.scenario import PANDA_ARM, Config, home_of, parameters

if TYPE_CHECKING:
    from rnea_ros.sim.report import Recording

KP = (600.0, 600.0, 600.0, 600.0, 250.0, 150.0, 50.0)  # N m/rad, Franka's joint impedance example
OBSERVER_GAIN = 100.0  # 1/s
THRESHOLDS = (2.0, 2.0, 2.0, 2.0, 1.0, 1.0, 1.0)  # N m, collision flag per joint
ESTIMATION: dict[str, Any] = {  # the node's payload.* estimation parameters
    "payload.link": "panda_hand",
    "payload.estimation_window": 0.4,
    "payload.estimation_max_window": 3.0,
    "payload.trigger_hold": 0.15,
    "payload.blend_time": 0.3,
}
START, PULSE_AT, GRASP_AT, RELEASE_AT, END = 1.0, 4.0, 7.0, 13.0, 16.5  # plant s
TRAJECTORY = 16.0  # s, one multi-sine over the grasp run
FREE_TRAJECTORY = 60.0  # s per multi-sine of the free run


@dataclass
class Run:
    """What one run produced: the recording, the node's ~/payload messages (plant time, mass, com)
    and its last payload estimation and contact statuses."""

    recording: Recording | None
    estimates: list[tuple[float, float, np.ndarray]] = field(default_factory=list)
    status: dict[str, str] = field(default_factory=dict)
    peak_ratio: float = 0.0  # largest |r| / collision threshold seen on /diagnostics
    seconds: float = 0.0  # plant seconds run
    # (plant s at the end of the diagnostics period, its peak |r| / threshold per joint)
    peak_at: tuple[float, list[float]] = (float("nan"), [])
    stopped: str = ""  # a free run that lost real time: why (what it saw until then counts)


def config(lockstep: bool, seed: int = 0) -> Config:
    """The Panda with the demo's gains (kd critically damped on M_ii at home)."""
    urdf = example_urdf_path("panda").read_text()
    model = RobotModel.from_urdf(urdf)
    home = home_of(model)
    q = np.array([home.get(j, 0.0) for j in model.joint_names])
    inertia = np.diag(mass_matrix(model, q))[[model.joint_index(j) for j in PANDA_ARM]]
    kd = [float(2.0 * np.sqrt(k * m)) for k, m in zip(KP, inertia, strict=True)]
    held = tuple(j for j in model.joint_names if j not in PANDA_ARM)
    return Config(urdf, list(PANDA_ARM), home, list(KP), kd, END, START, lockstep, seed, "panda", held)


def node_parameters(c: Config, estimation: str, trajectory: float, record: bool) -> dict[str, dict]:
    """The three nodes' parameters: the closed-loop demo's, with observer and estimation."""
    params = parameters(c)
    params["mujoco_sim"]["record"] = record
    params["inverse_dynamics"].update(
        {
            "observer.enabled": True,
            "observer.gain": [OBSERVER_GAIN],
            "collision.threshold": list(THRESHOLDS),
            "payload.estimation": estimation,
            **ESTIMATION,
        }
    )
    params["multisine_trajectory"].update({"duration": trajectory, "ramp": 1.5})
    return params


def start(processes: Processes, params: Path, schedule: Schedule) -> None:
    """The three processes, the simulator with the schedule."""
    ros = ["--ros-args", "--params-file", str(params)]
    processes.start(
        "inverse_dynamics",
        [
            "-m",
            "rnea_ros.nodes.inverse_dynamics",
            *ros,
            "-r",
            "~/effort_commands:=/effort_controller/commands",
        ],
    )
    processes.start("multisine_trajectory", ["-m", "rnea_ros.nodes.multisine_trajectory", *ros])
    events = [
        a
        for name in ("grasp", "release", "pulse")
        if (v := getattr(schedule, name)) is not None
        for a in (f"--{name}", str(v))
    ]
    processes.start("mujoco_sim", ["-m", "rnea_ros.sim.demos.payload.plant", *events, *ros])
