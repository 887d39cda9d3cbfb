"""Base parameters (rnea_ros.identification.identifiability) against Khalil's closed-form count on
a planar 2R arm and the null-space identity Y N = 0 on states not used to find them; the
conditioning of what the data excites against the singular values of a matrix built for it."""

from __future__ import annotations

import numpy as np
import pytest
from identification_data import urdf_model

from rnea_ros.identification.identifiability import base_parameters, conditioning
from rnea_ros.identification.regressor import parameter_count, regressor


def test_base_parameters_closed_form_count_and_null_space() -> None:
    """Planar 2R (double pendulum, gravity in the plane): Khalil's regrouping leaves ZZ1R, MX1R, MY1R,
    ZZ2, MX2, MY2 and armature 2 (armature 1 joins ZZ1R): 7 inertial + 4 friction = 11."""
    model = urdf_model("double_pendulum")
    basis = base_parameters(model)
    assert basis.rank == 11
    for name in ("UR5", "Panda"):
        m = urdf_model(name.lower())
        b = base_parameters(m)
        # moving π along any dependent direction changes no torque, on states not used to find them
        rng = np.random.default_rng(7)
        q, qd, qdd = (rng.normal(0, 1, (30, m.nv)) for _ in range(3))
        y = regressor(m, q, qd, qdd).reshape(-1, parameter_count(m))
        null = np.zeros((parameter_count(m), b.dependent.size))
        null[b.dependent, np.arange(b.dependent.size)] = 1.0
        null[b.independent] = -b.K
        assert np.max(np.abs(y @ null)) < 1e-9 * np.max(np.abs(y))
        assert np.linalg.matrix_rank(y[:, b.independent]) == b.rank


def test_conditioning_names_what_the_data_leaves_out() -> None:
    """Columns with singular values 10 and 0.1 (orthogonal), a zero column (a joint that never
    moves) and a copy of the first: cond 100 over the excited ones, the other two named."""
    rng = np.random.default_rng(0)
    u = np.linalg.qr(rng.normal(size=(20, 2)))[0]
    a = np.column_stack([10.0 * u[:, 0], np.zeros(20), 0.1 * u[:, 1], 10.0 * u[:, 0]])
    cond, unexcited = conditioning(a, ["m1", "fv2", "zz1", "m1 again"])
    assert cond == pytest.approx(100.0, rel=1e-12)
    assert sorted(unexcited) == ["fv2", "m1 again"] or sorted(unexcited) == ["fv2", "m1"]
    assert conditioning(np.zeros((5, 2)), ["a", "b"]) == (float("inf"), ["a", "b"])
