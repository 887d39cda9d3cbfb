"""Rigid-body algorithms on a RobotModel: inverse and forward dynamics, gravity, mass matrix,
kinematics, task space, constrained dynamics, Lagrangian terms, drive gearing and
contact-consistent inverse dynamics. Every name a module lists in `__all__` is also offered by
`rnea_ros` itself.
"""
