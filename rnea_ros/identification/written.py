"""The files `rnea_ros_identify` writes, and the model they make when read back.

- `params_yaml`: the inverse_dynamics node's parameter file (friction, armature, payload, the
  chain's root and tip links).
- `corrected_urdf`: the input URDF with each identified body written into its links' `<inertial>`
  and the friction into `<dynamics>`. A body merges its joint's child link (the carrying link) and
  the links fixed to it (and, with a tip link, those on joints locked at 0): the URDF body is the
  sum of their inertials, and the written links must add up to the identified body exactly. The
  carrying link takes the whole difference when it stays physical (mass ≥ 0, inertia about its
  centre of mass positive semi-definite, triangle inequality); when it would not (TIAGo's arm_7
  body, whose Hey5 hand outweighs what the fit leaves for the whole body), the other links of the
  body are scaled by a common factor s < 1 (their centres of mass kept) and the carrying link takes
  the rest, s chosen within the physical range. Only an identified body that is itself not physical
  cannot be written; it is then written as the nearest physical one, and named with the size of
  the difference.
- `reload`: a model from written files as the node builds it (URDF, then the parameter file's
  friction, armature and payload); the command scores it on the held-out samples.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from rnea_ros.errors import RneaError
from rnea_ros.friction.model import SMOOTHING_VELOCITY
from rnea_ros.identification.consistency import pseudo_inertia
from rnea_ros.identification.fit import Identification
from rnea_ros.identification.regressor import (
    body_columns,
    body_links,
    joint_columns,
    standard_parameters,
    with_parameters,
)
from rnea_ros.model.robot_model import RobotModel
from rnea_ros.model.urdf import INERTIA_TOL, Inertial, parse_urdf

KEEP = 0.9  # of the largest physical scale of a body's other links: the carrying link stays inside
SCALE_FLOOR = 1e-3  # a smaller largest scale: the other links are emptied (the carrying link holds all)


def ros_parameters(text: str, what: str) -> dict:
    """The `ros__parameters` of a node parameter file's text; RneaError naming `what` otherwise."""
    import yaml

    try:
        doc = yaml.safe_load(text)
        return next(v["ros__parameters"] for v in doc.values() if "ros__parameters" in v)
    except (yaml.YAMLError, AttributeError, KeyError, StopIteration, TypeError) as exc:
        raise RneaError(f"{what}: not a node parameter file ({type(exc).__name__})") from None


def apply_params(model: RobotModel, params: dict, what: str) -> RobotModel:
    """The model with friction.viscous/coulomb and armature of node parameters written by this tool
    (mapped by their `joints`); RneaError naming `what` when they cannot be used."""
    try:
        names = list(params["joints"])
    except (KeyError, TypeError):
        raise RneaError(f"{what}: no 'joints'") from None
    missing = [j for j in model.joint_names if j not in names]
    if missing:
        raise RneaError(f"{what}: no values for joints {', '.join(missing)}")
    take = [names.index(j) for j in model.joint_names]
    pi = standard_parameters(model)
    try:
        friction = params.get("friction") or {}
        for kind in ("viscous", "coulomb"):
            values = friction.get(kind)
            if values is not None and list(values) != [-1]:
                pi[joint_columns(model, kind)] = np.asarray(values, dtype=float)[take]
        armature = params.get("armature")
        if isinstance(armature, dict):  # armature.<joint>, as this tool writes it
            pi[joint_columns(model, "armature")] = [float(armature.get(j, 0.0)) for j in model.joint_names]
        elif armature is not None:  # a list in `joints` order (files written before the per-joint form)
            pi[joint_columns(model, "armature")] = np.asarray(armature, dtype=float)[take]
        return with_parameters(model, pi)
    except (ValueError, IndexError, TypeError, AttributeError) as exc:
        raise RneaError(f"{what}: {exc}") from None


def params_yaml(result: Identification, root_link: str | None, tip_link: str | None) -> str:
    """The inverse_dynamics node's parameter file for the result (YAML text)."""
    import yaml

    params: dict = {"joints": list(result.joint_names)}
    if root_link:
        params["root_link"] = root_link
    if tip_link:
        params["tip_link"] = tip_link
    params["friction"] = {
        "viscous": [float(x) for x in result.viscous],
        "coulomb": [float(x) for x in result.coulomb],
        "smoothing_velocity": float(result.smoothing_velocity),
    }
    # one parameter per joint, armature.<joint> (the node has no armature array)
    params["armature"] = {j: float(x) for j, x in zip(result.joint_names, result.armature, strict=True)}
    if result.payload is not None:
        p = result.payload
        i = p.inertia
        params["payload"] = {
            "link": p.link,
            "mass": float(p.mass),
            "com": [float(x) for x in p.com],
            "inertia": [float(x) for x in (i[0, 0], i[0, 1], i[0, 2], i[1, 1], i[1, 2], i[2, 2])],
        }
    header = (
        "# Identified by rnea_ros.identification.cli; per-joint arrays follow `joints`, armature is\n"
        "# one parameter per joint (armature.<joint>).\n"
        "# friction: N m s/rad and N m (N s/m and N for prismatic); armature: kg m^2 (kg).\n"
    )
    return header + yaml.safe_dump({"inverse_dynamics": {"ros__parameters": params}}, sort_keys=False)


