"""The terms of contact-consistent inverse dynamics on a floating root
(`rnea_ros.algorithms.contact_dynamics`): M, h, the stacked contact Jacobian and the force map of
rectangular contacts (PT_* point record), in one call; and the conditioning check of its rows.
"""

from __future__ import annotations

import math

import numpy as np

from rnea_ros.compiled.jit import njit
from rnea_ros.compiled.kernels.floating_root import (
    floating_backward,
    floating_forward,
    floating_mass_matrix_from_transforms,
    root_sizes,
)
from rnea_ros.compiled.kernels.layout import (
    B_AXIS,
    BAD_SIZE,
    JTYPE,
    NOT_FINITE,
    NOT_UNIT,
    OK,
    PARENT,
    REVOLUTE,
    TREE_STRIDE,
    W_POS,
    W_ROT_ROOT,
    WS_STRIDE,
    floating_unpack,
)
from rnea_ros.compiled.kernels.passes import all_finite, root_rotations

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
    if not floating_forward(tree, root, q, v, zero, gravity, ws, n, nq0, nv0):
        return NOT_UNIT
    status = floating_backward(tree, root, zero, ws, h, n, nv0)
    flat = mass.reshape(nt * nt)
    floating_mass_matrix_from_transforms(tree, root, ws, comp, flat, n, nv0)
    if not all_finite(flat):
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
