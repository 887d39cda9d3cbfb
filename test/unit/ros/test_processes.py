"""Child processes end with their parent (rnea_ros.ros.processes): a killed test run, demo or
launch leaves no node behind. Checked on a real process tree, and every Popen of the package and
its tests is checked to ask for it."""

from __future__ import annotations

import ast
import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil

from rnea_ros.ros.processes import die_with_parent, parent_death_signal

ROOT = Path(__file__).resolve().parents[3]

PARENT = """
import subprocess, sys, time
from rnea_ros.ros.processes import die_with_parent
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"], preexec_fn=die_with_parent)
print(child.pid, flush=True)
time.sleep(60)
"""


def test_a_child_ends_when_its_parent_is_killed() -> None:
    parent = subprocess.Popen(
        [sys.executable, "-c", PARENT], stdout=subprocess.PIPE, text=True, preexec_fn=die_with_parent
    )
    try:
        assert parent.stdout is not None
        child = psutil.Process(int(parent.stdout.readline()))
        assert child.is_running() and child.ppid() == parent.pid
        parent.kill()  # SIGKILL: no clean-up code of the parent runs
        parent.wait(timeout=10)
        deadline = time.monotonic() + 10.0
        while child.is_running() and child.status() != psutil.STATUS_ZOMBIE and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not child.is_running() or child.status() == psutil.STATUS_ZOMBIE
    finally:
        parent.kill()


def popen_lines_without_parent_death(source: str) -> list[int]:
    """Lines of the `subprocess.Popen(...)` calls in `source` that pass no preexec_fn."""
    return [
        node.lineno
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "Popen"
        and not any(k.arg == "preexec_fn" for k in node.keywords)
    ]


def test_every_popen_asks_to_die_with_its_parent() -> None:
    probe = "import subprocess\nsubprocess.Popen(['x'])\nsubprocess.Popen(['y'], preexec_fn=f)\n"
    assert popen_lines_without_parent_death(probe) == [2]  # the scan finds a bare Popen only
    files = [p for d in ("rnea_ros", "test", "bench") for p in (ROOT / d).rglob("*.py")]
    assert len(files) > 100
    missing = [
        f"{path.relative_to(ROOT)}:{line}"
        for path in files
        for line in popen_lines_without_parent_death(path.read_text())
    ]
    assert missing == [], f"Popen without preexec_fn=die_with_parent: {missing}"


# A parent that starts CHILD without asking anything for it (as `ros2 run` starts a console
# script), prints its pid, and waits.
UNTIED_PARENT = """
import subprocess, sys
child = subprocess.Popen([sys.executable, "-c", sys.argv[1]], stdout=subprocess.PIPE, text=True)
print(child.pid, child.stdout.readline().strip(), flush=True)
child.wait()
"""
CHILD = """
import sys, time
from rnea_ros.ros.processes import death_signal, end_with_parent
asked = end_with_parent()
print(asked, death_signal(), flush=True)
time.sleep(60)
"""


def ended(proc: psutil.Process, timeout: float = 30.0) -> bool:
    """Whether `proc` ends (or is a zombie) within `timeout` s."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not proc.is_running() or proc.status() == psutil.STATUS_ZOMBIE:
            return True
        time.sleep(0.05)
    return False


def start_untied(env_value: str | None) -> tuple[subprocess.Popen, psutil.Process]:
    env = dict(os.environ)
    env.pop("RNEA_ROS_END_WITH_PARENT", None)
    if env_value is not None:
        env["RNEA_ROS_END_WITH_PARENT"] = env_value
    parent = subprocess.Popen(
        [sys.executable, "-c", UNTIED_PARENT, CHILD], stdout=subprocess.PIPE, text=True, env=env,
        preexec_fn=die_with_parent,
    )  # fmt: skip
    assert parent.stdout is not None
    pid, asked, sig = parent.stdout.readline().split()  # once the child has asked (or not)
    assert asked == str(env_value != "0") and sig == str(int(signal.SIGTERM) if asked == "True" else 0)
    return parent, psutil.Process(int(pid))


def test_an_executable_ends_with_a_parent_that_asked_nothing() -> None:
    """end_with_parent(), which every executable of the package calls first (rnea_ros.ros.entry):
    its parent, which asked for nothing (`ros2 run`, a shell), is killed by SIGKILL; it ends."""
    parent, child = start_untied(None)
    try:
        assert child.ppid() == parent.pid
        parent.kill()
        parent.wait(timeout=10)
        assert ended(child), f"{child.pid} outlived its parent: {child.status()}"
    finally:
        parent.kill()
        with contextlib.suppress(psutil.NoSuchProcess):
            child.kill()


def test_an_executable_can_be_left_running() -> None:
    """RNEA_ROS_END_WITH_PARENT=0: the executable asks nothing and outlives its parent."""
    parent, child = start_untied("0")
    try:
        parent.kill()
        parent.wait(timeout=10)
        assert not ended(child, timeout=1.0)  # the absence of an event: a short look is enough
        assert child.ppid() != parent.pid  # adopted
    finally:
        parent.kill()
        with contextlib.suppress(psutil.NoSuchProcess):
            child.kill()


def test_a_signal_the_parent_asked_for_stays() -> None:
    """The demo asks SIGINT for its nodes (a clean stop); end_with_parent keeps it."""
    code = (
        "import signal\n"
        "from rnea_ros.ros.processes import death_signal, end_with_parent\n"
        "end_with_parent()\n"
        "print(death_signal())\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
        preexec_fn=parent_death_signal(signal.SIGINT),
    )  # fmt: skip
    assert out.stdout.strip() == str(int(signal.SIGINT)), out
