"""Linear-in-parameters dynamics: τ = Y(q, q̇, q̈) π, and the parameter vector π of a RobotModel.

π has 13 n entries for a model of n bodies (one body per movable joint, links on fixed joints
merged into it, body frame = the joint's child link frame; see `model`):

  π[10 i : 10 i + 10]  body i's standard parameters, Pinocchio's dynamic-parameter order:
                       m (kg), m c_x, m c_y, m c_z (kg m, body frame),
                       I_xx, I_xy, I_yy, I_xz, I_yz, I_zz (kg m², about the body frame origin)
  π[10 n + j]          viscous friction F_v of joint j (N m s/rad or N s/m)
  π[11 n + j]          Coulomb friction F_c of joint j (N m or N)
  π[12 n + j]          armature (reflected rotor inertia) of joint j (kg m² or kg)

The friction columns follow `friction.friction_torques` without Stribeck term: F_v q̇ +
F_c tanh(q̇ / v_ε), v_ε = `smoothing_velocity` (the node's default 0.01 rad/s), or F_c sign(q̇)
with coulomb="sign". So Y π = rnea(model, q, q̇, q̈) + friction_torques(Friction(F_v, F_c, v_ε), q̇)
with the model's armature.

With a floating or planar root the base body (the root link and the links fixed to it) is one
more body, the last (π[10 n : 10 n + 10], frame the root link's), so π has 10 (n + 1) + 3 n
entries, and Y has nv = root_nv + n rows, the root joint's first (see `algorithms.dynamics`).

`regressor` has its own batched forward recursion (numpy, all samples at once): body velocity,
acceleration and the body wrench's linear map in π, expressed in the root frame and projected on
every ancestor joint's axis.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import numpy.typing as npt

from rnea_ros.algorithms.configuration import base_placement
from rnea_ros.algorithms.dynamics import GRAVITY
from rnea_ros.compiled.kernels.layout import (
    B_ARMATURE,
    B_AXIS,
    B_INERTIA,
    B_MASS,
    B_MOMENT,
    B_POS,
    B_ROT,
    BODY_STRIDE,
    PRISMATIC,
    RT_MASS,
)
from rnea_ros.errors import RneaError
from rnea_ros.friction.model import SMOOTHING_VELOCITY
from rnea_ros.model.robot_model import RobotModel

PER_BODY = 10
BODY_PARAMETERS = ("m", "mx", "my", "mz", "Ixx", "Ixy", "Iyy", "Ixz", "Iyz", "Izz")
JOINT_PARAMETERS = ("viscous", "coulomb", "armature")
# π inertia order (xx, xy, yy, xz, yz, zz) → offsets in a body record (xx, xy, xz, yy, yz, zz)
_INERTIA_SLOTS = B_INERTIA + np.array([0, 1, 3, 2, 4, 5])
# π's mass and first moment (m, mx, my, mz) → offsets in a body record
_MASS_MOMENT = np.array([B_MASS, B_MOMENT, B_MOMENT + 1, B_MOMENT + 2])
# π's (m, mx, my, mz, inertia in π order) → offsets in a root record (RT_MASS, then as in a body)
_ROOT_SLOTS = RT_MASS - B_MASS + np.concatenate([_MASS_MOMENT, _INERTIA_SLOTS])
_BASE_ROWS = {6: [0, 1, 2, 3, 4, 5], 3: [0, 1, 5]}  # root_nv → spatial rows of the root velocities


def _bodies(model: RobotModel) -> int:
    """Bodies with parameters: one per joint, and the base with a floating root."""
    return model.njoints + (1 if model.floating else 0)


def parameter_count(model: RobotModel) -> int:
    """Length of π: 13 per joint (and 10 for a floating base)."""
    return PER_BODY * _bodies(model) + len(JOINT_PARAMETERS) * model.njoints


def body_columns(model: RobotModel, body: int) -> slice:
    """Columns of body `body`'s 10 standard parameters."""
    return slice(PER_BODY * body, PER_BODY * (body + 1))


def joint_columns(model: RobotModel, kind: str) -> slice:
    """Columns of one per-joint parameter, kind "viscous", "coulomb" or "armature"."""
    try:
        k = JOINT_PARAMETERS.index(kind)
    except ValueError:
        raise RneaError(f"kind must be one of {JOINT_PARAMETERS}, got '{kind}'") from None
    n = model.njoints
    start = PER_BODY * _bodies(model) + k * n
    return slice(start, start + n)


