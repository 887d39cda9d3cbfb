"""Friction compensation that keeps a dissipation margin by design (no ROS).

The model friction τ_f(q̇) of `rnea_ros.friction.model` (F_v, F_c, F_s, v_s, v_ε per joint) is
compensated by one of two rules, per joint:

* **feedforward** (a trajectory drives the joint): ``s_ff · τ_f(q̇_des)`` at the *desired*
  velocity. It is a function of time, not of the measured state, so it closes no loop and cannot
  remove dissipation: a wrong model only costs a bounded tracking error (ΔF / Kp).
* **feedback** (no trajectory): from the *measured* velocity, faded in by a smooth deadband
  ``w(q̇) = 1 − exp(−(q̇ / v_d)²)`` (0 at rest, 63 % at v_d, 98 % at 2 v_d) and scaled by α:

      φ(q̇) = w(q̇) · [a q̇ + c(q̇) tanh(q̇ / v_ε)],   a = min(α F_v, a_max),
                                                 c = min(α (F_c + (F_s − F_c) e^{−(q̇/v_s)²}), c_max).

Why α < 1 (default 0.5): exact cancellation leaves a joint with no dissipation but the PD's, and
a model that overestimates the plant's friction turns the compensation into a drive. The loop
stays dissipative as long as the plant's friction is at least α × the model's: with α = 0.5 the
URDF may overestimate it by up to 2×.

The bound a_max, c_max (per joint, from the joint's inertia M_ii(q) and the sampling period T):
the command is computed from the velocity sampled at the start of a period and held over it.
Take joint i alone, m = M_ii, plant friction f(v) (any dissipative law, acting continuously),
v⁺ the velocity one period later: m (v⁺ − v) = T (φ(v) − f(v⁺)). The kinetic energy changes by

    ΔE = T (φ(v) − f(v⁺)) (v⁺ + v) / 2
       = −T (f(v⁺) − φ(v⁺)) v⁺ + T (φ(v) − φ(v⁺)) v⁺ − (m / 2) (v⁺ − v)²
       ≤ −T v⁺² [ D(v⁺) − T L² / (2 m) ],

with D(v) = (f(v) − φ(v)) / v the effective damping the compensation leaves (the margin) and L
the slope of φ (|φ(v) − φ(v⁺)| ≤ L |v⁺ − v|, then maximised over v⁺ − v). So every sample
dissipates if **T L² / (2 m) ≤ D**: the sampled compensation may only be as steep as the margin
and the inertia allow. When the plant's friction is the model's, D ≥ r · φ(v)/v with
r = (1 − α)/α. The bound spends a share κ = 1/3 of that margin on the sampling, split evenly
between the viscous and Coulomb parts ((L_a + L_c)² ≤ 2 L_a² + 2 L_c²), which gives

    viscous  (φ = a w(v) v):         a ≤ a_max = κ r M_ii / (T · G_v),
             G_v = max_v (w + v w')² / w        (≈ 2.97 with a deadband, 1 without),
    Coulomb  (φ = c w(v) tanh(v/v_ε)): c ≤ c_max = κ r M_ii / T · K_c,
             K_c = min_v h / (v h'²), h = w tanh(v/v_ε)   (≈ 0.72 v_d for v_ε ≪ v_d).

Every sample then dissipates while the plant's friction is at least α + κ (1 − α) of the model's
(2/3 at α = 0.5); below that the continuous-time margin still holds down to α, and the runaway
guard (`rnea_ros.friction.runaway_guard`) catches the rest. Light joints at low rates get little or no
feedback compensation: xArm7's last joint (M_ii ≈ 1e-4 kg m², T = 1 ms) may take 0.01 N m s/rad
and 1 mN m, which is right: 1 N m of Coulomb compensation would change its velocity by 10 rad/s
within one sample. Units: rad/s, N m, N m s/rad, kg m², s (or m/s, N, N s/m, kg).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import numpy.typing as npt

from rnea_ros.compiled.kernels.friction_guard import (
    FC_COULOMB,
    FC_COULOMB_BOUND,
    FC_DEADBAND,
    FC_FF_SCALE,
    FC_ROWS,
    FC_SCALE,
    FC_SMOOTHING,
    FC_STATIC,
    FC_STRIBECK,
    FC_VISCOUS,
    FC_VISCOUS_BOUND,
)
from rnea_ros.errors import RneaError
from rnea_ros.friction.model import Friction

KAPPA = 1.0 / 3.0  # share of the scale's margin the sampling may spend


@dataclass(frozen=True)
class CompensationRules:
    """How much of the model friction is compensated, and where (see the module docstring)."""

    scale: float = 0.5  # α: fraction compensated from the measured velocity
    feedforward_scale: float = 1.0  # fraction compensated at the desired velocity
    deadband: float = 0.05  # v_d of the smooth deadband w, rad/s or m/s (0: none)

    def __post_init__(self) -> None:
        for name, high in (("scale", 1.0), ("feedforward_scale", 1.0)):
            value = float(getattr(self, name))
            if not 0.0 <= value <= high:
                raise RneaError(f"friction.{name} must be in [0, {high:g}], got {value}")
            object.__setattr__(self, name, value)
        deadband = float(self.deadband)
        if not (np.isfinite(deadband) and deadband >= 0):
            raise RneaError(f"friction.deadband must be finite and >= 0, got {deadband}")
        object.__setattr__(self, "deadband", deadband)

    @property
    def margin_ratio(self) -> float:
        """r = (1 − α)/α: the plant's friction exceeds the compensation by this fraction of it
        when the model is right (inf for α = 0)."""
        return math.inf if self.scale == 0 else (1.0 - self.scale) / self.scale


def gate(qd: npt.ArrayLike, deadband: float) -> np.ndarray:
    """The smooth deadband w(q̇) = 1 − exp(−(q̇/v_d)²) (all ones for v_d = 0)."""
    qd = np.asarray(qd, dtype=float)
    if deadband == 0:
        return np.ones_like(qd)
    return -np.expm1(-np.square(qd / deadband))


def _grid(deadband: float, smoothing: float) -> np.ndarray:
    scale = max(deadband, smoothing)
    return scale * np.logspace(-4, 3, 20001)


@lru_cache(maxsize=64)
def gate_constants(deadband: float, smoothing_velocity: float) -> tuple[float, float]:
    """(G_v, K_c) of the module docstring for a deadband v_d and a tanh velocity v_ε, found on a
    dense logarithmic velocity grid (K_c in rad/s or m/s). Kept per pair (a 2 ms search): a
    rebuild of the cycle model, a payload blend's every step, finds them again at once."""
    v = _grid(deadband, smoothing_velocity)
    if deadband > 0:
        x = v / deadband
        w = -np.expm1(-x * x)
        dw = 2 * x / deadband * np.exp(-x * x)
    else:
        w, dw = np.ones_like(v), np.zeros_like(v)
    th = np.tanh(v / smoothing_velocity)
    dth = (1 - th * th) / smoothing_velocity
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        g_v = np.nanmax(np.where(w > 0, (w + v * dw) ** 2 / w, 0.0))
        h, dh = w * th, dw * th + w * dth
        k_c = np.nanmin(np.where(dh > 0, h / (v * dh * dh), np.inf))
    return float(g_v), float(k_c)


