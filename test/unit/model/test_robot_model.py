"""RobotModel.from_urdf: closed-form 2R arm, tree features, payload, and every documented error."""

from __future__ import annotations

import math

import numpy as np
import pinocchio as pin
import pytest

from rnea_ros import RneaError, RobotModel, UnknownLinkError, URDFError, gravity_torques, mass_matrix, rnea
from rnea_ros.model.example_robots import example_urdf_path

M1, M2, L1, L2, G = 1.3, 0.7, 0.9, 0.6, 9.81


def two_r_urdf(extra: str = "") -> str:
    """Seed 004's planar 2R arm: point masses at the link ends, joints about z, gravity along -y."""
    return f"""<robot name="two_r">
  <link name="base"/>
  <link name="l1"><inertial><origin xyz="{L1} 0 0"/><mass value="{M1}"/>
    <inertia ixx="0" ixy="0" ixz="0" iyy="0" iyz="0" izz="0"/></inertial>
    <visual><geometry><mesh filename="package://nowhere/l1.dae"/></geometry></visual></link>
  <link name="l2"><inertial><origin xyz="{L2} 0 0"/><mass value="{M2}"/>
    <inertia ixx="0" ixy="0" ixz="0" iyy="0" iyz="0" izz="0"/></inertial>
    <collision><geometry><box size="1 2"/></geometry></collision></link>
  <joint name="j1" type="continuous"><parent link="base"/><child link="l1"/><axis xyz="0 0 1"/></joint>
  <joint name="j2" type="revolute"><parent link="l1"/><child link="l2"/><origin xyz="{L1} 0 0"/>
    <axis xyz="0 0 1"/><limit lower="-2" upper="2" effort="30" velocity="3"/>
    <dynamics damping="0.2" friction="0.1"/></joint>
  <transmission name="t"><type>weird</type><joint name="j1"/></transmission>
  <gazebo reference="l1"><material>Gazebo/Red</material></gazebo>
  {extra}
</robot>"""


def closed_form(q, qd, qdd):
    """M, c, g of seed 004 (Modern Robotics 8.1)."""
    c2, s2 = math.cos(q[1]), math.sin(q[1])
    m = np.array(
        [
            [M1 * L1**2 + M2 * (L1**2 + L2**2 + 2 * L1 * L2 * c2), M2 * (L2**2 + L1 * L2 * c2)],
            [M2 * (L2**2 + L1 * L2 * c2), M2 * L2**2],
        ]
    )
    c = np.array([-M2 * L1 * L2 * s2 * (2 * qd[0] * qd[1] + qd[1] ** 2), M2 * L1 * L2 * s2 * qd[0] ** 2])
    g = np.array(
        [
            (M1 + M2) * L1 * G * math.cos(q[0]) + M2 * L2 * G * math.cos(q[0] + q[1]),
            M2 * L2 * G * math.cos(q[0] + q[1]),
        ]
    )
    return m, c, g


def test_two_r_arm_matches_closed_form() -> None:
    model = RobotModel.from_urdf(two_r_urdf())
    gravity = (0.0, -G, 0.0)
    rng = np.random.default_rng(0)
    for _ in range(20):
        q, qd, qdd = rng.uniform(-2, 2, (3, 2))
        m, c, g = closed_form(q, qd, qdd)
        assert np.allclose(mass_matrix(model, q), m, rtol=0, atol=1e-12)
        assert np.allclose(gravity_torques(model, q, gravity=gravity), g, rtol=0, atol=1e-12)
        assert np.allclose(rnea(model, q, qd, qdd, gravity=gravity), m @ qdd + c + g, rtol=0, atol=1e-12)


def test_limits_dynamics_and_ignored_elements() -> None:
    model = RobotModel.from_urdf(two_r_urdf())
    assert model.joint_names == ("j1", "j2")
    assert model.root_link == "base"
    assert model.position_lower[0] == -math.inf and model.position_upper[1] == 2.0
    assert model.effort_limit.tolist() == [math.inf, 30.0]
    assert model.velocity_limit[1] == 3.0
    assert model.damping.tolist() == [0.0, 0.2] and model.coulomb.tolist() == [0.0, 0.1]


