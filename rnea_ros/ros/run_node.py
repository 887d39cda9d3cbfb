"""`run_node`: build a node and spin it until Ctrl-C or shutdown (start, spin, Ctrl-C/SIGTERM,
invalid parameters), as every executable of the package does."""

from __future__ import annotations

import faulthandler
import gc
import os
import sys
from collections.abc import Callable
from typing import NoReturn, TypeVar

import rclpy
from rclpy.executors import ExternalShutdownException
from rclpy.node import Node

from rnea_ros.ros.executors import selected_spin
from rnea_ros.ros.processes import end_with_parent, stop_on_sigint
from rnea_ros.ros.signals import join_signal_shutdown

N = TypeVar("N", bound=Node)
GC_FREEZE_ENV = "RNEA_ROS_GC_FREEZE"  # "0": run_node does not freeze the collector after start-up


def run_node(
    args: list[str] | None,
    make_node: Callable[[], N],
    name: str,
    spin: Callable[[N], None] | None = None,
) -> int:
    """Build a node and spin it until Ctrl-C or shutdown (`spin`, else as RNEA_ROS_EXECUTOR
    selects: `selected_spin`): 0, or 2 when the command line or the parameters are invalid (one
    line naming the culprit, no traceback)."""
    end_with_parent()  # done already when started through rnea_ros.ros.entry (its executables)
    stop_on_sigint()  # SIGINT inherited ignored (`node &` in a script) still stops it
    # a fatal signal (SIGSEGV in a C extension) prints every thread's Python stack to stderr:
    # the node's log then says where it died
    faulthandler.enable()
    log = rclpy.logging.get_logger(name)
    try:
        spin_node = selected_spin() if spin is None else spin
        rclpy.init(args=args)
    except KeyboardInterrupt:  # Ctrl-C before the node exists: nothing to tear down
        join_signal_shutdown()
        rclpy.try_shutdown()
        _exit_after_interrupt()
    except Exception as exc:  # noqa: BLE001 - e.g. a params file rcl cannot parse
        hint = ""
        if "same type" in str(exc):
            hint = " (write every number of a list the same way, e.g. [0.0, 0.0, -9.81], not [0, 0, -9.81])"
        print(f"[FATAL] [{name}]: cannot start: {str(exc).splitlines()[0]}{hint}", file=sys.stderr)
        return 2
    node = None
    started = interrupted_in_start_up = False
    try:
        try:
            node = make_node()
        except ValueError as exc:  # an invalid parameter file: fail at launch, naming it
            if not rclpy.ok():
                raise
            log.fatal(f"cannot start, invalid parameter {exc}")
            return 2
        # What start-up built (imports, kernels, model) is never garbage: out of the collector's
        # sight, a full collection need not walk it (docs/performance.md gives the figures).
        # RNEA_ROS_GC_FREEZE=0 leaves it tracked (to measure what freezing changes).
        if os.environ.get(GC_FREEZE_ENV, "1") != "0":
            gc.collect()
            gc.freeze()
        started = True
        spin_node(node)
    except ExternalShutdownException:
        pass
    except KeyboardInterrupt:  # Ctrl-C, also during start-up
        interrupted_in_start_up = not started
    except Exception:
        # SIGTERM (or SIGINT) shut the context down under a start-up still under way, and rcl
        # refused to create the next entity (RCLError): a stop, not a fault
        if rclpy.ok():
            raise
    finally:
        join_signal_shutdown()  # rclpy's signal thread may be shutting the context down right now
        if node is not None:
            node.destroy_node()
        rclpy.try_shutdown()
    if interrupted_in_start_up:
        _exit_after_interrupt()
    return 0


def _exit_after_interrupt() -> NoReturn:
    """End the process with 0 after a Ctrl-C handled during start-up. Not by returning: when the
    KeyboardInterrupt passed through an `exec` of a string on its way (dataclasses build their
    methods so while a module is imported), CPython 3.11 marks it unhandled even though it was
    caught, and ends the interpreter by SIGINT (exit -2) after a clean return; 4 of 30 stops
    0.37-0.43 s after spawn did. (A Ctrl-C while spinning returns normally.)"""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)
