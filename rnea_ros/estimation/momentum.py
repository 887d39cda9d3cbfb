"""Generalised momentum p = M(q) q̇ and Cᵀ(q, q̇) q̇, in O(n), for the momentum observer.

Cᵀ q̇ = Ṁ q̇ − C q̇ equals ∂T/∂q, the gradient of the kinetic energy T = ½ q̇ᵀ M q̇ at fixed q̇
(Lagrange: C q̇ = Ṁ q̇ − ∂T/∂q). With H_i the spatial momentum of body i's subtree and v_i the
body's spatial velocity, both in body i's frame, and S_i its joint's motion subspace:

    p_i = S_iᵀ H_i + armature_i q̇_i,      (∂T/∂q)_i = −S_iᵀ (v_i ×* H_i)

One pass root to tips (velocities, each body's momentum about its origin), one back (subtree
sums): a few hundred flops for a 7-joint arm, no matrix formed. The Coriolis matrix itself is in
`rnea_ros.algorithms.lagrangian`. The kernels (`momentum_kernel`, and `link_jacobian_kernel` for the tip
wrench) are in `rnea_ros.compiled.kernels.momentum_observer`; their typed entry points (MOMENTUM,
...) in `rnea_ros.compiled.entry_points`.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from rnea_ros.algorithms.dynamics import joint_vector
from rnea_ros.compiled.entry_points import MOMENTUM
from rnea_ros.compiled.kernels.layout import OK
from rnea_ros.compiled.kernels.momentum_observer import S_STRIDE
from rnea_ros.errors import RneaError
from rnea_ros.model.data import Data
from rnea_ros.model.robot_model import RobotModel

__all__ = ["S_STRIDE", "momentum_terms"]

S_STRIDE = S_STRIDE


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
    q = joint_vector(model, q)
    qd = joint_vector(model, qd)
    if scratch is None:
        scratch = np.empty(n * S_STRIDE)
    p, ctqd = (np.empty(n), np.empty(n)) if out is None else out
    ws = (model.default_data if data is None else data).ws
    if MOMENTUM.call(model.kernel_tree(), q, qd, ws, scratch, p, ctqd) != OK:
        raise RneaError("momentum_terms: q or qd contains NaN or Inf, or the result overflowed")
    return p, ctqd
