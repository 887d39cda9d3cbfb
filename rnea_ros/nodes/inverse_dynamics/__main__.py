"""Entry point of `ros2 run rnea_ros inverse_dynamics_node`
(also `python -m rnea_ros.nodes.inverse_dynamics`).

The node spins as `RNEA_ROS_EXECUTOR` selects (`common.selected_spin`): the wait-set loop
(`waitset`, `waitset_loop.WaitSetExecutor`: one wait set, bounded memory), rclpy's default
executor (`default`) or rclpy's EventsExecutor (`events`: its event queue grows without bound when
joint_states comes faster than the node answers, see `common.spin_events`)."""

from __future__ import annotations

import sys

from rclpy.node import Node

from rnea_ros.ros.common import run_node


def main(args: list[str] | None = None) -> int:
    """Run the inverse_dynamics node."""
    return run_node(args, _inverse_dynamics_node, "inverse_dynamics")


def _inverse_dynamics_node() -> Node:
    # imported here, within run_node: a Ctrl-C during the import is a clean stop
    from rnea_ros.nodes.inverse_dynamics.node import InverseDynamicsNode

    return InverseDynamicsNode()


if __name__ == "__main__":
    sys.exit(main())
