"""Entry point of `ros2 run rnea_ros inverse_dynamics_node`
(also `python -m rnea_ros.nodes.inverse_dynamics`).

It imports nothing heavy: `main` starts through `rnea_ros.ros.entry.run` (the process ends with its
parent; a Ctrl-C or SIGTERM during the imports is one line, exit 0), which imports `start`'s
module, the node, rclpy and the kernels' modules.

The node spins as `RNEA_ROS_EXECUTOR` selects (`executors.selected_spin`): the wait-set loop
(`waitset`, `waitset_loop.WaitSetExecutor`: one wait set, bounded memory), rclpy's default
executor (`default`) or rclpy's EventsExecutor (`events`: its event queue grows without bound when
joint_states comes faster than the node answers, see `executors.spin_events`)."""

from __future__ import annotations

import sys

from rnea_ros.ros.entry import run


def main(args: list[str] | None = None) -> int:
    """Run the inverse_dynamics node."""
    return run("inverse_dynamics", "rnea_ros.nodes.inverse_dynamics.node:main", args)


if __name__ == "__main__":
    sys.exit(main())
