"""`python -m rnea_ros.demo`: the closed-loop MuJoCo demo (`make demo`); see rnea_ros.sim.demo.

A thin entry point that imports nothing from ROS or MuJoCo at import time: the demo's processes
and supervisor live in rnea_ros.sim and are imported inside `main`. PANDA_ARM and
PANDA_HOME are re-exported for code that uses the demo's Panda pose.
"""

from __future__ import annotations

import sys

from .sim.scenario import PANDA_ARM, PANDA_HOME  # no ROS, no MuJoCo

__all__ = ["PANDA_ARM", "PANDA_HOME", "main"]


def main(argv: list[str] | None = None) -> int:
    """Run the demo (arguments as `python -m rnea_ros.sim.demo --help`)."""
    from .sim.demo import main as demo_main

    return demo_main(argv)


if __name__ == "__main__":
    sys.exit(main())