def reload(
    urdf: str,
    params_text: str | None,
    root_link: str | None,
    tip_link: str | None,
    what: str = "written files",
) -> tuple[RobotModel, float]:
    """The model of written files as the node builds it: the URDF (root and tip links from the
    parameter file when it names them), then the parameter file's friction, armature and
    payload; and its Coulomb smoothing velocity."""
    params = ros_parameters(params_text, what) if params_text else {}
    root = params.get("root_link", root_link) or None
    tip = params.get("tip_link", tip_link) or None
    model = RobotModel.from_urdf(urdf, root_link=root, tip_link=tip)
    smoothing = SMOOTHING_VELOCITY
    if params:
        model = apply_params(model, params, what)
        smoothing = float((params.get("friction") or {}).get("smoothing_velocity", smoothing))
        payload = params.get("payload")
        if payload and float(payload.get("mass", 0.0)) > 0:
            ixx, ixy, ixz, iyy, iyz, izz = payload.get("inertia", [0.0] * 6)
            inertia = np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]], dtype=float)
            model = model.with_payload(payload["link"], float(payload["mass"]), payload["com"], inertia)
    return model, smoothing


# ---------------------------------------------------------------------------------------------
# The corrected URDF


def _link_parameters(inertial: Inertial | None, rotation: np.ndarray, translation: np.ndarray) -> np.ndarray:
    """A link's 10 standard parameters in its body's frame (the link at `rotation`, `translation`)."""
    if inertial is None:
        return np.zeros(10)
    m = inertial.mass
    c = rotation @ inertial.com + translation
    i_o = rotation @ inertial.inertia @ rotation.T + m * (float(c @ c) * np.eye(3) - np.outer(c, c))
    return np.array([m, *(m * c), i_o[0, 0], i_o[0, 1], i_o[1, 1], i_o[0, 2], i_o[1, 2], i_o[2, 2]])


def _about_com(pi10: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
    """Mass, com and inertia about the com of 10 standard parameters."""
    m = float(pi10[0])
    xx, xy, yy, xz, yz, zz = pi10[4:]
    i_o = np.array([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]])
    c = pi10[1:4] / m if m > 0 else np.zeros(3)
    return m, c, i_o - m * (float(c @ c) * np.eye(3) - np.outer(c, c))


def physical(pi10: np.ndarray) -> bool:
    """Whether 10 standard parameters are a rigid body a URDF can hold (pseudo-inertia positive
    semi-definite, within the URDF reader's tolerance)."""
    moments = np.linalg.eigvalsh(pseudo_inertia(pi10))
    return bool(moments[0] >= -INERTIA_TOL * max(1.0, float(np.abs(moments).max())))


def _nearest_physical(pi10: np.ndarray) -> np.ndarray:
    """The physical body nearest to `pi10` in its pseudo-inertia (negative eigenvalues set to 0)."""
    w, v = np.linalg.eigh(pseudo_inertia(pi10))
    j = v @ np.diag(np.maximum(w, 0.0)) @ v.T
    sigma = j[:3, :3]
    i_o = np.trace(sigma) * np.eye(3) - sigma
    return np.array([j[3, 3], *j[:3, 3], i_o[0, 0], i_o[0, 1], i_o[1, 1], i_o[0, 2], i_o[1, 2], i_o[2, 2]])


@dataclass(frozen=True)
class BodyWrite:
    """How one identified body goes into its links: the carrying link's parameters (body frame)
    and the common scale of the body's other links; `exact` False when the identified body is not
    physical and the nearest physical one is written instead."""

    carrying: np.ndarray
    scale: float
    exact: bool


def split_body(identified: np.ndarray, others: np.ndarray) -> BodyWrite:
    """The identified body (10 parameters) as the carrying link plus the body's other links
    (their sum `others`) scaled by s: carrying = identified − s · others, s the largest in [0, 1]
    (times KEEP when below 1) that keeps the carrying link physical."""
    if physical(identified - others):
        return BodyWrite(identified - others, 1.0, True)
    if not physical(identified):
        target = _nearest_physical(identified)
        return BodyWrite(target, 0.0, False)
    lo, hi = 0.0, 1.0  # physical at lo, not at hi: the physical s form an interval from 0
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if physical(identified - mid * others) else (lo, mid)
    s = KEEP * lo if lo > SCALE_FLOOR else 0.0
    return BodyWrite(identified - s * others, s, True)


