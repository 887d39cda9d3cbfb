"""Everything the control cycle needs that depends on the model and the parameters, built once
per change and swapped whole (no ROS here beyond plain values)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..dynamics import link_pose
from ..errors import ParameterError
from ..feedforward import COMPENSABLE, EffortLaw, Efforts
from ..friction import Friction
from ..friction_compensation import CompensationRules
from ..model import RobotModel
from ..schema import Param, is_per_joint_value
from .parameters import INVERSE_DYNAMICS


@dataclass(frozen=True)
class Runtime:
    """A loaded model with its packed effort law and output order (swapped whole, never edited)."""

    model: RobotModel
    efforts: Efforts  # its table is the cycle's workspace
    output: np.ndarray  # model index of each output joint, in `joints` order
    output_names: list[str]
    wrench_link: str | None
    wrench_root: np.ndarray  # ee_wrench in root axes (when given in root axes)
    wrench_tip: np.ndarray | None  # ee_wrench in tip axes, rotated every cycle
    output_is_model_order: bool = False  # every model joint in model order: no reindexing

    def wrenches(self, q: np.ndarray) -> dict[str, np.ndarray] | None:
        """The end-effector wrench for rnea (root axes), or None when there is none."""
        if self.wrench_link is None:
            return None
        if self.wrench_tip is None:
            return {self.wrench_link: self.wrench_root}
        rot, _ = link_pose(self.model, q, self.wrench_link)
        return {self.wrench_link: np.concatenate([rot @ self.wrench_tip[:3], rot @ self.wrench_tip[3:]])}


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


def with_payload(base: RobotModel, params: dict) -> RobotModel:
    """The model with the payload.* parameters applied (the model itself without a payload)."""
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


def ee_wrench(
    base: RobotModel, params: dict, override: tuple[str, np.ndarray] | None = None
) -> tuple[str | None, np.ndarray, np.ndarray | None]:
    """(link, wrench in root axes, wrench in tip axes or None) from ee_wrench/ee_wrench_frame or
    an (axes, 6 values) override; link None when the wrench is zero."""
    frame, wrench = override or (params["ee_wrench_frame"], np.asarray(params["ee_wrench"], dtype=float))
    if not np.any(wrench != 0):
        return None, np.zeros(6), None
    link = _named_link(base, params, "tip_link")
    if link is None:
        raise ParameterError("ee_wrench", "set tip_link to say where the end-effector wrench acts")
    if frame == "root" or frame == base.root_link:
        return link, wrench, None
    if frame == "tip" or frame == link:
        return link, np.zeros(6), wrench
    raise ParameterError(
        "ee_wrench_frame", f"'{frame}' must be 'root', 'tip', '{base.root_link}' or '{link}'"
    )


def build_runtime(
    base: RobotModel,
    params: dict,
    wrench_override: tuple[str, np.ndarray] | None,
    previous: tuple[Runtime, dict] | None = None,
) -> Runtime:
    """Combine a parsed model with the parameters; ValueError naming the parameter at fault.

    wrench_override: (frame link or 'root', 6 values) from ~/ee_wrench, replacing ee_wrench.
    previous: the runtime this one replaces for the same model, with its parameters: the friction
    state carries over (loop period, last sample, runaway guard; the guard re-armed when a
    compensate.friction or friction.* parameter changed).
    """
    joints, output = output_joints(base, params)
    model = with_armature(with_payload(base, params), params, output)
    friction = friction_of(model, params, output)
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
    )
    wrench_link, wrench_root, wrench_tip = ee_wrench(base, params, wrench_override)
    efforts = Efforts(model, friction, law)
    if previous is not None:
        old, old_params = previous
        friction_params = [n for n in params if n.startswith(FRICTION_STATE_PARAMS)]
        same = all(old_params.get(n) == params[n] for n in friction_params)
        efforts.adopt(old.efforts, keep_guard=same)
    in_order = len(joints) == base.nv and bool(np.all(output == np.arange(base.nv)))
    return Runtime(model, efforts, output, joints, wrench_link, wrench_root, wrench_tip, in_order)
