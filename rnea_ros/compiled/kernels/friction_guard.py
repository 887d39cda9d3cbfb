"""The friction compensation's kernel and its coefficient table (FC_*, rows per joint, filled by
`rnea_ros.friction.compensation.coefficient_table`), and the runaway guard's kernels with its
state table (G_*) and window (K_*: its length, the time elapsed in it, the trips)
(`rnea_ros.friction.runaway_guard` says what they decide).
"""

from __future__ import annotations

import math

from rnea_ros.compiled.jit import njit
from rnea_ros.compiled.kernels.fixed_root import rnea_kernel
from rnea_ros.compiled.kernels.layout import unpack

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
# Rows of the guard's state table (per joint) and slots of its window (`guard_window`).
G_WEIGHT, G_TRIPPED, G_INJECTED, G_DISSIPATED, G_ERROR, G_PREVIOUS = range(6)
G_ROWS = 6
K_ELAPSED, K_WINDOW, K_TRIPS = range(3)
K_SIZE = 3


@njit
def guard_kernel(state, guard_window, dt, qd_prev, qd, applied, tau_model, friction, qd_des, driven, mass):
    """Integrate one period of length dt (s) into `state` (G_ROWS, n) and `guard_window`; at a window's
    end decide which joints trip. mass: M(q) flat (n × n). Returns the number of new trips."""
    n = len(qd)
    window = guard_window[K_WINDOW]
    for i in range(n):
        vbar = 0.5 * (qd_prev[i] + qd[i])
        state[G_INJECTED, i] += friction[i] * vbar * dt
        state[G_DISSIPATED, i] += (applied[i] - tau_model[i]) * vbar * dt
        e = qd[i] - (qd_des[i] if driven[i] != 0 else 0.0)
        state[G_ERROR, i] += e * e * dt
        if state[G_TRIPPED, i] != 0.0:
            state[G_WEIGHT, i] = max(0.0, state[G_WEIGHT, i] - dt / window)
    guard_window[K_ELAPSED] += dt
    trips = 0
    if guard_window[K_ELAPSED] >= window:
        elapsed = guard_window[K_ELAPSED]
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
        guard_window[K_ELAPSED] = 0.0
        guard_window[K_TRIPS] += trips
    return trips


# Rows of the last sample the friction path keeps (`prev`, rnea_ros.control.effort_law.LoopState):
# its q, q̇, the total applied and the friction term of it.
SAMPLE_Q, SAMPLE_QD, SAMPLE_TOTAL, SAMPLE_FRICTION = range(4)
SAMPLE_ROWS = 4
# Rows of the period's midpoint table (`midpoint` of guard_step_kernel): the mean q and q̇ and Δq̇/dt
# over the period, then the effort the rigid-body model needs for them.
MID_Q, MID_QD, MID_QDD, MID_TAU_MODEL = range(4)
MID_ROWS = 4


@njit
def guard_step_kernel(record, q, qd, qd_des, driven, dt, midpoint, mass, state, guard_window, prev):
    """One period of length dt (s) since the last sample `prev` (SAMPLE_* rows): the effort the
    rigid-body model needs for the measured motion at the period's midpoint (rnea at mean q, mean
    q̇ and Δq̇/dt, with the tree, gravity and workspace of the packed record `record`) into `midpoint`
    (MID_* rows), then `guard_kernel` on `state` and `guard_window`. mass: M(q) flat (n × n). Returns the
    number of new trips (-1: rnea failed)."""
    tree, gravity, ws, _ = unpack(record)
    n = len(q)
    for i in range(n):
        midpoint[MID_Q, i] = 0.5 * (prev[SAMPLE_Q, i] + q[i])
        midpoint[MID_QD, i] = 0.5 * (prev[SAMPLE_QD, i] + qd[i])
        midpoint[MID_QDD, i] = (qd[i] - prev[SAMPLE_QD, i]) / dt
    tau_model = midpoint[MID_TAU_MODEL]
    if rnea_kernel(tree, midpoint[MID_Q], midpoint[MID_QD], midpoint[MID_QDD], gravity, ws, tau_model) != 0:
        return -1
    applied, friction = prev[SAMPLE_TOTAL], prev[SAMPLE_FRICTION]
    return guard_kernel(
        state, guard_window, dt, prev[SAMPLE_QD], qd, applied, tau_model, friction, qd_des, driven, mass
    )
