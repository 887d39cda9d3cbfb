"""The Lagrangian form of a RobotModel's dynamics: ∂M/∂q, Christoffel symbols Γ(q), the Coriolis
matrix C(q, q̇), Ṁ(q, q̇), and the terms the momentum observer needs.

    τ = M(q) q̈ + C(q, q̇) q̇ + g(q),   C_ij = Σ_k Γ_ijk q̇_k,
    Γ_ijk = ½ (∂M_ij/∂q_k + ∂M_ik/∂q_j − ∂M_jk/∂q_i)       (seed 004, Modern Robotics §8.1.3)

so C q̇ = c(q, q̇) (rnea with q̈ = 0, no gravity), Ṁ = C + Cᵀ and Ṁ − 2C is skew-symmetric.

Algorithm (exact, no differencing): every rigid body b of the system is written with its world
(root-frame) Jacobian J_b, whose column j is s_j S_j for each joint j on its chain from the root
(S_j the joint's world screw [angular; linear] at the root origin, s_j = 1 for a link, the gear
ratio for a rotor), and its spatial inertia I_b at the root origin. Then M = Σ_b J_bᵀ I_b J_b, and
for a joint k on b's chain ∂S_j/∂q_k = s_k S_k × S_j (k before j), ∂I_b/∂q_k = s_k (S_k ×* I_b −
I_b S_k ×), which gives ∂M/∂q_k in closed form. O(n³) numpy work per configuration: meant for
analysis and tests, not for a 1 kHz loop; the observer uses `momentum_terms` instead (O(n),
compiled), which gives p = M q̇ and Cᵀ q̇ = ∂T/∂q (T = ½ q̇ᵀ M q̇) without forming C.

Rotors (`rnea_ros.algorithms.gearing`) enter as extra bodies: a rotor of joint j sits on j's parent link,
coaxial with joint j at its origin, and turns at G_j q̇_j relative to that link.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np
import numpy.typing as npt

from rnea_ros.algorithms.dynamics import body_poses, joint_vector
from rnea_ros.compiled.kernels.layout import B_AXIS, B_INERTIA, B_MASS, B_MOMENT, BODY_STRIDE, REVOLUTE
from rnea_ros.model.robot_model import RobotModel

__all__ = ["Rotors", "christoffel", "coriolis_matrix", "mass_matrix_derivative", "mass_matrix_partials"]


class Rotors(Protocol):
    """The rotors of geared joints, per joint in model order (`rnea_ros.algorithms.gearing.Gearing`):
    gear ratio G (0: no rotor), rotor inertia about its axis and across it (kg m², motor side)."""

    @property
    def ratio(self) -> np.ndarray: ...

    @property
    def rotor_inertia(self) -> np.ndarray: ...

    @property
    def rotor_transverse(self) -> np.ndarray | None: ...


def _crm(v: np.ndarray) -> np.ndarray:
    """Spatial motion cross product matrix v× for v = [ω; v] (6,)."""
    w, u = v[:3], v[3:]
    wx = np.array([[0.0, -w[2], w[1]], [w[2], 0.0, -w[0]], [-w[1], w[0], 0.0]])
    ux = np.array([[0.0, -u[2], u[1]], [u[2], 0.0, -u[0]], [-u[1], u[0], 0.0]])
    out = np.zeros((6, 6))
    out[:3, :3] = wx
    out[3:, :3] = ux
    out[3:, 3:] = wx
    return out


Chain = list[tuple[int, np.ndarray]]  # (joint, Jacobian column) from the root


def _system(model: RobotModel, q: np.ndarray, gearing: Rotors | None) -> tuple[list[np.ndarray], list[Chain]]:
    """Per rigid body its spatial inertia at the root origin (6×6) and its chain [(joint j,
    column s_j S_j), ...] from the root (a rotor's own column is the revolute screw about its axis,
    also for a prismatic joint)."""
    rot, pos = body_poses(model, q)
    n = model.nv
    screws = np.zeros((n, 6))
    inertias: list[np.ndarray] = []
    chains: list[Chain] = []
    parent = [int(p) for p in model.parent]
    for i in range(n):
        b = i * BODY_STRIDE
        axis = rot[i] @ model.body[b + B_AXIS : b + B_AXIS + 3]
        if model.jtype[i] == REVOLUTE:
            screws[i, :3] = axis
            screws[i, 3:] = np.cross(pos[i], axis)  # velocity of the point at the root origin
        else:
            screws[i, 3:] = axis
        mass = model.body[b + B_MASS]
        h = model.body[b + B_MOMENT : b + B_MOMENT + 3]
        xx, xy, xz, yy, yz, zz = model.body[b + B_INERTIA : b + B_INERTIA + 6]
        i_o = np.array([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]])
        # body-frame spatial inertia at the body origin, then to the root origin: I0 = Xᵀ I X
        hx = np.array([[0.0, -h[2], h[1]], [h[2], 0.0, -h[0]], [-h[1], h[0], 0.0]])
        body_i = np.block([[i_o, hx], [hx.T, mass * np.eye(3)]])
        r, p = rot[i], pos[i]
        px = np.array([[0.0, -p[2], p[1]], [p[2], 0.0, -p[0]], [-p[1], p[0], 0.0]])
        x = np.block([[r.T, np.zeros((3, 3))], [-r.T @ px, r.T]])
        inertias.append(x.T @ body_i @ x)
        chains.append(_links(i, parent, screws))
    if gearing is not None:
        for j in range(n):
            if gearing.ratio[j] == 0.0:
                continue
            z = screws[j, :3] if model.jtype[j] == REVOLUTE else screws[j, 3:]
            zz_ = np.outer(z, z)
            rotor = np.zeros((6, 6))
            transverse = np.asarray(gearing.rotor_transverse)[j]
            rotor[:3, :3] = gearing.rotor_inertia[j] * zz_ + transverse * (np.eye(3) - zz_)
            inertias.append(rotor)  # massless: the same at any reference point
            own = np.concatenate([z, np.cross(pos[j], z)])  # revolute about the joint axis
            chains.append([*_links(parent[j], parent, screws), (j, gearing.ratio[j] * own)])
    return inertias, chains


def _links(i: int, parent: list[int], screws: np.ndarray) -> Chain:
    """The chain of link i: its joint and its ancestors' with their world screws, root first."""
    chain = []
    while i >= 0:
        chain.append((i, screws[i]))
        i = parent[i]
    return chain[::-1]