def body_links(model: RobotModel) -> tuple[str, ...]:
    """Name of each body's frame link (the child link of its joint), body order."""
    names: list[str | None] = [None] * model.njoints
    for link, frame in model.link_frames.items():  # preorder: the joint's child link comes first
        if frame.body >= 0 and names[frame.body] is None:
            names[frame.body] = link
    if model.floating:
        names.append(model.root_link)
    return tuple(names)  # type: ignore[arg-type]


def parameter_names(model: RobotModel) -> list[str]:
    """One name per entry of π: "<body link>.<m|mx|…|Izz>", then "<joint>.<viscous|coulomb|armature>"."""
    names = [f"{link}.{p}" for link in body_links(model) for p in BODY_PARAMETERS]
    return names + [f"{j}.{kind}" for kind in JOINT_PARAMETERS for j in model.joint_names]


def standard_parameters(model: RobotModel) -> np.ndarray:
    """π of the model (payload included, as in `model.body`), with its URDF damping, friction and
    armature; see the module docstring for the layout and units."""
    rec = model.body.reshape(model.njoints, BODY_STRIDE)
    inertial = np.concatenate([rec[:, _MASS_MOMENT], rec[:, _INERTIA_SLOTS]], axis=1).reshape(-1)
    base = model.root_record[_ROOT_SLOTS] if model.floating else np.zeros(0)
    return np.concatenate([inertial, base, model.damping, model.coulomb, rec[:, B_ARMATURE]])


def _readonly(a: np.ndarray) -> np.ndarray:
    a = np.ascontiguousarray(a, dtype=float)
    a.flags.writeable = False
    return a


def with_parameters(model: RobotModel, pi: npt.ArrayLike) -> RobotModel:
    """A copy of the model with every body's inertial, the friction (`damping`, `coulomb`) and the
    armature taken from π. The new bodies are the robot as it is: any payload of `model` is taken
    to be inside π (`payload` becomes None; a later `with_payload` adds to these bodies).

    π is not required to be physically consistent (see `identification.consistency`), but
    friction and armature must be ≥ 0 (ValueError naming the entry otherwise).
    """
    pi = np.asarray(pi, dtype=float).reshape(-1)
    n = model.njoints
    if pi.shape != (parameter_count(model),):
        raise RneaError(f"pi must have {parameter_count(model)} values, got {pi.size}")
    if not np.all(np.isfinite(pi)):
        raise RneaError("pi contains NaN or Inf")
    names = parameter_names(model)
    for kind in JOINT_PARAMETERS:
        cols = joint_columns(model, kind)
        bad = np.flatnonzero(pi[cols] < 0)
        if bad.size:
            raise RneaError(f"pi: {names[cols.start + bad[0]]} must be >= 0, got {pi[cols][bad[0]]}")
    body = model.body.reshape(n, BODY_STRIDE).copy()
    inertial = pi[: PER_BODY * n].reshape(n, PER_BODY)
    body[:, _MASS_MOMENT] = inertial[:, :4]
    body[:, _INERTIA_SLOTS] = inertial[:, 4:]
    body[:, B_ARMATURE] = pi[joint_columns(model, "armature")]
    body = _readonly(body.reshape(-1))
    root = model.root_record.copy()
    if model.floating:
        root[_ROOT_SLOTS] = pi[PER_BODY * n : PER_BODY * (n + 1)]
    root = _readonly(root)
    return replace(
        model,
        body=body,
        _bare_body=body,
        root_record=root,
        _bare_root=root,
        payload=None,
        damping=_readonly(pi[joint_columns(model, "viscous")]),
        coulomb=_readonly(pi[joint_columns(model, "coulomb")]),
    )


def _skew(v: np.ndarray) -> np.ndarray:
    """(..., 3) → (..., 3, 3) with skew(v) @ x = v × x."""
    s = np.zeros((*v.shape[:-1], 3, 3))
    s[..., 0, 1], s[..., 0, 2] = -v[..., 2], v[..., 1]
    s[..., 1, 0], s[..., 1, 2] = v[..., 2], -v[..., 0]
    s[..., 2, 0], s[..., 2, 1] = -v[..., 1], v[..., 0]
    return s


def _inertia_map(v: np.ndarray) -> np.ndarray:
    """(..., 3) → (..., 3, 6) with L(v) @ [xx, xy, yy, xz, yz, zz] = I v."""
    out = np.zeros((*v.shape[:-1], 3, 6))
    x, y, z = v[..., 0], v[..., 1], v[..., 2]
    out[..., 0, 0], out[..., 0, 1], out[..., 0, 3] = x, y, z
    out[..., 1, 1], out[..., 1, 2], out[..., 1, 4] = x, y, z
    out[..., 2, 3], out[..., 2, 4], out[..., 2, 5] = x, y, z
    return out


