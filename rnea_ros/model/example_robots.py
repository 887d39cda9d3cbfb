"""Locate example robot descriptions shipped by the `example-robot-data` wheel."""

from __future__ import annotations

import sysconfig
from pathlib import Path

EXAMPLE_ROBOTS = {
    "panda": "panda_description/urdf/panda.urdf",
    "ur5": "ur_description/urdf/ur5_robot.urdf",
    "double_pendulum": "double_pendulum_description/urdf/double_pendulum.urdf",
    "talos": "talos_data/robots/talos_reduced.urdf",
}


def example_robots_dir() -> Path:
    """The `robots/` folder of example-robot-data (installed as a cmeel wheel)."""
    for key in ("purelib", "platlib"):
        root = Path(sysconfig.get_paths()[key]) / "cmeel.prefix/share/example-robot-data/robots"
        if root.is_dir():
            return root
    raise FileNotFoundError("example-robot-data is not installed (pip install example-robot-data)")


def example_urdf_path(name: str) -> Path:
    """Path of a known example robot's URDF: one of EXAMPLE_ROBOTS, or a path below robots/."""
    return example_robots_dir() / EXAMPLE_ROBOTS.get(name, name)
