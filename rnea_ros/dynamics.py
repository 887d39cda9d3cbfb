"""Rigid-body dynamics of a RobotModel: rnea, gravity_torques, nonlinear_effects, mass_matrix,
forward_dynamics, jacobian, link_pose.

Conventions: arrays in `model.joint_names` order; gravity (m/s²) in the root frame; a wrench
[fx, fy, fz, tx, ty, tz] is what a link exerts on its environment, in root-frame axes, moment
about the link frame origin, so τ = M(q) q̈ + c(q, q̇) + g(q) + Σ Jᵀ F. Functions accept one state
(n,) or a batch (N, n) and reuse a preallocated workspace (`Data`); `out=` avoids allocating the
result. Non-finite or wrongly sized input raises ValueError naming the argument.

Speed: one state given as writeable C-contiguous float64 arrays goes straight to the compiled
kernel, which checks sizes and finiteness itself (about 1.5 µs per call on top of the arithmetic);
any other input is converted and checked first. `warm` compiles everything at model build.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping, Sequence

import numpy as np

from . import kernels as k
from ._jit import HAVE_NUMBA
from .model import RobotModel

GRAVITY = (0.0, 0.0, -9.81)
# Every array handed to a kernel is a writeable, aligned, C-contiguous float64 (or int64) array, so
# each kernel has one compiled signature per ndim; private constants are writeable for that reason.
_GRAVITY_ARRAY = np.array(GRAVITY)
_GRAVITY_CACHE: dict[tuple, np.ndarray] = {}  # finite gravity tuples already converted
_GRAVITY_CACHE_SIZE = 64
_NO_WRENCH_BODY = np.empty(0, dtype=np.int64)
_NO_WRENCH_DATA = np.empty(0)
_ND = np.ndarray
_F64 = np.dtype(np.float64)
_empty = np.empty
_rnea_kernel = k.rnea_kernel
_gravity_kernel = k.gravity_kernel
_mass_matrix_kernel = k.mass_matrix_kernel
_warm = False

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


def warm() -> None:
    """Compile (or load from numba's disk cache) every kernel signature the API calls, then lock
    the kernels so that nothing compiles later: arguments of other types take the checked path,
    which converts them. Run by the first `RobotModel.from_urdf`; idempotent; no-op without numba."""
    global _warm
    if _warm or not HAVE_NUMBA:
        return
    tree = np.zeros(k.TREE_STRIDE)
    tree[[0, 4, 8, 14, 15]] = 1.0  # identity placement, z axis, 1 kg
    tree[k.PARENT], tree[k.JTYPE] = -1, k.REVOLUTE
    x, xs, ws, comp = np.zeros(1), np.zeros((1, 1)), np.zeros(k.WS_STRIDE), np.zeros(10)
    wb, wd, g = np.zeros(1, dtype=np.int64), np.zeros(k.WRENCH_STRIDE), _GRAVITY_ARRAY
    k.joint_transforms(tree, x, ws)
    k.root_rotations(tree, ws)
    k.rnea_kernel(tree, x, x, x, g, ws, np.empty(1))
    k.rnea_wrench_kernel(tree, x, x, x, g, wb, wd, ws, np.empty(1))
    k.rnea_batch_kernel(tree, xs, xs, xs, g, wb, wd, ws, np.empty((1, 1)))
    k.gravity_kernel(tree, x, g, ws, np.empty(1))
    k.gravity_batch_kernel(tree, xs, g, ws, np.empty((1, 1)))
    k.mass_matrix_kernel(tree, x, ws, comp, np.empty(1))
    k.mass_matrix_batch_kernel(tree, xs, ws, comp, np.empty((1, 1)))
    k.effort_kernel(
        tree,
        x,
        x,
        x,
        x,
        x,
        np.zeros(6),
        np.ones(6, dtype=np.int64),
        np.ones((k.LAW_ROWS, 1)),
        wb,
        wd,
        ws,
        np.empty((k.OUT_ROWS, 1)),
    )
    for kernel in k.ENTRY_POINTS:
        kernel.disable_compile()
    _warm = True


def _hot(model: RobotModel) -> tuple:
    """(nv, kernel tree, default workspace, its comp, default Data) of a model, cached on it."""
    hot = model.__dict__.get("_hot")
    if hot is None:
        warm()
        data = Data(model)
        hot = (model.nv, model.kernel_tree(), data.ws, data.comp, data)
        model.__dict__["_hot"] = hot
    return hot


def _fast_args(model: RobotModel, gravity) -> tuple:
    """(nv, kernel tree, default workspace, gravity array or None when it must be checked) for the
    fast paths; TypeError for an unhashable gravity tuple."""
    try:
        n, tree, ws, _, _ = model._hot
    except AttributeError:
        n, tree, ws, _, _ = _hot(model)
    if gravity is GRAVITY:
        return n, tree, ws, _GRAVITY_ARRAY
    if type(gravity) is tuple:
        return n, tree, ws, _GRAVITY_CACHE.get(gravity)
    return n, tree, ws, gravity if type(gravity) is _ND else None


def _data(model: RobotModel, data: Data | None) -> Data:
    if data is None:
        return _hot(model)[4]
    if data.nv < model.nv:
        raise ValueError(f"data was made for a model with {data.nv} joints, too few for {model.nv}")
    return data


def _array(x, name: str, n: int) -> np.ndarray:
    """x as a writeable C-contiguous float64 array of shape (n,) or (N, n); ValueError naming `name`."""
    if type(x) is np.ndarray and x.dtype == np.float64 and x.flags.carray:
        a = x
    else:
        try:
            a = np.array(x, dtype=np.float64, order="C")
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
    if type(gravity) is tuple and len(_GRAVITY_CACHE) < _GRAVITY_CACHE_SIZE and np.isfinite(g).all():
        with contextlib.suppress(TypeError):  # unhashable items: not cached
            _GRAVITY_CACHE[gravity] = g
    return g


def raise_not_finite(named: dict[str, object]) -> None:
    """Name the non-finite input of a non-finite result (or say the result overflowed)."""
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


def _check(status: int, named: dict[str, object]) -> None:
    """Raise for a kernel status other than OK (arguments were checked, so: not finite)."""
    if status != k.OK:
        if status == k.BAD_SIZE:  # pragma: no cover - sizes are checked before the call
            raise ValueError("argument sizes do not match the model")
        raise_not_finite(named)


def wrench_arrays(model: RobotModel, wrenches: Wrenches | None):
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
    if not isinstance(out, np.ndarray) or out.shape != shape or out.dtype != _F64 or not out.flags.carray:
        raise ValueError(f"out must be a writeable C-contiguous float64 array of shape {shape}")
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
    # Fast path, one state of arrays: the compiled kernel's signature checks dtype, layout and
    # ndim (a mismatch raises TypeError, see `warm`), the kernel checks sizes and finiteness.
    if HAVE_NUMBA and type(q) is _ND and type(qd) is _ND and type(qdd) is _ND and not wrenches:
        try:
            n, tree, ws, g = _fast_args(model, gravity)
            if g is not None and q.ndim == 1:
                tau = _empty(n) if out is None else out
                if _rnea_kernel(tree, q, qd, qdd, g, ws if data is None else data.ws, tau) == 0:
                    return tau
        except TypeError:
            pass
    return _rnea_checked(model, q, qd, qdd, gravity, wrenches, data, out)


def _rnea_checked(model: RobotModel, q, qd, qdd, gravity, wrenches, data, out) -> np.ndarray:
    """rnea with every argument converted and checked, errors naming the culprit."""
    n = model.nv
    q = _array(q, "q", n)
    qd = _array(qd, "qd", n)
    qdd = _array(qdd, "qdd", n)
    if not q.shape == qd.shape == qdd.shape:
        raise ValueError(f"q, qd, qdd must have the same shape, got {q.shape}, {qd.shape}, {qdd.shape}")
    g = _gravity(gravity)
    wb, wd = wrench_arrays(model, wrenches)
    ws = _data(model, data).ws
    tau = _out(out, q.shape)
    tree = model.kernel_tree()
    if HAVE_NUMBA:
        if q.ndim == 1:
            status = k.rnea_wrench_kernel(tree, q, qd, qdd, g, wb, wd, ws, tau)
        else:
            status = k.rnea_batch_kernel(tree, q, qd, qdd, g, wb, wd, ws, tau)
    else:
        status = k.OK
        gl, wbl, wdl = g.tolist(), wb.tolist(), wd.tolist()
        t = [0.0] * n
        rows = tau.reshape(-1, n)
        for row, (qi, qdi, qddi) in enumerate(_rows(q, qd, qdd)):
            status |= k.rnea_wrench_kernel(tree, qi, qdi, qddi, gl, wbl, wdl, ws, t)
            rows[row] = t
    _check(status, {"q": q, "qd": qd, "qdd": qdd, "gravity": g, "wrenches": wrenches})
    return tau


def _rows(*arrays: np.ndarray):
    """The states of (n,) or (N, n) arrays as tuples of plain lists (the no-numba path)."""
    if arrays[0].ndim == 1:
        return (tuple(a.tolist() for a in arrays),)
    return zip(*(a.tolist() for a in arrays), strict=True)


def gravity_torques(
    model: RobotModel, q, *, gravity=GRAVITY, data: Data | None = None, out: np.ndarray | None = None
) -> np.ndarray:
    """Gravity torques g(q) (N m or N) for one configuration (n,) or a batch (N, n)."""
    if HAVE_NUMBA and type(q) is _ND:  # fast path, as in rnea
        try:
            n, tree, ws, g = _fast_args(model, gravity)
            if g is not None and q.ndim == 1:
                tau = _empty(n) if out is None else out
                if _gravity_kernel(tree, q, g, ws if data is None else data.ws, tau) == 0:
                    return tau
        except TypeError:
            pass
    n = model.nv
    q = _array(q, "q", n)
    g = _gravity(gravity)
    ws = _data(model, data).ws
    tau = _out(out, q.shape)
    tree = model.kernel_tree()
    if HAVE_NUMBA:
        fn = k.gravity_kernel if q.ndim == 1 else k.gravity_batch_kernel
        status = fn(tree, q, g, ws, tau)
    else:
        status = k.OK
        gl = g.tolist()
        t = [0.0] * n
        rows = tau.reshape(-1, n)
        for row, (qi,) in enumerate(_rows(q)):
            status |= k.gravity_kernel(tree, qi, gl, ws, t)
            rows[row] = t
    _check(status, {"q": q, "gravity": g})
    return tau


def nonlinear_effects(model: RobotModel, q, qd, *, gravity=GRAVITY, data: Data | None = None) -> np.ndarray:
    """Coriolis, centrifugal and gravity terms c(q, q̇) + g(q): rnea with q̈ = 0."""
    return rnea(model, q, qd, np.zeros(np.shape(q)), gravity=gravity, data=data)


def mass_matrix(model: RobotModel, q, *, data: Data | None = None) -> np.ndarray:
    """Symmetric joint-space inertia M(q), shape (n, n) or (N, n, n), armature on the diagonal."""
    if HAVE_NUMBA and type(q) is _ND:  # fast path, as in rnea
        try:
            n, tree, ws, comp, _ = model._hot
        except AttributeError:
            n, tree, ws, comp, _ = _hot(model)
        try:
            if q.ndim == 1:
                m = _empty(n * n)
                if data is not None:
                    ws, comp = data.ws, data.comp
                if _mass_matrix_kernel(tree, q, ws, comp, m) == 0:
                    return m.reshape(n, n)
        except TypeError:
            pass
    n = model.nv
    q = _array(q, "q", n)
    data = _data(model, data)
    tree = model.kernel_tree()
    m = np.empty((*q.shape[:-1], n * n))
    if HAVE_NUMBA:
        fn = k.mass_matrix_kernel if q.ndim == 1 else k.mass_matrix_batch_kernel
        status = fn(tree, q, data.ws, data.comp, m)
    else:
        status = k.OK
        flat = [0.0] * (n * n)
        rows = m.reshape(-1, n * n)
        for row, (qi,) in enumerate(_rows(q)):
            status |= k.mass_matrix_kernel(tree, qi, data.ws, data.comp, flat)
            rows[row] = flat
    _check(status, {"q": q})
    return m.reshape(*q.shape[:-1], n, n)


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
    tree = model.kernel_tree()
    ws = np.zeros(n * k.WS_STRIDE) if HAVE_NUMBA else [0.0] * (n * k.WS_STRIDE)
    k.joint_transforms(tree, q if HAVE_NUMBA else q.tolist(), ws)
    k.root_rotations(tree, ws)
    rec = np.asarray(ws).reshape(n, k.WS_STRIDE)
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