def test_any_axis_origin_prismatic_fixed_and_no_inertial_match_pinocchio(tmp_path) -> None:
    urdf = """<robot name="mixed">
  <link name="base"/>
  <link name="a"><inertial><origin xyz="0.1 0.02 -0.03" rpy="0.3 -0.2 0.1"/><mass value="2"/>
    <inertia ixx="0.05" ixy="0.001" ixz="-0.002" iyy="0.04" iyz="0.003" izz="0.03"/></inertial></link>
  <link name="bracket"><inertial><origin xyz="0 0.05 0"/><mass value="0.4"/>
    <inertia ixx="0.001" ixy="0" ixz="0" iyy="0.001" iyz="0" izz="0.001"/></inertial></link>
  <link name="slider"><inertial><origin xyz="0.02 0 0.01"/><mass value="1.1"/>
    <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.02" iyz="0" izz="0.015"/></inertial></link>
  <link name="massless"/>
  <link name="b"><inertial><mass value="0.5"/>
    <inertia ixx="0.002" ixy="0" ixz="0" iyy="0.002" iyz="0" izz="0.002"/></inertial></link>
  <link name="side"><inertial><origin xyz="0.0 0.1 0"/><mass value="0.8"/>
    <inertia ixx="0.004" ixy="0" ixz="0" iyy="0.003" iyz="0" izz="0.002"/></inertial></link>
  <joint name="j1" type="revolute"><parent link="base"/><child link="a"/>
    <origin xyz="0.1 -0.2 0.3" rpy="0.4 0.5 -0.6"/><axis xyz="1 2 3"/>
    <limit lower="-3" upper="3" effort="10" velocity="1"/></joint>
  <joint name="fix" type="fixed"><parent link="a"/><child link="bracket"/>
    <origin xyz="0 0 0.2" rpy="1.0 0 0.3"/></joint>
  <joint name="j2" type="prismatic"><parent link="bracket"/><child link="slider"/>
    <origin xyz="0.05 0 0" rpy="0 0.7 0"/><axis xyz="0 1 1"/>
    <limit lower="-1" upper="1" effort="100" velocity="1"/></joint>
  <joint name="j3" type="revolute"><parent link="slider"/><child link="massless"/>
    <origin xyz="0 0.1 0"/><axis xyz="0 -1 0"/><limit lower="-2" upper="2" effort="5" velocity="1"/></joint>
  <joint name="j4" type="revolute"><parent link="massless"/><child link="b"/>
    <origin xyz="0.2 0 0"/><axis xyz="0 0 1"/><limit lower="-1" upper="1" effort="5" velocity="1"/></joint>
  <joint name="j5" type="revolute"><parent link="a"/><child link="side"/>
    <origin xyz="0 0.1 0"/><axis xyz="1 0 0"/><limit lower="-1" upper="1" effort="5" velocity="1"/></joint>
</robot>"""
    path = tmp_path / "mixed.urdf"
    path.write_text(urdf)
    model = RobotModel.from_urdf(urdf)
    assert model.joint_names == ("j1", "j2", "j3", "j4", "j5")
    assert model.joint_types == ("revolute", "prismatic", "revolute", "revolute", "revolute")
    pm = pin.buildModelFromUrdf(str(path))
    idx = [pm.joints[pm.getJointId(j)].idx_v for j in model.joint_names]
    pd = pm.createData()
    rng = np.random.default_rng(1)
    for _ in range(10):
        q, qd, qdd = rng.uniform(-1, 1, (3, model.nv))
        pq, pqd, pqdd = (np.zeros(pm.nv) for _ in range(3))
        pq[idx], pqd[idx], pqdd[idx] = q, qd, qdd
        expected = pin.rnea(pm, pd, pq, pqd, pqdd)[idx]
        assert np.allclose(rnea(model, q, qd, qdd), expected, rtol=1e-9, atol=1e-12)


