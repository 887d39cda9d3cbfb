"""The momentum observer's kernels (`rnea_ros.estimation.momentum`, `rnea_ros.estimation.observer`):
p = M q̇ and Cᵀ q̇ in O(n) (S_* record), a link's Jacobian, one observer step (OB_* options) and
the damped tip wrench.
"""

from __future__ import annotations

import math

from rnea_ros.compiled.jit import njit
from rnea_ros.compiled.kernels.fixed_root import gravity_kernel
from rnea_ros.compiled.kernels.layout import (
    B_ARMATURE,
    B_AXIS,
    B_INERTIA,
    B_MASS,
    B_MOMENT,
    JTYPE,
    NOT_FINITE,
    OK,
    PARENT,
    REVOLUTE,
    TREE_STRIDE,
    W_POS,
    W_ROT,
    W_ROT_ROOT,
    WS_STRIDE,
    unpack,
)
from rnea_ros.compiled.kernels.passes import joint_transforms, root_rotations

# The momentum observer's kernels (rnea_ros.estimation.momentum): here, with the layout they read, so that
# numba's cache of them follows this file.
S_OMEGA = 0  # angular velocity, body frame
S_VEL = 3  # linear velocity of the body origin, body frame
S_LIN = 6  # subtree linear momentum, body frame
S_ANG = 9  # subtree angular momentum about the body origin, body frame
S_STRIDE = 12


@njit
def momentum_kernel(tree, q, qd, ws, scratch, p, ctqd):
    """Fill p = M q̇ and ctqd = Cᵀ q̇ (see the module docstring); OK or NOT_FINITE."""
    n = len(tree) // TREE_STRIDE
    joint_transforms(tree, q, ws)
    for i in range(n):
        b = i * TREE_STRIDE
        w = i * WS_STRIDE
        s = i * S_STRIDE
        lam = int(tree[b + PARENT])
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
            px = ws[w + W_POS]
            py = ws[w + W_POS + 1]
            pz = ws[w + W_POS + 2]
            # velocity of this body's origin, parent frame: v_p + ω_p × p
            vpx = scratch[u + S_VEL] + wpy * pz - wpz * py
            vpy = scratch[u + S_VEL + 1] + wpz * px - wpx * pz
            vpz = scratch[u + S_VEL + 2] + wpx * py - wpy * px
        r = w + W_ROT
        wx = ws[r] * wpx + ws[r + 3] * wpy + ws[r + 6] * wpz
        wy = ws[r + 1] * wpx + ws[r + 4] * wpy + ws[r + 7] * wpz
        wz = ws[r + 2] * wpx + ws[r + 5] * wpy + ws[r + 8] * wpz
        vx = ws[r] * vpx + ws[r + 3] * vpy + ws[r + 6] * vpz
        vy = ws[r + 1] * vpx + ws[r + 4] * vpy + ws[r + 7] * vpz
        vz = ws[r + 2] * vpx + ws[r + 5] * vpy + ws[r + 8] * vpz
        ex = tree[b + B_AXIS]
        ey = tree[b + B_AXIS + 1]
        ez = tree[b + B_AXIS + 2]
        if tree[b + JTYPE] == REVOLUTE:
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
        m = tree[b + B_MASS]
        hx = tree[b + B_MOMENT]
        hy = tree[b + B_MOMENT + 1]
        hz = tree[b + B_MOMENT + 2]
        ixx = tree[b + B_INERTIA]
        ixy = tree[b + B_INERTIA + 1]
        ixz = tree[b + B_INERTIA + 2]
        iyy = tree[b + B_INERTIA + 3]
        iyz = tree[b + B_INERTIA + 4]
        izz = tree[b + B_INERTIA + 5]
        # linear momentum m v + ω × h; angular about the origin I_o ω + h × v
        scratch[s + S_LIN] = m * vx + wy * hz - wz * hy
        scratch[s + S_LIN + 1] = m * vy + wz * hx - wx * hz
        scratch[s + S_LIN + 2] = m * vz + wx * hy - wy * hx
        scratch[s + S_ANG] = ixx * wx + ixy * wy + ixz * wz + hy * vz - hz * vy
        scratch[s + S_ANG + 1] = ixy * wx + iyy * wy + iyz * wz + hz * vx - hx * vz
        scratch[s + S_ANG + 2] = ixz * wx + iyz * wy + izz * wz + hx * vy - hy * vx
    ok = True
    for i in range(n - 1, -1, -1):
        b = i * TREE_STRIDE
        w = i * WS_STRIDE
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
        ex = tree[b + B_AXIS]
        ey = tree[b + B_AXIS + 1]
        ez = tree[b + B_AXIS + 2]
        if tree[b + JTYPE] == REVOLUTE:
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
        p[i] += tree[b + B_ARMATURE] * qd[i]
        ctqd[i] = -(ex * gx + ey * gy + ez * gz)
        if not (math.isfinite(p[i]) and math.isfinite(ctqd[i])):
            ok = False
        lam = int(tree[b + PARENT])
        if lam >= 0:
            # subtree momentum into the parent frame, angular part about the parent origin
            r = w + W_ROT
            px = ws[w + W_POS]
            py = ws[w + W_POS + 1]
            pz = ws[w + W_POS + 2]
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
    return OK if ok else NOT_FINITE


