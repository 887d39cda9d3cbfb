"""Scalar-loop dynamics kernels over a model's flat arrays (compiled by numba when available).

The same source runs as plain Python on lists (see `_jit`), so every kernel reads and writes
flat 1-D sequences with explicit strides and spells out its 3-vector arithmetic. Which kernels
Python calls, with which argument types, and when they compile: `compiled`.

The flat memory layout is defined here, and only here, as module-level integers (numba folds
them into the compiled code, so naming an offset costs nothing), with the tables the kernels read
(the effort law's LAW_* and OUT_* rows, the friction compensation's FC_*, the runaway guard's G_*
and K_*, the momentum observer's S_* and OB_*); the modules that use them (`rnea_ros.control`,
`rnea_ros.friction`, `rnea_ros.estimation`) hold only Python. numba's cache of every compiled
function carries one stamp over all of `rnea_ros/compiled/` (`jit`): an edit here reaches every
cached kernel and pointer cfunc (test/unit/compiled/test_stale_cache.py).

Body record (`RobotModel.body`): BODY_STRIDE floats per movable joint / body, in model order;
body i's frame is the child link frame of joint i.
  B_ROT      [0:9]   rotation of the joint frame in the parent body frame at q = 0, row-major
  B_POS      [9:12]  joint frame origin in the parent body frame, m
  B_AXIS     [12:15] unit joint axis in the body frame
  B_MASS     [15]    mass, kg
  B_MOMENT   [16:19] first moment h = mass * centre of mass, body frame, kg m
  B_INERTIA  [19:25] inertia about the body origin, body axes (xx, xy, xz, yy, yz, zz), kg m^2
  B_ARMATURE [25]    armature (reflected rotor inertia), kg m^2 or kg
Tree record (`RobotModel.kernel_tree()`, the whole model as one argument: each argument costs a
little to pass): TREE_STRIDE floats per body, the body record followed by
  PARENT     [26]    parent body, -1 for the fixed root (parent < body)
  JTYPE      [27]    REVOLUTE or PRISMATIC
Workspace record (`Data.ws`): WS_STRIDE floats per body, all in the body frame unless said:
  W_ROT      [0:9]   rotation of the body in its parent, row-major
  W_POS      [9:12]  body origin in the parent frame, m
  W_OMEGA    [12:15] angular velocity, rad/s
  W_ALPHA    [15:18] angular acceleration, rad/s^2
  W_ACC      [18:21] linear acceleration of the body origin, including -gravity, m/s^2
  W_FORCE    [21:24] force the parent transmits to the body, N
  W_MOMENT   [24:27] moment the parent transmits to the body, about the body origin, N m
  W_ROT_ROOT [27:36] rotation of the body in the root frame (root_rotations only)
Composite-inertia record (`Data.comp`, mass matrix): COMP_STRIDE floats per body, the body
record's [B_MASS:B_ARMATURE] (mass, first moment, inertia about the origin) of the body and
everything below it, in the body frame.
Wrench record: `wrench_body[k]` is the body of the k-th wrench, `wrench_data[WRENCH_STRIDE k:]`
holds WR_ORIGIN the link origin in that body's frame (3), then the wrench the link exerts on its
environment, root-frame axes: WR_FORCE (3) and WR_MOMENT about the link origin (3), then 3 unused.
Packed record (a model's default workspace, `RobotModel._packed`): one array holding everything
but the state, so that the most common calls pass three to five arrays instead of five to seven
(each costs ~0.04 µs to pass): PK_N the number of bodies n, then from PK_TREE the tree record
(n TREE_STRIDE), the default gravity (3, root frame), the workspace (n WS_STRIDE) and the
composite-inertia scratch (n COMP_STRIDE); `packed_slices` / `unpack` cut it.
"""

from __future__ import annotations

import math

import numpy as np

from rnea_ros.compiled.jit import njit, njit_inline

# Body record
B_ROT = 0
B_POS = 9
B_AXIS = 12
B_MASS = 15
B_MOMENT = 16
B_INERTIA = 19
B_ARMATURE = 25
BODY_STRIDE = 26
# Tree record: the body record, then
PARENT = 26
JTYPE = 27
TREE_STRIDE = 28
# Workspace record
W_ROT = 0
W_POS = 9
W_OMEGA = 12
W_ALPHA = 15
W_ACC = 18
W_FORCE = 21
W_MOMENT = 24
W_ROT_ROOT = 27
WS_STRIDE = 36
# Composite-inertia record: the body record's mass, first moment and inertia, in that order
C_MASS = 0
C_MOMENT = C_MASS + B_MOMENT - B_MASS
C_INERTIA = C_MASS + B_INERTIA - B_MASS
COMP_STRIDE = B_ARMATURE - B_MASS
# Packed record
PK_N = 0
PK_TREE = 1
# Wrench record
WR_ORIGIN = 0
WR_FORCE = 3
WR_MOMENT = 6
WRENCH_STRIDE = 12
# Joint types (tree[JTYPE])
REVOLUTE = 0
PRISMATIC = 1
# Status returned by the public kernels; on BAD_SIZE nothing has been written.
OK = 0
BAD_SIZE = 1
NOT_FINITE = 2


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
def _all_finite(x):
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
    forward_kinematic_pass(tree, qd, qdd, gravity, ws)
    backward_force_pass(tree, ws, tau, False)
    add_armature(tree, qdd, tau)
    return OK if _all_finite(tau) else NOT_FINITE


