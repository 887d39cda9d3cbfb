"""rnea_ros: real-time inverse dynamics (Recursive Newton-Euler) for ROS 2 robots.

What `from rnea_ros import …` offers, one rule: the math on one model at one state. That is
the model (`RobotModel` and the types of `rnea_ros.model.robot_model`, its workspace `Data`),
every name that a module of `rnea_ros.algorithms` lists in its `__all__` (RNEA and its relatives,
the configuration of a moving root, task space, constraints, Lagrangian terms, contact-consistent
inverse dynamics, geared drives), the friction model (`Friction`, `friction_torques`), every
error of `rnea_ros.errors` and `compile_kernels`. What runs over time or on recordings, the
packages above the algorithms (`rnea_ros.estimation`: the momentum observer; `rnea_ros.control`:
the effort law; `rnea_ros.trajectory`; `rnea_ros.identification`), is imported from its module,
and so is the ROS side (`rnea_ros.ros`, `rnea_ros.nodes`, `rnea_ros.sim`, `rnea_ros.tools`).
test/unit/test_package.py holds the package to this rule.

The core (everything below `rnea_ros.ros`) has no ROS imports. Importing it or building a model
compiles nothing: `compile_kernels()` compiles every kernel up front (a control process calls
it at start-up), else each kernel compiles on its first use.
"""

# The names of rnea_ros.api, imported on first use (PEP 562): `import rnea_ros` and the import of a
# node's entry point then load nothing heavy (numba, numpy: 0.4 s here, seconds on a busy machine),
# so that the entry point is running, and handles a Ctrl-C, before the heavy imports start.
from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rnea_ros.api import *  # noqa: F403
    from rnea_ros.api import __all__ as __all__


def __getattr__(name: str) -> Any:
    api = importlib.import_module("rnea_ros.api")
    if name == "__all__" or name in api.__all__:
        value = getattr(api, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'rnea_ros' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *importlib.import_module("rnea_ros.api").__all__])
