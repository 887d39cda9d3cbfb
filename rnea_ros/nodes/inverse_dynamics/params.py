"""The inverse_dynamics node's parameter schema (`rnea_ros.ros.schema`), as data: the shared
model-source and effort-law parameters (rnea_ros.ros.model_source, rnea_ros.ros.law_params) and
the node's own: feedback friction, PD feedback, state source, timing, tip apparent mass, effort
units, the observer and collision detection, payload estimation.
"""

from __future__ import annotations

from rnea_ros.algorithms.gearing import EFFORT_UNITS
from rnea_ros.ros.law_params import LAW_JOINT_KINDS, LAW_PARAMS
from rnea_ros.ros.model_source import MODEL_PARAMS
from rnea_ros.ros.per_joint import JointKind
from rnea_ros.ros.schema import Param, table

# Gravity that follows a moving or tilted base from ~/imu (imu_gravity.py). These were lost when
# the schema moved here from ros/parameters.py; the node, its config file and its tests use them.
IMU_PARAMS = (
    Param(
        "gravity_source",
        "string",
        "parameter",
        "where the root-frame gravity comes from: 'parameter' (gravity), 'imu_orientation' (~/imu "
        "orientation, |gravity| down the world z axis) or 'imu_acceleration' (~/imu specific force: "
        "gravity minus the base's acceleration, low-passed)",
        choices=("parameter", "imu_orientation", "imu_acceleration"),
    ),
    Param(
        "imu.cutoff_frequency",
        "double",
        5.0,
        "cut-off of the first-order low-pass on the imu_acceleration gravity, Hz; 0: unfiltered",
        bounds=(0.0, 1000.0),
    ),
    Param(
        "imu.timeout",
        "double",
        0.1,
        "with an imu gravity_source (or base.source using ~/imu), ~/imu older than this (or stamped "
        "this far ahead), s, is dropped and no command goes out until a fresh one; 0: no age check",
        bounds=(0.0, 60.0),
    ),
)

