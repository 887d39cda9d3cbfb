"""Test harness shared by the test suite (test/) and the benchmarks (bench/): the ROS side, like
`rnea_ros.node` and `rnea_ros.sim` (it imports rclpy), never imported by the core.

`rnea_ros.testing.rosgraph`: the inverse_dynamics node as a real subprocess and a real rclpy node
that drives it (start_node, Driver, stop).
"""
