"""The real ros2_control stack in the tests (rnea_ros.sim.ros2_control): the prebuilt folder
../shared/ros2-control (ROS2_CONTROL) and whether `make` set-up installed it into this venv.

`require_stack()` skips when the folder does not exist (a pip-only machine: the demos simulate
their controllers), and fails when it exists but the stack is not installed. `implementation()`
is what the demos' `--controllers auto` picks here."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from rnea_ros.sim.ros2_control import Stack, find, why_not

REPO = Path(__file__).resolve().parents[2]
FOLDER = Path(os.environ.get("ROS2_CONTROL") or REPO.parent / "shared" / "ros2-control")


def require_stack() -> Stack:
    """The installed stack; skip without the prebuilt folder, fail when it is not installed."""
    if not FOLDER.is_dir():
        pytest.skip(f"needs ros2_control: {FOLDER} does not exist (set ROS2_CONTROL to use another)")
    stack = find()
    if stack is None:
        pytest.fail(f"{FOLDER} exists but {why_not()}: run `make .venv/.ros2-control`")
    return stack


def implementation() -> str:
    """'ros2_control' when the demos' --controllers auto finds the stack, else 'simulated'."""
    return "simulated" if find() is None else "ros2_control"
