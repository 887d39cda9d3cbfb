"""Scalar-loop dynamics kernels over a model's flat arrays (compiled by numba when available).

The same source runs as plain Python on lists (see `_jit`), so every kernel reads and writes
flat 1-D sequences with explicit strides and spells out its 3-vector arithmetic.

Layout of `RobotModel.body` (one record of BODY_STRIDE floats per movable joint / body, in model
order):
  [0:9]   R_tree: rotation of the joint frame in the parent body frame at q = 0, row-major
  [9:12]  p_tree: joint frame origin in the parent body frame, m
  [12:15] axis: unit joint axis in the body frame
  [15]    mass, kg
  [16:19] h = mass * centre of mass, in the body frame, kg m
  [19:25] inertia about the body origin, body axes (xx, xy, xz, yy, yz, zz), kg m^2
  [25]    armature (reflected rotor inertia), kg m^2 or kg
The kernels take the whole model as one `tree` (fewer arguments: each costs ~0.08 µs to pass):
TREE_STRIDE values per body, the body record followed by [PARENT] the parent body (-1 for the
fixed root; parent < body) and [JTYPE] REVOLUTE or PRISMATIC. Body i's frame is the child link
frame of joint i.

Workspace `ws`: WS_STRIDE floats per body:
  [0:9] R (body in parent), [9:12] p (body origin in parent), [12:15] omega, [15:18] alpha,
  [18:21] a (linear acceleration of the body origin; includes -gravity), [21:24] f, [24:27] n
  (force and moment about the body origin that the parent transmits to the body, body frame),
  [27:36] rotation of the body in the root frame.

Wrenches: `wrench_body[k]` is the body of the k-th wrench; `wrench_data[12k:12k+12]` holds the
link origin in that body's frame (3), then the wrench the link exerts on its environment
(force 3, moment about the link origin 3) in root-frame axes, then 3 unused.
"""

from __future__ import annotations

import math

from ._jit import njit

BODY_STRIDE = 26
PARENT = 26
JTYPE = 27
TREE_STRIDE = 28
WS_STRIDE = 36
WRENCH_STRIDE = 12
REVOLUTE = 0
PRISMATIC = 1
# Status returned by the public kernels; on BAD_SIZE nothing has been written.
OK = 0
BAD_SIZE = 1
NOT_FINITE = 2