def mass_matrix_partials(
    model: RobotModel, q: npt.ArrayLike, gearing: Rotors | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """(M (n, n), ∂M/∂q (n, n, n) with [k] = ∂M/∂q_k) at one configuration q (n,).

    M includes the model's armature diagonal and, with `gearing`, the rotors as bodies."""
    q = joint_vector(model, q)
    n = model.nv
    inertias, chains = _system(model, q, gearing)
    mass = np.diag(model.armature)
    dm = np.zeros((n, n, n))
    for inertia, chain in zip(inertias, chains, strict=True):
        jac = np.zeros((6, n))
        for j, col in chain:
            jac[:, j] += col
        ij = inertia @ jac
        mass += jac.T @ ij
        for pos_k, (kk, col_k) in enumerate(chain):
            crm = _crm(col_k)  # ∂/∂q_k of what comes after k on the chain: col_k × (·)
            djac = np.zeros((6, n))
            for j, col in chain[pos_k + 1 :]:
                djac[:, j] += crm @ col
            di = -crm.T @ inertia - inertia @ crm  # col_k×* I − I col_k×, with ×* = −(×)ᵀ
            term = djac.T @ ij
            dm[kk] += term + term.T + jac.T @ di @ jac
    return mass, dm


def christoffel(model: RobotModel, q: npt.ArrayLike, gearing: Rotors | None = None) -> np.ndarray:
    """Christoffel symbols of the first kind Γ (n, n, n), Γ[i, j, k] = Γ_ijk (see the module
    docstring), so that c(q, q̇)_i = q̇ᵀ Γ[i] q̇."""
    _, dm = mass_matrix_partials(model, q, gearing)
    d = np.transpose(dm, (1, 2, 0))  # d[i, j, k] = ∂M_ij/∂q_k
    return 0.5 * (d + np.transpose(d, (0, 2, 1)) - np.transpose(d, (2, 1, 0)))


def coriolis_matrix(
    model: RobotModel, q: npt.ArrayLike, qd: npt.ArrayLike, gearing: Rotors | None = None
) -> np.ndarray:
    """Coriolis matrix C(q, q̇) (n, n) from the Christoffel symbols: C q̇ = c(q, q̇) and
    Ṁ − 2C skew-symmetric."""
    qd = joint_vector(model, qd)
    return christoffel(model, q, gearing) @ qd


def mass_matrix_derivative(
    model: RobotModel, q: npt.ArrayLike, qd: npt.ArrayLike, gearing: Rotors | None = None
) -> np.ndarray:
    """Ṁ(q, q̇) = Σ_k ∂M/∂q_k q̇_k (n, n)."""
    qd = joint_vector(model, qd)
    _, dm = mass_matrix_partials(model, q, gearing)
    return np.tensordot(qd, dm, axes=(0, 0))
