"""What every demo's command line shares (no ROS): its exit statuses, its parser with the output
options, the plant options and check, which controllers ran, saving a plot."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from rnea_ros.sim.ros2_control import Stack

# a demo's exit status
OK = 0  # every target met
MISSED = 1  # a target missed, or the run failed
REFUSED = 2  # bad options or a robot refused up front (the reason printed)
REAL_TIME_LOST = 3  # a real-time run stopped early: the machine did not keep real time
INTERRUPTED = 130  # Ctrl-C


def ended(exc: BaseException, name: str = "demo", json_path: str | None = None) -> int:
    """A run ended by `exc` (Ctrl-C, or a failure: RuntimeError, TimeoutError...): says so on
    stderr and, given the demo's --json, in that file (`error`, and `failed` as a finished run
    lists its missed targets), so that whoever waits on the numbers reads why there are none;
    returns the exit status (INTERRUPTED, MISSED)."""
    interrupted = isinstance(exc, KeyboardInterrupt)
    message = "interrupted" if interrupted else f"{name} failed: {exc}"
    print(message, file=sys.stderr)
    if json_path:
        write_json(json_path, {"error": message, "failed": [message]})
    return INTERRUPTED if interrupted else MISSED


def demo_parser(flag: str, doc: str | None) -> argparse.ArgumentParser:
    """The parser of `python -m rnea_ros.demo FLAG`, described by the first paragraph of `doc`."""
    prog = f"python -m rnea_ros.demo {flag}".strip()
    return argparse.ArgumentParser(prog=prog, description=(doc or "").split("\n\n")[0])


def add_output_options(parser: argparse.ArgumentParser, out: str = "the plot", json: str = "numbers") -> None:
    """--out (the directory of `out`), --headless/--no-plot and --json (also write the `json`)."""
    parser.add_argument("--out", default="out", help=f"directory of {out} (default ./out)")
    parser.add_argument("--headless", "--no-plot", dest="plot", action="store_false", help="no PNG")
    parser.add_argument("--json", help=f"also write the {json} to this JSON file")


def add_ros_options(parser: argparse.ArgumentParser, timeout: float) -> None:
    """--domain-id (ROS_DOMAIN_ID, by default one of this process's own) and --timeout (the
    wall-clock limit of a run, s)."""
    parser.add_argument("--domain-id", type=int, default=20 + os.getpid() % 80, help="ROS_DOMAIN_ID")
    parser.add_argument("--timeout", type=float, default=timeout, help="wall-clock limit of a run, s")


def add_plant_arguments(parser: argparse.ArgumentParser) -> None:
    """--plant and --plant-joints (every demo of the node on a simulated arm takes them)."""
    parser.add_argument(
        "--plant",
        help="an MJCF file (e.g. MuJoCo Menagerie's panda.xml) the simulator runs instead of the URDF; "
        "the node keeps the URDF",
    )
    parser.add_argument(
        "--plant-joints",
        nargs="+",
        metavar="URDF_JOINT=PLANT_JOINT",
        help="pair the plant's joints with the URDF's (default: by chain order)",
    )


def check_plant(urdf: str, plant: str, pairs: tuple[str, ...] = ()) -> tuple[str, dict[str, float]]:
    """(one line on how the plant stands for the URDF, the plant's home pose in the URDF's
    joints); Refused (a ValueError) when it is not the URDF's arm (rnea_ros.sim.foreign_plant)."""
    from rnea_ros.sim.foreign_plant import load_mjcf, match, plant_home

    model, _ = load_mjcf(plant)
    found = match(urdf, model, pairs)
    home = plant_home(urdf, model, found)
    p = found.base_transform[1]
    held = f"; held, the plant's only: {list(found.plant_only)}" if found.plant_only else ""
    absent = f"; constant, the URDF's only: {list(found.urdf_only)}" if found.urdf_only else ""
    pose = "; starts at its home keyframe" if home else ""
    return (
        f"plant {plant}: kinematics shared (flange within {1000 * found.flange_error[0]:.2g} mm, "
        f"{float(np.degrees(found.flange_error[1])):.2g} deg; base at {np.round(p, 4).tolist()} m); "
        f"joints {found.describe()}{held}{absent}{pose}"
    ), home


def controllers_json(stack: Stack | None) -> dict:
    """Which controller implementation ran, for the demos' JSON."""
    if stack is None:
        return {"implementation": "simulated"}
    return {"implementation": "ros2_control", "prefix": str(stack.prefix), **stack.versions}


def write_json(path: Path | str, numbers: dict) -> Path:
    """A demo's numbers (--json) written to `path`, its folder made (it may be under --out, which a
    run without a plot does not make); `path`."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(numbers, indent=1))
    return path


def save_figure(
    fig: Figure, path: Path | str, dpi: int = 90, rect: tuple[float, float, float, float] | None = None
) -> Path:
    """Lay `fig` out (within `rect`, figure fractions), write it to `path` (its folder made) and
    close it; `path`."""
    import matplotlib.pyplot as plt

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.tight_layout(rect=rect)
    fig.savefig(path, dpi=dpi)
    plt.close(fig)
    return path


__all__ = [
    "INTERRUPTED",
    "MISSED",
    "OK",
    "REAL_TIME_LOST",
    "REFUSED",
    "add_output_options",
    "add_plant_arguments",
    "add_ros_options",
    "add_plant_arguments",
    "check_plant",
    "controllers_json",
    "demo_parser",
    "ended",
    "save_figure",
    "write_json",
]
