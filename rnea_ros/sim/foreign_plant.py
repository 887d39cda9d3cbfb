"""A plant someone else modelled: an MJCF arm (MuJoCo Menagerie's, a user's own) simulated under
the node's URDF (no ROS).

`load_mjcf` compiles the MJCF as written (its inertials, armature, damping, frictionloss, joint
limits, equalities, options) with every actuator removed; the joint force range each actuator
gave (its `forcerange` times its gear, or a motor's control range) is kept as the joint's effort
limit, so that efforts can be applied within it as by ideal effort motors.

`match` pairs the plant's joints with the URDF's and checks that the two share their kinematics:

* **Pairs**: explicit ("URDF_JOINT=PLANT_JOINT"), or by chain order: each side is split as the
  demo splits an arm (`rnea_ros.sim.scenario.split_joints`: a serial chain from the root, then
  the gripper), the chains pair in order (refused, naming both, when their lengths differ) and
  so do the grippers when they have as many joints of the same kinds. Joints only the plant has
  (xArm7's six-joint gripper) are held by the simulator; joints only the URDF has get a constant
  state (0 within their limits).
* **Zero positions and directions**: q_urdf = sign · (q_plant − offset). Walking down the chain,
  each joint's sign comes from its axis, and its offset rotates (or slides) the next joint's
  axis line, for the last joint the flange frame, onto the URDF's (both branches are tried where
  an axis line alone cannot tell a flipped next axis from a half turn).
* **The check**: over random states within the URDF's limits, every chain joint's axis line and
  the flange frame (the body of the last chain joint) relative to each side's base (the body the
  chain starts from) agree within 1 mm and 0.1°. The constant base transform (where the plant's
  base sits in its world, e.g. xArm7's 0.12 m) is reported; gravity must point the same way in
  both bases (the node's model assumes the URDF's). Otherwise `Mismatch` names the first joint
  whose axis is off (the worst, as every link after it follows), with the numbers.

Frames: each side's base frame; lengths m, angles rad (deg where the name says so).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import mujoco
import numpy as np

from rnea_ros.algorithms.dynamics import link_pose
from rnea_ros.model.robot_model import GRAVITY, RobotModel
from rnea_ros.model.urdf import parse_urdf
from rnea_ros.sim.scenario import Refused, split_joints

POSITION_TOL = 1e-3  # m
ANGLE_TOL = np.radians(0.1)  # rad
SAMPLES = 200
LENGTH = 0.1  # m, weighs positions against directions when aligning an axis line
HINGE, SLIDE = int(mujoco.mjtJoint.mjJNT_HINGE), int(mujoco.mjtJoint.mjJNT_SLIDE)
URDF_KIND = {"revolute": HINGE, "continuous": HINGE, "prismatic": SLIDE}


class Mismatch(Refused):
    """The plant and the URDF are not the same arm (the message names the joint and the numbers)."""


def load_mjcf(path: str | Path) -> tuple[mujoco.MjModel, np.ndarray]:
    """The MJCF compiled as written without its actuators, and each dof's effort range (nv, 2)
    that those actuators (and the joints' `actuatorfrcrange`) allowed, ±inf where none did.
    ValueError when the file is missing or MuJoCo cannot compile it."""
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"plant file '{path}' not found")
    try:
        spec = mujoco.MjSpec.from_file(str(path))
        original = spec.compile()
    except Exception as exc:  # MuJoCo raises ValueError, or its own errors, on a bad model
        raise ValueError(f"plant '{path}': MuJoCo cannot load it: {exc}") from None
    limits = np.tile([-np.inf, np.inf], (original.nv, 1))
    for a in range(original.nu):
        if original.actuator_trntype[a] != mujoco.mjtTrn.mjTRN_JOINT:
            continue  # a tendon's (a gripper's) or a site's: not one joint's effort
        dof = original.jnt_dofadr[original.actuator_trnid[a, 0]]
        gear = original.actuator_gear[a, 0]
        force = _actuator_range(original, a)
        if force is not None:
            lo, hi = sorted(gear * force)
            limits[dof] = max(limits[dof, 0], lo), min(limits[dof, 1], hi)
    for j in range(original.njnt):
        if original.jnt_actfrclimited[j]:
            dof = original.jnt_dofadr[j]
            lo, hi = original.jnt_actfrcrange[j]
            limits[dof] = max(limits[dof, 0], lo), min(limits[dof, 1], hi)
    for actuator in list(spec.actuators):
        spec.delete(actuator)
    model = spec.compile()
    if model.nq != model.nv or np.any((model.jnt_type != HINGE) & (model.jnt_type != SLIDE)):
        raise ValueError(f"plant '{path}': only fixed-base arms of hinge and slide joints are supported")
    return model, limits


def _actuator_range(model: mujoco.MjModel, a: int) -> np.ndarray | None:
    """The actuator's force range: its forcerange, or a motor's gain times its control range."""
    if model.actuator_forcelimited[a]:
        return model.actuator_forcerange[a].copy()
    motor = (
        model.actuator_gaintype[a] == mujoco.mjtGain.mjGAIN_FIXED
        and model.actuator_biastype[a] == mujoco.mjtBias.mjBIAS_NONE
        and model.actuator_dyntype[a] == mujoco.mjtDyn.mjDYN_NONE
    )
    if motor and model.actuator_ctrllimited[a]:
        return model.actuator_gainprm[a, 0] * model.actuator_ctrlrange[a]
    return None


def plant_tree(model: mujoco.MjModel) -> tuple[list[str], list[int]]:
    """The plant's joint names and each one's parent joint (-1: none), MuJoCo's order."""
    names = [mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_JOINT, j) or f"joint{j}" for j in range(model.njnt)]
    parent = []
    for j in range(model.njnt):
        body = int(model.jnt_bodyid[j])
        earlier = [i for i in range(j) if model.jnt_bodyid[i] == body]
        if earlier:
            parent.append(earlier[-1])
            continue
        p = -1
        body = int(model.body_parentid[body])
        while body > 0 and p < 0:
            mine = [i for i in range(model.njnt) if model.jnt_bodyid[i] == body]
            p = mine[-1] if mine else -1
            body = int(model.body_parentid[body])
        parent.append(p)
    return names, parent


