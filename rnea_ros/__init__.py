"""rnea_ros: real-time inverse dynamics (Recursive Newton-Euler) for ROS 2 robot arms.

The core (this package minus `rnea_ros.node` and `rnea_ros.sim`) has no ROS imports.
"""

from .dynamics import (
    GRAVITY,
    Data,
    forward_dynamics,
    gravity_torques,
    jacobian,
    link_pose,
    mass_matrix,
    nonlinear_effects,
    rnea,
)
from .errors import URDFError
from .friction import Friction, friction_torques
from .model import RobotModel

__all__ = [
    "GRAVITY",
    "Data",
    "Friction",
    "RobotModel",
    "URDFError",
    "forward_dynamics",
    "friction_torques",
    "gravity_torques",
    "jacobian",
    "link_pose",
    "mass_matrix",
    "nonlinear_effects",
    "rnea",
]