@njit
def link_jacobian_kernel(tree, q, ws, point, pos, rot, jac):
    """jac (6·n, row-major 6×n) = the geometric Jacobian of a point (point = [body, x, y, z], the
    point in the body frame; body >= 0), root axes, linear rows first; rot (9) = the body's
    rotation in the root frame, row-major; pos (3·n) is scratch (the bodies' origins, root frame)."""
    n = len(tree) // TREE_STRIDE
    body = int(point[0])
    offset = point[1:4]
    joint_transforms(tree, q, ws)
    root_rotations(tree, ws)
    for i in range(n):
        lam = int(tree[i * TREE_STRIDE + PARENT])
        w = i * WS_STRIDE + W_POS
        if lam < 0:
            for a in range(3):
                pos[3 * i + a] = ws[w + a]
        else:
            u = lam * WS_STRIDE + W_ROT_ROOT
            for a in range(3):
                pos[3 * i + a] = (
                    pos[3 * lam + a]
                    + ws[u + 3 * a] * ws[w]
                    + ws[u + 3 * a + 1] * ws[w + 1]
                    + ws[u + 3 * a + 2] * ws[w + 2]
                )
    for a in range(6 * n):
        jac[a] = 0.0
    u = body * WS_STRIDE + W_ROT_ROOT
    for a in range(9):
        rot[a] = ws[u + a]
    tx = pos[3 * body] + rot[0] * offset[0] + rot[1] * offset[1] + rot[2] * offset[2]
    ty = pos[3 * body + 1] + rot[3] * offset[0] + rot[4] * offset[1] + rot[5] * offset[2]
    tz = pos[3 * body + 2] + rot[6] * offset[0] + rot[7] * offset[1] + rot[8] * offset[2]
    i = body
    while i >= 0:
        b = i * TREE_STRIDE
        r = i * WS_STRIDE + W_ROT_ROOT
        ex = tree[b + B_AXIS]
        ey = tree[b + B_AXIS + 1]
        ez = tree[b + B_AXIS + 2]
        ax = ws[r] * ex + ws[r + 1] * ey + ws[r + 2] * ez
        ay = ws[r + 3] * ex + ws[r + 4] * ey + ws[r + 5] * ez
        az = ws[r + 6] * ex + ws[r + 7] * ey + ws[r + 8] * ez
        if tree[b + JTYPE] == REVOLUTE:
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
        i = int(tree[b + PARENT])
    return OK


# Observer step record (`options` of observer_step_kernel)
OB_DT = 0  # s since the previous sample
OB_FIRST = 1  # 1: this sample only initialises
OB_GRAVITY = 2  # 1: the measured effort includes the gravity torque
OB_FRICTION = 3  # 1: subtract the friction of the OR_VISCOUS ... OR_STRIBECK rows
OB_SMOOTHING = 4  # v_ε of the friction's tanh
OB_SIZE = 5
# Rows of the observer's per-joint table (`table` of observer_step_kernel): the friction it
# subtracts (viscous, Coulomb, static, Stribeck velocity), the gain K_O (rad/s), then its state:
# the last momentum p, the last known integrand τ_m + Cᵀ q̇ − g, and the estimate r of τ_ext.
OR_VISCOUS, OR_COULOMB, OR_STATIC, OR_STRIBECK, OR_GAIN = range(5)
OR_MOMENTUM, OR_KNOWN, OR_RESIDUAL = range(5, 8)
OR_ROWS = 8