@dataclass(frozen=True)
class Match:
    """How the plant's joints stand for the URDF's, and how well their kinematics agree."""

    urdf: tuple[str, ...]  # mapped URDF joints, URDF order
    plant: tuple[str, ...]  # their plant joints
    sign: np.ndarray  # q_urdf = sign (q_plant - offset)
    offset: np.ndarray  # rad or m, plant coordinates
    chain: tuple[str, ...]  # the URDF's chain (checked kinematically), a prefix-ordered part of `urdf`
    plant_only: tuple[str, ...]  # held by the simulator
    urdf_only: tuple[str, ...]  # constant in the simulator's joint_states
    base_links: tuple[str, str]  # (URDF link, plant body) the chain starts from
    flange: tuple[str, str]  # (URDF link, plant body) moved by the chain's last joint
    base_transform: tuple[np.ndarray, np.ndarray]  # (R, p): plant world = R · URDF root + p, bases aligned
    flange_error: tuple[float, float]  # max over the samples: m, rad
    axis_error: dict[str, tuple[float, float]] = field(default_factory=dict)  # per chain joint: m, rad
    gravity_tilt: float = 0.0  # rad between the two bases' gravity

    def sign_of(self, urdf_joint: str) -> float:
        return float(self.sign[self.urdf.index(urdf_joint)])

    def describe(self) -> str:
        pairs = ", ".join(
            f"{u}={p}" + (" (reversed)" if s < 0 else "") + (f" (offset {o:+.4g})" if o else "")
            for u, p, s, o in zip(self.urdf, self.plant, self.sign, self.offset, strict=True)
        )
        return pairs


def _pairs_given(
    pairs: Sequence[str], urdf_names: Sequence[str], plant_names: Sequence[str]
) -> dict[str, str]:
    given: dict[str, str] = {}
    for item in pairs:
        u, sep, p = item.partition("=")
        u, p = u.strip(), p.strip()
        if not sep or not u or not p:
            raise Mismatch(f"plant joint pair '{item}' is not URDF_JOINT=PLANT_JOINT")
        if u not in urdf_names:
            raise Mismatch(
                f"plant joint pair '{item}': '{u}' is not a movable joint of the URDF {list(urdf_names)}"
            )
        if p not in plant_names:
            raise Mismatch(
                f"plant joint pair '{item}': '{p}' is not a joint of the plant {list(plant_names)}"
            )
        if u in given or p in given.values():
            raise Mismatch(f"plant joint pair '{item}': a joint paired twice")
        given[u] = p
    return given


