"""`python -m rnea_ros.demo`: the closed-loop MuJoCo demo (`make demo`); see rnea_ros.sim.demo.

`--controller forward` (the default): the inverse_dynamics node commands a forward_command_controller;
`--controller jtc`: the trajectory_feedforward node annotates trajectories that a
joint_trajectory_controller follows (rnea_ros.sim.jtc_demo); both on the real ros2_control when
it is installed, else simulated (`--controllers auto|ros2_control|simulated`,
rnea_ros.sim.ros2_control); `--mismatch`: a Panda unlike its
URDF is recorded, identified and tracked with both models (rnea_ros.sim.mismatch_demo);
`--contact`: external-torque estimation and collision detection against MuJoCo, in one process
(rnea_ros.sim.contact_demo); `--ship-deck`: a Panda on a rolling, heaving deck with gravity from
its IMU, in one process (rnea_ros.sim.ship_deck); `--payload`: the node estimates an object grasped
and released by the Panda in MuJoCo (rnea_ros.sim.payload_demo); `--quadruped` (solo12) and `--humanoid`
(TALOS): a legged robot standing on a MuJoCo floor with joint PD alone and with PD +
contact-consistent inverse dynamics, in one process (rnea_ros.sim.legged_demo).

A thin entry point that imports nothing from ROS or MuJoCo at import time: the demo's processes
and supervisor live in rnea_ros.sim and are imported inside `main`. PANDA_ARM and
PANDA_HOME are re-exported for code that uses the demo's Panda pose.

`RNEA_ROS_DEMO_ARGS` (environment): options appended to the command line's (the last of an option
wins), e.g. `RNEA_ROS_DEMO_ARGS="--duration 4 --no-plot"`: the tests run the documented `make demo`
lines unchanged and bounded this way.
"""

from __future__ import annotations

import os
import shlex
import sys

from rnea_ros.ros.processes import end_with_parent  # no ROS
from rnea_ros.sim.scenario import PANDA_ARM, PANDA_HOME  # no ROS, no MuJoCo

__all__ = ["EXTRA_ARGS", "PANDA_ARM", "PANDA_HOME", "main"]

EXTRA_ARGS = "RNEA_ROS_DEMO_ARGS"  # environment: options appended to every demo's command line


def main(argv: list[str] | None = None) -> int:
    """Run the demo (arguments as `python -m rnea_ros.sim.demo --help`); with `--controller jtc`,
    the joint_trajectory_controller path instead (`python -m rnea_ros.sim.jtc_demo --help`), with
    `--mismatch` the identification demo (`python -m rnea_ros.demo --mismatch --help`)."""
    end_with_parent()  # `ros2 launch rnea_ros demo.launch.py` starts it: it ends with the launch
    args = [*(sys.argv[1:] if argv is None else argv), *shlex.split(os.environ.get(EXTRA_ARGS, ""))]
    if "--ship-deck" in args:
        from rnea_ros.sim.ship_deck import main as ship_deck_main

        return ship_deck_main([a for a in args if a != "--ship-deck"])
    if "--payload" in args:
        from rnea_ros.sim.payload_demo import main as payload_main

        return payload_main([a for a in args if a != "--payload"])
    if "--contact" in args:
        from rnea_ros.sim.contact_demo import main as contact_main

        return contact_main([a for a in args if a != "--contact"])
    for kind in ("quadruped", "humanoid"):
        if f"--{kind}" in args:
            from rnea_ros.sim.legged_demo import main as legged_main

            return legged_main(kind, [a for a in args if a != f"--{kind}"])
    if "--mismatch" in args:
        from rnea_ros.sim.mismatch_demo import main as mismatch_main

        return mismatch_main([a for a in args if a != "--mismatch"])
    for form in (["--controller", "jtc"], ["--controller=jtc"]):
        at = next((i for i in range(len(args)) if args[i : i + len(form)] == form), None)
        if at is not None:
            from rnea_ros.sim.jtc_demo import main as jtc_main

            return jtc_main(args[:at] + args[at + len(form) :])
    for form in (["--controller", "forward"], ["--controller=forward"]):
        at = next((i for i in range(len(args)) if args[i : i + len(form)] == form), None)
        if at is not None:
            args = args[:at] + args[at + len(form) :]
    from rnea_ros.sim.demo import main as demo_main

    return demo_main(args)


if __name__ == "__main__":
    sys.exit(main())