@njit
def rnea_wrench_kernel(tree, q, qd, qdd, gravity, wrench_body, wrench_data, ws, tau):
    """rnea_kernel plus link wrenches, τ = M q̈ + c + g + Σ Jᵀ F (see the module doc); a status."""
    if not _sizes_ok(len(tree) // TREE_STRIDE, q, qd, qdd, gravity, ws, tau):
        return BAD_SIZE
    joint_transforms(tree, q, ws)
    forward_kinematic_pass(tree, qd, qdd, gravity, ws)
    if len(wrench_body) > 0:
        root_rotations(tree, ws)
        add_link_wrenches(wrench_body, wrench_data, ws)
    backward_force_pass(tree, ws, tau, False)
    add_armature(tree, qdd, tau)
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
    gravity_kinematic_pass(tree, gravity, ws)
    backward_force_pass(tree, ws, tau, True)
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


@njit
def mass_matrix_kernel(tree, q, ws, comp, mass):
    """Joint-space inertia M(q) (row-major n×n into `mass`) by the composite-rigid-body algorithm
    (`comp`: COMP_STRIDE floats per body of scratch); a status."""
    n = len(tree) // TREE_STRIDE
    if len(q) != n or len(mass) != n * n or len(ws) < n * WS_STRIDE or len(comp) < COMP_STRIDE * n:
        return BAD_SIZE
    joint_transforms(tree, q, ws)
    composite_inertia_pass(tree, ws, comp)
    mass_matrix_columns(tree, ws, comp, mass)
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


# Floating root. The bodies of the tree stay the joints' bodies; the root (base) body, which the
# root joint moves in the world, is described by the root record and computed in the kernels
# below, with its own workspace record at body index n (after the n bodies of the tree: `Data`
# holds nv >= n + 1 records). Configuration and velocity layouts are Pinocchio's: free flyer
# q = [p (3, world), quaternion x y z w (4)] + joints, v = [v (3), ω (3), base frame] + joints;
# planar q = [x, y, cos θ, sin θ] + joints, v = [v_x, v_y, ω_z] (base frame) + joints.
# Root record (`RobotModel.root_record`), ROOT_STRIDE floats:
#   RT_KIND    [0]      ROOT_FIXED, ROOT_FREE or ROOT_PLANAR
#   RT_MASS    [1]      mass of the base body (the root link and every link fixed to it), kg
#   RT_MOMENT  [2:5]    its first moment, base frame, kg m
#   RT_INERTIA [5:11]   its inertia about the base origin, base axes (xx, xy, xz, yy, yz, zz)
#   RT_ROT     [11:20]  the root joint's placement in the world (URDF origin): rotation, row-major
#   RT_POS     [20:23]  and origin, m
# The base's workspace record (body n) holds: W_ROT_ROOT the base rotation in the world, W_POS its
# origin in the world, W_OMEGA, W_ALPHA, W_ACC its motion in the base frame (W_ACC: classical
# acceleration of the origin minus gravity), W_FORCE, W_MOMENT the link wrenches on the base.
RT_KIND = 0
RT_MASS = 1
RT_MOMENT = 2
RT_INERTIA = 5
RT_ROT = 11
RT_POS = 20
ROOT_STRIDE = 23
ROOT_FIXED = 0
ROOT_FREE = 1
ROOT_PLANAR = 2
# status (a bit of its own, as statuses are OR-ed): the base orientation (quaternion, or cos θ,
# sin θ) is not of unit norm
NOT_UNIT = 4
UNIT_TOL = 1e-6  # on |norm² - 1| of the base orientation


@njit_inline
def root_sizes(root):
    """(nq, nv) of the root joint: (7, 6) free flyer, (4, 3) planar, (0, 0) fixed."""
    kind = int(root[RT_KIND])
    if kind == ROOT_FREE:
        return 7, 6
    if kind == ROOT_PLANAR:
        return 4, 3
    return 0, 0


@njit
def base_placement(root, q, ws, n):
    """Write the base's rotation (W_ROT_ROOT) and origin (W_POS) in the world into body n's
    workspace record; False when the orientation is not of unit norm (within UNIT_TOL)."""
    kind = int(root[RT_KIND])
    if kind == ROOT_FREE:
        px = q[0]
        py = q[1]
        pz = q[2]
        x = q[3]
        y = q[4]
        z = q[5]
        w = q[6]
        norm2 = x * x + y * y + z * z + w * w
        tx = 2.0 * x
        ty = 2.0 * y
        tz = 2.0 * z
        q00 = 1.0 - (ty * y + tz * z)
        q01 = tx * y - tz * w
        q02 = tx * z + ty * w
        q10 = tx * y + tz * w
        q11 = 1.0 - (tx * x + tz * z)
        q12 = ty * z - tx * w
        q20 = tx * z - ty * w
        q21 = ty * z + tx * w
        q22 = 1.0 - (tx * x + ty * y)
    else:
        px = q[0]
        py = q[1]
        pz = 0.0
        c = q[2]
        s = q[3]
        norm2 = c * c + s * s
        q00 = c
        q01 = -s
        q02 = 0.0
        q10 = s
        q11 = c
        q12 = 0.0
        q20 = 0.0
        q21 = 0.0
        q22 = 1.0
    r = n * WS_STRIDE + W_ROT_ROOT
    o = n * WS_STRIDE + W_POS
    for a in range(3):
        j0 = root[RT_ROT + 3 * a]
        j1 = root[RT_ROT + 3 * a + 1]
        j2 = root[RT_ROT + 3 * a + 2]
        ws[r + 3 * a] = j0 * q00 + j1 * q10 + j2 * q20
        ws[r + 3 * a + 1] = j0 * q01 + j1 * q11 + j2 * q21
        ws[r + 3 * a + 2] = j0 * q02 + j1 * q12 + j2 * q22
        ws[o + a] = j0 * px + j1 * py + j2 * pz + root[RT_POS + a]
    return abs(norm2 - 1.0) <= UNIT_TOL


@njit_inline
def world_to_base(ws, n, x, y, z):
    """A world vector in the base frame (base rotation from base_placement)."""
    r = n * WS_STRIDE + W_ROT_ROOT
    return (
        ws[r] * x + ws[r + 3] * y + ws[r + 6] * z,
        ws[r + 1] * x + ws[r + 4] * y + ws[r + 7] * z,
        ws[r + 2] * x + ws[r + 5] * y + ws[r + 8] * z,
    )


@njit
def base_wrench(tree, root, ws, n, at_rest):
    """The wrench (force, moment about the base origin, base frame) the root joint transmits to
    the base: the base body's inertial wrench for the motion in body n's record, the link wrenches
    there, and the wrenches the base transmits to the bodies on it (after backward_force_pass)."""
    s = n * WS_STRIDE
    m = root[RT_MASS]
    hx = root[RT_MOMENT]
    hy = root[RT_MOMENT + 1]
    hz = root[RT_MOMENT + 2]
    ax = ws[s + W_ACC]
    ay = ws[s + W_ACC + 1]
    az = ws[s + W_ACC + 2]
    if at_rest:
        fx = m * ax
        fy = m * ay
        fz = m * az
        nx = hy * az - hz * ay
        ny = hz * ax - hx * az
        nz = hx * ay - hy * ax
    else:
        ixx = root[RT_INERTIA]
        ixy = root[RT_INERTIA + 1]
        ixz = root[RT_INERTIA + 2]
        iyy = root[RT_INERTIA + 3]
        iyz = root[RT_INERTIA + 4]
        izz = root[RT_INERTIA + 5]
        wx = ws[s + W_OMEGA]
        wy = ws[s + W_OMEGA + 1]
        wz = ws[s + W_OMEGA + 2]
        dx = ws[s + W_ALPHA]
        dy = ws[s + W_ALPHA + 1]
        dz = ws[s + W_ALPHA + 2]
        ux = wy * hz - wz * hy
        uy = wz * hx - wx * hz
        uz = wx * hy - wy * hx
        fx = m * ax + dy * hz - dz * hy + wy * uz - wz * uy
        fy = m * ay + dz * hx - dx * hz + wz * ux - wx * uz
        fz = m * az + dx * hy - dy * hx + wx * uy - wy * ux
        lx = ixx * wx + ixy * wy + ixz * wz
        ly = ixy * wx + iyy * wy + iyz * wz
        lz = ixz * wx + iyz * wy + izz * wz
        nx = ixx * dx + ixy * dy + ixz * dz + wy * lz - wz * ly + hy * az - hz * ay
        ny = ixy * dx + iyy * dy + iyz * dz + wz * lx - wx * lz + hz * ax - hx * az
        nz = ixz * dx + iyz * dy + izz * dz + wx * ly - wy * lx + hx * ay - hy * ax
    fx += ws[s + W_FORCE]
    fy += ws[s + W_FORCE + 1]
    fz += ws[s + W_FORCE + 2]
    nx += ws[s + W_MOMENT]
    ny += ws[s + W_MOMENT + 1]
    nz += ws[s + W_MOMENT + 2]
    for i in range(n):
        if tree[i * TREE_STRIDE + PARENT] >= 0:
            continue
        w = i * WS_STRIDE
        r = w + W_ROT
        f0 = ws[w + W_FORCE]
        f1 = ws[w + W_FORCE + 1]
        f2 = ws[w + W_FORCE + 2]
        m0 = ws[w + W_MOMENT]
        m1 = ws[w + W_MOMENT + 1]
        m2 = ws[w + W_MOMENT + 2]
        gx = ws[r] * f0 + ws[r + 1] * f1 + ws[r + 2] * f2
        gy = ws[r + 3] * f0 + ws[r + 4] * f1 + ws[r + 5] * f2
        gz = ws[r + 6] * f0 + ws[r + 7] * f1 + ws[r + 8] * f2
        px = ws[w + W_POS]
        py = ws[w + W_POS + 1]
        pz = ws[w + W_POS + 2]
        fx += gx
        fy += gy
        fz += gz
        nx += ws[r] * m0 + ws[r + 1] * m1 + ws[r + 2] * m2 + py * gz - pz * gy
        ny += ws[r + 3] * m0 + ws[r + 4] * m1 + ws[r + 5] * m2 + pz * gx - px * gz
        nz += ws[r + 6] * m0 + ws[r + 7] * m1 + ws[r + 8] * m2 + px * gy - py * gx
    return fx, fy, fz, nx, ny, nz


@njit_inline
def _store_base_effort(kind, tau, fx, fy, fz, nx, ny, nz):
    """The root joint's efforts: the base wrench projected on its velocity directions."""
    tau[0] = fx
    tau[1] = fy
    if kind == ROOT_PLANAR:
        tau[2] = nz
    else:
        tau[2] = fz
        tau[3] = nx
        tau[4] = ny
        tau[5] = nz


@njit_inline
def _floating_sizes_ok(n, nq0, nv0, q, v, a, gravity, ws, tau):
    """True if every argument has the length a floating-root model of n bodies needs."""
    return (
        nv0 > 0
        and len(q) == n + nq0
        and len(v) == n + nv0
        and len(a) == n + nv0
        and len(tau) == n + nv0
        and len(gravity) == 3
        and len(ws) >= (n + 1) * WS_STRIDE
    )


@njit_inline
def _floating_forward(tree, root, q, v, a, gravity, ws, n, nq0, nv0):
    """Base placement and motion into body n's record, then the forward pass of the joints'
    bodies; False (nothing else done) when the base orientation is not of unit norm."""
    if not base_placement(root, q, ws, n):
        return False
    s = n * WS_STRIDE
    gx, gy, gz = world_to_base(ws, n, gravity[0], gravity[1], gravity[2])
    if nv0 == 6:
        vx = v[0]
        vy = v[1]
        vz = v[2]
        wx = v[3]
        wy = v[4]
        wz = v[5]
        ax = a[0]
        ay = a[1]
        az = a[2]
        dx = a[3]
        dy = a[4]
        dz = a[5]
    else:
        vx = v[0]
        vy = v[1]
        vz = 0.0
        wx = 0.0
        wy = 0.0
        wz = v[2]
        ax = a[0]
        ay = a[1]
        az = 0.0
        dx = 0.0
        dy = 0.0
        dz = a[2]
    ws[s + W_OMEGA] = wx
    ws[s + W_OMEGA + 1] = wy
    ws[s + W_OMEGA + 2] = wz
    ws[s + W_ALPHA] = dx
    ws[s + W_ALPHA + 1] = dy
    ws[s + W_ALPHA + 2] = dz
    # classical acceleration of the base origin: the spatial one plus ω × v; minus gravity
    ws[s + W_ACC] = ax + wy * vz - wz * vy - gx
    ws[s + W_ACC + 1] = ay + wz * vx - wx * vz - gy
    ws[s + W_ACC + 2] = az + wx * vy - wy * vx - gz
    for k in range(6):
        ws[s + W_FORCE + k] = 0.0  # W_MOMENT follows W_FORCE
    joint_transforms(tree, q[nq0:], ws)
    forward_kinematic_pass(tree, v[nv0:], a[nv0:], ws[s + W_OMEGA : s + W_ACC + 3], ws)
    return True


@njit_inline
def _floating_backward(tree, root, a, ws, tau, n, nv0):
    """The backward pass, the armature and the root joint's efforts (after _floating_forward and
    any link wrenches); a status."""
    backward_force_pass(tree, ws, tau[nv0:], False)
    add_armature(tree, a[nv0:], tau[nv0:])
    fx, fy, fz, nx, ny, nz = base_wrench(tree, root, ws, n, False)
    _store_base_effort(int(root[RT_KIND]), tau, fx, fy, fz, nx, ny, nz)
    return OK if _all_finite(tau) else NOT_FINITE


@njit
def floating_rnea_kernel(tree, root, q, v, a, gravity, wrench_body, wrench_data, ws, tau):
    """Inverse dynamics of a floating-root model: τ (nv) = M a + h + Σ Jᵀ F, the root joint's
    efforts first (the base wrench, base frame, as Pinocchio). gravity in the world frame; link
    wrenches in world axes, body n for the links fixed to the base. A status."""
    n = len(tree) // TREE_STRIDE
    nq0, nv0 = root_sizes(root)
    if not _floating_sizes_ok(n, nq0, nv0, q, v, a, gravity, ws, tau):
        return BAD_SIZE
    if not _floating_forward(tree, root, q, v, a, gravity, ws, n, nq0, nv0):
        return NOT_UNIT
    if len(wrench_body) > 0:
        root_rotations(tree, ws)
        rotations_in_world(ws, n)
        add_link_wrenches(wrench_body, wrench_data, ws)
    return _floating_backward(tree, root, a, ws, tau, n, nv0)


@njit_inline
def rotations_in_world(ws, n):
    """Premultiply the bodies' rotations in the base (W_ROT_ROOT, from root_rotations) by the
    base's rotation in the world (body n's W_ROT_ROOT)."""
    u = n * WS_STRIDE + W_ROT_ROOT
    for i in range(n):
        w = i * WS_STRIDE + W_ROT_ROOT
        for c in range(3):
            x = ws[w + c]
            y = ws[w + 3 + c]
            z = ws[w + 6 + c]
            for r in range(3):
                ws[w + 3 * r + c] = ws[u + 3 * r] * x + ws[u + 3 * r + 1] * y + ws[u + 3 * r + 2] * z


@njit
def floating_gravity_kernel(tree, root, q, gravity, ws, tau):
    """floating_rnea_kernel at rest (v = a = 0), with fewer operations; a status."""
    n = len(tree) // TREE_STRIDE
    kind = int(root[RT_KIND])
    nq0, nv0 = root_sizes(root)
    if (
        nv0 == 0
        or len(q) != n + nq0
        or len(tau) != n + nv0
        or len(gravity) != 3
        or len(ws) < (n + 1) * WS_STRIDE
    ):
        return BAD_SIZE
    if not base_placement(root, q, ws, n):
        return NOT_UNIT
    s = n * WS_STRIDE
    gx, gy, gz = world_to_base(ws, n, gravity[0], gravity[1], gravity[2])
    ws[s + W_ALPHA] = gx  # scratch: the base-frame gravity for gravity_kinematic_pass
    ws[s + W_ALPHA + 1] = gy
    ws[s + W_ALPHA + 2] = gz
    ws[s + W_ACC] = -gx
    ws[s + W_ACC + 1] = -gy
    ws[s + W_ACC + 2] = -gz
    for k in range(6):
        ws[s + W_FORCE + k] = 0.0
    joint_transforms(tree, q[nq0:], ws)
    gravity_kinematic_pass(tree, ws[s + W_ALPHA : s + W_ALPHA + 3], ws)
    backward_force_pass(tree, ws, tau[nv0:], True)
    fx, fy, fz, nx, ny, nz = base_wrench(tree, root, ws, n, True)
    _store_base_effort(kind, tau, fx, fy, fz, nx, ny, nz)
    return OK if _all_finite(tau) else NOT_FINITE


@njit_inline
def _floating_mass_matrix_from_transforms(tree, root, ws, comp, mass, n, nv0):
    """M (row-major nt×nt into `mass`) from the joint transforms already in ws (joint_transforms)."""
    nt = n + nv0
    composite_inertia_pass(tree, ws, comp)
    d = n * COMP_STRIDE
    for k in range(COMP_STRIDE):
        comp[d + k] = root[RT_MASS + k]
    for i in range(n - 1, -1, -1):
        if tree[i * TREE_STRIDE + PARENT] < 0:
            shift_composite(ws, i, comp, d)
    for i in range(nt * nt):
        mass[i] = 0.0
    # the base block: the whole robot's spatial inertia at the base origin, base frame
    m = comp[d + C_MASS]
    hx = comp[d + C_MOMENT]
    hy = comp[d + C_MOMENT + 1]
    hz = comp[d + C_MOMENT + 2]
    ci = d + C_INERTIA
    # [m 1, -[h]x ; [h]x, I] (linear rows first), or its rows and columns (0, 1, 5) for a planar root
    if nv0 == 6:
        for r in range(3):
            mass[r * nt + r] = m
        mass[4] = hz
        mass[5] = -hy
        mass[nt + 3] = -hz
        mass[nt + 5] = hx
        mass[2 * nt + 3] = hy
        mass[2 * nt + 4] = -hx
        for r in range(3):
            for c in range(3, 6):
                mass[c * nt + r] = mass[r * nt + c]
        mass[3 * nt + 3] = comp[ci]
        mass[3 * nt + 4] = mass[4 * nt + 3] = comp[ci + 1]
        mass[3 * nt + 5] = mass[5 * nt + 3] = comp[ci + 2]
        mass[4 * nt + 4] = comp[ci + 3]
        mass[4 * nt + 5] = mass[5 * nt + 4] = comp[ci + 4]
        mass[5 * nt + 5] = comp[ci + 5]
    else:
        mass[0] = m
        mass[nt + 1] = m
        mass[2] = mass[2 * nt] = -hy
        mass[nt + 2] = mass[2 * nt + 1] = hx
        mass[2 * nt + 2] = comp[ci + 5]
    floating_mass_matrix_columns(tree, nv0, ws, comp, mass)


@njit
def floating_mass_matrix_kernel(tree, root, q, ws, comp, mass):
    """M(q) of a floating-root model, row-major nv×nv into `mass`, the root joint's rows and
    columns first (base frame); `comp`: COMP_STRIDE (n + 1) floats of scratch. A status."""
    n = len(tree) // TREE_STRIDE
    nq0, nv0 = root_sizes(root)
    nt = n + nv0
    if (
        nv0 == 0
        or len(q) != n + nq0
        or len(mass) != nt * nt
        or len(ws) < (n + 1) * WS_STRIDE
        or len(comp) < COMP_STRIDE * (n + 1)
    ):
        return BAD_SIZE
    if not base_placement(root, q, ws, n):
        return NOT_UNIT
    joint_transforms(tree, q[nq0:], ws)
    _floating_mass_matrix_from_transforms(tree, root, ws, comp, mass, n, nv0)
    return OK if _all_finite(mass) else NOT_FINITE


@njit
def floating_mass_matrix_columns(tree, nv0, ws, comp, mass):
    """mass_matrix_columns into the joints' rows and columns (offset nv0) of an nt×nt `mass`,
    each column's wrench carried on to the base, where it gives the root joint's rows."""
    n = len(tree) // TREE_STRIDE
    nt = n + nv0
    for j in range(n):
        b = j * TREE_STRIDE
        c = j * COMP_STRIDE
        ex = tree[b + B_AXIS]
        ey = tree[b + B_AXIS + 1]
        ez = tree[b + B_AXIS + 2]
        m = comp[c + C_MASS]
        h0 = comp[c + C_MOMENT]
        h1 = comp[c + C_MOMENT + 1]
        h2 = comp[c + C_MOMENT + 2]
        jj = (j + nv0) * nt + j + nv0
        if tree[b + JTYPE] == REVOLUTE:
            fx = ey * h2 - ez * h1
            fy = ez * h0 - ex * h2
            fz = ex * h1 - ey * h0
            ci = c + C_INERTIA
            nx = comp[ci] * ex + comp[ci + 1] * ey + comp[ci + 2] * ez
            ny = comp[ci + 1] * ex + comp[ci + 3] * ey + comp[ci + 4] * ez
            nz = comp[ci + 2] * ex + comp[ci + 4] * ey + comp[ci + 5] * ez
            mass[jj] = ex * nx + ey * ny + ez * nz + tree[b + B_ARMATURE]
        else:
            fx = m * ex
            fy = m * ey
            fz = m * ez
            nx = h1 * ez - h2 * ey
            ny = h2 * ex - h0 * ez
            nz = h0 * ey - h1 * ex
            mass[jj] = ex * fx + ey * fy + ez * fz + tree[b + B_ARMATURE]
        i = j
        while i >= 0:
            # the wrench into the parent frame (the base's for a body on the root)
            w = i * WS_STRIDE
            r = w + W_ROT
            gx = ws[r] * fx + ws[r + 1] * fy + ws[r + 2] * fz
            gy = ws[r + 3] * fx + ws[r + 4] * fy + ws[r + 5] * fz
            gz = ws[r + 6] * fx + ws[r + 7] * fy + ws[r + 8] * fz
            px = ws[w + W_POS]
            py = ws[w + W_POS + 1]
            pz = ws[w + W_POS + 2]
            mx = ws[r] * nx + ws[r + 1] * ny + ws[r + 2] * nz + py * gz - pz * gy
            my = ws[r + 3] * nx + ws[r + 4] * ny + ws[r + 5] * nz + pz * gx - px * gz
            mz = ws[r + 6] * nx + ws[r + 7] * ny + ws[r + 8] * nz + px * gy - py * gx
            fx = gx
            fy = gy
            fz = gz
            nx = mx
            ny = my
            nz = mz
            i = int(tree[i * TREE_STRIDE + PARENT])
            if i >= 0:
                a = i * TREE_STRIDE
                if tree[a + JTYPE] == REVOLUTE:
                    x = tree[a + B_AXIS] * nx + tree[a + B_AXIS + 1] * ny + tree[a + B_AXIS + 2] * nz
                else:
                    x = tree[a + B_AXIS] * fx + tree[a + B_AXIS + 1] * fy + tree[a + B_AXIS + 2] * fz
                mass[(i + nv0) * nt + j + nv0] = x
                mass[(j + nv0) * nt + i + nv0] = x
        # the root joint's rows and columns: the wrench at the base, (f, n) or (f_x, f_y, n_z)
        c = j + nv0
        r = c * nt
        mass[c] = mass[r] = fx
        mass[nt + c] = mass[r + 1] = fy
        if nv0 == 6:
            mass[2 * nt + c] = mass[r + 2] = fz
            mass[3 * nt + c] = mass[r + 3] = nx
            mass[4 * nt + c] = mass[r + 4] = ny
            mass[5 * nt + c] = mass[r + 5] = nz
        else:
            mass[2 * nt + c] = mass[r + 2] = nz


def floating_packed_size(n):
    """Length of the floating packed record of n bodies: PK_N, the tree, the default gravity
    (world), the workspace and composite scratch of n + 1 bodies (the base last), the root record."""
    return PK_TREE + n * TREE_STRIDE + 3 + (n + 1) * (WS_STRIDE + COMP_STRIDE) + ROOT_STRIDE


def floating_packed_slices(n):
    """(tree, gravity, workspace, comp, root) slices of a floating packed record (plain Python)."""
    t = PK_TREE + n * TREE_STRIDE
    w = t + 3
    c = w + (n + 1) * WS_STRIDE
    r = c + (n + 1) * COMP_STRIDE
    return slice(PK_TREE, t), slice(t, w), slice(w, c), slice(c, r), slice(r, r + ROOT_STRIDE)


@njit_inline
def floating_unpack(packed):
    """(tree, gravity, workspace, comp, root) views of a floating packed record."""
    n = int(packed[PK_N])
    t = PK_TREE + n * TREE_STRIDE
    w = t + 3
    c = w + (n + 1) * WS_STRIDE
    r = c + (n + 1) * COMP_STRIDE
    return packed[PK_TREE:t], packed[t:w], packed[w:c], packed[c:r], packed[r : r + ROOT_STRIDE]


@njit
def floating_rnea_packed_kernel(packed, q, v, a, tau):
    """floating_rnea_kernel with the default gravity and no link wrenches, from a floating packed
    record (one argument for the model); a status."""
    tree, gravity, ws, _, root = floating_unpack(packed)
    n = len(tree) // TREE_STRIDE
    nq0, nv0 = root_sizes(root)
    if not _floating_sizes_ok(n, nq0, nv0, q, v, a, gravity, ws, tau):
        return BAD_SIZE
    if not _floating_forward(tree, root, q, v, a, gravity, ws, n, nq0, nv0):
        return NOT_UNIT
    return _floating_backward(tree, root, a, ws, tau, n, nv0)


@njit
def floating_gravity_packed_kernel(packed, q, tau):
    """floating_gravity_kernel with the default gravity, from a floating packed record; a status."""
    tree, gravity, ws, _, root = floating_unpack(packed)
    return floating_gravity_kernel(tree, root, q, gravity, ws, tau)


@njit
def floating_mass_matrix_packed_kernel(packed, q, mass):
    """floating_mass_matrix_kernel from a floating packed record, into an (nv, nv) C-contiguous
    `mass`; a status."""
    tree, _, ws, comp, root = floating_unpack(packed)
    return floating_mass_matrix_kernel(tree, root, q, ws, comp, mass.reshape(mass.size))


def packed_size(n):
    """Length of the packed record of n bodies."""
    return PK_TREE + n * TREE_STRIDE + 3 + n * WS_STRIDE + n * COMP_STRIDE


def packed_slices(n):
    """(tree, gravity, workspace, comp) slices of the packed record of n bodies (plain Python)."""
    t = PK_TREE + n * TREE_STRIDE
    w = t + 3
    c = w + n * WS_STRIDE
    return slice(PK_TREE, t), slice(t, w), slice(w, c), slice(c, c + n * COMP_STRIDE)


@njit_inline
def unpack(packed):
    """(tree, gravity, workspace, comp) views of a packed record (as packed_slices)."""
    n = int(packed[PK_N])
    t = PK_TREE + n * TREE_STRIDE
    w = t + 3
    c = w + n * WS_STRIDE
    return packed[PK_TREE:t], packed[t:w], packed[w:c], packed[c : c + n * COMP_STRIDE]


@njit
def rnea_packed_kernel(packed, q, qd, qdd, tau):
    """rnea_kernel with the tree, gravity and workspace of a packed record; a status."""
    tree, gravity, ws, _ = unpack(packed)
    return rnea_kernel(tree, q, qd, qdd, gravity, ws, tau)


@njit
def gravity_packed_kernel(packed, q, tau):
    """gravity_kernel with the tree, gravity and workspace of a packed record; a status."""
    tree, gravity, ws, _ = unpack(packed)
    return gravity_kernel(tree, q, gravity, ws, tau)


@njit
def rnea_packed_gravity_kernel(packed, q, qd, qdd, gravity, tau):
    """rnea_kernel with the tree and workspace of a packed record and this gravity; a status."""
    tree, _, ws, _ = unpack(packed)
    return rnea_kernel(tree, q, qd, qdd, gravity, ws, tau)


@njit
def rnea_packed_wrench_kernel(packed, q, qd, qdd, wrench_body, wrench_data, tau):
    """rnea_wrench_kernel with the tree, gravity and workspace of a packed record; a status."""
    tree, gravity, ws, _ = unpack(packed)
    return rnea_wrench_kernel(tree, q, qd, qdd, gravity, wrench_body, wrench_data, ws, tau)


@njit
def gravity_packed_gravity_kernel(packed, q, gravity, tau):
    """gravity_kernel with the tree and workspace of a packed record and this gravity; a status."""
    tree, _, ws, _ = unpack(packed)
    return gravity_kernel(tree, q, gravity, ws, tau)


@njit
def mass_matrix_packed_kernel(packed, q, mass):
    """mass_matrix_kernel with the tree and scratch of a packed record, into an (n, n) C-contiguous
    `mass`; a status."""
    tree, _, ws, comp = unpack(packed)
    return mass_matrix_kernel(tree, q, ws, comp, mass.reshape(mass.size))


# Rows of the `law` table of cycle_kernel (per joint) and of its `out` table.
LAW_KP, LAW_KD, LAW_LIMIT = range(3)  # N m/rad (or N/m), N m s/rad (or N s/m), N m (or N)
LAW_ROWS = 3
# Switches of cycle_kernel: the five model terms, then "evaluate them at the desired state".
SWITCH_DESIRED = 5
# out rows 0..5: the terms gravity, coriolis, inertia, friction, wrench, feedback; then:
OUT_TOTAL, OUT_CLAMPED, OUT_SCRATCH = 6, 7, 8
OUT_ROWS = 9


@njit
def model_terms(tree, qdx, qdd_des, gravity, switches, wrench_body, wrench_data, ws, out):
    """The effort law's model terms into rows of `out` (OUT_ROWS, n): gravity g(q), coriolis
    c(q, q̇), inertia M(q) q̈_des, wrench Σ Jᵀ F (each zero when its switch is 0; row 3, friction,
    is an input), from the joint transforms already in `ws` (joint_transforms at the q the terms
    are evaluated at), each term its own forward and backward pass as gravity_kernel, rnea_kernel
    and rnea_wrench_kernel compute it: the same numbers, without repeating the transforms.
    gravity: 6 values, the root-frame gravity (m/s²) then 3 zeros."""
    n = len(qdd_des)
    zero = out[OUT_SCRATCH]
    for i in range(n):
        zero[i] = 0.0
    no_gravity = gravity[3:6]
    for row in range(5):
        if not switches[row]:
            for i in range(n):
                out[row, i] = 0.0
    if switches[0]:
        gravity_kinematic_pass(tree, gravity[0:3], ws)
        backward_force_pass(tree, ws, out[0], True)
    if switches[1]:
        forward_kinematic_pass(tree, qdx, zero, no_gravity, ws)
        backward_force_pass(tree, ws, out[1], False)
        add_armature(tree, zero, out[1])
    if switches[2]:
        forward_kinematic_pass(tree, zero, qdd_des, no_gravity, ws)
        backward_force_pass(tree, ws, out[2], False)
        add_armature(tree, qdd_des, out[2])
    # friction: out[3] is an input, filled by rnea_ros.friction.compensation before the call
    if switches[4] and len(wrench_body) > 0:
        forward_kinematic_pass(tree, zero, zero, no_gravity, ws)
        root_rotations(tree, ws)
        add_link_wrenches(wrench_body, wrench_data, ws)
        backward_force_pass(tree, ws, out[4], False)
        add_armature(tree, zero, out[4])
    elif switches[4]:
        for i in range(n):
            out[4, i] = 0.0


@njit
def law_total(q, qd, q_des, qd_des, law, out):
    """The feedback row Kp (q_des − q) + Kd (q̇_des − q̇) of `out`, then the total clamped to
    ±limit into OUT_TOTAL and 1.0 where it was clamped into OUT_CLAMPED; law: (LAW_ROWS, n) per
    joint. A status (NOT_FINITE when the total is not finite)."""
    check = 0.0  # total - total: 0 for finite totals, NaN otherwise (before clamping hides an Inf)
    for i in range(len(q)):
        out[5, i] = law[LAW_KP, i] * (q_des[i] - q[i]) + law[LAW_KD, i] * (qd_des[i] - qd[i])
        total = out[0, i] + out[1, i] + out[2, i] + out[3, i] + out[4, i] + out[5, i]
        check += total - total
        limit = law[LAW_LIMIT, i]
        out[OUT_CLAMPED, i] = 1.0 if abs(total) > limit else 0.0
        out[OUT_TOTAL, i] = min(max(total, -limit), limit)
    return OK if check == 0.0 else NOT_FINITE


# The friction compensation's kernel (rnea_ros.friction.compensation) and its coefficient table:
# rows per joint, filled by `compensation.coefficient_table`.
FC_VISCOUS, FC_COULOMB, FC_STATIC, FC_STRIBECK, FC_SMOOTHING = range(5)
FC_SCALE, FC_FF_SCALE, FC_DEADBAND, FC_VISCOUS_BOUND, FC_COULOMB_BOUND = range(5, 10)
FC_ROWS = 10


@njit
def friction_kernel(qd, qd_des, driven, mass, period, coef, weight, out):
    """The compensation per joint into `out` (n,): feedforward at qd_des where driven[i] != 0,
    else feedback from qd bounded with M_ii = mass[i * n + i] (flat n × n) and `period` (s; ≤ 0:
    no feedback compensation); each joint's result times weight[i] (the runaway guard's fade).
    coef: (FC_ROWS, n). Returns 0, or 1 (nothing written) when a size does not match coef's n
    joints. The rules: rnea_ros.friction.compensation."""
    n = coef.shape[1]
    if coef.shape[0] != FC_ROWS or len(qd) != n or len(qd_des) != n or len(driven) != n:
        return 1
    if len(mass) != n * n or len(weight) != n or len(out) != n:
        return 1
    for i in range(n):
        coulomb = coef[FC_COULOMB, i]
        eps = coef[FC_SMOOTHING, i]
        if driven[i] != 0:
            v = qd_des[i]
            s = v / coef[FC_STRIBECK, i]
            level = coulomb + (coef[FC_STATIC, i] - coulomb) * math.exp(-s * s)
            tau = coef[FC_FF_SCALE, i] * (coef[FC_VISCOUS, i] * v + level * math.tanh(v / eps))
        elif period > 0.0:
            v = qd[i]
            s = v / coef[FC_STRIBECK, i]
            level = coulomb + (coef[FC_STATIC, i] - coulomb) * math.exp(-s * s)
            per = mass[i * n + i] / period
            alpha = coef[FC_SCALE, i]
            a = min(alpha * coef[FC_VISCOUS, i], coef[FC_VISCOUS_BOUND, i] * per)
            c = min(alpha * level, coef[FC_COULOMB_BOUND, i] * per)
            deadband = coef[FC_DEADBAND, i]
            w = 1.0
            if deadband > 0.0:
                x = v / deadband
                w = -math.expm1(-x * x)
            tau = w * (a * v + c * math.tanh(v / eps))
        else:
            tau = 0.0
        out[i] = weight[i] * tau
    return 0


# The runaway guard's kernels (rnea_ros.friction.runaway_guard, which says what they decide).
GUARD_SPEED = 0.1  # rad/s (or m/s): velocity errors below this never trip the guard
# Rows of the guard's state table (per joint) and slots of its clock.
G_WEIGHT, G_TRIPPED, G_INJECTED, G_DISSIPATED, G_ERROR, G_PREVIOUS = range(6)
G_ROWS = 6
K_ELAPSED, K_WINDOW, K_TRIPS = range(3)
K_SIZE = 3


@njit
def guard_kernel(state, clock, dt, qd_prev, qd, applied, need, friction, qd_des, driven, mass):
    """Integrate one period of length dt (s) into `state` (G_ROWS, n) and `clock`; at a window's
    end decide which joints trip. mass: M(q) flat (n × n). Returns the number of new trips."""
    n = len(qd)
    window = clock[K_WINDOW]
    for i in range(n):
        vbar = 0.5 * (qd_prev[i] + qd[i])
        state[G_INJECTED, i] += friction[i] * vbar * dt
        state[G_DISSIPATED, i] += (applied[i] - need[i]) * vbar * dt
        e = qd[i] - (qd_des[i] if driven[i] != 0 else 0.0)
        state[G_ERROR, i] += e * e * dt
        if state[G_TRIPPED, i] != 0.0:
            state[G_WEIGHT, i] = max(0.0, state[G_WEIGHT, i] - dt / window)
    clock[K_ELAPSED] += dt
    trips = 0
    if clock[K_ELAPSED] >= window:
        elapsed = clock[K_ELAPSED]
        for i in range(n):
            rms = math.sqrt(state[G_ERROR, i] / elapsed)
            floor = 0.5 * mass[i * n + i] * GUARD_SPEED * GUARD_SPEED
            injected = state[G_INJECTED, i]
            if (
                state[G_TRIPPED, i] == 0.0
                and rms > GUARD_SPEED
                and rms > state[G_PREVIOUS, i]
                and injected > floor
                and injected - state[G_DISSIPATED, i] > floor
            ):
                state[G_TRIPPED, i] = 1.0
                trips += 1
            state[G_PREVIOUS, i] = rms
            state[G_INJECTED, i] = 0.0
            state[G_DISSIPATED, i] = 0.0
            state[G_ERROR, i] = 0.0
        clock[K_ELAPSED] = 0.0
        clock[K_TRIPS] += trips
    return trips


@njit
def guard_step_kernel(tree, gravity, ws, prev, q, qd, qd_des, driven, dt, mid, need, mass, state, clock):
    """One period since the previous sample `prev` (rows q, q̇, applied effort, friction term):
    the effort the rigid-body model needs for the measured motion at the period's midpoint
    (rnea at mean q, mean q̇ and Δq̇/dt, root-frame `gravity` 3 values) into `need`, then
    `guard_kernel`. mid: (3, n) scratch. Returns the number of new trips (-1: rnea failed)."""
    n = len(q)
    for i in range(n):
        mid[0, i] = 0.5 * (prev[0, i] + q[i])
        mid[1, i] = 0.5 * (prev[1, i] + qd[i])
        mid[2, i] = (qd[i] - prev[1, i]) / dt
    if rnea_kernel(tree, mid[0], mid[1], mid[2], gravity, ws, need) != 0:
        return -1
    return guard_kernel(state, clock, dt, prev[1], qd, prev[2], need, prev[3], qd_des, driven, mass)


# The effort law's friction path (rnea_ros.control.effort_law.compute_efforts): before
# effort_kernel, M(q) and the friction row; after it, the runaway guard and the sample it keeps.
@njit
def friction_before_kernel(tree, q, qd, qd_des, driven, ws, comp, mass, period, coef, weights, row):
    """M(q) into `mass`, then the friction row (friction_kernel); a status."""
    status = mass_matrix_kernel(tree, q, ws, comp, mass)
    if status != OK:
        return status
    return BAD_SIZE * friction_kernel(qd, qd_des, driven, mass, period, coef, weights, row)


@njit
def friction_after_kernel(
    tree, g, ws, prev, q, qd, qd_des, driven, dt, run_guard, mid, need, mass, state, clock, total, row
):
    """The runaway guard's period since `prev` (when run_guard), then this call's sample into
    `prev` (rows q, q̇, applied total, friction term) for the next one."""
    if run_guard:
        guard_step_kernel(tree, g, ws, prev, q, qd, qd_des, driven, dt, mid, need, mass, state, clock)
    for i in range(len(q)):
        prev[0, i] = q[i]
        prev[1, i] = qd[i]
        prev[2, i] = total[i]
        prev[3, i] = row[i]
    return 0


# One cycle of the effort law (rnea_ros.control.effort_law.compute_efforts) in one call and one
# kinematics pass per configuration, in the manner of Pinocchio's computeAllTerms: the joint
# transforms at the measured q feed M(q) (friction bound, feedback bound) and, unless the law
# evaluates its model terms at the desired state, every model term; the runaway guard's rnea is
# at the period's midpoint, another configuration, and makes its own.
@njit
def cycle_kernel(
    tree, q, qd, q_des, qd_des, qdd_des, gravity, switches, law, law_now, wrench_body, wrench_data,
    ws, comp, mass, friction_on, coef, driven, period, bound, refresh, minv, lag, max_lag, scale,
    rows, run_guard, dt, prev, mid, need, state, clock, out,
):  # fmt: skip
    """The inverse_dynamics effort law for one cycle, in turn: M(q) into `mass` and the friction
    row out[3] (friction_kernel; when friction_on); M(q)⁻¹ into `minv` (when bound and refresh)
    and the gains of this cycle into law_now (bound_gains_kernel; when bound); the model terms
    (model_terms) at q, q̇ or, per switches[SWITCH_DESIRED], at the desired state; the feedback,
    the total and its clamp (law_total, gains of law_now); then the runaway guard's period and
    this call's sample (friction_after_kernel; when friction_on, the period when run_guard).
    out: (OUT_ROWS, n); law, law_now: (LAW_ROWS, n). A status (after a failure nothing later
    runs)."""
    nb = len(tree) // TREE_STRIDE
    n = len(q)
    if out.shape[0] != OUT_ROWS or out.shape[1] != n or law.shape[0] != LAW_ROWS or law.shape[1] != n:
        return BAD_SIZE
    if not _sizes_ok(nb, q, qd_des, qdd_des, gravity[:3], ws, qd):
        return BAD_SIZE
    if len(q_des) != n or len(gravity) != 6:
        return BAD_SIZE
    if len(mass) != n * n or len(comp) < COMP_STRIDE * n:
        return BAD_SIZE
    refresh = bound and refresh
    have_pose = False  # ws holds the joint transforms at q
    if friction_on or refresh:
        joint_transforms(tree, q, ws)
        have_pose = True
        composite_inertia_pass(tree, ws, comp)
        mass_matrix_columns(tree, ws, comp, mass)
        if not _all_finite(mass):
            return NOT_FINITE
    if friction_on and friction_kernel(qd, qd_des, driven, mass, period, coef, state[G_WEIGHT], out[3]) != 0:
        return BAD_SIZE
    if refresh:
        status = inverse_inertia_kernel(tree, q, ws, comp, mass, True, minv)
        if status != OK:
            return status
    if bound:
        bound_gains_kernel(minv, law, law_now, lag, max_lag, scale, rows)
    desired = switches[SWITCH_DESIRED] != 0
    if switches[0] or switches[1] or switches[2] or switches[4]:
        if desired:
            joint_transforms(tree, q_des, ws)
        elif not have_pose:
            joint_transforms(tree, q, ws)
    model_terms(
        tree, qd_des if desired else qd, qdd_des, gravity, switches, wrench_body, wrench_data, ws, out
    )
    status = law_total(q, qd, q_des, qd_des, law_now, out)
    if status != OK:
        return status
    if friction_on:
        friction_after_kernel(
            tree, gravity[0:3], ws, prev, q, qd, qd_des, driven, dt, run_guard, mid, need, mass, state,
            clock, out[OUT_TOTAL], out[3],
        )  # fmt: skip
    return OK


# The feedback bound's kernels (rnea_ros.control.feedback_bound, which derives them).
BOUND_ITERATIONS = 60  # bound on the row-by-row lowering (it converges in a few)


@njit
def crossover(a: float, b: float) -> float:
    """ω_c of a PD with damping rate a (1/s) and stiffness rate b (1/s²) on a unit inertia."""
    return math.sqrt(0.5 * (a * a + math.sqrt(a * a * a * a + 4.0 * b * b)))


@njit
def inverse_inertia_kernel(tree, q, ws, comp, mass, have_mass, minv):
    """M(q)⁻¹ into `minv` (n, n); M(q) into `mass` first unless have_mass. A singular M (a
    massless joint) is inverted with a floor of 1e-9 × its largest diagonal entry, so that such
    a joint's rates are huge and its gains vanish. A status."""
    n = len(q)
    if not have_mass:
        status = mass_matrix_kernel(tree, q, ws, comp, mass)
        if status != OK:
            return status
    m = np.empty((n, n))
    top = 0.0
    for i in range(n):
        for j in range(n):
            m[i, j] = mass[i * n + j]
        top = max(top, m[i, i])
    floor = 1e-9 * top + 1e-300
    for i in range(n):
        m[i, i] += floor
    for i in range(n):
        for j in range(n):
            if not math.isfinite(m[i, j]):
                return NOT_FINITE
    inv = np.linalg.inv(m)
    for i in range(n):
        for j in range(n):
            minv[i, j] = inv[i, j]
    return OK


@njit
def bound_gains_kernel(minv, law, law_now, lag, max_lag, scale, rows):
    """The gains of this cycle into law_now's LAW_KP and LAW_KD rows and their scales into
    `scale` (see rnea_ros.control.feedback_bound); `rows` (2, n) is scratch."""
    n = minv.shape[0]
    kp = law[LAW_KP]
    kd = law[LAW_KD]
    for i in range(n):
        scale[i] = 1.0
    if lag > 0.0 and max_lag > 0.0:
        target = max_lag / lag
        for _ in range(BOUND_ITERATIONS):
            worst = 0.0
            for i in range(n):
                if kp[i] <= 0.0 and kd[i] <= 0.0:
                    continue
                a = 0.0
                b = 0.0
                for j in range(n):
                    mij = abs(minv[i, j])
                    a += math.sqrt(scale[j] * kd[i] * kd[j]) * mij
                    b += scale[j] * math.sqrt(kp[i] * kp[j]) * mij
                rows[0, i] = math.sqrt(scale[i]) * a
                rows[1, i] = scale[i] * b
            for i in range(n):
                if kp[i] <= 0.0 and kd[i] <= 0.0:
                    continue
                wc = crossover(rows[0, i], rows[1, i])
                if not wc < math.inf:  # a massless joint: no gain at any rate
                    scale[i] = 0.0
                elif wc > target:
                    worst = max(worst, wc / target)
                    scale[i] *= target / wc
            if worst <= 1.0 + 1e-9:
                break
    for i in range(n):
        s = scale[i]
        law_now[LAW_KP, i] = kp[i] * s * s
        law_now[LAW_KD, i] = kd[i] * s
    return OK


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
OB_FRICTION = 3  # 1: subtract the friction of `friction`
OB_SMOOTHING = 4  # v_ε of the friction's tanh
OB_SIZE = 5


@njit
def observer_step_kernel(
    tree, gravity, q, qd, tau, ws, scratch, friction, gain, p_prev, known_prev, r, options
):
    """One step of the momentum observer (rnea_ros.estimation.observer): updates p_prev, known_prev (the
    integrand τ_m + Cᵀ q̇ − g) and r in place. friction (4 n): viscous, Coulomb, static, Stribeck
    velocity per joint; scratch (S_STRIDE n + 2 n). A status."""
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
    for i in range(n):
        known = scratch[s + n + i] + tau[i]
        if with_gravity:
            known -= g[i]
        if with_friction:
            v = qd[i]
            fc = friction[n + i]
            level = fc + (friction[2 * n + i] - fc) * math.exp(-((v / friction[3 * n + i]) ** 2))
            known -= friction[i] * v + level * math.tanh(v / v_eps)
        p = scratch[s + i]
        if first:
            r[i] = 0.0
        else:
            dy = p - p_prev[i] - 0.5 * dt * (known + known_prev[i])
            a = math.exp(-gain[i] * dt)
            r[i] = a * r[i] + (1.0 - a) * (dy / dt)
        p_prev[i] = p
        known_prev[i] = known
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


# Contact point record (`points` of floating_contact_kernel, built by
# `rnea_ros.algorithms.contact_dynamics.ContactProblem`): PT_STRIDE floats per point (a contact, or
# a link with a wrench), its rows of the stacked Jacobian `jac` and, for a rectangle whose long
# axis is its link's x axis, its block of the force map T (6×16 corner-force generators, see
# `contact_dynamics`).
PT_BODY = 0  # body of the link, -1 for a link fixed to the base
PT_OFFSET = 1  # [1:4] the link origin in that body's frame (the base frame for -1), m
PT_ROWS = 4  # 3 (linear rows) or 6 (linear, then angular)
PT_ROW = 5  # its first row in `jac`
PT_CORNERS = 6  # 1: write its corner generators into `tmat` from its link's x axis
PT_XAXIS = 7  # [7:10] the link's x axis in the body's frame
PT_NORMAL = 10  # [10:13] unit contact normal, world axes
PT_MU = 13  # μ / √2, the inscribed 4-facet pyramid of each corner
PT_EXTENT = 14  # [14:16] half sizes X, Y of the rectangle, m
PT_TROW = 16  # its first row in `tmat`
PT_TCOL = 17  # its first column in `tmat`
PT_STRIDE = 18
# status of floating_contact_kernel: a rectangle's link x axis is along its normal (no tangent)
ALONG_NORMAL = 8


@njit
def floating_contact_kernel(packed, q, v, gravity, points, mass, h, jac, tmat):
    """What contact-consistent inverse dynamics needs of a floating-root model, from one
    kinematics pass (the joint transforms once): h = c + g (nv; floating_rnea_kernel with a = 0 and
    no link wrenches, the same operations), M (nv×nv into the C-contiguous `mass`, as
    floating_mass_matrix_kernel), and for every point of `points` (PT_* record) its rows of the
    link-origin Jacobian (world axes, linear rows first, the root columns mapping the base-frame
    twist: `dynamics.jacobian`) into `jac` (rows × nv), and for a rectangle with PT_CORNERS its
    corner generators into `tmat` (t₁ = the link's x axis projected on the contact plane, t₂ =
    n × t₁, as `contact_dynamics.Contact` with that tangent). gravity: world axes. A status:
    BAD_SIZE, NOT_UNIT, ALONG_NORMAL, NOT_FINITE or OK."""
    tree, _, ws, comp, root = floating_unpack(packed)
    n = len(tree) // TREE_STRIDE
    nq0, nv0 = root_sizes(root)
    nt = n + nv0
    if (
        nv0 == 0
        or len(q) != n + nq0
        or len(v) != nt
        or len(h) != nt
        or len(gravity) != 3
        or mass.shape[0] != nt
        or mass.shape[1] != nt
        or jac.shape[1] != nt
    ):
        return BAD_SIZE
    zero = np.zeros(nt)
    if not _floating_forward(tree, root, q, v, zero, gravity, ws, n, nq0, nv0):
        return NOT_UNIT
    status = _floating_backward(tree, root, zero, ws, h, n, nv0)
    flat = mass.reshape(nt * nt)
    _floating_mass_matrix_from_transforms(tree, root, ws, comp, flat, n, nv0)
    if not _all_finite(flat):
        status = NOT_FINITE
    # the bodies' rotations (W_ROT_ROOT) and origins (pos) in the base frame
    root_rotations(tree, ws)
    pos = np.empty(3 * n)
    for i in range(n):
        lam = int(tree[i * TREE_STRIDE + PARENT])
        w = i * WS_STRIDE + W_POS
        if lam < 0:
            for c in range(3):
                pos[3 * i + c] = ws[w + c]
        else:
            u = lam * WS_STRIDE + W_ROT_ROOT
            for c in range(3):
                pos[3 * i + c] = (
                    pos[3 * lam + c]
                    + ws[u + 3 * c] * ws[w]
                    + ws[u + 3 * c + 1] * ws[w + 1]
                    + ws[u + 3 * c + 2] * ws[w + 2]
                )
    bb = n * WS_STRIDE + W_ROT_ROOT  # the base's rotation in the world
    b00 = ws[bb]
    b01 = ws[bb + 1]
    b02 = ws[bb + 2]
    b10 = ws[bb + 3]
    b11 = ws[bb + 4]
    b12 = ws[bb + 5]
    b20 = ws[bb + 6]
    b21 = ws[bb + 7]
    b22 = ws[bb + 8]
    for p in range(len(points) // PT_STRIDE):
        s = p * PT_STRIDE
        body = int(points[s + PT_BODY])
        rows = int(points[s + PT_ROWS])
        row = int(points[s + PT_ROW])
        ox = points[s + PT_OFFSET]
        oy = points[s + PT_OFFSET + 1]
        oz = points[s + PT_OFFSET + 2]
        ex = points[s + PT_XAXIS]
        ey = points[s + PT_XAXIS + 1]
        ez = points[s + PT_XAXIS + 2]
        if body >= 0:  # the link origin and x axis in the base frame
            r = body * WS_STRIDE + W_ROT_ROOT
            tx = pos[3 * body] + ws[r] * ox + ws[r + 1] * oy + ws[r + 2] * oz
            ty = pos[3 * body + 1] + ws[r + 3] * ox + ws[r + 4] * oy + ws[r + 5] * oz
            tz = pos[3 * body + 2] + ws[r + 6] * ox + ws[r + 7] * oy + ws[r + 8] * oz
            xx = ws[r] * ex + ws[r + 1] * ey + ws[r + 2] * ez
            xy = ws[r + 3] * ex + ws[r + 4] * ey + ws[r + 5] * ez
            xz = ws[r + 6] * ex + ws[r + 7] * ey + ws[r + 8] * ez
        else:
            tx = ox
            ty = oy
            tz = oz
            xx = ex
            xy = ey
            xz = ez
        for a in range(rows):
            for c in range(nt):
                jac[row + a, c] = 0.0
        i = body
        while i >= 0:  # the joints' columns: base frame, then world axes
            b = i * TREE_STRIDE
            r = i * WS_STRIDE + W_ROT_ROOT
            ux = tree[b + B_AXIS]
            uy = tree[b + B_AXIS + 1]
            uz = tree[b + B_AXIS + 2]
            ax = ws[r] * ux + ws[r + 1] * uy + ws[r + 2] * uz
            ay = ws[r + 3] * ux + ws[r + 4] * uy + ws[r + 5] * uz
            az = ws[r + 6] * ux + ws[r + 7] * uy + ws[r + 8] * uz
            col = nv0 + i
            if tree[b + JTYPE] == REVOLUTE:
                dx = tx - pos[3 * i]
                dy = ty - pos[3 * i + 1]
                dz = tz - pos[3 * i + 2]
                lx = ay * dz - az * dy
                ly = az * dx - ax * dz
                lz = ax * dy - ay * dx
                if rows == 6:
                    jac[row + 3, col] = b00 * ax + b01 * ay + b02 * az
                    jac[row + 4, col] = b10 * ax + b11 * ay + b12 * az
                    jac[row + 5, col] = b20 * ax + b21 * ay + b22 * az
            else:
                lx = ax
                ly = ay
                lz = az
            jac[row, col] = b00 * lx + b01 * ly + b02 * lz
            jac[row + 1, col] = b10 * lx + b11 * ly + b12 * lz
            jac[row + 2, col] = b20 * lx + b21 * ly + b22 * lz
            i = int(tree[b + PARENT])
        # the root's columns: [R, −R [t]×; 0, R] for (v, ω) of the base, base frame; columns
        # (v_x, v_y, ω_z) of it for a planar root. −R [t]× e_c = R (e_c × t).
        if nv0 == 6:
            jac[row, 0] = b00
            jac[row, 1] = b01
            jac[row, 2] = b02
            jac[row + 1, 0] = b10
            jac[row + 1, 1] = b11
            jac[row + 1, 2] = b12
            jac[row + 2, 0] = b20
            jac[row + 2, 1] = b21
            jac[row + 2, 2] = b22
            # e_x × t = (0, -tz, ty), e_y × t = (tz, 0, -tx), e_z × t = (-ty, tx, 0)
            for a in range(3):
                ra0 = ws[bb + 3 * a]
                ra1 = ws[bb + 3 * a + 1]
                ra2 = ws[bb + 3 * a + 2]
                jac[row + a, 3] = ra2 * ty - ra1 * tz
                jac[row + a, 4] = ra0 * tz - ra2 * tx
                jac[row + a, 5] = ra1 * tx - ra0 * ty
                if rows == 6:
                    jac[row + 3 + a, 3] = ra0
                    jac[row + 3 + a, 4] = ra1
                    jac[row + 3 + a, 5] = ra2
        else:
            for a in range(3):
                ra0 = ws[bb + 3 * a]
                ra1 = ws[bb + 3 * a + 1]
                jac[row + a, 0] = ra0
                jac[row + a, 1] = ra1
                jac[row + a, 2] = ra1 * tx - ra0 * ty
                if rows == 6:
                    jac[row + 3 + a, 2] = ws[bb + 3 * a + 2]
        if points[s + PT_CORNERS] != 0.0:
            # the link's x axis in the world, as the tangent guess (normalised), projected
            gx = b00 * xx + b01 * xy + b02 * xz
            gy = b10 * xx + b11 * xy + b12 * xz
            gz = b20 * xx + b21 * xy + b22 * xz
            norm = math.sqrt(gx * gx + gy * gy + gz * gz)
            if not norm > 0.0:
                return ALONG_NORMAL
            gx = gx / norm
            gy = gy / norm
            gz = gz / norm
            nx = points[s + PT_NORMAL]
            ny = points[s + PT_NORMAL + 1]
            nz = points[s + PT_NORMAL + 2]
            dot = gx * nx + gy * ny + gz * nz
            t1x = gx - dot * nx
            t1y = gy - dot * ny
            t1z = gz - dot * nz
            norm = math.sqrt(t1x * t1x + t1y * t1y + t1z * t1z)
            if norm < 1e-6:
                return ALONG_NORMAL
            t1x = t1x / norm
            t1y = t1y / norm
            t1z = t1z / norm
            t2x = ny * t1z - nz * t1y
            t2y = nz * t1x - nx * t1z
            t2z = nx * t1y - ny * t1x
            mu = points[s + PT_MU]
            ext_x = points[s + PT_EXTENT]
            ext_y = points[s + PT_EXTENT + 1]
            trow = int(points[s + PT_TROW])
            tcol = int(points[s + PT_TCOL])
            for corner in range(4):  # corners (+X+Y, +X−Y, −X+Y, −X−Y) × edges (the same signs)
                cx_sign = 1.0 if corner < 2 else -1.0
                cy_sign = 1.0 if corner % 2 == 0 else -1.0
                cxs = cx_sign * ext_x
                cys = cy_sign * ext_y
                px = cxs * t1x + cys * t2x
                py = cxs * t1y + cys * t2y
                pz = cxs * t1z + cys * t2z
                for edge in range(4):
                    e1 = 1.0 if edge < 2 else -1.0
                    e2 = 1.0 if edge % 2 == 0 else -1.0
                    fx = nx + mu * (e1 * t1x + e2 * t2x)
                    fy = ny + mu * (e1 * t1y + e2 * t2y)
                    fz = nz + mu * (e1 * t1z + e2 * t2z)
                    c = tcol + 4 * corner + edge
                    tmat[trow, c] = fx
                    tmat[trow + 1, c] = fy
                    tmat[trow + 2, c] = fz
                    tmat[trow + 3, c] = py * fz - pz * fy
                    tmat[trow + 4, c] = pz * fx - px * fz
                    tmat[trow + 5, c] = px * fy - py * fx
    if status == OK:
        for a in range(jac.shape[0]):
            for c in range(nt):
                if not math.isfinite(jac[a, c]):
                    return NOT_FINITE
    return status


@njit
def rows_well_conditioned_kernel(a, ratio):
    """Whether the rows of `a` (r×c, r <= 6) are independent with σ_min / σ_max of at least `ratio`
    (a sufficient test, from the Cholesky factor L of a aᵀ: σ_min² >= 1 / ‖L⁻¹‖_F², σ_max² <=
    trace(a aᵀ)); False means "not shown" (the caller then takes the SVD)."""
    r = a.shape[0]
    c = a.shape[1]
    if r == 0 or r > 6 or c < r:
        return False
    g = np.zeros((6, 6))
    trace = 0.0
    for i in range(r):
        for j in range(i + 1):
            s = 0.0
            for k in range(c):
                s += a[i, k] * a[j, k]
            g[i, j] = s
        trace += g[i, i]
    if not (trace > 0.0 and math.isfinite(trace)):
        return False
    for j in range(r):  # g = L Lᵀ, L in the lower triangle
        d = g[j, j]
        for m in range(j):
            d -= g[j, m] * g[j, m]
        if not d > 1e-300:
            return False
        d = math.sqrt(d)
        g[j, j] = d
        for i in range(j + 1, r):
            s = g[i, j]
            for m in range(j):
                s -= g[i, m] * g[j, m]
            g[i, j] = s / d
    inv = np.zeros((6, 6))  # L⁻¹, lower triangular, column by column
    frob = 0.0
    for j in range(r):
        for i in range(j, r):
            s = 1.0 if i == j else 0.0
            for m in range(j, i):
                s -= g[i, m] * inv[m, j]
            inv[i, j] = s / g[i, i]
            frob += inv[i, j] * inv[i, j]
    if not math.isfinite(frob):
        return False
    return frob * ratio * ratio * trace <= 1.0
