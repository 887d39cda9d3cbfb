"""rnea_ros.sim.foreign_plant and MujocoArm(plant=...): MuJoCo Menagerie's Panda and xArm7
(../shared/menagerie, mesh-free) under example-robot-data's URDFs.

References: Pinocchio on the URDF (mass matrix, bias, gravity, point-mass Jacobians), MuJoCo
reading the MJCF file directly (no rnea_ros code between), and plants edited here with known
zero offsets, reversed axes, a longer link or a tilted base."""

from __future__ import annotations

from pathlib import Path

import mujoco
import numpy as np
import pinocchio as pin
import pytest
from paths import MENAGERIE, PANDA_XML, XARM7_XML
from pinref import sym

from rnea_ros.model.example_robots import example_urdf_path
from rnea_ros.sim.foreign_plant import Mismatch, load_mjcf, match, plant_home
from rnea_ros.sim.mujoco_arm import MujocoArm

PANDA = example_urdf_path("panda")
XARM7 = example_urdf_path("xarm_description/urdf/xarm7.urdf")
PANDA_JOINTS = [f"panda_joint{i}" for i in range(1, 8)]
XARM_JOINTS = [f"joint{i}" for i in range(1, 8)]
GRIPPER = (
    "left_driver_joint",
    "left_finger_joint",
    "left_inner_knuckle_joint",
    "right_driver_joint",
    "right_finger_joint",
    "right_inner_knuckle_joint",
)
RNG = np.random.default_rng(11)


def test_the_shared_models_are_there() -> None:
    assert PANDA_XML.is_file() and XARM7_XML.is_file(), f"MuJoCo Menagerie's models belong in {MENAGERIE}"


def edited(tmp_path: Path, source: Path, *edits: tuple[str, str]) -> Path:
    """A copy of `source` with each (old, new) replaced once."""
    text = source.read_text()
    for old, new in edits:
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    path = tmp_path / source.name
    path.write_text(text)
    return path


# --- pairing and the kinematics check ---------------------------------------------------------


@pytest.mark.parametrize(
    ("mjcf", "urdf", "pairs", "plant_only", "urdf_only", "base_z"),
    [
        ("franka_emika_panda/panda.xml", PANDA, 9, (), (), 0.0),
        (
            "franka_emika_panda/panda_nohand.xml",
            PANDA,
            7,
            (),
            ("panda_finger_joint1", "panda_finger_joint2"),
            0.0,
        ),
        ("ufactory_xarm7/xarm7.xml", XARM7, 7, GRIPPER, (), 0.12),
        ("ufactory_xarm7/xarm7_nohand.xml", XARM7, 7, (), (), 0.12),
    ],
)
def test_menagerie_arms_pair_with_their_urdfs_in_chain_order(
    mjcf, urdf, pairs, plant_only, urdf_only, base_z
) -> None:
    model, _ = load_mjcf(MENAGERIE / mjcf)
    found = match(urdf.read_text(), model)
    assert len(found.urdf) == pairs and found.plant_only == plant_only and found.urdf_only == urdf_only
    chain = PANDA_JOINTS if urdf == PANDA else XARM_JOINTS
    assert list(found.chain) == chain
    assert list(found.plant[:7]) == XARM_JOINTS  # Menagerie names them joint1 ... joint7
    np.testing.assert_array_equal(found.sign, 1.0)
    np.testing.assert_array_equal(found.offset, 0.0)  # xArm7's 1.5708 for pi/2 is not an offset
    # the base transform is where the MJCF puts its base body (xArm7: pos="0 0 .12")
    np.testing.assert_allclose(found.base_transform[1], [0.0, 0.0, base_z], atol=1e-12)
    np.testing.assert_allclose(found.base_transform[0], np.eye(3), atol=1e-12)
    assert found.flange_error[0] < 1e-5 and found.flange_error[1] < np.radians(0.001)