def loop_bounds(
    inertia: npt.ArrayLike, period: float, rules: CompensationRules, smoothing_velocity: float
) -> tuple[np.ndarray, np.ndarray]:
    """(a_max, c_max) per joint: the viscous (N m s/rad) and Coulomb (N m) compensation a joint of
    inertia M_ii (kg m²) sampled every `period` s can take from its measured velocity (zeros for
    period ≤ 0: no period known, no feedback compensation)."""
    m = np.asarray(inertia, dtype=float)
    if not period > 0:
        return np.zeros_like(m), np.zeros_like(m)
    g_v, k_c = gate_constants(rules.deadband, smoothing_velocity)
    factor = KAPPA * rules.margin_ratio * m / period
    with np.errstate(invalid="ignore"):  # inf × 0 for α = 0: nothing is compensated anyway
        return np.nan_to_num(factor / g_v, nan=0.0), np.nan_to_num(factor * k_c, nan=0.0)


def feedback_friction(
    friction: Friction, rules: CompensationRules, qd: npt.ArrayLike, inertia: npt.ArrayLike, period: float
) -> np.ndarray:
    """φ(q̇): the compensation from the measured velocity qd (n,), with the joints' inertia M_ii
    (n,) and the sampling period (s); N m or N."""
    qd = np.asarray(qd, dtype=float)
    a_max, c_max = loop_bounds(inertia, period, rules, friction.smoothing_velocity)
    level = friction.coulomb + (friction.static - friction.coulomb) * np.exp(
        -np.square(qd / friction.stribeck_velocity)
    )
    a = np.minimum(rules.scale * friction.viscous, a_max)
    c = np.minimum(rules.scale * level, c_max)
    return gate(qd, rules.deadband) * (a * qd + c * np.tanh(qd / friction.smoothing_velocity))


def coefficient_table(friction: Friction, rules: CompensationRules) -> np.ndarray:
    """The (FC_ROWS, n) table the compiled compensation (`kernels.friction_guard.friction_kernel`) reads; the
    bound rows hold a_max and c_max per unit of M_ii / T."""
    n = friction.viscous.size
    g_v, k_c = gate_constants(rules.deadband, friction.smoothing_velocity)
    r = rules.margin_ratio
    table = np.zeros((FC_ROWS, n))
    table[FC_VISCOUS] = friction.viscous
    table[FC_COULOMB] = friction.coulomb
    table[FC_STATIC] = friction.static
    table[FC_STRIBECK] = friction.stribeck_velocity
    table[FC_SMOOTHING] = friction.smoothing_velocity
    table[FC_SCALE] = rules.scale
    table[FC_FF_SCALE] = rules.feedforward_scale
    table[FC_DEADBAND] = rules.deadband
    if math.isfinite(r):
        table[FC_VISCOUS_BOUND] = KAPPA * r / g_v
        table[FC_COULOMB_BOUND] = KAPPA * r * k_c
    return table


__all__ = [
    "KAPPA",
    "CompensationRules",
    "coefficient_table",
    "feedback_friction",
    "gate",
    "gate_constants",
    "loop_bounds",
]