def _set_inertial(el: ET.Element, pi10: np.ndarray) -> None:
    m, c, i_c = _about_com(pi10)
    for old in el.findall("inertial"):
        el.remove(old)
    new = ET.Element("inertial")
    ET.SubElement(new, "origin", {"xyz": " ".join(f"{x:.17g}" for x in c), "rpy": "0 0 0"})
    ET.SubElement(new, "mass", {"value": f"{m:.17g}"})
    slots = {"ixx": (0, 0), "ixy": (0, 1), "ixz": (0, 2), "iyy": (1, 1), "iyz": (1, 2), "izz": (2, 2)}
    ET.SubElement(new, "inertia", {k: f"{i_c[a, b]:.17g}" for k, (a, b) in slots.items()})
    el.insert(0, new)


def _scale_inertial(el: ET.Element, s: float) -> None:
    inertial = el.find("inertial")
    if inertial is None:
        return
    mass = inertial.find("mass")
    if mass is not None:
        mass.set("value", f"{float(mass.get('value', '0')) * s:.17g}")
    inertia = inertial.find("inertia")
    if inertia is not None:
        for key in ("ixx", "ixy", "ixz", "iyy", "iyz", "izz"):
            if inertia.get(key) is not None:
                inertia.set(key, f"{float(inertia.get(key, '0')) * s:.17g}")


def _names(items: Sequence[str], most: int = 6) -> str:
    more = len(items) - most
    return ", ".join(items[:most]) + (f" and {more} more" if more > 0 else "")


def corrected_urdf(urdf: str, model: RobotModel, result: Identification) -> tuple[str, list[str], list[str]]:
    """The input URDF with every identified body in its links' `<inertial>` (module docstring) and
    the identified friction in `<dynamics>`; notes on what was done, and errors: the bodies that
    could not be written as identified, with the size of the difference."""
    parser = ET.XMLParser(target=ET.TreeBuilder(insert_comments=True))
    root = ET.fromstring(urdf, parser=parser)
    links = {el.get("name"): el for el in root.findall("link")}
    robot = parse_urdf(urdf)
    notes: list[str] = []
    errors: list[str] = []
    pi_old = standard_parameters(model)
    if "inertial" in result.identified:  # never with a payload: result.parameters is the robot
        for b, link in enumerate(body_links(model)):
            cols = body_columns(model, b)
            if not np.any(result.parameters[cols] - pi_old[cols]):
                continue
            members = [k for k, f in model.link_frames.items() if f.body == b and k != link]
            frames = model.link_frames
            others = sum(
                (
                    _link_parameters(robot.links[k], frames[k].rotation, frames[k].translation)
                    for k in members
                ),
                np.zeros(10),
            )
            write = split_body(result.parameters[cols], others)
            _set_inertial(links[link], write.carrying)
            if write.scale != 1.0:
                for k in members:
                    _scale_inertial(links[k], write.scale)
            identified_mass = float(result.parameters[cols][0])
            if not write.exact:
                gap = float(np.abs(write.carrying - result.parameters[cols]).max())
                eigenvalues = np.linalg.eigvalsh(pseudo_inertia(result.parameters[cols]))
                errors.append(
                    f"body of link '{link}': the identified body is not physical (mass {identified_mass:.4g} "
                    f"kg, pseudo-inertia eigenvalues {np.array2string(eigenvalues, precision=3)}); written "
                    f"as the nearest physical body, off by up to {gap:.3g} in its standard parameters "
                    f"(mass {float(write.carrying[0]):.4g} kg)"
                )
            elif write.scale != 1.0:
                scaled = f"scaled by {write.scale:.4g}" if write.scale > 0 else "emptied (mass 0)"
                notes.append(
                    f"body of link '{link}' ({identified_mass:.4g} kg identified) also holds "
                    f"{_names(members)} ({float(others[0]):.4g} kg in the URDF), more than the carrying "
                    f"link can give up and stay physical: those links are {scaled} and '{link}' carries "
                    f"the rest ({float(write.carrying[0]):.4g} kg), so that the written body is the "
                    "identified one"
                )
            elif members:
                notes.append(
                    f"body of link '{link}' also holds {_names(members)}: correction put on '{link}'"
                )
    if "friction" in result.identified or "inertial" in result.identified:
        joints = {el.get("name"): el for el in root.findall("joint")}
        for j, name in enumerate(model.joint_names):
            el = joints[name]
            dyn = el.find("dynamics")
            if dyn is None:
                dyn = ET.SubElement(el, "dynamics")
            dyn.set("damping", f"{result.viscous[j]:.17g}")
            dyn.set("friction", f"{result.coulomb[j]:.17g}")
    if np.any(result.armature > 0):
        notes.append("armature is not a URDF quantity: it is in the parameter file only")
    ET.indent(root)
    return ET.tostring(root, encoding="unicode") + "\n", notes, errors
