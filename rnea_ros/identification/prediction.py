"""Efforts as the fit (`fit.identify`) models them, Y π with the Coulomb column tanh(q̇ / v_ε)
low-passed like the efforts, and the held-out torque RMS of a parameter vector. Computed in chunks
of the samples, so that long recordings fit in memory.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from rnea_ros.algorithms.dynamics import GRAVITY
from rnea_ros.friction.model import SMOOTHING_VELOCITY
from rnea_ros.identification.regressor import joint_columns, regressor
from rnea_ros.identification.signals import Samples, lowpass
from rnea_ros.model.robot_model import RobotModel

CHUNK_FLOATS = 2_000_000  # regressor entries per chunk


def coulomb_sign(samples: Samples, smoothing_velocity: float) -> np.ndarray:
    """tanh(q̇ / v_ε) (N, n), low-passed like the efforts when they were: the Coulomb term jumps at
    velocity reversals, and filtering the efforts smooths the jump, so the column must be too."""
    sign = np.tanh(samples.qd / smoothing_velocity)
    return sign if samples.cutoff is None else lowpass(samples.t, sign, samples.cutoff)


def fit_regressor(
    model: RobotModel, part: Samples, sign: np.ndarray, gravity: npt.ArrayLike, smoothing_velocity: float
) -> np.ndarray:
    """Y (N, n, p) at `part` with its Coulomb columns replaced by `sign` (`coulomb_sign` of these
    samples)."""
    y = regressor(model, part.q, part.qd, part.qdd, gravity=gravity, smoothing_velocity=smoothing_velocity)
    cols = joint_columns(model, "coulomb")
    y[:, np.arange(model.nv), np.arange(cols.start, cols.stop)] = sign
    return y


def predict(
    model: RobotModel,
    samples: Samples,
    pi: npt.ArrayLike,
    *,
    gravity: npt.ArrayLike = GRAVITY,
    smoothing_velocity: float = SMOOTHING_VELOCITY,
) -> np.ndarray:
    """Efforts Y π (N, n) at `samples` as `identify` models them: the Coulomb columns tanh(q̇ / v_ε)
    are low-passed like the efforts (`samples.cutoff`). Computed in chunks."""
    pi = np.asarray(pi, dtype=float)
    sign = coulomb_sign(samples, smoothing_velocity)
    out = np.empty(samples.q.shape)
    chunk = max(1, CHUNK_FLOATS // (model.nv * pi.size))
    for start in range(0, len(samples), chunk):
        part = samples.part(slice(start, start + chunk))
        y = fit_regressor(model, part, sign[start : start + len(part)], gravity, smoothing_velocity)
        out[start : start + len(part)] = y @ pi
    return out


def held_out_rms(
    model: RobotModel,
    samples: Samples,
    pi: npt.ArrayLike,
    start: int,
    *,
    min_speed: float = 0.0,
    gravity: npt.ArrayLike = GRAVITY,
    smoothing_velocity: float = SMOOTHING_VELOCITY,
) -> tuple[np.ndarray, np.ndarray]:
    """Per joint, the RMS of measured − `predict`ed efforts over the samples from `start` on
    (every sample, and those where the joint moves at ≥ `min_speed`), predicted over the whole
    recording as `identify` validates (so that the Coulomb column's filter sees what it saw)."""
    residual = (
        samples.tau - predict(model, samples, pi, gravity=gravity, smoothing_velocity=smoothing_velocity)
    )[start:]
    fast = np.abs(samples.qd[start:]) >= min_speed
    every = np.sqrt(np.mean(residual**2, axis=0))
    moving = np.sqrt(np.where(fast, residual**2, 0.0).sum(axis=0) / np.maximum(fast.sum(axis=0), 1))
    return every, moving