def test_actuators_are_removed_and_their_force_ranges_kept() -> None:
    """Menagerie's Panda has position servos (kp 4500 ... on joint1); without them the plant is
    an effort-driven arm whose limits are the servos' force ranges, which equal the URDF's
    effort limits (read by Pinocchio)."""
    raw = mujoco.MjModel.from_xml_path(str(PANDA_XML))
    assert raw.nu == 8
    model, limits = load_mjcf(PANDA_XML)
    assert model.nu == 0
    effort = pin.buildModelFromUrdf(str(PANDA)).effortLimit
    np.testing.assert_array_equal(limits[:7, 1], effort[:7])
    np.testing.assert_array_equal(limits[:7, 0], -effort[:7])
    assert np.all(np.isinf(limits[7:]))  # the fingers' actuator drives a tendon, not a joint
    # everything else as written: armature, damping, masses
    np.testing.assert_array_equal(model.dof_armature, raw.dof_armature)
    np.testing.assert_array_equal(model.dof_damping, raw.dof_damping)
    np.testing.assert_array_equal(model.body_mass, raw.body_mass)
    np.testing.assert_array_equal(model.dof_armature, 0.1)


def test_zero_offsets_and_reversed_axes_are_found_and_undone(tmp_path: Path) -> None:
    """The Panda with joint 1, 4 and 7 zeroed elsewhere (`ref`, ranges shifted with them) and
    joints 2 and 6 turning the other way (axis negated, ranges mirrored): the same robot. The
    check finds exactly those offsets and signs, and the simulated arm speaks the URDF's joints:
    driven by the same efforts it moves exactly as the unedited plant does."""
    path = edited(
        tmp_path,
        PANDA_XML,
        ('<joint name="joint1"/>', '<joint name="joint1" ref="0.3" range="-2.5973 3.1973"/>'),
        (
            '<joint name="joint2" range="-1.7628 1.7628"/>',
            '<joint name="joint2" axis="0 0 -1" range="-1.7628 1.7628"/>',
        ),
        (
            '<joint name="joint4" range="-3.0718 -0.0698"/>',
            '<joint name="joint4" ref="0.5" range="-2.5718 0.4302"/>',
        ),
        (
            '<joint name="joint6" range="-0.0175 3.7525"/>',
            '<joint name="joint6" axis="0 0 -1" range="-3.7525 0.0175"/>',
        ),
        ('<joint name="joint7"/>', '<joint name="joint7" ref="-1.2" range="-4.0973 1.6973"/>'),
    )
    model, _ = load_mjcf(path)
    found = match(PANDA.read_text(), model)
    np.testing.assert_allclose(found.offset[:7], [0.3, 0, 0, 0.5, 0, 0, -1.2], atol=1e-9)
    np.testing.assert_array_equal(found.sign[:7], [1, -1, 1, 1, 1, -1, 1])
    assert "panda_joint2=joint2 (reversed)" in found.describe()
    urdf = PANDA.read_text()
    held = ("panda_finger_joint1", "panda_finger_joint2")
    plain, moved = (
        MujocoArm(urdf, plant=str(PANDA_XML), held=held),
        MujocoArm(urdf, plant=str(path), held=held),
    )
    np.testing.assert_allclose(moved.lower, plain.lower, atol=1e-12)
    np.testing.assert_allclose(moved.upper, plain.upper, atol=1e-12)
    home = {"panda_joint2": -0.6, "panda_joint4": -2.0, "panda_joint6": 1.5, "panda_joint7": 0.4}
    plain.reset(home)
    moved.reset(home)
    np.testing.assert_allclose(moved.q, plain.q, atol=1e-12)
    q = plain.q
    np.testing.assert_allclose(moved.mass_matrix(q), plain.mass_matrix(q), atol=1e-9)
    np.testing.assert_allclose(moved.bias(q, np.ones(9)), plain.bias(q, np.ones(9)), atol=1e-9)
    for _ in range(300):
        effort = np.r_[RNG.uniform(-20, 20, 7), 0, 0]
        plain.step(effort)
        moved.step(effort)
    assert np.abs(plain.q - q).max() > 0.05  # it moved
    np.testing.assert_allclose(moved.q, plain.q, atol=1e-9)
    np.testing.assert_allclose(moved.qd, plain.qd, atol=1e-8)
    np.testing.assert_allclose(moved.applied, plain.applied, atol=1e-9)


def test_a_different_arm_with_as_many_joints_is_refused_naming_the_joint() -> None:
    model, _ = load_mjcf(PANDA_XML)
    with pytest.raises(Mismatch, match=r"joint 'joint2' \(plant 'joint2'\) is off by 66 mm"):
        match(XARM7.read_text(), model)


