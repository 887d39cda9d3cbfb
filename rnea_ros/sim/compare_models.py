"""How far a plant someone else modelled (an MJCF) is from the URDF the node runs (no ROS).

    python -m rnea_ros.sim.compare_models URDF MJCF [--plant-joints U=P ...] [--samples 200] [--seed 0]

Pairs the joints and checks the kinematics as the simulator does (rnea_ros.sim.foreign_plant;
a pair that is not the same arm is refused with the joint at fault, exit 2), then prints what a
user wants to know before trusting the URDF on that robot, per paired joint:

* armature, viscous damping and dry friction (MuJoCo's `frictionloss`; the URDF's
  `<dynamics friction>`), effort limit (the MJCF actuators' force range; the URDF's `effort`)
  and position range, plant / URDF;
* the gravity torque gap, plant − URDF, RMS and max over random states within the URDF's limits
  (joints only the plant has at rest where the simulator holds them), and its RMS relative to the
  URDF's own gravity torque;
* per rigid group (the bodies one joint moves; Pinocchio and rnea_ros merge fixed links the same
  way) the mass and the gap between the centres of mass, base frames, at the first random state;
* the mass matrix gap on the paired joints, plant without its armature against the URDF's
  (relative Frobenius norm, median and max over the states).

Units: N m, kg, m (mm where the column says so), kg m², N m s/rad; rad in the offsets.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path

import mujoco
import numpy as np

from rnea_ros.algorithms.dynamics import gravity_torques, link_pose, mass_matrix
from rnea_ros.model.robot_model import RobotModel
from rnea_ros.model.urdf import parse_urdf
from rnea_ros.sim.foreign_plant import Match
from rnea_ros.sim.mujoco_arm import MujocoArm

PARAMETERS = ("armature", "damping", "coulomb")


@dataclass(frozen=True)
class Group:
    """The bodies one joint moves, on each side."""

    joint: str  # URDF name ("" for the bodies fixed to the base), or the plant's for its own joints
    plant_bodies: list[str]
    plant_mass: float  # kg
    urdf_links: list[str]
    urdf_mass: float  # kg
    com_gap: float  # m, nan when one side has no mass


@dataclass(frozen=True)
class ModelGap:
    """The numbers `text` prints; per-joint arrays follow `joints` (the paired URDF joints)."""

    urdf_path: str
    plant_path: str
    match: Match
    joints: list[str]
    plant: dict[str, np.ndarray]  # armature, damping, coulomb, effort (upper), lower, upper
    urdf: dict[str, np.ndarray]
    gravity_rms: np.ndarray  # N m, plant − URDF
    gravity_max: np.ndarray
    gravity_urdf_rms: np.ndarray  # the URDF's own
    mass_matrix_gap: tuple[float, float]  # median, max
    groups: list[Group]
    samples: int

    @property
    def gravity_relative(self) -> np.ndarray:
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(self.gravity_urdf_rms > 1e-9, self.gravity_rms / self.gravity_urdf_rms, np.nan)


def _urdf_groups(
    model: RobotModel, urdf: str, q: np.ndarray, base: str
) -> dict[int, tuple[list[str], float, np.ndarray]]:
    """Per body (-1: the root), its links, mass (kg) and centre of mass (URDF base frame)."""
    rb, pb = link_pose(model, q, base)
    out: dict[int, tuple[list[str], float, np.ndarray]] = {}
    for name, inertial in parse_urdf(urdf).links.items():
        if name not in model.link_frames:
            continue
        body = model.link_frames[name].body
        links, mass, moment = out.get(body, ([], 0.0, np.zeros(3)))
        links = [*links, name]
        if inertial is not None and inertial.mass > 0:
            r, p = link_pose(model, q, name)
            moment = moment + inertial.mass * (rb.T @ (p + r @ inertial.com - pb))
            mass += inertial.mass
        out[body] = (links, mass, moment)
    return out


def _plant_groups(
    arm: MujocoArm, q: np.ndarray, base_body: str
) -> dict[str, tuple[list[str], float, np.ndarray]]:
    """Per plant joint ("" : fixed to the base) the bodies it moves, their mass and com (plant base frame)."""
    m = arm.model
    d = mujoco.MjData(m)
    d.qpos[:] = arm.qpos_of(q)
    mujoco.mj_kinematics(m, d)
    mujoco.mj_comPos(m, d)
    base = m.body(base_body).id
    rb, pb = d.xmat[base].reshape(3, 3), d.xpos[base]
    out: dict[str, tuple[list[str], float, np.ndarray]] = {}
    for b in range(1, m.nbody):
        mover, k = "", b
        while k > 0 and mover == "":
            joints = [j for j in range(m.njnt) if m.jnt_bodyid[j] == k]
            mover = mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_JOINT, joints[-1]) if joints else ""
            k = int(m.body_parentid[k])
        bodies, mass, moment = out.get(mover, ([], 0.0, np.zeros(3)))
        mass_b = float(m.body_mass[b])
        out[mover] = (
            [*bodies, m.body(b).name],
            mass + mass_b,
            moment + mass_b * (rb.T @ (d.xipos[b] - pb)),
        )
    return out


def compare(
    urdf_path: str, plant_path: str, pairs: tuple[str, ...] = (), samples: int = 200, seed: int = 0
) -> ModelGap:
    """The gap of the module docstring; foreign_plant.Mismatch when they are not the same arm."""
    urdf = Path(urdf_path).read_text()
    arm = MujocoArm(urdf, plant=plant_path, plant_joints=pairs)
    found = arm.match
    assert found is not None  # a plant was given
    model = RobotModel.from_urdf(urdf)
    joints = list(found.urdf)
    index_arm, index_model = arm.indices(joints), [model.joint_index(j) for j in joints]
    truth = arm.plant_parameters()
    plant = {k: truth[k][index_arm] for k in PARAMETERS}
    plant["effort"] = arm.effort_upper[index_arm]
    plant["lower"], plant["upper"] = arm.lower[index_arm], arm.upper[index_arm]
    zeros = np.zeros(len(joints))
    urdf_values = {
        "armature": zeros,  # a URDF has none
        "damping": model.damping[index_model],
        "coulomb": model.coulomb[index_model],
        "effort": model.effort_limit[index_model],
        "lower": model.position_lower[index_model],
        "upper": model.position_upper[index_model],
    }
    rng = np.random.default_rng(seed)
    lo = np.where(np.isfinite(model.position_lower), model.position_lower, -np.pi)
    hi = np.where(np.isfinite(model.position_upper), model.position_upper, np.pi)
    rest = arm.q  # the plant's own joints where the simulator holds them
    n_urdf = model.nv
    gaps, own, gap_m = [], [], []
    armature = np.diag(truth["armature"])
    for _ in range(samples):
        q_u = rng.uniform(lo, hi)
        q = rest.copy()
        q[:n_urdf] = q_u
        g_m = arm.bias(q, np.zeros(arm.nv))[index_arm]
        g_u = gravity_torques(model, q_u)[index_model]
        gaps.append(g_m - g_u)
        own.append(g_u)
        m_m = (arm.mass_matrix(q) - armature)[np.ix_(index_arm, index_arm)]
        m_u = mass_matrix(model, q_u)[np.ix_(index_model, index_model)]
        gap_m.append(np.linalg.norm(m_m - m_u) / np.linalg.norm(m_u))
    gap, urdf_g = np.array(gaps), np.array(own)
    q0 = rest.copy()
    q0[:n_urdf] = np.random.default_rng(seed).uniform(lo, hi)
    return ModelGap(
        urdf_path,
        plant_path,
        found,
        joints,
        plant,
        urdf_values,
        np.sqrt(np.mean(gap**2, axis=0)),
        np.abs(gap).max(axis=0),
        np.sqrt(np.mean(urdf_g**2, axis=0)),
        (float(np.median(gap_m)), float(np.max(gap_m))),
        _groups(arm, model, urdf, found, q0),
        samples,
    )


def _groups(arm: MujocoArm, model: RobotModel, urdf: str, found: Match, q: np.ndarray) -> list[Group]:
    u_groups = _urdf_groups(model, urdf, q[: model.nv], found.base_links[0])
    p_groups = _plant_groups(arm, q, found.base_links[1])
    to_plant = dict(zip(found.urdf, found.plant, strict=True))
    rows = []
    for body, (links, mass, moment) in sorted(u_groups.items()):
        joint = "" if body < 0 else model.joint_names[body]
        plant_joint = "" if body < 0 else to_plant.get(joint, "-")  # "-": the plant lacks it
        bodies, p_mass, p_moment = p_groups.pop(plant_joint, ([], 0.0, np.zeros(3)))
        both = mass > 0 and p_mass > 0 and body >= 0
        com_gap = float(np.linalg.norm(p_moment / p_mass - moment / mass)) if both else np.nan
        rows.append(Group(joint, bodies, p_mass, links, mass, com_gap))
    for joint, (bodies, p_mass, _) in p_groups.items():  # the plant's own joints
        rows.append(Group(f"{joint} (plant only, held)", bodies, p_mass, [], 0.0, np.nan))
    return rows


def _angle(rotation: np.ndarray) -> float:
    return float(np.arccos(np.clip((np.trace(rotation) - 1) / 2, -1, 1)))


def _g(x: float) -> str:
    return f"{x:.4g}"


def text(gap: ModelGap) -> str:
    """The report of the module docstring."""
    f = gap.match
    p, u = gap.plant, gap.urdf
    out = [
        f"plant {gap.plant_path}\nURDF  {gap.urdf_path}",
        f"joints: {f.describe()}",
        f"plant only (held by the simulator): {list(f.plant_only) or 'none'}; URDF only (constant): "
        f"{list(f.urdf_only) or 'none'}",
        f"kinematics shared over {gap.samples} random states: every chain axis within "
        f"{1000 * max(e[0] for e in f.axis_error.values()):.2g} mm, "
        f"{np.degrees(max(e[1] for e in f.axis_error.values())):.2g} deg; flange "
        f"'{f.flange[1]}' / '{f.flange[0]}' within {1000 * f.flange_error[0]:.2g} mm, "
        f"{np.degrees(f.flange_error[1]):.2g} deg",
        f"bases '{f.base_links[1]}' / '{f.base_links[0]}': the plant's sits at "
        f"{np.round(f.base_transform[1], 4).tolist()} m, turned "
        f"{np.degrees(_angle(f.base_transform[0])):.3g} "
        f"deg; gravity {np.degrees(f.gravity_tilt):.2g} deg apart",
        "",
        "per joint, plant / URDF; gravity torque gap plant - URDF over the random states (N m)",
    ]
    w = max(12, *map(len, gap.joints))
    out.append(
        f"{'joint':<{w}} | {'armature':>13} | {'damping':>13} | {'friction':>11} | {'effort':>11} | "
        f"{'range plant':>19} | {'range URDF':>19} | {'gravity RMS':>11} {'max':>8} {'rel.':>7}"
    )
    for k, j in enumerate(gap.joints):
        rel = gap.gravity_relative[k]
        out.append(
            f"{j:<{w}} | {_g(p['armature'][k]):>6}/{_g(u['armature'][k]):<6} | "
            f"{_g(p['damping'][k]):>6}/{_g(u['damping'][k]):<6} | "
            f"{_g(p['coulomb'][k]):>5}/{_g(u['coulomb'][k]):<5} | "
            f"{_g(p['effort'][k]):>5}/{_g(u['effort'][k]):<5} | "
            f"[{p['lower'][k]:>8.4g}, {p['upper'][k]:>8.4g}] | "
            f"[{u['lower'][k]:>8.4g}, {u['upper'][k]:>8.4g}] | "
            f"{gap.gravity_rms[k]:>11.3g} {gap.gravity_max[k]:>8.3g} "
            + (f"{100 * rel:>6.3g}%" if np.isfinite(rel) else f"{'-':>7}")
        )
    out.append(
        f"mass matrix on the paired joints, plant without armature vs URDF: relative gap median "
        f"{gap.mass_matrix_gap[0]:.3g}, max {gap.mass_matrix_gap[1]:.3g}"
    )
    out += ["", "rigid groups (the bodies one joint moves): mass plant / URDF, kg; com gap, mm (base frames)"]
    names = [g.joint or "(fixed to the base)" for g in gap.groups]
    wg = max(map(len, names))
    for name, g in zip(names, gap.groups, strict=True):
        com = f"{1000 * g.com_gap:.3g}" if np.isfinite(g.com_gap) else "-"
        out.append(
            f"{name:<{wg}} | {_g(g.plant_mass):>8} / {_g(g.urdf_mass):<8} | "
            f"{g.plant_mass - g.urdf_mass:>+8.4g} | com {com:>8} | "
            f"{', '.join(g.plant_bodies) or '-'} / {', '.join(g.urdf_links) or '-'}"
        )
    moving = [g for g in gap.groups if g.joint]
    plant_mass, urdf_mass = sum(g.plant_mass for g in moving), sum(g.urdf_mass for g in moving)
    out.append(f"moving mass: plant {plant_mass:.4f} kg, URDF {urdf_mass:.4f} kg")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m rnea_ros.sim.compare_models", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("urdf", help="the node's URDF file")
    parser.add_argument("mjcf", help="the plant's MJCF file (e.g. MuJoCo Menagerie's panda.xml)")
    parser.add_argument(
        "--plant-joints", nargs="+", metavar="URDF_JOINT=PLANT_JOINT", help="pairs (default: chain order)"
    )
    parser.add_argument("--samples", type=int, default=200, help="random states (default 200)")
    parser.add_argument("--seed", type=int, default=0, help="of the random states (default 0)")
    args = parser.parse_args(argv)
    try:
        gap = compare(args.urdf, args.mjcf, tuple(args.plant_joints or ()), max(args.samples, 1), args.seed)
    except (OSError, ValueError) as exc:  # no such file, not a URDF, not the same arm
        print(f"compare_models: {exc}", file=sys.stderr)
        return 2
    print(text(gap))
    return 0


if __name__ == "__main__":
    sys.exit(main())
