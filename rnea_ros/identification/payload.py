"""A payload identified on one link: its body's 10 standard parameters as a point mass (mass and
centre of mass, nonlinear least squares on the reduced problem) or with an inertia (linear), and
the identified model written as the bare robot plus that payload.
"""

from __future__ import annotations

import numpy as np
from scipy import optimize

from rnea_ros.identification.consistency import about_com, inertia_matrix
from rnea_ros.identification.least_squares import Problem
from rnea_ros.identification.regressor import PER_BODY, body_columns, standard_parameters, with_parameters
from rnea_ros.model.robot_model import Payload, RobotModel


def point_mass_parameters(m: float, c: np.ndarray) -> np.ndarray:
    """Standard parameters of a point mass m at c (body frame)."""
    i_o = m * (float(c @ c) * np.eye(3) - np.outer(c, c))
    return np.array([m, *(m * c), i_o[0, 0], i_o[0, 1], i_o[1, 1], i_o[0, 2], i_o[1, 2], i_o[2, 2]])


def payload_in_link(model: RobotModel, link: str, pi10: np.ndarray, inertia: bool) -> Payload:
    """A body-frame payload (10 standard parameters) as mass, com and inertia about it in the link
    frame; without `inertia` its inertia is zero (a point mass)."""
    frame = model.link_frame(link)
    m = float(pi10[0])
    c, i_c = about_com(m, pi10[1:4], inertia_matrix(pi10[4:]))
    com = frame.rotation.T @ (c - frame.translation)
    i_link = frame.rotation.T @ i_c @ frame.rotation if inertia else np.zeros((3, 3))
    return Payload(link, m, com, 0.5 * (i_link + i_link.T))


def with_payload_record(
    identified: RobotModel, model: RobotModel, payload: Payload, pi: np.ndarray, body: int
) -> RobotModel:
    """The identified model as the model's bare robot with `payload` attached (same dynamics when
    the payload is kept as identified; the point-mass or inertia choice is already in pi)."""
    mask = np.zeros(pi.size, dtype=bool)
    mask[body_columns(model, body)] = True
    bare = with_parameters(model, np.where(mask, standard_parameters(model), pi))
    if payload.mass <= 0:
        return identified
    try:
        return bare.with_payload(payload.link, payload.mass, payload.com, payload.inertia)
    except ValueError:  # non-physical identified inertia: keep the raw parameters
        return identified


def point_mass_fit(problem: Problem, x0: np.ndarray, body: int) -> np.ndarray:
    """Refit `problem` from its solution x0 with the payload on `body` as a point mass: its 10
    columns are f(m, c), the others linear (with their bounds); m ≥ 0."""
    cols, scale = problem.cols, problem.scale
    start = int(np.searchsorted(cols, PER_BODY * body))
    pay = np.arange(start, start + PER_BODY)
    other = np.setdiff1d(np.arange(cols.size), pay)
    s_pay = scale[pay]
    m0 = x0[pay[0]] * s_pay[0]
    c0 = x0[pay[1:4]] * s_pay[1:4] / m0 if m0 > 0 else np.zeros(3)
    m0 = max(m0, 1e-6)

    def unpack(z: np.ndarray) -> np.ndarray:
        x = np.empty(cols.size)
        x[other] = z[: other.size]
        x[pay] = point_mass_parameters(z[other.size], z[other.size + 1 :]) / s_pay
        return x

    def residual(z: np.ndarray) -> np.ndarray:
        return problem.residual(unpack(z))

    z0 = np.concatenate([x0[other], [m0], c0])
    lo = np.concatenate([problem.lower[other], [0.0], np.full(3, -np.inf)])
    z0 = np.maximum(z0, np.where(np.isfinite(lo), lo, -np.inf))
    res = optimize.least_squares(residual, z0, bounds=(lo, np.inf), xtol=1e-15, ftol=1e-15, gtol=1e-15)
    return unpack(res.x)