def _axis_rotation(axis: np.ndarray, angle: np.ndarray) -> np.ndarray:
    """Rotations by `angle` (N,) about the unit `axis` (3,): (N, 3, 3), Rodrigues."""
    k = _skew(axis)
    s, c = np.sin(angle)[:, None, None], np.cos(angle)[:, None, None]
    return np.eye(3) + s * k + (1.0 - c) * (k @ k)


def _states(model: RobotModel, q, qd, qdd) -> tuple[np.ndarray, np.ndarray, np.ndarray, bool]:
    out = []
    for name, x in (("q", q), ("qd", qd), ("qdd", qdd)):
        n = model.nq if name == "q" else model.nv
        a = np.asarray(x, dtype=float)
        if a.ndim not in (1, 2) or a.shape[-1] != n:
            raise RneaError(f"{name} must have shape ({n},) or (N, {n}), got {a.shape}")
        if not np.all(np.isfinite(a)):
            raise RneaError(f"{name} contains NaN or Inf")
        out.append(np.atleast_2d(a))
    single = np.ndim(q) == 1
    if not (out[0].shape[:-1] == out[1].shape[:-1] == out[2].shape[:-1]):
        raise RneaError(f"q, qd, qdd must be one state or equal batches, got {[a.shape for a in out]}")
    return out[0], out[1], out[2], single


