"""Rigid-body dynamics of a RobotModel: rnea, gravity_torques, nonlinear_effects, mass_matrix,
forward_dynamics, jacobian, link_pose.

Conventions: arrays in `model.joint_names` order; gravity (m/s²) in the root frame; a wrench
[fx, fy, fz, tx, ty, tz] is what a link exerts on its environment, in root-frame axes, moment
about the link frame origin, so τ = M(q) q̈ + c(q, q̇) + g(q) + Σ Jᵀ F. Functions accept one state
(n,) or a batch (N, n) and reuse a preallocated workspace (`Data`); `out=` avoids allocating the
result. Non-finite or wrongly sized input raises ValueError naming the argument.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from . import kernels as k
from ._jit import HAVE_NUMBA
from .model import RobotModel

GRAVITY = (0.0, 0.0, -9.81)
_GRAVITY_ARRAY = np.array(GRAVITY)
_GRAVITY_ARRAY.flags.writeable = False
_NO_WRENCH_BODY = np.empty(0, dtype=np.int64)
_NO_WRENCH_DATA = np.empty(0)

Wrenches = Mapping[str, Sequence[float]]


class Data:
    """Preallocated workspace for the kernels of one model size; not shared between threads."""

    def __init__(self, model: RobotModel) -> None:
        n = model.nv
        self.nv = n
        if HAVE_NUMBA:
            self.ws = np.zeros(n * k.WS_STRIDE)
            self.comp = np.zeros(10 * n)
        else:
            self.ws = [0.0] * (n * k.WS_STRIDE)
            self.comp = [0.0] * (10 * n)


def _data(model: RobotModel, data: Data | None) -> Data:
    if data is not None:
        return data
    cached = model.__dict__.get("_default_data")
    if cached is None or cached.nv != model.nv:
        cached = Data(model)
        model.__dict__["_default_data"] = cached
    return cached


def _array(x, name: str, n: int) -> np.ndarray:
    """x as a C-contiguous float64 array of shape (n,) or (N, n); ValueError naming `name`."""
    if type(x) is np.ndarray and x.dtype == np.float64 and x.flags.c_contiguous:
        a = x
    else:
        try:
            a = np.ascontiguousarray(x, dtype=np.float64)
        except (TypeError, ValueError):
            raise ValueError(f"{name} must be an array of numbers") from None
    if a.ndim not in (1, 2) or a.shape[-1] != n:
        raise ValueError(f"{name} must have shape ({n},) or (N, {n}), got {a.shape}")
    return a


def _gravity(gravity) -> np.ndarray:
    if gravity is GRAVITY:
        return _GRAVITY_ARRAY
    g = _array(gravity, "gravity", 3)
    if g.ndim != 1:
        raise ValueError("gravity must have shape (3,)")
    return g


def _check_finite(result: np.ndarray, named: dict[str, object]) -> np.ndarray:
    """Return result if finite; otherwise name the non-finite input (or say the result overflowed)."""
    if np.isfinite(result).all():
        return result
    for name, value in named.items():
        if value is None:
            continue
        if isinstance(value, Mapping):
            for link, w in value.items():
                if not np.all(np.isfinite(np.asarray(w, dtype=float))):
                    raise ValueError(f"wrenches['{link}'] contains NaN or Inf")
        elif not np.all(np.isfinite(value)):
            raise ValueError(f"{name} contains NaN or Inf")
    raise ValueError("result is not finite: inputs too large")


def _wrench_arrays(model: RobotModel, wrenches: Wrenches | None):
    """Kernel arrays for link wrenches; links fixed to the root are dropped (the root takes them)."""
    if not wrenches:
        return _NO_WRENCH_BODY, _NO_WRENCH_DATA
    bodies, rows = [], []
    for link, wrench in wrenches.items():
        try:
            frame = model.link_frame(link)
        except KeyError as exc:
            raise ValueError(f"wrenches: {exc.args[0]}") from None
        try:
            w = np.asarray(wrench, dtype=float).reshape(-1)
        except (TypeError, ValueError):
            raise ValueError(f"wrenches['{link}'] must be 6 numbers") from None
        if w.shape != (6,):
            raise ValueError(f"wrenches['{link}'] must be 6 numbers, got {w.shape[0]}")
        if not np.all(np.isfinite(w)):
            raise ValueError(f"wrenches['{link}'] contains NaN or Inf")
        if frame.body >= 0:
            bodies.append(frame.body)
            rows.append(np.concatenate([frame.translation, w, np.zeros(3)]))
    if not bodies:
        return _NO_WRENCH_BODY, _NO_WRENCH_DATA
    return np.array(bodies, dtype=np.int64), np.concatenate(rows)


def _out(out: np.ndarray | None, shape: tuple[int, ...]) -> np.ndarray:
    if out is None:
        return np.empty(shape)
    if out.shape != shape or out.dtype != np.float64 or not out.flags.c_contiguous:
        raise ValueError(f"out must be a C-contiguous float64 array of shape {shape}")
    return out


def rnea(
    model: RobotModel,
    q,
    qd,
    qdd,
    *,
    gravity=GRAVITY,
    wrenches: Wrenches | None = None,
    data: Data | None = None,
    out: np.ndarray | None = None,
) -> np.ndarray:
    """Joint efforts τ = M q̈ + c + g + Σ Jᵀ F (N m or N) for one state (n,) or a batch (N, n)."""
    n = model.nv
    q = _array(q, "q", n)
    qd = _array(qd, "qd", n)
    qdd = _array(qdd, "qdd", n)
    if not q.shape == qd.shape == qdd.shape:
        raise ValueError(f"q, qd, qdd must have the same shape, got {q.shape}, {qd.shape}, {qdd.shape}")
    g = _gravity(gravity)
    wb, wd = _wrench_arrays(model, wrenches)
    ws = _data(model, data).ws
    tau = _out(out, q.shape)
    parent, jtype, body = model.kernel_args()
    if HAVE_NUMBA:
        fn = k.rnea_kernel if q.ndim == 1 else k.rnea_batch_kernel
        fn(parent, jtype, body, q, qd, qdd, g, wb, wd, ws, tau)
    else:
        gl, wbl, wdl = g.tolist(), wb.tolist(), wd.tolist()
        for row, (qi, qdi, qddi) in enumerate(
            zip(*(np.atleast_2d(a).tolist() for a in (q, qd, qdd)), strict=True)
        ):
            t = [0.0] * n
            k.rnea_kernel(parent, jtype, body, qi, qdi, qddi, gl, wbl, wdl, ws, t)
            tau.reshape(-1, n)[row] = t
    return _check_finite(tau, {"q": q, "qd": qd, "qdd": qdd, "gravity": g, "wrenches": wrenches})


def gravity_torques(
    model: RobotModel, q, *, gravity=GRAVITY, data: Data | None = None, out: np.ndarray | None = None
) -> np.ndarray:
    """Gravity torques g(q) (N m or N) for one configuration (n,) or a batch (N, n)."""
    n = model.nv
    q = _array(q, "q", n)
    g = _gravity(gravity)
    ws = _data(model, data).ws
    tau = _out(out, q.shape)
    parent, jtype, body = model.kernel_args()
    if HAVE_NUMBA:
        fn = k.gravity_kernel if q.ndim == 1 else k.gravity_batch_kernel
        fn(parent, jtype, body, q, g, ws, tau)
    else:
        gl = g.tolist()
        for row, qi in enumerate(np.atleast_2d(q).tolist()):
            t = [0.0] * n
            k.gravity_kernel(parent, jtype, body, qi, gl, ws, t)
            tau.reshape(-1, n)[row] = t
    return _check_finite(tau, {"q": q, "gravity": g})


def nonlinear_effects(model: RobotModel, q, qd, *, gravity=GRAVITY, data: Data | None = None) -> np.ndarray:
    """Coriolis, centrifugal and gravity terms c(q, q̇) + g(q): rnea with q̈ = 0."""
    return rnea(model, q, qd, np.zeros(np.shape(q)), gravity=gravity, data=data)


def mass_matrix(model: RobotModel, q, *, data: Data | None = None) -> np.ndarray:
    """Symmetric joint-space inertia M(q), shape (n, n) or (N, n, n), armature on the diagonal."""
    n = model.nv
    q = _array(q, "q", n)
    data = _data(model, data)
    parent, jtype, body = model.kernel_args()
    if HAVE_NUMBA:
        m = np.empty((*q.shape[:-1], n * n))
        fn = k.mass_matrix_kernel if q.ndim == 1 else k.mass_matrix_batch_kernel
        fn(parent, jtype, body, q, data.ws, data.comp, m)
    else:
        rows = []
        for qi in np.atleast_2d(q).tolist():
            flat = [0.0] * (n * n)
            k.mass_matrix_kernel(parent, jtype, body, qi, data.ws, data.comp, flat)
            rows.append(flat)
        m = np.array(rows).reshape(*q.shape[:-1], n * n)
    return _check_finite(m.reshape(*q.shape[:-1], n, n), {"q": q})


def forward_dynamics(
    model: RobotModel, q, qd, tau, *, gravity=GRAVITY, wrenches: Wrenches | None = None
) -> np.ndarray:
    """Joint accelerations q̈ = M⁻¹ (τ − c − g − Σ Jᵀ F) for one state or a batch."""
    tau = _array(tau, "tau", model.nv)
    bias = rnea(model, q, qd, np.zeros(np.shape(q)), gravity=gravity, wrenches=wrenches)
    if tau.shape != bias.shape:
        raise ValueError(f"tau must have shape {bias.shape}, got {tau.shape}")
    return np.linalg.solve(mass_matrix(model, q), (tau - bias)[..., None])[..., 0]


def _poses(model: RobotModel, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rotation (n, 3, 3) and origin (n, 3) of every body in the root frame."""
    n = model.nv
    ws = np.zeros(n * k.WS_STRIDE)
    parent, jtype, body = model.parent, model.jtype, model.body
    k.joint_transforms(parent, jtype, body, q, ws)
    k.root_rotations(parent, ws)
    rec = ws.reshape(n, k.WS_STRIDE) if n else ws.reshape(0, k.WS_STRIDE)
    rot = rec[:, 27:36].reshape(n, 3, 3)
    pos = np.zeros((n, 3))
    for i in range(n):
        lam = model.parent[i]
        pos[i] = rec[i, 9:12] if lam < 0 else pos[lam] + rot[lam] @ rec[i, 9:12]
    return rot, pos


