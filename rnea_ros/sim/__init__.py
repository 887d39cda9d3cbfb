"""The demos' simulation: MuJoCo plants, the simulator node and the demos' supervision, then the
demos themselves, one family each in `demos` (rnea_ros.demo's table names them).

Physics (no ROS): `mujoco_arm` (a URDF robot in MuJoCo), `plant` (a robot unlike its URDF),
`foreign_plant` (an MJCF someone else modelled), `compare_models` (its gap to the URDF),
`closed_loop` (the node's effort law on a MuJoCo arm in one process), `jtc` (JTC's law).
The ROS side: `sim_node` (the mujoco_sim node: a simulated ros2_control robot), `answer_pairing`
and `step_log` (what it records), `loop_timing`, `ros2_control` (the real controller manager in
the loop), `processes` (a demo's child processes), `supervisor` (phases and recording), `scenario`
(robots, gains, timing, node parameters; no ROS), `report` (metrics, table, plot) and `cli`
(what every demo's command line shares).
"""
