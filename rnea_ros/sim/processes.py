"""The demo's child processes (no ROS): start them as a launch file would, check them, stop them
all (SIGINT, then SIGKILL), every wait bounded; a child gets SIGINT when the demo dies (Linux)."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

from rnea_ros.ros.processes import parent_death_signal
from rnea_ros.sim.ros2_control import BROADCASTER, CONTROLLER_MANAGER, FORWARD, Stack
from rnea_ros.sim.scenario import write_parameters

SPAWN_TIMEOUT = 180.0  # s for the controller manager to come up (a loaded machine, a cold start)


class Processes:
    """The demo's child processes; `stop()` ends them all (SIGINT, then SIGKILL), bounded."""

    def __init__(self, log_dir: Path) -> None:
        self.log_dir = log_dir
        self.children: dict[str, subprocess.Popen] = {}

    def start(self, name: str, args: list[str], env: dict[str, str] | None = None) -> None:
        """Python with `args` (`-m module ...`)."""
        self.start_program(name, [sys.executable, *args], env)

    def start_program(self, name: str, argv: list[str], env: dict[str, str] | None = None) -> None:
        """Any program (`argv`), in `env` (default: this process's environment)."""
        self.log_dir.mkdir(parents=True, exist_ok=True)
        with open(self.log_dir / f"{name}.log", "w") as log:
            self.children[name] = subprocess.Popen(
                argv,
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                env=env,
                preexec_fn=parent_death_signal(signal.SIGINT),
            )

    def run(self, name: str, argv: list[str], env: dict[str, str] | None, timeout: float) -> None:
        """A program that must end with 0 within `timeout` s (the spawner) while the children run;
        RuntimeError with its output (or a child that exited meanwhile) otherwise."""
        self.start_program(name, argv, env)
        proc = self.children[name]
        end = time.monotonic() + timeout
        while proc.poll() is None:
            if time.monotonic() > end:
                self.stop(name)
                raise RuntimeError(f"{name} did not finish within {timeout:g} s:\n{self.tail(name)}")
            others = {k: v for k, v in self.children.items() if k != name}
            dead = next((k for k, v in others.items() if v.poll() is not None), None)
            if dead is not None:
                self.stop(name)
                raise RuntimeError(f"{dead} exited with {others[dead].returncode}:\n{self.tail(dead)}")
            time.sleep(0.05)
        del self.children[name]
        if proc.returncode != 0:
            raise RuntimeError(f"{name} exited with {proc.returncode}:\n{self.tail(name)}")

    def check(self) -> None:
        """RuntimeError naming a child that has exited."""
        for name, proc in self.children.items():
            if proc.poll() is not None:
                raise RuntimeError(f"{name} exited with {proc.returncode}:\n{self.tail(name)}")

    def tail(self, name: str, lines: int = 15) -> str:
        path = self.log_dir / f"{name}.log"
        return "\n".join(path.read_text().splitlines()[-lines:]) if path.exists() else ""

    def stop(self, name: str | None = None) -> None:
        """End child `name`, or every child (SIGINT together, then SIGKILL after 5 s each)."""
        procs = list(self.children.values()) if name is None else [self.children.pop(name)]
        for proc in procs:
            if proc.poll() is None:
                proc.send_signal(signal.SIGINT)
        for proc in procs:
            try:
                proc.wait(5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(5)


def start_nodes(
    processes: Processes, params: Path, node_params: tuple[Path, ...] = (), stack: Stack | None = None
) -> None:
    """The three nodes as separate processes, started as a launch file would start them;
    `node_params`: more parameter files for inverse_dynamics, after `params` (they win). With a
    ros2_control `stack`, the controller manager between simulator and node too, its
    controllers spawned (`params` holds their parameters: rnea_ros.sim.scenario.parameters)."""
    ros = ["--ros-args", "--params-file", str(params)]
    extra = [arg for path in node_params for arg in ("--params-file", str(path))]
    processes.start(
        "inverse_dynamics",
        ["-m", "rnea_ros.nodes.inverse_dynamics", *ros, *extra]
        + ["-r", "~/effort_commands:=/effort_controller/commands"],
    )
    processes.start("multisine_trajectory", ["-m", "rnea_ros.nodes.multisine_trajectory", *ros])
    processes.start("mujoco_sim", ["-m", "rnea_ros.sim.sim_node", *ros])
    if stack is not None:
        start_controllers(processes, stack, params, [BROADCASTER, FORWARD])


def start_controllers(
    processes: Processes, stack: Stack, params: Path, controllers: list[str], timeout: float = SPAWN_TIMEOUT
) -> None:
    """ros2_control_node with the parameter file `params`, then controller_manager's spawner
    loading and activating `controllers` (RuntimeError when it fails within `timeout` s)."""
    env = stack.env()
    processes.start_program(
        "ros2_control_node", [str(stack.node), "--ros-args", "--params-file", str(params)], env
    )
    manager = ["-c", f"/{CONTROLLER_MANAGER}", "--controller-manager-timeout", f"{timeout:g}"]
    processes.run("spawner", stack.spawner(*controllers, *manager), env, timeout + 60.0)


def start_robot(
    processes: Processes,
    stack: Stack,
    folder: Path,
    sim: dict,
    controllers: dict[str, dict],
    spawn: list[str],
    name: str = "mujoco_sim",
) -> None:
    """A robot on the real controllers: the simulator (node name mujoco_sim, process `name`)
    with parameters `sim` (`controller_type: ros2_control`), ros2_control_node with the
    parameters `controllers` by node name, and the controllers `spawn` loaded and active."""
    folder.mkdir(parents=True, exist_ok=True)
    sim_file = write_parameters({"mujoco_sim": sim}, folder / f"{name}.yaml")
    cm_file = write_parameters(controllers, folder / f"{name}_controllers.yaml")
    processes.start(name, ["-m", "rnea_ros.sim.sim_node", "--ros-args", "--params-file", str(sim_file)])
    start_controllers(processes, stack, cm_file, spawn)
