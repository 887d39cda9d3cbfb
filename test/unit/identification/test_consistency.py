"""Physical consistency (rnea_ros.identification.consistency): each condition flagged on its own,
and the pseudo-inertia's positive semi-definiteness saying the same."""

from __future__ import annotations

import numpy as np
from identification_data import urdf_model

from rnea_ros.identification.consistency import consistency, pseudo_inertia
from rnea_ros.identification.regressor import PER_BODY, body_columns, standard_parameters, with_parameters


def test_consistency_flags_each_condition() -> None:
    model = urdf_model("ur5")
    assert all(c.ok for c in consistency(model))
    pi = standard_parameters(model)
    bad_mass, bad_pd, bad_triangle = pi.copy(), pi.copy(), pi.copy()
    bad_mass[body_columns(model, 0).start] = -1.0
    m, h = pi[PER_BODY], pi[PER_BODY + 1 : PER_BODY + 4]
    c = h / m
    shift = m * (c @ c * np.eye(3) - np.outer(c, c))  # inertia about the com = I_o − shift
    for target, moments in ((bad_pd, (-0.01, 0.02, 0.03)), (bad_triangle, (0.01, 0.01, 0.05))):
        i_o = np.diag(moments) + shift
        target[PER_BODY + 4 : 2 * PER_BODY] = [
            i_o[0, 0],
            i_o[0, 1],
            i_o[1, 1],
            i_o[0, 2],
            i_o[1, 2],
            i_o[2, 2],
        ]
    r = consistency(with_parameters(model, bad_mass))
    assert not r[0].mass_ok and all(x.ok for x in r[1:])
    r = consistency(with_parameters(model, bad_pd))
    assert r[1].mass_ok and not r[1].inertia_ok
    np.testing.assert_allclose(r[1].principal_moments, [-0.01, 0.02, 0.03], atol=1e-12)
    r = consistency(with_parameters(model, bad_triangle))
    assert r[1].inertia_ok and not r[1].triangle_ok
    for target in (bad_mass, bad_pd, bad_triangle):  # the pseudo-inertia test says the same
        flags = [
            np.linalg.eigvalsh(pseudo_inertia(target[body_columns(model, b)]))[0] >= 0
            for b in range(model.nv)
        ]
        assert flags == [c.ok for c in consistency(with_parameters(model, target))]