def test_chain_locks_off_chain_joints_like_pinocchio_reduced_model() -> None:
    path = example_urdf_path("talos")
    model = RobotModel.from_urdf(path.read_text(), root_link="torso_2_link", tip_link="arm_right_7_link")
    assert model.joint_names == tuple(f"arm_right_{i}_joint" for i in range(1, 8))
    assert model.root_link == "torso_2_link" and model.tip_link == "arm_right_7_link"
    full = pin.buildModelFromUrdf(str(path))
    keep = set(model.joint_names)
    lock = [full.getJointId(n) for n in full.names[1:] if n not in keep]
    reduced = pin.buildReducedModel(full, lock, pin.neutral(full))
    # the torso is our root: compare with the torso joints at zero (reduced keeps them locked too)
    idx = [reduced.joints[reduced.getJointId(j)].idx_v for j in model.joint_names]
    rng = np.random.default_rng(2)
    q, qd, qdd = rng.uniform(-1, 1, (3, model.nv))
    pq, pqd, pqdd = (np.zeros(reduced.nv) for _ in range(3))
    pq[idx], pqd[idx], pqdd[idx] = q, qd, qdd
    expected = pin.rnea(reduced, reduced.createData(), pq, pqd, pqdd)[idx]
    assert np.allclose(rnea(model, q, qd, qdd), expected, rtol=1e-9, atol=1e-12)


def test_mimic_joint_is_an_independent_dof_with_its_relation_kept() -> None:
    model = RobotModel.from_urdf(example_urdf_path("panda").read_text())
    assert "panda_finger_joint2" in model.joint_names
    mimic = model.mimic["panda_finger_joint2"]
    assert (mimic.leader, mimic.multiplier, mimic.offset) == ("panda_finger_joint1", 1.0, 0.0)


def test_payload_matches_pinocchio_appended_body_and_can_be_replaced() -> None:
    path = example_urdf_path("panda")
    model = RobotModel.from_urdf(path.read_text())
    mass, com = 1.7, np.array([0.01, -0.02, 0.08])
    inertia = np.array([[0.01, 0.001, 0], [0.001, 0.012, 0], [0, 0, 0.008]])
    loaded = model.with_payload("panda_hand", mass, com, inertia)
    pm = pin.buildModelFromUrdf(str(path))
    frame = pm.frames[pm.getFrameId("panda_hand")]
    pm.appendBodyToJoint(frame.parentJoint, pin.Inertia(mass, com, inertia), frame.placement)
    idx = [pm.joints[pm.getJointId(j)].idx_v for j in model.joint_names]
    q, qd, qdd = np.random.default_rng(3).uniform(-1, 1, (3, model.nv))
    pq, pqd, pqdd = (np.zeros(pm.nv) for _ in range(3))
    pq[idx], pqd[idx], pqdd[idx] = q, qd, qdd
    expected = pin.rnea(pm, pm.createData(), pq, pqd, pqdd)[idx]
    assert np.allclose(rnea(loaded, q, qd, qdd), expected, rtol=1e-9, atol=1e-12)
    # replacing the payload does not stack it; mass 0 removes it; the original is untouched
    again = loaded.with_payload("panda_hand", mass, com, inertia)
    assert np.array_equal(rnea(again, q, qd, qdd), rnea(loaded, q, qd, qdd))
    assert np.array_equal(rnea(loaded.with_payload("panda_hand", 0.0), q, qd, qdd), rnea(model, q, qd, qdd))
    assert model.payload is None and loaded.payload.mass == mass


