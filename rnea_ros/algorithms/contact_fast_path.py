"""contact_inverse_dynamics on the compiled path: M, h and every contact Jacobian from one
kinematics pass (`kernels.contact_terms.floating_contact_kernel`), the program's parts that
depend on the model and the contact set alone built once per set (`ContactProblem`, cached per
model), and the base rows as equalities without an SVD when well conditioned. Equal to the checked path
(`contact_dynamics.reference_contact_inverse_dynamics`) to rounding; it declines (None) whatever
the checked path must decide (bad input, rank-deficient base rows outside their span, no
admissible force). docs/contact_dynamics.md, "The compiled path".
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import quadprog  # type: ignore[import-not-found]  # a C extension without stubs

from rnea_ros.algorithms.contact_qp import (
    EQUALITY_RTOL,
    ContactQP,
    contact_layout,
    independent_rows,
    solve_qp,
)
from rnea_ros.algorithms.contacts import ROOT_ROWS, Contact, ContactSolution, ContactStatus
from rnea_ros.compiled import entry_points
from rnea_ros.compiled.kernels.contact_terms import (
    PT_BODY,
    PT_CORNERS,
    PT_EXTENT,
    PT_MU,
    PT_NORMAL,
    PT_OFFSET,
    PT_ROW,
    PT_ROWS,
    PT_STRIDE,
    PT_TCOL,
    PT_TROW,
    PT_XAXIS,
)
from rnea_ros.model.robot_model import RobotModel

__all__: list[str] = []  # contact_dynamics.contact_inverse_dynamics is its entry point

WELL_CONDITIONED = 1e-6  # σ_min / σ_max of the base rows above which no SVD is taken
_F64 = np.dtype(np.float64)
_FLOATING_CONTACT = entry_points.FLOATING_CONTACT
_ROWS_WELL_CONDITIONED = entry_points.ROWS_WELL_CONDITIONED


@dataclass(frozen=True, eq=False)
class ContactProblem:
    """Everything of the contact program that depends on the model and the contact set only, built
    once per set (`contact_problem`, cached per model) and never modified.

    key: (the contacts, the links with wrenches). points: the kernel's contact-point record (PT_*),
    the contacts' rows then 6 rows per wrench link. t: f = T x (m×nx), a template whose rectangle
    blocks with a link-given tangent (`rotating`) are rewritten per call. weights,
    regularisation: of the objective. hessian: H when no block rotates. cmat, bvec: quadprog's
    constraints with the n_base equality columns left to fill. slices: each contact's rows of f.
    """

    model: RobotModel
    key: tuple
    n_base: int
    points: np.ndarray
    jac_rows: int
    m: int
    t: np.ndarray
    identity: bool
    rotating: bool
    weights: np.ndarray
    regularisation: np.ndarray
    hessian: np.ndarray
    neg_g: np.ndarray
    cmat: np.ndarray
    bvec: np.ndarray
    c_matrix: np.ndarray
    d: np.ndarray
    slices: tuple[slice, ...]
    wrench_rows: tuple[tuple[str, int], ...]


_PROBLEMS: weakref.WeakKeyDictionary[RobotModel, ContactProblem] = weakref.WeakKeyDictionary()


def contact_problem(
    model: RobotModel, contacts: Sequence[Contact], wrench_links: tuple[str, ...] = ()
) -> ContactProblem | None:
    """The ContactProblem of these contacts (and links with wrenches) on a floating or planar
    model: the model's cached one when its key is equal, else a new one (then cached); None when
    the set cannot enter the compiled path (a fixed root, an unknown or repeated link, not a
    Contact: the checked path then names it)."""
    key = (tuple(contacts), wrench_links)
    problem = _PROBLEMS.get(model)
    if problem is not None and problem.key == key:
        return problem
    problem = _build_problem(model, key)
    if problem is not None:
        _PROBLEMS[model] = problem
    return problem


def _build_problem(model: RobotModel, key: tuple) -> ContactProblem | None:
    contacts, wrench_links = key
    n_base = ROOT_ROWS.get(model.root_joint)
    if n_base is None:
        return None
    links = [getattr(ct, "link", None) for ct in contacts]
    for ct in contacts:
        if not isinstance(ct, Contact) or ct.link not in model.link_frames or links.count(ct.link) > 1:
            return None
    if any(link not in model.link_frames for link in wrench_links):
        return None
    t, w, reg, cm, d = contact_layout(contacts)
    m, nx = t.shape
    records = []
    row = col = 0
    slices = []
    rotating = False
    for ct in contacts:
        frame = model.link_frames[ct.link]
        corners = ct.corners and ct.tangent is None
        rotating |= corners
        rec = np.zeros(PT_STRIDE)
        rec[PT_BODY] = frame.body
        rec[PT_OFFSET : PT_OFFSET + 3] = frame.translation
        rec[PT_ROWS] = ct.rows
        rec[PT_ROW] = row
        rec[PT_CORNERS] = 1.0 if corners else 0.0
        rec[PT_XAXIS : PT_XAXIS + 3] = frame.rotation[:, 0]
        rec[PT_NORMAL : PT_NORMAL + 3] = ct.axes[:, 2]
        rec[PT_MU] = ct.mu / math.sqrt(2.0)
        if ct.half_extents is not None:
            rec[PT_EXTENT : PT_EXTENT + 2] = ct.half_extents
        rec[PT_TROW] = row
        rec[PT_TCOL] = col
        records.append(rec)
        slices.append(slice(row, row + ct.rows))
        row += ct.rows
        col += 16 if ct.corners else ct.rows
    wrench_rows = []
    for link in wrench_links:
        frame = model.link_frames[link]
        rec = np.zeros(PT_STRIDE)
        rec[PT_BODY] = frame.body
        rec[PT_OFFSET : PT_OFFSET + 3] = frame.translation
        rec[PT_ROWS] = 6
        rec[PT_ROW] = row
        records.append(rec)
        wrench_rows.append((link, row))
        row += 6
    reg_diag = np.diag(reg)
    h = t.T @ (w[:, None] * t) + reg_diag
    nc = cm.shape[0]
    cmat = np.zeros((nx, n_base + nc))
    cmat[:, n_base:] = (-cm).T
    bvec = np.concatenate([np.zeros(n_base), -d])
    for array in (t, w, reg_diag, cm, d, cmat, bvec):
        array.flags.writeable = False
    hessian = 0.5 * (h + h.T)  # writeable: quadprog takes no read-only buffer (and copies it)
    return ContactProblem(
        model=model, key=key, n_base=n_base,
        points=np.concatenate(records) if records else np.zeros(0), jac_rows=row, m=m, t=t,
        identity=not any(ct.corners for ct in contacts), rotating=rotating, weights=w,
        regularisation=reg_diag,
        hessian=hessian, neg_g=-np.zeros(nx), cmat=cmat, bvec=bvec, c_matrix=cm, d=d, slices=tuple(slices),
        wrench_rows=tuple(wrench_rows),
    )  # fmt: skip


def solve_problem(
    problem: ContactProblem,
    q: np.ndarray,
    v: np.ndarray,
    a: np.ndarray,
    gravity: np.ndarray,
    wrenches: Mapping[str, npt.ArrayLike] | None = None,
) -> ContactSolution | None:
    """contact_inverse_dynamics of the problem's model and contacts on the compiled path: M, h and
    every contact Jacobian from one kinematics pass (kernels.contact_terms.floating_contact_kernel), the
    program's constant parts from the problem, the base rows as equalities without an SVD when
    well conditioned (WELL_CONDITIONED). q (nq), v, a (nv): float64 vectors; gravity: a C-contiguous
    float64 (3,), world axes; wrenches: the problem's wrench links → float64 (6,). None when the
    checked path must decide (bad input, rank-deficient base rows outside their span, no admissible
    force): it gives the same result or names the fault.

    The SVD of the base rows is skipped only without rectangles (T = 1, H = diag(1, w)): with
    them H's condition number is ~1/CORNER_REGULARISATION and the result depends on the rows'
    representation at ~1e-13, so they go through the SVD as the checked path does."""
    model = problem.model
    nv = model.nv
    if a.shape[0] != nv:
        return None
    mass = np.empty((nv, nv))
    h = np.empty(nv)
    jac = np.empty((problem.jac_rows, nv))
    t = problem.t.copy() if problem.rotating else problem.t
    if _FLOATING_CONTACT.call(model.floating_args[1], q, v, gravity, problem.points, mass, h, jac, t) != 0:
        return None
    if problem.wrench_rows:
        if wrenches is None:
            return None
        for link, row in problem.wrench_rows:
            w = wrenches[link]
            if type(w) is not np.ndarray or w.dtype is not _F64 or w.shape != (6,):
                return None
            h = h + jac[row : row + 6].T @ w
    b = mass @ a + h
    if not np.isfinite(b).all():
        return None
    n_base = problem.n_base
    b_base = b[:n_base]
    jc = jac[: problem.m]
    ju = jc[:, :n_base]
    a_base = ju.T if problem.identity else ju.T @ t
    if problem.rotating:
        w = problem.weights
        hh = t.T @ (w[:, None] * t) + problem.regularisation
        hessian = 0.5 * (hh + hh.T)
    else:
        hessian = problem.hessian
    if problem.identity and problem.m and _ROWS_WELL_CONDITIONED.call(a_base, WELL_CONDITIONED):
        cmat = problem.cmat.copy()
        cmat[:, :n_base] = a_base.T
        bvec = problem.bvec.copy()
        bvec[:n_base] = b_base
        try:
            x = quadprog.solve_qp(hessian, problem.neg_g, cmat, bvec, n_base)[0]
        except ValueError:  # no admissible force: the checked path relaxes the program
            return None
        if not np.all(np.isfinite(x)):
            return None
    else:
        scale = max(1.0, float(np.max(np.abs(b))))
        a_eq, b_eq, outside = independent_rows(a_base, b_base, scale)
        if outside > EQUALITY_RTOL:
            return None
        qp = ContactQP(H=hessian, g=-problem.neg_g, A=a_base, b=b_base, C=problem.c_matrix, d=problem.d, T=t)
        x = solve_qp(qp, a_eq, b_eq)
        if x is None:
            return None
    f = x if problem.identity else t @ x
    generalised = jc.T @ f
    return ContactSolution(
        tau=b[n_base:] - generalised[n_base:],
        forces=tuple(f[s].copy() for s in problem.slices),
        f=f,
        status=ContactStatus.OK,
        base_residual=b_base - generalised[:n_base],
    )
