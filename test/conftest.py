"""Shared fixtures, the test kinds, and the import path of the test helpers.

test/ is not a package (a test/__init__.py would shadow the standard library's `test`): its
helper modules (robot_files, pinref, and test modules other tests reuse) import as top-level
modules, so this folder goes on sys.path whatever pytest's import mode.

Every test module declares its kind with a module-level `pytestmark`: unit (no ROS processes,
seconds), ros (real rclpy processes) or system (the closed-loop demo, colcon builds); `make
test-unit` runs `pytest -m unit`. A module without a kind fails the collection.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

HERE = str(Path(__file__).resolve().parent)
if HERE not in sys.path:
    sys.path.insert(0, HERE)

import ros_install  # noqa: E402
from robot_files import urdf_text  # noqa: E402

KINDS = ("unit", "ros", "system")

# launch_testing files (a generate_test_description) run under launch_testing's own runner, from
# test_launch_files.py; pytest does not collect them itself (launch_testing's pytest plugin does
# not load under pytest 9, see setup.cfg)
collect_ignore = [p.name for p in ros_install.launch_testing_files()]


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Refuse tests without exactly one kind (unit, ros or system)."""
    unmarked = sorted(
        {
            item.nodeid.split("::")[0]
            for item in items
            if sum(item.get_closest_marker(kind) is not None for kind in KINDS) != 1
        }
    )
    if unmarked:
        raise pytest.UsageError(f"test modules without exactly one of the marks {KINDS}: {unmarked}")


@pytest.fixture(scope="session")
def panda_urdf() -> str:
    return urdf_text("panda")


@pytest.fixture(scope="session")
def colcon_workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """install/ of one `colcon build` of the package in a fresh workspace, shared by the session."""
    return ros_install.colcon_build(tmp_path_factory.mktemp("colcon_ws"))


@pytest.fixture(scope="session")
def ros_env(request: pytest.FixtureRequest) -> dict[str, str]:
    """The environment of a sourced workspace on a ROS 2 install (skips without the wheels)."""
    ros_install.require_ros_install()  # before the build: skip at once
    return ros_install.sourced_env(request.getfixturevalue("colcon_workspace"))
