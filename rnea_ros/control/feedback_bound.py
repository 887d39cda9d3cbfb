"""PD gains bounded by the loop that applies them (no ROS).

A PD computed from a sampled state and held until the next one acts with a lag of about half the
sampling period plus the state's age when the command was computed. A loop whose crossover
frequency ω_c times that lag nears π/2 has no phase margin left: it oscillates with a growing
amplitude. On a machine that falls behind (a busy 2-core computer answering every fifth state,
5 ms late) gains tuned for 1 kHz can destabilise the arm. The bound lowers them instead:

    per joint i, kp_i → s_i² kp_i and kd_i → s_i kd_i (0 < s_i ≤ 1), so that ω_c,i · lag ≤ φ_max,

which keeps each joint's damping ratio and scales its bandwidth by s_i. ω_c,i is the crossover
of a PD on a unit inertia with rates a (damping) and b (stiffness): ω_c² = (a² + √(a⁴ + 4 b²)) / 2.

**Coupling.** The rates come from the joint-space inertia M(q), not from its diagonal alone: the
fastest modes of M q̈ = −K_d q̇ − K_p q are the eigenvalues of M⁻¹K_d and M⁻¹K_p, and on arms
with light wrists they are far faster than kd_i / M_ii (UR3 at home: 329 1/s against 25 1/s).
With B_d = K_d^½ M⁻¹ K_d^½ and B_p = K_p^½ M⁻¹ K_p^½ (symmetric, same eigenvalues), the gains
scaled by S give B_d' = S^½ B_d S^½ and B_p' = S B_p S, and every eigenvalue of each lies within
a Gershgorin row bound

    a_i = √s_i Σ_j √s_j |B_d,ij|,   b_i = s_i Σ_j s_j |B_p,ij|.

The scales are lowered row by row until ω_c(a_i, b_i) · lag ≤ φ_max for every joint: a joint
that is fast on its own, or coupled to a fast one, loses gain; the others keep theirs. M⁻¹ is
refreshed every REFRESH s of state time (M changes with the pose, slowly next to the loop).

Units: rad, s, N m/rad, N m s/rad, kg m² (or m, N/m, N s/m, kg).
"""

from __future__ import annotations

import math

import numpy as np

from rnea_ros.compiled import kernels as k
from rnea_ros.compiled.jit import njit

REFRESH = 0.01  # s of state time between two inversions of M(q)
ITERATIONS = 60  # bound on the row-by-row lowering (it converges in a few)


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
        status = k.mass_matrix_kernel(tree, q, ws, comp, mass)
        if status != k.OK:
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
                return k.NOT_FINITE
    inv = np.linalg.inv(m)
    for i in range(n):
        for j in range(n):
            minv[i, j] = inv[i, j]
    return k.OK


@njit
def bound_gains_kernel(minv, law, law_now, lag, max_lag, scale, rows):
    """The gains of this cycle into law_now's KP and KD rows and their scales into `scale` (see
    the module docstring); `rows` (2, n) is scratch."""
    n = minv.shape[0]
    kp = law[k.LAW_KP]
    kd = law[k.LAW_KD]
    for i in range(n):
        scale[i] = 1.0
    if lag > 0.0 and max_lag > 0.0:
        target = max_lag / lag
        for _ in range(ITERATIONS):
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
        law_now[k.LAW_KP, i] = kp[i] * s * s
        law_now[k.LAW_KD, i] = kd[i] * s
    return k.OK


def warm() -> None:
    """Compile (or load from numba's cache) this module's kernels."""
    tree = np.zeros(k.TREE_STRIDE)
    tree[[0, 4, 8, 14, 15]] = 1.0  # one revolute body about z, 1 kg
    tree[k.PARENT], tree[k.JTYPE] = -1, k.REVOLUTE
    x, ws, comp = np.zeros(1), np.zeros(k.WS_STRIDE), np.zeros(10)
    minv = np.zeros((1, 1))
    inverse_inertia_kernel(tree, x, ws, comp, np.ones(1), False, minv)
    law = np.ones((k.LAW_ROWS, 1))
    bound_gains_kernel(minv, law, law.copy(), 1e-3, 0.5, np.ones(1), np.zeros((2, 1)))


__all__ = ["REFRESH", "bound_gains_kernel", "crossover", "inverse_inertia_kernel", "warm"]
