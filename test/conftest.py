"""Shared fixtures: real robot descriptions from example-robot-data."""

from __future__ import annotations

import pytest

from rnea_ros.robots import example_urdf_path


def urdf_text(name: str) -> str:
    """The URDF of an example-robot-data robot, as text."""
    return example_urdf_path(name).read_text()


@pytest.fixture(scope="session")
def panda_urdf() -> str:
    return urdf_text("panda")
