"""The configuration space of a model with a floating or planar root: neutral configuration, base
placement, integration and difference (Pinocchio's `neutral`, `integrate`, `difference`).

Layout (Pinocchio's): a free-flyer root ("floating") has q[0:3] the base position in the world
(m) and q[3:7] a unit quaternion (x, y, z, w) for its orientation; v[0:3] the base's linear and
v[3:6] its angular velocity, both in the base frame. A planar root has q = (x, y, cos θ, sin θ)
and v = (v_x, v_y, ω_z), base frame. The movable joints follow in `model.joint_names` order, one
coordinate each in q and v (continuous joints included, as angles). A fixed root has no
coordinates: q and v are the joints'.

The root joint moves on SE(3) (free flyer) or SE(2) (planar): `integrate` follows the constant
base-frame twist v for dt (the exponential map), `difference` is its inverse (the logarithm),
as in Pinocchio; the joints add and subtract.
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

from rnea_ros.compiled.kernels.layout import RT_POS, RT_ROT
from rnea_ros.errors import RneaError
from rnea_ros.model.robot_model import RobotModel

__all__ = ["base_placement", "difference", "integrate", "neutral"]

_SMALL = 1e-8  # rad: below this angle the series of the SE(3) and SE(2) maps are used


def neutral(model: RobotModel) -> np.ndarray:
    """The configuration with the root joint at its origin and every joint at 0 (nq)."""
    q = np.zeros(model.nq)
    if model.root_joint == "floating":
        q[6] = 1.0
    elif model.root_joint == "planar":
        q[2] = 1.0
    return q


def _configuration(model: RobotModel, q: npt.ArrayLike, name: str) -> np.ndarray:
    try:
        a = np.array(q, dtype=float)
    except (TypeError, ValueError):
        raise RneaError(f"{name} must be an array of numbers") from None
    if a.shape != (model.nq,) or not np.all(np.isfinite(a)):
        raise RneaError(f"{name} must be {model.nq} finite numbers (nq), got shape {a.shape}")
    return a


def _velocity(model: RobotModel, v: npt.ArrayLike, name: str) -> np.ndarray:
    try:
        a = np.array(v, dtype=float)
    except (TypeError, ValueError):
        raise RneaError(f"{name} must be an array of numbers") from None
    if a.shape != (model.nv,) or not np.all(np.isfinite(a)):
        raise RneaError(f"{name} must be {model.nv} finite numbers (nv), got shape {a.shape}")
    return a


def _rotation(quat: np.ndarray) -> np.ndarray:
    """Rotation matrix of a unit quaternion (x, y, z, w)."""
    x, y, z, w = quat
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
            [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
            [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
        ]
    )


def _product(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Quaternion product a ⊗ b, (x, y, z, w) order."""
    ax, ay, az, aw = a
    bx, by, bz, bw = b
    return np.array(
        [
            aw * bx + ax * bw + ay * bz - az * by,
            aw * by - ax * bz + ay * bw + az * bx,
            aw * bz + ax * by - ay * bx + az * bw,
            aw * bw - ax * bx - ay * by - az * bz,
        ]
    )


def _skew(w: np.ndarray) -> np.ndarray:
    return np.array([[0.0, -w[2], w[1]], [w[2], 0.0, -w[0]], [-w[1], w[0], 0.0]])


def _unit(model: RobotModel, q: np.ndarray, name: str) -> None:
    part = q[3:7] if model.root_joint == "floating" else q[2:4]
    if abs(float(part @ part) - 1.0) > 1e-6:
        which = "[3:7] (the base quaternion)" if model.root_joint == "floating" else "[2:4] (cos θ, sin θ)"
        raise RneaError(f"{name}{which} must have unit norm, got {math.sqrt(float(part @ part)):.9g}")


def base_placement(model: RobotModel, q: npt.ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """(rotation 3×3, origin 3 in m) of the root link (the base) in the world at configuration q;
    the identity for a fixed root (whose root frame is the world of the other functions)."""
    q = _configuration(model, q, "q")
    if not model.floating:
        return np.eye(3), np.zeros(3)
    _unit(model, q, "q")
    if model.root_joint == "floating":
        rot, pos = _rotation(q[3:7]), q[0:3]
    else:
        c, s = q[2], q[3]
        rot = np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])
        pos = np.array([q[0], q[1], 0.0])
    rec = model.root_record
    r0 = rec[RT_ROT : RT_ROT + 9].reshape(3, 3)
    return r0 @ rot, r0 @ pos + rec[RT_POS : RT_POS + 3]


