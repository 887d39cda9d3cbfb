"""The cycle model: everything the control cycle needs that depends on the model and the
parameters, built once per change and swapped whole (no ROS here beyond plain values)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from rnea_ros.algorithms.contact_dynamics import Contact
from rnea_ros.algorithms.dynamics import link_pose
from rnea_ros.control.effort_law import EffortLaw, Efforts
from rnea_ros.control.floating_efforts import FloatingEfforts
from rnea_ros.errors import ParameterError
from rnea_ros.friction.compensation import CompensationRules
from rnea_ros.model.robot_model import RobotModel
from rnea_ros.nodes.inverse_dynamics.command import CommandStage
from rnea_ros.nodes.inverse_dynamics.contact_params import contacts_of
from rnea_ros.nodes.inverse_dynamics.effort_units import EffortUnits, effort_units
from rnea_ros.nodes.inverse_dynamics.overrides import NONE, Overrides
from rnea_ros.nodes.inverse_dynamics.params import KD, KP
from rnea_ros.ros.law_params import compensated, ee_wrench, friction_of, with_armature, with_payload
from rnea_ros.ros.model_source import output_joints
from rnea_ros.ros.per_joint import joint_values


@dataclass(frozen=True)
class CycleModel:
    """A loaded model with its packed effort law, wrenches, effort units and output order: what
    the control cycle evaluates (swapped whole, never edited)."""

    model: RobotModel
    efforts: Efforts  # its table is the cycle's workspace
    output: np.ndarray  # model index of each output joint, in `joints` order
    output_names: list[str]
    wrench_root: dict[str, np.ndarray] | None  # link → wrench in root axes (constant); None: none
    wrench_local: tuple[tuple[str, np.ndarray], ...]  # (link, wrench in its own axes), rotated every cycle
    output_is_model_order: bool = False  # every model joint in model order: no reindexing
    overrides: Overrides = NONE  # the ~/ee_wrench and ~/payload messages in force
    payload_source: str = "parameters"  # where model.payload comes from: 'parameters', 'topic', 'estimate'
    units: EffortUnits | None = None  # effort_unit of the output joints (None: all joint torque)
    # root_joint floating or planar: the contact-consistent law (its `efforts` is `efforts`) and
    # the contacts of contacts.* (all of them; ~/contact_state masks them); None, (): a fixed root
    floating: FloatingEfforts | None = None
    contacts: tuple[Contact, ...] = ()

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

    @cached_property
    def command(self) -> CommandStage:
        """The output stage every published command goes through (command.py): output order,
        effort limit × effort_limit_scale, effort_unit."""
        limit = self.efforts.law.limits(self.model)[0][self.output]
        return CommandStage(self.output, limit, self.units, self.output_is_model_order)

    @cached_property
    def output_list(self) -> list[int]:
        """`output` as a list of ints (indexing one row per cycle without numpy)."""
        return self.output.tolist()

    @property
    def wrench_links(self) -> list[str]:
        """Links that exert a wrench now."""
        return sorted({*(self.wrench_root or {}), *(link for link, _ in self.wrench_local)})


FRICTION_STATE_PARAMS = ("compensate.friction", "friction.")  # a change re-arms the runaway guard


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


def build_cycle_model(
    base: RobotModel,
    params: dict,
    overrides: Overrides | None = None,
    previous: tuple[CycleModel, dict] | None = None,
    floating: RobotModel | None = None,
) -> CycleModel:
    """Combine a parsed model with the parameters; ValueError naming the parameter at fault.

    overrides: what ~/ee_wrench and ~/payload messages set (None: nothing).
    previous: the cycle model this one replaces for the same model, with its parameters: the friction
    state carries over (loop period, last sample, runaway guard; the guard re-armed when a
    compensate.friction or friction.* parameter changed).
    floating: the model of the same URDF with the floating or planar root joint (root_joint), whose
    joints are `base`'s: the model terms come from contact-consistent inverse dynamics over the
    contacts.* contacts (rnea_ros.control.floating_efforts); None: a fixed root.
    """
    joints, output = output_joints(base, params)
    overrides = overrides or NONE
    model = with_armature(with_payload(base, params, overrides.payload), params, output)
    wrench_root, wrench_local = link_wrenches(base, params, overrides)
    gains = {}
    for kind in (KP, KD):  # feedback.<joint>.kp/kd (or the arrays feedback.kp/kd)
        full = np.zeros(base.nv)
        full[output] = joint_values(params, kind, base, output)
        gains[kind.array] = full
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
    floating_law: FloatingEfforts | None = None
    contacts: tuple[Contact, ...] = ()
    if floating is not None:
        if params["gravity_source"] != "parameter":
            raise ParameterError(
                "gravity_source",
                f"must be 'parameter' with root_joint {floating.root_joint}: gravity is the world's "
                "(the frame of ~/odometry); ~/imu gives the base's orientation (base.source)",
            )
        moving = with_armature(with_payload(floating, params, overrides.payload), params, output)
        contacts = contacts_of(params, moving)
        floating_law = FloatingEfforts(moving, model, law)
        efforts = floating_law.efforts
    else:
        efforts = Efforts(model, law)
    if previous is not None:
        old, old_params = previous
        friction_params = [n for n in params if n.startswith(FRICTION_STATE_PARAMS)]
        same = all(old_params.get(n) == params[n] for n in friction_params)
        efforts.adopt(old.efforts, keep_guard=same)
    in_order = len(joints) == base.nv and bool(np.all(output == np.arange(base.nv)))
    source = overrides.payload_source if overrides.payload is not None else "parameters"
    units = effort_units(params, joints, output, base.nv)
    cycle = CycleModel(
        model, efforts, output, joints, wrench_root, wrench_local, in_order, overrides, source, units,
        floating_law, contacts,
    )  # fmt: skip
    cycle.command  # noqa: B018 - the output stage built here, not in the first cycle
    return cycle
