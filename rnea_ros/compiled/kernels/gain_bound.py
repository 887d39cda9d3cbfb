"""The feedback bound's kernels (`rnea_ros.control.feedback_bound` derives them): M(q)⁻¹ and the PD
gains of this cycle scaled so that each joint's crossover times the loop's lag stays bounded.
"""

from __future__ import annotations

import math

import numpy as np

from rnea_ros.compiled.jit import njit
from rnea_ros.compiled.kernels.fixed_root import mass_matrix_kernel
from rnea_ros.compiled.kernels.layout import LAW_KD, LAW_KD_NOW, LAW_KP, LAW_KP_NOW, LAW_SCALE, NOT_FINITE, OK

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
def bound_gains_kernel(minv, law, lag, max_lag, scratch):
    """The gains of this cycle, from the law's (rows LAW_KP, LAW_KD of the law table), into its
    rows LAW_KP_NOW and LAW_KD_NOW and their scale into LAW_SCALE (see
    rnea_ros.control.feedback_bound), for the loop's lag and the largest phase lag allowed (rad);
    minv: M(q)⁻¹ (n, n); `scratch` (2, n) is scratch."""
    n = minv.shape[0]
    kp = law[LAW_KP]
    kd = law[LAW_KD]
    scale = law[LAW_SCALE]
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
                scratch[0, i] = math.sqrt(scale[i]) * a
                scratch[1, i] = scale[i] * b
            for i in range(n):
                if kp[i] <= 0.0 and kd[i] <= 0.0:
                    continue
                wc = crossover(scratch[0, i], scratch[1, i])
                if not wc < math.inf:  # a massless joint: no gain at any rate
                    scale[i] = 0.0
                elif wc > target:
                    worst = max(worst, wc / target)
                    scale[i] *= target / wc
            if worst <= 1.0 + 1e-9:
                break
    for i in range(n):
        s = scale[i]
        law[LAW_KP_NOW, i] = kp[i] * s * s
        law[LAW_KD_NOW, i] = kd[i] * s
    return OK
