"""RNEA, gravity and mass-matrix kernels of a free-flyer or planar root (Pinocchio's layout, see
`layout`'s root record): the base placement, the base body's motion and wrench, and the packed
forms (the tree, scratch and root record in one record).
"""

from __future__ import annotations

from rnea_ros.compiled.jit import njit, njit_inline
from rnea_ros.compiled.kernels.layout import (
    B_ARMATURE,
    B_AXIS,
    BAD_SIZE,
    C_INERTIA,
    C_MASS,
    C_MOMENT,
    COMP_STRIDE,
    JTYPE,
    NOT_FINITE,
    NOT_UNIT,
    OK,
    PARENT,
    REVOLUTE,
    ROOT_FREE,
    ROOT_PLANAR,
    RT_INERTIA,
    RT_KIND,
    RT_MASS,
    RT_MOMENT,
    RT_POS,
    RT_ROT,
    TREE_STRIDE,
    UNIT_TOL,
    W_ACC,
    W_ALPHA,
    W_FORCE,
    W_MOMENT,
    W_OMEGA,
    W_POS,
    W_ROT,
    W_ROT_ROOT,
    WS_STRIDE,
    floating_unpack,
)
from rnea_ros.compiled.kernels.passes import (
    add_armature,
    add_link_wrenches,
    all_finite,
    backward_force_pass,
    composite_inertia_pass,
    forward_kinematic_pass,
    gravity_kinematic_pass,
    joint_transforms,
    root_rotations,
    shift_composite,
)


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
def floating_forward(tree, root, q, v, a, gravity, ws, n, nq0, nv0):
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
def floating_backward(tree, root, a, ws, tau, n, nv0):
    """The backward pass, the armature and the root joint's efforts (after floating_forward and
    any link wrenches); a status."""
    backward_force_pass(tree, ws, tau[nv0:], False)
    add_armature(tree, a[nv0:], tau[nv0:])
    fx, fy, fz, nx, ny, nz = base_wrench(tree, root, ws, n, False)
    _store_base_effort(int(root[RT_KIND]), tau, fx, fy, fz, nx, ny, nz)
    return OK if all_finite(tau) else NOT_FINITE


@njit
def floating_rnea_kernel(tree, root, q, v, a, gravity, wrench_body, wrench_data, ws, tau):
    """Inverse dynamics of a floating-root model: τ (nv) = M a + h + Σ Jᵀ F, the root joint's
    efforts first (the base wrench, base frame, as Pinocchio). gravity in the world frame; link
    wrenches in world axes, body n for the links fixed to the base. A status."""
    n = len(tree) // TREE_STRIDE
    nq0, nv0 = root_sizes(root)
    if not _floating_sizes_ok(n, nq0, nv0, q, v, a, gravity, ws, tau):
        return BAD_SIZE
    if not floating_forward(tree, root, q, v, a, gravity, ws, n, nq0, nv0):
        return NOT_UNIT
    if len(wrench_body) > 0:
        root_rotations(tree, ws)
        rotations_in_world(ws, n)
        add_link_wrenches(wrench_body, wrench_data, ws)
    return floating_backward(tree, root, a, ws, tau, n, nv0)


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
    return OK if all_finite(tau) else NOT_FINITE


@njit_inline
def floating_mass_matrix_from_transforms(tree, root, ws, comp, mass, n, nv0):
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
    floating_mass_matrix_from_transforms(tree, root, ws, comp, mass, n, nv0)
    return OK if all_finite(mass) else NOT_FINITE


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


@njit
def floating_rnea_packed_kernel(packed, q, v, a, tau):
    """floating_rnea_kernel with the default gravity and no link wrenches, from a floating packed
    record (one argument for the model); a status."""
    tree, gravity, ws, _, root = floating_unpack(packed)
    n = len(tree) // TREE_STRIDE
    nq0, nv0 = root_sizes(root)
    if not _floating_sizes_ok(n, nq0, nv0, q, v, a, gravity, ws, tau):
        return BAD_SIZE
    if not floating_forward(tree, root, q, v, a, gravity, ws, n, nq0, nv0):
        return NOT_UNIT
    return floating_backward(tree, root, a, ws, tau, n, nv0)


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
