"""Time-optimal re-timing of a joint trajectory's path under effort and velocity limits, with
TOPP-RA (`pip install toppra`, optional; Pham & Pham 2018) and this package's batch `rnea`.

Unlike `time_scaling.minimal_time_scale` (one factor k for the whole trajectory) TOPP-RA chooses
the path speed ṡ(s) point by point, so it is as fast as the limits allow everywhere. The path is
JTC's spline through the points, q(s) with s the original time; TOPP-RA's torque constraint
τ = a(s) s̈ + b(s) ṡ² + c(s) is built in batch:
a = M q', b = M q'' + c(q, q') (each term only when on in the effort law, `EffortLaw.compensate`),
c = g(q) + Σ Jᵀ F (`trajectory.efforts.motion_efforts` and `static_efforts`), plus
Coulomb friction at full magnitude with the sign of q' (toppra's `fs_coef`, conservative like
`time_scaling`). Viscous friction F_v q' ṡ is linear in ṡ and has no place in that form: a
Friction with non-zero viscous coefficients is refused. Constraints hold at the grid points
(collocation); the result is sampled every `period` for JTC, where `bench/compare_toppra.py`
measures how far the efforts stray from the limits in between.

Arrays in `model.joint_names` order; times s; efforts N m or N.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import numpy.typing as npt

from rnea_ros.control.effort_law import EffortLaw
from rnea_ros.errors import RneaError
from rnea_ros.model.robot_model import RobotModel
from rnea_ros.trajectory.efforts import (
    DEFAULT_RESAMPLE_PERIOD,
    FEEDFORWARD,
    motion_efforts,
    static_efforts,
    trajectory_efforts,
    uniform_times,
)
from rnea_ros.trajectory.sampling import TrajectorySampler
from rnea_ros.trajectory.time_scaling import checked_joints

_NO_LIMIT = 1e9  # stands for an infinite limit in toppra's linear programs
_ATTEMPTS = 6
_MAX_GRID = 2000  # default stages at most (cost, and degenerate stages near rests)


def _toppra():
    try:
        import toppra
        import toppra.algorithm
        import toppra.constraint
        import toppra.interpolator
    except ImportError as exc:
        raise ImportError(
            "time_optimal_parameterisation needs the optional package toppra: pip install toppra"
        ) from exc
    return toppra


def _path(toppra, sampler: TrajectorySampler):
    """JTC's spline as a toppra geometric path, s = original time."""

    class _SplinePath(toppra.interpolator.AbstractGeometricPath):
        def __call__(self, s, order: int = 0):
            scalar = np.ndim(s) == 0  # toppra's s: the original time, clipped to the path
            s = np.clip(np.atleast_1d(np.asarray(s, dtype=float)), 0.0, sampler.duration)
            out = sampler.sample(s, inclusive=True)[order]
            return out[0] if scalar else out

        @property
        def dof(self) -> int:
            return sampler.nv

        @property
        def path_interval(self):
            return np.array([0.0, sampler.duration])

    return _SplinePath()


def _torque_constraint(toppra, model: RobotModel, law: EffortLaw, coulomb: np.ndarray, tau_lim: np.ndarray):
    """toppra's JointTorqueConstraint with a, b, c from batch rnea calls instead of per-point calls."""

    from toppra.constraint.linear_constraint import canlinear_colloc_to_interpolate

    class _BatchTorque(toppra.constraint.JointTorqueConstraint):
        def compute_constraint_params(self, path, gridpoints):
            q, q1, q2 = path(gridpoints), path(gridpoints, 1), path(gridpoints, 2)
            a = motion_efforts(model, law, q, np.zeros_like(q), q1)  # M q' (coriolis needs q̇)
            b = motion_efforts(model, law, q, q1, q2)
            c = static_efforts(model, law, q) + coulomb * np.sign(q1)
            n = q.shape[1]
            f = np.vstack([np.eye(n), -np.eye(n)])
            g = np.concatenate([self.tau_lim[:, 1], -self.tau_lim[:, 0]])
            # each stage's s̈ must satisfy the limits at both ends of its interval
            return canlinear_colloc_to_interpolate(a, b, c, f, g, None, None, gridpoints, identical=True)

    interpolation = toppra.constraint.DiscretizationType.Interpolation
    return _BatchTorque(None, tau_lim, np.zeros(len(tau_lim)), discretization_scheme=interpolation)


