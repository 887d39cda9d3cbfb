"""`python -m rnea_ros.ros.with_parent PROGRAM`: another package's program, started by a parent
that asks nothing for it (as `ros2 launch` starts ros2_control_node and the spawner), ends when
that parent is killed by SIGKILL; without the wrapper it is left running."""

from __future__ import annotations

import ast
import contextlib
import subprocess
import sys
import time
from pathlib import Path

import psutil
from test_processes import ended

from rnea_ros.ros.processes import die_with_parent
from rnea_ros.ros.with_parent import command, main

# starts argv[1:] asking nothing for it, prints its pid, waits
UNTIED_PARENT = """
import subprocess, sys
child = subprocess.Popen(sys.argv[1:])
print(child.pid, flush=True)
child.wait()
"""
ROOT = Path(__file__).resolve().parents[3]
SLEEP = ["sleep", "60"]  # a program that is not Python and asks nothing itself


def run_and_kill_parent(argv: list[str]) -> tuple[psutil.Process, bool]:
    """The program started by an untied parent, and whether it ended after the parent's SIGKILL."""
    parent = subprocess.Popen(
        [sys.executable, "-c", UNTIED_PARENT, *argv], stdout=subprocess.PIPE, text=True,
        preexec_fn=die_with_parent,
    )  # fmt: skip
    assert parent.stdout is not None
    child = psutil.Process(int(parent.stdout.readline()))
    try:
        deadline = time.monotonic() + 60.0  # until the wrapper has become the program
        while child.cmdline() != SLEEP and time.monotonic() < deadline:
            time.sleep(0.02)
        assert child.cmdline() == SLEEP and child.ppid() == parent.pid, child.cmdline()
        parent.kill()
        parent.wait(timeout=10)
        return child, ended(child, timeout=30.0 if argv != SLEEP else 1.0)
    finally:
        parent.kill()
        with contextlib.suppress(psutil.NoSuchProcess):
            child.kill()


def test_a_wrapped_program_ends_with_its_parent_and_keeps_its_pid() -> None:
    child, gone = run_and_kill_parent(command(SLEEP))
    assert gone, f"{child.pid} outlived its parent"


def test_without_the_wrapper_the_same_program_is_left_running() -> None:
    """The control: the absence of an event, so a short look is enough."""
    child, gone = run_and_kill_parent(SLEEP)
    assert not gone


def test_no_program_or_a_missing_one_is_a_clear_error(capsys) -> None:
    assert main([]) == 2
    assert "usage: python -m rnea_ros.ros.with_parent PROGRAM" in capsys.readouterr().err
    assert main(["/nonexistent/ros2_control_node"]) == 127
    assert "cannot run '/nonexistent/ros2_control_node'" in capsys.readouterr().err


def foreign_programs_unwrapped(source: str) -> list[int]:
    """Lines of the `ExecuteProcess(cmd=...)` calls in `source` whose cmd is neither
    `command([...])` nor `[sys.executable, "-m", "rnea_ros...", ...]` (which asks by itself)."""
    lines = []
    for node in ast.walk(ast.parse(source)):
        if not (isinstance(node, ast.Call) and getattr(node.func, "id", None) == "ExecuteProcess"):
            continue
        cmd = next((k.value for k in node.keywords if k.arg == "cmd"), None)
        wrapped = isinstance(cmd, ast.Call) and getattr(cmd.func, "id", None) == "command"
        own = (
            isinstance(cmd, ast.List)
            and len(cmd.elts) > 2
            and isinstance(cmd.elts[2], ast.Constant)
            and str(cmd.elts[2].value).startswith("rnea_ros.")
        )
        if not (wrapped or own):
            lines.append(node.lineno)
    return lines


def test_every_program_a_launch_file_starts_ends_with_the_launch() -> None:
    probe = 'ExecuteProcess(cmd=["ros2_control_node"])\nExecuteProcess(cmd=command(["x"]))\n'
    probe += 'ExecuteProcess(cmd=[sys.executable, "-m", "rnea_ros.demo"])\n'
    assert foreign_programs_unwrapped(probe) == [1]
    files = sorted((ROOT / "launch").glob("*.launch.py"))
    assert len(files) >= 3
    found = {f"{p.name}:{line}" for p in files for line in foreign_programs_unwrapped(p.read_text())}
    assert found == set(), f"programs of other packages a launch leaves behind when killed: {found}"
