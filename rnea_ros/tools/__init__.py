"""Pip-only stand-ins for the `ros2` commands the README uses (no ros2cli on a pip-only machine):
`record` (ros2 bag record of joint_states), `trigger` (ros2 topic pub --once of std_msgs/Empty),
`param` (ros2 param list/get/set/describe). One module per tool, each with `main()`, installed as
the console scripts rnea_ros_record, rnea_ros_trigger and rnea_ros_param."""
