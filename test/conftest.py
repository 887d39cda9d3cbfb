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

from robot_files import urdf_text  # noqa: E402

KINDS = ("unit", "ros", "system")


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