@njit
def joint_transforms(tree, q, ws):
    """Fill ws[R, p] with each body's pose in its parent for joint positions q."""
    for i in range(len(tree) // TREE_STRIDE):
        b = i * TREE_STRIDE
        w = i * WS_STRIDE
        r00 = tree[b]
        r01 = tree[b + 1]
        r02 = tree[b + 2]
        r10 = tree[b + 3]
        r11 = tree[b + 4]
        r12 = tree[b + 5]
        r20 = tree[b + 6]
        r21 = tree[b + 7]
        r22 = tree[b + 8]
        ax = tree[b + 12]
        ay = tree[b + 13]
        az = tree[b + 14]
        px = tree[b + 9]
        py = tree[b + 10]
        pz = tree[b + 11]
        if tree[b + JTYPE] == REVOLUTE:
            qi = q[i]
            c = math.cos(qi)
            s = math.sin(qi)
            t = 1.0 - c
            j00 = t * ax * ax + c
            j01 = t * ax * ay - s * az
            j02 = t * ax * az + s * ay
            j10 = t * ax * ay + s * az
            j11 = t * ay * ay + c
            j12 = t * ay * az - s * ax
            j20 = t * ax * az - s * ay
            j21 = t * ay * az + s * ax
            j22 = t * az * az + c
            ws[w] = r00 * j00 + r01 * j10 + r02 * j20
            ws[w + 1] = r00 * j01 + r01 * j11 + r02 * j21
            ws[w + 2] = r00 * j02 + r01 * j12 + r02 * j22
            ws[w + 3] = r10 * j00 + r11 * j10 + r12 * j20
            ws[w + 4] = r10 * j01 + r11 * j11 + r12 * j21
            ws[w + 5] = r10 * j02 + r11 * j12 + r12 * j22
            ws[w + 6] = r20 * j00 + r21 * j10 + r22 * j20
            ws[w + 7] = r20 * j01 + r21 * j11 + r22 * j21
            ws[w + 8] = r20 * j02 + r21 * j12 + r22 * j22
        else:
            d = q[i]
            px += (r00 * ax + r01 * ay + r02 * az) * d
            py += (r10 * ax + r11 * ay + r12 * az) * d
            pz += (r20 * ax + r21 * ay + r22 * az) * d
            for k in range(9):
                ws[w + k] = tree[b + k]
        ws[w + 9] = px
        ws[w + 10] = py
        ws[w + 11] = pz


@njit
def root_rotations(tree, ws):
    """Fill ws[27:36] with each body's rotation in the root frame (needs joint_transforms)."""
    for i in range(len(tree) // TREE_STRIDE):
        w = i * WS_STRIDE
        lam = int(tree[i * TREE_STRIDE + PARENT])
        if lam < 0:
            for k in range(9):
                ws[w + 27 + k] = ws[w + k]
            continue
        u = lam * WS_STRIDE + 27
        for r in range(3):
            for c in range(3):
                ws[w + 27 + 3 * r + c] = (
                    ws[u + 3 * r] * ws[w + c]
                    + ws[u + 3 * r + 1] * ws[w + 3 + c]
                    + ws[u + 3 * r + 2] * ws[w + 6 + c]
                )


@njit
def _add_wrenches(wrench_body, wrench_data, ws):
    """Add each link's wrench on the environment to f, n of its body (body frame, about origin)."""
    for k in range(len(wrench_body)):
        i = wrench_body[k]
        w = i * WS_STRIDE
        d = k * WRENCH_STRIDE
        ox = wrench_data[d]
        oy = wrench_data[d + 1]
        oz = wrench_data[d + 2]
        rw = w + 27
        fx = ws[rw] * wrench_data[d + 3] + ws[rw + 3] * wrench_data[d + 4] + ws[rw + 6] * wrench_data[d + 5]
        fy = (
            ws[rw + 1] * wrench_data[d + 3]
            + ws[rw + 4] * wrench_data[d + 4]
            + ws[rw + 7] * wrench_data[d + 5]
        )
        fz = (
            ws[rw + 2] * wrench_data[d + 3]
            + ws[rw + 5] * wrench_data[d + 4]
            + ws[rw + 8] * wrench_data[d + 5]
        )
        nx = ws[rw] * wrench_data[d + 6] + ws[rw + 3] * wrench_data[d + 7] + ws[rw + 6] * wrench_data[d + 8]
        ny = (
            ws[rw + 1] * wrench_data[d + 6]
            + ws[rw + 4] * wrench_data[d + 7]
            + ws[rw + 7] * wrench_data[d + 8]
        )
        nz = (
            ws[rw + 2] * wrench_data[d + 6]
            + ws[rw + 5] * wrench_data[d + 7]
            + ws[rw + 8] * wrench_data[d + 8]
        )
        ws[w + 21] += fx
        ws[w + 22] += fy
        ws[w + 23] += fz
        ws[w + 24] += nx + oy * fz - oz * fy
        ws[w + 25] += ny + oz * fx - ox * fz
        ws[w + 26] += nz + ox * fy - oy * fx


@njit
def _backward(tree, ws, tau):
    """Backward pass: accumulate f, n from the tips to the root and project on the joint axes."""
    for i in range(len(tree) // TREE_STRIDE - 1, -1, -1):
        b = i * TREE_STRIDE
        w = i * WS_STRIDE
        m = tree[b + 15]
        hx = tree[b + 16]
        hy = tree[b + 17]
        hz = tree[b + 18]
        ixx = tree[b + 19]
        ixy = tree[b + 20]
        ixz = tree[b + 21]
        iyy = tree[b + 22]
        iyz = tree[b + 23]
        izz = tree[b + 24]
        wx = ws[w + 12]
        wy = ws[w + 13]
        wz = ws[w + 14]
        dx = ws[w + 15]
        dy = ws[w + 16]
        dz = ws[w + 17]
        ax = ws[w + 18]
        ay = ws[w + 19]
        az = ws[w + 20]
        # omega x h, then F = m a + alpha x h + omega x (omega x h)
        ux = wy * hz - wz * hy
        uy = wz * hx - wx * hz
        uz = wx * hy - wy * hx
        fx = m * ax + dy * hz - dz * hy + wy * uz - wz * uy
        fy = m * ay + dz * hx - dx * hz + wz * ux - wx * uz
        fz = m * az + dx * hy - dy * hx + wx * uy - wy * ux
        # N = I alpha + omega x (I omega) + h x a
        lx = ixx * wx + ixy * wy + ixz * wz
        ly = ixy * wx + iyy * wy + iyz * wz
        lz = ixz * wx + iyz * wy + izz * wz
        nx = ixx * dx + ixy * dy + ixz * dz + wy * lz - wz * ly + hy * az - hz * ay
        ny = ixy * dx + iyy * dy + iyz * dz + wz * lx - wx * lz + hz * ax - hx * az
        nz = ixz * dx + iyz * dy + izz * dz + wx * ly - wy * lx + hx * ay - hy * ax
        fx += ws[w + 21]
        fy += ws[w + 22]
        fz += ws[w + 23]
        nx += ws[w + 24]
        ny += ws[w + 25]
        nz += ws[w + 26]
        ex = tree[b + 12]
        ey = tree[b + 13]
        ez = tree[b + 14]
        if tree[b + JTYPE] == REVOLUTE:
            tau[i] = ex * nx + ey * ny + ez * nz
        else:
            tau[i] = ex * fx + ey * fy + ez * fz
        lam = int(tree[b + PARENT])
        if lam >= 0:
            u = lam * WS_STRIDE
            r00 = ws[w]
            r01 = ws[w + 1]
            r02 = ws[w + 2]
            r10 = ws[w + 3]
            r11 = ws[w + 4]
            r12 = ws[w + 5]
            r20 = ws[w + 6]
            r21 = ws[w + 7]
            r22 = ws[w + 8]
            gx = r00 * fx + r01 * fy + r02 * fz
            gy = r10 * fx + r11 * fy + r12 * fz
            gz = r20 * fx + r21 * fy + r22 * fz
            px = ws[w + 9]
            py = ws[w + 10]
            pz = ws[w + 11]
            ws[u + 21] += gx
            ws[u + 22] += gy
            ws[u + 23] += gz
            ws[u + 24] += r00 * nx + r01 * ny + r02 * nz + py * gz - pz * gy
            ws[u + 25] += r10 * nx + r11 * ny + r12 * nz + pz * gx - px * gz
            ws[u + 26] += r20 * nx + r21 * ny + r22 * nz + px * gy - py * gx


@njit
def _all_finite(x):
    """True if no element of x is NaN or ±Inf (x - x is 0 for finite x, NaN otherwise)."""
    z = 0.0
    for i in range(len(x)):
        z += x[i] - x[i]
    return z == 0.0


@njit
def _forward(tree, qd, qdd, gravity, ws):
    """Forward pass: omega, alpha, a of every body (body frame); zero f, n (needs joint_transforms)."""
    for i in range(len(tree) // TREE_STRIDE):
        b = i * TREE_STRIDE
        w = i * WS_STRIDE
        lam = int(tree[b + PARENT])
        if lam < 0:
            wlx = 0.0
            wly = 0.0
            wlz = 0.0
            dlx = 0.0
            dly = 0.0
            dlz = 0.0
            alx = -gravity[0]
            aly = -gravity[1]
            alz = -gravity[2]
        else:
            u = lam * WS_STRIDE
            wlx = ws[u + 12]
            wly = ws[u + 13]
            wlz = ws[u + 14]
            dlx = ws[u + 15]
            dly = ws[u + 16]
            dlz = ws[u + 17]
            alx = ws[u + 18]
            aly = ws[u + 19]
            alz = ws[u + 20]
        px = ws[w + 9]
        py = ws[w + 10]
        pz = ws[w + 11]
        # acceleration of this body's origin, parent frame: a + alpha x p + omega x (omega x p)
        cx = wly * pz - wlz * py
        cy = wlz * px - wlx * pz
        cz = wlx * py - wly * px
        alx += dly * pz - dlz * py + wly * cz - wlz * cy
        aly += dlz * px - dlx * pz + wlz * cx - wlx * cz
        alz += dlx * py - dly * px + wlx * cy - wly * cx
        r00 = ws[w]
        r01 = ws[w + 1]
        r02 = ws[w + 2]
        r10 = ws[w + 3]
        r11 = ws[w + 4]
        r12 = ws[w + 5]
        r20 = ws[w + 6]
        r21 = ws[w + 7]
        r22 = ws[w + 8]
        # rotate parent quantities into this body's frame (R transposed)
        wx = r00 * wlx + r10 * wly + r20 * wlz
        wy = r01 * wlx + r11 * wly + r21 * wlz
        wz = r02 * wlx + r12 * wly + r22 * wlz
        dx = r00 * dlx + r10 * dly + r20 * dlz
        dy = r01 * dlx + r11 * dly + r21 * dlz
        dz = r02 * dlx + r12 * dly + r22 * dlz
        ax = r00 * alx + r10 * aly + r20 * alz
        ay = r01 * alx + r11 * aly + r21 * alz
        az = r02 * alx + r12 * aly + r22 * alz
        ex = tree[b + 12]
        ey = tree[b + 13]
        ez = tree[b + 14]
        v = qd[i]
        acc = qdd[i]
        vx = ex * v
        vy = ey * v
        vz = ez * v
        if tree[b + JTYPE] == REVOLUTE:
            dx += wy * vz - wz * vy + ex * acc
            dy += wz * vx - wx * vz + ey * acc
            dz += wx * vy - wy * vx + ez * acc
            wx += vx
            wy += vy
            wz += vz
        else:
            ax += 2.0 * (wy * vz - wz * vy) + ex * acc
            ay += 2.0 * (wz * vx - wx * vz) + ey * acc
            az += 2.0 * (wx * vy - wy * vx) + ez * acc
        ws[w + 12] = wx
        ws[w + 13] = wy
        ws[w + 14] = wz
        ws[w + 15] = dx
        ws[w + 16] = dy
        ws[w + 17] = dz
        ws[w + 18] = ax
        ws[w + 19] = ay
        ws[w + 20] = az
        ws[w + 21] = 0.0
        ws[w + 22] = 0.0
        ws[w + 23] = 0.0
        ws[w + 24] = 0.0
        ws[w + 25] = 0.0
        ws[w + 26] = 0.0


@njit
def _armature(tree, qdd, tau):
    """Add the reflected rotor inertia term armature * q̈ to tau."""
    for i in range(len(tau)):
        tau[i] += tree[i * TREE_STRIDE + 25] * qdd[i]


@njit
def _sizes_ok(n, q, qd, qdd, gravity, ws, tau):
    """True if every argument has the length a model of n bodies needs."""
    return (
        len(q) == n
        and len(qd) == n
        and len(qdd) == n
        and len(tau) == n
        and len(gravity) == 3
        and len(ws) >= n * WS_STRIDE
    )


@njit
def rnea_kernel(tree, q, qd, qdd, gravity, ws, tau):
    """Inverse dynamics τ = M q̈ + c + g into `tau` (gravity in the root frame, m/s²); a status."""
    if not _sizes_ok(len(tree) // TREE_STRIDE, q, qd, qdd, gravity, ws, tau):
        return BAD_SIZE
    joint_transforms(tree, q, ws)
    _forward(tree, qd, qdd, gravity, ws)
    _backward(tree, ws, tau)
    _armature(tree, qdd, tau)
    return OK if _all_finite(tau) else NOT_FINITE


@njit
def rnea_wrench_kernel(tree, q, qd, qdd, gravity, wrench_body, wrench_data, ws, tau):
    """rnea_kernel plus link wrenches, τ = M q̈ + c + g + Σ Jᵀ F (see the module doc); a status."""
    if not _sizes_ok(len(tree) // TREE_STRIDE, q, qd, qdd, gravity, ws, tau):
        return BAD_SIZE
    joint_transforms(tree, q, ws)
    _forward(tree, qd, qdd, gravity, ws)
    if len(wrench_body) > 0:
        root_rotations(tree, ws)
        _add_wrenches(wrench_body, wrench_data, ws)
    _backward(tree, ws, tau)
    _armature(tree, qdd, tau)
    return OK if _all_finite(tau) else NOT_FINITE


@njit
def rnea_batch_kernel(tree, q, qd, qdd, gravity, wrench_body, wrench_data, ws, tau):
    """rnea_wrench_kernel over the rows of (N, n) arrays q, qd, qdd into the rows of tau; a status."""
    status = OK
    for k in range(q.shape[0]):
        s = rnea_wrench_kernel(tree, q[k], qd[k], qdd[k], gravity, wrench_body, wrench_data, ws, tau[k])
        if s != OK:
            status = s
    return status


@njit
def gravity_kernel(tree, q, gravity, ws, tau):
    """Gravity torques g(q) into `tau` (RNEA with q̇ = q̈ = 0, gravity in the root frame); a status."""
    if not _sizes_ok(len(tree) // TREE_STRIDE, q, q, q, gravity, ws, tau):
        return BAD_SIZE
    joint_transforms(tree, q, ws)
    for i in range(len(tree) // TREE_STRIDE):
        w = i * WS_STRIDE
        lam = int(tree[i * TREE_STRIDE + PARENT])
        if lam < 0:
            alx = -gravity[0]
            aly = -gravity[1]
            alz = -gravity[2]
        else:
            u = lam * WS_STRIDE
            alx = ws[u + 18]
            aly = ws[u + 19]
            alz = ws[u + 20]
        ws[w + 12] = 0.0
        ws[w + 13] = 0.0
        ws[w + 14] = 0.0
        ws[w + 15] = 0.0
        ws[w + 16] = 0.0
        ws[w + 17] = 0.0
        ws[w + 18] = ws[w] * alx + ws[w + 3] * aly + ws[w + 6] * alz
        ws[w + 19] = ws[w + 1] * alx + ws[w + 4] * aly + ws[w + 7] * alz
        ws[w + 20] = ws[w + 2] * alx + ws[w + 5] * aly + ws[w + 8] * alz
        ws[w + 21] = 0.0
        ws[w + 22] = 0.0
        ws[w + 23] = 0.0
        ws[w + 24] = 0.0
        ws[w + 25] = 0.0
        ws[w + 26] = 0.0
    _backward(tree, ws, tau)
    return OK if _all_finite(tau) else NOT_FINITE


@njit
def gravity_batch_kernel(tree, q, gravity, ws, tau):
    """gravity_kernel over the rows of an (N, n) array q; a status."""
    status = OK
    for k in range(q.shape[0]):
        s = gravity_kernel(tree, q[k], gravity, ws, tau[k])
        if s != OK:
            status = s
    return status


@njit
def mass_matrix_kernel(tree, q, ws, comp, mass):
    """Joint-space inertia M(q) (row-major n×n into `mass`) by the composite-rigid-body algorithm.

    `comp` holds 10 floats per body: composite mass, first moment (3) and inertia about the
    body origin (6), body frame. Returns a status.
    """
    n = len(tree) // TREE_STRIDE
    if len(q) != n or len(mass) != n * n or len(ws) < n * WS_STRIDE or len(comp) < 10 * n:
        return BAD_SIZE
    joint_transforms(tree, q, ws)
    for i in range(n * n):
        mass[i] = 0.0
    for i in range(n):
        for k in range(10):
            comp[10 * i + k] = tree[i * TREE_STRIDE + 15 + k]
    for i in range(n - 1, -1, -1):
        lam = int(tree[i * TREE_STRIDE + PARENT])
        if lam < 0:
            continue
        w = i * WS_STRIDE
        c = 10 * i
        m = comp[c]
        px = ws[w + 9]
        py = ws[w + 10]
        pz = ws[w + 11]
        # first moment rotated into the parent frame (about this body's origin)
        hx = ws[w] * comp[c + 1] + ws[w + 1] * comp[c + 2] + ws[w + 2] * comp[c + 3]
        hy = ws[w + 3] * comp[c + 1] + ws[w + 4] * comp[c + 2] + ws[w + 5] * comp[c + 3]
        hz = ws[w + 6] * comp[c + 1] + ws[w + 7] * comp[c + 2] + ws[w + 8] * comp[c + 3]
        # inertia rotated into the parent frame: R I R^T
        i00 = comp[c + 4]
        i01 = comp[c + 5]
        i02 = comp[c + 6]
        i11 = comp[c + 7]
        i12 = comp[c + 8]
        i22 = comp[c + 9]
        t00 = ws[w] * i00 + ws[w + 1] * i01 + ws[w + 2] * i02
        t01 = ws[w] * i01 + ws[w + 1] * i11 + ws[w + 2] * i12
        t02 = ws[w] * i02 + ws[w + 1] * i12 + ws[w + 2] * i22
        t10 = ws[w + 3] * i00 + ws[w + 4] * i01 + ws[w + 5] * i02
        t11 = ws[w + 3] * i01 + ws[w + 4] * i11 + ws[w + 5] * i12
        t12 = ws[w + 3] * i02 + ws[w + 4] * i12 + ws[w + 5] * i22
        t20 = ws[w + 6] * i00 + ws[w + 7] * i01 + ws[w + 8] * i02
        t21 = ws[w + 6] * i01 + ws[w + 7] * i11 + ws[w + 8] * i12
        t22 = ws[w + 6] * i02 + ws[w + 7] * i12 + ws[w + 8] * i22
        r00 = t00 * ws[w] + t01 * ws[w + 1] + t02 * ws[w + 2]
        r01 = t00 * ws[w + 3] + t01 * ws[w + 4] + t02 * ws[w + 5]
        r02 = t00 * ws[w + 6] + t01 * ws[w + 7] + t02 * ws[w + 8]
        r11 = t10 * ws[w + 3] + t11 * ws[w + 4] + t12 * ws[w + 5]
        r12 = t10 * ws[w + 6] + t11 * ws[w + 7] + t12 * ws[w + 8]
        r22 = t20 * ws[w + 6] + t21 * ws[w + 7] + t22 * ws[w + 8]
        # shift to the parent origin: + 2 (p.h) E - p h^T - h p^T + m (|p|^2 E - p p^T)
        ph = px * hx + py * hy + pz * hz
        pp = px * px + py * py + pz * pz
        e = 2.0 * ph + m * pp
        d = 10 * lam
        comp[d] += m
        comp[d + 1] += hx + m * px
        comp[d + 2] += hy + m * py
        comp[d + 3] += hz + m * pz
        comp[d + 4] += r00 + e - 2.0 * px * hx - m * px * px
        comp[d + 5] += r01 - px * hy - hx * py - m * px * py
        comp[d + 6] += r02 - px * hz - hx * pz - m * px * pz
        comp[d + 7] += r11 + e - 2.0 * py * hy - m * py * py
        comp[d + 8] += r12 - py * hz - hy * pz - m * py * pz
        comp[d + 9] += r22 + e - 2.0 * pz * hz - m * pz * pz
    for j in range(n):
        b = j * TREE_STRIDE
        c = 10 * j
        ex = tree[b + 12]
        ey = tree[b + 13]
        ez = tree[b + 14]
        if tree[b + JTYPE] == REVOLUTE:
            # momentum of the composite body for unit rotation about the axis
            fx = ey * comp[c + 3] - ez * comp[c + 2]
            fy = ez * comp[c + 1] - ex * comp[c + 3]
            fz = ex * comp[c + 2] - ey * comp[c + 1]
            nx = comp[c + 4] * ex + comp[c + 5] * ey + comp[c + 6] * ez
            ny = comp[c + 5] * ex + comp[c + 7] * ey + comp[c + 8] * ez
            nz = comp[c + 6] * ex + comp[c + 8] * ey + comp[c + 9] * ez
            mass[j * n + j] = ex * nx + ey * ny + ez * nz + tree[b + 25]
        else:
            fx = comp[c] * ex
            fy = comp[c] * ey
            fz = comp[c] * ez
            nx = comp[c + 2] * ez - comp[c + 3] * ey
            ny = comp[c + 3] * ex - comp[c + 1] * ez
            nz = comp[c + 1] * ey - comp[c + 2] * ex
            mass[j * n + j] = ex * fx + ey * fy + ez * fz + tree[b + 25]
        i = j
        lam = int(tree[b + PARENT])
        while lam >= 0:
            w = i * WS_STRIDE
            gx = ws[w] * fx + ws[w + 1] * fy + ws[w + 2] * fz
            gy = ws[w + 3] * fx + ws[w + 4] * fy + ws[w + 5] * fz
            gz = ws[w + 6] * fx + ws[w + 7] * fy + ws[w + 8] * fz
            px = ws[w + 9]
            py = ws[w + 10]
            pz = ws[w + 11]
            mx = ws[w] * nx + ws[w + 1] * ny + ws[w + 2] * nz + py * gz - pz * gy
            my = ws[w + 3] * nx + ws[w + 4] * ny + ws[w + 5] * nz + pz * gx - px * gz
            mz = ws[w + 6] * nx + ws[w + 7] * ny + ws[w + 8] * nz + px * gy - py * gx
            fx = gx
            fy = gy
            fz = gz
            nx = mx
            ny = my
            nz = mz
            i = lam
            a = i * TREE_STRIDE
            lam = int(tree[a + PARENT])
            if tree[a + JTYPE] == REVOLUTE:
                v = tree[a + 12] * nx + tree[a + 13] * ny + tree[a + 14] * nz
            else:
                v = tree[a + 12] * fx + tree[a + 13] * fy + tree[a + 14] * fz
            mass[i * n + j] = v
            mass[j * n + i] = v
    return OK if _all_finite(mass) else NOT_FINITE


@njit
def mass_matrix_batch_kernel(tree, q, ws, comp, mass):
    """mass_matrix_kernel over the rows of q into rows of `mass` (N, n*n); a status."""
    status = OK
    for k in range(q.shape[0]):
        s = mass_matrix_kernel(tree, q[k], ws, comp, mass[k])
        if s != OK:
            status = s
    return status


# Rows of the `law` table of effort_kernel (per joint) and of its `out` table.
LAW_VISCOUS, LAW_COULOMB, LAW_STATIC, LAW_STRIBECK, LAW_SMOOTHING, LAW_KP, LAW_KD, LAW_LIMIT = range(8)
LAW_ROWS = 8
# Switches of effort_kernel: the five model terms, then "evaluate them at the desired state".
SWITCH_DESIRED = 5
# out rows 0..5: the terms gravity, coriolis, inertia, friction, wrench, feedback; then:
OUT_TOTAL, OUT_CLAMPED, OUT_SCRATCH = 6, 7, 8
OUT_ROWS = 9


@njit
def effort_kernel(
    tree, q, qd, q_des, qd_des, qdd_des, gravity, switches, law, wrench_body, wrench_data, ws, out
):
    """The inverse_dynamics effort law, term by term, into the rows of `out` (OUT_ROWS, n):

    gravity g(q), coriolis c(q, q̇), inertia M(q) q̈_des, friction (out[3] as given: the caller
    fills it, see rnea_ros.friction_compensation), wrench Σ Jᵀ F (each zero when its switch is 0;
    q, q̇ measured or desired per switches[SWITCH_DESIRED]), feedback Kp (q_des − q) +
    Kd (q̇_des − q̇), then the total clamped to ±limit and 1.0 where it was clamped.
    gravity: 6 values, the root-frame gravity (m/s²) then 3 zeros. law: (LAW_ROWS, n) per joint
    (see the LAW_* rows; the friction rows are not read). Returns a status (NOT_FINITE when
    the total is not finite).
    """
    n = len(q)
    if out.shape[0] != OUT_ROWS or out.shape[1] != n or law.shape[0] != LAW_ROWS or law.shape[1] != n:
        return BAD_SIZE
    if not _sizes_ok(len(tree) // TREE_STRIDE, q, qd_des, qdd_des, gravity[:3], ws, qd):
        return BAD_SIZE
    if len(q_des) != n or len(gravity) != 6:
        return BAD_SIZE
    zero = out[OUT_SCRATCH]
    for i in range(n):
        zero[i] = 0.0
    qx = q_des if switches[SWITCH_DESIRED] else q
    qdx = qd_des if switches[SWITCH_DESIRED] else qd
    no_gravity = gravity[3:6]
    for row in range(5):
        if not switches[row]:
            for i in range(n):
                out[row, i] = 0.0
    if switches[0]:
        gravity_kernel(tree, qx, gravity[0:3], ws, out[0])
    if switches[1]:
        rnea_kernel(tree, qx, qdx, zero, no_gravity, ws, out[1])
    if switches[2]:
        rnea_kernel(tree, qx, zero, qdd_des, no_gravity, ws, out[2])
    # friction: out[3] is an input, filled by rnea_ros.friction_compensation before the call
    if switches[4] and len(wrench_body) > 0:
        rnea_wrench_kernel(tree, qx, zero, zero, no_gravity, wrench_body, wrench_data, ws, out[4])
    elif switches[4]:
        for i in range(n):
            out[4, i] = 0.0
    check = 0.0  # total - total: 0 for finite totals, NaN otherwise (before clamping hides an Inf)
    for i in range(n):
        out[5, i] = law[LAW_KP, i] * (q_des[i] - q[i]) + law[LAW_KD, i] * (qd_des[i] - qd[i])
        total = out[0, i] + out[1, i] + out[2, i] + out[3, i] + out[4, i] + out[5, i]
        check += total - total
        limit = law[LAW_LIMIT, i]
        out[OUT_CLAMPED, i] = 1.0 if abs(total) > limit else 0.0
        out[OUT_TOTAL, i] = min(max(total, -limit), limit)
    return OK if check == 0.0 else NOT_FINITE


# The kernels called from Python (dynamics.warm compiles and then locks them).
ENTRY_POINTS = (
    effort_kernel,
    joint_transforms,
    root_rotations,
    rnea_kernel,
    rnea_wrench_kernel,
    rnea_batch_kernel,
    gravity_kernel,
    gravity_batch_kernel,
    mass_matrix_kernel,
    mass_matrix_batch_kernel,
)
