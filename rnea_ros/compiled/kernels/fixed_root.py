"""RNEA, gravity and mass-matrix kernels of a fixed root: one state, a batch, and the packed forms
the fast paths of `rnea_ros.algorithms.dynamics` call (the tree and scratch in one record). Each
returns a status (`layout.OK`, `BAD_SIZE`, `NOT_FINITE`).
"""

from __future__ import annotations

from rnea_ros.compiled.jit import njit
from rnea_ros.compiled.kernels.layout import (
    BAD_SIZE,
    COMP_STRIDE,
    NOT_FINITE,
    OK,
    TREE_STRIDE,
    WS_STRIDE,
    unpack,
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
    mass_matrix_columns,
    root_rotations,
    sizes_ok,
)


@njit
def rnea_kernel(tree, q, qd, qdd, gravity, ws, tau):
    """Inverse dynamics τ = M q̈ + c + g into `tau` (gravity in the root frame, m/s²); a status."""
    if not sizes_ok(len(tree) // TREE_STRIDE, q, qd, qdd, gravity, ws, tau):
        return BAD_SIZE
    joint_transforms(tree, q, ws)
    forward_kinematic_pass(tree, qd, qdd, gravity, ws)
    backward_force_pass(tree, ws, tau, False)
    add_armature(tree, qdd, tau)
    return OK if all_finite(tau) else NOT_FINITE


@njit
def rnea_wrench_kernel(tree, q, qd, qdd, gravity, wrench_body, wrench_data, ws, tau):
    """rnea_kernel plus link wrenches, τ = M q̈ + c + g + Σ Jᵀ F (see the module doc); a status."""
    if not sizes_ok(len(tree) // TREE_STRIDE, q, qd, qdd, gravity, ws, tau):
        return BAD_SIZE
    joint_transforms(tree, q, ws)
    forward_kinematic_pass(tree, qd, qdd, gravity, ws)
    if len(wrench_body) > 0:
        root_rotations(tree, ws)
        add_link_wrenches(wrench_body, wrench_data, ws)
    backward_force_pass(tree, ws, tau, False)
    add_armature(tree, qdd, tau)
    return OK if all_finite(tau) else NOT_FINITE


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
    if not sizes_ok(len(tree) // TREE_STRIDE, q, q, q, gravity, ws, tau):
        return BAD_SIZE
    joint_transforms(tree, q, ws)
    gravity_kinematic_pass(tree, gravity, ws)
    backward_force_pass(tree, ws, tau, True)
    return OK if all_finite(tau) else NOT_FINITE


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
    """Joint-space inertia M(q) (row-major n×n into `mass`) by the composite-rigid-body algorithm
    (`comp`: COMP_STRIDE floats per body of scratch); a status."""
    n = len(tree) // TREE_STRIDE
    if len(q) != n or len(mass) != n * n or len(ws) < n * WS_STRIDE or len(comp) < COMP_STRIDE * n:
        return BAD_SIZE
    joint_transforms(tree, q, ws)
    composite_inertia_pass(tree, ws, comp)
    mass_matrix_columns(tree, ws, comp, mass)
    return OK if all_finite(mass) else NOT_FINITE


@njit
def mass_matrix_batch_kernel(tree, q, ws, comp, mass):
    """mass_matrix_kernel over the rows of q into rows of `mass` (N, n*n); a status."""
    status = OK
    for k in range(q.shape[0]):
        s = mass_matrix_kernel(tree, q[k], ws, comp, mass[k])
        if s != OK:
            status = s
    return status


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
