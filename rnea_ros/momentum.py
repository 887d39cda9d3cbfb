"""Generalised momentum p = M(q) q̇ and Cᵀ(q, q̇) q̇, in O(n), for the momentum observer.

Cᵀ q̇ = Ṁ q̇ − C q̇ equals ∂T/∂q, the gradient of the kinetic energy T = ½ q̇ᵀ M q̇ at fixed q̇
(Lagrange: C q̇ = Ṁ q̇ − ∂T/∂q). With H_i the spatial momentum of body i's subtree and v_i the
body's spatial velocity, both in body i's frame, and S_i its joint's motion subspace:

    p_i = S_iᵀ H_i + armature_i q̇_i,      (∂T/∂q)_i = −S_iᵀ (v_i ×* H_i)

One pass root to tips (velocities, each body's momentum about its origin), one back (subtree
sums): a few hundred flops for a 7-joint arm, no matrix formed. The Coriolis matrix itself is in
`rnea_ros.lagrangian`. The kernel lives in this module (numba caches it next to it) and reads the
layout constants of `kernels`.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from . import kernels as k
from ._jit import njit
from .compiled import FA, F, Kernel
from .data import Data
from .dynamics import _single
from .errors import RneaError
from .model import RobotModel

__all__ = ["MOMENTUM", "momentum_terms"]

S_OMEGA = 0  # angular velocity, body frame
S_VEL = 3  # linear velocity of the body origin, body frame
S_LIN = 6  # subtree linear momentum, body frame
S_ANG = 9  # subtree angular momentum about the body origin, body frame
S_STRIDE = 12


@njit
def momentum_kernel(tree, q, qd, ws, scratch, p, ctqd):  # noqa: PLR0915 - one straight pass
    """Fill p = M q̇ and ctqd = Cᵀ q̇ (see the module docstring); k.OK or k.NOT_FINITE."""
    n = len(tree) // k.TREE_STRIDE
    k.joint_transforms(tree, q, ws)
    for i in range(n):
        b = i * k.TREE_STRIDE
        w = i * k.WS_STRIDE
        s = i * S_STRIDE
        lam = int(tree[b + k.PARENT])
        wpx = 0.0
        wpy = 0.0
        wpz = 0.0
        vpx = 0.0
        vpy = 0.0
        vpz = 0.0
        if lam >= 0:
            u = lam * S_STRIDE
            wpx = scratch[u + S_OMEGA]
            wpy = scratch[u + S_OMEGA + 1]
            wpz = scratch[u + S_OMEGA + 2]
            px = ws[w + k.W_POS]
            py = ws[w + k.W_POS + 1]
            pz = ws[w + k.W_POS + 2]
            # velocity of this body's origin, parent frame: v_p + ω_p × p
            vpx = scratch[u + S_VEL] + wpy * pz - wpz * py
            vpy = scratch[u + S_VEL + 1] + wpz * px - wpx * pz
            vpz = scratch[u + S_VEL + 2] + wpx * py - wpy * px
        r = w + k.W_ROT
        wx = ws[r] * wpx + ws[r + 3] * wpy + ws[r + 6] * wpz
        wy = ws[r + 1] * wpx + ws[r + 4] * wpy + ws[r + 7] * wpz
        wz = ws[r + 2] * wpx + ws[r + 5] * wpy + ws[r + 8] * wpz
        vx = ws[r] * vpx + ws[r + 3] * vpy + ws[r + 6] * vpz
        vy = ws[r + 1] * vpx + ws[r + 4] * vpy + ws[r + 7] * vpz
        vz = ws[r + 2] * vpx + ws[r + 5] * vpy + ws[r + 8] * vpz
        ex = tree[b + k.B_AXIS]
        ey = tree[b + k.B_AXIS + 1]
        ez = tree[b + k.B_AXIS + 2]
        if tree[b + k.JTYPE] == k.REVOLUTE:
            wx += ex * qd[i]
            wy += ey * qd[i]
            wz += ez * qd[i]
        else:
            vx += ex * qd[i]
            vy += ey * qd[i]
            vz += ez * qd[i]
        scratch[s + S_OMEGA] = wx
        scratch[s + S_OMEGA + 1] = wy
        scratch[s + S_OMEGA + 2] = wz
        scratch[s + S_VEL] = vx
        scratch[s + S_VEL + 1] = vy
        scratch[s + S_VEL + 2] = vz
        m = tree[b + k.B_MASS]
        hx = tree[b + k.B_MOMENT]
        hy = tree[b + k.B_MOMENT + 1]
        hz = tree[b + k.B_MOMENT + 2]
        ixx = tree[b + k.B_INERTIA]
        ixy = tree[b + k.B_INERTIA + 1]
        ixz = tree[b + k.B_INERTIA + 2]
        iyy = tree[b + k.B_INERTIA + 3]
        iyz = tree[b + k.B_INERTIA + 4]
        izz = tree[b + k.B_INERTIA + 5]
        # linear momentum m v + ω × h; angular about the origin I_o ω + h × v
        scratch[s + S_LIN] = m * vx + wy * hz - wz * hy
        scratch[s + S_LIN + 1] = m * vy + wz * hx - wx * hz
        scratch[s + S_LIN + 2] = m * vz + wx * hy - wy * hx
        scratch[s + S_ANG] = ixx * wx + ixy * wy + ixz * wz + hy * vz - hz * vy
        scratch[s + S_ANG + 1] = ixy * wx + iyy * wy + iyz * wz + hz * vx - hx * vz
        scratch[s + S_ANG + 2] = ixz * wx + iyz * wy + izz * wz + hx * vy - hy * vx
    ok = True
    for i in range(n - 1, -1, -1):
        b = i * k.TREE_STRIDE
        w = i * k.WS_STRIDE
        s = i * S_STRIDE
        wx = scratch[s + S_OMEGA]
        wy = scratch[s + S_OMEGA + 1]
        wz = scratch[s + S_OMEGA + 2]
        vx = scratch[s + S_VEL]
        vy = scratch[s + S_VEL + 1]
        vz = scratch[s + S_VEL + 2]
        lx = scratch[s + S_LIN]
        ly = scratch[s + S_LIN + 1]
        lz = scratch[s + S_LIN + 2]
        ax = scratch[s + S_ANG]
        ay = scratch[s + S_ANG + 1]
        az = scratch[s + S_ANG + 2]
        ex = tree[b + k.B_AXIS]
        ey = tree[b + k.B_AXIS + 1]
        ez = tree[b + k.B_AXIS + 2]
        if tree[b + k.JTYPE] == k.REVOLUTE:
            p[i] = ex * ax + ey * ay + ez * az
            # −e · (ω × k + v × l)
            gx = wy * az - wz * ay + vy * lz - vz * ly
            gy = wz * ax - wx * az + vz * lx - vx * lz
            gz = wx * ay - wy * ax + vx * ly - vy * lx
        else:
            p[i] = ex * lx + ey * ly + ez * lz
            gx = wy * lz - wz * ly
            gy = wz * lx - wx * lz
            gz = wx * ly - wy * lx
        p[i] += tree[b + k.B_ARMATURE] * qd[i]
        ctqd[i] = -(ex * gx + ey * gy + ez * gz)
        if not (np.isfinite(p[i]) and np.isfinite(ctqd[i])):
            ok = False
        lam = int(tree[b + k.PARENT])
        if lam >= 0:
            # subtree momentum into the parent frame, angular part about the parent origin
            r = w + k.W_ROT
            px = ws[w + k.W_POS]
            py = ws[w + k.W_POS + 1]
            pz = ws[w + k.W_POS + 2]
            plx = ws[r] * lx + ws[r + 1] * ly + ws[r + 2] * lz
            ply = ws[r + 3] * lx + ws[r + 4] * ly + ws[r + 5] * lz
            plz = ws[r + 6] * lx + ws[r + 7] * ly + ws[r + 8] * lz
            u = lam * S_STRIDE
            scratch[u + S_LIN] += plx
            scratch[u + S_LIN + 1] += ply
            scratch[u + S_LIN + 2] += plz
            scratch[u + S_ANG] += ws[r] * ax + ws[r + 1] * ay + ws[r + 2] * az + py * plz - pz * ply
            scratch[u + S_ANG + 1] += ws[r + 3] * ax + ws[r + 4] * ay + ws[r + 5] * az + pz * plx - px * plz
            scratch[u + S_ANG + 2] += ws[r + 6] * ax + ws[r + 7] * ay + ws[r + 8] * az + px * ply - py * plx
    return k.OK if ok else k.NOT_FINITE


MOMENTUM = Kernel(momentum_kernel, F, FA, FA, F, F, F, F)


@njit
def link_jacobian_kernel(tree, q, ws, point, rot, jac):
    """jac (6·n, row-major 6×n) = the geometric Jacobian of a point (point = [body, x, y, z], the
    point in the body frame; body >= 0), root axes, linear rows first; rot (9) = the body's
    rotation in the root frame, row-major."""
    n = len(tree) // k.TREE_STRIDE
    body = int(point[0])
    offset = point[1:4]
    k.joint_transforms(tree, q, ws)
    k.root_rotations(tree, ws)
    pos = np.empty(3 * n)
    for i in range(n):
        lam = int(tree[i * k.TREE_STRIDE + k.PARENT])
        w = i * k.WS_STRIDE + k.W_POS
        if lam < 0:
            for a in range(3):
                pos[3 * i + a] = ws[w + a]
        else:
            u = lam * k.WS_STRIDE + k.W_ROT_ROOT
            for a in range(3):
                pos[3 * i + a] = (
                    pos[3 * lam + a]
                    + ws[u + 3 * a] * ws[w]
                    + ws[u + 3 * a + 1] * ws[w + 1]
                    + ws[u + 3 * a + 2] * ws[w + 2]
                )
    for a in range(6 * n):
        jac[a] = 0.0
    u = body * k.WS_STRIDE + k.W_ROT_ROOT
    for a in range(9):
        rot[a] = ws[u + a]
    tx = pos[3 * body] + rot[0] * offset[0] + rot[1] * offset[1] + rot[2] * offset[2]
    ty = pos[3 * body + 1] + rot[3] * offset[0] + rot[4] * offset[1] + rot[5] * offset[2]
    tz = pos[3 * body + 2] + rot[6] * offset[0] + rot[7] * offset[1] + rot[8] * offset[2]
    i = body
    while i >= 0:
        b = i * k.TREE_STRIDE
        r = i * k.WS_STRIDE + k.W_ROT_ROOT
        ex = tree[b + k.B_AXIS]
        ey = tree[b + k.B_AXIS + 1]
        ez = tree[b + k.B_AXIS + 2]
        ax = ws[r] * ex + ws[r + 1] * ey + ws[r + 2] * ez
        ay = ws[r + 3] * ex + ws[r + 4] * ey + ws[r + 5] * ez
        az = ws[r + 6] * ex + ws[r + 7] * ey + ws[r + 8] * ez
        if tree[b + k.JTYPE] == k.REVOLUTE:
            dx = tx - pos[3 * i]
            dy = ty - pos[3 * i + 1]
            dz = tz - pos[3 * i + 2]
            jac[i] = ay * dz - az * dy
            jac[n + i] = az * dx - ax * dz
            jac[2 * n + i] = ax * dy - ay * dx
            jac[3 * n + i] = ax
            jac[4 * n + i] = ay
            jac[5 * n + i] = az
        else:
            jac[i] = ax
            jac[n + i] = ay
            jac[2 * n + i] = az
        i = int(tree[b + k.PARENT])
    return k.OK


LINK_JACOBIAN = Kernel(link_jacobian_kernel, F, FA, F, F, F, F)


def momentum_terms(
    model: RobotModel,
    q: npt.ArrayLike,
    qd: npt.ArrayLike,
    *,
    data: Data | None = None,
    scratch: np.ndarray | None = None,
    out: tuple[np.ndarray, np.ndarray] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """(p = M q̇, Cᵀ q̇) at one state (n,), armature included. `data` is the workspace
    (default: the model's default data); `scratch` (n·12 floats) and `out` (two (n,) float64
    arrays) avoid allocation; RneaError for non-finite input."""
    n = model.nv
    q = _single(model, q)
    qd = _single(model, qd)
    if scratch is None:
        scratch = np.empty(n * S_STRIDE)
    p, ctqd = (np.empty(n), np.empty(n)) if out is None else out
    ws = (model.default_data if data is None else data).ws
    if MOMENTUM.call(model.kernel_tree(), q, qd, ws, scratch, p, ctqd) != k.OK:
        raise RneaError("momentum_terms: q or qd contains NaN or Inf, or the result overflowed")
    return p, ctqd
