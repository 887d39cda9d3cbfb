"""rnea_ros: real-time inverse dynamics (Recursive Newton-Euler) for ROS 2 robot arms.

The core (this package minus `rnea_ros.node` and `rnea_ros.sim`) has no ROS imports. Importing
it or building a model compiles nothing: `compile_kernels()` compiles every kernel up front (a
control process calls it at start-up), else each kernel compiles on its first use.
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