def pair_joints(model: RobotModel, plant: mujoco.MjModel, pairs: Sequence[str] = ()) -> dict[str, str]:
    """URDF joint → plant joint (module docstring); Mismatch naming both sides when the chains
    cannot be paired."""
    u_names, u_parent = list(model.joint_names), [int(p) for p in model.parent]
    p_names, p_parent = plant_tree(plant)
    try:
        u_chain, u_grip = split_joints(u_names, u_parent)
    except Refused as exc:
        raise Mismatch(f"URDF: {exc}") from None
    try:
        p_chain, p_grip = split_joints(p_names, p_parent)
    except Refused as exc:
        raise Mismatch(f"plant: {exc}") from None
    chain = [u_names[i] for i in u_chain]
    if pairs:
        given = _pairs_given(pairs, u_names, p_names)
        missing = [j for j in chain if j not in given]
        if missing:
            raise Mismatch(f"--plant-joints pairs no plant joint with the URDF's chain joints {missing}")
        mapping = given
    else:
        plant_chain = [p_names[i] for i in p_chain]
        if len(plant_chain) != len(chain):
            raise Mismatch(
                f"the plant's chain {plant_chain} ({len(plant_chain)} joints) and the URDF's chain {chain} "
                f"({len(chain)} joints) cannot be paired in chain order; pair them with --plant-joints "
                "URDF_JOINT=PLANT_JOINT ..."
            )
        mapping = dict(zip(chain, plant_chain, strict=True))
        kinds = [URDF_KIND.get(model.joint_types[i], -1) for i in u_grip]
        if len(u_grip) == len(p_grip) and kinds == [int(plant.jnt_type[i]) for i in p_grip]:
            mapping.update((u_names[i], p_names[j]) for i, j in zip(u_grip, p_grip, strict=True))
    for u, p in mapping.items():
        utype = model.joint_types[model.joint_index(u)]
        if URDF_KIND.get(utype, -1) != int(plant.joint(p).type[0]):
            raise Mismatch(f"URDF joint '{u}' ({utype}) and plant joint '{p}' are of different kinds")
    return mapping


