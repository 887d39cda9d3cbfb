"""Per-joint parameters in joint_trajectory_controller's style (its `gains.<joint>.p`): what users
tune per joint, one double with a range each, so that rqt_reconfigure shows one slider per joint:

    feedback.<joint>.kp, feedback.<joint>.kd                        inverse_dynamics
    friction.<joint>.viscous, friction.<joint>.coulomb, armature.<joint>   both model nodes

Declared once the model is known, for the output joints (`joints`); a new model re-declares them
(the old joints' undeclared, the new ones' declared). Each range follows the joint's URDF effort
limit (`JointKind.upper`), and always holds the value the parameter starts from.

The arrays feedback.kp/kd and friction.viscous/coulomb stay, as a second view of the same values
and never a second source: setting an array sets every joint's parameter (one value: all joints;
friction's [-1]: each joint's URDF value), and setting a joint's parameter rewrites the array (one
value per joint of `joints`), in the same atomic change (`mirrored`, a pre-set parameters
callback, adds the other view), so `ros2 param get` of either never disagrees with the other. At
start-up a joint's parameter given in a params file or by `-p` wins over the array for that joint,
and the array then shows the merged values. `armature` has no array any more: a params file cannot
hold both `armature: [...]` and `armature: {<joint>: ...}`, and `ros2 param dump` fails on the pair.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from rclpy.node import Node
from rclpy.parameter import Parameter

from rnea_ros.errors import ParameterError
from rnea_ros.model.robot_model import RobotModel
from rnea_ros.ros.parameters import as_schema_types, descriptor
from rnea_ros.ros.schema import URDF_DEFAULT, Param, did_you_mean, validate_value

# Parameters that became per-joint ones, with how to write them now (start-up refuses the old).
MOVED = {
    "armature": "is one parameter per joint now: armature.<joint> (in a params file "
    "`armature: {panda_joint1: 0.1, panda_joint2: 0.1}`; with -p `armature.panda_joint1:=0.1`)",
}


@dataclass(frozen=True)
class JointKind:
    """One per-joint parameter: `<prefix>.<joint>.<suffix>` (`<prefix>.<joint>` without suffix).

    array: the array parameter showing the same values (None: none); urdf: the RobotModel field
    that the array's [-1] stands for; default: the value without an array. The range is
    [0, per_limit x the joint's URDF effort limit] (`unlimited` for a joint without one), widened
    to the value the parameter starts from."""

    prefix: str
    suffix: str
    array: str | None
    description: str  # "{joint}" is replaced
    per_limit: float
    unlimited: float
    urdf: str | None = None
    default: float = 0.0

    def name(self, joint: str) -> str:
        return f"{self.prefix}.{joint}.{self.suffix}" if self.suffix else f"{self.prefix}.{joint}"

    def joint_of(self, name: str) -> str | None:
        """The joint a parameter name of this kind names, or None."""
        head = self.prefix + "."
        tail = "." + self.suffix if self.suffix else ""
        if not name.startswith(head) or not name.endswith(tail) or len(name) <= len(head) + len(tail):
            return None
        joint = name[len(head) : len(name) - len(tail)]
        return joint if joint and (tail or "." not in joint) else None

    def upper(self, effort_limit: float, value: float) -> float:
        bound = self.per_limit * effort_limit if math.isfinite(effort_limit) else self.unlimited
        return max(float(f"{bound:.6g}"), value)  # 8.7, not 8.700000000000001, on the slider

    def param(self, joint: str, effort_limit: float, value: float) -> Param:
        return Param(
            self.name(joint),
            "double",
            value,
            self.description.format(joint=joint),
            bounds=(0.0, self.upper(effort_limit, value)),
        )


def output_names(model: RobotModel, output: np.ndarray) -> list[str]:
    return [model.joint_names[int(i)] for i in output]


def expand(kind: JointKind, params: Mapping[str, Any], model: RobotModel, output: np.ndarray) -> list[float]:
    """The per-joint values `kind`'s array gives the output joints (kind.default without an
    array); ParameterError naming the array when its length fits neither 1 nor the joints."""
    n = len(output)
    if kind.array is None:
        return [kind.default] * n
    value = [float(x) for x in params[kind.array]]
    if kind.urdf is not None:
        if value == URDF_DEFAULT:
            return [float(x) for x in np.asarray(getattr(model, kind.urdf))[output]]
        if len(value) != n:
            raise ParameterError(kind.array, f"must have {n} values (one per joint of 'joints') or be [-1]")
        return value
    if len(value) not in (1, n):
        raise ParameterError(kind.array, f"must have 1 or {n} values")
    return value * n if len(value) == 1 else value


def joint_values(
    params: Mapping[str, Any], kind: JointKind, model: RobotModel, output: np.ndarray
) -> np.ndarray:
    """The value of each output joint: its per-joint parameter where `params` has it, else what
    the array gives it (`expand`)."""
    names = [kind.name(j) for j in output_names(model, output)]
    if all(name in params for name in names):
        return np.array([float(params[name]) for name in names])
    base = expand(kind, params, model, output)
    return np.array([float(params.get(name, b)) for name, b in zip(names, base, strict=True)])


def markdown_rows(kinds: tuple[JointKind, ...]) -> list[str]:
    """Rows of the docs' parameter table for per-joint parameters (rnea_ros.ros.schema.markdown_table)."""
    rows = []
    for kind in kinds:
        start = f"`{kind.array}`'s" if kind.array else f"`{kind.default}`"
        what = kind.description.format(joint="the joint")
        rows.append(
            f"| `{kind.name('<joint>')}` | {start} | {what}; the range always holds the start value. One "
            "per output joint, declared once the model is known |"
        )
    return rows


