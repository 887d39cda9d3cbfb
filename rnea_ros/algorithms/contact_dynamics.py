"""Contact-consistent inverse dynamics of a floating (or planar) base robot model: the actuated
efforts τ and the contact forces f with M a + h = Sᵀ τ + J_cᵀ f (`contact_qp` states the program),
M, h and the contact Jacobians taken from the model at (q, v).

`contact_inverse_dynamics` takes the compiled path (`contact_fast_path`) when it can and the
checked one (`reference_contact_inverse_dynamics`: each term from its own call, the program built
and solved by `contact_qp.solve_contact_forces`) otherwise; both give the same result to rounding.
Its argument and result types, `Contact`, `ContactSolution` and `ContactStatus`
(`rnea_ros.algorithms.contacts`), can be imported from here too.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

import numpy as np
import numpy.typing as npt

from rnea_ros.algorithms.contact_fast_path import contact_problem, solve_problem
from rnea_ros.algorithms.contact_qp import checked_matrix, solve_contact_forces
from rnea_ros.algorithms.contacts import ROOT_ROWS, Contact, ContactSolution, ContactStatus
from rnea_ros.algorithms.dynamics import GRAVITY, jacobian, link_pose, mass_matrix, nonlinear_effects
from rnea_ros.compiled.jit import HAVE_NUMBA
from rnea_ros.errors import ContactError, RneaError
from rnea_ros.model.robot_model import RobotModel

__all__ = [
    "Contact",
    "ContactSolution",
    "ContactStatus",
    "contact_inverse_dynamics",
]

_FAST = HAVE_NUMBA
_GRAVITY_VECTOR = np.array(GRAVITY)
_F64 = np.dtype(np.float64)


def reference_contact_inverse_dynamics(
    model: RobotModel,
    q: npt.ArrayLike,
    v: npt.ArrayLike,
    a: npt.ArrayLike,
    contacts: Sequence[Contact],
    *,
    gravity: npt.ArrayLike = GRAVITY,
    wrenches: Mapping[str, npt.ArrayLike] | None = None,
) -> ContactSolution:
    """contact_inverse_dynamics on the checked Python path (each Jacobian from `jacobian`, M and h
    from their own calls, the program built and solved by solve_contact_forces): the reference of
    the compiled path, and where it hands over (bad input, infeasible programs).

    q (nq), v and a (nv) in Pinocchio's layout; M = mass_matrix(model, q), h =
    nonlinear_effects(model, q, v, gravity=gravity), and each contact's rows from
    jacobian(model, q, link) (6×nv, world axes, about the link origin, linear first): the first 3
    for a point, all 6 for a 6d contact, so normals and tangents are in world axes. A 6d contact
    with half_extents and no tangent takes its link's x axis (link_pose) as the rectangle's t₁.
    wrenches: link → the wrench [f, m about the link origin] that link exerts on its environment
    (not a contact), world axes, added to h as J_linkᵀ F (as rnea's wrenches); None: none.
    RneaError for a fixed root (no unactuated rows: the contact forces are not determined)."""
    root = getattr(model, "root_joint", "fixed")
    n_base = ROOT_ROWS.get(root)
    if n_base is None:
        raise RneaError(
            f"contact inverse dynamics needs a floating or planar root joint, the model's is '{root}'"
        )
    jacs = []
    placed = []
    for c in contacts:
        if not isinstance(c, Contact):
            raise RneaError(f"contacts must be Contact objects, got {type(c).__name__}")
        if c.link not in model.link_frames:
            raise ContactError(c.link, "not a link of the model")
        jac = jacobian(model, q, c.link)
        jacs.append(jac[:3] if c.kind == "point" else jac)
        if c.corners and c.tangent is None:
            rot = link_pose(model, q, c.link)[0]
            c = replace(c, tangent=(float(rot[0, 0]), float(rot[1, 0]), float(rot[2, 0])))
        placed.append(c)
    m = mass_matrix(model, q)
    h = nonlinear_effects(model, q, v, gravity=gravity)
    for link, wrench in (wrenches or {}).items():
        if link not in model.link_frames:
            raise RneaError(f"wrench on '{link}': not a link of the model")
        w = checked_matrix(wrench, f"wrench on '{link}'", (6,))
        h = h + jacobian(model, q, link).T @ w
    return solve_contact_forces(m, h, a, placed, jacs, n_base=n_base)


def _is_vector(x: object) -> bool:
    return type(x) is np.ndarray and x.dtype is _F64 and x.ndim == 1


def contact_inverse_dynamics(
    model: RobotModel,
    q: npt.ArrayLike,
    v: npt.ArrayLike,
    a: npt.ArrayLike,
    contacts: Sequence[Contact],
    *,
    gravity: npt.ArrayLike = GRAVITY,
    wrenches: Mapping[str, npt.ArrayLike] | None = None,
) -> ContactSolution:
    """solve_contact_forces on a RobotModel with a floating or planar root joint.

    q (nq), v and a (nv) in Pinocchio's layout; M = mass_matrix(model, q), h =
    nonlinear_effects(model, q, v, gravity=gravity), and each contact's rows from
    jacobian(model, q, link) (6×nv, world axes, about the link origin, linear first): the first 3
    for a point, all 6 for a 6d contact, so normals and tangents are in world axes. A 6d contact
    with half_extents and no tangent takes its link's x axis (link_pose) as the rectangle's t₁.
    wrenches: link → the wrench [f, m about the link origin] that link exerts on its environment
    (not a contact), world axes, added to h as J_linkᵀ F (as rnea's wrenches); None: none.
    RneaError for a fixed root (no unactuated rows: the contact forces are not determined).

    Speed: float64 vectors q, v, a (gravity the default or a float64 (3,), wrenches float64 (6,))
    take the compiled path (`solve_problem` on the model's cached `contact_problem`), equal to
    `reference_contact_inverse_dynamics` to rounding; anything else, and whatever that path
    declines, takes the checked path."""
    if _FAST and _is_vector(q) and _is_vector(v) and _is_vector(a):
        if gravity is GRAVITY:
            g = _GRAVITY_VECTOR
        elif _is_vector(gravity) and gravity.shape == (3,) and gravity.flags.c_contiguous:  # type: ignore[union-attr]
            g = gravity  # type: ignore[assignment]
        else:
            g = None
        if g is not None:
            problem = contact_problem(model, contacts, tuple(wrenches) if wrenches else ())
            if problem is not None:
                solution = solve_problem(problem, q, v, a, g, wrenches)  # type: ignore[arg-type]
                if solution is not None:
                    return solution
    return reference_contact_inverse_dynamics(model, q, v, a, contacts, gravity=gravity, wrenches=wrenches)
