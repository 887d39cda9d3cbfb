"""A closed loop for the inverse_dynamics node: a MuJoCo-simulated arm and a trajectory source.

Core modules (no ROS): `mujoco_arm` (the physics), `multisine` (the trajectory), `answers`
(pairing commands with the states they answer), `report` (metrics, table, plot). ROS adapters:
`sim_node` (a simulated ros2_control robot with an effort forward_command_controller),
`multisine_node` (publishes a JointTrajectory to the inverse_dynamics node) and `supervisor`
(the demo's phases and recording). The demo itself: `scenario` (which robots, gains, timing,
node parameters; no ROS), `processes` (its child processes) and `demo` (the command line;
`python -m rnea_ros.demo` is a thin entry point to it); `closed_loop` runs the effort law
against `mujoco_arm` in one process (no ROS).
"""
