"""`python -m rnea_ros.demo [DEMO] [OPTIONS]`: the MuJoCo demos (`make demo`), one table of them.

DEMOS is the table: the flag that picks a demo, the module that runs it (in rnea_ros.sim.demos)
and one line on what it shows. It both dispatches and produces `python -m rnea_ros.demo --help`;
`python -m rnea_ros.demo FLAG --help` gives that demo's own options. Without a flag the forward
demo runs (`--controller forward`); `--controller jtc` the joint_trajectory_controller one. The
forward and JTC demos run the real ros2_control when it is installed, else simulate it
(`--controllers auto|ros2_control|simulated`, rnea_ros.sim.ros2_control). `--contact` is the old
name of `--collision`: it still works for one release and says so on stderr.

A thin entry point that imports nothing from ROS or MuJoCo at import time: a demo's module is
imported once it is chosen. PANDA_ARM and PANDA_HOME are re-exported for code that uses the demos'
Panda pose.

`RNEA_ROS_DEMO_ARGS` (environment): options appended to the command line's (the last of an option
wins), e.g. `RNEA_ROS_DEMO_ARGS="--duration 4 --no-plot"`: the tests run the documented `make demo`
lines unchanged and bounded this way.
"""

from __future__ import annotations

import importlib
import os
import shlex
import sys
from dataclasses import dataclass

from rnea_ros.errors import RneaError  # no ROS, nothing heavy
from rnea_ros.ros.processes import end_with_parent, stop_on_sigint  # no ROS
from rnea_ros.sim.scenario import PANDA_ARM, PANDA_HOME  # no ROS, no MuJoCo

__all__ = ["DEMOS", "EXTRA_ARGS", "PANDA_ARM", "PANDA_HOME", "Demo", "main"]

EXTRA_ARGS = "RNEA_ROS_DEMO_ARGS"  # environment: options appended to every demo's command line


@dataclass(frozen=True)
class Demo:
    """One row of the table: `flag` picks it, `module`'s `main(argv)` runs it (`main(kind, argv)`
    where `kind` is set), `what` is its line in --help."""

    flag: str
    module: str
    what: str
    kind: str = ""


DEMOS: tuple[Demo, ...] = (
    Demo(
        "--controller forward",
        "rnea_ros.sim.demos.forward",
        "(the default) the inverse_dynamics node drives a forward_command_controller on a MuJoCo arm",
    ),
    Demo(
        "--controller jtc",
        "rnea_ros.sim.demos.jtc.demo",
        "trajectory_feedforward annotates trajectories a joint_trajectory_controller follows",
    ),
    Demo(
        "--mismatch",
        "rnea_ros.sim.demos.mismatch.demo",
        "a Panda unlike its URDF: recorded, identified (rnea_ros_identify), tracked with both models",
    ),
    Demo(
        "--collision",
        "rnea_ros.sim.demos.collision.demo",
        "external torques and collisions from the momentum observer, in one process (no ROS)",
    ),
    Demo(
        "--payload",
        "rnea_ros.sim.demos.payload.demo",
        "the node estimates an object the Panda grasps and releases; gravity compensation follows",
    ),
    Demo(
        "--ship-deck",
        "rnea_ros.sim.demos.ship_deck",
        "a Panda on a rolling, heaving deck, gravity from its IMU, in one process (no ROS)",
    ),
    Demo(
        "--quadruped",
        "rnea_ros.sim.demos.legged.demo",
        "solo12 standing and squatting: joint PD alone vs PD + contact-consistent inverse dynamics",
        kind="quadruped",
    ),
    Demo(
        "--humanoid",
        "rnea_ros.sim.demos.legged.demo",
        "TALOS standing: joint PD alone vs PD + contact-consistent inverse dynamics",
        kind="humanoid",
    ),
)
ALIASES = {"--contact": "--collision"}  # old flag → new flag (kept one release, with a warning)
CONTROLLER = "--controller"


class Refused(RneaError, ValueError):
    """A command line that names no demo, or several."""


def usage() -> str:
    """`python -m rnea_ros.demo --help`: every demo of the table, one line each."""
    width = max(len(d.flag) for d in DEMOS)
    rows = "\n".join(f"  {d.flag:<{width}}  {d.what}" for d in DEMOS)
    return (
        'usage: python -m rnea_ros.demo [DEMO] [OPTIONS]   (make demo DEMO_ARGS="DEMO OPTIONS")\n\n'
        f"demos (one at a time; none: --controller forward):\n{rows}\n\n"
        "a demo's options: python -m rnea_ros.demo DEMO --help\n"
        f"{EXTRA_ARGS}: options appended to the command line (the last of an option wins)"
    )


def choose(args: list[str]) -> tuple[Demo | None, list[str]]:
    """The demo `args` name (None: they name none) and the arguments left for it; Refused naming
    the valid choices for an unknown --controller, or the demos when they name several."""
    rest: list[str] = []
    chosen: list[Demo] = []
    controllers = [d.flag.split()[1] for d in DEMOS if d.flag.startswith(CONTROLLER + " ")]
    flags = {d.flag: d for d in DEMOS}
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == CONTROLLER or arg.startswith(CONTROLLER + "="):
            if arg == CONTROLLER:
                if i + 1 >= len(args):
                    raise Refused(f"{CONTROLLER} needs a value: {' or '.join(controllers)}")
                value, i = args[i + 1], i + 2
            else:
                value, i = arg.split("=", 1)[1], i + 1
            if value not in controllers:
                raise Refused(f"{CONTROLLER} {value!r}: choose {' or '.join(controllers)}")
            chosen.append(flags[f"{CONTROLLER} {value}"])
            continue
        if arg in ALIASES:
            warning = f"demo: {arg} is deprecated, use {ALIASES[arg]} (the old name goes in a later release)"
            print(warning, file=sys.stderr)
            arg = ALIASES[arg]
        if arg in flags:
            chosen.append(flags[arg])
        else:
            rest.append(arg)
        i += 1
    if len(set(chosen)) > 1:
        raise Refused(f"one demo at a time, not {' and '.join(d.flag for d in dict.fromkeys(chosen))}")
    return (chosen[0] if chosen else None), rest


def main(argv: list[str] | None = None) -> int:
    """Run the demo the command line names (see `usage`); 2 when it names none of the table's."""
    end_with_parent()  # `ros2 launch rnea_ros demo.launch.py` starts it: it ends with the launch
    stop_on_sigint()  # Ctrl-C, or SIGINT from a launch, also when a script started it with `&`
    args = [*(sys.argv[1:] if argv is None else argv), *shlex.split(os.environ.get(EXTRA_ARGS, ""))]
    try:
        demo, rest = choose(args)
    except Refused as exc:
        print(f"demo: {exc}\n\n{usage()}", file=sys.stderr)
        return 2
    if demo is None:
        if "-h" in rest or "--help" in rest:
            print(usage() + "\n\nthe default demo's options (--controller forward):\n")
        demo = DEMOS[0]
    run = importlib.import_module(demo.module).main
    return run(demo.kind, rest) if demo.kind else run(rest)


if __name__ == "__main__":
    sys.exit(main())
