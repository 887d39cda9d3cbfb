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

import numpy as np

from rnea_ros.compiled.kernels.friction_guard import (
    G_DISSIPATED,
    G_ERROR,
    G_INJECTED,
    G_PREVIOUS,
    G_ROWS,
    G_TRIPPED,
    G_WEIGHT,
    GUARD_SPEED,
    K_SIZE,
    K_TRIPS,
    K_WINDOW,
)
from rnea_ros.errors import RneaError

SPEED = GUARD_SPEED  # rad/s (or m/s): velocity errors below this never trip the guard


class RunawayGuard:
    """The guard's state for n joints; `window` s ≤ 0 disables it (weights stay 1)."""

    def __init__(self, n: int, window: float = 0.2) -> None:
        if not (np.isfinite(window) and window >= 0):
            raise RneaError(f"friction.guard_window must be finite and >= 0 s, got {window}")
        self.n = n
        self.window = float(window)
        self.state = np.zeros((G_ROWS, n))
        self.clock = np.zeros(K_SIZE)
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


__all__ = [
    "G_DISSIPATED",
    "G_ERROR",
    "G_INJECTED",
    "G_PREVIOUS",
    "G_ROWS",
    "G_TRIPPED",
    "G_WEIGHT",
    "SPEED",
    "RunawayGuard",
]
