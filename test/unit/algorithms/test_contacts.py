"""A contact (rnea_ros.algorithms.contacts.Contact): bad descriptions raise ContactError naming the
link; its friction cone against closed forms: a point contact's pyramid has its edges on the
Coulomb cone ‖f_t‖ = μ f_n, and a sole's corner generators are unit-normal forces on the edges of
the μ/√2 pyramid at the rectangle's corners, with their moments about the frame origin."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from rnea_ros.algorithms.contacts import Contact
from rnea_ros.errors import ContactError, RneaError


@pytest.mark.parametrize(
    ("kwargs", "words"),
    [
        ({"mu": 0.0}, "mu must be > 0"),
        ({"mu": -0.5}, "mu must be > 0"),
        ({"kind": "line"}, "kind must be one of"),
        ({"normal": (0.0, 0.0, 0.0)}, "normal must not be zero"),
        ({"normal": (0.0, float("nan"), 1.0)}, "normal must be 3 finite"),
        ({"tangent": (0.0, 0.0, 2.0)}, "tangent must not be along the normal"),
        ({"half_extents": (0.1, 0.05)}, "half_extents apply to '6d'"),
        ({"min_normal_force": -1.0}, "min_normal_force"),
        ({"facets": 2}, "facets"),
    ],
)
def test_contact_errors_name_the_link(kwargs: dict, words: str) -> None:
    with pytest.raises(ContactError, match=f"contact 'LF_FOOT': {words}") as info:
        Contact("LF_FOOT", **kwargs)
    assert info.value.link == "LF_FOOT"
    assert isinstance(info.value, RneaError)


def test_sole_errors() -> None:
    with pytest.raises(ContactError, match="contact 'sole': half_extents must be two sizes > 0"):
        Contact("sole", "6d", half_extents=(0.1, 0.0))


@pytest.mark.parametrize("facets", [3, 4, 7])
def test_the_pyramid_edges_lie_on_the_coulomb_cone(facets: int) -> None:
    normal = np.array([0.3, -0.2, 1.0]) / np.linalg.norm([0.3, -0.2, 1.0])
    contact = Contact("foot", "point", mu=0.6, normal=tuple(normal), facets=facets)
    rows = contact.cone  # P f ≤ 0
    assert rows.shape == (facets, 3)
    for i in range(facets):
        # the edge between facets i and i + 1, scaled to f·n = 1
        edge = np.linalg.solve(np.vstack([rows[i], rows[(i + 1) % facets], normal]), [0.0, 0.0, 1.0])
        tangential = edge - normal
        assert np.linalg.norm(tangential) == pytest.approx(0.6, rel=1e-12)
        assert np.all(rows @ edge <= 1e-12)
    # the normal itself is strictly inside, a force along the surface outside
    assert np.all(rows @ normal < 0) and np.any(rows @ contact.axes[:, 0] > 0)
    assert math.isclose(float(np.linalg.det(contact.axes)), 1.0, rel_tol=1e-12)


def test_the_sole_generators_are_corner_forces_on_the_cone() -> None:
    contact = Contact("sole", "6d", mu=0.8, tangent=(1.0, 0.0, 0.0), half_extents=(0.1, 0.05))
    g = contact.cone
    assert g.shape == (6, 16)
    t1, t2, n = np.eye(3)
    signs = list(itertools.product((1.0, -1.0), repeat=2))
    for c, (sx, sy) in enumerate(signs):
        corner = sx * 0.1 * t1 + sy * 0.05 * t2
        for e, (ex, ey) in enumerate(signs):
            force = n + 0.8 / math.sqrt(2.0) * (ex * t1 + ey * t2)
            column = g[:, 4 * c + e]
            np.testing.assert_allclose(column[:3], force, atol=1e-15)
            np.testing.assert_allclose(column[3:], np.cross(corner, force), atol=1e-15)
            assert np.linalg.norm(force[:2]) == pytest.approx(0.8, rel=1e-12)  # on the Coulomb cone