def _solve(toppra, constraints, path, count: int):
    """TOPP-RA on `count` equal stages; on failure again on half as many (twice): near a rest at
    the path's ends q' → 0 makes the last stages' programs degenerate on fine grids."""
    for stages in (count, count // 2, count // 4):
        start, end = path.path_interval
        grid = np.linspace(start, end, max(stages, 2) + 1)
        algorithm = toppra.algorithm.TOPPRA(
            constraints, path, gridpoints=grid, solver_wrapper="seidel", parametrizer="ParametrizeConstAccel"
        )
        retimed = algorithm.compute_trajectory(0.0, 0.0)
        if retimed is not None:
            return retimed
    raise RneaError(
        "TOPP-RA found no parameterisation within the limits (static efforts beyond a limit?): "
        f"{algorithm.problem_data.return_code}"
    )


def time_optimal_parameterisation(
    model: RobotModel,
    times: npt.ArrayLike,
    positions: npt.ArrayLike,
    velocities: npt.ArrayLike | None = None,
    accelerations: npt.ArrayLike | None = None,
    *,
    period: float = DEFAULT_RESAMPLE_PERIOD,
    law: EffortLaw = FEEDFORWARD,
    joints: Iterable[str] | None = None,
    gridpoints: int | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The trajectory's path re-timed time-optimally (rest to rest) by TOPP-RA, sampled every
    `period` s: (t (N,), q, q̇, q̈ (N, n)), ready for `trajectory_efforts`. Arguments as
    `time_scaling.minimal_time_scale`; `gridpoints`: TOPP-RA's stages (default: four per
    `period` of the original trajectory, at least 100, at most 2000). TOPP-RA holds the limits at its grid
    points only: where the sampled result exceeds a limit (by < 0.3 % in the bench), that
    joint's bound is tightened by the excess squared and TOPP-RA runs again (at most 6 times).
    ImportError without toppra; ValueError when no parameterisation exists (e.g. gravity alone
    beyond a limit) or for viscous friction (see module docstring)."""
    toppra = _toppra()
    sampler = TrajectorySampler(times, positions, velocities, accelerations)
    if sampler.nv != model.nv:
        raise RneaError(f"positions must have {model.nv} columns (model order), got {sampler.nv}")
    if sampler.duration <= 0:
        raise RneaError("the trajectory needs at least two points")
    terms = law.compensate
    friction = law.friction_for(model)
    coulomb = np.zeros(model.nv)
    if "friction" in terms and friction is not None:
        if np.any(friction.viscous != 0):
            raise RneaError("friction: TOPP-RA cannot model viscous friction (linear in path speed)")
        static = friction.coulomb if friction.static is None else friction.static  # None: coulomb
        coulomb = np.maximum(friction.coulomb, static)
    tau_lim, v_lim = law.limits(model)
    checked = np.zeros(model.nv, dtype=bool)
    checked[checked_joints(model, joints)] = True
    tau_bound = np.where(checked & np.isfinite(tau_lim), tau_lim, _NO_LIMIT)
    v_bound = np.where(checked & np.isfinite(v_lim), v_lim, _NO_LIMIT)
    count = int(gridpoints or min(_MAX_GRID, max(100, 4 * int(np.ceil(sampler.duration / period)))))
    path = _path(toppra, sampler)
    # TOPP-RA holds the limits at its grid points; at the samples between them they may be
    # exceeded slightly (bench: < 0.3 % with the default grid): then tighten those joints' bounds
    # by the excess squared and solve again.
    tighten_tau, tighten_v = np.ones(model.nv), np.ones(model.nv)
    for _ in range(_ATTEMPTS):
        constraints = [
            toppra.constraint.JointVelocityConstraint(
                np.stack([-v_bound, v_bound], axis=1) * tighten_v[:, None]
            ),
            _torque_constraint(
                toppra, model, law, coulomb, np.stack([-tau_bound, tau_bound], axis=1) * tighten_tau[:, None]
            ),
        ]
        retimed = _solve(toppra, constraints, path, count)
        t = uniform_times(float(retimed.duration), period)
        points = (t, retimed(t), retimed(t, 1), retimed(t, 2))
        tau = trajectory_efforts(model, *points[1:], law)
        with np.errstate(divide="ignore", invalid="ignore"):
            over_tau = np.where(checked, np.max(np.abs(tau), axis=0) / tau_lim, 0.0)
            over_v = np.where(checked, np.max(np.abs(points[2]), axis=0) / v_lim, 0.0)
        if np.all(over_tau <= 1.0) and np.all(over_v <= 1.0):
            return points
        tighten_tau /= np.where(over_tau > 1.0, over_tau**2 * (1 + 1e-4), 1.0)
        tighten_v /= np.where(over_v > 1.0, over_v**2 * (1 + 1e-4), 1.0)
    raise RneaError(
        f"TOPP-RA: limits still exceeded between grid points after {_ATTEMPTS} attempts; try more gridpoints"
    )
