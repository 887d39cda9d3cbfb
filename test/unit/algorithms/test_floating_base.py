"""Floating (free-flyer) and planar roots against Pinocchio's JointModelFreeFlyer and
JointModelPlanar, on every URDF of example-robot-data that Pinocchio loads (found by walking the
package): τ with random states, gravity and link wrenches, M, nle, g, forward dynamics, a link's
Jacobian and pose, to 1e-9 relative. Plus the layout, the URDF's own floating / planar root joint,
and the errors."""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest
from floating_reference import IDS, LOADABLE, FloatingRef, relerr

from rnea_ros import (
    RneaError,
    RobotModel,
    URDFError,
    forward_dynamics,
    gravity_torques,
    jacobian,
    link_pose,
    mass_matrix,
    nonlinear_effects,
    rnea,
)
from rnea_ros.model.example_robots import example_urdf_path

RTOL = 1e-9


def test_the_walk_covers_the_package() -> None:
    assert len(LOADABLE) >= 60


def _links(model: RobotModel) -> list[str]:
    """The links the checks use: the last link of the model (a tip), one in the middle, and the
    root link (on the base)."""
    names = model.link_names
    return list(dict.fromkeys([names[-1], names[len(names) // 2], model.root_link]))


@pytest.mark.parametrize("root_joint", ["floating", "planar"])
@pytest.mark.parametrize("path", LOADABLE, ids=IDS)
def test_every_robot_matches_pinocchio_with_a_moving_root(path, root_joint: str) -> None:
    ref = FloatingRef(path, root_joint)
    model = ref.model
    assert (model.nq, model.nv) == (model.njoints + model.root_nq, model.njoints + model.root_nv)
    assert (model.root_nq, model.root_nv) == ((7, 6) if root_joint == "floating" else (4, 3))
    rng = np.random.default_rng(model.nv)
    links = _links(model)
    for _ in range(3):
        q, v, a = ref.random_state(rng)
        gravity = rng.normal(0, 6, 3)
        wrenches = {link: rng.normal(0, 5, 6) for link in links}
        # τ without and with link wrenches (on a tip, a middle link and the base)
        assert relerr(rnea(model, q, v, a, gravity=gravity), ref.rnea(q, v, a, gravity, {})) <= RTOL
        expected = ref.rnea(q, v, a, gravity, wrenches)
        assert relerr(rnea(model, q, v, a, gravity=gravity, wrenches=wrenches), expected) <= RTOL
        assert relerr(nonlinear_effects(model, q, v, gravity=gravity), ref.nle(q, v, gravity)) <= RTOL
        assert relerr(gravity_torques(model, q, gravity=gravity), ref.gravity(q, gravity)) <= RTOL
        m = mass_matrix(model, q)
        assert m.shape == (model.nv, model.nv)
        assert relerr(m, ref.mass(q)) <= RTOL
        tau = rng.normal(0, 10, model.nv)
        if np.linalg.cond(m) < 1e8:  # forward dynamics where M is invertible (massless links: not)
            assert (
                relerr(forward_dynamics(model, q, v, tau, gravity=gravity), ref.aba(q, v, tau, gravity))
                <= 1e-7
            )
        for link in links:
            jac = jacobian(model, q, link)
            assert jac.shape == (6, model.nv)
            assert relerr(jac, ref.jacobian(q, link)) <= RTOL
            rot, origin = link_pose(model, q, link)
            pin_rot, pin_origin = ref.pose(q, link)
            assert relerr(rot, pin_rot) <= RTOL and relerr(origin, pin_origin) <= RTOL


def test_default_stays_fixed_and_the_index_maps() -> None:
    path = example_urdf_path("talos")
    text = path.read_text()
    fixed = RobotModel.from_urdf(text)
    assert fixed.root_joint == "fixed" and fixed.nq == fixed.nv == fixed.njoints == len(fixed.joint_names)
    floating = RobotModel.from_urdf(text, root_joint="floating")
    name = floating.joint_names[5]
    assert floating.joint_v_index(name) == 6 + 5 and floating.joint_q_index(name) == 7 + 5
    # v[joint_v_index] moves that joint alone: its column of M is that joint's column of the fixed M
    q0 = np.r_[np.zeros(6), 1.0, np.full(floating.njoints, 0.3)]
    col = mass_matrix(floating, q0)[6:, floating.joint_v_index(name)]
    assert np.allclose(col, mass_matrix(fixed, q0[7:])[:, fixed.joint_index(name)], rtol=1e-12, atol=1e-14)
    # batches: rows agree with single states
    rng = np.random.default_rng(1)
    q = np.tile([0.1, -0.2, 0.9, 0.0, 0.0, np.sin(0.2), np.cos(0.2)] + [0.0] * floating.njoints, (3, 1))
    q[:, 7:] = rng.uniform(-0.5, 0.5, (3, floating.njoints))
    v, a = rng.normal(size=(2, 3, floating.nv))
    batch = rnea(floating, q, v, a)
    assert batch.shape == (3, floating.nv)
    for i in range(3):
        assert np.array_equal(batch[i], rnea(floating, q[i], v[i], a[i]))
        assert np.array_equal(mass_matrix(floating, q)[i], mass_matrix(floating, q[i]))
        assert np.array_equal(gravity_torques(floating, q)[i], gravity_torques(floating, q[i]))


FLOATING_URDF = """<robot name="r">
  <link name="world"/>
  <link name="base"><inertial><origin xyz="0.1 -0.05 0.02"/><mass value="3"/>
    <inertia ixx="0.1" ixy="0.01" ixz="0" iyy="0.2" iyz="0.02" izz="0.15"/></inertial></link>
  <link name="arm"><inertial><origin xyz="0 0 0.2"/><mass value="1.5"/>
    <inertia ixx="0.02" ixy="0" ixz="0" iyy="0.02" iyz="0" izz="0.01"/></inertial></link>
  <joint name="root" type="{kind}"><parent link="world"/><child link="base"/>
    <origin xyz="0.3 0.2 0.5" rpy="0 0 0.4"/>{axis}</joint>
  <joint name="shoulder" type="revolute"><parent link="base"/><child link="arm"/>
    <origin xyz="0 0.1 0.05" rpy="0.3 0 0"/><axis xyz="0 1 0"/>
    <limit lower="-2" upper="2" effort="50" velocity="3"/></joint>
</robot>"""


@pytest.mark.parametrize("kind", ["floating", "planar"])
def test_a_urdf_floating_or_planar_root_joint_loads_as_such(kind: str, tmp_path) -> None:
    text = FLOATING_URDF.format(kind=kind, axis='<axis xyz="0 0 1"/>' if kind == "planar" else "")
    path = tmp_path / "r.urdf"
    path.write_text(text)
    model = RobotModel.from_urdf(text)
    assert model.root_joint == kind and model.root_link == "base" and model.joint_names == ("shoulder",)
    pm = pin.buildModelFromUrdf(str(path))  # Pinocchio makes the URDF's joint its root joint
    assert pm.nv == model.nv and pm.nq == model.nq
    data = pm.createData()
    rng = np.random.default_rng(5)
    for _ in range(3):
        q = pin.randomConfiguration(pm, -np.ones(pm.nq), np.ones(pm.nq))
        v, a = rng.normal(size=(2, pm.nv))
        assert relerr(rnea(model, q, v, a), pin.rnea(pm, data, q, v, a)) <= RTOL
        m = pin.crba(pm, data, q)
        assert relerr(mass_matrix(model, q), np.triu(m) + np.triu(m, 1).T) <= RTOL
        pin.framesForwardKinematics(pm, data, q)
        rot, origin = link_pose(model, q, "arm")
        assert relerr(origin, data.oMf[pm.getFrameId("arm")].translation) <= RTOL
        assert relerr(rot, data.oMf[pm.getFrameId("arm")].rotation) <= RTOL


def test_floating_joints_below_the_root_and_tilted_planes_are_refused() -> None:
    below = FLOATING_URDF.format(kind="revolute", axis='<axis xyz="0 0 1"/>').replace(
        'type="revolute"><parent link="base"/>', 'type="floating"><parent link="base"/>'
    )
    with pytest.raises(
        URDFError, match="joint 'shoulder': type 'floating' is supported only as the root joint"
    ):
        RobotModel.from_urdf(below)
    tilted = FLOATING_URDF.format(kind="planar", axis='<axis xyz="1 0 0"/>')
    with pytest.raises(URDFError, match="joint 'root': a planar root joint must have axis 0 0 1"):
        RobotModel.from_urdf(tilted)
    with pytest.raises(URDFError, match="root_joint must be one of fixed, floating, planar, got 'free'"):
        RobotModel.from_urdf(FLOATING_URDF.format(kind="floating", axis=""), root_joint="free")


def test_non_unit_orientations_and_wrong_sizes_raise_naming_them() -> None:
    model = RobotModel.from_urdf(FLOATING_URDF.format(kind="floating", axis=""))
    q = np.array([0, 0, 0, 0, 0, 0, 2.0, 0.1])
    zeros = np.zeros(model.nv)
    for call in (
        lambda: rnea(model, q, zeros, zeros),
        lambda: gravity_torques(model, q),
        lambda: mass_matrix(model, q),
        lambda: jacobian(model, q, "arm"),
    ):
        with pytest.raises(RneaError, match=r"q\[3:7\] \(the base quaternion\) must have unit norm"):
            call()
    with pytest.raises(RneaError, match=r"qd must have shape \(7,\)"):
        rnea(model, np.r_[0, 0, 0, 0, 0, 0, 1.0, 0.1], np.zeros(8), zeros)
    planar = RobotModel.from_urdf(FLOATING_URDF.format(kind="planar", axis=""))
    with pytest.raises(RneaError, match=r"q\[2:4\] \(cos θ, sin θ\) must have unit norm"):
        rnea(planar, np.array([0, 0, 0.5, 0.5, 0.1]), np.zeros(4), np.zeros(4))
