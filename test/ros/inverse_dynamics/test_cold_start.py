"""A cold start: numba's cache empty (NUMBA_CACHE_DIR fresh) and the installation's own cache out
of reach (the package copied without __pycache__, read-only, first on PYTHONPATH). The node says
at once where it compiles and for how long, answers its parameter services while the kernels
compile in the background, and commands the core's rnea once they are ready."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import time
from pathlib import Path

import numpy as np
import pytest
import rclpy
from rcl_interfaces.srv import GetParameters

import rnea_ros
from rnea_ros import RobotModel, rnea
from rnea_ros.compiled.jit import HAVE_NUMBA
from rnea_ros.model.example_robots import example_urdf_path
from rnea_ros.testing.rosgraph import FRICTION_OFF, NODE, Driver, start_node, stop

URDF = example_urdf_path("panda").read_text()
MODEL = RobotModel.from_urdf(URDF, tip_link="panda_hand")
NAMES = list(MODEL.joint_names)
COLD = "has no compiled kernels for this installation"
READY = "kernels ready in"


def read_only_copy(dest: Path) -> Path:
    """The package copied to dest/rnea_ros without any __pycache__ (numba's in-tree cache), with
    every folder made read-only as an installation owned by another user is."""
    source = Path(rnea_ros.__file__).parent
    shutil.copytree(source, dest / "rnea_ros", ignore=shutil.ignore_patterns("__pycache__"))
    for folder in [dest / "rnea_ros", *(p for p in (dest / "rnea_ros").rglob("*") if p.is_dir())]:
        folder.chmod(stat.S_IRUSR | stat.S_IXUSR)
    return dest


def writable_again(root: Path) -> None:
    for folder in [root, *(p for p in root.rglob("*") if p.is_dir())]:
        folder.chmod(stat.S_IRWXU)


def log_text(proc) -> str:
    proc.log.flush()
    return Path(proc.log.name).read_text()


def wait_for_line(proc, text: str, timeout: float) -> str:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        log = log_text(proc)
        if text in log:
            return log
        assert proc.poll() is None, f"the node exited:\n{log}"
        time.sleep(0.05)
    raise AssertionError(f"no {text!r} in the node's log within {timeout} s:\n{log_text(proc)}")


def get_parameter(driver: Driver, name: str, timeout: float) -> float:
    """ros2 param get /inverse_dynamics <name>, as a double."""
    client = driver.node.create_client(GetParameters, f"{NODE}/get_parameters")
    assert client.wait_for_service(timeout), "get_parameters is not offered"
    end = time.monotonic() + timeout
    while time.monotonic() < end:  # a first call right after discovery can lose its response
        future = client.call_async(GetParameters.Request(names=[name]))
        retry = time.monotonic() + 2.0
        while not future.done() and time.monotonic() < min(retry, end):
            rclpy.spin_once(driver.node, timeout_sec=0.01)
        if future.done():
            return future.result().values[0].double_value
        client.remove_pending_request(future)
    raise AssertionError(f"get_parameters did not answer within {timeout} s")


@pytest.mark.skipif(not HAVE_NUMBA, reason="numba is not installed: nothing compiles")
def test_parameters_answer_while_the_kernels_compile_then_commands_are_the_core_rnea(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    install = read_only_copy(tmp_path / "install")
    numba_cache = tmp_path / "numba_cache"
    numba_cache.mkdir()
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(install), os.environ.get("PYTHONPATH", "")]))
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(numba_cache))
    monkeypatch.delenv("RNEA_ROS_NO_NUMBA", raising=False)
    params = {"robot_description": URDF, "tip_link": "panda_hand", "effort_limit_scale": 1.5, **FRICTION_OFF}
    proc = start_node(tmp_path, params)
    driver = Driver("cold_start_driver", dict(zip(NAMES, MODEL.effort_limit * 1.5, strict=True)))
    q, qd = np.linspace(-0.6, 0.6, 7), np.linspace(0.3, -0.3, 7)
    try:
        log = wait_for_line(proc, COLD, 120.0)  # said at once, naming the place and the time
        cold_line = next(line for line in log.splitlines() if COLD in line)
        assert str(numba_cache) in cold_line and "python3 -m rnea_ros.compiled.cache" in cold_line
        assert " s (once" in cold_line

        assert get_parameter(driver, "effort_limit_scale", 60.0) == 1.5
        assert driver.no_command_for(driver.state(NAMES, q, qd))
        assert READY not in log_text(proc), "the compile ended before the parameter answered: no evidence"

        got = driver.wait_for_commands(lambda: driver.state(NAMES, q, qd), timeout=900.0)
        log = log_text(proc)
        ready_line = next(line for line in log.splitlines() if READY in line)
        assert f"compiled into numba's cache {numba_cache}" in ready_line
        assert np.allclose(got, rnea(MODEL, q, qd, np.zeros(7)), rtol=0, atol=1e-9)
        assert np.allclose(
            driver.command_for(driver.state(NAMES, -q, qd)),
            rnea(MODEL, -q, qd, np.zeros(7)),
            rtol=0,
            atol=1e-9,
        )
        assert any(numba_cache.rglob("*.nbi"))  # compiled where it said, the installation untouched
        assert not any((install / "rnea_ros").rglob("__pycache__"))
    finally:
        driver.close()
        output = stop(proc)
        writable_again(install)
    assert "Traceback" not in output


@pytest.mark.skipif(not HAVE_NUMBA, reason="numba is not installed: nothing compiles")
def test_an_invalid_parameter_file_ends_start_up_before_any_compiling(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A per-joint value for the wrong number of joints, found with the parameter's model, on a cold
    cache: exit 2 with one line naming it, nothing compiled (it once waited for the kernels, and
    the error then went to the internal-error counter of a node that never exited)."""
    install = read_only_copy(tmp_path / "install")
    numba_cache = tmp_path / "numba_cache"
    numba_cache.mkdir()
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(install), os.environ.get("PYTHONPATH", "")]))
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(numba_cache))
    monkeypatch.delenv("RNEA_ROS_NO_NUMBA", raising=False)
    params = {"robot_description": URDF, "tip_link": "panda_hand", "friction.viscous": [0.1, 0.2]}
    proc = start_node(tmp_path, params)
    try:
        code = proc.wait(120.0)  # a ceiling: compiling alone takes minutes here
    except subprocess.TimeoutExpired:
        code = None
    finally:
        output = stop(proc)
        writable_again(install)
    assert code == 2, f"exit {code}:\n{output[-3000:]}"
    fatal = [line for line in output.splitlines() if "FATAL" in line]
    assert len(fatal) == 1 and "friction.viscous: must have 7 values" in fatal[0], output
    assert COLD not in output and "kernels" not in output, output
    assert not any(numba_cache.rglob("*.nbi"))
