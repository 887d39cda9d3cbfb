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
from rnea_ros.algorithms.contact_dynamics import contact_inverse_dynamics
from rnea_ros.algorithms.contact_qp import solve_contact_forces
from rnea_ros.algorithms.contacts import CONTACT_KINDS, Contact, ContactSolution, ContactStatus
from rnea_ros.algorithms.dynamics import (
    Wrenches,
    forward_dynamics,
    gravity_torques,
    jacobian,
    link_pose,
    mass_matrix,
    nonlinear_effects,
    raise_not_finite,
    rnea,
    wrench_arrays,
)
from rnea_ros.algorithms.gearing import (
    EFFORT_UNITS,
    Gearing,
    armature_model,
    effort_unit_factors,
    geared_inverse_dynamics,
)
from rnea_ros.algorithms.lagrangian import (
    Rotors,
    christoffel,
    coriolis_matrix,
    mass_matrix_derivative,
    mass_matrix_partials,
)
from rnea_ros.algorithms.task_space import (
    DEFAULT_RCOND,
    Ellipsoid,
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
from rnea_ros.errors import (
    BadInputError,
    ContactError,
    IllConditionedError,
    ImuLinkError,
    ParameterError,
    RneaError,
    TrajectoryInPastError,
    UnknownJointError,
    UnknownLinkError,
    URDFError,
)
from rnea_ros.friction.model import Friction, friction_torques
from rnea_ros.model.data import Data
from rnea_ros.model.robot_model import GRAVITY, ROOT_JOINTS, LinkFrame, Mimic, Payload, RobotModel

__all__ = [
    "CONTACT_KINDS",
    "DEFAULT_RCOND",
    "EFFORT_UNITS",
    "GRAVITY",
    "ROOT_JOINTS",
    "BadInputError",
    "Compilation",
    "ConstrainedEfforts",
    "Contact",
    "ContactError",
    "ContactSolution",
    "ContactStatus",
    "Data",
    "Ellipsoid",
    "Friction",
    "Gearing",
    "IllConditionedError",
    "ImuLinkError",
    "LinkFrame",
    "Mimic",
    "ParameterError",
    "Payload",
    "RneaError",
    "RobotModel",
    "Rotors",
    "TaskSpaceInertia",
    "TrajectoryInPastError",
    "URDFError",
    "UnknownJointError",
    "UnknownLinkError",
    "Wrenches",
    "acceleration_ellipsoid",
    "apparent_mass",
    "armature_model",
    "base_placement",
    "christoffel",
    "compile_kernels",
    "constrained_forward_dynamics",
    "constrained_inverse_dynamics",
    "constraint_multipliers",
    "constraint_projection",
    "contact_inverse_dynamics",
    "coriolis_matrix",
    "difference",
    "effort_unit_factors",
    "force_ellipsoid",
    "forward_dynamics",
    "friction_torques",
    "geared_inverse_dynamics",
    "gravity_torques",
    "integrate",
    "jacobian",
    "jacobian_dot_qd",
    "link_constraint",
    "link_pose",
    "mass_matrix",
    "mass_matrix_derivative",
    "mass_matrix_partials",
    "neutral",
    "nonlinear_effects",
    "raise_not_finite",
    "rnea",
    "solve_contact_forces",
    "task_space_bias",
    "task_space_inertia",
    "task_space_inertia_inverse",
    "tip_apparent_mass",
    "wrench_arrays",
]
