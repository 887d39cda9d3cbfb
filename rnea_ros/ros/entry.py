"""How every executable of the package starts: `run(name, "module:function", args)`.

This module and the packages above it import nothing heavy (rnea_ros/__init__.py loads its public
names on first use), so that `run` is in charge from the first milliseconds, before the seconds
of imports of rclpy, numpy, numba and the node (seconds on a busy machine):

- the process ends with whoever started it (`processes.end_with_parent`: a `ros2 run`, a launch or
  a test killed by SIGKILL takes its nodes with it);
- a SIGINT (Ctrl-C) or SIGTERM during those imports ends the process with exit code 0 and one
  line, not a traceback through the import machinery, whatever an imported library makes of the
  KeyboardInterrupt (swallows it, or turns it into an ImportError); from `rclpy.init` on,
  `run_node` handles both (ros/run_node.py). SIGINT stops it also when the process inherited it
  ignored (`processes.stop_on_sigint`).
"""

from __future__ import annotations

import importlib
import os
import signal
import sys
from collections.abc import Callable
from typing import Any, NoReturn

from rnea_ros.ros.processes import end_with_parent, stop_on_sigint


class _Stop:
    """Whether a SIGINT or SIGTERM came during the imports."""

    received = False


def _interrupted(signum: int, frame: Any) -> None:
    _Stop.received = True
    raise KeyboardInterrupt


def run(name: str, target: str, args: list[str] | None = None) -> int:
    """Import `target` ("module:function", the executable's main taking `args`) and return what it
    returns; see the module doc for what comes before."""
    end_with_parent()
    module, function = target.split(":")
    previous = {sig: signal.signal(sig, _interrupted) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        main: Callable[[list[str] | None], int] = getattr(importlib.import_module(module), function)
    except BaseException:
        # the KeyboardInterrupt, or what an extension module's initialisation made of it (numpy's
        # C init turns it into "ImportError: PyCapsule_Import could not import module datetime")
        if _Stop.received:
            stopped_while_starting(name)
        raise
    for sig, handler in previous.items():  # rclpy.init installs its own (run_node)
        signal.signal(sig, handler)
    stop_on_sigint()  # also when it was inherited ignored
    if _Stop.received:  # raised where nothing let it through
        stopped_while_starting(name)
    return main(args)


def stopped_while_starting(name: str) -> NoReturn:
    """One line and exit code 0 after a SIGINT or SIGTERM during start-up. Not by returning: when
    the KeyboardInterrupt passed through an `exec` of a string on its way (dataclasses build their
    methods so while a module is imported), CPython 3.11 marks it unhandled even though it was
    caught, and ends the interpreter by SIGINT (exit -2) after a clean return; 4 of 30 stops
    0.37-0.43 s after spawn did."""
    print(f"[INFO] [{name}]: stopped while starting", file=sys.stderr)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


def run_module(name: str, module: str) -> NoReturn:
    """`python -m module` through `run`: called by the module's first lines, before its own
    imports (`if __name__ == "__main__" and __spec__ is not None: run_module(name, __spec__.name)`);
    the module is imported again under its name, and its `main` runs."""
    sys.exit(run(name, f"{module}:main"))
