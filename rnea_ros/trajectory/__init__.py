"""Joint trajectories as joint_trajectory_controller treats them: sampling, joint maps, the desired
state, efforts along them, effort-annotated points, time scaling and time-optimal re-timing.
"""