@njit
def observer_step_kernel(record, q, qd, tau, table, scratch, options):
    """One step of the momentum observer (rnea_ros.estimation.observer) on the packed record
    `record` (layout: the tree, the gravity, the workspace): updates the OR_MOMENTUM, OR_KNOWN and
    OR_RESIDUAL rows of `table` (OR_ROWS, n) in place from q, q̇ and the measured effort tau.
    scratch: S_STRIDE n + 2 n. A status."""
    tree, gravity, ws, _ = unpack(record)
    n = len(tree) // TREE_STRIDE
    s = n * S_STRIDE
    if momentum_kernel(tree, q, qd, ws, scratch, scratch[s : s + n], scratch[s + n : s + 2 * n]) != OK:
        return NOT_FINITE
    g = scratch[:n]  # the momentum pass's scratch is free again
    if gravity_kernel(tree, q, gravity, ws, g) != OK:
        return NOT_FINITE
    dt = options[OB_DT]
    first = options[OB_FIRST] != 0.0
    with_gravity = options[OB_GRAVITY] != 0.0
    with_friction = options[OB_FRICTION] != 0.0
    v_eps = options[OB_SMOOTHING]
    r = table[OR_RESIDUAL]
    for i in range(n):
        known = scratch[s + n + i] + tau[i]
        if with_gravity:
            known -= g[i]
        if with_friction:
            v = qd[i]
            fc = table[OR_COULOMB, i]
            level = fc + (table[OR_STATIC, i] - fc) * math.exp(-((v / table[OR_STRIBECK, i]) ** 2))
            known -= table[OR_VISCOUS, i] * v + level * math.tanh(v / v_eps)
        p = scratch[s + i]
        if first:
            r[i] = 0.0
        else:
            dy = p - table[OR_MOMENTUM, i] - 0.5 * dt * (known + table[OR_KNOWN, i])
            a = math.exp(-table[OR_GAIN, i] * dt)
            r[i] = a * r[i] + (1.0 - a) * (dy / dt)
        table[OR_MOMENTUM, i] = p
        table[OR_KNOWN, i] = known
        if not math.isfinite(r[i]):
            return NOT_FINITE
    return OK


@njit
def damped_wrench_kernel(jac, tau_ext, damping, a, wrench):
    """wrench (6) = −(J Jᵀ + λ² 1)⁻¹ J τ_ext for jac (6·n, row-major 6×n), λ = damping[0]
    (Cholesky; `a`: 36 floats of scratch). NOT_FINITE when J Jᵀ + λ² 1 is numerically singular (a
    rank-deficient Jacobian with λ² below 1e-12 of its largest diagonal entry)."""
    n = len(tau_ext)
    lam2 = damping[0] * damping[0]
    for r in range(6):
        for c in range(r, 6):
            s = 0.0
            for j in range(n):
                s += jac[r * n + j] * jac[c * n + j]
            a[6 * r + c] = s
            a[6 * c + r] = s
        a[7 * r] += lam2
        b = 0.0
        for j in range(n):
            b += jac[r * n + j] * tau_ext[j]
        wrench[r] = b
    scale = 0.0
    for r in range(6):
        scale = max(scale, a[7 * r])
    for j in range(6):  # a = L Lᵀ, L in the lower triangle
        d = a[7 * j]
        for m in range(j):
            d -= a[6 * j + m] * a[6 * j + m]
        if not d > 1e-12 * scale:  # rank-deficient (or not finite): the caller falls back
            return NOT_FINITE
        d = math.sqrt(d)
        a[7 * j] = d
        for i in range(j + 1, 6):
            s = a[6 * i + j]
            for m in range(j):
                s -= a[6 * i + m] * a[6 * j + m]
            a[6 * i + j] = s / d
    for i in range(6):  # L y = b
        s = wrench[i]
        for m in range(i):
            s -= a[6 * i + m] * wrench[m]
        wrench[i] = s / a[7 * i]
    for i in range(5, -1, -1):  # Lᵀ x = y
        s = wrench[i]
        for m in range(i + 1, 6):
            s -= a[6 * m + i] * wrench[m]
        wrench[i] = s / a[7 * i]
    for i in range(6):
        wrench[i] = -wrench[i]
        if not math.isfinite(wrench[i]):
            return NOT_FINITE
    return OK
