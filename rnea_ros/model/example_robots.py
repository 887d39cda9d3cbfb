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


def find_urdf(name: str) -> Path:
    """A URDF named on a command line: a file that exists, else an example robot's by its name
    in EXAMPLE_ROBOTS (`panda`), its path below robots/ or its file's stem (`xarm7`, `ur5_robot`).
    FileNotFoundError saying where the example files are and which names were close."""
    given = Path(name).expanduser()
    if given.is_file():
        return given
    robots = example_robots_dir()
    if name in EXAMPLE_ROBOTS or (robots / name).is_file():
        return example_urdf_path(name)
    stem = given.name.removesuffix(".urdf")
    found = sorted(robots.rglob(f"{stem}.urdf"))
    if len(found) == 1:
        return found[0]
    close = sorted({p.stem for p in robots.rglob("*.urdf") if stem and stem in p.stem})[:8]
    hint = (
        f"{len(found)} files named {stem}.urdf: {[str(p.relative_to(robots)) for p in found]}"
        if found
        else (
            f"close names: {', '.join(close)}"
            if close
            else f"names: {', '.join(EXAMPLE_ROBOTS)} or a file's stem"
        )
    )
    raise FileNotFoundError(
        f"no file {name!r} and no example-robot-data URDF of that name under {robots} ({hint})"
    )
