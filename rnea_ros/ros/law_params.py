"""The effort-law parameters every node that evaluates the model shares (LAW_PARAMS: what is
compensated, gravity, friction, payload, armature, limits, the end-effector wrench) and what they
make of a model: the payload and armature applied, the friction, the compensated terms, the wrench.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from rnea_ros.control.terms import COMPENSABLE
from rnea_ros.errors import ParameterError
from rnea_ros.friction.model import SMOOTHING_VELOCITY, Friction
from rnea_ros.model.robot_model import Payload, RobotModel
from rnea_ros.ros.per_joint import JointKind, joint_values
from rnea_ros.ros.schema import Param

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
        "viscous coefficient per joint (joints order), N m s/rad; [-1]: URDF damping. The values of "
        "friction.<joint>.viscous: setting either sets the other",
        bounds=(0.0, 1e6),
        per_joint="urdf|n",
    ),
    Param(
        "friction.coulomb",
        "double_array",
        [-1.0],
        "Coulomb level per joint (joints order), N m; [-1]: URDF friction. The values of "
        "friction.<joint>.coulomb: setting either sets the other",
        bounds=(0.0, 1e6),
        per_joint="urdf|n",
    ),
    Param(
        "friction.smoothing_velocity",
        "double",
        SMOOTHING_VELOCITY,
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
        "effort_limit_scale",
        "double",
        1.0,
        "efforts are clamped to URDF effort limit x scale; above 1 only for a URDF whose limits are "
        "below what the drives are rated for (continuous instead of peak ratings): the drives' own "
        "limits still apply",
        bounds=(0.0, 2.0),
    ),
)

# The per-joint parameters of the law (rnea_ros.ros.per_joint): friction and armature.
VISCOUS = JointKind(
    "friction",
    "viscous",
    "friction.viscous",
    "viscous friction coefficient of {joint}, N m s/rad (N s/m for a prismatic joint); starts from "
    "friction.viscous (the URDF's damping by default); up to its URDF effort limit per rad/s (m/s) "
    "(friction reaching the limit at 1 rad/s)",
    per_limit=1.0,
    unlimited=1e6,
    urdf="damping",
)
COULOMB = JointKind(
    "friction",
    "coulomb",
    "friction.coulomb",
    "Coulomb friction level of {joint}, N m (N for a prismatic joint); starts from friction.coulomb "
    "(the URDF's friction by default); up to its URDF effort limit",
    per_limit=1.0,
    unlimited=1e6,
    urdf="coulomb",
)
ARMATURE = JointKind(
    "armature",
    "",
    None,
    "reflected rotor inertia of {joint} added to M's diagonal, kg m^2 (kg for a prismatic joint); "
    "up to 0.1 s^2 x its URDF effort limit (the armature alone reaching the limit at 10 rad/s^2)",
    per_limit=0.1,
    unlimited=1e4,
)
LAW_JOINT_KINDS = (VISCOUS, COULOMB, ARMATURE)


def named_link(model: RobotModel, params: Mapping, name: str) -> str | None:
    """The link parameter `name` (empty: tip_link; both empty: None); ParameterError naming
    `name` when the link is not part of the model."""
    link = params[name] or params["tip_link"] or None
    if link is not None and link not in model.link_frames:
        raise ParameterError(name, f"link '{link}' is not part of the model")
    return link


def with_payload(base: RobotModel, params: Mapping, payload: Payload | None = None) -> RobotModel:
    """The model with `payload` (a ~/payload message's, mass 0: none), else with that of the
    payload.* parameters (the model itself without a payload)."""
    if payload is not None:
        return (
            base
            if payload.mass <= 0
            else base.with_payload(payload.link, payload.mass, payload.com, payload.inertia)
        )
    link = named_link(base, params, "payload.link")
    if params["payload.mass"] <= 0:
        return base
    if link is None:
        raise ParameterError("payload.mass", "set payload.link (or tip_link) to say where the payload is")
    ixx, ixy, ixz, iyy, iyz, izz = params["payload.inertia"]
    inertia = np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]])
    try:
        return base.with_payload(link, params["payload.mass"], params["payload.com"], inertia)
    except ValueError as exc:
        raise ParameterError("payload.inertia", str(exc)) from None


def with_armature(model: RobotModel, params: Mapping, output: np.ndarray) -> RobotModel:
    """The model with the armature.<joint> parameters of the output joints on M's diagonal."""
    armature = joint_values(params, ARMATURE, model, output)
    if not armature.any():
        return model
    full = np.zeros(model.njoints)  # = nv with a fixed root
    full[output] = armature
    return model.with_armature(full)


def friction_of(model: RobotModel, params: Mapping, output: np.ndarray, scale: float = 1.0) -> Friction:
    """Friction from friction.<joint>.viscous/coulomb of the output joints (or the arrays
    friction.viscous/coulomb, in `joints` order; [-1]: URDF), the others' from the URDF, its
    coefficients multiplied by `scale`."""

    def from_joints(kind: JointKind, urdf: np.ndarray) -> np.ndarray:
        full = np.array(urdf, dtype=float)
        full[output] = joint_values(params, kind, model, output)
        return full

    return Friction(
        scale * from_joints(VISCOUS, model.damping),
        scale * from_joints(COULOMB, model.coulomb),
        params["friction.smoothing_velocity"],
    )


def compensated(params: Mapping) -> frozenset[str]:
    """The terms switched on by compensate.*."""
    return frozenset(t for t in COMPENSABLE if params[f"compensate.{t}"])


def ee_wrench(base: RobotModel, params: Mapping) -> tuple[str | None, np.ndarray, np.ndarray | None]:
    """(link, wrench in root axes, wrench in the link's axes or None) of the ee_wrench parameter
    (ee_wrench_frame: root or link axes); link None when the wrench is zero."""
    frame, wrench = params["ee_wrench_frame"], np.asarray(params["ee_wrench"], dtype=float)
    if not np.any(wrench != 0):
        return None, np.zeros(6), None
    link = named_link(base, params, "tip_link")
    if link is None:
        raise ParameterError("ee_wrench", "set tip_link to say where the end-effector wrench acts")
    if frame == "root":
        return link, wrench, None
    return link, np.zeros(6), wrench


__all__ = [
    "ARMATURE",
    "COULOMB",
    "LAW_JOINT_KINDS",
    "LAW_PARAMS",
    "VISCOUS",
    "compensated",
    "ee_wrench",
    "friction_of",
    "named_link",
    "with_armature",
    "with_payload",
]
