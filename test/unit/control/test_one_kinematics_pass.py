"""The one effort law: its vocabulary, its value, and the node's cycle (one kinematics pass per
configuration) against the per-term kernels and Pinocchio."""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest
from robot_files import urdf_text

from rnea_ros.algorithms.dynamics import GRAVITY, wrench_arrays
from rnea_ros.compiled.kernels.cycle import OPT_SIZE, OPT_TERMS, OUT_ROWS, model_terms
from rnea_ros.compiled.kernels.fixed_root import gravity_kernel, rnea_kernel, rnea_wrench_kernel
from rnea_ros.compiled.kernels.layout import OK, WS_STRIDE
from rnea_ros.compiled.kernels.passes import joint_transforms
from rnea_ros.control.effort_law import EffortLaw, Efforts, compute_efforts
from rnea_ros.control.terms import COMPENSABLE, TERMS, compensable_terms
from rnea_ros.errors import RneaError
from rnea_ros.friction.model import Friction
from rnea_ros.model.example_robots import example_urdf_path
from rnea_ros.model.robot_model import RobotModel


def test_terms_are_named_and_checked() -> None:
    assert TERMS[:5] == COMPENSABLE and TERMS[5] == "feedback"
    assert compensable_terms("gravity") == frozenset({"gravity"})
    with pytest.raises(RneaError, match=r"unknown terms \['magic'\]"):
        compensable_terms(["gravity", "magic"])
    with pytest.raises(RneaError, match="magic"):
        EffortLaw(compensate=frozenset({"magic"}))


def test_limits_scale_the_models_or_the_laws_own() -> None:
    model = RobotModel.from_urdf(urdf_text("ur5"))
    effort, velocity = EffortLaw(effort_limit_scale=0.5).limits(model)
    np.testing.assert_array_equal(effort, 0.5 * model.effort_limit)
    np.testing.assert_array_equal(velocity, model.velocity_limit)
    effort, velocity = EffortLaw(
        effort_limit=10.0, velocity_limit=np.arange(6.0), effort_limit_scale=2.0
    ).limits(model)
    np.testing.assert_array_equal(effort, np.full(6, 20.0))
    np.testing.assert_array_equal(velocity, np.arange(6.0))
    with pytest.raises(RneaError, match="effort_limit must be >= 0"):
        EffortLaw(effort_limit=-1.0).limits(model)
    with pytest.raises(RneaError, match="friction must have 6 joints"):
        Efforts(model, EffortLaw(friction=Friction(np.zeros(2), np.zeros(2))))


@pytest.mark.parametrize("name", ["panda", "ur5"])
def test_one_pass_terms_equal_the_per_term_kernels_bitwise(name: str) -> None:
    """model_terms after one joint_transforms gives exactly what gravity_kernel, rnea_kernel and
    rnea_wrench_kernel give, each with its own transforms."""
    model = RobotModel.from_urdf(urdf_text(name))
    n, tree = model.nv, model.kernel_tree()
    rng = np.random.default_rng(3)
    link = {"panda": "panda_hand", "ur5": "tool0"}[name]
    wb, wd = wrench_arrays(model, {link: rng.normal(size=6)})
    gravity = np.array(GRAVITY)
    options = np.zeros(OPT_SIZE)
    options[OPT_TERMS : OPT_TERMS + 5] = 1.0  # every term
    for _ in range(5):
        q, qd, qdd = rng.normal(size=(3, n))
        ws = np.zeros(n * WS_STRIDE)
        out = np.zeros((OUT_ROWS, n))
        joint_transforms(tree, q, ws)
        model_terms(tree, qd, qdd, gravity, options, wb, wd, ws, out)
        ref = np.zeros((5, n))
        ws2 = np.zeros(n * WS_STRIDE)
        zero, none3 = np.zeros(n), np.zeros(3)
        assert gravity_kernel(tree, q, gravity.copy(), ws2, ref[0]) == OK
        assert rnea_kernel(tree, q, qd, zero, none3, ws2, ref[1]) == OK
        assert rnea_kernel(tree, q, zero, qdd, none3, ws2, ref[2]) == OK
        assert rnea_wrench_kernel(tree, q, zero, zero, none3, wb, wd, ws2, ref[4]) == OK
        for row in (0, 1, 2, 4):
            assert np.array_equal(out[row], ref[row]), (row, out[row] - ref[row])


def test_the_cycle_equals_pinocchio_term_by_term() -> None:
    """compute_efforts (one kinematics pass at q) against pin.computeAllTerms' g, C q̇ and M."""
    urdf = example_urdf_path("panda")
    model = RobotModel.from_urdf(urdf.read_text())
    pmodel = pin.buildModelFromUrdf(str(urdf))
    pdata = pmodel.createData()
    n = model.nv
    rng = np.random.default_rng(5)
    law = EffortLaw(compensate=frozenset({"gravity", "coriolis", "inertia"}), effort_limit_scale=1e9)
    efforts = Efforts(model, law)
    for _ in range(5):
        q, qd, qdd = rng.normal(size=(3, n))
        compute_efforts(efforts, q, qd, (q, qd, qdd))
        pin.computeAllTerms(pmodel, pdata, q, qd)
        m = np.triu(pdata.M) + np.triu(pdata.M, 1).T
        terms = efforts.terms
        np.testing.assert_allclose(terms["gravity"], pdata.g, atol=1e-9)
        np.testing.assert_allclose(terms["coriolis"], pdata.nle - pdata.g, atol=1e-9)
        np.testing.assert_allclose(terms["inertia"], m @ qdd, atol=1e-9)
        np.testing.assert_allclose(efforts.total, pdata.nle + m @ qdd, atol=1e-9)