def is_joint_parameter(kinds: tuple[JointKind, ...], name: str) -> bool:
    """Whether `name` has the shape of a per-joint parameter (whatever the joint)."""
    return any(kind.joint_of(name) is not None for kind in kinds)


class JointParameters:
    """A node's per-joint parameters: their values for a model (`for_model`), their declaration
    (`declare`), the mirrored array (`mirrored`) and their schema (`schema`)."""

    def __init__(self, node: Node, kinds: tuple[JointKind, ...], schema: Mapping[str, Param]) -> None:
        self._node = node
        self.kinds = kinds
        self._base = schema
        self.declared: dict[str, Param] = {}  # per-joint name → its Param (this model's range)
        self._kind_of: dict[str, tuple[JointKind, str]] = {}  # per-joint name → (kind, joint)
        self._pending: dict[str, Param] = {}  # for_model's, declared by `declare`
        self._seen: set[str] = set()  # names declared once: start-up values apply before that only
        self._model: tuple[RobotModel, np.ndarray] | None = None
        self.syncing = False  # the node's own declarations and sets: no mirror, no rebuild
        overrides = self._overrides()
        for name, how in MOVED.items():
            if name in overrides and name not in schema:
                raise ParameterError(name, how)

    def _overrides(self) -> dict[str, Parameter]:
        return dict(getattr(self._node, "_parameter_overrides", {}))

    def schema(self) -> dict[str, Param]:
        """The node's schema with the declared per-joint parameters."""
        return {**self._base, **self.declared}

    def for_model(self, params: Mapping[str, Any], model: RobotModel, output: np.ndarray) -> dict[str, Any]:
        """`params` for a (new) model: every per-joint value of its output joints (a start-up
        value of a joint never declared before wins over its array, which then shows it; an
        armature keeps its value by joint name), the other joints' dropped; ParameterError
        naming a value out of its range or a joint name that collides with a parameter."""
        joints = output_names(model, output)
        overrides = self._overrides()
        new = {k: v for k, v in params.items() if not is_joint_parameter(self.kinds, k) or k in self._base}
        pending: dict[str, Param] = {}
        for kind in self.kinds:
            base = expand(kind, params, model, output)
            values = []
            for k, joint in enumerate(joints):
                name = kind.name(joint)
                if f"{kind.prefix}.{joint}" in self._base or name in self._base:
                    raise ParameterError(name, f"joint '{joint}' has the name of a parameter: rename it")
                value = base[k] if kind.array is not None else float(params.get(name, base[k]))
                limit = float(model.effort_limit[int(output[k])])
                param = kind.param(joint, limit, value)
                if name not in self._seen and name in overrides and overrides[name].value is not None:
                    value = validate_value(param, overrides[name].value)
                pending[name] = param
                new[name] = value
                values.append(value)
            if kind.array is not None and values != base:  # start-up values: the array shows them
                new[kind.array] = values
        self._pending = pending
        self._model = (model, output)
        return new

    def declare(self, params: Mapping[str, Any]) -> list[str]:
        """Declare `for_model`'s parameters (values from `params`, the node's), undeclare the old
        joints', set the arrays `for_model` rewrote; the names of unknown per-joint start-up
        parameters are returned (the caller warns)."""
        node = self._node
        self.syncing = True
        try:
            for name in [n for n in self.declared if n not in self._pending]:
                if node.has_parameter(name):
                    node.undeclare_parameter(name)
            changed = []
            for name, param in self._pending.items():
                new = Parameter(name, Parameter.Type.DOUBLE, float(params[name]))
                if node.has_parameter(name):  # this model's range (the value set below if it moved)
                    node.set_descriptor(name, descriptor(param), new.get_parameter_value())
                    if node.get_parameter(name).value != new.value:
                        changed.append(new)
                else:
                    node.declare_parameter(name, new.value, descriptor(param), ignore_override=True)
            for array in (kind.array for kind in self.kinds if kind.array is not None):
                values = [float(x) for x in params[array]]
                if list(node.get_parameter(array).value) != values:
                    changed.append(Parameter(array, Parameter.Type.DOUBLE_ARRAY, values))
            if changed:
                node.set_parameters(changed)
        finally:
            self.syncing = False
        self.declared = dict(self._pending)
        assert self._model is not None  # set by for_model with _pending
        joints = output_names(*self._model)
        self._kind_of = {kind.name(j): (kind, j) for kind in self.kinds for j in joints}
        self._seen |= set(self.declared)
        return sorted(
            n for n in self._overrides() if is_joint_parameter(self.kinds, n) and n not in self.declared
        )

    def unknown_text(self, name: str) -> str:
        joints = sorted({j for _, j in self._kind_of.values()})
        return (
            f"unknown parameter '{name}' ignored: the model's joints are {', '.join(joints)}"
            f"{did_you_mean(name, self.declared)}"
        )

    def mirrored(self, params: list[Parameter], current: Mapping[str, Any]) -> list[Parameter]:
        """A pre-set callback's list: `params` with the other view of every per-joint value they
        change added (module docstring): a joint's parameter set in the same list as its array
        wins over the array's entry."""
        if self.syncing or self._model is None or not self.declared:
            return params
        model, output = self._model
        joints = output_names(model, output)
        given = {p.name: p for p in params}
        out = list(params)
        for kind in self.kinds:
            if kind.array is None:
                continue
            names = [kind.name(j) for j in joints]
            explicit = {n: given[n].value for n in names if n in given}
            array = given.get(kind.array)
            if array is None and not explicit:
                continue
            if array is not None:
                try:
                    value = [float(x) for x in array.value]
                    base = expand(kind, {kind.array: value}, model, output)
                except (TypeError, ValueError):
                    continue  # not a list of numbers: the node's validation refuses it, naming it
                if not all(0.0 <= x < math.inf for x in base):  # ([-1]: the URDF's, expanded)
                    continue  # below every joint's range: refused by the validation, naming the array
                for name, b in zip(names, base, strict=True):
                    if name not in given:
                        out.append(Parameter(name, Parameter.Type.DOUBLE, b))
                if explicit:  # the joints' own values win: the array shows them
                    out = [p for p in out if p.name != kind.array]
                    merged = [float(explicit.get(n, b)) for n, b in zip(names, base, strict=True)]
                    out.append(Parameter(kind.array, Parameter.Type.DOUBLE_ARRAY, merged))
                continue
            try:
                merged = [float(explicit[n]) if n in explicit else float(current[n]) for n in names]
            except (TypeError, ValueError, KeyError):
                continue  # a value that is no number: refused by the validation, naming it
            out.append(Parameter(kind.array, Parameter.Type.DOUBLE_ARRAY, merged))
        return out


def pre_set(
    joints: JointParameters, current: Callable[[], Mapping[str, Any]]
) -> Callable[[list[Parameter]], list[Parameter]]:
    """The node's one pre-set parameters callback (rclpy concatenates the lists of several): the
    schema's types (`as_schema_types`, per-joint parameters included), then the per-joint mirror
    against the node's `current()` parameters."""

    def callback(params: list[Parameter]) -> list[Parameter]:
        try:
            return joints.mirrored(as_schema_types(joints.schema())(params), current())
        except Exception:  # noqa: BLE001 - a bug here must not end the node: the set is validated as is
            return params

    return callback


__all__ = [
    "MOVED",
    "JointKind",
    "JointParameters",
    "expand",
    "is_joint_parameter",
    "joint_values",
    "markdown_rows",
    "output_names",
    "pre_set",
]
