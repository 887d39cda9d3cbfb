"""Every node process ends with exit code 0 on SIGINT or SIGTERM, whenever the signal comes.

rclpy's signal thread shuts the context down while the main thread tears the node down; until
run_node waited for that thread (rnea_ros/ros/signals.py), 31 of 60 trajectory_feedforward stops
one second after start ended in SIGSEGV (exit -11), and CI failed on one. The stops here come
during start-up, while serving and later, for both nodes a launch file starts.

From the package's first line on (rnea_ros.ros.entry), a stop during the imports is one line and
exit 0 (it was a 25-line KeyboardInterrupt traceback, or a silent -15); only a stop while the
interpreter itself starts, before any of the package's code runs, ends as it ends any Python
program: KeyboardInterrupt (-2, or 1 inside the interpreter's site set-up) for SIGINT, killed
(-15) for SIGTERM. After exit 0 nothing but the node's log lines is printed (issue 32: an
AttributeError from a half-built executor's finaliser after a SIGTERM)."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from rnea_ros.model.example_robots import example_urdf_path
from rnea_ros.ros.processes import die_with_parent

URDF = example_urdf_path("panda").read_text()
NODES = ("rnea_ros.nodes.trajectory_feedforward", "rnea_ros.nodes.inverse_dynamics")
# when the signal comes after start (s): imports, kernels from cache, model, spinning
DELAYS = (0.6, 1.0, 1.5, 2.5, 4.0)


def stopped_while_python_starts(code: object, output: str, node: str) -> bool:
    """A stop before the package's code runs, as it ends any Python program: SIGINT while the
    interpreter starts (KeyboardInterrupt, or exit 1 in init_import_site; no frame of the
    package), or SIGTERM then (killed, and the node never logged)."""
    if code == -signal.SIGINT:
        return "KeyboardInterrupt" in output and "rnea_ros" not in output
    if code == 1:
        return "init_import_site" in output and "rnea_ros" not in output
    return code == -signal.SIGTERM and f"[{node}]" not in output


def clean(code: object, output: str) -> bool:
    """Exit 0 and nothing printed but log lines (no traceback, no finaliser's complaint)."""
    return code == 0 and not any(bad in output for bad in ("Traceback", "Exception ignored", "Error:"))


@pytest.mark.parametrize("module", NODES)
def test_every_stop_exits_cleanly(module: str, tmp_path: Path) -> None:
    params = tmp_path / "params.yaml"
    params.write_text(yaml.safe_dump({"/**": {"ros__parameters": {"robot_description": URDF}}}))
    outcomes = []
    for i, delay in enumerate(DELAYS):
        sig = signal.SIGTERM if i % 2 else signal.SIGINT
        log = (tmp_path / f"run{i}.log").open("w+")
        proc = subprocess.Popen(
            [sys.executable, "-m", module, "--ros-args", "--params-file", str(params)],
            stdout=log,
            stderr=subprocess.STDOUT,
            preexec_fn=die_with_parent,
        )
        time.sleep(delay)
        proc.send_signal(sig)
        try:
            code = proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
            code = f"still running 15 s after {sig.name}"
        log.seek(0)
        outcomes.append((delay, sig.name, code, log.read()[-3000:]))
    node = module.rsplit(".", 1)[-1]
    bad = [o for o in outcomes if not clean(o[2], o[3]) and not stopped_while_python_starts(o[2], o[3], node)]
    served = sum(o[2] == 0 for o in outcomes)
    assert served >= 1, f"none of the {len(DELAYS)} stops came after Python had started: {outcomes}"
    assert not bad, "\n".join(f"{sig} after {delay} s: exit {code}\n{out}" for delay, sig, code, out in bad)


# Shared libraries that a node's imports load, in this order: numpy's core, rclpy's, numba's
# compiler. Seen in /proc/<pid>/maps, each marks a moment inside the imports.
IMPORT_MOMENTS = ("_multiarray_umath", "_rclpy_pybind11", "llvmlite")
BIN = Path(sys.executable).parent


def wait_for_library(proc: subprocess.Popen, library: str, timeout: float = 120.0) -> bool:
    """Until `library` is mapped into the process (True), or it ended or `timeout` passed."""
    end = time.monotonic() + timeout
    while proc.poll() is None and time.monotonic() < end:
        try:
            if library in Path(f"/proc/{proc.pid}/maps").read_text():
                return True
        except OSError:
            return False
        time.sleep(0.001)
    return False


STARTS = {  # how a node is started: `python -m`, or its console script as `ros2 run` starts it
    "inverse_dynamics -m": [sys.executable, "-m", "rnea_ros.nodes.inverse_dynamics"],
    "inverse_dynamics_node": [str(BIN / "inverse_dynamics_node")],
    "trajectory_feedforward -m": [sys.executable, "-m", "rnea_ros.nodes.trajectory_feedforward"],
}


@pytest.mark.parametrize("library", IMPORT_MOMENTS)
@pytest.mark.parametrize("how", STARTS)
def test_a_stop_during_the_imports_is_one_line(how: str, library: str, tmp_path: Path) -> None:
    """SIGINT (Ctrl-C) and SIGTERM the moment the node's imports load `library`: exit 0 and one
    line, `stopped while starting`, whether started as `python -m` or as `ros2 run` starts it (the
    console script); it was a KeyboardInterrupt traceback or a silent -15."""
    params = tmp_path / "params.yaml"
    params.write_text(yaml.safe_dump({"/**": {"ros__parameters": {"robot_description": URDF}}}))
    command, node = STARTS[how], how.split()[0].removesuffix("_node")
    outcomes = []
    for sig in (signal.SIGINT, signal.SIGTERM):
        log = (tmp_path / f"{sig.name}.log").open("w+")
        proc = subprocess.Popen(
            [*command, "--ros-args", "--params-file", str(params)],
            stdout=log, stderr=subprocess.STDOUT, preexec_fn=die_with_parent,
        )  # fmt: skip
        try:
            loaded = wait_for_library(proc, library)
            proc.send_signal(sig)
            code = proc.wait(60)
        finally:
            proc.kill()
        log.seek(0)
        lines = [line for line in log.read().splitlines() if "[rcl]" not in line]  # rcl's own warnings
        outcomes.append((sig.name, loaded, code, lines))
    for name, loaded, code, lines in outcomes:
        assert loaded, f"{library} never loaded before {name}: {code} {lines}"
        assert code == 0, (name, code, lines)
        assert lines == [f"[INFO] [{node}]: stopped while starting"], (name, lines)


def started_in_the_background() -> None:
    """A script's `node &` (a non-interactive shell, POSIX): SIGINT inherited ignored."""
    die_with_parent()
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def wait_for_output(proc: subprocess.Popen, log: Path, text: str, timeout: float = 120.0) -> bool:
    """Until `text` is in the node's log (True), or it ended or `timeout` passed."""
    end = time.monotonic() + timeout
    while proc.poll() is None and time.monotonic() < end:
        if text in log.read_text():
            return True
        time.sleep(0.01)
    return False


@pytest.mark.parametrize("module", NODES)
def test_sigint_stops_a_node_started_in_the_background(module: str, tmp_path: Path) -> None:
    """`ros2 launch`, a supervisor or a test still stops a node by SIGINT when a script started
    it (or the launch, or `make test`) with `&`: during the imports and while spinning, exit 0. It
    ran on, ignoring every SIGINT (a busy `make test` run started in the background: 11 failures)."""
    params = tmp_path / "params.yaml"
    params.write_text(yaml.safe_dump({"/**": {"ros__parameters": {"robot_description": URDF}}}))
    node = module.rsplit(".", 1)[-1]
    for moment in ("_rclpy_pybind11", "spinning"):
        log = tmp_path / f"{moment}.log"
        with log.open("w") as out:
            proc = subprocess.Popen(
                [sys.executable, "-m", module, "--ros-args", "--params-file", str(params)],
                stdout=out, stderr=subprocess.STDOUT, preexec_fn=started_in_the_background,
            )  # fmt: skip
        try:
            if moment == "spinning":
                assert wait_for_output(proc, log, "spinning"), log.read_text()
            else:
                assert wait_for_library(proc, moment), log.read_text()
            proc.send_signal(signal.SIGINT)
            code = proc.wait(60)
        finally:
            proc.kill()
        output = log.read_text()
        assert clean(code, output), (moment, code, output)
        if moment != "spinning":
            assert f"[{node}]: stopped while starting" in output, output
