"""Entry point of `ros2 run rnea_ros inverse_dynamics_node` (also `python -m rnea_ros.node.main`)."""

from __future__ import annotations

import sys

from .common import run_node, spin_events


def main(args: list[str] | None = None) -> int:
    """Run the inverse_dynamics node."""
    import os

    import rclpy

    from .inverse_dynamics import InverseDynamicsNode

    spin = rclpy.spin if os.environ.get("RNEA_ROS_EXECUTOR") == "default" else spin_events
    return run_node(args, InverseDynamicsNode, "inverse_dynamics", spin)


if __name__ == "__main__":
    sys.exit(main())