def _se3_v(w: np.ndarray) -> tuple[np.ndarray, float]:
    """V(ω) of the SE(3) exponential (p = V v) and the angle |ω|."""
    theta = float(np.linalg.norm(w))
    k = _skew(w)
    if theta < _SMALL:
        return np.eye(3) + 0.5 * k + (k @ k) / 6.0, theta
    t2 = theta * theta
    return np.eye(3) + (1 - math.cos(theta)) / t2 * k + (theta - math.sin(theta)) / (t2 * theta) * (
        k @ k
    ), theta


def _se2_v(theta: float) -> np.ndarray:
    """V(θ) of the SE(2) exponential (p = V v)."""
    if abs(theta) < _SMALL:
        return np.array([[1.0, -0.5 * theta], [0.5 * theta, 1.0]])
    s, c = math.sin(theta), math.cos(theta)
    return np.array([[s / theta, -(1 - c) / theta], [(1 - c) / theta, s / theta]])


def integrate(model: RobotModel, q: npt.ArrayLike, v: npt.ArrayLike, dt: float = 1.0) -> np.ndarray:
    """The configuration reached from q by the constant velocity v (nv, base-frame root twist)
    during dt seconds: q ⊕ v dt (the quaternion, or cos θ, sin θ, normalised). RneaError for bad
    sizes, non-finite values or a root orientation of non-unit norm."""
    q = _configuration(model, q, "q")
    v = _velocity(model, v, "v") * float(dt)
    out = q.copy()
    nq0, nv0 = model.root_nq, model.root_nv
    out[nq0:] += v[nv0:]
    if model.root_joint == "floating":
        _unit(model, q, "q")
        quat = q[3:7]
        vel, w = v[0:3], v[3:6]
        big_v, theta = _se3_v(w)
        out[0:3] = q[0:3] + _rotation(quat) @ (big_v @ vel)
        half = 0.5 * theta
        axis = w * (0.5 if theta < _SMALL else math.sin(half) / theta)
        res = _product(quat, np.array([axis[0], axis[1], axis[2], math.cos(half)]))
        if float(res @ quat) < 0.0:
            res = -res
        out[3:7] = res / np.linalg.norm(res)
    elif model.root_joint == "planar":
        _unit(model, q, "q")
        c, s = q[2], q[3]
        rot = np.array([[c, -s], [s, c]])
        out[0:2] = q[0:2] + rot @ (_se2_v(float(v[2])) @ v[0:2])
        cw, sw = math.cos(v[2]), math.sin(v[2])
        cs = np.array([c * cw - s * sw, s * cw + c * sw])
        out[2:4] = cs / np.linalg.norm(cs)
    return out


def difference(model: RobotModel, q0: npt.ArrayLike, q1: npt.ArrayLike) -> np.ndarray:
    """The velocity v (nv) with integrate(model, q0, v, 1) = q1: q1 ⊖ q0, the root part the
    base-frame twist of the shortest rotation."""
    q0 = _configuration(model, q0, "q0")
    q1 = _configuration(model, q1, "q1")
    nq0, nv0 = model.root_nq, model.root_nv
    v = np.zeros(model.nv)
    v[nv0:] = q1[nq0:] - q0[nq0:]
    if model.root_joint == "floating":
        _unit(model, q0, "q0")
        _unit(model, q1, "q1")
        a, b = q0[3:7], q1[3:7]
        rel = _product(np.array([-a[0], -a[1], -a[2], a[3]]), b)
        if rel[3] < 0.0:
            rel = -rel
        sin_half = float(np.linalg.norm(rel[0:3]))
        theta = 2.0 * math.atan2(sin_half, rel[3])
        w = rel[0:3] * (2.0 if sin_half < _SMALL else theta / sin_half)
        p = _rotation(a).T @ (q1[0:3] - q0[0:3])
        big_v, _ = _se3_v(w)
        v[0:3] = np.linalg.solve(big_v, p)
        v[3:6] = w
    elif model.root_joint == "planar":
        _unit(model, q0, "q0")
        _unit(model, q1, "q1")
        c0, s0, c1, s1 = q0[2], q0[3], q1[2], q1[3]
        theta = math.atan2(c0 * s1 - s0 * c1, c0 * c1 + s0 * s1)
        rot = np.array([[c0, -s0], [s0, c0]])
        p = rot.T @ (q1[0:2] - q0[0:2])
        v[0:2] = np.linalg.solve(_se2_v(theta), p)
        v[2] = theta
    return v
