"""Entry point of `ros2 run rnea_ros inverse_dynamics_node` (also `python -m rnea_ros.node.main`)."""

from __future__ import annotations

import sys

import rclpy
from rclpy.executors import ExternalShutdownException


def main(args: list[str] | None = None) -> int:
    """Run the node until Ctrl-C or shutdown; 2 on an invalid parameter file."""
    rclpy.init(args=args)
    node = None
    try:
        from .inverse_dynamics import InverseDynamicsNode

        try:
            node = InverseDynamicsNode()
        except ValueError as exc:  # an invalid parameter file: fail at launch, naming it
            rclpy.logging.get_logger("inverse_dynamics").fatal(f"invalid parameters: {exc}")
            return 2
        rclpy.spin(node)
    except (KeyboardInterrupt, ExternalShutdownException):  # Ctrl-C also during start-up
        pass
    finally:
        if node is not None:
            node.destroy_node()
        rclpy.try_shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
