"""The package's public names, which `rnea_ros` re-exports (`from rnea_ros import rnea`): imported
on the first use of one of them, so that importing `rnea_ros` alone (every executable of the
package does, first) costs nothing (see rnea_ros/__init__.py)."""


from rnea_ros.algorithms.configuration import base_placement, difference, integrate, neutral
from rnea_ros.algorithms.constrained import (
    ConstrainedEfforts,
    constrained_forward_dynamics,
    constrained_inverse_dynamics,
    constraint_multipliers,
    constraint_projection,
    link_constraint,
)
from rnea_ros.algorithms.dynamics import (
    GRAVITY,
    forward_dynamics,
    gravity_torques,
    jacobian,
    link_pose,
    mass_matrix,
    nonlinear_effects,
    rnea,
)
from rnea_ros.algorithms.task_space import (
    Ellipsoid,
    IllConditionedError,
    TaskSpaceInertia,
    acceleration_ellipsoid,
    apparent_mass,
    force_ellipsoid,
    jacobian_dot_qd,
    task_space_bias,
    task_space_inertia,
    task_space_inertia_inverse,
    tip_apparent_mass,
)
from rnea_ros.compiled.entry_points import Compilation, compile_kernels
from rnea_ros.errors import RneaError, UnknownJointError, UnknownLinkError, URDFError
from rnea_ros.friction.model import Friction, friction_torques
from rnea_ros.model.data import Data
from rnea_ros.model.robot_model import RobotModel

__all__ = [
    "GRAVITY",
    "Compilation",
    "ConstrainedEfforts",
    "Data",
    "Ellipsoid",
    "Friction",
    "IllConditionedError",
    "RneaError",
    "RobotModel",
    "TaskSpaceInertia",
    "URDFError",
    "UnknownJointError",
    "UnknownLinkError",
    "acceleration_ellipsoid",
    "apparent_mass",
    "base_placement",
    "compile_kernels",
    "constrained_forward_dynamics",
    "constrained_inverse_dynamics",
    "constraint_multipliers",
    "constraint_projection",
    "difference",
    "force_ellipsoid",
    "forward_dynamics",
    "friction_torques",
    "gravity_torques",
    "integrate",
    "jacobian",
    "jacobian_dot_qd",
    "link_constraint",
    "link_pose",
    "mass_matrix",
    "neutral",
    "nonlinear_effects",
    "rnea",
    "task_space_bias",
    "task_space_inertia",
    "task_space_inertia_inverse",
    "tip_apparent_mass",
]
