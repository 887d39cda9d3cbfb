"""The robot model: URDF parsing and writing back, RobotModel (immutable), Data (caller-owned
workspace) and the example robots.
"""
