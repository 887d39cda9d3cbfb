"""Packaging: the package builds with colcon as on a ROS 2 install, and with pip alone.

colcon-core, colcon-ros, colcon-python-setup-py and ament_package come from PyPI (requirements-dev).
The package is copied (files git tracks or would track) into a temporary colcon workspace
(test/support/ros_install.py; conftest's session fixture `colcon_workspace` builds it once).
"""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from ros_install import copy_package

SCRIPTS = (
    "inverse_dynamics_node",
    "mujoco_sim_node",
    "multisine_trajectory",
    "trajectory_feedforward_node",
    "rnea_ros_identify",
    "rnea_ros_record",
    "rnea_ros_trigger",
    "rnea_ros_param",
)


@pytest.fixture(scope="module")
def colcon_install(colcon_workspace: Path) -> Path:
    """Install prefix of rnea_ros after `colcon build` in a fresh workspace (one per session)."""
    return colcon_workspace / "rnea_ros"


def test_colcon_build_installs_console_scripts_in_lib_package(colcon_install: Path) -> None:
    lib = colcon_install / "lib" / "rnea_ros"
    for script in SCRIPTS:
        path = lib / script
        assert path.is_file(), f"{script} not in {lib}"
        assert os.access(path, os.X_OK), f"{script} is not executable"
        assert path.read_text().startswith("#!"), f"{script} has no interpreter line"


def test_ament_index_finds_share_with_launch_and_config(colcon_install: Path) -> None:
    site = next((colcon_install / "lib").glob("python3*/site-packages"))
    code = (
        "import rnea_ros, ament_index_python as a; "
        "print(a.get_package_share_directory('rnea_ros')); print(rnea_ros.__file__)"
    )
    env = {**os.environ, "AMENT_PREFIX_PATH": str(colcon_install), "PYTHONPATH": str(site)}
    proc = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60, cwd="/"
    )
    assert proc.returncode == 0, proc.stderr
    share_line, module_line = proc.stdout.split()[-2:]
    share = Path(share_line)
    assert share == colcon_install / "share" / "rnea_ros"
    assert Path(module_line).is_relative_to(site), "the installed package is not the one imported"
    assert (share / "package.xml").is_file()
    assert (share / "launch" / "inverse_dynamics.launch.py").is_file()
    assert (share / "launch" / "demo.launch.py").is_file()
    assert (share / "config" / "inverse_dynamics.yaml").is_file()
    assert (share / "config" / "controllers.yaml").is_file()
    assert (share / "launch" / "trajectory_feedforward.launch.py").is_file()
    assert (share / "config" / "trajectory_feedforward.yaml").is_file()
    assert (share / "config" / "controllers_jtc.yaml").is_file()


def test_colcon_build_leaves_the_kernels_in_numba_cache_for_the_first_start(colcon_install: Path) -> None:
    """setup.py's install_lib runs `python -m rnea_ros.compiled.cache` on the installed package: the
    first start from the install loads every kernel, compiling none."""
    site = next((colcon_install / "lib").glob("python3*/site-packages"))
    cache = site / "rnea_ros" / "compiled" / "__pycache__"
    assert list(cache.glob("pointer_kernels.*.nbi")), "no numba cache in the install"
    assert list(cache.parent.glob("kernels/__pycache__/fixed_root.*.nbi")), "no numba cache in the install"
    code = (
        "from rnea_ros.compiled.cache import cache_is_cold, cache_location; "
        "from rnea_ros import compile_kernels; "
        "print(cache_is_cold(), compile_kernels().cold_cache, cache_location())"
    )
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"} | {"PYTHONPATH": str(site)}
    proc = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300, cwd="/"
    )
    assert proc.returncode == 0, proc.stderr
    cold_before, compiled, where = proc.stdout.split()[-3:]
    assert (cold_before, compiled) == ("False", "False"), proc.stdout
    # in the install, beside the compiled sources (not a NUMBA_CACHE_DIR elsewhere)
    assert Path(where).is_relative_to(site / "rnea_ros" / "compiled") and Path(where).name == "__pycache__"


def test_pip_wheel_has_the_package_and_its_data(tmp_path: Path) -> None:
    src = copy_package(tmp_path / "src")
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-w", str(tmp_path), "."],
        cwd=src,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (wheel,) = tmp_path.glob("rnea_ros-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    assert "rnea_ros/nodes/inverse_dynamics/__main__.py" in names
    assert "rnea_ros/compiled/kernels/fixed_root.py" in names
    assert "rnea_ros/py.typed" in names, "type hints are not marked as shipped (PEP 561)"
    assert not any(n.startswith("test/") for n in names), "tests are packaged"
    data = {n.split(".data/data/", 1)[1] for n in names if ".data/data/" in n}
    assert "share/rnea_ros/launch/inverse_dynamics.launch.py" in data
    assert "share/rnea_ros/config/inverse_dynamics.yaml" in data
    assert "share/ament_index/resource_index/packages/rnea_ros" in data
