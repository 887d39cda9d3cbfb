"""The robot descriptions the tests load: example-robot-data URDFs as text."""

from __future__ import annotations

from rnea_ros.model.example_robots import example_urdf_path


def urdf_text(name: str) -> str:
    """The URDF of an example-robot-data robot (a name of
    `rnea_ros.model.example_robots` or a path), as text."""
    return example_urdf_path(name).read_text()
