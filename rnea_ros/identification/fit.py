"""Identify inertial, friction, armature and payload parameters from recorded joint data.

Model: τ = Y(q, q̇, q̈) π (see `regressor` for π's layout and units; Coulomb friction as
tanh(q̇ / v_ε), v_ε = 0.01 rad/s by default, like the node). Parameters not being identified are
held at the model's values; the free ones are fitted by

    min_δ  Σ_j w_j ||Y_j δ − (τ_j − Y_j π_model)||²  +  λ² ||δ / s||²,      π = π_model + δ,

weighted least squares (w_j = 1 / σ_j², σ_j the per-joint residual of an unweighted first pass)
with a ridge toward the model's (URDF) values: a first, plain pass gives each joint's residual
RMS σ_j (w_j = 1 / σ_j², or one common σ with weighted=False), so the whitened residuals have unit
variance and λ = prior_weight is a Gaussian prior on δ with standard deviation s / prior_weight
(maximum a posteriori). s scales each parameter by its body's mass M (URDF) and L = 0.1 m:
m: M, m c: M L, inertia: M L², armature: (mean M) L², viscous and Coulomb: 1 N m s/rad and 1 N m.
Combinations of parameters the data cannot see (the null space of Y, e.g. the armature of a first
vertical joint against its body's I_zz) keep the model's values and only identifiable
combinations move; well-excited ones are fitted by the data alone (noiseless data: exactly).
Friction and armature are kept ≥ 0 (bounded least squares when the unconstrained fit goes below).

One module per piece: the samples and their derivatives (`signals`), what the data can identify
(`identifiability`), the reduction and the least squares (`least_squares`), physical consistency
(`consistency`) and the pseudo-inertia refit (`physical_fit`), the payload (`payload`), the
model's efforts and held-out RMS (`prediction`). This module puts them together: `identify`, how
it fits (`FitOptions`) and its result (`Identification`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace

import numpy as np
from scipy import linalg

from rnea_ros.errors import RneaError
from rnea_ros.friction.model import SMOOTHING_VELOCITY
from rnea_ros.identification.consistency import BodyConsistency, consistency
from rnea_ros.identification.identifiability import base_parameters, conditioning
from rnea_ros.identification.least_squares import Problem, Reduced, prior_scales
from rnea_ros.identification.payload import payload_in_link, point_mass_fit, with_payload_record
from rnea_ros.identification.physical_fit import physical_fit
from rnea_ros.identification.prediction import CHUNK_FLOATS, coulomb_sign, fit_regressor
from rnea_ros.identification.regressor import (
    PER_BODY,
    body_columns,
    body_links,
    joint_columns,
    parameter_count,
    standard_parameters,
    with_parameters,
)
from rnea_ros.identification.signals import Samples
from rnea_ros.model.robot_model import GRAVITY, Payload, RobotModel

WHAT = ("inertial", "friction", "payload")
NUMERICAL_RIDGE = 1e-10  # relative to the largest singular value, first pass only
JOINT_KINDS = ("viscous", "coulomb", "armature")  # the per-joint parameters, kept >= 0


@dataclass(frozen=True)
class FitOptions:
    """How `identify` fits (module docstring); checked when made.

    payload_link: the link carrying the payload (None: the model's tip link, else the last
        body's link); payload_inertia: also fit its inertia about its com (else a point mass).
    armature: fit the armature with the friction (None: only when identifying "inertial").
    split: the first `split` of the samples (in time) trains, the rest validates; 1 validates on
        the training samples.
    prior_weight: λ, the ridge toward the model's values (0: none).
    weighted: weight each joint by its first-pass residual (else one common weight).
    physical: refit as pseudo-inertias when the linear fit leaves a body inconsistent.
    min_speed: rows of joint j with |q̇_j| below it (rad/s or m/s) are left out of the fit
        (dry friction sticking); the validation reports them apart.
    gravity: root frame, m/s². smoothing_velocity: v_ε of the tanh Coulomb model, rad/s or m/s.
    fit_joints: the joints whose efforts are fitted (None: every joint); the others' motion stays
        in the regressor, their efforts, friction and armature are left out.
    """

    payload_link: str | None = None
    payload_inertia: bool = False
    armature: bool | None = None
    split: float = 0.7
    prior_weight: float = 1.0
    weighted: bool = True
    physical: bool = True
    min_speed: float = 0.0
    gravity: tuple[float, float, float] = GRAVITY
    smoothing_velocity: float = SMOOTHING_VELOCITY
    fit_joints: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        if not 0 < self.split <= 1:
            raise RneaError(f"split must be in (0, 1], got {self.split}")
        if not self.min_speed >= 0:
            raise RneaError(f"min_speed must be >= 0, got {self.min_speed}")
        if not self.prior_weight >= 0:
            raise RneaError(f"prior_weight must be >= 0, got {self.prior_weight}")
        if not self.smoothing_velocity > 0:
            raise RneaError(f"smoothing_velocity must be > 0, got {self.smoothing_velocity}")
        try:
            gravity = np.asarray(self.gravity, dtype=float)
        except (TypeError, ValueError):
            gravity = np.full(0, np.nan)
        if gravity.shape != (3,) or not np.all(np.isfinite(gravity)):
            raise RneaError(f"gravity must be 3 finite numbers, got {self.gravity!r}")
        object.__setattr__(self, "gravity", tuple(float(x) for x in gravity))
        if self.fit_joints is not None:
            if isinstance(self.fit_joints, str):
                raise RneaError(f"fit_joints must be joint names, got the string {self.fit_joints!r}")
            object.__setattr__(self, "fit_joints", tuple(dict.fromkeys(self.fit_joints)))


@dataclass(frozen=True)
class Identification:
    """Result of `identify`. Per-joint arrays follow `model.joint_names`; efforts N m or N."""

    model: RobotModel  # the identified model (inertials, damping = viscous, coulomb, armature)
    parameters: np.ndarray  # π of `model`, see `regressor`
    model_parameters: np.ndarray  # π of the model before identification (the prior)
    identified: tuple[str, ...]  # what was identified: "inertial", "friction", "payload"
    viscous: np.ndarray  # N m s/rad or N s/m
    coulomb: np.ndarray  # N m or N
    armature: np.ndarray  # kg m² or kg
    smoothing_velocity: float  # v_ε of the tanh Coulomb model, rad/s or m/s
    payload: Payload | None  # identified payload (link frame), or None
    rms_model: np.ndarray  # per-joint validation RMS of the model before identification
    rms_identified: np.ndarray  # per-joint validation RMS of the identified model
    rms_model_moving: np.ndarray  # the same over the validation rows with |q̇_j| ≥ min_speed
    rms_identified_moving: np.ndarray
    condition_number: float  # of the base regressor (SI units) on the training samples
    rank: int  # number of base parameters among the free ones
    free: int  # number of free parameters
    consistency: list[BodyConsistency]
    train_samples: int
    validation_samples: int
    joint_names: tuple[str, ...] = field(default=())
    notes: list[str] = field(default_factory=list)
    # base parameters the training data leaves (numerically) unexcited: a rank deficiency beyond
    # the base-parameter reduction; they keep the model's values and are not in condition_number
    unexcited: list[str] = field(default_factory=list)
    still_joints: tuple[str, ...] = ()  # joints never faster than min_speed in the training part
    fit_joints: tuple[str, ...] = ()  # the joints whose efforts were fitted (and are scored)
    # per joint, the validation rows with |q̇_j| ≥ min_speed (those rms_*_moving are over)
    validation_moving_samples: tuple[int, ...] = ()

    def to_dict(self) -> dict:
        """Plain values for JSON."""
        payload = None
        if self.payload is not None:
            payload = {
                "link": self.payload.link,
                "mass": self.payload.mass,
                "com": [float(x) for x in self.payload.com],
                "inertia": [[float(x) for x in row] for row in self.payload.inertia],
            }
        return {
            "identified": list(self.identified),
            "joints": list(self.joint_names),
            "viscous": [float(x) for x in self.viscous],
            "coulomb": [float(x) for x in self.coulomb],
            "armature": [float(x) for x in self.armature],
            "smoothing_velocity": self.smoothing_velocity,
            "payload": payload,
            "rms_model": [float(x) for x in self.rms_model],
            "rms_identified": [float(x) for x in self.rms_identified],
            "rms_model_moving": [float(x) for x in self.rms_model_moving],
            "rms_identified_moving": [float(x) for x in self.rms_identified_moving],
            "condition_number": self.condition_number,
            "rank": self.rank,
            "free_parameters": self.free,
            "unexcited_base_parameters": list(self.unexcited),
            "still_joints": list(self.still_joints),
            "fit_joints": list(self.fit_joints),
            "consistency": [c.to_dict() for c in self.consistency],
            "train_samples": self.train_samples,
            "validation_samples": self.validation_samples,
            "validation_moving_samples": list(self.validation_moving_samples),
            "notes": list(self.notes),
        }


def identify(
    model: RobotModel,
    samples: Samples,
    what: Iterable[str] = ("inertial", "friction"),
    options: FitOptions = FitOptions(),
) -> Identification:
    """Identify `what` ("inertial", "friction", "payload", any mix but inertial with payload) from
    `samples`, everything else held at the model's values (module docstring), as `options` say.

    The first `options.split` of the samples (in time) trains, the rest validates (per-joint
    torque RMS of the model before and after). "friction" fits viscous and Coulomb per joint (+
    armature with `options.armature`, default: only with "inertial"). "payload" fits a rigid load
    on `options.payload_link`: its mass and centre of mass as a point mass (nonlinear least
    squares on the reduced problem), with `options.payload_inertia` also its inertia about the com
    (linear). Rows of joint j where |q̇_j| < `options.min_speed` are left out of the fit (sticking
    phases, where dry friction takes any value within ±F_c); validation reports every sample
    (`rms_model`, `rms_identified`) and the rows that are fitted (`rms_*_moving`).
    With `options.physical`, when the linear fit leaves a body physically inconsistent, every free
    body is refitted as a pseudo-inertia U Uᵀ (`physical_fit`).
    `options.fit_joints` are the joints whose efforts are fitted: the others keep their motion in
    the regressor (it loads the fitted joints) but their efforts (untrusted: unknown drive
    constants, quantised) are left out, and so are their friction and armature, which only their
    own efforts show.
    """
    what = _checked_what(what)
    n = model.nv
    if samples.q.ndim != 2 or samples.q.shape[1] != n:
        raise RneaError(f"samples must have {n} joints (model.joint_names), got shape {samples.q.shape}")
    names = list(model.joint_names)
    fitted = _fitted_joints(names, options.fit_joints)
    fit = np.isin(names, fitted)
    payload_link = _payload_link(model, options.payload_link) if "payload" in what else None
    payload_body = -1 if payload_link is None else model.link_frame(payload_link).body
    cols = np.flatnonzero(_free(model, what, options, fit, payload_body))
    count = len(samples)
    n_train = count if options.split >= 1 else int(round(options.split * count))
    if n_train * n < 2 * cols.size or (options.split < 1 and count - n_train < 1):
        raise RneaError(
            f"too few samples: {count} × {n} joints ({n_train} for training) for {cols.size} free parameters"
        )
    train = samples.part(slice(0, n_train))
    valid = samples if options.split >= 1 else samples.part(slice(n_train, count))
    pi0 = standard_parameters(model)
    scale = prior_scales(model, pi0)[cols]
    sign = coulomb_sign(samples, options.smoothing_velocity)
    reduced = _reduce(model, train, sign, cols, scale, fit, options)
    if reduced.rows.sum() < 2 * cols.size:
        raise RneaError(
            f"too few samples: {int(reduced.rows.sum())} joint rows faster than min_speed "
            f"{options.min_speed} for {cols.size} free parameters"
        )
    unweighted = Problem(
        *reduced.stacked(np.ones(n)), 0.0, _lower_bounds(model, cols, scale, pi0), cols, scale
    )
    basis = base_parameters(model, cols, gravity=options.gravity, rows=np.flatnonzero(fit))
    a_plain = unweighted.a / scale  # R of [Y S] is R of Y times S
    cond, unexcited = conditioning(a_plain[:, np.searchsorted(cols, basis.independent)], basis.names)
    still = tuple(name for name, rows, f in zip(names, reduced.rows, fit, strict=True) if f and rows == 0)

    x, problem = _two_passes(reduced, unweighted, train, options)
    notes: list[str] = []
    if payload_body >= 0 and not options.payload_inertia:
        x = point_mass_fit(problem, x, payload_body)
    if "inertial" in what and options.physical:
        x, moved = physical_fit(model, problem, x, pi0)
        if moved:
            notes.append(f"refitted with physically consistent bodies (were not: {', '.join(moved)})")
    delta = np.zeros(pi0.size)
    delta[cols] = x * scale
    pi = pi0 + delta
    # bounded solve keeps friction and armature ≥ 0 up to rounding
    for kind in JOINT_KINDS:
        sl = joint_columns(model, kind)
        pi[sl] = np.maximum(pi[sl], 0.0)

    payload = None
    identified_model = with_parameters(model, pi)
    if payload_link is not None:
        pi10 = delta[body_columns(model, payload_body)]
        payload = payload_in_link(model, payload_link, pi10, options.payload_inertia)
        if payload.mass <= 0:
            notes.append(f"identified payload mass {payload.mass:.4g} kg is not positive")
        if model.payload is None:
            # keep the split robot + payload visible: the bare robot plus `payload` on its link
            identified_model = with_payload_record(identified_model, model, payload, pi, payload_body)

    rms, moving = _validate(model, samples, valid, sign, (pi0, pi), options)
    if options.split >= 1:
        notes.append("split = 1: validated on the training samples")
    if cond > 1e8:
        notes.append(f"base regressor condition number {cond:.3g}: poorly excited, prior dominates")
    if unexcited:
        notes.append(
            f"{len(unexcited)} of {basis.rank} base parameters not excited by the data (they keep "
            f"the model's values): {', '.join(unexcited)}"
        )
    report = consistency(identified_model)
    notes += [f"body '{c.link}' is not physically consistent" for c in report if not c.ok]
    return Identification(
        model=identified_model,
        parameters=pi,
        model_parameters=pi0,
        identified=what,
        viscous=pi[joint_columns(model, "viscous")].copy(),
        coulomb=pi[joint_columns(model, "coulomb")].copy(),
        armature=pi[joint_columns(model, "armature")].copy(),
        smoothing_velocity=float(options.smoothing_velocity),
        payload=payload,
        rms_model=rms[0],
        rms_identified=rms[1],
        rms_model_moving=rms[2],
        rms_identified_moving=rms[3],
        condition_number=cond,
        rank=basis.rank,
        free=int(cols.size),
        consistency=report,
        train_samples=n_train,
        validation_samples=len(valid),
        joint_names=model.joint_names,
        notes=notes,
        unexcited=unexcited,
        still_joints=still,
        fit_joints=tuple(j for j in names if j in fitted),
        validation_moving_samples=tuple(int(x) for x in moving),
    )


def _checked_what(what: Iterable[str]) -> tuple[str, ...]:
    what = tuple(dict.fromkeys(what))
    bad = [w for w in what if w not in WHAT]
    if bad or not what:
        raise RneaError(f"what must be a non-empty subset of {WHAT}, got {list(what)}")
    if "payload" in what and "inertial" in what:
        raise RneaError(
            "what: 'payload' and 'inertial' cannot come from the same run (the payload is part of a "
            "body's inertial); identify 'inertial' first, then 'payload' on a run with the load"
        )
    return what


def _fitted_joints(names: list[str], fit_joints: tuple[str, ...] | None) -> list[str]:
    fitted = names if fit_joints is None else list(fit_joints)
    if not fitted:
        raise RneaError("fit_joints is empty: nothing to fit")
    unknown = [j for j in fitted if j not in names]
    if unknown:
        raise RneaError(f"fit_joints: {', '.join(unknown)}: not joints of the model ({', '.join(names)})")
    return fitted


def _payload_link(model: RobotModel, link: str | None) -> str:
    """The payload's link (default: the tip link, else the last body's link); it must move."""
    link = link or model.tip_link or body_links(model)[-1]
    try:
        body = model.link_frame(link).body
    except KeyError as exc:
        raise RneaError(f"payload_link: {exc.args[0]}") from None
    if body < 0:
        raise RneaError(f"payload_link '{link}' is fixed to the root (no effect)")
    return link


def _free(
    model: RobotModel, what: tuple[str, ...], options: FitOptions, fit: np.ndarray, payload_body: int
) -> np.ndarray:
    """Mask over π of the free parameters."""
    n = model.nv
    free = np.zeros(parameter_count(model), dtype=bool)
    if "inertial" in what:
        free[: PER_BODY * n] = True
    if "inertial" in what or "friction" in what:
        with_armature = ("inertial" in what) if options.armature is None else bool(options.armature)
        for kind in JOINT_KINDS if with_armature else JOINT_KINDS[:2]:
            free[np.arange(free.size)[joint_columns(model, kind)][fit]] = True
    if payload_body >= 0:
        free[body_columns(model, payload_body)] = True
    return free


def _lower_bounds(model: RobotModel, cols: np.ndarray, scale: np.ndarray, pi0: np.ndarray) -> np.ndarray:
    """Lower bounds of the scaled free parameters: friction and armature stay ≥ 0."""
    lower = np.full(cols.size, -np.inf)
    for kind in JOINT_KINDS:
        sl = joint_columns(model, kind)
        in_cols = (cols >= sl.start) & (cols < sl.stop)
        lower[in_cols] = -pi0[cols[in_cols]] / scale[in_cols]
    return lower


def _reduce(
    model: RobotModel,
    train: Samples,
    sign: np.ndarray,
    cols: np.ndarray,
    scale: np.ndarray,
    fit: np.ndarray,
    options: FitOptions,
) -> Reduced:
    """The training samples reduced per joint, chunk by chunk: rows of fitted joints moving at
    least min_speed, columns the scaled free parameters, right-hand side τ − Y π_model."""
    n, pi0 = model.nv, standard_parameters(model)
    reduced = Reduced(n, cols.size)
    chunk = max(1, CHUNK_FLOATS // (n * pi0.size))
    for start in range(0, len(train), chunk):
        part = train.part(slice(start, start + chunk))
        part_sign = sign[start : start + len(part)]
        y = fit_regressor(model, part, part_sign, options.gravity, options.smoothing_velocity)
        rhs = part.tau - y @ pi0
        keep = (np.abs(part.qd) >= options.min_speed) & fit  # (N, n): fitted joints moving fast enough
        reduced.add(y[:, :, cols] * scale * keep[:, :, None], rhs * keep, keep.sum(axis=0))
    return reduced


def _two_passes(
    reduced: Reduced, unweighted: Problem, train: Samples, options: FitOptions
) -> tuple[np.ndarray, Problem]:
    """Pass 1, plain least squares on `unweighted` (a tiny ridge only against numerical rank
    loss), gives each joint's noise level; pass 2 is whitened by it, with the ridge prior_weight
    toward the model. Returns pass 2's solution and problem."""
    n = reduced.rows.size
    a = unweighted.a
    ridge = NUMERICAL_RIDGE * (linalg.svdvals(a)[0] if a.size else 0.0)
    sigma = reduced.residual(replace(unweighted, lam=ridge).solve())
    if not options.weighted:
        sigma = np.full(n, float(np.sqrt(np.mean(sigma**2))))
    tau_rms = float(np.sqrt(np.mean(train.tau**2)))
    floor = max(1e-9 * float(sigma.max()), 1e-12 * tau_rms, 1e-300)
    a, b = reduced.stacked(1.0 / np.maximum(sigma, floor))
    problem = replace(unweighted, a=a, b=b, lam=float(options.prior_weight))
    return problem.solve(), problem