BAD = {
    "not xml": ("<robot", "not valid XML"),
    "empty": ("", "empty"),
    "no robot": ("<model/>", "no <robot>"),
    "several roots": (
        '<robot name="r"><link name="a"/><link name="b"/></robot>',
        "several root links .*: a, b",
    ),
    "cycle": (
        '<robot name="r"><link name="base"/><link name="a"/><link name="b"/>'
        '<joint name="ab" type="fixed"><parent link="a"/><child link="b"/></joint>'
        '<joint name="ba" type="fixed"><parent link="b"/><child link="a"/></joint></robot>',
        "cycle through links: a, b",
    ),
    "negative mass": (
        '<robot name="r"><link name="base"/><link name="arm"><inertial><mass value="-1"/>'
        '<inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial></link></robot>',
        "link 'arm': mass must be finite and >= 0",
    ),
    "floating below the root": (
        '<robot name="r"><link name="w"/><link name="a"/><link name="b"/>'
        '<joint name="j" type="revolute"><parent link="w"/><child link="a"/></joint>'
        '<joint name="free" type="floating"><parent link="a"/><child link="b"/></joint></robot>',
        "joint 'free': type 'floating' is supported only as the root joint",
    ),
    "planar below the root": (
        '<robot name="r"><link name="w"/><link name="a"/><link name="b"/>'
        '<joint name="j" type="revolute"><parent link="w"/><child link="a"/></joint>'
        '<joint name="slide" type="planar"><parent link="a"/><child link="b"/></joint></robot>',
        "joint 'slide': type 'planar' is supported only as the root joint",
    ),
    "garbage number": (
        '<robot name="r"><link name="w"/><link name="b"/><joint name="j" type="revolute">'
        '<parent link="w"/><child link="b"/><origin xyz="0 zero 0"/></joint></robot>',
        "joint 'j' origin xyz: not a number",
    ),
    "undefined link": (
        '<robot name="r"><link name="w"/><joint name="j" type="fixed">'
        '<parent link="w"/><child link="ghost"/></joint></robot>',
        "joint 'j': child link 'ghost' is not defined",
    ),
    "zero axis": (
        '<robot name="r"><link name="w"/><link name="b"/><joint name="j" type="continuous">'
        '<parent link="w"/><child link="b"/><axis xyz="0 0 0"/></joint></robot>',
        "joint 'j': axis must be a non-zero vector",
    ),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_descriptions_raise_urdf_error_naming_the_culprit(case: str) -> None:
    text, message = BAD[case]
    with pytest.raises(URDFError, match=message):
        RobotModel.from_urdf(text)


def _arm_with_inertia(ixx: float, iyy: float, izz: float, where: str = "arm") -> str:
    """A one-joint arm whose link `where` (the moving 'arm' or the root 'base') has this inertia."""
    inertial = (
        f'<inertial><mass value="1"/><inertia ixx="{ixx}" ixy="0" ixz="0" iyy="{iyy}" iyz="0" '
        f'izz="{izz}"/></inertial>'
    )
    good = '<inertial><mass value="1"/><inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial>'
    return (
        f'<robot name="r"><link name="base">{inertial if where == "base" else ""}</link>'
        f'<link name="arm">{inertial if where == "arm" else good}</link>'
        '<joint name="j" type="revolute"><parent link="base"/><child link="arm"/><axis xyz="0 0 1"/>'
        '<limit lower="-1" upper="1" effort="10" velocity="1"/></joint></robot>'
    )


@pytest.mark.parametrize(
    "moments, defect",
    [
        ((-3.5e-8, 3.5e-8, 9.1e-8), "not positive semi-definite"),  # tiago's antenna link
        ((1.0, 1.0, 2.1), "triangle inequality"),  # 5 % over the limit, as CAD exports have
        ((2.3e-6, 3.5e-6, 7.3e-6), "triangle inequality"),  # allegro hand link
    ],
)
def test_inconsistent_inertia_loads_with_a_warning_naming_link_and_defect_or_is_refused_strictly(
    moments, defect
) -> None:
    text = _arm_with_inertia(*moments)
    model = RobotModel.from_urdf(text)
    assert len(model.warnings) == 1
    assert model.warnings[0].startswith(f"link 'arm': inertia {'is' if 'semi' in defect else 'breaks'}")
    assert defect in model.warnings[0]
    # kept as written: the inertia about the joint axis is izz (+ the merged nothing)
    assert mass_matrix(model, np.zeros(1))[0, 0] == pytest.approx(moments[2], rel=1e-12)
    with pytest.raises(URDFError, match=f"link 'arm': .*{defect}.*strict"):
        RobotModel.from_urdf(text, strict=True)


def test_links_fixed_to_the_root_carry_no_dynamics_and_are_not_checked() -> None:
    text = _arm_with_inertia(-2.5e-22, 3.4e-23, 3e-6, where="base")  # the quadrupeds' base link
    for strict in (False, True):
        assert RobotModel.from_urdf(text, strict=strict).warnings == ()


def test_mimic_of_an_unknown_joint_is_kept_independent_with_a_warning() -> None:
    text = two_r_urdf().replace(
        '<joint name="j2" type="revolute">', '<joint name="j2" type="revolute"><mimic joint="ghost"/>'
    )
    assert '<mimic joint="ghost"/>' in text
    model = RobotModel.from_urdf(text)
    assert model.nv == 2 and model.mimic == {}
    assert model.warnings == (
        "joint 'j2': mimics 'ghost', which is not a joint of the robot (kept independent)",
    )


def test_unknown_root_and_tip_links() -> None:
    text = two_r_urdf()
    with pytest.raises(URDFError, match="root_link 'nope' is not a link"):
        RobotModel.from_urdf(text, root_link="nope")
    with pytest.raises(URDFError, match="tip_link 'nope' is not a link"):
        RobotModel.from_urdf(text, tip_link="nope")
    with pytest.raises(URDFError, match="tip_link 'base' is not below root_link 'l1'"):
        RobotModel.from_urdf(text, root_link="l1", tip_link="base")


def test_bad_arguments_raise_value_error_naming_them() -> None:
    model = RobotModel.from_urdf(two_r_urdf())
    ok = np.zeros(2)
    for kwargs, message in [
        ({"q": np.zeros(3)}, "q must have shape"),
        ({"qd": [0.0, np.nan]}, "qd contains NaN"),
        ({"qdd": [np.inf, 0.0]}, "qdd contains NaN or Inf"),
        ({"q": ["a", "b"]}, "q must be an array of numbers"),
        ({"gravity": (0, 0)}, "gravity must have shape"),
        ({"gravity": (0, np.nan, 0)}, "gravity contains NaN"),
        ({"wrenches": {"l2": [1, 2, 3]}}, r"wrenches\['l2'\] must be 6 numbers"),
        ({"wrenches": {"l2": [np.nan] * 6}}, r"wrenches\['l2'\] contains NaN"),
        ({"wrenches": {"ghost": [0] * 6}}, "link 'ghost' is not part of the model"),
    ]:
        args = {"q": ok, "qd": ok, "qdd": ok, **kwargs}
        expected = UnknownLinkError if "ghost" in message else RneaError
        with pytest.raises(expected, match=message):
            rnea(model, args.pop("q"), args.pop("qd"), args.pop("qdd"), **args)
    with pytest.raises(RneaError, match="payload on link 'l2': mass must be finite and >= 0"):
        model.with_payload("l2", -1.0)
    with pytest.raises(UnknownLinkError, match="link 'ghost'"):
        model.with_payload("ghost", 1.0)
    with pytest.raises(RneaError, match="armature must be 2 finite values >= 0"):
        model.with_armature([1.0, -1.0])


def test_real_robot_files_load(tmp_path) -> None:
    for name, dof in [("panda", 9), ("ur5", 6), ("double_pendulum", 2), ("talos", 32)]:
        assert RobotModel.from_urdf(example_urdf_path(name).read_text()).nv == dof
