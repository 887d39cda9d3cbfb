"""Pinocchio reference quantities of an example robot, in our joint order (test helper)."""

from __future__ import annotations

import numpy as np
import pinocchio as pin

from rnea_ros import RobotModel
from rnea_ros.model.example_robots import example_urdf_path


def relerr(a: np.ndarray, b: np.ndarray) -> float:
    """Largest entry error relative to the largest entry of the reference b."""
    return float(np.max(np.abs(np.asarray(a) - b)) / np.max(np.abs(b)))


def sym(m: np.ndarray) -> np.ndarray:
    """A full symmetric matrix from Pinocchio's upper triangle."""
    return np.triu(m) + np.triu(m, 1).T


class PinRef:
    """Our model and Pinocchio's for one URDF, with the joint-order map between them."""

    def __init__(self, name: str) -> None:
        path = example_urdf_path(name)
        self.name = name
        self.model = RobotModel.from_urdf(path.read_text())
        self.pin = pin.buildModelFromUrdf(str(path))
        self.data = self.pin.createData()
        self.idx = [self.pin.joints[self.pin.getJointId(j)].idx_v for j in self.model.joint_names]
        assert self.pin.nv == self.model.nv == self.pin.nq

    def to_pin(self, x: np.ndarray) -> np.ndarray:
        y = np.zeros(self.pin.nv)
        y[self.idx] = x
        return y

    def random_state(self, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        m = self.model
        lo = np.where(np.isfinite(m.position_lower), m.position_lower, -np.pi)
        hi = np.where(np.isfinite(m.position_upper), m.position_upper, np.pi)
        return rng.uniform(lo, hi), rng.normal(0, 1.5, m.nv), rng.normal(0, 3.0, m.nv)

    def jacobian(self, q: np.ndarray, link: str) -> np.ndarray:
        """6×n frame Jacobian, LOCAL_WORLD_ALIGNED (root axes, at the link origin), linear first."""
        fid = self.pin.getFrameId(link)
        pin.computeJointJacobians(self.pin, self.data, self.to_pin(q))
        pin.updateFramePlacements(self.pin, self.data)
        return pin.getFrameJacobian(self.pin, self.data, fid, pin.LOCAL_WORLD_ALIGNED)[:, self.idx]

    def minverse(self, q: np.ndarray) -> np.ndarray:
        return sym(pin.computeMinverse(self.pin, self.data, self.to_pin(q)))[np.ix_(self.idx, self.idx)]

    def mass(self, q: np.ndarray) -> np.ndarray:
        return sym(pin.crba(self.pin, self.data, self.to_pin(q)))[np.ix_(self.idx, self.idx)]

    def nle(self, q: np.ndarray, qd: np.ndarray, gravity=(0.0, 0.0, -9.81)) -> np.ndarray:
        """c(q, q̇) + g(q)."""
        self.pin.gravity.linear = np.asarray(gravity, dtype=float)
        try:
            return pin.nonLinearEffects(self.pin, self.data, self.to_pin(q), self.to_pin(qd))[self.idx]
        finally:
            self.pin.gravity.linear = np.array([0.0, 0.0, -9.81])

    def classical_acceleration(self, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray, link: str) -> np.ndarray:
        """[a; ω̇] of the link origin, root axes (LOCAL_WORLD_ALIGNED)."""
        fid = self.pin.getFrameId(link)
        pin.forwardKinematics(self.pin, self.data, self.to_pin(q), self.to_pin(qd), self.to_pin(qdd))
        pin.updateFramePlacements(self.pin, self.data)
        acc = pin.getFrameClassicalAcceleration(self.pin, self.data, fid, pin.LOCAL_WORLD_ALIGNED)
        return np.concatenate([acc.linear, acc.angular])

    def inertia_inverse(self, q: np.ndarray, link: str, s: np.ndarray | None = None) -> np.ndarray:
        """S J M⁻¹ Jᵀ Sᵀ from Pinocchio's Jacobian and M⁻¹."""
        j = self.jacobian(q, link)
        if s is not None:
            j = s @ j
        return j @ self.minverse(q) @ j.T

    def fext(self, q: np.ndarray, link: str, wrench: np.ndarray) -> list:
        """Pinocchio's per-joint forces for `wrench` exerted BY `link` (root axes, about its origin)."""
        fid = self.pin.getFrameId(link)
        frame = self.pin.frames[fid]
        pin.framesForwardKinematics(self.pin, self.data, self.to_pin(q))
        rot = self.data.oMf[fid].rotation
        on_body_local = pin.Force(-rot.T @ wrench[:3], -rot.T @ wrench[3:])
        fext = [pin.Force.Zero() for _ in range(self.pin.njoints)]
        fext[frame.parentJoint] = frame.placement.act(on_body_local)
        return fext

    def aba(self, q: np.ndarray, qd: np.ndarray, tau: np.ndarray, fext: list | None = None) -> np.ndarray:
        args = (self.pin, self.data, self.to_pin(q), self.to_pin(qd), self.to_pin(tau))
        return (pin.aba(*args) if fext is None else pin.aba(*args, fext))[self.idx]

    def rnea(self, q, qd, qdd, fext: list | None = None) -> np.ndarray:
        args = (self.pin, self.data, self.to_pin(q), self.to_pin(qd), self.to_pin(qdd))
        return (pin.rnea(*args) if fext is None else pin.rnea(*args, fext))[self.idx]
