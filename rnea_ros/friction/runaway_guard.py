"""Runaway guard of the friction compensation: fades a joint's friction term out when it drives
the joint instead of cancelling friction (no ROS).

Each sample period (length dt, from the previous sample to this one, v̄ the mean velocity) adds,
per joint i:

* the energy the friction term put in:        E_i += φ_i v̄_i dt  (φ as applied over the period);
* the energy the joint's plant dissipated:    D_i += (τ_i − τ_need,i) v̄_i dt, with τ the applied
  effort and τ_need = rnea(q, v̄, Δv/dt) the effort the rigid-body model needs for the measured
  motion: what the applied effort did beyond it went into the plant's friction, whatever it is;
* the squared tracking error:                 S_i += (q̇_i − q̇_ref,i)² dt, q̇_ref the desired
  velocity where a trajectory drives the joint, else 0 (a free arm's reference is rest).

At the end of every window (`window` s) a joint trips when, over that window, its friction term
put in more energy than the joint dissipated by more than the energy of a joint of inertia M_ii
moving at SPEED (E − D > ½ M_ii SPEED², and E itself above that) while its RMS velocity error grew
against the previous window (so never in the first window) and exceeds SPEED. A tripped joint's
friction weight then falls linearly to 0 within one window and stays there until the guard is
reset (the node resets it when the friction parameters change or a model is loaded). Energies in
J, velocities rad/s or m/s.
"""

from __future__ import annotations

import math

import numpy as np

from rnea_ros.compiled.jit import njit
from rnea_ros.compiled.kernels import rnea_kernel
from rnea_ros.errors import RneaError

SPEED = 0.1  # rad/s (or m/s): velocity errors below this never trip the guard
# Rows of the guard's state table (per joint) and slots of its clock.
G_WEIGHT, G_TRIPPED, G_INJECTED, G_DISSIPATED, G_ERROR, G_PREVIOUS = range(6)
G_ROWS = 6
K_ELAPSED, K_WINDOW, K_TRIPS = range(3)


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
            floor = 0.5 * mass[i * n + i] * SPEED * SPEED
            injected = state[G_INJECTED, i]
            if (
                state[G_TRIPPED, i] == 0.0
                and rms > SPEED
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


class RunawayGuard:
    """The guard's state for n joints; `window` s ≤ 0 disables it (weights stay 1)."""

    def __init__(self, n: int, window: float = 0.2) -> None:
        if not (np.isfinite(window) and window >= 0):
            raise RneaError(f"friction.guard_window must be finite and >= 0 s, got {window}")
        self.n = n
        self.window = float(window)
        self.state = np.zeros((G_ROWS, n))
        self.clock = np.zeros(3)
        self.reset()

    def reset(self) -> None:
        """Re-arm every joint: weights 1, nothing tripped, empty window."""
        self.state[:] = 0.0
        self.state[G_WEIGHT] = 1.0
        self.state[G_PREVIOUS] = np.inf  # the first window has nothing to have grown from
        self.clock[:] = 0.0
        self.clock[K_WINDOW] = self.window

    @property
    def enabled(self) -> bool:
        return self.window > 0

    @property
    def weights(self) -> np.ndarray:
        """Per joint, the fraction of its friction term still applied (view)."""
        return self.state[G_WEIGHT]

    @property
    def tripped(self) -> np.ndarray:
        """Joints whose friction term the guard faded out (bool copy)."""
        return self.state[G_TRIPPED] != 0.0

    @property
    def trips(self) -> int:
        """Trips since the last reset."""
        return int(self.clock[K_TRIPS])


__all__ = ["SPEED", "RunawayGuard", "guard_kernel", "guard_step_kernel"]
