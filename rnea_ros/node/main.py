"""Entry point of `ros2 run rnea_ros inverse_dynamics_node` (also `python -m rnea_ros.node.main`).

The node spins rclpy's default (wait-set) executor, whose memory stays bounded however fast
joint_states arrives. `RNEA_ROS_EXECUTOR=events` spins rclpy's EventsExecutor instead (about a
third less latency when the node keeps up; its event queue grows without bound when it does not,
see `common.spin_events`)."""

from __future__ import annotations

import sys

from .common import run_node, spin_events


def main(args: list[str] | None = None) -> int:
    """Run the inverse_dynamics node."""
    import os

    import rclpy

    from .inverse_dynamics import InverseDynamicsNode

    spin = spin_events if os.environ.get("RNEA_ROS_EXECUTOR") == "events" else rclpy.spin
    return run_node(args, InverseDynamicsNode, "inverse_dynamics", spin)


if __name__ == "__main__":
    sys.exit(main())
