"""A run killed hard leaves no process behind: SIGKILL to the process group of a pytest run of the
process-spawning tests, of `make demo`, or to `ros2 launch rnea_ros demo.launch.py` alone, at a
moment when the node processes run, and afterwards no process of that run is left: no node,
simulator, launch or ros2 process.

Each run is marked by an environment variable (MARK) that every process it starts inherits
(ros2 run, launch, bash and the nodes pass the environment on), so that the count sees this run's
processes only, not those of the tests running beside it. The moments, each awaited (a process's
command line, and rclpy's library in its memory map: it runs the package's code by then):

- the node started by `ros2 run` from the colcon workspace (bash `exec ros2 run …`, in a session
  of its own): it outlived a killed `make test` in 4 of 8 runs, adopted by PID 1, as the kernel's
  parent-death signal that the test asked for `ros2 run` does not pass to `ros2 run`'s child;
- the node of a `ros2 launch` (trajectory_feedforward.launch.py);
- the node a test/ros module started (rnea_ros.testing.rosgraph.start_node, in the run's group);
- `make demo`'s simulator and nodes (the demo's children);
- `ros2 launch rnea_ros demo.launch.py`'s nodes, simulator and supervisor, the launch itself killed.

The package's processes end with their parent (rnea_ros.ros.processes: every executable asks the
kernel for SIGTERM when its parent ends), however they were started.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from domains import domain
from ros_install import BIN, COLCON_INSTALL_ENV, REPO

from rnea_ros.ros.processes import die_with_parent

MARK = "RNEA_ROS_ORPHAN_PROBE"
MOMENT_TIMEOUT = 600.0  # s: a ceiling for the awaited moment (a loaded machine starts slowly)
END_TIMEOUT = 120.0  # s: a ceiling for the run's processes to end after the kill
PYTEST = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider"]
PYTEST += ["-p", "no:launch_testing", "-p", "no:launch_ros"]  # as the Makefile runs it


def marked(value: str) -> Iterator[tuple[int, str]]:
    """(pid, command line) of every live process whose environment holds MARK=value."""
    needle = f"{MARK}={value}".encode()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if needle not in (entry / "environ").read_bytes().split(b"\0"):
                continue
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:  # ended meanwhile, or a zombie
            continue
        yield int(entry.name), cmdline.strip()


def running_package_code(pid: int) -> bool:
    """Whether the process has loaded rclpy (a node past its first lines)."""
    try:
        return "_rclpy_pybind11" in Path(f"/proc/{pid}/maps").read_text()
    except OSError:
        return False


class Run:
    """A command in a session of its own, its processes marked; output in a file."""

    def __init__(
        self, args: list[str], log: Path, env: dict[str, str] | None = None, cwd: Path = REPO
    ) -> None:
        self.mark = uuid.uuid4().hex
        self.log_path = log
        self._log = log.open("w")
        run_env = {**(os.environ if env is None else env), MARK: self.mark}
        self.proc = subprocess.Popen(
            args, env=run_env, cwd=cwd, stdout=self._log, stderr=subprocess.STDOUT,
            start_new_session=True, preexec_fn=die_with_parent,
        )  # fmt: skip

    def processes(self) -> list[tuple[int, str]]:
        return list(marked(self.mark))

    def wait_for_node(self, name: str) -> tuple[int, str]:
        """The moment: a process of the run whose command line names `name` runs the package's
        code (AssertionError with what ran, and the run's output, after MOMENT_TIMEOUT)."""
        end = time.monotonic() + MOMENT_TIMEOUT
        seen: list[tuple[int, str]] = []
        while time.monotonic() < end and self.proc.poll() is None:
            seen = self.processes()
            for pid, cmdline in seen:
                if name in cmdline and running_package_code(pid):
                    return pid, cmdline
            time.sleep(0.2)  # the pace of the look, within the ceiling above
        raise AssertionError(
            f"no {name!r} within {MOMENT_TIMEOUT} s (exit {self.proc.poll()}); its processes: {seen}\n"
            + self.log_path.read_text(errors="replace")[-3000:]
        )

    def left_after(self, kill) -> list[tuple[int, str]]:
        """kill(); then the run's processes still there once END_TIMEOUT passed or none was left
        (those are then killed, so that the test leaves nothing either)."""
        kill()
        self.proc.wait(30)
        end = time.monotonic() + END_TIMEOUT
        left = self.processes()
        while left and time.monotonic() < end:
            time.sleep(0.2)
            left = self.processes()
        for pid, _ in left:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        self._log.close()
        return left

    def kill_group(self) -> None:
        os.killpg(self.proc.pid, signal.SIGKILL)  # as `kill -9 -<pgid>` of `make test`

    def kill_process(self) -> None:
        self.proc.kill()  # the process alone, as `kill -9 <pid>` of a launch


# A pytest run of one process-spawning test, and the process whose moment ends it.
PYTEST_MOMENTS = {
    "ros2 run in the colcon workspace": (
        "test/system/test_documented_ros_lines.py::test_run_node_lines",
        "lib/rnea_ros/inverse_dynamics_node",
    ),
    "ros2 launch in the colcon workspace": (
        "test/system/test_ros_install.py::test_trajectory_feedforward_launch",
        "lib/rnea_ros/trajectory_feedforward_node",
    ),
    "a node of a test/ros module": (
        "test/ros/inverse_dynamics/test_node_trajectory.py",
        "-m rnea_ros.nodes.inverse_dynamics",
    ),
}


@pytest.mark.parametrize("moment", PYTEST_MOMENTS)
def test_a_killed_test_run_leaves_no_process(
    moment: str, ros_env: dict[str, str], colcon_workspace: Path, tmp_path: Path
) -> None:
    """pytest (as `make test` runs it) killed with its process group while the node runs."""
    selection, node = PYTEST_MOMENTS[moment]
    # a domain of its own: nodes killed in this process's domain would stay in its DDS graph for
    # their lease (seconds), seen by the next test here
    env = {**os.environ, COLCON_INSTALL_ENV: str(colcon_workspace), "ROS_DOMAIN_ID": str(domain(4))}
    env.pop("PYTEST_XDIST_WORKER", None)
    run = Run([*PYTEST, "-q", "--basetemp", str(tmp_path / "run"), selection], tmp_path / "pytest.log", env)
    pid, cmdline = run.wait_for_node(node)
    left = run.left_after(run.kill_group)
    assert left == [], f"left after the kill at '{moment}' ({pid}: {cmdline}): {left}"


def test_a_killed_make_demo_leaves_no_process(tmp_path: Path) -> None:
    """`make demo` killed with its process group while its simulator and nodes run."""
    demo_args = f"--domain-id {domain(4)} --duration 600 --no-plot --out {tmp_path}"
    run = Run(["make", "-s", "demo", f"DEMO_ARGS={demo_args}"], tmp_path / "demo.log")
    run.wait_for_node("rnea_ros.sim.sim_node")
    run.wait_for_node("rnea_ros.nodes.inverse_dynamics")
    left = run.left_after(run.kill_group)
    assert left == [], f"left after killing make demo: {left}"


def test_a_killed_demo_launch_leaves_no_process(ros_env: dict[str, str], tmp_path: Path) -> None:
    """`ros2 launch rnea_ros demo.launch.py` killed by SIGKILL (the launch process alone: its
    nodes get no signal from it) while its simulator and nodes run."""
    env = {**ros_env, "ROS_DOMAIN_ID": str(domain(4))}
    args = [str(BIN / "ros2"), "launch", "rnea_ros", "demo.launch.py", "duration:=600", "plot:=false"]
    args.append(f"out:={tmp_path}")
    run = Run(args, tmp_path / "launch.log", env, cwd=tmp_path)
    run.wait_for_node("lib/rnea_ros/mujoco_sim_node")
    run.wait_for_node("lib/rnea_ros/inverse_dynamics_node")
    left = run.left_after(run.kill_process)
    assert left == [], f"left after killing the launch: {left}"