def _validate(
    model: RobotModel,
    samples: Samples,
    valid: Samples,
    sign: np.ndarray,
    parameters: tuple[np.ndarray, np.ndarray],
    options: FitOptions,
) -> tuple[np.ndarray, np.ndarray]:
    """Per-joint validation RMS (4, n) of the prior and the identified π (`parameters`) over every
    sample and over the moving ones (|q̇_j| ≥ min_speed), and the count of those moving samples."""
    pi0, pi = parameters
    n = model.nv
    sq = np.zeros((4, n))  # squared residuals: model, identified; the same on moving rows
    moving = np.zeros(n)
    offset = len(samples) - len(valid)
    chunk = max(1, CHUNK_FLOATS // (n * pi0.size))
    for start in range(0, len(valid), chunk):
        part = valid.part(slice(start, start + chunk))
        part_sign = sign[offset + start : offset + start + len(part)]
        y = fit_regressor(model, part, part_sign, options.gravity, options.smoothing_velocity)
        fast = np.abs(part.qd) >= options.min_speed
        r0, r1 = (part.tau - y @ pi0) ** 2, (part.tau - y @ pi) ** 2
        sq += [r0.sum(0), r1.sum(0), np.where(fast, r0, 0).sum(0), np.where(fast, r1, 0).sum(0)]
        moving += fast.sum(0)
    rms0, rms1 = np.sqrt(sq[:2] / len(valid))
    rms0_moving, rms1_moving = np.sqrt(sq[2:] / np.maximum(moving, 1))
    return np.array([rms0, rms1, rms0_moving, rms1_moving]), moving


def identify_friction(
    model: RobotModel, samples: Samples, armature: bool = False, options: FitOptions = FitOptions()
) -> Identification:
    """Viscous and Coulomb friction per joint (and armature) with the inertials held."""
    return identify(model, samples, ("friction",), replace(options, armature=armature))


def identify_payload(
    model: RobotModel,
    samples: Samples,
    link: str | None = None,
    inertia: bool = False,
    options: FitOptions = FitOptions(),
) -> Identification:
    """A payload on `link` (mass, com, optionally inertia) with everything else held."""
    return identify(
        model, samples, ("payload",), replace(options, payload_link=link, payload_inertia=inertia)
    )
