"""URDF text → plain description of links and joints (only what dynamics needs).

Visual, collision, material, transmission, gazebo and any unknown elements are ignored, so that
real robot files load even where stricter parsers reject them. Every error is a `URDFError` that
names the offending link or joint.
"""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field

import numpy as np

from rnea_ros.errors import URDFError

MOVABLE_TYPES = ("revolute", "continuous", "prismatic")
ROOT_TYPES = ("floating", "planar")  # accepted as the root joint only (see RobotModel.from_urdf)

# Tolerance on principal moments (kg m^2) for the positive-definiteness and triangle checks.
INERTIA_TOL = 1e-9


@dataclass(frozen=True)
class Inertial:
    """Mass (kg), centre of mass and rotational inertia about the centre of mass, in the link frame."""

    mass: float
    com: np.ndarray  # (3,) position of the centre of mass in the link frame, m
    inertia: np.ndarray  # (3, 3) about the centre of mass, link-frame axes, kg m^2
    defect: str | None = None  # why the inertia is not physically consistent (see inertia_defect)


@dataclass(frozen=True)
class Mimic:
    """`q = multiplier * q[leader] + offset` for a mimic joint."""

    leader: str
    multiplier: float = 1.0
    offset: float = 0.0


@dataclass(frozen=True)
class Joint:
    """A URDF joint: `origin` places the child link frame in the parent link frame at q = 0."""

    name: str
    type: str
    parent: str
    child: str
    rotation: np.ndarray  # (3, 3) child-in-parent rotation at q = 0
    translation: np.ndarray  # (3,) child origin in the parent frame at q = 0, m
    axis: np.ndarray  # (3,) unit joint axis in the child (joint) frame
    lower: float = -math.inf
    upper: float = math.inf
    velocity: float = math.inf
    effort: float = math.inf
    damping: float = 0.0
    friction: float = 0.0
    mimic: Mimic | None = None


@dataclass(frozen=True)
class URDFRobot:
    """Links (name → inertial or None) and joints (in document order) of a URDF."""

    name: str
    links: dict[str, Inertial | None]
    joints: list[Joint] = field(default_factory=list)

    @property
    def joint_names(self) -> set[str]:
        """Names of every joint, fixed ones included."""
        return {j.name for j in self.joints}


