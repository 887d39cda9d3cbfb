"""A rigid payload's mass, centre of mass and inertia from the wrench its link exerts on it (no ROS).

The wrench F = [f; n] that a link exerts on a rigid load it carries (the guide's convention: what
the link exerts on its environment; the momentum observer's tip wrench, `observer.tip_wrench`) is,
in the link's axes with the moment about the link origin (Featherstone's f = I a + v ×* I v, with
gravity as an upward acceleration of the base):

    f = m b + ([ω̇]× + [ω]×²) h
    n = h × b + I_O ω̇ + ω × (I_O ω)

with b = Rᵀ(a_O − g) (a_O the classical acceleration of the link origin, g gravity, root axes; R
the link's rotation in the root frame), ω, ω̇ the link's angular velocity and acceleration in
its axes, and the load's parameters π = [m, h_x, h_y, h_z, I_xx, I_xy, I_yy, I_xz, I_yz, I_zz]
(Pinocchio's dynamic-parameter order, as `rnea_ros.identification.regressor`): its mass m (kg),
first moment h = m c (kg m, c the centre of mass in the link frame) and inertia I_O about the
link origin (kg m², link axes). F is linear in π: F = Y(b, ω̇, ωωᵀ) π, and linear in (b, ω̇, ωωᵀ)
too, so that a linear filter applied to those inputs gives the regressor of the filtered wrench
(`rnea_ros.estimation.payload_stream`).

Estimation: weighted least squares over a window of samples, in two passes (force and moment rows
first weighted 1 and 1/REFERENCE_LENGTH, then by their residual's RMS). At rest only gravity acts
(b = −Rᵀg): the mass follows from one pose, the component of c along gravity in the link frame
only from a change of the link's orientation relative to gravity ("rotation" below), and the
inertia only from angular accelerations and velocities. Without `inertia` the load is taken as a
point mass (I about its centre of mass zero; I_O = m [c]×ᵀ[c]×, a fixed point iteration).

Uncertainty: the covariance of the weighted least squares, the residual's variance per row
group, inflated by the residual's integrated autocorrelation time (correlated samples carry less
information than as many independent ones); the centre of mass's by first-order propagation.

Refusals (`PayloadRefused`, with `reason` one of REASONS), in this order:
- "changing": the RMS residual over the RMS wrench exceeds `max_mismatch`: no rigid load explains
  the wrench (contact with the environment, a load still moving in the hand);
- "negative_mass": m ≤ −min_mass (the link is lifted or pulled, not loaded);
- "rotation": gravity turned less than `min_rotation` in the link frame over the window (the RMS
  angle about its mean direction): the centre of mass along gravity is not observed;
- "com_distance": |c| beyond `max_com_distance`;
- "inertia": with `inertia`, an inertia about the centre of mass that no rigid body has.
A window whose force stays below min_mass × |g| (RMS) holds no payload: mass 0, not a refusal.

Units: kg, m, kg m, kg m², N, N m, rad, s. Frames: root (gravity, `axes='root'` wrenches), the
link's (everything estimated).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from rnea_ros.algorithms.dynamics import GRAVITY, link_pose
from rnea_ros.algorithms.task_space import finite_states, jacobian_rows, link_jdot_qd
from rnea_ros.errors import PayloadRefused, RneaError
from rnea_ros.model.robot_model import Payload, RobotModel
from rnea_ros.model.urdf import inertia_defect

__all__ = [
    "PARAMETERS",
    "REASONS",
    "PayloadEstimate",
    "DEFAULT_LIMITS",
    "PayloadLimits",
    "ancestor_joints",
    "bias_regressor",
    "blend_payloads",
    "estimate_payload",
    "fit_payload",
    "link_motion",
    "momentum_regressor",
    "payload_from_parameters",
    "payload_parameters",
    "payload_regressor",
    "rotation_spread",
]

PARAMETERS = ("m", "mx", "my", "mz", "Ixx", "Ixy", "Iyy", "Ixz", "Iyz", "Izz")
REASONS = ("changing", "negative_mass", "rotation", "com_distance", "inertia", "samples")
REFERENCE_LENGTH = 0.1  # m: moment rows weighted 1 / this in the first pass (a hand's size)
POINT_MASS_ITERATIONS = 4

# Symmetric basis matrices of the inertia parameters (Ixx, Ixy, Iyy, Ixz, Iyz, Izz)
_BASIS = np.zeros((6, 3, 3))
for _k, (_i, _j) in enumerate(((0, 0), (0, 1), (1, 1), (0, 2), (1, 2), (2, 2))):
    _BASIS[_k, _i, _j] = _BASIS[_k, _j, _i] = 1.0
_EPS = np.zeros((3, 3, 3))  # Levi-Civita
for _i, _j, _k in ((0, 1, 2), (1, 2, 0), (2, 0, 1)):
    _EPS[_i, _j, _k], _EPS[_i, _k, _j] = 1.0, -1.0


@dataclass(frozen=True)
class PayloadLimits:
    """What an estimate must satisfy (module docstring): kg, m, rad, ratio."""

    min_mass: float = 0.1
    max_com_distance: float = 0.5
    min_rotation: float = 0.05
    max_mismatch: float = 0.2

    def __post_init__(self) -> None:
        for name in ("min_mass", "max_com_distance", "min_rotation", "max_mismatch"):
            value = getattr(self, name)
            if not (np.isfinite(value) and value >= 0):
                raise RneaError(f"PayloadLimits.{name} must be finite and >= 0, got {value!r}")


DEFAULT_LIMITS = PayloadLimits()


@dataclass(frozen=True)
class PayloadEstimate:
    """An estimated payload on `link` (link frame) and how well the window determined it."""

    link: str
    mass: float  # kg; 0: no payload (the window's force stays below min_mass × |g|)
    com: np.ndarray  # (3,) m; zeros without a payload
    inertia: np.ndarray | None  # (3, 3) kg m² about the com; None: not estimated (a point mass)
    mass_std: float  # kg, one standard deviation
    com_std: np.ndarray  # (3,) m, link axes
    rotation: float  # rad: RMS angle of gravity about its mean direction, link frame, over the window
    mismatch: float  # RMS residual / RMS wrench (first-pass weights)
    samples: int
    parameters: np.ndarray  # (10,) π as fitted (PARAMETERS), before the no-payload rule
    covariance: np.ndarray  # (k, k) of the fitted entries of π (k = 4, or 10 with inertia)

    @property
    def present(self) -> bool:
        return self.mass > 0.0

    def payload(self) -> Payload:
        """As the model takes it (`RobotModel.with_payload`; a point mass without inertia)."""
        inertia = np.zeros((3, 3)) if self.inertia is None else self.inertia
        return Payload(self.link, self.mass, self.com.copy(), inertia.copy())

    def text(self) -> str:
        """One line: the estimate with its standard deviations."""
        if not self.present:
            return f"no payload on {self.link} (rotation {np.degrees(self.rotation):.1f} deg)"
        com = ", ".join(f"{c:.4f}" for c in self.com)
        std = ", ".join(f"{s:.4f}" for s in self.com_std)
        return (
            f"{self.mass:.4f} +- {self.mass_std:.4f} kg at [{com}] +- [{std}] m on {self.link} "
            f"(rotation {np.degrees(self.rotation):.1f} deg, mismatch {100 * self.mismatch:.1f} %, "
            f"{self.samples} samples)"
        )


def _cross(v: np.ndarray) -> np.ndarray:
    """[v]× for (..., 3) → (..., 3, 3)."""
    x, y, z = v[..., 0], v[..., 1], v[..., 2]
    zero = np.zeros_like(x)
    return np.stack((zero, -z, y, z, zero, -x, -y, x, zero), axis=-1).reshape(*v.shape[:-1], 3, 3)


def _fill_inertia_map(out: np.ndarray, x: np.ndarray) -> None:
    """out (N, 3, 6) with I x = out (Ixx, Ixy, Iyy, Ixz, Iyz, Izz), x (N, 3)."""
    out[:, 0, 0], out[:, 0, 1], out[:, 0, 3] = x[:, 0], x[:, 1], x[:, 2]
    out[:, 1, 1], out[:, 1, 2], out[:, 1, 4] = x[:, 0], x[:, 1], x[:, 2]
    out[:, 2, 3], out[:, 2, 4], out[:, 2, 5] = x[:, 0], x[:, 1], x[:, 2]


def _fill_inertia_bias(out: np.ndarray, w: np.ndarray) -> None:
    """out (N, 3, 6) with ω × (I ω) = out (Ixx, Ixy, Iyy, Ixz, Iyz, Izz), ω (N, 3)."""
    wx, wy, wz = w[:, 0], w[:, 1], w[:, 2]
    out[:, 0] = np.stack([0 * wx, -wx * wz, -wy * wz, wx * wy, wy * wy - wz * wz, wy * wz], axis=1)
    out[:, 1] = np.stack([wx * wz, wy * wz, 0 * wx, wz * wz - wx * wx, -wx * wy, -wx * wz], axis=1)
    out[:, 2] = np.stack([-wx * wy, wx * wx - wy * wy, wx * wy, -wy * wz, wx * wz, 0 * wx], axis=1)


def payload_regressor(b: np.ndarray, omega_dot: np.ndarray, omega_outer: np.ndarray) -> np.ndarray:
    """Y (N, 6, 10) with F = Y π (module docstring) from b (N, 3), ω̇ (N, 3) and ωωᵀ (N, 3, 3),
    link axes. Linear in each input."""
    b, wd, p = (np.asarray(x, dtype=float) for x in (b, omega_dot, omega_outer))
    n = b.shape[0]
    y = np.zeros((n, 6, 10))
    y[:, :3, 0] = b
    trace = np.trace(p, axis1=1, axis2=2)
    y[:, :3, 1:4] = _cross(wd) + p - trace[:, None, None] * np.eye(3)  # [ω̇]× + [ω]×²
    y[:, 3:, 1:4] = -_cross(b)  # h × b
    # I ω̇ + ω × (I ω): (I ω̇)_c = E_pcd ω̇_d; (ω × I ω)_a = ε_abc E_pcd ω_b ω_d
    _fill_inertia_map(y[:, 3:, 4:], wd)
    y[:, 3:, 4:] += np.einsum("abc,pcd,nbd->nap", _EPS, _BASIS, p)  # ω × (I_O ω) from ωωᵀ
    return y


def momentum_regressor(v: np.ndarray, omega: np.ndarray) -> np.ndarray:
    """Y_D (N, 6, 10) with the load's spatial momentum I u = Y_D(u) π, u = [v; ω] the link's twist
    (origin velocity and angular velocity, link axes), [linear; angular] rows. With u̇ for u,
    Y_D(u̇) + `bias_regressor` = `payload_regressor` (b = v̇ + ω × v − Rᵀg)."""
    v, w = np.asarray(v, dtype=float), np.asarray(omega, dtype=float)
    y = np.zeros((v.shape[0], 6, 10))
    y[:, :3, 0] = v
    y[:, :3, 1:4] = _cross(w)  # ω × h
    y[:, 3:, 1:4] = -_cross(v)  # h × v
    _fill_inertia_map(y[:, 3:, 4:], w)  # I_O ω
    return y


def bias_regressor(v: np.ndarray, omega: np.ndarray, gravity_link: np.ndarray) -> np.ndarray:
    """Y_Z (N, 6, 10): the load's u ×* (I u) − I a_g in π, u = [v; ω] the link's twist and a_g =
    [g; 0] gravity, link axes: everything of its wrench but the momentum's time derivative."""
    v, w, g = (np.asarray(x, dtype=float) for x in (v, omega, gravity_link))
    wv = np.cross(w, v)
    p = np.einsum("ni,nj->nij", w, w)
    y = np.zeros((v.shape[0], 6, 10))
    y[:, :3, 0] = wv - g
    y[:, :3, 1:4] = p - np.trace(p, axis1=1, axis2=2)[:, None, None] * np.eye(3)  # [ω]×²
    y[:, 3:, 1:4] = -_cross(wv) + _cross(g)
    _fill_inertia_bias(y[:, 3:, 4:], w)  # ω × (I_O ω)
    return y


