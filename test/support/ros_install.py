"""The ROS 2 install path of the tests: ROS 2 Jazzy's launch, launch_testing and `ros2` command-line
wheels (the folder ROS2_WHEELS, by default shared/ros2-wheels beside the repo; `make` set-up
installs them into the venv), a colcon-built workspace of the package, its environment as
`install/setup.bash` (here setup.sh) gives it, and `ros2` commands run in it.

Tests that need a ROS install call `require_ros_install()`: they skip when the wheels folder does
not exist (the pip-only set-up), and fail when it exists but the wheels are not installed. One
colcon build serves the whole pytest session (conftest's `colcon_workspace` fixture). Every
process started here gets SIGTERM when the test process dies (PR_SET_PDEATHSIG) and is ended
with its whole process group.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from rnea_ros.ros.processes import die_with_parent

# a DDS domain of this test process's own (test/conftest.py sets it first)
os.environ.setdefault("ROS_DOMAIN_ID", str(100 + os.getpid() % 100))
os.environ.setdefault("ROS_LOCALHOST_ONLY", "1")

REPO = Path(__file__).resolve().parents[2]
TESTS = REPO / "test"
WHEELS = Path(os.environ.get("ROS2_WHEELS") or REPO.parent / "shared" / "ros2-wheels")
BIN = Path(sys.executable).parent
BUILD_TIMEOUT = 600.0  # s; colcon build on a loaded 2-core machine takes about a minute
# a colcon install/ built already, which conftest's colcon_workspace then gives (test_no_orphans.py)
COLCON_INSTALL_ENV = "RNEA_ROS_TEST_COLCON_INSTALL"


def require_ros_install() -> None:
    """Skip without the wheels folder; fail when it exists but its wheels are not installed."""
    if not WHEELS.is_dir():
        pytest.skip(f"needs a ROS 2 install: {WHEELS} does not exist (set ROS2_WHEELS to use another)")
    missing = [
        m
        for m in ("launch", "launch_ros", "launch_testing", "ros2cli")
        if importlib.util.find_spec(m) is None
    ]
    if missing or not (BIN / "ros2").exists():
        pytest.fail(f"{WHEELS} exists but {missing or 'ros2'} is not installed: run `make .venv/.installed`")


def launch_testing_files() -> list[Path]:
    """The launch_testing test files below test/ (those with a generate_test_description)."""
    return sorted(p for p in TESTS.rglob("test_*.py") if "def generate_test_description" in p.read_text())


def source_files() -> list[str]:
    """The files git tracks or would track (what a clone of the working tree holds)."""
    out = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
        cwd=REPO,
        capture_output=True,
        check=True,
    ).stdout.decode()
    return [f for f in out.split("\0") if f and (REPO / f).is_file()]


def copy_package(dest: Path) -> Path:
    """The package's files copied to dest/rnea_ros."""
    pkg = dest / "rnea_ros"
    for rel in source_files():
        target = pkg / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / rel, target)
    return pkg


def colcon_build(ws: Path) -> Path:
    """`colcon build` of the package copied to ws/src; the workspace's install folder."""
    colcon = BIN / "colcon"
    if not colcon.exists():
        pytest.fail("colcon is not installed in this environment (requirements-dev.txt)")
    copy_package(ws / "src")
    proc = subprocess.run(
        [str(colcon), "build", "--base-paths", "src"],
        cwd=ws,
        capture_output=True,
        text=True,
        timeout=BUILD_TIMEOUT,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return ws / "install"


def sourced_env(install: Path) -> dict[str, str]:
    """The environment after sourcing the workspace (AMENT_PREFIX_PATH, PYTHONPATH, PATH …), with
    this venv's bin first on PATH (its python, `ros2`) as an activated venv has it. colcon from
    PyPI without colcon-bash writes install/setup.sh, which gives what install/setup.bash would."""
    base = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    proc = subprocess.run(
        ["bash", "-c", f'. "{install}/setup.sh" && env -0'],
        env=base,
        capture_output=True,
        timeout=60,
        check=True,
    )
    env = dict(line.split("=", 1) for line in proc.stdout.decode().split("\0") if "=" in line)
    assert str(install / "rnea_ros") in env.get("AMENT_PREFIX_PATH", ""), (
        "setup.bash set no AMENT_PREFIX_PATH"
    )
    return env


def ros2(env: dict[str, str], *args: str, timeout: float = 60.0) -> subprocess.CompletedProcess:
    """`ros2 ARGS` in `env` (its output as text); never hangs beyond `timeout`."""
    return subprocess.run(
        [str(BIN / "ros2"), *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        preexec_fn=die_with_parent,
    )


def bash(env: dict[str, str], line: str, cwd: Path, timeout: float = 120.0) -> subprocess.CompletedProcess:
    """`bash -c LINE` in `env` from `cwd` (a README line as a user types it, its output as text);
    never hangs beyond `timeout`."""
    return subprocess.run(
        ["bash", "-c", line],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        preexec_fn=die_with_parent,
    )


def ros2_retry(
    env: dict[str, str], *args: str, attempts: int = 10, wait: float = 2.0
) -> subprocess.CompletedProcess:
    """`ros2 ARGS` until it succeeds (at most `attempts` times): with --no-daemon, a first call may
    answer "Node not found" while discovery completes, and a person would ask again."""
    for _ in range(attempts - 1):
        proc = ros2(env, *args)
        if proc.returncode == 0 and "Node not found" not in proc.stdout + proc.stderr:
            return proc
        time.sleep(wait)
    return ros2(env, *args)


class Background:
    """A command (e.g. `ros2 launch …`) running in its own process group, its output in a file,
    from the log's folder (not the repo root, whose rnea_ros/ and launch/ would shadow the
    installed packages for `python -m`) unless `cwd` says where (a README line's relative path)."""

    def __init__(self, args: list[str], env: dict[str, str], log: Path, cwd: Path | None = None) -> None:
        self.log_path = log
        self._log = log.open("w+")
        self.proc = subprocess.Popen(
            args,
            env=env,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            text=True,
            cwd=log.parent if cwd is None else cwd,
            start_new_session=True,
            preexec_fn=die_with_parent,
        )

    def output(self) -> str:
        return self.log_path.read_text(errors="replace")

    def wait_for(self, text: str, timeout: float) -> str:
        """The output once it contains `text`; AssertionError (with the output) after `timeout`
        or when the process ends first."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            out = self.output()
            if text in out:
                return out
            if self.proc.poll() is not None:
                break
            time.sleep(0.2)
        out = self.output()
        assert text in out, f"no {text!r} within {timeout} s (exit {self.proc.poll()}):\n{out[-4000:]}"
        return out

    def wait(self, timeout: float) -> int:
        """The exit code; the process group is ended first when it outlives `timeout`."""
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.stop()
            raise

    def stop(self, grace: float = 10.0) -> int:
        """SIGINT to the group (launch ends its nodes), then SIGKILL to what remains."""
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGINT)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(grace)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGKILL)  # nodes a killed launch left behind
        code = self.proc.wait(5)
        self._log.close()
        return code
