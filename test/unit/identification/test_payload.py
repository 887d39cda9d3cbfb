"""A payload from a body's identified parameters (rnea_ros.identification.payload) against the
model's own `with_payload` (the reference: what the node adds for payload.* parameters), and the
point-mass refit against the truth on noisy data."""

from __future__ import annotations

import numpy as np
from identification_data import trajectory, urdf_model

from rnea_ros.identification.least_squares import Problem, prior_scales
from rnea_ros.identification.payload import payload_in_link, point_mass_fit, point_mass_parameters
from rnea_ros.identification.regressor import body_columns, regressor, standard_parameters

LINK = "tool0"  # UR5: a frame fixed to wrist_3_link, offset and rotated


def added(model, mass, com, inertia) -> tuple[np.ndarray, int]:
    """The 10 standard parameters `with_payload` adds to the body of LINK, and that body."""
    body = model.link_frame(LINK).body
    loaded = model.with_payload(LINK, mass, com, inertia)
    cols = body_columns(model, body)
    return standard_parameters(loaded)[cols] - standard_parameters(model)[cols], body


def test_a_payload_in_its_link_frame_comes_back_as_given() -> None:
    model = urdf_model("ur5")
    frame = model.link_frame(LINK)
    assert np.linalg.norm(frame.translation) > 0 and not np.allclose(frame.rotation, np.eye(3))
    com = np.array([0.02, -0.03, 0.08])
    inertia = np.array([[0.004, 0.0005, 0.0], [0.0005, 0.006, -0.0003], [0.0, -0.0003, 0.003]])
    pi10, _ = added(model, 1.5, com, inertia)
    payload = payload_in_link(model, LINK, pi10, inertia=True)
    assert payload.link == LINK and abs(payload.mass - 1.5) < 1e-12
    np.testing.assert_allclose(payload.com, com, atol=1e-12)
    np.testing.assert_allclose(payload.inertia, inertia, atol=1e-12)
    point = payload_in_link(model, LINK, pi10, inertia=False)
    np.testing.assert_allclose(point.com, com, atol=1e-12)
    np.testing.assert_array_equal(point.inertia, np.zeros((3, 3)))


def test_point_mass_parameters_are_a_payload_without_inertia() -> None:
    model = urdf_model("ur5")
    frame = model.link_frame(LINK)
    com = np.array([0.01, 0.04, -0.02])
    pi10, _ = added(model, 0.7, com, np.zeros((3, 3)))
    np.testing.assert_allclose(
        point_mass_parameters(0.7, frame.rotation @ com + frame.translation), pi10, atol=1e-12
    )


def test_the_point_mass_refit_finds_the_load_within_the_noise() -> None:
    """Efforts of a 1.2 kg point load plus noise: the refit is a point mass (zero inertia about its
    com) with the truth's mass and com within the noise, and fits no worse than the truth."""
    model = urdf_model("ur5")
    mass, com = 1.2, np.array([0.0, 0.05, 0.1])
    pi10, body = added(model, mass, com, np.zeros((3, 3)))
    _, q, qd, qdd = trajectory(model, seed=4, duration=20.0)
    cols = np.arange(body_columns(model, body).start, body_columns(model, body).stop)
    y = regressor(model, q, qd, qdd)[:, :, cols].reshape(-1, cols.size)
    rng = np.random.default_rng(5)
    tau = y @ pi10 + rng.normal(0, 0.05, y.shape[0])
    scale = prior_scales(model, standard_parameters(model))[cols]
    a_full, b_full = y * scale, tau
    r = np.linalg.qr(np.column_stack([a_full, b_full]), mode="r")
    problem = Problem(r[:, :-1], r[:, -1], 0.0, np.full(cols.size, -np.inf), cols, scale)
    linear = np.linalg.lstsq(problem.a, problem.b, rcond=None)[0]
    x = point_mass_fit(problem, linear, body)
    fitted = payload_in_link(model, LINK, x * scale, inertia=True)
    np.testing.assert_allclose(fitted.inertia, np.zeros((3, 3)), atol=1e-9)
    assert abs(fitted.mass - mass) < 0.01 * mass
    assert np.linalg.norm(fitted.com - com) < 0.002
    assert np.sum(problem.residual(x) ** 2) <= np.sum(problem.residual(pi10 / scale) ** 2) * (1 + 1e-9)