# A floating or planar base (docs/floating_base_node.md): the root joint, the base state from
# ~/odometry and ~/imu, the contacts (base_state.py, contacts.py).
FLOATING_PARAMS = (
    Param(
        "root_joint",
        "string",
        "fixed",
        "root joint of the model: 'fixed' (the root link welded to the world), 'floating' (a free "
        "flyer: base pose and twist from ~/odometry or ~/imu, efforts from contact-consistent "
        "inverse dynamics over contacts.*) or 'planar' (x, y, yaw)",
        True,
        choices=("fixed", "floating", "planar"),
    ),
    Param(
        "base.source",
        "string",
        "odometry",
        "where the floating base's state comes from: 'odometry' (~/odometry, nav_msgs/Odometry: pose "
        "of child_frame_id = the root link in header.frame_id, twist in child_frame_id, REP 105), "
        "'odometry_imu' (position and linear velocity from ~/odometry, orientation and angular "
        "velocity from ~/imu) or 'imu' (~/imu's orientation and angular velocity; the base's "
        "position and linear velocity taken as zero: a robot standing in place)",
        choices=("odometry", "odometry_imu", "imu"),
    ),
    Param(
        "odometry.timeout",
        "double",
        0.1,
        "with a floating root, ~/odometry older than this (or stamped this far ahead), s, is dropped "
        "and no command goes out until a fresh one; 0: no age check",
        bounds=(0.0, 60.0),
    ),
    Param(
        "contacts.links",
        "string_array",
        [""],
        'links in contact with the environment (floating root); [""]: none. ~/contact_state '
        "(std_msgs/UInt8MultiArray) masks them, in this order",
    ),
    Param(
        "contacts.types",
        "string_array",
        ["point"],
        "contact type: 'point' (a force at the link origin) or '6d' (a wrench, e.g. a sole); one "
        "value or one per link of contacts.links",
        choices=("point", "6d"),
    ),
    Param(
        "contacts.friction",
        "double_array",
        [0.7],
        "Coulomb friction coefficient mu (> 0): one value or one per link of contacts.links",
        bounds=(1e-3, 100.0),
    ),
    Param(
        "contacts.half_extents",
        "double_array",
        [0.0, 0.0],
        "half sizes (X, Y) of a 6d contact's rectangle along its link's x and y axes, m: one pair for "
        "every 6d contact or one pair per link of contacts.links; 0 0: moment unbounded (clamped)",
        bounds=(0.0, 10.0),
    ),
    Param(
        "contacts.normal",
        "double_array",
        [0.0, 0.0, 1.0],
        "contact normal into the robot, world axes (header.frame_id of ~/odometry), not zero",
        bounds=(-1.0, 1.0),
        length=3,
    ),
    Param(
        "contacts.min_normal_force",
        "double",
        1.0,
        "least normal force of every active contact, N",
        bounds=(0.0, 1e6),
    ),
    Param(
        "contacts.marker_scale",
        "double",
        0.002,
        "length of the ~/contact_markers arrows per newton of contact force, m/N",
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

# Online payload estimation from the observer's external torques (payload_estimation.py), off by
# default; the estimate is the model's payload, like payload.* and ~/payload.
PAYLOAD_ESTIMATION_PARAMS = (
    Param(
        "payload.estimation",
        "string",
        "off",
        "estimate the load on payload.link (empty: tip_link) from the external torques (needs "
        "observer.enabled): 'off', 'on_request' (the ~/estimate_payload service) or 'auto' (also when "
        "the collision flag stays up for payload.trigger_hold); the estimate replaces the payload",
        choices=("off", "on_request", "auto"),
    ),
    Param(
        "payload.estimation_window",
        "double",
        0.5,
        "seconds of data an estimate needs: the service's last ones; in auto the least after the hold",
        bounds=(0.02, 60.0),
    ),
    Param(
        "payload.estimation_max_window",
        "double",
        3.0,
        "auto: the longest collection, s, while the rotation is too small for the centre of mass; and "
        "the data a load's estimate is refined from (doubling) while it is held",
        bounds=(0.02, 600.0),
    ),
    Param(
        "payload.trigger_hold",
        "double",
        0.15,
        "auto: how long the collision flag must stay up before an estimation starts, s (shorter: a "
        "collision, ignored)",
        bounds=(0.0, 60.0),
    ),
    Param(
        "payload.blend_time",
        "double",
        0.3,
        "an estimate goes into the model linearly over this time (steps of 5 ms), s; 0: at once",
        bounds=(0.0, 60.0),
    ),
    Param(
        "payload.min_mass",
        "double",
        0.1,
        "an estimate below this is no payload (removed); one below minus this is refused, kg",
        bounds=(0.0, 1000.0),
    ),
    Param(
        "payload.max_com_distance",
        "double",
        0.5,
        "an estimate whose centre of mass is farther from the link origin is refused, m",
        bounds=(0.0, 100.0),
    ),
    Param(
        "payload.min_rotation",
        "double",
        0.02,
        "least RMS turn of the load's apparent gravity in the link frame over the window (else the "
        "centre of mass along it is unknown: refused), rad",
        bounds=(0.0, 3.2),
    ),
    Param(
        "payload.max_mismatch",
        "double",
        0.2,
        "an estimate whose residual exceeds this fraction of the external torques is refused (no "
        "rigid load explains them: a contact)",
        bounds=(0.0, 10.0),
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

# The per-joint parameters (rnea_ros.ros.per_joint): the PD gains, friction and armature.
KP = JointKind(
    "feedback",
    "kp",
    "feedback.kp",
    "PD stiffness of {joint} on its tracking error, N m/rad (N/m for a prismatic joint); up to 100 x "
    "its URDF effort limit (the PD alone reaching the limit at a 10 mrad or 10 mm error)",
    per_limit=100.0,
    unlimited=1e9,
)
KD = JointKind(
    "feedback",
    "kd",
    "feedback.kd",
    "PD damping of {joint} on its velocity error, N m s/rad (N s/m for a prismatic joint); up to 10 x "
    "its URDF effort limit (reaching the limit at a 0.1 rad/s or 0.1 m/s error)",
    per_limit=10.0,
    unlimited=1e9,
)
JOINT_KINDS = (KP, KD, *LAW_JOINT_KINDS)

INVERSE_DYNAMICS = table(
    (
        *MODEL_PARAMS,
        *LAW_PARAMS,
        *IMU_PARAMS,
        *FEEDBACK_FRICTION_PARAMS,
        Param(
            "feedback.kp",
            "double_array",
            [0.0],
            "PD stiffness on the tracking error: one value or one per joint, N m/rad. The values of "
            "feedback.<joint>.kp: setting either sets the other",
            bounds=(0.0, 1e9),
            per_joint="1|n",
        ),
        Param(
            "feedback.kd",
            "double_array",
            [0.0],
            "PD damping on the tracking error: one value or one per joint, N m s/rad. The values of "
            "feedback.<joint>.kd: setting either sets the other",
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
        *PAYLOAD_ESTIMATION_PARAMS,
        *FLOATING_PARAMS,
    )
)

__all__ = [
    "CONTACT_PARAMS",
    "EFFORT_UNIT_PARAMS",
    "FEEDBACK_FRICTION_PARAMS",
    "FLOATING_PARAMS",
    "IMU_PARAMS",
    "INVERSE_DYNAMICS",
    "JOINT_KINDS",
    "KD",
    "KP",
    "PAYLOAD_ESTIMATION_PARAMS",
]
