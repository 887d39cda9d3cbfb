"""The pseudo-inertia refit (rnea_ros.identification.physical_fit) against a closed form: when the
data measure a body's pseudo-inertia J entry by entry (||a x − b|| = ||J(π) − J_target||_F), the
best physically consistent body is the projection of J_target onto the positive semi-definite
cone, its negative eigenvalues set to 0."""

from __future__ import annotations

import numpy as np
from identification_data import urdf_model

from rnea_ros.identification.consistency import pseudo_inertia
from rnea_ros.identification.least_squares import Problem
from rnea_ros.identification.physical_fit import physical_fit
from rnea_ros.identification.regressor import PER_BODY, body_links, standard_parameters


def pseudo_map() -> np.ndarray:
    """(16, 10): vec(J) of a body's standard parameters (J is linear in them)."""
    return np.column_stack([pseudo_inertia(e).reshape(-1) for e in np.eye(PER_BODY)])


def test_an_inconsistent_body_goes_to_the_nearest_consistent_one() -> None:
    model = urdf_model("double_pendulum")
    pi0 = standard_parameters(model)
    cols = np.arange(PER_BODY)  # body 0 is free, the rest held
    j0 = pseudo_inertia(pi0[cols])
    rng = np.random.default_rng(3)
    v = np.linalg.qr(rng.normal(size=(4, 4)))[0]
    w = np.linalg.eigvalsh(j0)
    target = v @ np.diag([-0.3 * w.max(), 0.2 * w.max(), 0.5 * w.max(), w.max()]) @ v.T  # one negative
    scale = np.abs(pi0[cols]) + 0.1
    m = pseudo_map()
    a = m * scale  # x = δ / s
    b = target.reshape(-1) - m @ pi0[cols]
    x0 = np.linalg.lstsq(a, b, rcond=None)[0]  # the unconstrained fit: J(π) = target exactly
    np.testing.assert_allclose(pseudo_inertia(pi0[cols] + x0 * scale), target, atol=1e-12)
    problem = Problem(a, b, 0.0, np.full(PER_BODY, -np.inf), cols, scale)
    x, moved = physical_fit(model, problem, x0, pi0)
    assert moved == [body_links(model)[0]]
    j = pseudo_inertia(pi0[cols] + x * scale)
    w_t, v_t = np.linalg.eigh(target)
    nearest = v_t @ np.diag(np.maximum(w_t, 0.0)) @ v_t.T
    assert np.linalg.eigvalsh(j)[0] >= -1e-12 * w.max()
    assert np.linalg.norm(j - nearest) < 1e-5 * np.linalg.norm(nearest)
    # the distance to the target is the clipped eigenvalue's, to the same relative precision
    assert np.linalg.norm(j - target) < (1 + 1e-6) * 0.3 * w.max()


def test_a_consistent_fit_is_left_as_it_is() -> None:
    model = urdf_model("double_pendulum")
    pi0 = standard_parameters(model)
    cols = np.arange(PER_BODY)
    m = pseudo_map()
    scale = np.ones(PER_BODY)
    x0 = 0.05 * pi0[cols]  # a 5 % heavier body 0, still physical
    b = m @ (x0 * scale)
    x, moved = physical_fit(model, Problem(m, b, 0.0, np.full(PER_BODY, -np.inf), cols, scale), x0, pi0)
    assert moved == [] and x is x0