def test_a_link_5_mm_longer_is_refused_naming_the_joint_it_moves(tmp_path: Path) -> None:
    """Like a UR5e against a UR5: same joints, other lengths (link5 sits 5 mm off across the
    forearm, so joint 5's axis is off; along the forearm it would slide along that axis, and
    joint 6's would be the first one off)."""
    path = edited(tmp_path, PANDA_XML, ('pos="-0.0825 0.384 0"', 'pos="-0.0875 0.384 0"'))
    with pytest.raises(Mismatch, match=r"joint 'panda_joint5' \(plant 'joint5'\) is off by 5 mm"):
        match(PANDA.read_text(), load_mjcf(path)[0])
    # 0.5 mm is within the tolerance (1 mm)
    path = edited(tmp_path, PANDA_XML, ('pos="-0.0825 0.384 0"', 'pos="-0.083 0.384 0"'))
    found = match(PANDA.read_text(), load_mjcf(path)[0])
    assert found.axis_error["panda_joint5"][0] == pytest.approx(5e-4, rel=1e-6)


def test_chains_of_other_lengths_are_refused_naming_both() -> None:
    model, _ = load_mjcf(PANDA_XML)
    with pytest.raises(Mismatch) as info:
        match(example_urdf_path("ur5").read_text(), model)
    text = str(info.value)
    assert "['joint1', 'joint2', 'joint3', 'joint4', 'joint5', 'joint6', 'joint7'] (7 joints)" in text
    assert "'shoulder_pan_joint'" in text and "(6 joints)" in text and "--plant-joints" in text


def test_explicit_pairs_are_checked() -> None:
    model, _ = load_mjcf(XARM7_XML)
    urdf = XARM7.read_text()
    pairs = [f"joint{i}=joint{i}" for i in range(1, 8)]
    assert match(urdf, model, pairs).urdf == tuple(XARM_JOINTS)
    with pytest.raises(Mismatch, match="'joint9' is not a joint of the plant"):
        match(urdf, model, [*pairs[:6], "joint7=joint9"])
    with pytest.raises(Mismatch, match=r"chain joints \['joint7'\]"):
        match(urdf, model, pairs[:6])
    with pytest.raises(Mismatch, match="not URDF_JOINT=PLANT_JOINT"):
        match(urdf, model, ["joint1"])
    swapped = [*pairs[:5], "joint6=joint7", "joint7=joint6"]
    with pytest.raises(Mismatch, match="joint 'joint6'"):
        match(urdf, model, swapped)


def test_a_tilted_base_is_refused_for_its_gravity(tmp_path: Path) -> None:
    """The node's model takes gravity along −z of the URDF's base; a plant mounted 10 degrees
    off would be pulled another way."""
    path = edited(
        tmp_path,
        PANDA_XML,
        (
            '<body name="link0" childclass="panda">',
            '<body name="link0" childclass="panda" euler="0.1745 0 0">',
        ),
    )
    with pytest.raises(Mismatch, match=r"gravity differs: .* \(10 deg apart"):
        match(PANDA.read_text(), load_mjcf(path)[0])


def test_the_plants_home_keyframe_in_the_urdfs_joints() -> None:
    model, _ = load_mjcf(XARM7_XML)
    home = plant_home(XARM7.read_text(), model, match(XARM7.read_text(), model))
    raw = mujoco.MjModel.from_xml_path(str(XARM7_XML))
    np.testing.assert_allclose([home[j] for j in XARM_JOINTS], raw.key("home").qpos[:7])


# --- the simulated plant --------------------------------------------------------------------


def test_panda_plant_is_the_urdf_plus_armature_and_damping() -> None:
    """Menagerie's Panda: Pinocchio's mass matrix of the URDF plus 0.1 kg m² on the diagonal,
    the same bias forces, damping 1 N m s/rad, in the URDF's joint names."""
    arm = MujocoArm(PANDA.read_text(), plant=str(PANDA_XML))
    pm = pin.buildModelFromUrdf(str(PANDA))
    pd = pm.createData()
    assert arm.joint_names == tuple(pm.names[1:])
    assert arm.model.nu == 0
    for _ in range(5):
        q = RNG.uniform(pm.lowerPositionLimit, pm.upperPositionLimit)
        qd = RNG.normal(0, 1, 9)
        np.testing.assert_allclose(arm.mass_matrix(q), sym(pin.crba(pm, pd, q)) + 0.1 * np.eye(9), atol=1e-9)
        np.testing.assert_allclose(arm.bias(q, qd), pin.rnea(pm, pd, q, qd, np.zeros(9)), atol=1e-8)
    truth = arm.plant_parameters()
    np.testing.assert_array_equal(truth["armature"], 0.1)
    np.testing.assert_array_equal(truth["damping"], 1.0)
    np.testing.assert_array_equal(truth["coulomb"], 0.0)


