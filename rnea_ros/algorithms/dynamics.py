"""Rigid-body dynamics of a RobotModel: rnea, gravity_torques, nonlinear_effects, mass_matrix,
forward_dynamics, jacobian, link_pose.

Conventions: arrays in `model.joint_names` order; gravity (m/s²) in the root frame; a wrench
[fx, fy, fz, tx, ty, tz] is what a link exerts on its environment, in root-frame axes, moment
about the link frame origin, so τ = M(q) q̈ + c(q, q̇) + g(q) + Σ Jᵀ F. rnea, gravity_torques,
nonlinear_effects, mass_matrix and forward_dynamics accept one state (n,) or a batch (N, n);
jacobian and link_pose one configuration (n,). Non-finite or wrongly sized input raises RneaError
(a ValueError) naming the argument; an unknown link UnknownLinkError (also a KeyError).

Floating or planar root (`model.root_joint`): q has nq entries and v = q̇, a = q̈, τ nv, in
Pinocchio's layout (see `rnea_ros.algorithms.configuration`); the "root frame" of gravity,
wrenches, poses and Jacobians is then the world, and τ[:root_nv] is the wrench the root joint
would have to apply to the base (force, then moment about the base origin, base frame; planar:
f_x, f_y, n_z), as Pinocchio's rnea. M is nv×nv, the Jacobian 6×nv (its root columns map the
base-frame twist v[:root_nv]).

Workspace: the kernels write into a `Data` (`model.create_data()`), passed as `data=`; without it
`model.default_data` is used (one per model, created on first use: see `rnea_ros.model.data`). `out=`
avoids allocating the result. Compilation: each kernel compiles on its first use unless
`rnea_ros.compile_kernels()` ran before (see `rnea_ros.compiled.entry_points`).

Speed: each public function tries the fast path, else the checked one. The fast path takes one
state given as float64 vectors (q, q̇, q̈; gravity the default, a tuple or a float64 vector;
wrenches as float64 6-vectors) straight to the compiled kernel, on a packed record (the model's
`kernel_record`, or the Data's once it holds the model): first through the pointer kernels
(`rnea_ros.compiled.pointer_kernels`, which check the vectors in C; `rnea` and `gravity_torques`
make that call themselves, as a Python call costs a good part of it), else `_fast` (a moving
root, a Data's first use, the kernels' entry points once the types are checked here). The kernel
checks sizes and finiteness; on any problem the call is redone on the checked path, which converts
every argument and raises naming the culprit. Other inputs (lists, integer, strided or 2-D arrays)
take the checked path.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np
import numpy.typing as npt

from rnea_ros.algorithms.configuration import base_placement
from rnea_ros.compiled import entry_points, pointer_kernels
from rnea_ros.compiled.jit import HAVE_NUMBA
from rnea_ros.compiled.kernels.layout import (
    B_AXIS,
    BAD_SIZE,
    BODY_STRIDE,
    NOT_UNIT,
    OK,
    REVOLUTE,
    UNIT_TOL,
    W_POS,
    W_ROT_ROOT,
    WR_FORCE,
    WR_MOMENT,
    WR_ORIGIN,
    WRENCH_STRIDE,
    WS_STRIDE,
)
from rnea_ros.errors import RneaError, UnknownLinkError
from rnea_ros.model.data import Data
from rnea_ros.model.robot_model import GRAVITY, RobotModel

__all__ = [
    "GRAVITY",
    "Data",
    "Wrenches",
    "forward_dynamics",
    "gravity_torques",
    "jacobian",
    "link_pose",
    "mass_matrix",
    "nonlinear_effects",
    "raise_not_finite",
    "rnea",
    "wrench_arrays",
]

_GRAVITY_ARRAY = np.array(GRAVITY)  # private, so never modified
_NO_WRENCH_BODY = np.empty(0, dtype=np.int64)
_NO_WRENCH_DATA = np.empty(0)
_ZERO_WRENCH = np.zeros(6)
_POINTER = pointer_kernels.AVAILABLE  # the pointer kernels: the same kernels, the argument checks in C
_FAST = HAVE_NUMBA  # the entry points, which take only arrays of the declared types
_ND = np.ndarray
_F64 = np.dtype(np.float64)
_empty = np.empty

Wrenches = Mapping[str, npt.ArrayLike]  # link → [fx, fy, fz, tx, ty, tz], root axes (N, N m)


# The packed kernels of one function's fast path: (pointer kernel or None, entry point) with the
# record's gravity, the same with a gravity vector before the result, and of a moving root; and
# whether the result is a square matrix.
_RNEA = (
    pointer_kernels.RNEA_PACKED,
    entry_points.RNEA_PACKED,
    pointer_kernels.RNEA_PACKED_GRAVITY,
    entry_points.RNEA_PACKED_GRAVITY,
    pointer_kernels.FLOATING_RNEA_PACKED,
    entry_points.FLOATING_RNEA_PACKED,
    False,
)
_GRAVITY = (
    pointer_kernels.GRAVITY_PACKED,
    entry_points.GRAVITY_PACKED,
    pointer_kernels.GRAVITY_PACKED_GRAVITY,
    entry_points.GRAVITY_PACKED_GRAVITY,
    pointer_kernels.FLOATING_GRAVITY_PACKED,
    entry_points.FLOATING_GRAVITY_PACKED,
    False,
)
_MASS_MATRIX = (
    None,
    entry_points.MASS_MATRIX_PACKED,
    None,
    None,
    None,
    entry_points.FLOATING_MASS_MATRIX_PACKED,
    True,
)
_RNEA_POINTER = pointer_kernels.RNEA_PACKED
_RNEA_POINTER_GRAVITY = pointer_kernels.RNEA_PACKED_GRAVITY
_GRAVITY_POINTER = pointer_kernels.GRAVITY_PACKED
_GRAVITY_POINTER_GRAVITY = pointer_kernels.GRAVITY_PACKED_GRAVITY


def _fast(
    model: RobotModel, q: Any, qd: Any, qdd: Any, gravity: Any, data: Any, out: Any, kernels: tuple
) -> Any:
    """The fast path of one state given as float64 vectors (q, q̇, q̈; or q alone, qd and qdd None):
    the model's packed record (`model.kernel_args`; a moving root's `floating_args`, with the
    default gravity, data and result only) or that of `data` holding this model and gravity tuple
    (`Data.packed_for`; a float64 (3,) gravity vector goes to the kernel as is), through the
    pointer kernel (vectors checked in C) or else the entry point (types checked here). None when
    an argument does not qualify or the kernel reports a problem: the checked path then converts
    every argument and names the culprit."""
    record: np.ndarray | None
    g = None
    if model.root_nv:
        if gravity is not GRAVITY or data is not None or out is not None:
            return None
        n, record = model.floating_args
        pointer, entry = kernels[4], kernels[5]
    elif data is None and gravity is GRAVITY:
        n, record = model.kernel_args
        pointer, entry = kernels[0], kernels[1]
    else:
        n, record = model.kernel_args
        if data is None:
            d = model.default_data
        elif type(data) is Data:
            d = data
        else:
            return None
        if d.source is not record or (gravity is not d.gravity_key and type(gravity) is tuple):
            if d.nv < n or (record := d.packed_for(record, n, gravity)) is None:  # copies them in
                return None
        else:
            record = d.record  # it holds this model (and this gravity tuple)
        if type(gravity) is tuple:
            pointer, entry = kernels[0], kernels[1]
        elif type(gravity) is _ND and kernels[3] is not None:  # a vector, passed to the kernel as is
            g = gravity
            pointer, entry = kernels[2], kernels[3]
        else:  # a list, None...: the checked path converts or names it
            return None
    if _POINTER and pointer is not None:
        result = n if out is None else out  # n: the pointer kernel allocates τ
        if qd is None:
            tau = pointer.call(record, q, result) if g is None else pointer.call(record, q, g, result)
        elif g is None:
            tau = pointer.call(record, q, qd, qdd, result)
        else:
            tau = pointer.call(record, q, qd, qdd, g, result)
        if out is None:
            if tau is not None:
                return tau
        elif tau == 0:  # OK
            return out
    if not _FAST or type(q) is not _ND or q.dtype is not _F64 or q.ndim != 1:
        return None
    if qd is not None and not (_is_vector(qd) and _is_vector(qdd)):
        return None
    shape = (n, n) if kernels[6] else (n,)
    if out is None:
        tau = _empty(shape)
    elif type(out) is _ND and out.dtype is _F64 and out.shape == shape and out.flags.carray:
        tau = out
    else:
        return None
    if g is not None and (g.dtype is not _F64 or g.shape != (3,)):
        return None
    if qd is None:
        status = entry.call(record, q, tau) if g is None else entry.call(record, q, g, tau)
    elif g is None:
        status = entry.call(record, q, qd, qdd, tau)
    else:
        status = entry.call(record, q, qd, qdd, g, tau)
    return tau if status == 0 else None  # OK


def _wrench_fast(
    model: RobotModel, q: Any, qd: Any, qdd: Any, gravity: Any, wrenches: Any, data: Data | None, out: Any
) -> np.ndarray | None:
    """rnea with wrenches given as float64 6-vectors (a fixed root, a gravity tuple, a new result),
    through the Data's record and its wrench arrays for these links (`Data.wrench_layout`,
    rebuilt when the model or the links change: only the six numbers per link are copied per
    call); None: the checked path decides."""
    if model.root_nv or out is not None or type(gravity) is not tuple:
        return None
    n, source = model.kernel_args
    if data is None:
        data = model.default_data
    elif type(data) is not Data or data.nv < n:
        return None
    if data.source is source and gravity is data.gravity_key:  # the record as it is
        record = data.record
    else:
        record = data.packed_for(source, n, gravity)
        if record is None:
            return None
    layout = data.wrench_layout
    if _POINTER and layout is not None and layout[0] is source and layout[5] and len(wrenches) == 1:
        w = wrenches.get(layout[5])  # the one link of the layout (not fixed to the root), given alone
        if w is not None:  # its wrench copied into its slot by the kernel; a new τ
            tau = pointer_kernels.RNEA_PACKED_WRENCH1.call(record, q, qd, qdd, layout[2], layout[3], w, n)
            if tau is not None:
                return tau
    links = tuple(wrenches)  # the layout's links, in this order
    if layout is None or layout[0] is not source or layout[1] != links:
        try:
            wb, wd = wrench_arrays(model, {link: _ZERO_WRENCH for link in links})
        except (RneaError, TypeError):  # an unknown link: the checked path names it
            return None
        slots: list[tuple[str, slice]] = []  # wrench_arrays' rows: the links not fixed to the root
        for link in links:
            if model.link_frame(link).body >= 0:
                start = len(slots) * WRENCH_STRIDE + WR_FORCE
                slots.append((link, slice(start, start + 6)))
        single = slots[0][0] if len(links) == 1 and len(slots) == 1 else ""  # one link, not the root's
        layout = data.wrench_layout = (source, links, wb, wd, slots, single)
    _, _, wb, wd, slots, _ = layout
    for link, slot in slots:
        w = wrenches[link]
        if type(w) is not _ND or w.dtype is not _F64 or w.shape != (6,):
            return None
        wd[slot] = w  # force, then moment (WR_MOMENT = WR_FORCE + 3)
    if _POINTER:
        tau = pointer_kernels.RNEA_PACKED_WRENCH.call(record, q, qd, qdd, wb, wd, n)  # a new τ, or None
        if tau is not None:
            return tau
    if not (_FAST and _is_vector(q) and _is_vector(qd) and _is_vector(qdd)):
        return None
    tau = _empty(n)
    return tau if entry_points.RNEA_PACKED_WRENCH.call(record, q, qd, qdd, wb, wd, tau) == 0 else None  # OK


def _is_vector(x: object) -> bool:
    """Whether x can go to a compiled entry point as an FA argument: a float64 ndarray of ndim 1."""
    return type(x) is _ND and x.dtype is _F64 and x.ndim == 1


def rnea(
    model: RobotModel,
    q: npt.ArrayLike,
    qd: npt.ArrayLike,
    qdd: npt.ArrayLike,
    *,
    gravity: npt.ArrayLike = GRAVITY,
    wrenches: Wrenches | None = None,
    data: Data | None = None,
    out: np.ndarray | None = None,
) -> np.ndarray:
    """Joint efforts τ = M q̈ + c + g + Σ Jᵀ F (N m or N) for one state (n,) or a batch (N, n)."""
    if _POINTER and not wrenches and not model.root_nv:  # one state: straight to the pointer kernel
        n, own = model.kernel_args  # the model's record, or the Data's once it holds the model:
        record = own if data is None else data.record if type(data) is Data and data.source is own else None
        if record is not None:
            result = n if out is None else out  # n: the kernel allocates τ
            if gravity is GRAVITY and data is None:
                tau = _RNEA_POINTER.call(record, q, qd, qdd, result)
            else:  # the gravity given (a tuple or a vector), or the default one on the Data's record
                tau = _RNEA_POINTER_GRAVITY.call(record, q, qd, qdd, gravity, result)
            if out is None:
                if tau is not None:
                    return tau
            elif tau == 0:  # OK
                return out
    if wrenches:
        tau = _wrench_fast(model, q, qd, qdd, gravity, wrenches, data, out)
    else:
        tau = _fast(model, q, qd, qdd, gravity, data, out, _RNEA)
    return _rnea_checked(model, q, qd, qdd, gravity, wrenches, data, out) if tau is None else tau


def _rnea_checked(
    model: RobotModel,
    q: npt.ArrayLike,
    qd: npt.ArrayLike,
    qdd: npt.ArrayLike,
    gravity: npt.ArrayLike,
    wrenches: Wrenches | None,
    data: Data | None,
    out: np.ndarray | None,
) -> np.ndarray:
    """rnea with every argument converted and checked, errors naming the culprit."""
    if model.root_nv:
        return _floating_rnea(model, q, qd, qdd, gravity, wrenches, data, out)
    n = model.nv
    q = _array(q, "q", n)
    qd = _array(qd, "qd", n)
    qdd = _array(qdd, "qdd", n)
    if not q.shape == qd.shape == qdd.shape:
        raise RneaError(f"q, qd, qdd must have the same shape, got {q.shape}, {qd.shape}, {qdd.shape}")
    g = _gravity(gravity)
    wb, wd = wrench_arrays(model, wrenches)
    ws = _data(model, data).ws
    tau = _out(out, q.shape)
    tree = model.kernel_tree()
    if HAVE_NUMBA:
        if q.ndim == 1:
            status = entry_points.RNEA_WRENCH.call(tree, q, qd, qdd, g, wb, wd, ws, tau)
        else:
            status = entry_points.RNEA_BATCH.call(tree, q, qd, qdd, g, wb, wd, ws, tau)
    else:
        status = OK
        gl, wbl, wdl = g.tolist(), wb.tolist(), wd.tolist()
        t = [0.0] * n
        rows = tau.reshape(-1, n)
        for row, (qi, qdi, qddi) in enumerate(_rows(q, qd, qdd)):
            status |= entry_points.RNEA_WRENCH.call(tree, qi, qdi, qddi, gl, wbl, wdl, ws, t)
            rows[row] = t
    _check(status, {"q": q, "qd": qd, "qdd": qdd, "gravity": g, "wrenches": wrenches})
    return tau


def gravity_torques(
    model: RobotModel,
    q: npt.ArrayLike,
    *,
    gravity: npt.ArrayLike = GRAVITY,
    data: Data | None = None,
    out: np.ndarray | None = None,
) -> np.ndarray:
    """Gravity torques g(q) (N m or N) for one configuration (n,) or a batch (N, n)."""
    if _POINTER and not model.root_nv:  # one state: straight to the pointer kernel, as in rnea
        n, own = model.kernel_args
        record = own if data is None else data.record if type(data) is Data and data.source is own else None
        if record is not None:
            result = n if out is None else out
            if gravity is GRAVITY and data is None:
                tau = _GRAVITY_POINTER.call(record, q, result)
            else:
                tau = _GRAVITY_POINTER_GRAVITY.call(record, q, gravity, result)
            if out is None:
                if tau is not None:
                    return tau
            elif tau == 0:  # OK
                return out
    tau = _fast(model, q, None, None, gravity, data, out, _GRAVITY)
    return _gravity_checked(model, q, gravity, data, out) if tau is None else tau


def _gravity_checked(
    model: RobotModel, q: npt.ArrayLike, gravity: npt.ArrayLike, data: Data | None, out: np.ndarray | None
) -> np.ndarray:
    """gravity_torques with every argument converted and checked, errors naming the culprit."""
    if model.root_nv:
        return _floating_gravity(model, q, gravity, data, out)
    n = model.nv
    q = _array(q, "q", n)
    g = _gravity(gravity)
    ws = _data(model, data).ws
    tau = _out(out, q.shape)
    tree = model.kernel_tree()
    if HAVE_NUMBA:
        kernel = entry_points.GRAVITY_TORQUES if q.ndim == 1 else entry_points.GRAVITY_BATCH
        status = kernel.call(tree, q, g, ws, tau)
    else:
        status = OK
        gl = g.tolist()
        t = [0.0] * n
        rows = tau.reshape(-1, n)
        for row, (qi,) in enumerate(_rows(q)):
            status |= entry_points.GRAVITY_TORQUES.call(tree, qi, gl, ws, t)
            rows[row] = t
    _check(status, {"q": q, "gravity": g})
    return tau


def nonlinear_effects(
    model: RobotModel,
    q: npt.ArrayLike,
    qd: npt.ArrayLike,
    *,
    gravity: npt.ArrayLike = GRAVITY,
    data: Data | None = None,
) -> np.ndarray:
    """Coriolis, centrifugal and gravity terms c(q, q̇) + g(q): rnea with q̈ = 0."""
    return rnea(model, q, qd, np.zeros(np.shape(qd)), gravity=gravity, data=data)


def mass_matrix(model: RobotModel, q: npt.ArrayLike, *, data: Data | None = None) -> np.ndarray:
    """Symmetric joint-space inertia M(q), shape (n, n) or (N, n, n), armature on the diagonal."""
    matrix = _fast(model, q, None, None, GRAVITY, data, None, _MASS_MATRIX)
    return _mass_matrix_checked(model, q, data) if matrix is None else matrix


def _mass_matrix_checked(model: RobotModel, q: npt.ArrayLike, data: Data | None) -> np.ndarray:
    """mass_matrix with every argument converted and checked, errors naming the culprit."""
    if model.root_nv:
        return _floating_mass_matrix(model, q, data)
    n = model.nv
    q = _array(q, "q", n)
    data = _data(model, data)
    tree = model.kernel_tree()
    flat = np.empty((*q.shape[:-1], n * n))
    if HAVE_NUMBA:
        kernel = entry_points.MASS_MATRIX if q.ndim == 1 else entry_points.MASS_MATRIX_BATCH
        status = kernel.call(tree, q, data.ws, data.comp, flat)
    else:
        status = OK
        scratch = [0.0] * (n * n)
        rows = flat.reshape(-1, n * n)
        for row, (qi,) in enumerate(_rows(q)):
            status |= entry_points.MASS_MATRIX.call(tree, qi, data.ws, data.comp, scratch)
            rows[row] = scratch
    _check(status, {"q": q})
    return flat.reshape(*q.shape[:-1], n, n)


def forward_dynamics(
    model: RobotModel,
    q: npt.ArrayLike,
    qd: npt.ArrayLike,
    tau: npt.ArrayLike,
    *,
    gravity: npt.ArrayLike = GRAVITY,
    wrenches: Wrenches | None = None,
) -> np.ndarray:
    """Joint accelerations q̈ = M⁻¹ (τ − c − g − Σ Jᵀ F) for one state or a batch."""
    tau = _array(tau, "tau", model.nv)
    bias = rnea(model, q, qd, np.zeros(np.shape(qd)), gravity=gravity, wrenches=wrenches)
    if tau.shape != bias.shape:
        raise RneaError(f"tau must have shape {bias.shape}, got {tau.shape}")
    return np.linalg.solve(mass_matrix(model, q), (tau - bias)[..., None])[..., 0]


def link_pose(model: RobotModel, q: npt.ArrayLike, link: str) -> tuple[np.ndarray, np.ndarray]:
    """(rotation 3×3, origin 3 in m) of a link frame in the root frame (the world with a floating
    root) at one configuration q (nq,)."""
    q = joint_vector(model, q)
    frame = model.link_frame(link)
    if frame.body < 0:
        rot, trans = frame.rotation.copy(), frame.translation.copy()
    else:
        rots, pos = body_poses(model, q[model.root_nq :])
        r = rots[frame.body]
        rot, trans = r @ frame.rotation, pos[frame.body] + r @ frame.translation
    if not model.root_nv:
        return rot, trans
    base_rot, base_pos = base_placement(model, q)
    return base_rot @ rot, base_pos + base_rot @ trans


def jacobian(model: RobotModel, q: npt.ArrayLike, link: str) -> np.ndarray:
    """Geometric Jacobian (6×nv) of a link origin at one configuration q (nq,): root-frame axes
    (the world with a floating root), linear rows first. With a floating root the first root_nv
    columns map the base-frame twist v[:root_nv] (Pinocchio's LOCAL_WORLD_ALIGNED frame Jacobian)."""
    q = joint_vector(model, q)
    if model.root_nv:
        return _floating_jacobian(model, q, link)
    return _fixed_jacobian(model, q, link)


def _fixed_jacobian(model: RobotModel, q: np.ndarray, link: str) -> np.ndarray:
    """The Jacobian (6×njoints, root axes) of a link origin for joint positions q (njoints,)."""
    frame = model.link_frame(link)
    jac = np.zeros((6, model.njoints))
    if frame.body < 0:
        return jac
    rot, pos = body_poses(model, q)
    tip = pos[frame.body] + rot[frame.body] @ frame.translation
    i = frame.body
    while i >= 0:
        b = i * BODY_STRIDE + B_AXIS
        axis = rot[i] @ model.body[b : b + 3]
        if model.jtype[i] == REVOLUTE:
            jac[:3, i] = np.cross(axis, tip - pos[i])
            jac[3:, i] = axis
        else:
            jac[:3, i] = axis
        i = int(model.parent[i])
    return jac


def wrench_arrays(model: RobotModel, wrenches: Wrenches | None) -> tuple[np.ndarray, np.ndarray]:
    """Kernel arrays for link wrenches (see `kernels.layout`); links fixed to a fixed root are dropped (the
    root takes them), those fixed to a floating root go to the base (body njoints).
    UnknownLinkError for an unknown link, RneaError for a bad wrench."""
    if not wrenches:
        return _NO_WRENCH_BODY, _NO_WRENCH_DATA
    bodies, rows = [], []
    for link, wrench in wrenches.items():
        try:
            frame = model.link_frame(link)
        except UnknownLinkError as exc:
            raise UnknownLinkError(f"wrenches: {exc}") from None
        try:
            w = np.asarray(wrench, dtype=float).reshape(-1)
        except (TypeError, ValueError):
            raise RneaError(f"wrenches['{link}'] must be 6 numbers") from None
        if w.shape != (6,):
            raise RneaError(f"wrenches['{link}'] must be 6 numbers, got {w.shape[0]}")
        if not np.all(np.isfinite(w)):
            raise RneaError(f"wrenches['{link}'] contains NaN or Inf")
        if frame.body >= 0 or model.root_nv:
            row = np.zeros(WRENCH_STRIDE)
            row[WR_ORIGIN : WR_ORIGIN + 3] = frame.translation
            row[WR_FORCE : WR_FORCE + 3] = w[:3]
            row[WR_MOMENT : WR_MOMENT + 3] = w[3:]
            bodies.append(frame.body if frame.body >= 0 else model.njoints)
            rows.append(row)
    if not bodies:
        return _NO_WRENCH_BODY, _NO_WRENCH_DATA
    return np.array(bodies, dtype=np.int64), np.concatenate(rows)


def raise_not_finite(named: Mapping[str, object]) -> None:
    """Name the non-finite input of a non-finite result (or say the result overflowed)."""
    for name, value in named.items():
        if value is None:
            continue
        if isinstance(value, Mapping):
            for link, w in value.items():
                if not np.all(np.isfinite(np.asarray(w, dtype=float))):
                    raise RneaError(f"wrenches['{link}'] contains NaN or Inf")
        elif not np.all(np.isfinite(value)):  # type: ignore[call-overload]
            raise RneaError(f"{name} contains NaN or Inf")
    raise RneaError("result is not finite: inputs too large")


def _check(status: int, named: Mapping[str, object]) -> None:
    """Raise for a kernel status other than OK (arguments were checked, so: not finite)."""
    if status != OK:
        if status == BAD_SIZE:  # pragma: no cover - sizes are checked before the call
            raise RneaError("argument sizes do not match the model")
        raise_not_finite(named)


def _data(model: RobotModel, data: Data | None) -> Data:
    if data is None:
        return model.default_data
    if not isinstance(data, Data):
        raise RneaError(f"data must be a Data (model.create_data()), got {type(data).__name__}")
    if data.nv < model.nv:
        raise RneaError(f"data was made for a model with {data.nv} joints, too few for {model.nv}")
    return data


def _array(x: npt.ArrayLike, name: str, n: int) -> np.ndarray:
    """x as a C-contiguous float64 array of shape (n,) or (N, n); RneaError naming `name`."""
    if type(x) is np.ndarray and x.dtype == np.float64 and x.flags.carray:
        a = x
    else:
        try:
            a = np.array(x, dtype=np.float64, order="C")
        except (TypeError, ValueError):
            raise RneaError(f"{name} must be an array of numbers") from None
    if a.ndim not in (1, 2) or a.shape[-1] != n:
        raise RneaError(f"{name} must have shape ({n},) or (N, {n}), got {a.shape}")
    return a


def _gravity(gravity: npt.ArrayLike) -> np.ndarray:
    if gravity is GRAVITY:
        return _GRAVITY_ARRAY
    g = _array(gravity, "gravity", 3)
    if g.ndim != 1:
        raise RneaError("gravity must have shape (3,)")
    return g


def _out(out: np.ndarray | None, shape: tuple[int, ...]) -> np.ndarray:
    if out is None:
        return np.empty(shape)
    if not isinstance(out, np.ndarray) or out.shape != shape or out.dtype != _F64 or not out.flags.carray:
        raise RneaError(f"out must be a writeable C-contiguous float64 array of shape {shape}")
    return out


def _rows(*arrays: np.ndarray) -> Iterable[tuple[list, ...]]:
    """The states of (n,) or (N, n) arrays as tuples of plain lists (the no-numba path)."""
    if arrays[0].ndim == 1:
        return (tuple(a.tolist() for a in arrays),)
    return zip(*(a.tolist() for a in arrays), strict=True)


def joint_vector(model: RobotModel, q: npt.ArrayLike) -> np.ndarray:
    q = _array(q, "q", model.nq)
    if q.ndim != 1 or not np.all(np.isfinite(q)):
        raise RneaError(f"q must be {model.nq} finite numbers")
    return q


def body_poses(model: RobotModel, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rotation (n, 3, 3) and origin (n, 3) of every body in the root frame (q: the joints')."""
    n = model.njoints
    tree = model.kernel_tree()
    ws: Any = np.zeros(n * WS_STRIDE) if HAVE_NUMBA else [0.0] * (n * WS_STRIDE)
    entry_points.JOINT_TRANSFORMS.call(tree, q if HAVE_NUMBA else q.tolist(), ws)
    entry_points.ROOT_ROTATIONS.call(tree, ws)
    rec = np.asarray(ws).reshape(n, WS_STRIDE)
    rot = rec[:, W_ROT_ROOT : W_ROT_ROOT + 9].reshape(n, 3, 3)
    origin = rec[:, W_POS : W_POS + 3]
    pos = np.zeros((n, 3))
    for i in range(n):
        lam = model.parent[i]
        pos[i] = origin[i] if lam < 0 else pos[lam] + rot[lam] @ origin[i]
    return rot, pos


# --- floating and planar roots -----------------------------------------------------------------

_BASE_ROWS = {6: (0, 1, 2, 3, 4, 5), 3: (0, 1, 5)}  # root_nv → the spatial rows of its velocities


def _floating_states(model: RobotModel, **named: npt.ArrayLike) -> list[np.ndarray]:
    """Each argument as (nq,) / (N, nq) for q, (nv,) / (N, nv) otherwise, with matching batches."""
    out = []
    for name, value in named.items():
        out.append(_array(value, name, model.nq if name == "q" else model.nv))
    if len({a.shape[:-1] for a in out}) != 1:
        raise RneaError(f"{', '.join(named)} must all be one state or batches of the same length")
    return out


def _floating_check(model: RobotModel, status: int, named: Mapping[str, object]) -> None:
    if status == NOT_UNIT:
        which = "q[3:7] (the base quaternion)" if model.root_joint == "floating" else "q[2:4] (cos θ, sin θ)"
        raise RneaError(f"{which} must have unit norm (within {UNIT_TOL:g} on its square)")
    _check(status, named)


def _floating_rnea(
    model: RobotModel,
    q: npt.ArrayLike,
    qd: npt.ArrayLike,
    qdd: npt.ArrayLike,
    gravity: npt.ArrayLike,
    wrenches: Wrenches | None,
    data: Data | None,
    out: np.ndarray | None,
) -> np.ndarray:
    """rnea of a floating-root model (see the module doc)."""
    q, qd, qdd = _floating_states(model, q=q, qd=qd, qdd=qdd)
    g = _gravity(gravity)
    wb, wd = wrench_arrays(model, wrenches)
    d = _data(model, data)
    tau = _out(out, qd.shape)
    tree, root = model.kernel_tree(), model.root_record
    rows = tau.reshape(-1, model.nv)
    states = zip(q.reshape(-1, model.nq), qd.reshape(-1, model.nv), qdd.reshape(-1, model.nv), strict=True)
    args: tuple = (tree, root) if HAVE_NUMBA else (tree, root.tolist())
    extra: tuple = (g, wb, wd) if HAVE_NUMBA else (g.tolist(), wb.tolist(), wd.tolist())
    for i, (qi, vi, ai) in enumerate(states):
        status = entry_points.FLOATING_RNEA.call(*args, qi, vi, ai, *extra, d.ws, rows[i])
        _floating_check(model, status, {"q": q, "qd": qd, "qdd": qdd, "gravity": g, "wrenches": wrenches})
    return tau


def _floating_gravity(
    model: RobotModel, q: npt.ArrayLike, gravity: npt.ArrayLike, data: Data | None, out: np.ndarray | None
) -> np.ndarray:
    """gravity_torques of a floating-root model: rnea at rest, the base included (nv)."""
    (q,) = _floating_states(model, q=q)
    g = _gravity(gravity)
    d = _data(model, data)
    tau = _out(out, (*q.shape[:-1], model.nv))
    tree, root = model.kernel_tree(), model.root_record
    rows = tau.reshape(-1, model.nv)
    for i, qi in enumerate(q.reshape(-1, model.nq)):
        if HAVE_NUMBA:
            status = entry_points.FLOATING_GRAVITY.call(tree, root, qi, g, d.ws, rows[i])
        else:
            status = entry_points.FLOATING_GRAVITY.call(tree, root.tolist(), qi, g.tolist(), d.ws, rows[i])
        _floating_check(model, status, {"q": q, "gravity": g})
    return tau


def _floating_mass_matrix(model: RobotModel, q: npt.ArrayLike, data: Data | None) -> np.ndarray:
    """mass_matrix of a floating-root model: nv×nv, the root joint's rows and columns first."""
    nv = model.nv
    (q,) = _floating_states(model, q=q)
    d = _data(model, data)
    flat = np.empty((*q.shape[:-1], nv * nv))
    tree, root = model.kernel_tree(), model.root_record
    rows = flat.reshape(-1, nv * nv)
    for i, qi in enumerate(q.reshape(-1, model.nq)):
        if HAVE_NUMBA:
            status = entry_points.FLOATING_MASS_MATRIX.call(tree, root, qi, d.ws, d.comp, rows[i])
        else:
            status = entry_points.FLOATING_MASS_MATRIX.call(tree, root.tolist(), qi, d.ws, d.comp, rows[i])
        _floating_check(model, status, {"q": q})
    return flat.reshape(*q.shape[:-1], nv, nv)


def _floating_jacobian(model: RobotModel, q: np.ndarray, link: str) -> np.ndarray:
    """jacobian of a floating-root model (6×nv, world axes)."""
    frame = model.link_frame(link)
    base_rot, _ = base_placement(model, q)
    nv0 = model.root_nv
    jac = np.zeros((6, model.nv))
    rel = _fixed_jacobian(model, q[model.root_nq :], link)
    jac[:3, nv0:] = base_rot @ rel[:3]
    jac[3:, nv0:] = base_rot @ rel[3:]
    if frame.body < 0:
        tip = frame.translation
    else:
        rots, pos = body_poses(model, q[model.root_nq :])
        tip = pos[frame.body] + rots[frame.body] @ frame.translation
    # the link origin's velocity R (v + ω × r) and the angular velocity R ω, r the origin in the base
    full = np.zeros((6, 6))
    full[:3, :3] = base_rot
    skew = np.array([[0.0, -tip[2], tip[1]], [tip[2], 0.0, -tip[0]], [-tip[1], tip[0], 0.0]])
    full[:3, 3:] = -base_rot @ skew
    full[3:, 3:] = base_rot
    jac[:, :nv0] = full[:, _BASE_ROWS[nv0]]
    return jac
