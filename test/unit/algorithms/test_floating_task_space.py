"""Task space, constrained dynamics and the regressor with a floating or planar root, against
Pinocchio (J̇ q̇ as the classical acceleration at a = 0, J M⁻¹ Jᵀ) and physics identities
(constrained accelerations keep the contact still; Y π = rnea), on every URDF of
example-robot-data that Pinocchio loads."""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest
from floating_reference import IDS, LOADABLE, FloatingRef, relerr

from rnea_ros import (
    constrained_forward_dynamics,
    jacobian,
    jacobian_dot_qd,
    link_constraint,
    mass_matrix,
    rnea,
    task_space_inertia_inverse,
)
from rnea_ros.identification.regressor import parameter_count, regressor, standard_parameters, with_parameters


@pytest.mark.parametrize("root_joint", ["floating", "planar"])
@pytest.mark.parametrize("path", LOADABLE, ids=IDS)
def test_task_space_constraints_and_regressor_with_a_moving_root(path, root_joint: str) -> None:
    ref = FloatingRef(path, root_joint)
    model = ref.model
    link = model.link_names[-1]
    rng = np.random.default_rng(model.nv + 7)
    q, v, a = ref.random_state(rng)
    # J̇ q̇: Pinocchio's classical acceleration of the link origin at a = 0 (world axes)
    pq = ref.q(q)
    pin.forwardKinematics(ref.pin, ref.data, pq, ref.v(v), np.zeros(ref.pin.nv))
    pin.updateFramePlacements(ref.pin, ref.data)
    acc = pin.getFrameClassicalAcceleration(
        ref.pin, ref.data, ref.pin.getFrameId(link), pin.LOCAL_WORLD_ALIGNED
    )
    assert relerr(jacobian_dot_qd(model, q, v, link), np.concatenate([acc.linear, acc.angular])) <= 1e-9
    # Λ⁻¹ = J M⁻¹ Jᵀ with Pinocchio's J and M
    m = ref.mass(q)
    if np.linalg.cond(m) < 1e8:
        jac = ref.jacobian(q, link)
        assert relerr(task_space_inertia_inverse(model, q, link), jac @ np.linalg.solve(m, jac.T)) <= 1e-8
        # holding the link still (free flyer: 6 constraints; planar: x and y of its origin, which
        # the base always moves): its classical acceleration J q̈ + J̇ q̇ vanishes
        directions = np.eye(6) if root_joint == "floating" else np.eye(3)[:2]
        am, adq = link_constraint(model, q, v, link, directions)
        qdd, _ = constrained_forward_dynamics(model, q, v, rng.normal(0, 5, model.nv), am, adot_qd=adq)
        assert np.max(np.abs(am @ qdd + adq)) <= 1e-7 * max(1.0, np.max(np.abs(adq)))
    # the regressor: Y π = rnea, the base body's parameters included
    gravity = rng.normal(0, 6, 3)
    pi = standard_parameters(model)
    assert pi.shape == (parameter_count(model),) == (10 * (model.njoints + 1) + 3 * model.njoints,)
    y = regressor(model, q, v, a, gravity=gravity, coulomb="sign")
    friction = np.zeros(model.nv)
    friction[model.root_nv :] = model.damping * v[model.root_nv :] + model.coulomb * np.sign(
        v[model.root_nv :]
    )
    assert relerr(y @ pi, rnea(model, q, v, a, gravity=gravity) + friction) <= 1e-9
    # and with_parameters inverts standard_parameters (the base's included)
    scaled = with_parameters(model, 2.0 * pi)
    assert relerr(mass_matrix(scaled, q), 2.0 * mass_matrix(model, q)) <= 1e-9
    assert np.array_equal(jacobian(scaled, q, link), jacobian(model, q, link))
