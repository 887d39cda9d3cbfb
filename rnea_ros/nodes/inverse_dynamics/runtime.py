"""Everything the control cycle needs that depends on the model and the parameters, built once
per change and swapped whole (no ROS here beyond plain values)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rnea_ros.algorithms.dynamics import link_pose
from rnea_ros.control.effort_law import EffortLaw, Efforts
from rnea_ros.control.terms import COMPENSABLE
from rnea_ros.errors import ParameterError
from rnea_ros.friction.compensation import CompensationRules
from rnea_ros.friction.model import Friction
from rnea_ros.model.robot_model import RobotModel
from rnea_ros.nodes.inverse_dynamics.effort_units import EffortUnits, effort_units
from rnea_ros.nodes.inverse_dynamics.overrides import NONE, Overrides
from rnea_ros.ros.parameters import INVERSE_DYNAMICS
from rnea_ros.ros.schema import Param, is_per_joint_value


@dataclass(frozen=True)
class Runtime:
    """A loaded model with its packed effort law and output order (swapped whole, never edited)."""

    model: RobotModel
    efforts: Efforts  # its table is the cycle's workspace
    output: np.ndarray  # model index of each output joint, in `joints` order
    output_names: list[str]
    wrench_root: dict[str, np.ndarray] | None  # link → wrench in root axes (constant); None: none
    wrench_local: tuple[tuple[str, np.ndarray], ...]  # (link, wrench in its own axes), rotated every cycle
    output_is_model_order: bool = False  # every model joint in model order: no reindexing
    overrides: Overrides = NONE  # the ~/ee_wrench and ~/payload messages in force
    payload_source: str = "parameters"  # where model.payload comes from: 'parameters' or 'topic'
    units: EffortUnits | None = None  # effort_unit of the output joints (None: all joint torque)

    def wrenches(self, q: np.ndarray) -> dict[str, np.ndarray] | None:
        """The wrenches of this cycle (root axes) for `compute_efforts`: None when only the
        law's constant ones (wrench_root) act."""
        if not self.wrench_local:
            return None
        out = dict(self.wrench_root or {})
        for link, local in self.wrench_local:
            rot, _ = link_pose(self.model, q, link)
            out[link] = np.concatenate([rot @ local[:3], rot @ local[3:]])
        return out

    @property
    def wrench_links(self) -> list[str]:
        """Links that exert a wrench now."""
        return sorted({*(self.wrench_root or {}), *(link for link, _ in self.wrench_local)})


def _named_link(model: RobotModel, params: dict, name: str) -> str | None:
    link = params[name] or params["tip_link"] or None
    if link is not None and link not in model.link_frames:
        raise ParameterError(name, f"link '{link}' is not part of the model")
    return link


def per_joint_parameters_fit(
    params: dict, old_joints: list[str], new_joints: list[str], schema: dict[str, Param] = INVERSE_DYNAMICS
) -> None:
    """Per-joint values were given for `old_joints`; refuse (ParameterError naming the parameter)
    a model whose output joints differ, rather than apply a value to another joint."""
    if old_joints == new_joints:
        return
    for name, param in schema.items():
        if name in params and is_per_joint_value(param, params[name]):
            raise ParameterError(
                name,
                f"has one value per joint for [{', '.join(old_joints)}], but the new model's joints are "
                f"[{', '.join(new_joints)}]: set {name} to a value that does not depend on the joints "
                "first (or restart with values for the new joints)",
            )


FRICTION_STATE_PARAMS = ("compensate.friction", "friction.")  # a change re-arms the runaway guard


def output_joints(base: RobotModel, params: dict) -> tuple[list[str], np.ndarray]:
    """The `joints` parameter checked against the model (empty: every movable joint) and their
    model indices; ParameterError naming `joints`."""
    joints = [j for j in params["joints"] if j] or list(base.joint_names)
    for j in joints:
        if j not in base.joint_names:
            raise ParameterError("joints", f"'{j}' is not a movable joint of the model")
    if len(set(joints)) != len(joints):
        raise ParameterError("joints", "lists a joint twice")
    return joints, np.array([base.joint_index(j) for j in joints], dtype=np.int64)


def with_payload(base: RobotModel, params: dict, overrides: Overrides = NONE) -> RobotModel:
    """The model with the payload of a ~/payload message, else of the payload.* parameters (the
    model itself without a payload)."""
    if overrides.payload is not None:
        p = overrides.payload
        return base if p.mass <= 0 else base.with_payload(p.link, p.mass, p.com, p.inertia)
    link = _named_link(base, params, "payload.link")
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


def with_armature(model: RobotModel, params: dict, output: np.ndarray) -> RobotModel:
    """The model with the armature parameter (one value or one per joint of `joints`) on M's diagonal."""
    armature = np.asarray(params["armature"], dtype=float)
    if not armature.any():
        return model
    if armature.size not in (1, output.size):
        raise ParameterError("armature", f"must have 1 or {output.size} values")
    full = np.zeros(model.nv)
    full[output] = armature
    return model.with_armature(full)


