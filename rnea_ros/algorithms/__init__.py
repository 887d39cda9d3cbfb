"""Rigid-body algorithms on a RobotModel: inverse and forward dynamics, gravity, mass matrix,
kinematics, task space, constrained dynamics, Lagrangian terms and drive gearing.
"""