def _single(model: RobotModel, q) -> np.ndarray:
    q = _array(q, "q", model.nv)
    if q.ndim != 1 or not np.all(np.isfinite(q)):
        raise ValueError(f"q must be {model.nv} finite numbers")
    return q


def link_pose(model: RobotModel, q, link: str) -> tuple[np.ndarray, np.ndarray]:
    """(rotation 3×3, origin 3) of a link frame in the root frame at configuration q."""
    q = _single(model, q)
    frame = model.link_frame(link)
    if frame.body < 0:
        return frame.rotation.copy(), frame.translation.copy()
    rot, pos = _poses(model, q)
    r = rot[frame.body]
    return r @ frame.rotation, pos[frame.body] + r @ frame.translation


def jacobian(model: RobotModel, q, link: str) -> np.ndarray:
    """Geometric Jacobian (6×n) of a link origin: root-frame axes, linear rows first."""
    q = _single(model, q)
    frame = model.link_frame(link)
    jac = np.zeros((6, model.nv))
    if frame.body < 0:
        return jac
    rot, pos = _poses(model, q)
    tip = pos[frame.body] + rot[frame.body] @ frame.translation
    i = frame.body
    while i >= 0:
        axis = rot[i] @ model.body[i * k.BODY_STRIDE + 12 : i * k.BODY_STRIDE + 15]
        if model.jtype[i] == k.REVOLUTE:
            jac[:3, i] = np.cross(axis, tip - pos[i])
            jac[3:, i] = axis
        else:
            jac[:3, i] = axis
        i = model.parent[i]
    return jac
