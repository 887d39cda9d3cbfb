"""Parameter schemas of the package's nodes (`rnea_ros.ros.schema`) and their ROS declaration.

MODEL_PARAMS (where the model comes from) and LAW_PARAMS (what is compensated, friction, payload,
limits) are shared by every node that evaluates the model, so their names, defaults and rules
cannot drift apart. Every parameter is declared with dynamic typing so that `1` is accepted for
`1.0`; `rnea_ros.ros.schema.validate_value` checks and converts each value instead of rclpy. An
integer (or integer array) given for a double (or double array), in a params file or by `ros2
param set`, is stored as a double (`as_schema_types`), so `ros2 param describe` and
rqt_reconfigure keep showing the schema's type.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from rcl_interfaces.msg import FloatingPointRange, ParameterDescriptor
from rclpy.exceptions import (
    InvalidParameterTypeException,
    InvalidParameterValueException,
    ParameterUninitializedException,
)
from rclpy.node import Node
from rclpy.parameter import Parameter

from rnea_ros.algorithms.gearing import EFFORT_UNITS
from rnea_ros.control.terms import COMPENSABLE
from rnea_ros.errors import ParameterError
from rnea_ros.ros.schema import Param, did_you_mean, table, validate_value
from rnea_ros.trajectory.efforts import DEFAULT_RESAMPLE_PERIOD

MODEL_PARAMS = (
    Param("robot_description", "string", "", "URDF text; empty: listen to the robot_description topic", True),
    Param("root_link", "string", "", "root of the model (empty: the URDF's root link)", True),
    Param(
        "tip_link",
        "string",
        "",
        "tip of the chain and point of the end-effector wrench (empty: whole tree)",
        True,
    ),
    Param(
        "joints",
        "string_array",
        [""],
        "joints of the output, in order (empty: the model's movable joints)",
        True,
    ),
    Param(
        "strict_model",
        "bool",
        False,
        "refuse URDFs with physically inconsistent inertias instead of loading them with a warning",
        True,
    ),
)

LAW_PARAMS = (
    Param(
        "gravity",
        "double_array",
        [0.0, 0.0, -9.81],
        "gravity vector in the root frame, m/s^2",
        bounds=(-1000.0, 1000.0),
        length=3,
    ),
    Param(
        "ee_wrench",
        "double_array",
        [0.0] * 6,
        "wrench the tip link exerts on its environment [fx fy fz tx ty tz], N and N m",
        bounds=(-1e6, 1e6),
        length=6,
    ),
    Param(
        "ee_wrench_frame",
        "string",
        "root",
        "axes of ee_wrench and of ~/ee_wrench messages: 'root', or 'link': those of the link that "
        "exerts the wrench (tip_link for ee_wrench), moment about its origin; 'tip' is 'link' too",
        choices=("root", "link", "tip"),
    ),
    *(
        Param(f"compensate.{term}", "bool", True, f"add the {term} term to the command")
        for term in COMPENSABLE
    ),
    Param(
        "friction.viscous",
        "double_array",
        [-1.0],
        "viscous coefficient per joint (joints order), N m s/rad; [-1]: URDF damping",
        bounds=(0.0, 1e6),
        per_joint="urdf|n",
    ),
    Param(
        "friction.coulomb",
        "double_array",
        [-1.0],
        "Coulomb level per joint (joints order), N m; [-1]: URDF friction",
        bounds=(0.0, 1e6),
        per_joint="urdf|n",
    ),
    Param(
        "friction.smoothing_velocity",
        "double",
        0.01,
        "velocity of the tanh sign smoothing, rad/s",
        bounds=(1e-6, 10.0),
    ),
    Param(
        "friction.feedforward_scale",
        "double",
        1.0,
        "fraction of the model friction compensated at the desired velocity of a trajectory",
        bounds=(0.0, 1.0),
    ),
    Param("payload.mass", "double", 0.0, "payload mass on payload.link, kg", bounds=(0.0, 1000.0)),
    Param(
        "payload.com",
        "double_array",
        [0.0, 0.0, 0.0],
        "payload centre of mass in the payload.link frame, m",
        bounds=(-100.0, 100.0),
        length=3,
    ),
    Param(
        "payload.inertia",
        "double_array",
        [0.0] * 6,
        "payload inertia about its com [ixx ixy ixz iyy iyz izz], kg m^2",
        bounds=(-1e4, 1e4),
        length=6,
    ),
    Param(
        "payload.link",
        "string",
        "",
        "link carrying the payload (empty: tip_link; one of them is needed when payload.mass > 0)",
    ),
    Param(
        "armature",
        "double_array",
        [0.0],
        "reflected rotor inertia added to M's diagonal, one value or one per joint (joints order), kg m^2",
        bounds=(0.0, 1e4),
        per_joint="1|n",
    ),
    Param(
        "effort_limit_scale",
        "double",
        1.0,
        "efforts are clamped to URDF effort limit x scale",
        bounds=(0.0, 10.0),
    ),
)

# Friction compensated from the measured velocity (no trajectory): only the inverse_dynamics node
# closes that loop.
FEEDBACK_FRICTION_PARAMS = (
    Param(
        "friction.scale",
        "double",
        0.5,
        "fraction of the model friction compensated from the measured velocity (no trajectory); "
        "below 1 so that a model overestimating the friction (up to 1/scale x) cannot drive the arm",
        bounds=(0.0, 1.0),
    ),
    Param(
        "friction.deadband",
        "double",
        0.05,
        "velocity v_d of the smooth deadband 1 - exp(-(v/v_d)^2) of the measured-velocity "
        "compensation, rad/s; 0: none",
        bounds=(0.0, 10.0),
    ),
    Param(
        "friction.guard_window",
        "double",
        0.2,
        "window of the runaway guard that fades out a joint's friction term when it drives the "
        "joint, s; 0: no guard",
        bounds=(0.0, 10.0),
    ),
)

# External-torque estimation and collision detection (node/contact.py), off by default.
CONTACT_PARAMS = (
    Param("observer.enabled", "bool", False, "estimate external joint torques from the measured efforts"),
    Param(
        "observer.gain",
        "double_array",
        [50.0],
        "momentum observer gain K_O (1/time constant): one value or one per joint, rad/s",
        bounds=(0.01, 1e4),
        per_joint="1|n",
    ),
    Param(
        "observer.effort_includes_gravity",
        "bool",
        True,
        "joint_states effort is the applied torque; false: the driver reports it with the gravity "
        "torque taken out (UR-style), the model's g(q) is added back",
    ),
    Param(
        "observer.friction",
        "bool",
        True,
        "subtract the model friction (friction.*) from the measured effort",
    ),
    Param(
        "observer.wrench_link",
        "string",
        "",
        "link of ~/external_wrench (empty: tip_link; both empty: no wrench)",
    ),
    Param(
        "observer.wrench_damping",
        "double",
        1e-3,
        "damping of the least-squares wrench from the external torques (near singularities)",
        bounds=(0.0, 10.0),
    ),
    Param(
        "observer.max_gap",
        "double",
        0.1,
        "a gap between joint_states stamps longer than this restarts the observer, s",
        bounds=(1e-4, 60.0),
    ),
    Param(
        "collision.threshold",
        "double_array",
        [10.0],
        "collision when |external torque| exceeds this: one value or one per joint, N m",
        bounds=(1e-6, 1e6),
        per_joint="1|n",
    ),
    Param(
        "collision.hysteresis",
        "double",
        0.5,
        "the collision flag clears when every |external torque| is below hysteresis x threshold",
        bounds=(0.0, 1.0),
    ),
)

# Units of the efforts on the node's topics (node/effort_units.py), for drives commanded in motor
# torque or current.
EFFORT_UNIT_PARAMS = (
    Param(
        "effort_unit",
        "string_array",
        ["joint_torque"],
        "unit of ~/effort_commands, the ~/joint_efforts total and the joint_states efforts the "
        "observer reads: joint_torque (N m, N), motor_torque (tau / G) or current (tau / (G K_t), A); "
        "one value or one per joint. The effort limit x effort_limit_scale clamps the joint torque "
        "before the conversion; ~/terms/* stay in joint torque",
        choices=EFFORT_UNITS,
        per_joint="1|n",
    ),
    Param(
        "gearing.ratio",
        "double_array",
        [0.0],
        "gear ratio G (motor speed / joint speed) for effort_unit motor_torque or current, one value "
        "or one per joint; 0: not set (refused for a joint whose unit needs it)",
        bounds=(0.0, 1e6),
        per_joint="1|n",
    ),
    Param(
        "gearing.torque_constant",
        "double_array",
        [0.0],
        "motor torque constant K_t, N m/A (motor side), for effort_unit current, one value or one "
        "per joint; 0: not set (refused for a joint whose unit is current)",
        bounds=(0.0, 1e6),
        per_joint="1|n",
    ),
)

INVERSE_DYNAMICS = table(
    (
        *MODEL_PARAMS,
        *LAW_PARAMS,
        *FEEDBACK_FRICTION_PARAMS,
        Param(
            "feedback.kp",
            "double_array",
            [0.0],
            "PD stiffness on the tracking error: one value or one per joint, N m/rad",
            bounds=(0.0, 1e9),
            per_joint="1|n",
        ),
        Param(
            "feedback.kd",
            "double_array",
            [0.0],
            "PD damping on the tracking error: one value or one per joint, N m s/rad",
            bounds=(0.0, 1e9),
            per_joint="1|n",
        ),
        Param(
            "feedback.max_phase_lag",
            "double",
            0.5,
            "bound of the PD gains by the measured loop: per joint, kp x s^2 and kd x s (s <= 1) so "
            "that the PD's crossover frequency on M(q), coupling included, times (half the "
            "joint_states period + the state's age) stays below this, rad; a slow or late loop "
            "lowers the bandwidth instead of destabilising the arm; 0: gains as given",
            bounds=(0.0, 1.5),
        ),
        Param(
            "state_source",
            "string",
            "measured",
            "state the model terms are evaluated at: 'measured' or 'desired'",
            choices=("measured", "desired"),
        ),
        Param(
            "joint_states_timeout",
            "double",
            0.1,
            "joint_states (and each joint's last value) older than this, s, get no command; 0: no age check",
            bounds=(0.0, 60.0),
        ),
        Param("publish_terms", "bool", True, "publish each term on ~/terms/<term> (JointState effort)"),
        Param("diagnostics_period", "double", 1.0, "period of /diagnostics, s", True, bounds=(0.05, 60.0)),
        Param(
            "tip_apparent_mass.rate",
            "double",
            0.0,
            "rate of ~/tip_apparent_mass, Hz (needs tip_link); 0: off",
            True,
            bounds=(0.0, 100.0),
        ),
        Param(
            "tip_apparent_mass.direction",
            "double_array",
            [0.0, 0.0, 1.0],
            "direction of the apparent mass while the tip is at rest, root frame (not zero)",
            bounds=(-1e3, 1e3),
            length=3,
        ),
        Param(
            "tip_apparent_mass.rest_speed",
            "double",
            0.01,
            "tip speed below which the tip counts as at rest, m/s",
            bounds=(0.0, 10.0),
        ),
        *EFFORT_UNIT_PARAMS,
        *CONTACT_PARAMS,
    )
)


def _joints_for_trajectories() -> Param:
    base = {p.name: p for p in MODEL_PARAMS}["joints"]
    return replace(
        base,
        description="joints trajectories may move, and the order of per-joint friction values (empty: "
        "the model's movable joints)",
    )


TRAJECTORY_FEEDFORWARD = table(
    (
        *(_joints_for_trajectories() if p.name == "joints" else p for p in MODEL_PARAMS),
        *LAW_PARAMS,
        Param(
            "resample_period",
            "double",
            DEFAULT_RESAMPLE_PERIOD,
            "time between the output points, s (JTC interpolates the efforts linearly between them)",
            bounds=(0.0005, 1.0),
        ),
        Param(
            "on_limit",
            "string",
            "slow_down",
            "a trajectory beyond the effort or velocity limits: 'slow_down' (smallest uniform time "
            "stretch k >= 1), 'reject' (nothing goes out) or 'time_optimal' (TOPP-RA re-timing, needs "
            "the toppra package)",
            choices=("slow_down", "reject", "time_optimal"),
        ),
        Param("diagnostics_period", "double", 1.0, "period of /diagnostics, s", True, bounds=(0.05, 60.0)),
    )
)


# Parameters rclpy itself declares or reads; not reported as unknown.
ROS_PARAMS = ("use_sim_time", "start_type_description_service", "qos_overrides.")


def _descriptor(param: Param) -> ParameterDescriptor:
    descriptor = ParameterDescriptor(
        name=param.name, description=param.doc(), read_only=param.read_only, dynamic_typing=True
    )
    if param.type == "double" and param.bounds is not None:
        low, high = param.bounds
        descriptor.floating_point_range = [FloatingPointRange(from_value=low, to_value=high, step=0.0)]
    return descriptor


def _as_schema_type(param: Param | None, p: Parameter) -> Parameter:
    """`p` with an integer value turned into the double (array) `param` declares; else `p`."""
    if param is None:
        return p
    if param.type == "double" and p.type_ == Parameter.Type.INTEGER:
        return Parameter(p.name, Parameter.Type.DOUBLE, float(p.value))
    if param.type == "double_array" and p.type_ == Parameter.Type.INTEGER_ARRAY:
        return Parameter(p.name, Parameter.Type.DOUBLE_ARRAY, [float(x) for x in p.value])
    return p


def as_schema_types(schema: dict[str, Param]) -> Callable[[list[Parameter]], list[Parameter]]:
    """A pre-set parameters callback (`Node.add_pre_set_parameters_callback`) that stores integers
    given for doubles as doubles; every other parameter passes unchanged."""

    def convert(params: list[Parameter]) -> list[Parameter]:
        return [_as_schema_type(schema.get(p.name), p) for p in params]

    return convert


def declare(
    node: Node, schema: dict[str, Param], later: tuple[str, ...] = (), report_unknown: bool = True
) -> dict[str, Any]:
    """Declare every parameter of `schema` and return their validated start-up values.

    Raises ParameterError naming the first invalid value (the caller ends start-up with it), and
    logs a warning for every override addressed to this node that is not a parameter, with the
    closest known name; names starting with a prefix in `later` are declared later (per joint,
    once the model is known) and not reported (`report_unknown=False`: nothing is).
    """
    values = {}
    overrides = getattr(node, "_parameter_overrides", {})
    for name, param in schema.items():
        # the start-up value (a params file, -p): pre-set callbacks do not see declarations
        start = param.default
        if name in overrides:
            start = _as_schema_type(param, overrides[name]).value
            if start is not None:  # the schema's message before rclpy's own range check
                validate_value(param, start if isinstance(start, (str, bool, int, float)) else list(start))
        try:
            value = node.declare_parameter(name, start, _descriptor(param), ignore_override=True).value
        except (
            InvalidParameterTypeException,
            InvalidParameterValueException,
            ParameterUninitializedException,
        ) as exc:
            raise ParameterError(name, str(exc)) from None
        values[name] = validate_value(param, value)
    for name in sorted(overrides if report_unknown else {}):
        if name not in schema and not name.startswith(ROS_PARAMS + tuple(later)):
            node.get_logger().warn(f"unknown parameter '{name}' ignored{did_you_mean(name, schema)}")
    return values


def proposed(
    schema: dict[str, Param], current: dict[str, Any], params: list[Parameter], n_joints: int | None
):
    """`current` with the proposed parameters applied and validated; ParameterError naming the
    first invalid one. An unset parameter (type NOT_SET) is invalid."""
    new = dict(current)
    for p in params:
        param = schema.get(p.name)
        if param is None:
            continue  # not ours (use_sim_time and the like): rclpy handles it
        if p.type_ == Parameter.Type.NOT_SET or p.value is None:
            raise ParameterError(p.name, "cannot be unset")
        value = p.value if isinstance(p.value, (str, bool, int, float)) else list(p.value)
        new[p.name] = validate_value(param, value, n_joints)
    return new


__all__ = [
    "INVERSE_DYNAMICS",
    "LAW_PARAMS",
    "MODEL_PARAMS",
    "TRAJECTORY_FEEDFORWARD",
    "as_schema_types",
    "declare",
    "proposed",
]
