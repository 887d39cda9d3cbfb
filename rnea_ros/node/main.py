"""Entry point of `ros2 run rnea_ros inverse_dynamics_node` (also `python -m rnea_ros.node.main`)."""

from __future__ import annotations

import sys

import rclpy
from rclpy.executors import ExternalShutdownException


def main(args: list[str] | None = None) -> int:
    rclpy.init(args=args)
    from .inverse_dynamics import InverseDynamicsNode

    try:
        node = InverseDynamicsNode()
    except ValueError as exc:  # an invalid parameter file: fail at launch, naming it
        rclpy.logging.get_logger("inverse_dynamics").fatal(f"invalid parameters: {exc}")
        rclpy.try_shutdown()
        return 2
    try:
        rclpy.spin(node)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    finally:
        node.destroy_node()
        rclpy.try_shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
