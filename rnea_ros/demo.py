"""Closed-loop demo: the inverse_dynamics node drives a MuJoCo-simulated arm (`make demo`).

    python -m rnea_ros.demo [--urdf FILE] [--duration 30] [--lockstep] [--no-plot] [--out out]

Three separate processes talk over real DDS (ROS_LOCALHOST_ONLY=1, a ROS_DOMAIN_ID of the demo's
own): `mujoco_sim` (rnea_ros.sim.sim_node, physics at 1 kHz, an effort forward_command_controller
on /effort_controller/commands), `inverse_dynamics` (rnea_ros.node.main, on simulated time) and
`multisine_trajectory` (rnea_ros.sim.multisine_node). This process supervises and records. With
the same PD gains (feedback.kp/kd) throughout:

1. hold: from rest, gravity compensation only, no trajectory (drift of every joint);
2. PD alone: compensate.* switched off through the node's set_parameters service (as rqt
   would), then a multi-sine trajectory is tracked;
3. PD + RNEA: compensate.* switched on again, the arm settles, the same kind of trajectory.

It prints the drift, RMS and max tracking errors, the improvement and the command latency,
writes a PNG plot and exits with 1 when a target is missed. With --attach it only supervises
nodes started by someone else (launch/demo.launch.py). Every child process is stopped on exit,
Ctrl-C or error; every wait is bounded.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import yaml

from .model import RobotModel
from .robots import example_urdf_path

PANDA_ARM = [f"panda_joint{i}" for i in range(1, 8)]
PANDA_HOME = {
    **dict(zip(PANDA_ARM, [0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785], strict=True)),
    "panda_finger_joint1": 0.02,
    "panda_finger_joint2": 0.02,
}
# Moderate on purpose: PD alone lets joint 4 sag ~13 degrees under gravity; damping ratios ~0.5-1.
PANDA_KP = [100.0, 100.0, 100.0, 100.0, 30.0, 30.0, 10.0]  # N m/rad
PANDA_KD = [10.0, 10.0, 10.0, 10.0, 2.0, 2.0, 0.5]  # N m s/rad
MODEL_TERMS = ("gravity", "coriolis", "inertia", "friction")
RECORDED_TERMS = (*MODEL_TERMS, "feedback")
LEAD = 0.5  # s from a trajectory request to its start (multisine start_delay)
SETTLE = 1.5  # s between switching feedforward on and the phase-3 trajectory
TAIL = 0.5  # s recorded after the last trajectory
NODE = "/inverse_dynamics"


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

    @property
    def trajectory(self) -> float:
        """Length of each of the two trajectories, s."""
        return (self.duration - self.hold - 2 * LEAD - SETTLE - TAIL) / 2

    @property
    def ramp(self) -> float:
        return min(1.5, self.trajectory / 4)


def default_home(model: RobotModel, margin: float = 0.2) -> dict[str, float]:
    """0 for every joint, moved inside its limits less `margin` (the middle for narrow ranges)."""
    home = {}
    for name, lo, hi in zip(model.joint_names, model.position_lower, model.position_upper, strict=True):
        home[name] = float(np.clip(0.0, lo + margin, hi - margin) if hi - lo > 2 * margin else (lo + hi) / 2)
    return home


def default_gains(
    model: RobotModel, home: dict[str, float], joints: list[str], hz: float = 2.0
) -> tuple[list[float], list[float]]:
    """Moderate PD gains: each joint alone, with the inertia M_jj it sees at home, would be a
    critically damped `hz` oscillator (kp = ω² M_jj N m/rad, kd = 2 ω M_jj N m s/rad)."""
    from .dynamics import mass_matrix

    q = np.array([home.get(j, 0.0) for j in model.joint_names])
    inertia = np.maximum(np.diag(mass_matrix(model, q))[[model.joint_index(j) for j in joints]], 1e-3)
    omega = 2 * np.pi * hz
    return [float(omega**2 * m) for m in inertia], [float(2 * omega * m) for m in inertia]


def make_config(args: argparse.Namespace) -> Config:
    """The run's configuration: the Panda's known pose and gains, or generic ones for --urdf."""
    path = Path(args.urdf) if args.urdf else example_urdf_path("panda")
    urdf = path.read_text()
    model = RobotModel.from_urdf(urdf)
    panda = set(PANDA_ARM) <= set(model.joint_names)
    joints = args.joints or (PANDA_ARM if panda else list(model.joint_names))
    unknown = [j for j in joints if j not in model.joint_names]
    if unknown:
        raise ValueError(f"--joints: {unknown} are not movable joints of {path}")
    home = PANDA_HOME if panda else default_home(model)

    kp, kd = (PANDA_KP, PANDA_KD) if panda and joints == PANDA_ARM else default_gains(model, home, joints)

    def gains(value: list[float] | None, default: list[float]) -> list[float]:
        if value is None:
            return list(default)
        if len(value) not in (1, len(joints)) or min(value) < 0:
            raise ValueError(f"gains must be >= 0, one value or {len(joints)}, got {value}")
        return value * len(joints) if len(value) == 1 else value

    config = Config(
        urdf,
        list(joints),
        dict(home),
        gains(args.kp, kp),
        gains(args.kd, kd),
        args.duration,
        args.hold,
        args.lockstep,
        args.seed,
        str(path),
    )
    if config.trajectory < 2.0:
        raise SystemExit(f"--duration {args.duration} is too short for --hold {args.hold}")
    return config


def parameters(config: Config) -> dict[str, dict]:
    """ROS parameters of the three nodes, by node name (also used by launch/demo.launch.py)."""
    names = list(config.home)
    return {
        "mujoco_sim": {
            "robot_description": config.urdf,
            "joints": list(config.joints),
            "initial_joints": names,
            "initial_positions": [float(config.home[n]) for n in names],
            "rate": 1000.0,
            "lockstep": config.lockstep,
            "answer_topic": f"{NODE}/joint_efforts",
            "start_subscribers": 2,  # the node and the demo's recorder: the run is seen from rest
        },
        "inverse_dynamics": {
            "robot_description": config.urdf,
            "joints": list(config.joints),
            "use_sim_time": True,
            "feedback.kp": [float(x) for x in config.kp],
            "feedback.kd": [float(x) for x in config.kd],
            **{f"compensate.{t}": t == "gravity" for t in MODEL_TERMS},
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


def write_parameters(config: Config, path: Path) -> Path:
    """One ROS parameter file with a section per node."""
    params = {name: {"ros__parameters": values} for name, values in parameters(config).items()}
    path.write_text(yaml.dump(params, Dumper=_NoAliases))
    return path


def _die_with_parent() -> None:
    """In a child: get SIGINT when the demo dies, even by SIGKILL (Linux)."""
    with contextlib.suppress(OSError):
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGINT)  # PR_SET_PDEATHSIG


class Processes:
    """The demo's child processes; `stop()` ends them all (SIGINT, then SIGKILL), bounded."""

    def __init__(self, log_dir: Path) -> None:
        self.log_dir = log_dir
        self.children: dict[str, subprocess.Popen] = {}

    def start(self, name: str, args: list[str]) -> None:
        self.log_dir.mkdir(parents=True, exist_ok=True)
        with open(self.log_dir / f"{name}.log", "w") as log:
            self.children[name] = subprocess.Popen(
                [sys.executable, *args],
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                preexec_fn=_die_with_parent if sys.platform.startswith("linux") else None,
            )

    def check(self) -> None:
        """RuntimeError naming a child that has exited."""
        for name, proc in self.children.items():
            if proc.poll() is not None:
                raise RuntimeError(f"{name} exited with {proc.returncode}:\n{self.tail(name)}")

    def tail(self, name: str, lines: int = 15) -> str:
        path = self.log_dir / f"{name}.log"
        return "\n".join(path.read_text().splitlines()[-lines:]) if path.exists() else ""

    def stop(self) -> None:
        for proc in self.children.values():
            if proc.poll() is None:
                proc.send_signal(signal.SIGINT)
        for proc in self.children.values():
            try:
                proc.wait(5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(5)


def start_nodes(config: Config, processes: Processes, params: Path) -> None:
    """The three nodes as separate processes, started as a launch file would start them."""
    ros = ["--ros-args", "--params-file", str(params)]
    processes.start(
        "inverse_dynamics",
        ["-m", "rnea_ros.node.main", *ros, "-r", "~/effort_commands:=/effort_controller/commands"],
    )
    processes.start("multisine_trajectory", ["-m", "rnea_ros.sim.multisine_node", *ros])
    processes.start("mujoco_sim", ["-m", "rnea_ros.sim.sim_node", *ros])


def run(config: Config, processes: Processes | None, timeout: float, record_terms: bool):
    """Supervise one run and return its Recording (ROS is imported here, after the environment
    is set)."""
    from rclpy.executors import ExternalShutdownException

    from .sim.supervisor import Supervisor

    supervisor = Supervisor(config, processes, timeout, record_terms)
    try:
        return supervisor.run()
    except ExternalShutdownException:  # rclpy's SIGINT/SIGTERM handler shut the context down
        raise KeyboardInterrupt from None
    finally:
        supervisor.close()


def _round(values: list[float]) -> str:
    return "[" + ", ".join(f"{v:.3g}" for v in values) + "]"


def argument_parser() -> argparse.ArgumentParser:
    """The demo's options (launch/demo.launch.py passes the same ones to the nodes and to
    `--attach`)."""
    parser = argparse.ArgumentParser(prog="python -m rnea_ros.demo", description=__doc__.split("\n\n")[0])
    parser.add_argument("--urdf", help="robot description (default: example-robot-data's Panda)")
    parser.add_argument("--joints", nargs="+", help="joints the node commands (default: the arm)")
    parser.add_argument("--kp", type=float, nargs="+", help="feedback.kp, one or per joint, N m/rad")
    parser.add_argument("--kd", type=float, nargs="+", help="feedback.kd, one or per joint, N m s/rad")
    parser.add_argument("--duration", type=float, default=30.0, help="simulated seconds (default 30)")
    parser.add_argument("--hold", type=float, default=5.0, help="phase 1 length, s (default 5)")
    parser.add_argument("--lockstep", action="store_true", help="each physics step waits for its command")
    parser.add_argument("--headless", "--no-plot", dest="plot", action="store_false", help="no PNG")
    parser.add_argument("--out", default="out", help="directory of the plot and logs (default ./out)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the multi-sine trajectories")
    parser.add_argument("--domain-id", type=int, default=20 + os.getpid() % 80, help="ROS_DOMAIN_ID")
    parser.add_argument("--timeout", type=float, default=600.0, help="wall-clock limit of the run, s")
    parser.add_argument("--json", help="also write the numbers to this JSON file")
    parser.add_argument("--attach", action="store_true", help="supervise nodes started elsewhere")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = argument_parser().parse_args(argv)
    sys.stdout.reconfigure(line_buffering=True)  # type: ignore[union-attr]  # progress lines at once, also in a pipe
    try:
        config = make_config(args)
    except (OSError, ValueError) as exc:  # no such file, not a URDF (URDFError), unknown joint
        print(f"demo: {exc}", file=sys.stderr)
        return 2
    out = Path(args.out)
    if not args.attach:
        os.environ["ROS_DOMAIN_ID"] = str(args.domain_id)
        os.environ["ROS_LOCALHOST_ONLY"] = "1"
    mode = "lock-step" if config.lockstep else "real time"
    print(
        f"closed-loop demo: {config.urdf_path}\n  {len(config.joints)} joints, {config.duration:g} s "
        f"simulated ({mode}), hold {config.hold:g} s, trajectories {config.trajectory:g} s, "
        f"PD gains (same in every phase) kp {_round(config.kp)} N m/rad, kd {_round(config.kd)} N m s/rad",
    )
    processes = None if args.attach else Processes(out / "demo_logs")
    try:
        with tempfile.TemporaryDirectory(prefix="rnea_demo_") as tmp:
            if processes is not None:
                start_nodes(config, processes, write_parameters(config, Path(tmp) / "params.yaml"))
            started = time.monotonic()
            recording = run(config, processes, args.timeout, args.plot)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except (RuntimeError, TimeoutError) as exc:
        print(f"demo failed: {exc}", file=sys.stderr)
        return 1
    finally:
        if processes is not None:
            processes.stop()

    from .sim.report import check_targets, plot, summarize, table

    try:
        summary = summarize(recording)
    except ValueError as exc:
        print(f"demo failed: {exc}", file=sys.stderr)
        return 1
    wall = time.monotonic() - started
    print(f"\nran {config.duration:g} s simulated in {wall:.1f} s wall, start-up included ({mode})\n")
    print(table(summary))
    failed = check_targets(summary)
    if args.json:
        Path(args.json).write_text(json.dumps({**summary.to_dict(), "failed": failed}, indent=1))
    print(
        "\ntargets (drift < 0.1 deg, RMS ratio >= 10x, max error with feedforward < 1 deg): "
        + ("all met" if not failed else "MISSED\n  " + "\n  ".join(failed))
    )
    if args.plot:
        path = plot(recording, out / "demo.png", f"{Path(config.urdf_path).stem}: closed loop ({mode})")
        print(f"plot: {path.resolve()}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
