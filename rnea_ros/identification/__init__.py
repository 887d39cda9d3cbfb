"""Identification of inertial, friction and payload parameters from recorded data: regressor, fit,
checks, excitation trajectories, bag reading and the rnea_ros_identify command.
"""
