"""A floating-base URDF robot standing on a floor in MuJoCo (no ROS), built from the URDF.

The scene is generated with `mujoco.MjSpec` from the URDF reduced to links and joints
(`rnea_ros.sim.mujoco_arm.mujoco_urdf`: inertials kept exactly as written, visuals and meshes
dropped), then:
  - a free joint on the root link (the floating base);
  - a floor: a plane at z = 0 with friction `mu`;
  - contact spheres on the feet: one sphere (radius `radius`) at each point foot's link origin,
    or four at the corners of each sole rectangle (`Foot.half_extents`, along the link's x and
    y axes); foot geoms touch the floor only, never each other;
  - a motor (gear 1, no limit) on every joint: `step(tau)` writes the efforts to `ctrl`;
  - no joint damping or dry friction (the plant is the URDF's rigid-body model), contacts
    stiffened to `solref` (time constant, damping ratio) so the floor sinks less than a
    millimetre under the robot's weight.

State in Pinocchio's free-flyer layout (the package's `root_joint="floating"`):
    q = [base position (world, m), quaternion (x, y, z, w), joints (rad)]  (nq = 7 + n)
    v = [base linear velocity (base frame), base angular velocity (base frame), joints]  (nv = 6 + n)
MuJoCo stores the quaternion (w, x, y, z) and the free joint's linear velocity in world axes;
`q`, `v` and `reset` convert. Joints follow MuJoCo's order (depth-first in document order, as
RobotModel and Pinocchio), named in `joint_names`. Units: m, rad, s, N, N m.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import mujoco
import numpy as np

from rnea_ros.sim.mujoco_arm import mujoco_urdf

FLOOR_SOLREF = (0.004, 1.0)  # s, damping ratio: stiffer than MuJoCo's default (0.02, 1)


@dataclass(frozen=True)
class Foot:
    """A foot link; half_extents None: a point foot (one sphere at the link origin), else the
    sole rectangle's half sizes (m) along the link's x and y axes, centred at its origin."""

    link: str
    half_extents: tuple[float, float] | None = None


class LeggedScene:
    """The robot of `urdf` with a free root on a floor, stepped with joint efforts (module docs)."""

    def __init__(
        self,
        urdf: str,
        feet: Sequence[Foot],
        *,
        mu: float = 0.8,
        radius: float = 0.01,
        timestep: float = 1e-3,
        solref: tuple[float, float] = FLOOR_SOLREF,
    ) -> None:
        spec = mujoco.MjSpec.from_string(mujoco_urdf(urdf))
        roots = [b for b in spec.worldbody.bodies]
        if len(roots) != 1:
            raise ValueError(f"the URDF must have one root link below the world, found {len(roots)}")
        self.root_link: str = roots[0].name
        roots[0].add_freejoint(name="root")
        floor = spec.worldbody.add_geom(
            name="floor", type=mujoco.mjtGeom.mjGEOM_PLANE, size=[20.0, 20.0, 0.1], friction=[mu, 0.005, 1e-4]
        )
        floor.solref = list(solref)
        self.feet = tuple(feet)
        for foot in self.feet:
            body = spec.body(foot.link)
            if body is None:
                raise ValueError(f"foot '{foot.link}' is not a link of the URDF")
            if foot.half_extents is None:
                points = [(0.0, 0.0)]
            else:
                ex, ey = foot.half_extents
                points = [(sx * ex, sy * ey) for sx in (1.0, -1.0) for sy in (1.0, -1.0)]
            for i, (x, y) in enumerate(points):
                geom = body.add_geom(
                    name=f"{foot.link}_contact_{i}",
                    type=mujoco.mjtGeom.mjGEOM_SPHERE,
                    size=[radius, 0.0, 0.0],
                    pos=[x, y, 0.0],
                    contype=0,
                    conaffinity=1,
                    friction=[mu, 0.005, 1e-4],
                    mass=0.0,
                )
                geom.solref = list(solref)
        self.joint_names: tuple[str, ...] = tuple(
            j.name for j in spec.joints if j.type != mujoco.mjtJoint.mjJNT_FREE
        )
        for name in self.joint_names:
            spec.add_actuator(
                name=name, target=name, trntype=mujoco.mjtTrn.mjTRN_JOINT, gear=[1, 0, 0, 0, 0, 0]
            )
        self.model = spec.compile()
        m = self.model
        m.opt.timestep = timestep
        m.opt.integrator = mujoco.mjtIntegrator.mjINT_IMPLICITFAST
        m.opt.cone = mujoco.mjtCone.mjCONE_ELLIPTIC
        m.dof_damping[:] = 0.0
        m.dof_frictionloss[:] = 0.0
        self.radius = float(radius)
        self.data = mujoco.MjData(m)
        self.n = len(self.joint_names)
        self.nq, self.nv = 7 + self.n, 6 + self.n
        self.root_body = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_BODY, self.root_link)
        self.foot_geoms = np.array(
            [g for g in range(m.ngeom) if m.geom_contype[g] == 0 and m.geom_conaffinity[g] == 1]
        )
        self.applied = np.zeros(self.n)

    @property
    def timestep(self) -> float:
        return float(self.model.opt.timestep)

    @property
    def time(self) -> float:
        return float(self.data.time)

    @property
    def mass(self) -> float:
        return float(self.model.body_mass.sum())

    @property
    def q(self) -> np.ndarray:
        """Configuration (nq), Pinocchio's layout."""
        qpos = self.data.qpos
        return np.concatenate([qpos[0:3], qpos[4:7], qpos[3:4], qpos[7:]])

    @property
    def v(self) -> np.ndarray:
        """Velocity (nv), Pinocchio's layout (base twist in the base frame)."""
        qvel = self.data.qvel
        rot = self.data.xmat[self.root_body].reshape(3, 3)
        return np.concatenate([rot.T @ qvel[0:3], qvel[3:6], qvel[6:]])

    @property
    def base_rotation(self) -> np.ndarray:
        """Base orientation, base axes in world axes (3×3)."""
        return self.data.xmat[self.root_body].reshape(3, 3).copy()

    def reset(self, joints: np.ndarray, *, clearance: float = 0.0) -> np.ndarray:
        """Joints at `joints` (n), zero velocity, the base level (identity orientation) at the
        height where the lowest foot sphere is `clearance` m above the floor (negative: into
        it). Returns q (nq, Pinocchio's layout)."""
        m, d = self.model, self.data
        mujoco.mj_resetData(m, d)
        d.qpos[0:3] = 0.0
        d.qpos[3:7] = (1.0, 0.0, 0.0, 0.0)
        d.qpos[7:] = joints
        mujoco.mj_kinematics(m, d)
        lowest = float(np.min(d.geom_xpos[self.foot_geoms, 2])) - self.radius
        d.qpos[2] = clearance - lowest
        d.ctrl[:] = 0.0
        mujoco.mj_forward(m, d)
        return self.q

    def joint_inertia(self) -> np.ndarray:
        """The joints' diagonal entries of MuJoCo's M (n, kg m² or kg) at the current state."""
        full = np.zeros((self.nv, self.nv))
        mujoco.mj_fullM(self.model, self.data, full)
        return np.diag(full)[6:].copy()

    def step(self, tau: np.ndarray) -> None:
        """One time step with joint efforts `tau` (n, N m) held over it."""
        self.data.ctrl[:] = tau
        self.applied = np.asarray(tau, dtype=float).copy()
        mujoco.mj_step(self.model, self.data)

    def contact_normal_forces(self) -> np.ndarray:
        """Per foot, the sum of the floor's normal forces on its spheres (N)."""
        m, d = self.model, self.data
        out = np.zeros(len(self.feet))
        body_of = {mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_BODY, f.link): i for i, f in enumerate(self.feet)}
        wrench = np.zeros(6)
        for c in range(d.ncon):
            con = d.contact[c]
            for g in (con.geom1, con.geom2):
                i = body_of.get(int(m.geom_bodyid[g]))
                if i is not None:
                    mujoco.mj_contactForce(m, d, c, wrench)
                    out[i] += wrench[0]
        return out
