"""Child processes end with their parent (rnea_ros.ros.processes): a killed test run, demo or
launch leaves no node behind. Checked on a real process tree, and every Popen of the package and
its tests is checked to ask for it."""

from __future__ import annotations

import ast
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from rnea_ros.ros.processes import die_with_parent

pytestmark = pytest.mark.unit

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
