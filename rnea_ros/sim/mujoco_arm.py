"""A URDF robot simulated by MuJoCo, an engine independent of rnea_ros's model (no ROS here).

MuJoCo compiles the URDF itself: visuals, collisions (meshes) and everything but links and
joints are dropped, inertials are kept exactly as written (no inertia balancing, no mass or
inertia bounds, no inertia from geometry, static bodies not fused). From `<dynamics>` MuJoCo
takes `damping` as viscous joint damping and `friction` as `frictionloss` (a dry friction
solved as a constraint, unlike rnea_ros's smooth tanh Coulomb model); `<mimic>` becomes a soft
joint equality. There is no armature (rotor inertia), as in rnea_ros's URDF model.

Frames and units: the world frame is the URDF root link frame, gravity `[0, 0, -9.81]` m/s² in
it; positions rad or m, velocities rad/s or m/s, efforts N m or N, time s. Arrays follow
`joint_names`, MuJoCo's joint order (depth-first in document order, like `RobotModel`).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Mapping

import mujoco
import numpy as np

COMPILER = {
    "discardvisual": "true",
    "fusestatic": "false",
    "balanceinertia": "false",
    "boundmass": "0",
    "boundinertia": "0",
    "inertiafromgeom": "false",
    "strippath": "false",
}
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
    (N m/rad or N/m) and `hold_kd` (N m s/rad or N s/m).
    """

    def __init__(
        self,
        urdf: str,
        timestep: float = 1e-3,
        integrator: str = "implicitfast",
        held: tuple[str, ...] = (),
        hold_kp: float = 200.0,
        hold_kd: float = 2.0,
    ) -> None:
        if not (np.isfinite(timestep) and timestep > 0):
            raise ValueError(f"timestep must be > 0 s, got {timestep}")
        if integrator not in INTEGRATORS:
            raise ValueError(f"integrator must be one of {tuple(INTEGRATORS)}, got '{integrator}'")
        self.model = mujoco.MjModel.from_xml_string(mujoco_urdf(urdf))
        self.model.opt.timestep = timestep
        self.model.opt.integrator = INTEGRATORS[integrator]
        self.data = mujoco.MjData(self.model)
        m = self.model
        if m.nq != m.nv or np.any(m.jnt_type == mujoco.mjtJoint.mjJNT_FREE):
            raise ValueError("only fixed-base robots with revolute and prismatic joints are supported")
        self.joint_names: tuple[str, ...] = tuple(
            mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_JOINT, j) for j in range(m.njnt)
        )
        self.nv = m.nv
        limited = m.jnt_limited.astype(bool)
        self.lower = np.where(limited, m.jnt_range[:, 0], -np.inf)  # rad or m
        self.upper = np.where(limited, m.jnt_range[:, 1], np.inf)
        self.held = self.indices(held)
        self.hold_kp, self.hold_kd = float(hold_kp), float(hold_kd)
        self.hold_target = np.zeros(len(self.held))
        self.applied = np.zeros(self.nv)  # efforts of the last step, N m or N
        self.reset()

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
        """Joint positions (copy), rad or m."""
        return self.data.qpos.copy()

    @property
    def qd(self) -> np.ndarray:
        """Joint velocities (copy), rad/s or m/s."""
        return self.data.qvel.copy()

    def indices(self, names) -> np.ndarray:
        """Positions of `names` in `joint_names`; ValueError naming an unknown joint."""
        index = {name: i for i, name in enumerate(self.joint_names)}
        missing = [n for n in names if n not in index]
        if missing:
            raise ValueError(f"joint '{missing[0]}' is not a movable joint of the simulated robot")
        return np.array([index[n] for n in names], dtype=np.int64)

    def reset(self, positions: Mapping[str, float] | None = None) -> None:
        """Rest at `positions` (by joint name; others at 0 clamped into their limits), time 0.
        Held joints are then held where they are."""
        mujoco.mj_resetData(self.model, self.data)
        q = np.clip(np.zeros(self.nv), self.lower, self.upper)
        for name, value in (positions or {}).items():
            q[self.indices([name])[0]] = float(value)
        if not np.all(np.isfinite(q)):
            raise ValueError("initial positions must be finite")
        self.data.qpos[:] = q
        self.hold_target = q[self.held].copy()
        self.applied[:] = 0.0
        mujoco.mj_forward(self.model, self.data)

    def step(self, effort: np.ndarray) -> None:
        """Advance one timestep with `effort` (joint_names order, N m or N) on every joint that is
        not held; efforts are constant over the step."""
        tau = np.asarray(effort, dtype=float).copy()
        if tau.shape != (self.nv,) or not np.all(np.isfinite(tau)):
            raise ValueError(f"effort must be {self.nv} finite values")
        if self.held.size:
            d = self.data
            tau[self.held] = (
                self.hold_kp * (self.hold_target - d.qpos[self.held]) - self.hold_kd * d.qvel[self.held]
            )
        self.data.qfrc_applied[:] = tau
        self.applied = tau
        mujoco.mj_step(self.model, self.data)

    def bias(self, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
        """MuJoCo's c(q, q̇) + g(q) (qfrc_bias) at a state, joint_names order; leaves the
        simulation state untouched."""
        d = mujoco.MjData(self.model)
        d.qpos[:], d.qvel[:] = q, qd
        mujoco.mj_forward(self.model, d)
        return d.qfrc_bias.copy()

    def inverse(self, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray) -> np.ndarray:
        """MuJoCo's inverse dynamics M(q) q̈ + c(q, q̇) + g(q) without passive forces (damping)
        and constraints (limits, mimic equalities), joint_names order."""
        m = self.model
        saved = m.opt.disableflags
        m.opt.disableflags = saved | mujoco.mjtDisableBit.mjDSBL_CONSTRAINT
        try:
            d = mujoco.MjData(m)
            d.qpos[:], d.qvel[:], d.qacc[:] = q, qd, qdd
            mujoco.mj_inverse(m, d)
            return d.qfrc_inverse + d.qfrc_passive
        finally:
            m.opt.disableflags = saved

    def mass_matrix(self, q: np.ndarray) -> np.ndarray:
        """MuJoCo's joint-space inertia matrix M(q), kg m² (or kg), joint_names order."""
        d = mujoco.MjData(self.model)
        d.qpos[:] = q
        mujoco.mj_forward(self.model, d)
        out = np.zeros((self.nv, self.nv))
        mujoco.mj_fullM(self.model, d, out)
        return out