class _Sides:
    """Axis lines and flange frames of both models relative to their bases."""

    def __init__(
        self, model: RobotModel, urdf: str, plant: mujoco.MjModel, chain: list[str], partners: list[str]
    ):
        self.model, self.plant = model, plant
        joints = {j.name: j for j in parse_urdf(urdf).joints}
        self.u_child = [joints[j].child for j in chain]
        self.u_axis = [joints[j].axis for j in chain]
        self.u_base = joints[chain[0]].parent
        self.u_index = [model.joint_index(j) for j in chain]
        self.p_joint = [plant.joint(j).id for j in partners]
        self.p_dof = [int(plant.jnt_dofadr[j]) for j in self.p_joint]
        self.p_flange = int(plant.jnt_bodyid[self.p_joint[-1]])
        self.p_base = int(plant.body_parentid[plant.jnt_bodyid[self.p_joint[0]]])
        self.data = mujoco.MjData(plant)
        lo, hi = plant.jnt_range[:, 0], plant.jnt_range[:, 1]
        limited = plant.jnt_limited.astype(bool)
        self.p_rest = plant.qpos0.copy()
        for j in range(plant.njnt):
            if limited[j]:
                a = plant.jnt_qposadr[j]
                self.p_rest[a] = np.clip(self.p_rest[a], lo[j], hi[j])
        self.u_rest = np.clip(np.zeros(model.nv), model.position_lower, model.position_upper)

    def urdf(self, q: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(axes (n, 3), points (n, 3), flange R, flange p) at the chain's q, URDF base frame."""
        full = self.u_rest.copy()
        full[self.u_index] = q
        rb, pb = link_pose(self.model, full, self.u_base)
        axes, points = [], []
        for child, axis in zip(self.u_child, self.u_axis, strict=True):
            r, p = link_pose(self.model, full, child)
            axes.append(rb.T @ (r @ axis))
            points.append(rb.T @ (p - pb))
        r, p = link_pose(self.model, full, self.u_child[-1])
        return np.array(axes), np.array(points), rb.T @ r, rb.T @ (p - pb)

    def plant_frames(self, q: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The same for the plant at the chain's q (plant coordinates), plant base frame."""
        d = self.data
        d.qpos[:] = self.p_rest
        d.qpos[self.p_dof] = q
        mujoco.mj_kinematics(self.plant, d)
        rb, pb = d.xmat[self.p_base].reshape(3, 3), d.xpos[self.p_base]
        axes = (rb.T @ d.xaxis[self.p_joint].T).T
        points = (rb.T @ (d.xanchor[self.p_joint] - pb).T).T
        rf, pf = d.xmat[self.p_flange].reshape(3, 3), d.xpos[self.p_flange]
        return axes, points, rb.T @ rf, rb.T @ (pf - pb)


def _line_error(a_u, p_u, a_m, p_m) -> tuple[float, float]:
    """(distance m, angle rad) between two oriented axis lines (direction, point)."""
    angle = float(np.arccos(np.clip(a_u @ a_m, -1.0, 1.0)))
    gap = p_m - p_u
    distance = float(np.linalg.norm(gap - (gap @ a_u) * a_u))
    return distance, angle


def _frame_error(r_u, p_u, r_m, p_m) -> tuple[float, float]:
    cos = np.clip((np.trace(r_u.T @ r_m) - 1.0) / 2.0, -1.0, 1.0)
    return float(np.linalg.norm(p_m - p_u)), float(np.arccos(cos))


def _foot(axis: np.ndarray, point: np.ndarray, d: np.ndarray, c: np.ndarray) -> np.ndarray:
    """The point of line (c, d) nearest the line (point, axis) (any point when parallel)."""
    w = c - point
    b = axis @ d
    denom = 1.0 - b * b
    if denom < 1e-12:
        return c
    t = (b * (axis @ w) - d @ w) / denom
    return c + t * d


def _rotation_about(axis: np.ndarray, pairs: list[tuple[np.ndarray, np.ndarray]]) -> float:
    """The angle about `axis` that best turns each v onto its u (least squares); 0 when unobservable."""
    s = c = 0.0
    for v, u in pairs:
        v_perp, u_perp = v - (v @ axis) * axis, u - (u @ axis) * axis
        s += float(axis @ np.cross(v_perp, u_perp))
        c += float(v_perp @ u_perp)
    return float(np.arctan2(s, c)) if abs(s) + abs(c) > 1e-12 else 0.0


class _Search:
    """Signs and offsets down the chain (module docstring), depth first over the ambiguous ones."""

    def __init__(self, sides: _Sides, q_ref: np.ndarray, kinds: list[int]):
        self.sides, self.q_ref, self.kinds = sides, q_ref, kinds
        self.n = len(q_ref)
        self.target = sides.urdf(q_ref)
        self.deepest = (-1, (np.inf, np.inf))  # the furthest joint reached, its best error
        self.solutions: list[tuple[np.ndarray, np.ndarray]] = []

    def plant(self, sign: np.ndarray, offset: np.ndarray):
        return self.sides.plant_frames(sign * self.q_ref + offset)

    def run(self) -> tuple[np.ndarray, np.ndarray] | None:
        """The solution with the smallest offsets (then the fewest reversed joints), or None.
        Several can fit where axes meet: the Panda's shoulder with joint 2 reversed is also its
        shoulder with joints 1 and 3 turned half a turn."""
        axes_u, points_u, _, _ = self.target
        axes_m, points_m, _, _ = self.plant(np.ones(self.n), np.zeros(self.n))
        for s0 in (1.0, -1.0):
            error = _line_error(s0 * axes_u[0], points_u[0], axes_m[0], points_m[0])
            if error[0] <= POSITION_TOL and error[1] <= ANGLE_TOL:
                self._step(0, np.r_[s0, np.ones(self.n - 1)], np.zeros(self.n))
            else:
                self._note(0, error)
        if not self.solutions:
            return None
        return min(
            self.solutions,
            key=lambda found: (
                round(float(np.abs(_wrap(found[1], self.kinds)).sum()), 6),
                int(np.sum(found[0] < 0)),
            ),
        )

    def _note(self, k: int, error: tuple[float, float]) -> None:
        k0, e0 = self.deepest
        if k > k0 or (
            k == k0
            and error[0] / POSITION_TOL + error[1] / ANGLE_TOL < e0[0] / POSITION_TOL + e0[1] / ANGLE_TOL
        ):
            self.deepest = (k, error)

    def _step(self, k: int, sign: np.ndarray, offset: np.ndarray) -> None:
        """Joint k's sign is set: find its offset (and the next joint's sign); every full
        solution goes to `solutions`."""
        axes_u, points_u, r_u, p_u = self.target
        axes_m, points_m, r_m, p_m = self.plant(sign, offset)
        a, p = axes_m[k], points_m[k]
        if k == self.n - 1:  # the flange frame fixes the last offset
            if self.kinds[k] == HINGE:
                delta = _rotation_about(a, [(r_m[:, i], r_u[:, i]) for i in range(3)])
            else:
                delta = float(a @ (p_u - p_m))
            trial = offset.copy()
            trial[k] += delta
            _, _, r2, p2 = self.plant(sign, trial)
            error = _frame_error(r_u, p_u, r2, p2)
            if error[0] <= POSITION_TOL and error[1] <= ANGLE_TOL:
                self.solutions.append((sign, trial))
            else:
                self._note(k + 1, error)
            return
        d_m, c_m = axes_m[k + 1], points_m[k + 1]
        for s_next in (1.0, -1.0):
            d_u, c_u = s_next * axes_u[k + 1], points_u[k + 1]
            foot_m, foot_u = _foot(a, p, d_m, c_m), _foot(a, p, d_u, c_u)
            if self.kinds[k] == HINGE:
                delta = _rotation_about(a, [(d_m, d_u), ((foot_m - p) / LENGTH, (foot_u - p) / LENGTH)])
            else:
                delta = float(a @ (foot_u - foot_m))
            trial_offset, trial_sign = offset.copy(), sign.copy()
            trial_offset[k] += delta
            trial_sign[k + 1] = s_next
            axes2, points2, _, _ = self.plant(trial_sign, trial_offset)
            error = _line_error(d_u, c_u, axes2[k + 1], points2[k + 1])
            if error[0] <= POSITION_TOL and error[1] <= ANGLE_TOL:
                self._step(k + 1, trial_sign, trial_offset)
            else:
                self._note(k + 1, error)


def _wrap(offset: np.ndarray, kinds: list[int]) -> np.ndarray:
    """Hinge offsets within [-pi, pi); offsets below a tenth of the tolerance (a URDF's rounded
    1.5708 for pi/2) are 0."""
    out = offset.copy()
    for k, kind in enumerate(kinds):
        if kind == HINGE:
            out[k] = (out[k] + np.pi) % (2 * np.pi) - np.pi
        if abs(out[k]) < (ANGLE_TOL if kind == HINGE else POSITION_TOL) / 10:
            out[k] = 0.0
    return out


def _sample(model: RobotModel, index: list[int], rng: np.random.Generator, count: int) -> np.ndarray:
    lo = np.where(np.isfinite(model.position_lower), model.position_lower, -np.pi)[index]
    hi = np.where(np.isfinite(model.position_upper), model.position_upper, np.pi)[index]
    return rng.uniform(lo, hi, (count, len(index)))


def match(
    urdf: str, plant: mujoco.MjModel, pairs: Sequence[str] = (), samples: int = SAMPLES, seed: int = 0
) -> Match:
    """Pair and check the plant against the URDF (module docstring); Mismatch when they differ."""
    model = RobotModel.from_urdf(urdf)
    mapping = pair_joints(model, plant, pairs)
    u_names = list(model.joint_names)
    chain_idx, _ = split_joints(u_names, [int(p) for p in model.parent])
    chain = [u_names[i] for i in chain_idx]
    partners = [mapping[j] for j in chain]
    sides = _Sides(model, urdf, plant, chain, partners)
    kinds = [URDF_KIND[model.joint_types[i]] for i in sides.u_index]
    rng = np.random.default_rng(seed)
    states = _sample(model, sides.u_index, rng, samples + 1)
    search = _Search(sides, states[0], kinds)
    found = search.run()
    if found is None:
        k, (dist, angle) = search.deepest
        where = (
            f"joint '{chain[k]}' (plant '{partners[k]}')"
            if k < len(chain)
            else (f"the flange ('{sides.u_child[-1]}' / '{plant.body(sides.p_flange).name}')")
        )
        raise Mismatch(
            f"the plant does not have the URDF's kinematics: {where} is off by {1000 * dist:.3g} mm, "
            f"{np.degrees(angle):.3g} deg at its best zero offset and direction (tolerance "
            f"{1000 * POSITION_TOL:g} mm, {np.degrees(ANGLE_TOL):g} deg)"
        )
    sign, offset = found
    offset = _wrap(offset, kinds)
    axis_error = {j: (0.0, 0.0) for j in chain}
    flange = (0.0, 0.0)
    for q in states:
        axes_u, points_u, r_u, p_u = sides.urdf(q)
        axes_m, points_m, r_m, p_m = sides.plant_frames(sign * q + offset)
        for k, j in enumerate(chain):
            e = _line_error(sign[k] * axes_u[k], points_u[k], axes_m[k], points_m[k])
            axis_error[j] = (max(axis_error[j][0], e[0]), max(axis_error[j][1], e[1]))
        e = _frame_error(r_u, p_u, r_m, p_m)
        flange = (max(flange[0], e[0]), max(flange[1], e[1]))
    bad = [j for j in chain if axis_error[j][0] > POSITION_TOL or axis_error[j][1] > ANGLE_TOL]
    if bad or flange[0] > POSITION_TOL or flange[1] > ANGLE_TOL:
        j = bad[0] if bad else chain[-1]
        dist, angle = axis_error[j] if bad else flange
        what = f"joint '{j}' (plant '{mapping[j]}')'s axis" if bad else "the flange"
        raise Mismatch(
            f"the plant does not have the URDF's kinematics: over {samples} random states {what} is "
            f"off by up to {1000 * dist:.3g} mm, {np.degrees(angle):.3g} deg (tolerance "
            f"{1000 * POSITION_TOL:g} mm, {np.degrees(ANGLE_TOL):g} deg)"
        )
    # where the bases sit, and which way gravity points in each
    d = sides.data
    d.qpos[:] = sides.p_rest
    mujoco.mj_kinematics(plant, d)
    rb_m, pb_m = d.xmat[sides.p_base].reshape(3, 3).copy(), d.xpos[sides.p_base].copy()
    rb_u, pb_u = link_pose(model, sides.u_rest, sides.u_base)
    g_m, g_u = rb_m.T @ plant.opt.gravity, rb_u.T @ np.array(GRAVITY)
    tilt = float(
        np.arccos(np.clip(g_m @ g_u / max(np.linalg.norm(g_m) * np.linalg.norm(g_u), 1e-300), -1, 1))
    )
    if tilt > ANGLE_TOL or abs(np.linalg.norm(g_m) - np.linalg.norm(g_u)) > 1e-6 * np.linalg.norm(g_u):
        raise Mismatch(
            f"gravity differs: {np.round(g_m, 4).tolist()} m/s^2 in the plant's base "
            f"'{plant.body(sides.p_base).name}', {np.round(g_u, 4).tolist()} in the URDF's '{sides.u_base}' "
            f"({np.degrees(tilt):.3g} deg apart; the node's model takes the URDF's)"
        )
    urdf_mapped = [j for j in u_names if j in mapping]
    index = {j: chain.index(j) for j in chain}
    full_sign = np.array([sign[index[j]] if j in index else 1.0 for j in urdf_mapped])
    full_offset = np.array([offset[index[j]] if j in index else 0.0 for j in urdf_mapped])
    p_names, _ = plant_tree(plant)
    return Match(
        tuple(urdf_mapped),
        tuple(mapping[j] for j in urdf_mapped),
        full_sign,
        full_offset,
        tuple(chain),
        tuple(p for p in p_names if p not in mapping.values()),
        tuple(j for j in u_names if j not in mapping),
        (sides.u_base, plant.body(sides.p_base).name),
        (sides.u_child[-1], plant.body(sides.p_flange).name),
        (rb_m @ rb_u.T, pb_m - rb_m @ rb_u.T @ pb_u),
        flange,
        axis_error,
        tilt,
    )


def plant_home(urdf: str, plant: mujoco.MjModel, found: Match) -> dict[str, float]:
    """The plant's own start pose in the URDF's joints: its keyframe named "home" (else its first
    keyframe), within the URDF's limits; {} when it has none."""
    if plant.nkey == 0:
        return {}
    names = [mujoco.mj_id2name(plant, mujoco.mjtObj.mjOBJ_KEY, k) for k in range(plant.nkey)]
    key = names.index("home") if "home" in names else 0
    qpos = plant.key_qpos[key]
    model = RobotModel.from_urdf(urdf)
    home = {}
    for u, p, sign, offset in zip(found.urdf, found.plant, found.sign, found.offset, strict=True):
        i = model.joint_index(u)
        value = sign * (qpos[plant.jnt_qposadr[plant.joint(p).id]] - offset)
        home[u] = float(np.clip(value, model.position_lower[i], model.position_upper[i]))
    return home
