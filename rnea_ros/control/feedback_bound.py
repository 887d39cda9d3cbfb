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

Units: rad, s, N m/rad, N m s/rad, kg m² (or m, N/m, N s/m, kg). The kernels that compute
the bound (`inverse_inertia_kernel`, `bound_gains_kernel`, BOUND_ITERATIONS) are in
`rnea_ros.compiled.kernels.gain_bound`.
"""

from __future__ import annotations

REFRESH = 0.01  # s of state time between two inversions of M(q)

__all__ = ["REFRESH"]
