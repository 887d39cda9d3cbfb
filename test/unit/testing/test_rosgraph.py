"""rnea_ros.testing.rosgraph.stop: a node's output reaches the failure of the test that stopped it."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

from rnea_ros.ros.processes import die_with_parent
from rnea_ros.testing.rosgraph import stop

# stands for a node: says something, then ends with 0 on SIGINT as a node does
NODE = (
    "import signal, sys, time; signal.signal(2, lambda *a: sys.exit(0)); "
    "print('{}', flush=True); time.sleep(60)"
)


def start(words: str, tmp_path) -> subprocess.Popen:
    log = (tmp_path / "node.log").open("w+")
    proc = subprocess.Popen(
        [sys.executable, "-c", NODE.format(words)],
        stdout=log,
        stderr=subprocess.STDOUT,
        preexec_fn=die_with_parent,
    )
    proc.log = log  # type: ignore[attr-defined]  # as rosgraph.start_node keeps it
    end = time.monotonic() + 60
    while "waiting" not in (tmp_path / "node.log").read_text() and time.monotonic() < end:
        time.sleep(0.01)  # until it has said it (its handler is set by then)
    return proc


def test_a_failing_test_gets_the_nodes_output(tmp_path) -> None:
    proc = start("waiting for a URDF", tmp_path)
    with pytest.raises(TimeoutError) as raised:
        try:
            raise TimeoutError("no effort command")
        finally:
            stop(proc)
    assert any("waiting for a URDF" in note for note in raised.value.__notes__), raised.value.__notes__
    assert proc.returncode == 0


def test_a_passing_test_gets_the_output_returned(tmp_path) -> None:
    proc = start("waiting for nothing", tmp_path)
    assert "waiting for nothing" in stop(proc)