def regressor(
    model: RobotModel,
    q: npt.ArrayLike,
    qd: npt.ArrayLike,
    qdd: npt.ArrayLike,
    *,
    gravity: npt.ArrayLike = GRAVITY,
    coulomb: str = "tanh",
    smoothing_velocity: float = SMOOTHING_VELOCITY,
) -> np.ndarray:
    """Y with τ = Y π (module docstring): (nv, len π) for one state, (N, nv, len π) for a batch.

    gravity in the root frame (the world with a floating root, m/s²); coulomb "tanh"
    (tanh(q̇ / smoothing_velocity)) or "sign".
    """
    qf, qdf, qddf, single = _states(model, q, qd, qdd)
    nq0, nv0 = model.root_nq, model.root_nv
    q, qd, qdd = qf[:, nq0:], qdf[:, nv0:], qddf[:, nv0:]
    g = np.asarray(gravity, dtype=float).reshape(-1)
    if g.shape != (3,) or not np.all(np.isfinite(g)):
        raise RneaError("gravity must be 3 finite numbers")
    if coulomb not in ("tanh", "sign"):
        raise RneaError(f"coulomb must be 'tanh' or 'sign', got '{coulomb}'")
    if coulomb == "tanh" and not (np.isfinite(smoothing_velocity) and smoothing_velocity > 0):
        raise RneaError("smoothing_velocity must be finite and > 0")
    N, n = q.shape
    rec = model.body.reshape(n, BODY_STRIDE)
    # the root's motion, root frame: ω, α and the origin's acceleration minus gravity
    root_w, root_dw, root_acc = np.zeros((N, 3)), np.zeros((N, 3)), np.broadcast_to(-g, (N, 3))
    if nv0:
        base_rot = np.stack([base_placement(model, x)[0] for x in qf])
        twist, dtwist = np.zeros((N, 6)), np.zeros((N, 6))
        twist[:, _BASE_ROWS[nv0]], dtwist[:, _BASE_ROWS[nv0]] = qdf[:, :nv0], qddf[:, :nv0]
        root_w, root_dw = twist[:, 3:], dtwist[:, 3:]
        root_acc = dtwist[:, :3] + np.cross(root_w, twist[:, :3]) - np.einsum("nba,b->na", base_rot, g)
    r0 = np.empty((n, N, 3, 3))  # body rotation in the root frame
    p0 = np.empty((n, N, 3))  # body origin in the root frame
    w = np.empty((n, N, 3))  # angular velocity, body frame
    dw = np.empty((n, N, 3))  # angular acceleration, body frame
    acc = np.empty((n, N, 3))  # linear acceleration of the body origin minus gravity, body frame
    for i in range(n):
        r_tree = rec[i, B_ROT : B_ROT + 9].reshape(3, 3)
        p_tree, e = rec[i, B_POS : B_POS + 3], rec[i, B_AXIS : B_AXIS + 3]
        lam = int(model.parent[i])
        prismatic = model.jtype[i] == PRISMATIC
        if prismatic:
            rot = np.broadcast_to(r_tree, (N, 3, 3))
            p = p_tree + (r_tree @ e) * q[:, i, None]
        else:
            rot = r_tree @ _axis_rotation(e, q[:, i])
            p = np.broadcast_to(p_tree, (N, 3))
        if lam < 0:
            wl, dwl = root_w, root_dw
            al = root_acc + np.cross(dwl, p) + np.cross(wl, np.cross(wl, p))
            r0[i], p0[i] = rot, p
        else:
            wl, dwl = w[lam], dw[lam]
            al = acc[lam] + np.cross(dwl, p) + np.cross(wl, np.cross(wl, p))
            r0[i] = r0[lam] @ rot
            p0[i] = p0[lam] + np.einsum("nab,nb->na", r0[lam], p)
        wi = np.einsum("nba,nb->na", rot, wl)  # parent → body: Rᵀ x
        dwi = np.einsum("nba,nb->na", rot, dwl)
        ai = np.einsum("nba,nb->na", rot, al)
        v, a = e * qd[:, i, None], e * qdd[:, i, None]
        if prismatic:
            ai = ai + 2.0 * np.cross(wi, v) + a
        else:
            dwi = dwi + np.cross(wi, v) + a
            wi = wi + v
        w[i], dw[i], acc[i] = wi, dwi, ai
    # Body wrench (force; moment about the body origin) = blocks of 10 columns, body frame:
    # F = m a + α × h + ω × (ω × h),  N = I α + ω × (I ω) + h × a
    force = np.zeros((n, N, 3, PER_BODY))
    moment = np.zeros((n, N, 3, PER_BODY))
    sw = _skew(w)
    force[..., 0] = acc
    force[..., 1:4] = _skew(dw) + sw @ sw
    moment[..., 1:4] = -_skew(acc)
    moment[..., 4:] = _inertia_map(dw) + sw @ _inertia_map(w)
    # Root frame, moment about the root origin
    force0 = r0 @ force
    moment0 = r0 @ moment + np.cross(p0[..., None, :], force0.swapaxes(-1, -2)).swapaxes(-1, -2)
    # Joint j's unit motion (angular; linear at the root origin), root frame
    z = np.einsum("inab,ib->ina", r0, rec[:, B_AXIS : B_AXIS + 3])
    revolute = (model.jtype != PRISMATIC)[:, None, None]
    s_ang = np.where(revolute, z, 0.0)
    s_lin = np.where(revolute, np.cross(p0, z), z)
    ancestor = np.zeros((n, n), dtype=bool)  # ancestor[j, i]: joint j carries body i
    for i in range(n):
        j = i
        while j >= 0:
            ancestor[j, i] = True
            j = int(model.parent[j])
    y_inertial = np.einsum("jna,inac->njic", s_ang, moment0) + np.einsum("jna,inac->njic", s_lin, force0)
    y_inertial *= ancestor[None, :, :, None]
    eye = np.eye(n)
    sgn = np.tanh(qd / smoothing_velocity) if coulomb == "tanh" else np.sign(qd)
    if not nv0:
        y = np.concatenate(
            [
                y_inertial.reshape(N, n, n * PER_BODY),
                qd[:, None, :] * eye,
                sgn[:, None, :] * eye,
                qdd[:, None, :] * eye,
            ],
            axis=2,
        )
        return y[0] if single else y
    # the base body (body n, root frame) and the root joint's rows: every body's wrench, root frame
    base_force = np.zeros((N, 3, PER_BODY))
    base_moment = np.zeros((N, 3, PER_BODY))
    sw0 = _skew(root_w)
    base_force[..., 0] = root_acc
    base_force[..., 1:4] = _skew(root_dw) + sw0 @ sw0
    base_moment[..., 1:4] = -_skew(root_acc)
    base_moment[..., 4:] = _inertia_map(root_dw) + sw0 @ _inertia_map(root_w)
    wrench = np.concatenate(
        [
            np.concatenate([force0.transpose(1, 2, 0, 3).reshape(N, 3, n * PER_BODY), base_force], axis=2),
            np.concatenate([moment0.transpose(1, 2, 0, 3).reshape(N, 3, n * PER_BODY), base_moment], axis=2),
        ],
        axis=1,
    )  # (N, 6, 10 (n + 1))
    nb = PER_BODY * (n + 1)
    y = np.zeros((N, nv0 + n, nb + 3 * n))
    y[:, :nv0, :nb] = wrench[:, _BASE_ROWS[nv0], :]
    y[:, nv0:, : n * PER_BODY] = y_inertial.reshape(N, n, n * PER_BODY)
    y[:, nv0:, nb : nb + n] = qd[:, None, :] * eye
    y[:, nv0:, nb + n : nb + 2 * n] = sgn[:, None, :] * eye
    y[:, nv0:, nb + 2 * n :] = qdd[:, None, :] * eye
    return y[0] if single else y
