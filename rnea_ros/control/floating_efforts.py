"""The effort law on a floating or planar base (no ROS): contact-consistent model terms composed
around the fixed-base law's friction, feedback and clamp.

A robot whose root joint moves (a free-flyer or planar root) has no actuator on its first
`root_nv` velocity rows: its model terms come from contact-consistent inverse dynamics
(`rnea_ros.algorithms.contact_dynamics.contact_inverse_dynamics`), the actuated rows of

    M a + h + Σ J_eᵀ F_e = Sᵀ τ + J_cᵀ f,

a = (0 for the base, q̈_des for the joints), h = c + g, F_e the law's link wrenches (what each link
exerts on its environment), f the contact forces (what the environment exerts on the robot,
Pinocchio's sign). The rest of the law is the fixed-base one, on the same joints: friction
compensation, PD feedback (with its bound by the loop's period and delay, using the joint block
of M, i.e. the base held still) and the clamp to the effort limit × scale.

Composition (the effort law itself is unchanged): `FloatingEfforts` packs an `Efforts` of the
joints' fixed-base model whose law compensates friction only (the model terms switched off, no
wrenches, no runaway guard: its power balance is the fixed-base one, and a leg carrying the body
would trip it), and `compute_floating_efforts` calls `compute_efforts` on it, then writes the
contact-consistent model term into the table's gravity row, recomputes the total, clamps it and
marks the clamped joints. The other model rows (coriolis, inertia, wrench) stay zero: the gravity
row carries the whole contact-consistent model term (g, c, M a and the wrenches of the
actuated rows, less J_cᵀ f). The law's `compensate` switches select what enters it: gravity off
sets gravity to zero, coriolis off the velocities, inertia off the accelerations, wrench off the
wrenches. All joint arrays in `joints.joint_names` order (the same as the floating model's).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace

import numpy as np

from rnea_ros.algorithms.configuration import base_placement
from rnea_ros.algorithms.contact_dynamics import (
    ROOT_ROWS,
    Contact,
    ContactSolution,
    contact_inverse_dynamics,
)
from rnea_ros.compiled.kernels.cycle import OUT_CLAMPED, OUT_TOTAL
from rnea_ros.compiled.kernels.friction_guard import SAMPLE_TOTAL
from rnea_ros.control.effort_law import EffortLaw, Efforts, compute_efforts
from rnea_ros.errors import RneaError
from rnea_ros.model.robot_model import RobotModel

__all__ = ["FloatingEfforts", "compute_floating_efforts", "joint_law"]

MODEL_TERMS = ("gravity", "coriolis", "inertia", "wrench")


def joint_law(law: EffortLaw) -> EffortLaw:
    """The law evaluated on the joints' fixed-base model: friction only among the model terms,
    no wrenches and no runaway guard (module docstring); gains, limits, friction as given."""
    return replace(law, compensate=law.compensate & {"friction"}, wrenches=None, guard_window=0.0)


class FloatingEfforts:
    """A floating (or planar) model, the fixed-base model of the same joints and a law, packed
    for `compute_floating_efforts`; `efforts` is the joints' `Efforts` (its table holds the
    result), `solution` the last cycle's contact solution, `solve` the contact-consistent inverse
    dynamics it calls (`contact_inverse_dynamics`; bench/bench_floating_cycle.py swaps in
    `reference_contact_inverse_dynamics`, the checked Python path, to compare)."""

    def __init__(self, floating: RobotModel, joints: RobotModel, law: EffortLaw) -> None:
        if floating.root_joint not in ROOT_ROWS:
            raise RneaError(
                f"a floating or planar root joint is needed, the model's is '{floating.root_joint}'"
            )
        if joints.root_joint != "fixed" or tuple(joints.joint_names) != tuple(floating.joint_names):
            raise RneaError("the joints' model must be the fixed-base model of the floating model's joints")
        self.floating = floating
        self.law = law
        self.efforts = Efforts(joints, joint_law(law))
        self.limit = law.limits(joints)[0]
        self.switches = {term: term in law.compensate for term in MODEL_TERMS}
        self.gravity = (
            np.asarray(law.gravity, dtype=float).reshape(3) if self.switches["gravity"] else np.zeros(3)
        )
        self.solution: ContactSolution | None = None
        self.solve: Callable[..., ContactSolution] = contact_inverse_dynamics
        self.q_full = np.zeros(floating.nq)  # the configuration of the last solution
        self._base_a = np.zeros(floating.root_nv)

    def world_wrenches(
        self, q_base: np.ndarray, wrenches: Mapping[str, np.ndarray] | None
    ) -> dict[str, np.ndarray] | None:
        """Link wrenches in base (root-link) axes, as the fixed-base law takes them, rotated into
        world axes at the base configuration q_base (root_nq)."""
        if not wrenches or not self.switches["wrench"]:
            return None
        q = np.zeros(self.floating.nq)
        q[: len(q_base)] = q_base
        rot, _ = base_placement(self.floating, q)
        out = {}
        for link, w in wrenches.items():
            w = np.asarray(w, dtype=float)
            out[link] = np.concatenate([rot @ w[:3], rot @ w[3:6]])
        return out


def compute_floating_efforts(
    fe: FloatingEfforts,
    q_base: np.ndarray,
    v_base: np.ndarray,
    q: np.ndarray,
    qd: np.ndarray,
    desired: tuple[np.ndarray, np.ndarray, np.ndarray],
    contacts: Sequence[Contact],
    wrenches: Mapping[str, np.ndarray] | None = None,
    *,
    driven: np.ndarray | None = None,
    t: float | None = None,
    delay: float | None = None,
) -> Efforts:
    """Every term of the law for a floating base into `fe.efforts.table` (module docstring) and
    the contact solution into `fe.solution`; ValueError naming the input on non-finite input, as
    `compute_efforts`.

    q_base (root_nq) and v_base (root_nv): the root joint's configuration and velocity in
    Pinocchio's layout (world pose of the base; twist in base axes). q, qd and the desired state:
    the joints (njoints each). contacts: the active contacts (normals in world axes). wrenches:
    link wrenches in base axes (what each link exerts on its environment, moment about its origin),
    None: none. driven, t, delay: as for `compute_efforts`."""
    efforts = compute_efforts(fe.efforts, q, qd, desired, None, driven=driven, t=t, delay=delay)
    q_des, qd_des, qdd_des = desired
    for name, values in (("base configuration", q_base), ("base velocity", v_base)):
        if not np.isfinite(values).all():
            raise RneaError(f"{name} is NaN or Inf")
    q_eval, qd_eval = (q_des, qd_des) if fe.law.use_desired_state else (q, qd)
    sw = fe.switches
    q_full = np.concatenate([q_base, q_eval])
    v_full = np.concatenate([v_base, qd_eval]) if sw["coriolis"] else np.zeros(fe.floating.nv)
    a_full = np.concatenate([fe._base_a, qdd_des]) if sw["inertia"] else np.zeros(fe.floating.nv)
    solution = fe.solve(
        fe.floating, q_full, v_full, a_full, contacts, gravity=fe.gravity,
        wrenches=fe.world_wrenches(q_base, wrenches),
    )  # fmt: skip
    tau = solution.tau
    if not np.isfinite(tau).all():  # not expected: contact_dynamics returns finite numbers
        raise RneaError("the contact-consistent model term is NaN or Inf")
    table = efforts.table
    table[0] = tau
    table[1] = table[2] = table[4] = 0.0
    total = table[0] + table[1] + table[2] + table[3] + table[4] + table[5]
    limit = fe.limit
    table[OUT_CLAMPED] = np.abs(total) > limit
    table[OUT_TOTAL] = np.minimum(np.maximum(total, -limit), limit)
    efforts.loop.prev[SAMPLE_TOTAL] = table[OUT_TOTAL]  # the applied total of this sample
    fe.solution, fe.q_full = solution, q_full
    return efforts