def test_efforts_are_clipped_to_the_actuators_force_ranges_and_the_rest_is_mujocos() -> None:
    """A step of the plant equals a step of MuJoCo reading the file itself (its actuators zeroed,
    the efforts as joint forces), with the efforts clipped at ±87 / ±12 N m."""
    held = ("panda_finger_joint1", "panda_finger_joint2")
    arm = MujocoArm(PANDA.read_text(), plant=str(PANDA_XML), held=held, hold_kp=0.0, hold_kd=0.0)
    raw = mujoco.MjModel.from_xml_path(str(PANDA_XML))
    raw.actuator_gainprm[:] = 0.0
    raw.actuator_biasprm[:] = 0.0
    raw.opt.timestep = arm.timestep
    data = mujoco.MjData(raw)
    arm.reset({"panda_joint4": -2.0})
    data.qpos[3] = -2.0
    for _ in range(50):
        effort = np.r_[RNG.uniform(-150, 150, 7), 0.0, 0.0]
        arm.step(effort)
        clipped = np.r_[np.clip(effort[:4], -87, 87), np.clip(effort[4:7], -12, 12), 0.0, 0.0]
        np.testing.assert_allclose(arm.applied, clipped, atol=1e-12)
        data.qfrc_applied[:] = clipped
        mujoco.mj_step(raw, data)
    np.testing.assert_allclose(arm.q, data.qpos, atol=1e-12)
    np.testing.assert_allclose(arm.qd, data.qvel, atol=1e-10)


def test_xarm7_gripper_is_held_and_weighs_on_the_arm_like_a_tool() -> None:
    """The plant's gripper joints (no URDF counterpart) are held; its gravity torque on the arm
    is the URDF's plus that of the gripper's bodies as point masses at their centres, through
    Pinocchio's Jacobian of link7 (the masses and centres read from MuJoCo's own model of the
    file)."""
    arm = MujocoArm(XARM7.read_text(), plant=str(XARM7_XML))
    assert arm.joint_names == (*XARM_JOINTS, *GRIPPER)
    assert [arm.joint_names[i] for i in arm.held] == list(GRIPPER)
    raw = mujoco.MjModel.from_xml_path(str(XARM7_XML))
    data = mujoco.MjData(raw)
    pm = pin.buildModelFromUrdf(str(XARM7))
    pd = pm.createData()
    link7 = pm.getFrameId("link7")
    gripper = [
        b
        for b in range(raw.nbody)
        if raw.body(b).name not in {f"link{i}" for i in range(1, 8)} | {"world", "link_base"}
    ]
    assert sum(raw.body_mass[gripper]) == pytest.approx(0.7516, abs=1e-3)  # with the linkage
    base = raw.body("link_base").id
    for _ in range(5):
        q = RNG.uniform(pm.lowerPositionLimit, pm.upperPositionLimit)
        data.qpos[:] = 0.0
        data.qpos[:7] = q
        mujoco.mj_kinematics(raw, data)
        mujoco.mj_comPos(raw, data)
        pin.forwardKinematics(pm, pd, q)
        pin.updateFramePlacements(pm, pd)
        tau = pin.computeGeneralizedGravity(pm, pd, q).copy()
        for b in gripper:
            point = data.xipos[b] - data.xpos[base]  # the URDF's base is at the root's origin
            local = pd.oMf[link7].actInv(point)
            jac = pin.computeFrameJacobian(pm, pd, q, link7, pin.LOCAL_WORLD_ALIGNED)
            r = pd.oMf[link7].rotation @ local
            jac_point = jac[:3] - pin.skew(r) @ jac[3:]
            tau += jac_point.T @ (raw.body_mass[b] * np.array([0.0, 0.0, 9.81]))
        state = np.r_[q, np.zeros(6)]
        # within 1e-4 N m: the URDF's 1.5708 for pi/2 tilts its axes by 4e-6 rad (5e-5 N m here)
        np.testing.assert_allclose(arm.bias(state, np.zeros(13))[:7], tau, atol=1e-4)
        assert np.abs(tau - pin.computeGeneralizedGravity(pm, pd, q)).max() > 0.5  # the gripper weighs
