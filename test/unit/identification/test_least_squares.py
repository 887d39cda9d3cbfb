"""The fit's linear algebra (rnea_ros.identification.least_squares) against dense references: the
chunked per-joint QR reduction against the stacked rows themselves, the ridge solution against its
normal equations, the bounded one against the optimality (KKT) conditions, the prior's scales
against their definition."""

from __future__ import annotations

import numpy as np
import pytest
from identification_data import urdf_model

from rnea_ros.identification.least_squares import LENGTH_SCALE, Problem, Reduced, prior_scales
from rnea_ros.identification.regressor import PER_BODY, standard_parameters


def test_the_reduction_keeps_every_weighted_residual() -> None:
    rng = np.random.default_rng(0)
    n, width, count = 3, 5, 400
    y = rng.normal(size=(count, n, width))
    rhs = rng.normal(size=(count, n))
    keep = rng.random((count, n)) > 0.3  # rows that count, per joint
    reduced = Reduced(n, width)
    for part in np.array_split(np.arange(count), 4):  # in chunks, as the fit adds them
        reduced.add(y[part] * keep[part, :, None], rhs[part] * keep[part], keep[part].sum(axis=0))
    np.testing.assert_array_equal(reduced.rows, keep.sum(axis=0))
    weights = np.array([0.5, 2.0, 1.3])
    a, b = reduced.stacked(weights)
    for x in rng.normal(size=(5, width)):
        per_joint = [np.sum((y[keep[:, j], j] @ x - rhs[keep[:, j], j]) ** 2) for j in range(n)]
        assert np.sum((a @ x - b) ** 2) == pytest.approx(np.dot(weights**2, per_joint), rel=1e-10)
        rms = np.sqrt(np.array(per_joint) / keep.sum(axis=0))
        np.testing.assert_allclose(reduced.residual(x), rms, rtol=1e-10)


def test_the_ridge_solution_solves_its_normal_equations() -> None:
    rng = np.random.default_rng(1)
    a, b = rng.normal(size=(30, 6)), rng.normal(size=30)
    for lam in (0.0, 0.3, 5.0):
        x = Problem(a, b, lam, np.full(6, -np.inf), np.arange(6), np.ones(6)).solve()
        np.testing.assert_allclose(x, np.linalg.solve(a.T @ a + lam**2 * np.eye(6), a.T @ b), rtol=1e-10)


def test_a_bounded_solution_meets_the_kkt_conditions() -> None:
    rng = np.random.default_rng(2)
    a, b = rng.normal(size=(40, 8)), rng.normal(size=40)
    lam = 0.2
    free = np.linalg.solve(a.T @ a + lam**2 * np.eye(8), a.T @ b)
    lower = np.where(np.arange(8) % 2 == 0, free + 0.1, -np.inf)  # every other bound cuts the free optimum
    problem = Problem(a, b, lam, lower, np.arange(8), np.ones(8))
    x = problem.solve()
    gradient = a.T @ (a @ x - b) + lam**2 * x
    assert np.all(x >= lower - 1e-12)
    at_bound = np.isclose(x, lower, rtol=0, atol=1e-10)
    assert at_bound.any()
    scale = np.abs(a.T @ b).max()
    assert np.all(np.abs(gradient[~at_bound]) < 1e-9 * scale)  # stationary where free
    assert np.all(gradient[at_bound] > -1e-9 * scale)  # pushing against the bound
    objective = np.sum(problem.residual(x) ** 2)
    assert objective <= np.sum(problem.residual(np.maximum(free, lower)) ** 2) + 1e-12


def test_prior_scales_follow_the_body_masses() -> None:
    model = urdf_model("ur5")
    pi0 = standard_parameters(model)
    n = model.nv
    s = prior_scales(model, pi0)
    masses = pi0[: PER_BODY * n : PER_BODY]
    mean = masses[masses > 0].mean()
    body = np.maximum(masses, 0.05 * mean)
    blocks = s[: PER_BODY * n].reshape(n, PER_BODY)
    np.testing.assert_allclose(blocks[:, 0], body)
    np.testing.assert_allclose(blocks[:, 1:4], np.outer(body, np.ones(3)) * LENGTH_SCALE)
    np.testing.assert_allclose(blocks[:, 4:], np.outer(body, np.ones(6)) * LENGTH_SCALE**2)
    np.testing.assert_allclose(
        s[PER_BODY * n :], np.concatenate([np.ones(2 * n), np.full(n, mean * LENGTH_SCALE**2)])
    )