def rpy_to_matrix(roll: float, pitch: float, yaw: float) -> np.ndarray:
    """URDF fixed-axis roll-pitch-yaw: R = Rz(yaw) Ry(pitch) Rx(roll)."""
    cr, sr = math.cos(roll), math.sin(roll)
    cp, sp = math.cos(pitch), math.sin(pitch)
    cy, sy = math.cos(yaw), math.sin(yaw)
    return np.array(
        [
            [cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
            [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
            [-sp, cp * sr, cp * cr],
        ]
    )


def _floats(text: str | None, count: int, what: str, default: str) -> list[float]:
    parts = (default if text is None else text).split()
    if len(parts) != count:
        raise URDFError(f"{what}: expected {count} numbers, got {text!r}")
    try:
        values = [float(p) for p in parts]
    except ValueError:
        raise URDFError(f"{what}: not a number in {text!r}") from None
    if not all(math.isfinite(v) for v in values):
        raise URDFError(f"{what}: numbers must be finite, got {text!r}")
    return values


def _scalar(el: ET.Element | None, attr: str, what: str, default: float) -> float:
    if el is None or el.get(attr) is None:
        return default
    return _floats(el.get(attr), 1, f"{what} {attr}", "0")[0]


def _origin(el: ET.Element | None, what: str) -> tuple[np.ndarray, np.ndarray]:
    xyz = _floats(None if el is None else el.get("xyz"), 3, f"{what} origin xyz", "0 0 0")
    rpy = _floats(None if el is None else el.get("rpy"), 3, f"{what} origin rpy", "0 0 0")
    return rpy_to_matrix(*rpy), np.array(xyz)


def inertia_defect(inertia: np.ndarray) -> str | None:
    """Why a finite symmetric 3×3 inertia is not a physical rigid-body inertia, or None.

    Physical means principal moments ≥ 0 (a point mass has all zero) and the triangle inequality
    I1 + I2 ≥ I3 between principal moments, within INERTIA_TOL relative to the largest moment.
    """
    moments = np.linalg.eigvalsh(inertia)
    tol = INERTIA_TOL * max(1.0, float(np.max(np.abs(moments))))
    if moments[0] < -tol:
        return f"inertia is not positive semi-definite (principal moments {moments})"
    if moments[0] + moments[1] < moments[2] - tol:
        return f"inertia breaks the triangle inequality (principal moments {moments})"
    return None


def check_mass_and_inertia(mass: float, inertia: np.ndarray, what: str) -> None:
    """Raise URDFError unless mass is finite and ≥ 0 and inertia is a finite symmetric 3×3 matrix.

    These defects make a model meaningless; physical consistency (`inertia_defect`) is checked
    separately because real robot files often break it slightly.
    """
    if not math.isfinite(mass) or mass < 0.0:
        raise URDFError(f"{what}: mass must be finite and >= 0, got {mass}")
    if inertia.shape != (3, 3) or not np.all(np.isfinite(inertia)):
        raise URDFError(f"{what}: inertia must be a finite 3x3 matrix")
    if not np.allclose(inertia, inertia.T, rtol=0.0, atol=INERTIA_TOL):
        raise URDFError(f"{what}: inertia is not symmetric")


def check_inertia(mass: float, inertia: np.ndarray, what: str) -> None:
    """Raise URDFError unless mass ≥ 0 and the inertia is a physical rigid-body inertia."""
    check_mass_and_inertia(mass, inertia, what)
    defect = inertia_defect(inertia)
    if defect is not None:
        raise URDFError(f"{what}: {defect}")


def _inertial(link: ET.Element, name: str) -> Inertial | None:
    el = link.find("inertial")
    if el is None:
        return None
    what = f"link '{name}'"
    rotation, com = _origin(el.find("origin"), what)
    mass_el = el.find("mass")
    mass = _scalar(mass_el, "value", f"{what} mass", 0.0)
    i_el = el.find("inertia")
    terms = {k: _scalar(i_el, k, f"{what} inertia", 0.0) for k in ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")}
    local = np.array(
        [
            [terms["ixx"], terms["ixy"], terms["ixz"]],
            [terms["ixy"], terms["iyy"], terms["iyz"]],
            [terms["ixz"], terms["iyz"], terms["izz"]],
        ]
    )
    check_mass_and_inertia(mass, local, what)
    return Inertial(mass=mass, com=com, inertia=rotation @ local @ rotation.T, defect=inertia_defect(local))


def _joint(el: ET.Element, links: dict[str, Inertial | None]) -> Joint:
    name = el.get("name")
    if not name:
        raise URDFError("a <joint> has no name")
    what = f"joint '{name}'"
    jtype = el.get("type", "")
    if jtype not in (*MOVABLE_TYPES, *ROOT_TYPES, "fixed"):
        raise URDFError(f"{what}: unknown joint type '{jtype}'")
    ends = {}
    for tag in ("parent", "child"):
        node = el.find(tag)
        link = None if node is None else node.get("link")
        if not link:
            raise URDFError(f"{what}: missing <{tag} link=...>")
        if link not in links:
            raise URDFError(f"{what}: {tag} link '{link}' is not defined")
        ends[tag] = link
    rotation, translation = _origin(el.find("origin"), what)
    axis_el = el.find("axis")
    axis = np.array(_floats(None if axis_el is None else axis_el.get("xyz"), 3, f"{what} axis", "1 0 0"))
    norm = float(np.linalg.norm(axis))
    if jtype in ROOT_TYPES and axis_el is None:
        axis, norm = np.array([0.0, 0.0, 1.0]), 1.0  # a planar joint's default normal: z
    if jtype != "fixed" and not 1e-9 < norm < 1e150:
        raise URDFError(f"{what}: axis must be a non-zero vector")
    limit = el.find("limit")
    dyn = el.find("dynamics")
    lower = _scalar(limit, "lower", f"{what} limit", 0.0)
    upper = _scalar(limit, "upper", f"{what} limit", 0.0)
    if jtype == "continuous" or limit is None or (lower == 0.0 and upper == 0.0):
        lower, upper = -math.inf, math.inf
    if lower > upper:
        raise URDFError(f"{what}: limit lower {lower} > upper {upper}")
    velocity = _scalar(limit, "velocity", f"{what} limit", math.inf)
    effort = _scalar(limit, "effort", f"{what} limit", math.inf)
    if velocity < 0 or effort < 0:
        raise URDFError(f"{what}: velocity and effort limits must be >= 0")
    damping = _scalar(dyn, "damping", f"{what} dynamics", 0.0)
    friction = _scalar(dyn, "friction", f"{what} dynamics", 0.0)
    if damping < 0 or friction < 0:
        raise URDFError(f"{what}: dynamics damping and friction must be >= 0")
    mimic_el = el.find("mimic")
    mimic = None
    if mimic_el is not None:
        leader = mimic_el.get("joint")
        if not leader:
            raise URDFError(f"{what}: <mimic> without joint=")
        mimic = Mimic(
            leader,
            _scalar(mimic_el, "multiplier", f"{what} mimic", 1.0),
            _scalar(mimic_el, "offset", f"{what} mimic", 0.0),
        )
    return Joint(
        name=name,
        type="revolute" if jtype == "continuous" else jtype,
        parent=ends["parent"],
        child=ends["child"],
        rotation=rotation,
        translation=translation,
        axis=axis / norm if norm > 0 else axis,
        lower=lower,
        upper=upper,
        velocity=velocity if velocity > 0 else math.inf,
        effort=effort if effort > 0 else math.inf,
        damping=damping,
        friction=friction,
        mimic=mimic,
    )


def parse_urdf(xml_text: str) -> URDFRobot:
    """Parse URDF text into links and joints; raise URDFError on anything dynamics cannot use."""
    if not isinstance(xml_text, str) or not xml_text.strip():
        raise URDFError("robot description is empty")
    try:
        root = ET.fromstring(xml_text)
    except ET.ParseError as exc:
        raise URDFError(f"robot description is not valid XML: {exc}") from None
    if root.tag != "robot":
        raise URDFError(f"no <robot> element (root element is <{root.tag}>)")
    links: dict[str, Inertial | None] = {}
    for el in root.findall("link"):
        name = el.get("name")
        if not name:
            raise URDFError("a <link> has no name")
        if name in links:
            raise URDFError(f"link '{name}' is defined twice")
        links[name] = _inertial(el, name)
    if not links:
        raise URDFError("robot has no <link>")
    joints: list[Joint] = []
    seen: set[str] = set()
    for el in root.findall("joint"):
        joint = _joint(el, links)
        if joint.name in seen:
            raise URDFError(f"joint '{joint.name}' is defined twice")
        seen.add(joint.name)
        joints.append(joint)
    return URDFRobot(name=root.get("name", ""), links=links, joints=joints)
