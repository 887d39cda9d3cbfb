"""The recursive passes the kernels are made of, over the tree record (`layout`): the joint
transforms, the forward kinematic passes (velocities, accelerations, gravity), the link wrenches,
the backward force pass, the composite-inertia and mass-matrix column passes, and the small
inlined steps (finiteness, armature, size checks). Each writes into the workspace record `ws`.
"""

from __future__ import annotations

import math

from rnea_ros.compiled.jit import njit, njit_inline
from rnea_ros.compiled.kernels.layout import (
    B_ARMATURE,
    B_AXIS,
    B_INERTIA,
    B_MASS,
    B_MOMENT,
    B_POS,
    B_ROT,
    C_INERTIA,
    C_MASS,
    C_MOMENT,
    COMP_STRIDE,
    JTYPE,
    PARENT,
    REVOLUTE,
    TREE_STRIDE,
    W_ACC,
    W_ALPHA,
    W_FORCE,
    W_MOMENT,
    W_OMEGA,
    W_POS,
    W_ROT,
    W_ROT_ROOT,
    WR_FORCE,
    WR_MOMENT,
    WR_ORIGIN,
    WRENCH_STRIDE,
    WS_STRIDE,
)


@njit
def joint_transforms(tree, q, ws):
    """Fill ws[W_ROT], ws[W_POS] with each body's pose in its parent for joint positions q."""
    for i in range(len(tree) // TREE_STRIDE):
        b = i * TREE_STRIDE
        b_axis = b + B_AXIS
        b_pos = b + B_POS
        b_rot = b + B_ROT
        b_jtype = b + JTYPE
        w = i * WS_STRIDE
        w_pos = w + W_POS
        w_rot = w + W_ROT
        r00 = tree[b_rot]
        r01 = tree[b_rot + 1]
        r02 = tree[b_rot + 2]
        r10 = tree[b_rot + 3]
        r11 = tree[b_rot + 4]
        r12 = tree[b_rot + 5]
        r20 = tree[b_rot + 6]
        r21 = tree[b_rot + 7]
        r22 = tree[b_rot + 8]
        ax = tree[b_axis]
        ay = tree[b_axis + 1]
        az = tree[b_axis + 2]
        px = tree[b_pos]
        py = tree[b_pos + 1]
        pz = tree[b_pos + 2]
        if tree[b_jtype] == REVOLUTE:
            # R_tree times the rotation by q about the axis (Rodrigues). About +z, +y or +x, the
            # entries that are 0 there are left out: the same numbers, a third of the operations.
            qi = q[i]
            c = math.cos(qi)
            s = math.sin(qi)
            t = 1.0 - c
            d = t + c  # the axis entry of the Rodrigues matrix, as the general formula rounds it
            if ax == 0.0 and ay == 0.0 and az == 1.0:
                ws[w_rot] = r00 * c + r01 * s
                ws[w_rot + 1] = r01 * c - r00 * s
                ws[w_rot + 2] = r02 * d
                ws[w_rot + 3] = r10 * c + r11 * s
                ws[w_rot + 4] = r11 * c - r10 * s
                ws[w_rot + 5] = r12 * d
                ws[w_rot + 6] = r20 * c + r21 * s
                ws[w_rot + 7] = r21 * c - r20 * s
                ws[w_rot + 8] = r22 * d
            elif ax == 0.0 and ay == 1.0 and az == 0.0:
                ws[w_rot] = r00 * c - r02 * s
                ws[w_rot + 1] = r01 * d
                ws[w_rot + 2] = r00 * s + r02 * c
                ws[w_rot + 3] = r10 * c - r12 * s
                ws[w_rot + 4] = r11 * d
                ws[w_rot + 5] = r10 * s + r12 * c
                ws[w_rot + 6] = r20 * c - r22 * s
                ws[w_rot + 7] = r21 * d
                ws[w_rot + 8] = r20 * s + r22 * c
            elif ax == 1.0 and ay == 0.0 and az == 0.0:
                ws[w_rot] = r00 * d
                ws[w_rot + 1] = r01 * c + r02 * s
                ws[w_rot + 2] = r02 * c - r01 * s
                ws[w_rot + 3] = r10 * d
                ws[w_rot + 4] = r11 * c + r12 * s
                ws[w_rot + 5] = r12 * c - r11 * s
                ws[w_rot + 6] = r20 * d
                ws[w_rot + 7] = r21 * c + r22 * s
                ws[w_rot + 8] = r22 * c - r21 * s
            else:
                j00 = t * ax * ax + c
                j01 = t * ax * ay - s * az
                j02 = t * ax * az + s * ay
                j10 = t * ax * ay + s * az
                j11 = t * ay * ay + c
                j12 = t * ay * az - s * ax
                j20 = t * ax * az - s * ay
                j21 = t * ay * az + s * ax
                j22 = t * az * az + c
                ws[w_rot] = r00 * j00 + r01 * j10 + r02 * j20
                ws[w_rot + 1] = r00 * j01 + r01 * j11 + r02 * j21
                ws[w_rot + 2] = r00 * j02 + r01 * j12 + r02 * j22
                ws[w_rot + 3] = r10 * j00 + r11 * j10 + r12 * j20
                ws[w_rot + 4] = r10 * j01 + r11 * j11 + r12 * j21
                ws[w_rot + 5] = r10 * j02 + r11 * j12 + r12 * j22
                ws[w_rot + 6] = r20 * j00 + r21 * j10 + r22 * j20
                ws[w_rot + 7] = r20 * j01 + r21 * j11 + r22 * j21
                ws[w_rot + 8] = r20 * j02 + r21 * j12 + r22 * j22
        else:
            # translation by q along the axis, expressed in the parent frame
            d = q[i]
            px += (r00 * ax + r01 * ay + r02 * az) * d
            py += (r10 * ax + r11 * ay + r12 * az) * d
            pz += (r20 * ax + r21 * ay + r22 * az) * d
            for k in range(9):
                ws[w + W_ROT + k] = tree[b + B_ROT + k]
        ws[w_pos] = px
        ws[w_pos + 1] = py
        ws[w_pos + 2] = pz


@njit
def root_rotations(tree, ws):
    """Fill ws[W_ROT_ROOT] with each body's rotation in the root frame (needs joint_transforms)."""
    for i in range(len(tree) // TREE_STRIDE):
        w = i * WS_STRIDE
        lam = int(tree[i * TREE_STRIDE + PARENT])
        if lam < 0:
            for k in range(9):
                ws[w + W_ROT_ROOT + k] = ws[w + W_ROT + k]
            continue
        u = lam * WS_STRIDE + W_ROT_ROOT
        for r in range(3):
            for c in range(3):
                ws[w + W_ROT_ROOT + 3 * r + c] = (
                    ws[u + 3 * r] * ws[w + W_ROT + c]
                    + ws[u + 3 * r + 1] * ws[w + W_ROT + 3 + c]
                    + ws[u + 3 * r + 2] * ws[w + W_ROT + 6 + c]
                )


@njit
def forward_kinematic_pass(tree, qd, qdd, gravity, ws):
    """RNEA forward pass, root to tips: angular velocity, angular acceleration and origin
    acceleration (with -gravity, which gravity enters through) of every body in its own frame;
    zeroes the transmitted force and moment for the backward pass (needs joint_transforms).
    gravity: 3 values (a fixed root), or 9 for a moving root (see floating_rnea_kernel): its
    angular velocity, angular acceleration and origin acceleration minus gravity, root frame."""
    for i in range(len(tree) // TREE_STRIDE):
        b = i * TREE_STRIDE
        b_axis = b + B_AXIS
        b_jtype = b + JTYPE
        b_parent = b + PARENT
        w = i * WS_STRIDE
        w_acc = w + W_ACC
        w_alpha = w + W_ALPHA
        w_force = w + W_FORCE
        w_moment = w + W_MOMENT
        w_omega = w + W_OMEGA
        w_pos = w + W_POS
        w_rot = w + W_ROT
        lam = int(tree[b_parent])
        if lam < 0 and len(gravity) == 9:  # a moving (floating) root
            wlx = gravity[0]
            wly = gravity[1]
            wlz = gravity[2]
            dlx = gravity[3]
            dly = gravity[4]
            dlz = gravity[5]
            alx = gravity[6]
            aly = gravity[7]
            alz = gravity[8]
        elif lam < 0:
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
            u_acc = u + W_ACC
            u_alpha = u + W_ALPHA
            u_omega = u + W_OMEGA
            wlx = ws[u_omega]
            wly = ws[u_omega + 1]
            wlz = ws[u_omega + 2]
            dlx = ws[u_alpha]
            dly = ws[u_alpha + 1]
            dlz = ws[u_alpha + 2]
            alx = ws[u_acc]
            aly = ws[u_acc + 1]
            alz = ws[u_acc + 2]
        px = ws[w_pos]
        py = ws[w_pos + 1]
        pz = ws[w_pos + 2]
        # acceleration of this body's origin, parent frame: a + alpha x p + omega x (omega x p)
        cx = wly * pz - wlz * py
        cy = wlz * px - wlx * pz
        cz = wlx * py - wly * px
        alx += dly * pz - dlz * py + wly * cz - wlz * cy
        aly += dlz * px - dlx * pz + wlz * cx - wlx * cz
        alz += dlx * py - dly * px + wlx * cy - wly * cx
        r00 = ws[w_rot]
        r01 = ws[w_rot + 1]
        r02 = ws[w_rot + 2]
        r10 = ws[w_rot + 3]
        r11 = ws[w_rot + 4]
        r12 = ws[w_rot + 5]
        r20 = ws[w_rot + 6]
        r21 = ws[w_rot + 7]
        r22 = ws[w_rot + 8]
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
        # the joint's own motion: e q̇ and e q̈ along / about the axis e
        ex = tree[b_axis]
        ey = tree[b_axis + 1]
        ez = tree[b_axis + 2]
        v = qd[i]
        acc = qdd[i]
        vx = ex * v
        vy = ey * v
        vz = ez * v
        if tree[b_jtype] == REVOLUTE:
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
        ws[w_omega] = wx
        ws[w_omega + 1] = wy
        ws[w_omega + 2] = wz
        ws[w_alpha] = dx
        ws[w_alpha + 1] = dy
        ws[w_alpha + 2] = dz
        ws[w_acc] = ax
        ws[w_acc + 1] = ay
        ws[w_acc + 2] = az
        ws[w_force] = 0.0
        ws[w_force + 1] = 0.0
        ws[w_force + 2] = 0.0
        ws[w_moment] = 0.0
        ws[w_moment + 1] = 0.0
        ws[w_moment + 2] = 0.0


@njit
def gravity_kinematic_pass(tree, gravity, ws):
    """The forward pass at rest (q̇ = q̈ = 0): only the origin accelerations, -gravity rotated into
    each body frame; zeroes the transmitted force and moment (needs joint_transforms). Leaves
    W_OMEGA and W_ALPHA as they were: the backward pass at rest does not read them."""
    for i in range(len(tree) // TREE_STRIDE):
        w = i * WS_STRIDE
        w_acc = w + W_ACC
        w_force = w + W_FORCE
        w_moment = w + W_MOMENT
        w_rot = w + W_ROT
        lam = int(tree[i * TREE_STRIDE + PARENT])
        if lam < 0:
            alx = -gravity[0]
            aly = -gravity[1]
            alz = -gravity[2]
        else:
            u = lam * WS_STRIDE
            u_acc = u + W_ACC
            alx = ws[u_acc]
            aly = ws[u_acc + 1]
            alz = ws[u_acc + 2]
        ws[w_acc] = ws[w_rot] * alx + ws[w_rot + 3] * aly + ws[w_rot + 6] * alz
        ws[w_acc + 1] = ws[w_rot + 1] * alx + ws[w_rot + 4] * aly + ws[w_rot + 7] * alz
        ws[w_acc + 2] = ws[w_rot + 2] * alx + ws[w_rot + 5] * aly + ws[w_rot + 8] * alz
        ws[w_force] = 0.0
        ws[w_force + 1] = 0.0
        ws[w_force + 2] = 0.0
        ws[w_moment] = 0.0
        ws[w_moment + 1] = 0.0
        ws[w_moment + 2] = 0.0


@njit
def add_link_wrenches(wrench_body, wrench_data, ws):
    """Add each link's wrench on its environment to its body's transmitted force and moment
    (rotated into the body frame, moment moved to the body origin; needs root_rotations)."""
    for k in range(len(wrench_body)):
        i = wrench_body[k]
        w = i * WS_STRIDE
        w_force = w + W_FORCE
        w_moment = w + W_MOMENT
        d = k * WRENCH_STRIDE
        d_force = d + WR_FORCE
        d_moment = d + WR_MOMENT
        d_origin = d + WR_ORIGIN
        ox = wrench_data[d_origin]
        oy = wrench_data[d_origin + 1]
        oz = wrench_data[d_origin + 2]
        gx = wrench_data[d_force]
        gy = wrench_data[d_force + 1]
        gz = wrench_data[d_force + 2]
        mx = wrench_data[d_moment]
        my = wrench_data[d_moment + 1]
        mz = wrench_data[d_moment + 2]
        rw = w + W_ROT_ROOT  # body in root: root-frame vectors into the body frame by R transposed
        fx = ws[rw] * gx + ws[rw + 3] * gy + ws[rw + 6] * gz
        fy = ws[rw + 1] * gx + ws[rw + 4] * gy + ws[rw + 7] * gz
        fz = ws[rw + 2] * gx + ws[rw + 5] * gy + ws[rw + 8] * gz
        nx = ws[rw] * mx + ws[rw + 3] * my + ws[rw + 6] * mz
        ny = ws[rw + 1] * mx + ws[rw + 4] * my + ws[rw + 7] * mz
        nz = ws[rw + 2] * mx + ws[rw + 5] * my + ws[rw + 8] * mz
        ws[w_force] += fx
        ws[w_force + 1] += fy
        ws[w_force + 2] += fz
        ws[w_moment] += nx + oy * fz - oz * fy
        ws[w_moment + 1] += ny + oz * fx - ox * fz
        ws[w_moment + 2] += nz + ox * fy - oy * fx


@njit
def backward_force_pass(tree, ws, tau, at_rest):
    """RNEA backward pass, tips to root: each body's inertial wrench plus what its children
    transmit, projected on its joint axis into tau and passed on to its parent. at_rest: q̇ = q̈ = 0
    (after gravity_kinematic_pass), where the inertial wrench reduces to F = m a, N = h x a: the
    same numbers with fewer operations. A body on the root keeps its total wrench in its own
    W_FORCE, W_MOMENT (what the root transmits to it: see floating_rnea_kernel)."""
    for i in range(len(tree) // TREE_STRIDE - 1, -1, -1):
        b = i * TREE_STRIDE
        b_axis = b + B_AXIS
        b_inertia = b + B_INERTIA
        b_mass = b + B_MASS
        b_moment = b + B_MOMENT
        b_jtype = b + JTYPE
        b_parent = b + PARENT
        w = i * WS_STRIDE
        w_acc = w + W_ACC
        w_alpha = w + W_ALPHA
        w_force = w + W_FORCE
        w_moment = w + W_MOMENT
        w_omega = w + W_OMEGA
        w_pos = w + W_POS
        w_rot = w + W_ROT
        m = tree[b_mass]
        hx = tree[b_moment]
        hy = tree[b_moment + 1]
        hz = tree[b_moment + 2]
        ax = ws[w_acc]
        ay = ws[w_acc + 1]
        az = ws[w_acc + 2]
        if at_rest:
            fx = m * ax
            fy = m * ay
            fz = m * az
            nx = hy * az - hz * ay
            ny = hz * ax - hx * az
            nz = hx * ay - hy * ax
        else:
            ixx = tree[b_inertia]
            ixy = tree[b_inertia + 1]
            ixz = tree[b_inertia + 2]
            iyy = tree[b_inertia + 3]
            iyz = tree[b_inertia + 4]
            izz = tree[b_inertia + 5]
            wx = ws[w_omega]
            wy = ws[w_omega + 1]
            wz = ws[w_omega + 2]
            dx = ws[w_alpha]
            dy = ws[w_alpha + 1]
            dz = ws[w_alpha + 2]
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
        fx += ws[w_force]
        fy += ws[w_force + 1]
        fz += ws[w_force + 2]
        nx += ws[w_moment]
        ny += ws[w_moment + 1]
        nz += ws[w_moment + 2]
        # the joint's effort: the wrench projected on its axis
        ex = tree[b_axis]
        ey = tree[b_axis + 1]
        ez = tree[b_axis + 2]
        if tree[b_jtype] == REVOLUTE:
            tau[i] = ex * nx + ey * ny + ez * nz
        else:
            tau[i] = ex * fx + ey * fy + ez * fz
        # the wrench transmitted to the parent, in its frame, moment about its origin
        lam = int(tree[b_parent])
        if lam >= 0:
            u = lam * WS_STRIDE
            u_force = u + W_FORCE
            u_moment = u + W_MOMENT
            r00 = ws[w_rot]
            r01 = ws[w_rot + 1]
            r02 = ws[w_rot + 2]
            r10 = ws[w_rot + 3]
            r11 = ws[w_rot + 4]
            r12 = ws[w_rot + 5]
            r20 = ws[w_rot + 6]
            r21 = ws[w_rot + 7]
            r22 = ws[w_rot + 8]
            gx = r00 * fx + r01 * fy + r02 * fz
            gy = r10 * fx + r11 * fy + r12 * fz
            gz = r20 * fx + r21 * fy + r22 * fz
            px = ws[w_pos]
            py = ws[w_pos + 1]
            pz = ws[w_pos + 2]
            ws[u_force] += gx
            ws[u_force + 1] += gy
            ws[u_force + 2] += gz
            ws[u_moment] += r00 * nx + r01 * ny + r02 * nz + py * gz - pz * gy
            ws[u_moment + 1] += r10 * nx + r11 * ny + r12 * nz + pz * gx - px * gz
            ws[u_moment + 2] += r20 * nx + r21 * ny + r22 * nz + px * gy - py * gx
        else:
            ws[w_force] = fx
            ws[w_force + 1] = fy
            ws[w_force + 2] = fz
            ws[w_moment] = nx
            ws[w_moment + 1] = ny
            ws[w_moment + 2] = nz


@njit_inline
def all_finite(x):
    """True if no element of x is NaN or ±Inf (x - x is 0 for finite x, NaN otherwise)."""
    z = 0.0
    for i in range(len(x)):
        z += x[i] - x[i]
    return z == 0.0


@njit_inline
def add_armature(tree, qdd, tau):
    """Add the reflected rotor inertia term armature * q̈ to tau."""
    for i in range(len(tau)):
        tau[i] += tree[i * TREE_STRIDE + B_ARMATURE] * qdd[i]


@njit_inline
def sizes_ok(n, q, qd, qdd, gravity, ws, tau):
    """True if every argument has the length a model of n bodies needs."""
    return (
        len(q) == n
        and len(qd) == n
        and len(qdd) == n
        and len(tau) == n
        and len(gravity) == 3
        and len(ws) >= n * WS_STRIDE
    )


@njit_inline
def shift_composite(ws, i, comp, d):
    """Add body i's composite record (comp[i COMP_STRIDE:], body frame) to the record at comp[d:],
    in the frame of body i's parent (the pose ws[W_ROT], ws[W_POS] of body i)."""
    w = i * WS_STRIDE + W_ROT  # rows of R, the body in its parent
    c = i * COMP_STRIDE
    c_inertia = c + C_INERTIA
    c_mass = c + C_MASS
    c_moment = c + C_MOMENT
    m = comp[c_mass]
    px = ws[i * WS_STRIDE + W_POS]
    py = ws[i * WS_STRIDE + W_POS + 1]
    pz = ws[i * WS_STRIDE + W_POS + 2]
    # first moment rotated into the parent frame (about this body's origin)
    h0 = comp[c_moment]
    h1 = comp[c_moment + 1]
    h2 = comp[c_moment + 2]
    hx = ws[w] * h0 + ws[w + 1] * h1 + ws[w + 2] * h2
    hy = ws[w + 3] * h0 + ws[w + 4] * h1 + ws[w + 5] * h2
    hz = ws[w + 6] * h0 + ws[w + 7] * h1 + ws[w + 8] * h2
    # inertia rotated into the parent frame: R I R^T
    i00 = comp[c_inertia]
    i01 = comp[c_inertia + 1]
    i02 = comp[c_inertia + 2]
    i11 = comp[c_inertia + 3]
    i12 = comp[c_inertia + 4]
    i22 = comp[c_inertia + 5]
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
    d_inertia = d + C_INERTIA
    d_mass = d + C_MASS
    d_moment = d + C_MOMENT
    comp[d_mass] += m
    comp[d_moment] += hx + m * px
    comp[d_moment + 1] += hy + m * py
    comp[d_moment + 2] += hz + m * pz
    comp[d_inertia] += r00 + e - 2.0 * px * hx - m * px * px
    comp[d_inertia + 1] += r01 - px * hy - hx * py - m * px * py
    comp[d_inertia + 2] += r02 - px * hz - hx * pz - m * px * pz
    comp[d_inertia + 3] += r11 + e - 2.0 * py * hy - m * py * py
    comp[d_inertia + 4] += r12 - py * hz - hy * pz - m * py * pz
    comp[d_inertia + 5] += r22 + e - 2.0 * pz * hz - m * pz * pz


@njit
def composite_inertia_pass(tree, ws, comp):
    """Composite-rigid-body pass, tips to root: each body's composite mass, first moment and
    inertia about its origin (body frame) into `comp` (needs joint_transforms)."""
    n = len(tree) // TREE_STRIDE
    for i in range(n):
        for k in range(COMP_STRIDE):
            comp[i * COMP_STRIDE + k] = tree[i * TREE_STRIDE + B_MASS + k]
    for i in range(n - 1, -1, -1):
        lam = int(tree[i * TREE_STRIDE + PARENT])
        if lam < 0:
            continue
        shift_composite(ws, i, comp, lam * COMP_STRIDE)


@njit
def mass_matrix_columns(tree, ws, comp, mass):
    """Column pass: for each joint j, the wrench its composite body needs for a unit q̈_j gives
    M[j, j] (plus armature); carried towards the root, projected on each ancestor's axis it gives
    M[i, j] = M[j, i]. `mass` row-major n×n, zero off the ancestor pairs (needs
    composite_inertia_pass)."""
    n = len(tree) // TREE_STRIDE
    for i in range(n * n):
        mass[i] = 0.0
    for j in range(n):
        b = j * TREE_STRIDE
        b_armature = b + B_ARMATURE
        b_axis = b + B_AXIS
        b_jtype = b + JTYPE
        b_parent = b + PARENT
        c = j * COMP_STRIDE
        c_mass = c + C_MASS
        c_moment = c + C_MOMENT
        ex = tree[b_axis]
        ey = tree[b_axis + 1]
        ez = tree[b_axis + 2]
        m = comp[c_mass]
        h0 = comp[c_moment]
        h1 = comp[c_moment + 1]
        h2 = comp[c_moment + 2]
        if tree[b_jtype] == REVOLUTE:
            # momentum of the composite body for unit rotation about the axis
            fx = ey * h2 - ez * h1
            fy = ez * h0 - ex * h2
            fz = ex * h1 - ey * h0
            c_inertia = c + C_INERTIA
            nx = comp[c_inertia] * ex + comp[c_inertia + 1] * ey + comp[c_inertia + 2] * ez
            ny = comp[c_inertia + 1] * ex + comp[c_inertia + 3] * ey + comp[c_inertia + 4] * ez
            nz = comp[c_inertia + 2] * ex + comp[c_inertia + 4] * ey + comp[c_inertia + 5] * ez
            mass[j * n + j] = ex * nx + ey * ny + ez * nz + tree[b_armature]
        else:
            # and for unit translation along it
            fx = m * ex
            fy = m * ey
            fz = m * ez
            nx = h1 * ez - h2 * ey
            ny = h2 * ex - h0 * ez
            nz = h0 * ey - h1 * ex
            mass[j * n + j] = ex * fx + ey * fy + ez * fz + tree[b_armature]
        i = j
        lam = int(tree[b_parent])
        while lam >= 0:
            # the wrench into the parent frame, moment about the parent origin
            w = i * WS_STRIDE
            w_pos = w + W_POS
            r = w + W_ROT
            gx = ws[r] * fx + ws[r + 1] * fy + ws[r + 2] * fz
            gy = ws[r + 3] * fx + ws[r + 4] * fy + ws[r + 5] * fz
            gz = ws[r + 6] * fx + ws[r + 7] * fy + ws[r + 8] * fz
            px = ws[w_pos]
            py = ws[w_pos + 1]
            pz = ws[w_pos + 2]
            mx = ws[r] * nx + ws[r + 1] * ny + ws[r + 2] * nz + py * gz - pz * gy
            my = ws[r + 3] * nx + ws[r + 4] * ny + ws[r + 5] * nz + pz * gx - px * gz
            mz = ws[r + 6] * nx + ws[r + 7] * ny + ws[r + 8] * nz + px * gy - py * gx
            fx = gx
            fy = gy
            fz = gz
            nx = mx
            ny = my
            nz = mz
            i = lam
            a = i * TREE_STRIDE
            a_axis = a + B_AXIS
            a_jtype = a + JTYPE
            a_parent = a + PARENT
            lam = int(tree[a_parent])
            if tree[a_jtype] == REVOLUTE:
                v = tree[a_axis] * nx + tree[a_axis + 1] * ny + tree[a_axis + 2] * nz
            else:
                v = tree[a_axis] * fx + tree[a_axis + 1] * fy + tree[a_axis + 2] * fz
            mass[i * n + j] = v
            mass[j * n + i] = v