def link_motion(
    model: RobotModel,
    q: npt.ArrayLike,
    link: str,
    qd: npt.ArrayLike | None = None,
    qdd: npt.ArrayLike | None = None,
    gravity: npt.ArrayLike = GRAVITY,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(R (N, 3, 3), b (N, 3), ω (N, 3), ω̇ (N, 3)) of `link` over samples q (N, nq) (and qd, qdd
    (N, nv); None: at rest): its rotation in the root frame, b = Rᵀ(a_O − g) and its angular
    velocity and acceleration, link axes."""
    q2 = np.atleast_2d(finite_states(q, "q", model.nq))
    n = q2.shape[0]
    g = np.asarray(gravity, dtype=float).reshape(3)
    rot = np.array([link_pose(model, qi, link)[0] for qi in q2])
    a = np.zeros((n, 6))
    omega = np.zeros((n, 3))
    if qd is not None or qdd is not None:
        qd2 = np.zeros((n, model.nv)) if qd is None else np.atleast_2d(finite_states(qd, "qd", model.nv))
        qdd2 = np.zeros((n, model.nv)) if qdd is None else np.atleast_2d(finite_states(qdd, "qdd", model.nv))
        if qd2.shape[0] != n or qdd2.shape[0] != n:
            raise RneaError(f"q, qd and qdd need as many samples, got {n}, {qd2.shape[0]}, {qdd2.shape[0]}")
        jac = jacobian_rows(model, q2, link, range(6))
        a = np.einsum("nij,nj->ni", jac, qdd2) + link_jdot_qd(model, q2, qd2, link, jac)
        omega = np.einsum("nij,nj->ni", jac[:, 3:], qd2)
    rt = np.transpose(rot, (0, 2, 1))
    b = np.einsum("nij,nj->ni", rt, a[:, :3] - g)
    return rot, b, np.einsum("nij,nj->ni", rt, omega), np.einsum("nij,nj->ni", rt, a[:, 3:])


def payload_parameters(payload: Payload | None) -> np.ndarray:
    """π (PARAMETERS) of a payload (None or mass 0: zeros): inertia moved to the link origin."""
    pi = np.zeros(10)
    if payload is None or payload.mass <= 0:
        return pi
    m, c = float(payload.mass), np.asarray(payload.com, dtype=float)
    i_o = np.asarray(payload.inertia, dtype=float) + m * (float(c @ c) * np.eye(3) - np.outer(c, c))
    pi[0], pi[1:4] = m, m * c
    pi[4:] = i_o[[0, 0, 1, 0, 1, 2], [0, 1, 1, 2, 2, 2]]
    return pi


def payload_from_parameters(link: str, pi: np.ndarray) -> Payload:
    """The payload of π (mass ≤ 0: mass 0, no payload)."""
    m = float(pi[0])
    if m <= 0:
        return Payload(link, 0.0, np.zeros(3), np.zeros((3, 3)))
    c = np.asarray(pi[1:4], dtype=float) / m
    i_o = np.einsum("p,pij->ij", pi[4:], _BASIS)
    return Payload(link, m, c, i_o - m * (float(c @ c) * np.eye(3) - np.outer(c, c)))


def blend_payloads(old: Payload | None, new: Payload | None, s: float, link: str) -> Payload:
    """The payload (1 − s) old + s new, blended in π (mass, first moment, inertia about the link
    origin), which a rigid body stays for s in [0, 1]; None or mass 0 is no payload. Both on `link`."""
    pi = (1.0 - s) * payload_parameters(old) + s * payload_parameters(new)
    return payload_from_parameters(link, pi)


def rotation_spread(gravity_directions: np.ndarray) -> float:
    """RMS angle (rad) of unit vectors about their mean direction: arcsin √(1 − μ₁), μ₁ the largest
    eigenvalue of mean(u uᵀ). 0 when they are all one direction."""
    u = np.asarray(gravity_directions, dtype=float)
    if u.shape[0] == 0:
        return 0.0
    mu = np.linalg.eigvalsh(np.einsum("ni,nj->ij", u, u) / u.shape[0])[-1]
    return float(np.arcsin(np.sqrt(np.clip(1.0 - mu, 0.0, 1.0))))


def _point_mass_inertia(m: float, h: np.ndarray) -> np.ndarray:
    """(Ixx, Ixy, Iyy, Ixz, Iyz, Izz) about the origin of a point mass m at h / m."""
    if m <= 1e-12:
        return np.zeros(6)
    i_o = (float(h @ h) * np.eye(3) - np.outer(h, h)) / m
    return i_o[[0, 0, 1, 0, 1, 2], [0, 1, 1, 2, 2, 2]]


def _autocorrelation_time(residual: np.ndarray) -> float:
    """Integrated autocorrelation time (samples, ≥ 1) of residual series (N, channels), pooled:
    1 + 2 Σ ρ(l) up to the first lag where ρ drops below 0.05 (at most N / 4)."""
    n = residual.shape[0]
    if n < 8:
        return 1.0
    x = residual - residual.mean(axis=0)
    size = 1 << int(np.ceil(np.log2(2 * n)))
    spectrum = np.fft.rfft(x, size, axis=0)
    acf = np.fft.irfft(spectrum * np.conj(spectrum), size, axis=0)[:n].sum(axis=1)
    if acf[0] <= 0:
        return 1.0
    rho = acf / acf[0]
    below = np.flatnonzero(rho[1 : max(n // 4, 2)] < 0.05)
    last = int(below[0]) + 1 if below.size else max(n // 4, 2)
    return max(1.0 + 2.0 * float(rho[1:last].sum()), 1.0)


def _weighted_fit(
    regressor: np.ndarray, targets: np.ndarray, scale: np.ndarray, columns: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(π (10,), residual (N, R), normal matrix (10, 10)) of the least squares with rows scaled by
    `scale` (R,), by its normal equations; with 4 columns the inertia is a point mass's (a
    fixed-point iteration on the inertia columns' share)."""
    a = regressor.reshape(-1, 10)
    weighted = (regressor * (scale**2)[None, :, None]).reshape(-1, 10)
    normal = weighted.T @ a
    rhs = weighted.T @ targets.reshape(-1)
    pi = np.zeros(10)
    if columns == 10:
        pi[:] = np.linalg.lstsq(normal, rhs, rcond=None)[0]
    else:
        for _ in range(POINT_MASS_ITERATIONS):
            pi[:4] = np.linalg.lstsq(normal[:4, :4], rhs[:4] - normal[:4, 4:] @ pi[4:], rcond=None)[0]
            pi[4:] = _point_mass_inertia(pi[0], pi[1:4])
    return pi, targets - regressor @ pi, normal


def _rms(x: np.ndarray) -> float:
    return float(np.sqrt(np.mean(x**2))) if x.size else 0.0


def fit_payload(
    regressor: np.ndarray,
    targets: np.ndarray,
    directions: np.ndarray,
    link: str,
    *,
    groups: npt.ArrayLike | None = None,
    scale: npt.ArrayLike | None = None,
    observed: np.ndarray | None = None,
    inertia: bool = False,
    limits: PayloadLimits = DEFAULT_LIMITS,
) -> PayloadEstimate:
    """The payload π explaining `targets` (N, R) = `regressor` (N, R, 10) π: R rows per sample
    (a wrench's 6, or external joint torques), `directions` (N, 3) the load's apparent gravity
    b / |b| per sample (the rotation check). Rows of one `groups` entry (R,) share a noise level
    (default: one group per row); `scale` (R,) weights the first pass (default 1). `observed`
    (N, R): what was measured when the targets add a payload already modelled (the observer's r:
    a release is a change as large as the load, towards no load); the mismatch is the residual
    over the largest of the targets, what was observed and a `min_mass` load's. See the
    module docstring; PayloadRefused with the reason when the window cannot tell."""
    y_all = np.asarray(regressor, dtype=float)
    f_all = np.asarray(targets, dtype=float)
    if f_all.ndim != 2 or y_all.shape != (*f_all.shape, 10):
        raise RneaError(f"regressor (N, R, 10) and targets (N, R) expected, got {y_all.shape}, {f_all.shape}")
    n, rows = f_all.shape
    group = np.arange(rows) if groups is None else np.asarray(groups, dtype=np.int64).reshape(-1)
    first = np.ones(rows) if scale is None else np.asarray(scale, dtype=float).reshape(-1)
    if group.shape != (rows,) or first.shape != (rows,):
        raise RneaError(f"groups and scale must have {rows} entries")
    if not (np.isfinite(y_all).all() and np.isfinite(f_all).all() and np.isfinite(directions).all()):
        raise RneaError("regressor, targets and directions must be finite")
    if n < 2:
        raise PayloadRefused("samples", f"{n} samples: at least 2 are needed", None)
    rotation = rotation_spread(directions)
    columns = 10 if inertia else 4
    # pass 1 (scale); pass 2: each group by its residual's RMS
    pi, residual, _ = _weighted_fit(y_all, f_all, first, columns)
    floor = limits.min_mass * y_all[:, :, 0]  # what a load of min_mass at the link origin gives
    seen = 0.0 if observed is None else _rms(np.asarray(observed, dtype=float) * first)
    mismatch = _rms(residual * first) / max(_rms(f_all * first), seen, _rms(floor * first), 1e-300)
    second = np.empty(rows)
    tiny = 1e-12 * max(_rms(f_all), _rms(floor), 1e-300)
    for g in np.unique(group):
        second[group == g] = 1.0 / max(_rms(residual[:, group == g]), tiny)
    pi, residual, normal = _weighted_fit(y_all, f_all, second, columns)
    normalized = residual * second
    variance = float(np.sum(normalized**2)) / max(rows * n - columns, 1)
    covariance = np.linalg.pinv(normal[:columns, :columns]) * variance * _autocorrelation_time(normalized)
    m, h = float(pi[0]), pi[1:4]
    jac = np.zeros((3, columns))  # ∂c/∂(m, h)
    if abs(m) > 1e-12:
        jac[:, 0] = -h / m**2
        jac[:, 1:4] = np.eye(3) / m
    com = h / m if abs(m) > 1e-12 else np.zeros(3)
    com_std = np.sqrt(np.clip(np.diag(jac @ covariance @ jac.T), 0.0, None))
    mass_std = float(np.sqrt(max(covariance[0, 0], 0.0)))
    inertia_c = None
    if inertia and abs(m) > 1e-12:
        i_o = np.einsum("p,pij->ij", pi[4:], _BASIS)
        inertia_c = i_o - m * (float(com @ com) * np.eye(3) - np.outer(com, com))
    estimate = PayloadEstimate(
        link, m, com, inertia_c, mass_std, com_std, rotation, mismatch, n, pi, covariance
    )
    if mismatch > limits.max_mismatch:
        raise PayloadRefused(
            "changing",
            f"no rigid load explains the wrench: the residual is {100 * mismatch:.0f} % of it (at most "
            f"{100 * limits.max_mismatch:.0f} %): contact with the environment, or a load still moving",
            estimate,
        )
    if m <= -limits.min_mass:
        raise PayloadRefused(
            "negative_mass", f"negative mass {m:.3g} kg: the link is lifted or pulled, not loaded", estimate
        )
    if m < limits.min_mass:
        return PayloadEstimate(
            link, 0.0, np.zeros(3), None, mass_std, np.zeros(3), rotation, mismatch, n, pi, covariance
        )
    if rotation < limits.min_rotation:
        raise PayloadRefused(
            "rotation",
            f"too little rotation for the centre of mass: the load's apparent gravity (gravity minus the "
            f"link's acceleration) turned {np.degrees(rotation):.2f} deg in the link frame over the "
            f"window, at least {np.degrees(limits.min_rotation):.2f} deg needed (the mass alone: "
            f"{m:.3f} +- {mass_std:.3f} kg)",
            estimate,
        )
    distance = float(np.linalg.norm(com))
    if distance > limits.max_com_distance:
        raise PayloadRefused(
            "com_distance",
            f"centre of mass {distance:.3f} m from the link origin, beyond {limits.max_com_distance:g} m "
            f"({m:.3f} kg)",
            estimate,
        )
    if inertia_c is not None:
        defect = inertia_defect(inertia_c)
        if defect is not None:
            raise PayloadRefused("inertia", f"the inertia is not a rigid body's: {defect}", estimate)
    return estimate


WRENCH_GROUPS = (0, 0, 0, 1, 1, 1)  # forces share a noise level, moments another
WRENCH_SCALE = (1.0, 1.0, 1.0) + (1.0 / REFERENCE_LENGTH,) * 3


def ancestor_joints(model: RobotModel, link: str) -> np.ndarray:
    """Model indices of the joints that move `link`, root first."""
    body = model.link_frame(link).body
    chain = []
    while body >= 0:
        chain.append(body)
        body = int(model.parent[body])
    return np.array(chain[::-1], dtype=np.int64) + model.root_nv


def estimate_payload(
    model: RobotModel,
    q: npt.ArrayLike,
    wrenches: npt.ArrayLike | None,
    link: str,
    *,
    tau_ext: npt.ArrayLike | None = None,
    qd: npt.ArrayLike | None = None,
    qdd: npt.ArrayLike | None = None,
    gravity: npt.ArrayLike = GRAVITY,
    axes: str = "root",
    inertia: bool = False,
    limits: PayloadLimits = DEFAULT_LIMITS,
) -> PayloadEstimate:
    """The payload on `link` from samples q (N, nq) and either the wrenches (N, 6) [f; n] the link
    exerts on it (moment about the link origin; `axes` 'root' or 'link') or, with wrenches None,
    the external joint torques tau_ext (N, nv) it causes (τ_ext = −Jᵀ F, as the momentum observer
    estimates them; the joints that move the link are used), with the joint velocities and
    accelerations qd, qdd (N, nv) when the arm moves (None: at rest). `inertia`: estimate the
    inertia too (needs qd and qdd with enough angular motion). See the module docstring;
    PayloadRefused with the reason when the samples cannot tell, RneaError on bad input."""
    if axes not in ("root", "link"):
        raise RneaError(f"axes must be 'root' or 'link', got '{axes}'")
    if (wrenches is None) == (tau_ext is None):
        raise RneaError("give either wrenches or tau_ext")
    frame = model.link_frame(link)
    if frame.body < 0:
        raise RneaError(f"link '{link}' is fixed to the root: no joint carries a payload there")
    if inertia and (qd is None or qdd is None):
        raise RneaError("inertia needs qd and qdd (the inertia is seen only in motion)")
    g = np.asarray(gravity, dtype=float).reshape(3)
    if not np.isfinite(g).all() or not np.linalg.norm(g) > 0:
        raise RneaError(f"gravity must be 3 finite values, not zero, got {gravity!r}")
    rot, b, omega, omega_dot = link_motion(model, q, link, qd, qdd, g)
    n = rot.shape[0]
    regressor = payload_regressor(b, omega_dot, np.einsum("ni,nj->nij", omega, omega))
    directions = b / np.maximum(np.linalg.norm(b, axis=1, keepdims=True), 1e-300)
    if wrenches is not None:
        f = np.atleast_2d(np.asarray(wrenches, dtype=float))
        if f.shape != (n, 6):
            raise RneaError(f"wrenches must have shape ({n}, 6), got {f.shape}")
        if axes == "root":
            rt = np.transpose(rot, (0, 2, 1))
            f = np.concatenate([rt @ f[:, :3, None], rt @ f[:, 3:, None]], axis=1)[:, :, 0]
        return fit_payload(
            regressor, f, directions, link, groups=WRENCH_GROUPS, scale=WRENCH_SCALE, inertia=inertia,
            limits=limits,
        )  # fmt: skip
    tau = np.atleast_2d(np.asarray(tau_ext, dtype=float))
    if tau.shape != (n, model.nv):
        raise RneaError(f"tau_ext must have shape ({n}, {model.nv}), got {tau.shape}")
    joints = ancestor_joints(model, link)
    q2 = np.atleast_2d(finite_states(q, "q", model.nq))
    jac = jacobian_rows(model, q2, link, range(6))[:, :, joints]  # root axes
    rt = np.transpose(rot, (0, 2, 1))
    body_jac = np.concatenate([rt @ jac[:, :3], rt @ jac[:, 3:]], axis=1)  # link axes
    joint_regressor = -np.transpose(body_jac, (0, 2, 1)) @ regressor  # τ_ext = −J_Bᵀ Y π
    return fit_payload(joint_regressor, tau[:, joints], directions, link, inertia=inertia, limits=limits)
