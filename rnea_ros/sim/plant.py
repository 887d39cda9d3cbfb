"""A simulated robot that is not its URDF (no ROS): the plant of the identification runs.

`make_plant` turns a URDF into the plant's URDF with a fixed seed: every link's mass and
rotational inertia scaled by its own factor in [1 − spread, 1 + spread] (a positive scale keeps
each inertial physical; the com stays), per movable arm joint a viscous damping in [0.2, 1] N m s/rad
and a Coulomb friction in [0.5, 2] N m written to `<dynamics>`, an armature in [0.02, 0.2] kg m²
(returned: MuJoCo's URDF import has no armature, the simulator sets it), and optionally a
1.5 kg payload, a uniform box, fixed to `payload_link` with its com offset from the link origin.
The same seed gives the same robot with or without the payload. Gripper joints (names with
"finger") get no friction; `fix_fingers` makes them fixed.

`foreign_plant` is the other kind: a robot someone else modelled (an MJCF file, e.g. MuJoCo
Menagerie's; rnea_ros.sim.foreign_plant), whose truth is what that file says: the armature,
damping and dry friction (MuJoCo's frictionloss) of the joints paired with the URDF's arm.

Units: kg, m, kg m², N m s/rad, N m; arrays in the order of the URDF's movable arm joints.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass, field

import numpy as np

PAYLOAD_MASS = 1.5  # kg
PAYLOAD_COM = np.array([0.03, -0.02, 0.06])  # m, in the payload link's frame
PAYLOAD_BOX = (0.10, 0.08, 0.06)  # m, edges of the uniform box about the com


@dataclass(frozen=True)
class Plant:
    """The simulated robot's truth."""

    urdf: str  # the plant's URDF (what MuJoCo compiles)
    joints: list[str]  # movable arm joints, the order of the arrays
    damping: np.ndarray  # viscous friction, N m s/rad
    coulomb: np.ndarray  # dry friction level, N m
    armature: np.ndarray  # rotor inertia, kg m²
    mass_factor: dict[str, float] = field(default_factory=dict)  # by link
    inertia_factor: dict[str, float] = field(default_factory=dict)
    payload_link: str = ""  # "" when there is no payload
    mjcf: str = ""  # a foreign plant: the MJCF file simulated (`urdf` is then the node's URDF)
    plant_joints: tuple[str, ...] = ()  # its joint pairs URDF_JOINT=PLANT_JOINT (empty: chain order)


def _num(x: float) -> str:
    return f"{float(x):.17g}"


def _is_finger(joint: ET.Element) -> bool:
    return "finger" in (joint.get("name") or "")


def box_inertia(mass: float, box: tuple[float, float, float]) -> tuple[float, float, float]:
    """(ixx, iyy, izz) of a uniform box of edges `box` about its centre, kg m²."""
    a, b, c = box
    return mass * (b * b + c * c) / 12, mass * (a * a + c * c) / 12, mass * (a * a + b * b) / 12


def _add_payload(robot: ET.Element, link_name: str) -> None:
    link = ET.SubElement(robot, "link", {"name": "payload"})
    inertial = ET.SubElement(link, "inertial")
    ET.SubElement(inertial, "origin", {"xyz": " ".join(map(_num, PAYLOAD_COM)), "rpy": "0 0 0"})
    ET.SubElement(inertial, "mass", {"value": _num(PAYLOAD_MASS)})
    ixx, iyy, izz = box_inertia(PAYLOAD_MASS, PAYLOAD_BOX)
    values = {"ixx": ixx, "iyy": iyy, "izz": izz, "ixy": 0.0, "ixz": 0.0, "iyz": 0.0}
    ET.SubElement(inertial, "inertia", {k: _num(v) for k, v in values.items()})
    joint = ET.SubElement(robot, "joint", {"name": "payload_joint", "type": "fixed"})
    ET.SubElement(joint, "parent", {"link": link_name})
    ET.SubElement(joint, "child", {"link": "payload"})


def make_plant(
    urdf: str, seed: int, payload_link: str = "", spread: float = 0.2, fix_fingers: bool = False
) -> Plant:
    """The URDF turned into the plant of the module docstring ("" payload_link: no payload)."""
    rng = np.random.default_rng(seed)
    robot = ET.fromstring(urdf)
    mass_factor, inertia_factor = {}, {}
    for link in robot.findall("link"):
        mass, inertia = link.find("inertial/mass"), link.find("inertial/inertia")
        if mass is None or inertia is None:
            continue
        name = link.get("name") or ""
        fm, fi = rng.uniform(1 - spread, 1 + spread, 2)
        mass_factor[name], inertia_factor[name] = float(fm), float(fi)
        mass.set("value", _num(float(mass.get("value", "0")) * fm))
        for key in ("ixx", "ixy", "ixz", "iyy", "iyz", "izz"):
            inertia.set(key, _num(float(inertia.get(key, "0")) * fi))
    arm = [j for j in robot.findall("joint") if j.get("type") not in ("fixed", None) and not _is_finger(j)]
    n = len(arm)
    damping, coulomb, armature = rng.uniform(0.2, 1.0, n), rng.uniform(0.5, 2.0, n), rng.uniform(0.02, 0.2, n)
    for j, joint in enumerate(arm):
        for old in joint.findall("dynamics"):
            joint.remove(old)
        ET.SubElement(joint, "dynamics", {"damping": _num(damping[j]), "friction": _num(coulomb[j])})
    if fix_fingers:
        for joint in robot.findall("joint"):
            if _is_finger(joint):
                joint.set("type", "fixed")
    if payload_link:
        if payload_link not in {link.get("name") for link in robot.findall("link")}:
            raise ValueError(f"payload link '{payload_link}' is not a link of the URDF")
        _add_payload(robot, payload_link)
    return Plant(
        ET.tostring(robot, encoding="unicode"),
        [j.get("name") or "" for j in arm],
        damping,
        coulomb,
        armature,
        mass_factor,
        inertia_factor,
        payload_link,
    )


def foreign_plant(urdf: str, mjcf: str, plant_joints: tuple[str, ...] = ()) -> Plant:
    """The MJCF's truth for the URDF's arm joints (those outside the gripper, the URDF's chain
    order); rnea_ros.sim.foreign_plant.Mismatch when the two are not the same arm."""
    from rnea_ros.sim.mujoco_arm import MujocoArm  # MuJoCo only for a foreign plant

    arm = MujocoArm(urdf, plant=mjcf, plant_joints=plant_joints)
    assert arm.match is not None  # a plant was given
    joints = list(arm.match.chain)
    index = arm.indices(joints)
    truth = arm.plant_parameters()
    return Plant(
        urdf,
        joints,
        truth["damping"][index],
        truth["coulomb"][index],
        truth["armature"][index],
        mjcf=str(mjcf),
        plant_joints=tuple(plant_joints),
    )
