"""The pseudo-inertia refit: when the linear fit leaves a body physically inconsistent, every free
body is refitted with its pseudo-inertia J = U Uᵀ (U upper triangular with a positive diagonal,
Rucker and Wensing 2022), consistent by construction; nonlinear least squares on the same
reduced, whitened and regularised problem (`least_squares.Problem`).
"""

from __future__ import annotations

import numpy as np
from scipy import optimize

from rnea_ros.identification.consistency import from_pseudo, pseudo_inertia
from rnea_ros.identification.least_squares import Problem
from rnea_ros.identification.regressor import PER_BODY, body_columns, body_links
from rnea_ros.model.robot_model import RobotModel

_TRIU = np.triu_indices(4)
_THETA_MAX = 30.0  # |log| of U's diagonal: keeps trial steps of the refit finite
_DIAG = np.flatnonzero(_TRIU[0] == _TRIU[1])


def _pi_of_theta(theta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Standard parameters of the body with pseudo-inertia J = U Uᵀ, U upper triangular with
    diagonal exp(θ_diag) (every θ ∈ R¹⁰ is a physical body, Rucker and Wensing 2022), and their
    (10, 10) derivative by θ. `_theta_of_pseudo` inverts it for J ≻ 0."""
    u = np.zeros((4, 4))
    t = theta.copy()
    t[_DIAG] = np.exp(np.clip(t[_DIAG], -_THETA_MAX, _THETA_MAX))
    u[_TRIU] = t
    jac = np.empty((PER_BODY, PER_BODY))
    for k, (r, c) in enumerate(zip(*_TRIU, strict=True)):
        du = np.zeros((4, 4))
        du[r, c] = t[k] if r == c else 1.0
        d_j = du @ u.T
        jac[:, k] = from_pseudo(d_j + d_j.T)
    return from_pseudo(u @ u.T), jac


def _theta_of_pseudo(j: np.ndarray) -> np.ndarray:
    flip = j[::-1, ::-1]
    u = np.linalg.cholesky(flip)[::-1, ::-1]  # J = U Uᵀ with U upper triangular
    theta = u[_TRIU].copy()
    theta[_DIAG] = np.log(theta[_DIAG])
    return theta


def physical_fit(
    model: RobotModel, problem: Problem, x: np.ndarray, pi0: np.ndarray
) -> tuple[np.ndarray, list[str]]:
    """Refit with every free body physically consistent: each body's pseudo-inertia is U Uᵀ
    (smooth, unconstrained in θ), the other free parameters stay linear with their bounds;
    nonlinear least squares on the reduced problem from the unconstrained fit with its bodies'
    pseudo-inertias clipped to positive definite. Returns the scaled free parameters and the
    bodies that were inconsistent; x unchanged when every body already is consistent. x: the
    unconstrained fit of `problem`; pi0: the prior (π of `model`)."""
    cols, scale, lower, lam = problem.cols, problem.scale, problem.lower, problem.lam
    n = model.nv
    links = body_links(model)
    bodies = [
        bd for bd in range(n) if np.all(np.isin(np.arange(*body_columns(model, bd).indices(10 * n)), cols))
    ]
    pi = pi0.copy()
    pi[cols] += x * scale
    bad = []
    thetas = []
    for bd in bodies:
        j = pseudo_inertia(pi[body_columns(model, bd)])
        w, v = np.linalg.eigh(j)
        tol = 1e-9 * max(1.0, float(np.abs(w).max()))
        if w[0] < -tol or (w[0] <= tol and np.any(j)):
            bad.append(bd)
        floor = 1e-6 * max(float(w.max()), 1e-12)
        thetas.append(_theta_of_pseudo(v @ np.diag(np.maximum(w, floor)) @ v.T))
    if not bad:
        return x, []
    body_pos = [np.searchsorted(cols, PER_BODY * bd) + np.arange(PER_BODY) for bd in bodies]
    linear = np.setdiff1d(np.arange(cols.size), np.concatenate(body_pos))
    k = len(bodies) * PER_BODY

    def unpack(z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """x(z) and dx/dz."""
        out = np.empty(cols.size)
        jac = np.zeros((cols.size, z.size))
        for i, pos in enumerate(body_pos):
            pi10, d_pi = _pi_of_theta(z[PER_BODY * i : PER_BODY * (i + 1)])
            out[pos] = (pi10 - pi0[cols[pos]]) / scale[pos]
            jac[pos, PER_BODY * i : PER_BODY * (i + 1)] = d_pi / scale[pos][:, None]
        out[linear] = z[k:]
        jac[linear, k + np.arange(linear.size)] = 1.0
        return out, jac

    stacked = np.vstack([problem.a, lam * np.eye(cols.size)])
    target = np.concatenate([problem.b, np.zeros(cols.size)])

    def residual(z: np.ndarray) -> np.ndarray:
        return stacked @ unpack(z)[0] - target

    def jacobian(z: np.ndarray) -> np.ndarray:
        return stacked @ unpack(z)[1]

    z0 = np.concatenate([*thetas, np.maximum(x[linear], lower[linear])])
    lo = np.concatenate([np.full(k, -np.inf), lower[linear]])
    res = optimize.least_squares(
        residual, z0, jac=jacobian, bounds=(lo, np.inf), x_scale="jac", xtol=1e-10, ftol=1e-10, max_nfev=200
    )
    return unpack(res.x)[0], [links[bd] for bd in bad]
