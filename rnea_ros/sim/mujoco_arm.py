"""A URDF robot simulated by MuJoCo, an engine independent of rnea_ros's model (no ROS here).

MuJoCo compiles the URDF itself: visuals, collisions (meshes) and everything but links and
joints are dropped, inertials are kept exactly as written (no inertia balancing, no mass or
inertia bounds, no inertia from geometry, static bodies not fused). `<mimic>` becomes a soft
joint equality. A URDF has no armature (rotor inertia): it is 0 unless set in
`model.dof_armature` (the simulator node's `armature` parameter).

Joint friction from `<dynamics damping friction>`: `damping` d is MuJoCo's viscous joint
damping, integrated implicitly. `friction` F_c (dry, Coulomb) is simulated one of two ways:

* "implicit" (default): F_c tanh(q̇ / v_s) with v_s = `coulomb_velocity` (1 mm/s, ten times
  sharper than the node's default tanh), applied as extra joint damping F_c tanh(|q̇|/v_s) / |q̇|
  (F_c / v_s at rest) frozen over each step, which MuJoCo integrates implicitly like `damping`:
  stable however light the joint, and dissipative. Needs the "euler" or "implicitfast" integrator.
* "frictionloss": MuJoCo's `frictionloss`, a dry friction solved as a soft constraint that
  steers the joint's acceleration towards −b q̇ (b ≈ 105 /s from the default solref time
  constant 0.02 s) with a force of at most F_c. Alone it is a viscous damper whose slope scales
  with the joint's inertia, up to F_c: 3.6 N m s/rad on xArm7's base joint (F_c reached at
  0.28 rad/s), 0.013 on its last joint (1e-4 kg m²: the URDF's 1 N m only at ~76 rad/s). With
  other forces it resists them too, even the joint's own damping (it then pushes along the
  motion). Either way the plant has far less friction than its URDF says on light joints (see
  docs/friction_semantics.png); time constants below ~2 steps are not stable.

A plant someone else modelled (`MujocoArm(urdf, plant=MJCF)`, rnea_ros.sim.foreign_plant) is
that MJCF as written, its dry friction MuJoCo's frictionloss, its actuators replaced by ideal
effort motors, driven and read in the URDF's joints (the class docstring).

Frames and units: the world frame is the URDF root link frame (a plant's: its own world),
gravity `[0, 0, -9.81]` m/s² in it; positions rad or m, velocities rad/s or m/s, efforts N m or
N, time s. Arrays follow `joint_names`: for a URDF MuJoCo's joint order (depth-first in document
order, like `RobotModel`), for a plant the URDF's joints then the plant's own. `damping` and
`coulomb` are in the model's joint order (a URDF's: the same).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Mapping, Sequence

import mujoco
import numpy as np

from rnea_ros.model.robot_model import RobotModel
from rnea_ros.sim.foreign_plant import Match, load_mjcf, match

COMPILER = {
    "discardvisual": "true",
    "fusestatic": "false",
    "balanceinertia": "false",
    "boundmass": "0",
    "boundinertia": "0",
    "inertiafromgeom": "false",
    "strippath": "false",
}
COULOMB_MODELS = ("implicit", "frictionloss")
INTEGRATORS = {
    "euler": mujoco.mjtIntegrator.mjINT_EULER,
    "implicitfast": mujoco.mjtIntegrator.mjINT_IMPLICITFAST,
    "rk4": mujoco.mjtIntegrator.mjINT_RK4,
}


def mujoco_urdf(urdf: str) -> str:
    """The URDF reduced to links (inertials only) and joints, with a `<mujoco><compiler/>` block
    that makes MuJoCo keep the inertials as written. Raises ValueError when it is not a URDF."""
    try:
        robot = ET.fromstring(urdf)
    except ET.ParseError as exc:
        raise ValueError(f"robot description is not XML: {exc}") from None
    if robot.tag != "robot":
        raise ValueError("robot description has no <robot> root element")
    out = ET.Element("robot", {"name": robot.get("name", "robot")})
    ET.SubElement(ET.SubElement(out, "mujoco"), "compiler", COMPILER)
    for element in robot:
        if element.tag == "link":
            link = ET.SubElement(out, "link", {"name": element.get("name", "")})
            link.extend(element.findall("inertial"))
        elif element.tag == "joint":
            out.append(element)
    return ET.tostring(out, encoding="unicode")


class MujocoArm:
    """The robot of a URDF in MuJoCo, stepped with joint efforts (an ideal effort interface).

    Joints listed in `held` are not driven by `step`'s efforts: a stiff PD servo holds each at its
    position when `reset` ran (as a gripper's own controller would), with gains `hold_kp`
    (N m/rad or N/m) and `hold_kd` (N m s/rad or N s/m); the servo's damping is integrated
    implicitly (as joint damping), so it is stable however light the held joint. `friction_scale`
    multiplies the URDF's damping and friction (e.g. 0.7: a plant with 30 % less friction than its
    URDF says); `coulomb` and `coulomb_velocity` (rad/s or m/s) choose how dry friction is
    simulated (module docstring).

    With `plant` (an MJCF file) the robot simulated is that model instead, as written
    (rnea_ros.sim.foreign_plant: inertials, armature, damping, frictionloss as MuJoCo's dry
    friction, limits, equalities), its actuators replaced by ideal effort motors: `step`'s
    efforts are clipped to the force ranges those actuators had (`effort_lower`/`effort_upper`).
    It still speaks the URDF's joints: `joint_names` are the URDF's movable joints (paired with
    the plant's by `plant_joints`, "URDF_JOINT=PLANT_JOINT", or by chain order; q_urdf = sign
    (q_plant − offset)), then the joints only the plant has (a gripper: always held) under their
    plant names; a URDF joint the plant lacks keeps a constant state (0 within its limits, or
    its `reset` position). `match` says how they were paired.
    """

    def __init__(
        self,
        urdf: str,
        timestep: float = 1e-3,
        integrator: str = "implicitfast",
        held: tuple[str, ...] = (),
        hold_kp: float = 200.0,
        hold_kd: float = 2.0,
        friction_scale: float = 1.0,
        coulomb: str = "implicit",
        coulomb_velocity: float = 1e-3,
        plant: str = "",
        plant_joints: Sequence[str] = (),
    ) -> None:
        if not (np.isfinite(timestep) and timestep > 0):
            raise ValueError(f"timestep must be > 0 s, got {timestep}")
        if integrator not in INTEGRATORS:
            raise ValueError(f"integrator must be one of {tuple(INTEGRATORS)}, got '{integrator}'")
        self.match: Match | None = None
        if plant:
            self.model, limits = load_mjcf(plant)
            self.match = match(urdf, self.model, plant_joints)
            coulomb = "frictionloss"  # the plant's own dry friction, as written
        else:
            self.model = mujoco.MjModel.from_xml_string(mujoco_urdf(urdf))
            limits = np.tile([-np.inf, np.inf], (self.model.nv, 1))
        self.model.opt.timestep = timestep
        self.model.opt.integrator = INTEGRATORS[integrator]
        if not (np.isfinite(friction_scale) and friction_scale >= 0):
            raise ValueError(f"friction_scale must be >= 0, got {friction_scale}")
        if coulomb not in COULOMB_MODELS:
            raise ValueError(f"coulomb must be one of {COULOMB_MODELS}, got '{coulomb}'")
        if not (np.isfinite(coulomb_velocity) and coulomb_velocity > 0):
            raise ValueError(f"coulomb_velocity must be > 0, got {coulomb_velocity}")
        m = self.model
        if m.nq != m.nv or np.any(m.jnt_type == mujoco.mjtJoint.mjJNT_FREE):
            raise ValueError("only fixed-base robots with revolute and prismatic joints are supported")
        # model order (MuJoCo's joints; a URDF's are joint_names)
        self.damping = m.dof_damping * friction_scale  # d, N m s/rad or N s/m
        self.coulomb = m.dof_frictionloss * friction_scale  # F_c, N m or N
        self.coulomb_model, self.coulomb_velocity = coulomb, float(coulomb_velocity)
        self._implicit = coulomb == "implicit" and bool(np.any(self.coulomb > 0))
        if self._implicit and integrator == "rk4":
            raise ValueError("coulomb 'implicit' needs the 'euler' or 'implicitfast' integrator")
        m.dof_damping[:] = self.damping
        m.dof_frictionloss[:] = 0.0 if coulomb == "implicit" else self.coulomb
        self.data = mujoco.MjData(self.model)
        self._expose(urdf, limits)
        self.held = self.indices(tuple(held) + tuple(n for n in self._plant_only if n not in held))
        self.hold_kp, self.hold_kd = float(hold_kp), float(hold_kd)
        self._held_dof = self._dof[self.held][self._dof[self.held] >= 0]
        self.hold_target = np.zeros(self._held_dof.size)  # model coordinates
        self._servo_damping = np.zeros(m.nv)
        self._servo_damping[self._held_dof] = self.hold_kd
        self._base_damping = self.damping + self._servo_damping  # joint damping plus the hold servo's
        m.dof_damping[:] = self._base_damping
        self.applied = np.zeros(self.nv)  # efforts of the last step, N m or N
        self.reset()

    def _expose(self, urdf: str, limits: np.ndarray) -> None:
        """joint_names and how each stands for the model's dofs: `_dof` (-1: none), `_sign`,
        `_offset`; position and effort limits in those coordinates."""
        m = self.model
        names = [mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_JOINT, j) for j in range(m.njnt)]
        limited = m.jnt_limited.astype(bool)
        lower = np.where(limited, m.jnt_range[:, 0], -np.inf)  # rad or m, model order
        upper = np.where(limited, m.jnt_range[:, 1], np.inf)
        if self.match is None:
            exposed, dof = names, list(range(m.nv))
            sign, offset = np.ones(m.nv), np.zeros(m.nv)
            self._plant_only: tuple[str, ...] = ()
            urdf_lower = urdf_upper = np.zeros(m.nv)
        else:
            found = self.match
            model = RobotModel.from_urdf(urdf)
            pairs = dict(zip(found.urdf, found.plant, strict=True))
            clash = set(model.joint_names)
            self._plant_only = tuple(n if n not in clash else f"plant/{n}" for n in found.plant_only)
            exposed = [*model.joint_names, *self._plant_only]
            dof = [names.index(pairs[j]) if j in pairs else -1 for j in model.joint_names]
            dof += [names.index(n) for n in found.plant_only]
            sign = np.array(
                [found.sign_of(j) if j in pairs else 1.0 for j in model.joint_names]
                + [1.0] * len(found.plant_only)
            )
            offset = np.array(
                [float(found.offset[found.urdf.index(j)]) if j in pairs else 0.0 for j in model.joint_names]
                + [0.0] * len(found.plant_only)
            )
            urdf_lower = np.r_[model.position_lower, np.zeros(len(found.plant_only))]
            urdf_upper = np.r_[model.position_upper, np.zeros(len(found.plant_only))]
        self.joint_names: tuple[str, ...] = tuple(exposed)
        self.nv = len(exposed)
        self._dof = np.array(dof, dtype=np.int64)
        self._real = np.flatnonzero(self._dof >= 0)
        self._dof_r = self._dof[self._real]
        self._sign, self._offset = sign, offset
        self._sign_r, self._offset_r = sign[self._real], offset[self._real]
        self._fixed_q = np.zeros(self.nv)  # joints the plant lacks: their constant position
        ends = np.sort(
            np.stack([sign * (lower[self._dof] - offset), sign * (upper[self._dof] - offset)]), axis=0
        )
        self.lower = np.where(self._dof >= 0, ends[0], urdf_lower)  # rad or m
        self.upper = np.where(self._dof >= 0, ends[1], urdf_upper)
        force = np.sort(np.stack([sign * limits[self._dof, 0], sign * limits[self._dof, 1]]), axis=0)
        self.effort_lower = np.where(self._dof >= 0, force[0], -np.inf)  # N m or N, joint_names order
        self.effort_upper = np.where(self._dof >= 0, force[1], np.inf)

    def _to_model(self, x: np.ndarray) -> np.ndarray:
        """A joint_names-order vector (velocity, acceleration, effort) in model coordinates."""
        out = np.zeros(self.model.nv)
        out[self._dof_r] = self._sign_r * np.asarray(x, dtype=float)[self._real]
        return out

    def _from_model(self, x: np.ndarray) -> np.ndarray:
        out = np.zeros(self.nv)
        out[self._real] = self._sign_r * x[self._dof_r]
        return out

    def qpos_of(self, q: np.ndarray) -> np.ndarray:
        """Model positions of joint_names-order positions (joints the plant lacks dropped)."""
        out = self.data.qpos.copy()
        out[self._dof_r] = self._sign_r * np.asarray(q, dtype=float)[self._real] + self._offset_r
        return out

    def plant_parameters(self) -> dict[str, np.ndarray]:
        """The simulated joints' armature (kg m² or kg), viscous damping (N m s/rad or N s/m) and
        dry friction level (N m or N) as set in the model, joint_names order (0 where none)."""
        m = self.model
        out = {}
        for key, values in (
            ("armature", m.dof_armature),
            ("damping", self.damping),
            ("coulomb", self.coulomb),
        ):
            row = np.zeros(self.nv)
            row[self._real] = values[self._dof_r]
            out[key] = row
        return out

    def add_armature(self, joints: Sequence[str], armature) -> None:
        """Add rotor inertia (kg m² or kg; one value or one per joint) to `joints`' own: a URDF has
        none, a plant keeps its own."""
        index = self.indices(joints)
        values = np.broadcast_to(np.asarray(armature, dtype=float), index.shape)
        dof = self._dof[index]
        self.model.dof_armature[dof[dof >= 0]] += values[dof >= 0]

    @property
    def timestep(self) -> float:
        """Physics step, s."""
        return float(self.model.opt.timestep)

    @property
    def time(self) -> float:
        """Simulated time since `reset`, s."""
        return float(self.data.time)

    @property
    def q(self) -> np.ndarray:
        """Joint positions (copy), rad or m, joint_names order."""
        out = self._fixed_q.copy()
        out[self._real] = self._sign_r * (self.data.qpos[self._dof_r] - self._offset_r)
        return out

    @property
    def qd(self) -> np.ndarray:
        """Joint velocities (copy), rad/s or m/s, joint_names order."""
        return self._from_model(self.data.qvel)

    def indices(self, names) -> np.ndarray:
        """Positions of `names` in `joint_names`; ValueError naming an unknown joint."""
        index = {name: i for i, name in enumerate(self.joint_names)}
        missing = [n for n in names if n not in index]
        if missing:
            raise ValueError(f"joint '{missing[0]}' is not a movable joint of the simulated robot")
        return np.array([index[n] for n in names], dtype=np.int64)

    def reset(self, positions: Mapping[str, float] | None = None) -> None:
        """Rest at `positions` (by joint name; others at 0, a plant's at its reference position,
        clamped into their limits), time 0. Held joints are then held where they are."""
        mujoco.mj_resetData(self.model, self.data)
        q = np.clip(np.zeros(self.nv), self.lower, self.upper)
        q[self._real] = np.clip(
            self._sign_r * (self.model.qpos0[self._dof_r] - self._offset_r),
            self.lower[self._real],
            self.upper[self._real],
        )
        for name, value in (positions or {}).items():
            q[self.indices([name])[0]] = float(value)
        if not np.all(np.isfinite(q)):
            raise ValueError("initial positions must be finite")
        self._fixed_q = np.where(self._dof >= 0, 0.0, q)
        self.data.qpos[:] = self.qpos_of(q)
        self.hold_target = self.data.qpos[self._held_dof].copy()
        self.applied[:] = 0.0
        mujoco.mj_forward(self.model, self.data)

    def step(self, effort: np.ndarray) -> None:
        """Advance one timestep with `effort` (joint_names order, N m or N; clipped to the effort
        limits) on every joint that is not held; efforts are constant over the step."""
        tau = np.asarray(effort, dtype=float)
        if tau.shape != (self.nv,) or not np.all(np.isfinite(tau)):
            raise ValueError(f"effort must be {self.nv} finite values")
        tau = self._to_model(np.clip(tau, self.effort_lower, self.effort_upper))
        d = self.data
        if self._held_dof.size:
            tau[self._held_dof] = self.hold_kp * (
                self.hold_target - d.qpos[self._held_dof]
            )  # damping: implicit
        d.qfrc_applied[:] = tau
        self.applied = self._from_model(tau - self._servo_damping * d.qvel)
        if self._implicit:
            x = np.abs(d.qvel) / self.coulomb_velocity
            slope = np.where(x > 1e-8, np.tanh(x) / np.maximum(x, 1e-8), 1.0)  # tanh(x) / x
            self.model.dof_damping[:] = self._base_damping + self.coulomb / self.coulomb_velocity * slope
        mujoco.mj_step(self.model, d)

    def friction_forces(self) -> np.ndarray:
        """Efforts the plant's joint friction exerted in the last step (joint_names order, N m or
        N, opposing the motion): the implicit damping (viscous and, with coulomb 'implicit', dry)
        at the step's end velocity, plus the frictionloss constraint forces."""
        d, m = self.data, self.model
        out = -(m.dof_damping - self._servo_damping) * d.qvel
        rows = np.flatnonzero(d.efc_type[: d.nefc] == mujoco.mjtConstraint.mjCNSTR_FRICTION_DOF)
        np.add.at(out, d.efc_id[rows], d.efc_force[rows])
        return self._from_model(out)

    def frictionloss_torque(self, joint: str, velocities, q: np.ndarray | None = None) -> np.ndarray:
        """The force MuJoCo's frictionloss (level F_c of the URDF × friction_scale) puts on `joint`
        moving at each of `velocities` (every other joint at rest; no gravity, damping or applied
        effort, which the constraint would otherwise also resist; at q, default the current pose),
        N m or N: a constraint force, computed as in a step from that state (whatever `coulomb`
        this arm simulates)."""
        m = self.model
        j = self._dof[self.indices([joint])[0]]
        if j < 0:
            raise ValueError(f"joint '{joint}' is not simulated (the plant has no such joint)")
        qpos = self.data.qpos.copy() if q is None else self.qpos_of(q)
        saved_loss, saved_damping = m.dof_frictionloss.copy(), m.dof_damping.copy()
        m.dof_frictionloss[:] = self.coulomb
        m.dof_damping[:] = 0.0
        saved = m.opt.gravity.copy()
        m.opt.gravity[:] = 0.0
        try:
            d = mujoco.MjData(m)
            out = []
            for v in np.asarray(velocities, dtype=float):
                d.qpos[:] = qpos
                d.qvel[:] = 0.0
                d.qvel[j] = v
                mujoco.mj_forward(m, d)
                friction = d.efc_type[: d.nefc] == mujoco.mjtConstraint.mjCNSTR_FRICTION_DOF
                rows = np.flatnonzero(friction & (d.efc_id[: d.nefc] == j))
                out.append(float(self._sign[self.indices([joint])[0]] * d.efc_force[rows].sum()))
            return np.array(out)
        finally:
            m.opt.gravity[:] = saved
            m.dof_frictionloss[:] = saved_loss
            m.dof_damping[:] = saved_damping

    def bias(self, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
        """MuJoCo's c(q, q̇) + g(q) (qfrc_bias) at a state, joint_names order; leaves the
        simulation state untouched."""
        d = mujoco.MjData(self.model)
        d.qpos[:], d.qvel[:] = self.qpos_of(q), self._to_model(qd)
        mujoco.mj_forward(self.model, d)
        return self._from_model(d.qfrc_bias)

    def inverse(self, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray) -> np.ndarray:
        """MuJoCo's inverse dynamics M(q) q̈ + c(q, q̇) + g(q) without passive forces (damping)
        and constraints (limits, mimic equalities), joint_names order."""
        m = self.model
        saved = m.opt.disableflags
        m.opt.disableflags = saved | mujoco.mjtDisableBit.mjDSBL_CONSTRAINT
        try:
            d = mujoco.MjData(m)
            d.qpos[:], d.qvel[:], d.qacc[:] = self.qpos_of(q), self._to_model(qd), self._to_model(qdd)
            mujoco.mj_inverse(m, d)
            return self._from_model(d.qfrc_inverse + d.qfrc_passive)
        finally:
            m.opt.disableflags = saved

    def mass_matrix(self, q: np.ndarray) -> np.ndarray:
        """MuJoCo's joint-space inertia matrix M(q), kg m² (or kg), joint_names order."""
        d = mujoco.MjData(self.model)
        d.qpos[:] = self.qpos_of(q)
        mujoco.mj_forward(self.model, d)
        full = np.zeros((self.model.nv, self.model.nv))
        mujoco.mj_fullM(self.model, d, full)
        out = np.zeros((self.nv, self.nv))
        r, dof, sign = self._real, self._dof_r, self._sign_r
        out[np.ix_(r, r)] = sign[:, None] * full[np.ix_(dof, dof)] * sign[None, :]
        return out
