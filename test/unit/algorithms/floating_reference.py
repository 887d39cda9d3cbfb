"""Pinocchio reference for a model with a floating or planar root (test helper): the same URDF
built with JointModelFreeFlyer / JointModelPlanar, and the maps between our (q, v) and Pinocchio's
(continuous joints are (cos, sin) there, and Pinocchio may order the joints differently)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pinocchio as pin

from rnea_ros import RobotModel
from rnea_ros.model.example_robots import example_robots_dir

ROOT = example_robots_dir()
FILES = sorted(ROOT.rglob("*.urdf"))
PIN_ROOTS = {"floating": pin.JointModelFreeFlyer, "planar": pin.JointModelPlanar}


def pinocchio_loads(path: Path) -> bool:
    try:
        pin.buildModelFromUrdf(str(path))
    except Exception:  # noqa: BLE001 - a file Pinocchio refuses (ur3.urdf has no robot name)
        return False
    return True


# the walk: every URDF of the package that Pinocchio loads (ids relative to robots/)
LOADABLE = [p for p in FILES if pinocchio_loads(p)]
IDS = [str(p.relative_to(ROOT)) for p in LOADABLE]


def relerr(x: np.ndarray, ref: np.ndarray) -> float:
    """Largest entry error relative to the largest entry of the reference (at least 1)."""
    return float(
        np.max(np.abs(np.asarray(x) - ref), initial=0.0) / max(1.0, float(np.max(np.abs(ref), initial=0.0)))
    )


class FloatingRef:
    """Our model and Pinocchio's for one URDF and root joint."""

    def __init__(self, path: Path, root_joint: str) -> None:
        self.model = RobotModel.from_urdf(path.read_text(), root_joint=root_joint)
        self.pin = pin.buildModelFromUrdf(str(path), PIN_ROOTS[root_joint]())
        self.data = self.pin.createData()
        m = self.model
        self.joints = [self.pin.joints[self.pin.getJointId(j)] for j in m.joint_names]
        self.vidx = list(range(m.root_nv)) + [j.idx_v for j in self.joints]
        assert self.pin.nv == m.nv

    def random_state(self, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        m = self.model
        q = np.empty(m.nq)
        if m.root_joint == "floating":
            quat = rng.normal(size=4)
            q[0:3], q[3:7] = rng.normal(0, 2, 3), quat / np.linalg.norm(quat)
        else:
            theta = rng.uniform(-np.pi, np.pi)
            q[0:2], q[2:4] = rng.normal(0, 2, 2), (np.cos(theta), np.sin(theta))
        lo = np.where(np.isfinite(m.position_lower), m.position_lower, -np.pi)
        hi = np.where(np.isfinite(m.position_upper), m.position_upper, np.pi)
        q[m.root_nq :] = rng.uniform(lo, hi)
        return q, rng.normal(0, 1.5, m.nv), rng.normal(0, 3.0, m.nv)

    def q(self, q: np.ndarray) -> np.ndarray:
        """Our q as Pinocchio's."""
        nq0 = self.model.root_nq
        out = np.zeros(self.pin.nq)
        out[:nq0] = q[:nq0]
        for jm, x in zip(self.joints, q[nq0:], strict=True):
            if jm.nq == 2:
                out[jm.idx_q], out[jm.idx_q + 1] = np.cos(x), np.sin(x)
            else:
                out[jm.idx_q] = x
        return out

    def q_from_pin(self, pq: np.ndarray) -> np.ndarray:
        """Pinocchio's q as ours (angles of continuous joints in (-π, π])."""
        nq0 = self.model.root_nq
        out = np.zeros(self.model.nq)
        out[:nq0] = pq[:nq0]
        for i, jm in enumerate(self.joints):
            x = pq[jm.idx_q]
            out[nq0 + i] = np.arctan2(pq[jm.idx_q + 1], x) if jm.nq == 2 else x
        return out

    def v(self, v: np.ndarray) -> np.ndarray:
        """Our v (or a) as Pinocchio's."""
        out = np.zeros(self.pin.nv)
        out[self.vidx] = v
        return out

    def fext(self, pq: np.ndarray, link: str, wrench: np.ndarray) -> list:
        """Pinocchio's per-joint forces for `wrench` exerted BY `link` (world axes, about its origin)."""
        fid = self.pin.getFrameId(link)
        frame = self.pin.frames[fid]
        pin.framesForwardKinematics(self.pin, self.data, pq)
        rot = self.data.oMf[fid].rotation
        on_body = pin.Force(-rot.T @ wrench[:3], -rot.T @ wrench[3:])
        fext = [pin.Force.Zero() for _ in range(self.pin.njoints)]
        fext[frame.parentJoint] = frame.placement.act(on_body)
        return fext

    def rnea(self, q, v, a, gravity, wrenches: dict[str, np.ndarray]) -> np.ndarray:
        self.pin.gravity.linear = gravity
        pq = self.q(q)
        fext = [pin.Force.Zero() for _ in range(self.pin.njoints)]
        for link, w in wrenches.items():
            for j, f in enumerate(self.fext(pq, link, w)):
                fext[j] = fext[j] + f
        return pin.rnea(self.pin, self.data, pq, self.v(v), self.v(a), fext)[self.vidx]

    def nle(self, q, v, gravity) -> np.ndarray:
        self.pin.gravity.linear = gravity
        return pin.nonLinearEffects(self.pin, self.data, self.q(q), self.v(v))[self.vidx]

    def gravity(self, q, gravity) -> np.ndarray:
        self.pin.gravity.linear = gravity
        return pin.computeGeneralizedGravity(self.pin, self.data, self.q(q))[self.vidx]

    def mass(self, q) -> np.ndarray:
        m = pin.crba(self.pin, self.data, self.q(q))
        return (np.triu(m) + np.triu(m, 1).T)[np.ix_(self.vidx, self.vidx)]

    def aba(self, q, v, tau, gravity) -> np.ndarray:
        self.pin.gravity.linear = gravity
        return pin.aba(self.pin, self.data, self.q(q), self.v(v), self.v(tau))[self.vidx]

    def jacobian(self, q, link: str) -> np.ndarray:
        """6×nv frame Jacobian, LOCAL_WORLD_ALIGNED, linear rows first."""
        pin.computeJointJacobians(self.pin, self.data, self.q(q))
        pin.updateFramePlacements(self.pin, self.data)
        return pin.getFrameJacobian(self.pin, self.data, self.pin.getFrameId(link), pin.LOCAL_WORLD_ALIGNED)[
            :, self.vidx
        ]

    def pose(self, q, link: str) -> tuple[np.ndarray, np.ndarray]:
        pin.framesForwardKinematics(self.pin, self.data, self.q(q))
        placement = self.data.oMf[self.pin.getFrameId(link)]
        return placement.rotation, placement.translation
