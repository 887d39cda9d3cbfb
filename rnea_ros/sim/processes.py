"""The demo's child processes (no ROS): start them as a launch file would, check them, stop them
all (SIGINT, then SIGKILL), every wait bounded; a child gets SIGINT when the demo dies (Linux)."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

from rnea_ros.ros.processes import parent_death_signal


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
                preexec_fn=parent_death_signal(signal.SIGINT),
            )

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


def start_nodes(processes: Processes, params: Path, node_params: tuple[Path, ...] = ()) -> None:
    """The three nodes as separate processes, started as a launch file would start them;
    `node_params`: more parameter files for inverse_dynamics, after `params` (they win)."""
    ros = ["--ros-args", "--params-file", str(params)]
    extra = [arg for path in node_params for arg in ("--params-file", str(path))]
    processes.start(
        "inverse_dynamics",
        ["-m", "rnea_ros.nodes.inverse_dynamics", *ros, *extra]
        + ["-r", "~/effort_commands:=/effort_controller/commands"],
    )
    processes.start("multisine_trajectory", ["-m", "rnea_ros.nodes.multisine_trajectory", *ros])
    processes.start("mujoco_sim", ["-m", "rnea_ros.sim.sim_node", *ros])
