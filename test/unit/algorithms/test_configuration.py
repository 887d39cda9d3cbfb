"""integrate / difference / neutral / base_placement on floating and planar roots against
Pinocchio's, on every URDF of example-robot-data that Pinocchio loads."""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest
from floating_reference import IDS, LOADABLE, FloatingRef, relerr

from rnea_ros import RneaError, base_placement, difference, integrate, link_pose, neutral


def _same_angles(a: np.ndarray, b: np.ndarray) -> float:
    """Largest difference of joint angles modulo 2π (continuous joints come back in (-π, π])."""
    return float(np.max(np.abs(np.angle(np.exp(1j * (a - b)))), initial=0.0))


@pytest.mark.parametrize("root_joint", ["floating", "planar"])
@pytest.mark.parametrize("path", LOADABLE, ids=IDS)
def test_integrate_and_difference_match_pinocchio(path, root_joint: str) -> None:
    ref = FloatingRef(path, root_joint)
    model = ref.model
    nq0 = model.root_nq
    rng = np.random.default_rng(model.nq)
    q0 = neutral(model)
    assert np.array_equal(ref.q(q0), pin.neutral(ref.pin))
    for _ in range(3):
        q, v, _ = ref.random_state(rng)
        dt = rng.uniform(0.01, 0.7)
        # integrate: q ⊕ v dt
        ours = integrate(model, q, v, dt)
        theirs = ref.q_from_pin(pin.integrate(ref.pin, ref.q(q), ref.v(v) * dt))
        assert relerr(ours[:nq0], theirs[:nq0]) <= 1e-9
        assert _same_angles(ours[nq0:], theirs[nq0:]) <= 1e-9
        orientation = ours[3:7] if root_joint == "floating" else ours[2:4]
        assert abs(np.linalg.norm(orientation) - 1.0) <= 1e-14
        # difference: q1 ⊖ q, and integrate(q, difference(q, q1)) = q1
        q1, _, _ = ref.random_state(rng)
        d = difference(model, q, q1)
        expected = pin.difference(ref.pin, ref.q(q), ref.q(q1))[ref.vidx]
        assert relerr(d[: model.root_nv], expected[: model.root_nv]) <= 1e-9
        back = integrate(model, q, d)[:nq0]
        if root_joint == "floating" and back[3:7] @ q1[3:7] < 0:
            back[3:7] *= -1.0  # the same rotation: q and −q
        assert np.allclose(back, q1[:nq0], rtol=0, atol=1e-9)
        # the base placement is the root link's pose
        rot, origin = base_placement(model, q)
        link_rot, link_origin = link_pose(model, q, model.root_link)
        assert relerr(rot, link_rot) <= 1e-12 and relerr(origin, link_origin) <= 1e-12


def test_integrate_rejects_non_unit_orientations_and_wrong_sizes() -> None:
    model = FloatingRef(LOADABLE[0], "floating").model
    q = neutral(model)
    q[3:7] = (0.0, 0.0, 0.0, 1.1)
    with pytest.raises(RneaError, match=r"q\[3:7\] \(the base quaternion\) must have unit norm"):
        integrate(model, q, np.zeros(model.nv))
    with pytest.raises(RneaError, match=rf"v must be {model.nv} finite numbers"):
        integrate(model, neutral(model), np.zeros(model.nq))