def friction_of(model: RobotModel, params: dict, output: np.ndarray, scale: float = 1.0) -> Friction:
    """Friction from friction.* (values per joint of `joints`, i.e. at `output`; [-1]: URDF),
    its coefficients multiplied by `scale`."""

    def from_joints(name: str, urdf: np.ndarray) -> np.ndarray:
        value = np.asarray(params[name], dtype=float)
        if value.tolist() == [-1.0]:
            return urdf
        if value.size != output.size:
            raise ParameterError(name, f"must have {output.size} values (one per joint of 'joints')")
        full = urdf.copy()
        full[output] = value
        return full

    return Friction(
        scale * from_joints("friction.viscous", model.damping),
        scale * from_joints("friction.coulomb", model.coulomb),
        params["friction.smoothing_velocity"],
    )


def compensated(params: dict) -> frozenset[str]:
    """The terms switched on by compensate.*."""
    return frozenset(t for t in COMPENSABLE if params[f"compensate.{t}"])


def ee_wrench(base: RobotModel, params: dict) -> tuple[str | None, np.ndarray, np.ndarray | None]:
    """(link, wrench in root axes, wrench in the link's axes or None) of the ee_wrench parameter
    (ee_wrench_frame: root or link axes); link None when the wrench is zero."""
    frame, wrench = params["ee_wrench_frame"], np.asarray(params["ee_wrench"], dtype=float)
    if not np.any(wrench != 0):
        return None, np.zeros(6), None
    link = _named_link(base, params, "tip_link")
    if link is None:
        raise ParameterError("ee_wrench", "set tip_link to say where the end-effector wrench acts")
    if frame == "root":
        return link, wrench, None
    return link, np.zeros(6), wrench


def link_wrenches(
    base: RobotModel, params: dict, overrides: Overrides
) -> tuple[dict[str, np.ndarray] | None, tuple[tuple[str, np.ndarray], ...]]:
    """(root-axes wrenches by link or None, link-axes wrenches) of the ee_wrench parameter and
    the ~/ee_wrench messages: a message on the tip link replaces the parameter; zero ones clear."""
    root: dict[str, np.ndarray] = {}
    local: list[tuple[str, np.ndarray]] = []
    tip = params["tip_link"] or None
    if tip not in overrides.wrenches:
        link, in_root, in_link = ee_wrench(base, params)
        if link is not None:
            if in_link is None:
                root[link] = in_root
            else:
                local.append((link, in_link))
    for link, wrench in overrides.wrenches.items():
        if wrench.is_zero:
            continue
        if wrench.axes == "root":
            root[link] = wrench.values
        else:
            local.append((link, wrench.values))
    return root or None, tuple(local)


def build_runtime(
    base: RobotModel,
    params: dict,
    overrides: Overrides | None = None,
    previous: tuple[Runtime, dict] | None = None,
) -> Runtime:
    """Combine a parsed model with the parameters; ValueError naming the parameter at fault.

    overrides: what ~/ee_wrench and ~/payload messages set (None: nothing).
    previous: the runtime this one replaces for the same model, with its parameters: the friction
    state carries over (loop period, last sample, runaway guard; the guard re-armed when a
    compensate.friction or friction.* parameter changed).
    """
    joints, output = output_joints(base, params)
    overrides = overrides or NONE
    model = with_armature(with_payload(base, params, overrides), params, output)
    wrench_root, wrench_local = link_wrenches(base, params, overrides)
    gains = {}
    for name in ("feedback.kp", "feedback.kd"):
        value = np.asarray(params[name], dtype=float).reshape(-1)
        if value.size not in (1, len(joints)):
            raise ParameterError(name, f"must have 1 or {len(joints)} values")
        full = np.zeros(base.nv)
        full[output] = value
        gains[name] = full
    law = EffortLaw(
        gravity=tuple(float(g) for g in params["gravity"]),
        compensate=compensated(params),
        kp=gains["feedback.kp"],
        kd=gains["feedback.kd"],
        use_desired_state=params["state_source"] == "desired",
        effort_limit_scale=params["effort_limit_scale"],
        friction_rules=CompensationRules(
            params["friction.scale"], params["friction.feedforward_scale"], params["friction.deadband"]
        ),
        guard_window=params["friction.guard_window"],
        max_phase_lag=params["feedback.max_phase_lag"],
        friction=friction_of(model, params, output),
        wrenches=wrench_root,
    )
    efforts = Efforts(model, law)
    if previous is not None:
        old, old_params = previous
        friction_params = [n for n in params if n.startswith(FRICTION_STATE_PARAMS)]
        same = all(old_params.get(n) == params[n] for n in friction_params)
        efforts.adopt(old.efforts, keep_guard=same)
    in_order = len(joints) == base.nv and bool(np.all(output == np.arange(base.nv)))
    source = "topic" if overrides.payload is not None else "parameters"
    units = effort_units(params, joints, output, base.nv)
    return Runtime(
        model, efforts, output, joints, wrench_root, wrench_local, in_order, overrides, source, units
    )
