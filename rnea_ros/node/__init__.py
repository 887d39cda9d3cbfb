"""ROS 2 adapter of rnea_ros: the inverse_dynamics node."""
