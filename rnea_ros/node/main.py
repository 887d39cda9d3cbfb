"""Entry point of `ros2 run rnea_ros inverse_dynamics_node` (also `python -m rnea_ros.node.main`),
and `run_node`, the start/spin/stop sequence every executable of the package shares."""

from __future__ import annotations

import sys
from collections.abc import Callable

import rclpy
from rclpy.executors import ExternalShutdownException
from rclpy.node import Node


def run_node(
    args: list[str] | None,
    make_node: Callable[[], Node],
    name: str,
    spin: Callable[[Node], None] = rclpy.spin,
) -> int:
    """Build a node and spin it until Ctrl-C or shutdown: 0, or 2 when the node's parameters are
    invalid (make_node raised ValueError, logged as a fatal error under `name`)."""
    rclpy.init(args=args)
    node = None
    try:
        try:
            node = make_node()
        except ValueError as exc:  # an invalid parameter file: fail at launch, naming it
            rclpy.logging.get_logger(name).fatal(f"cannot start, invalid parameters: {exc}")
            return 2
        spin(node)
    except (KeyboardInterrupt, ExternalShutdownException):  # Ctrl-C also during start-up
        pass
    finally:
        if node is not None:
            node.destroy_node()
        rclpy.try_shutdown()
    return 0


def main(args: list[str] | None = None) -> int:
    """Run the inverse_dynamics node."""
    from .inverse_dynamics import InverseDynamicsNode

    return run_node(args, InverseDynamicsNode, "inverse_dynamics")


if __name__ == "__main__":
    sys.exit(main())
