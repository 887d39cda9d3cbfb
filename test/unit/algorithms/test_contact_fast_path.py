"""The compiled path of contact_inverse_dynamics (contact_fast_path.solve_problem on a cached
ContactProblem, kernels.contact_terms.floating_contact_kernel) against its references, over random states of
solo12 on four point feet and TALOS on two sole rectangles:
  - the kernel's M, h and contact Jacobians against Pinocchio's computeAllTerms and
    getFrameJacobian (LOCAL_WORLD_ALIGNED), to 1e-12 of their largest entry;
  - its M and h bitwise equal to mass_matrix and nonlinear_effects (the same operations);
  - its efforts and forces against the checked Python path (reference_contact_inverse_dynamics),
    to 1e-12 of the equation's largest term (max |f|, |τ|): TALOS's program has cond(H) ~ 1.6e7
    (the corner regularisation), so the checked path itself moves by up to ~5e-12 of max |τ|
    when its Jacobians move by one ulp; against that scale the difference is ~2e-13;
and the cases it hands over or takes the SVD for (two point feet, an infeasible demand, link
wrenches, a planar root), and the cache (one problem per contact set)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pinocchio as pin
import pytest
from floating_reference import FloatingRef, relerr

from rnea_ros.algorithms.contact_dynamics import contact_inverse_dynamics, reference_contact_inverse_dynamics
from rnea_ros.algorithms.contact_fast_path import ContactProblem, contact_problem, solve_problem
from rnea_ros.algorithms.contacts import Contact, ContactSolution, ContactStatus
from rnea_ros.algorithms.dynamics import GRAVITY, jacobian, mass_matrix, nonlinear_effects
from rnea_ros.compiled import entry_points
from rnea_ros.model.example_robots import example_urdf_path

TOL = 1e-12
SOLES = ("left_sole_link", "right_sole_link")
G = np.array(GRAVITY)


@dataclass(frozen=True)
class Case:
    urdf: str
    contacts: tuple[Contact, ...]


CASES = {
    "solo12": Case(
        "solo_description/robots/solo12.urdf",
        tuple(Contact(f, "point", mu=0.8) for f in ("FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT")),
    ),
    "talos": Case(
        "talos_data/robots/talos_reduced.urdf",
        tuple(Contact(s, "6d", mu=0.8, half_extents=(0.1, 0.065)) for s in SOLES),
    ),
}
REFS = {name: FloatingRef(example_urdf_path(case.urdf), "floating") for name, case in CASES.items()}


def equation_err(x: np.ndarray, ref: np.ndarray, sol: ContactSolution) -> float:
    """Largest entry error relative to the equation's largest term (max |f|, |τ|, at least 1)."""
    scale = max(1.0, float(np.max(np.abs(sol.f), initial=0.0)), float(np.max(np.abs(sol.tau))))
    return float(np.max(np.abs(x - ref), initial=0.0)) / scale


def standing_state(ref: FloatingRef, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Upright base with a random yaw and a small tilt, joints near zero, moderate v and a: the
    contacts can carry the base rows (status OK)."""
    m = ref.model
    yaw = rng.uniform(-np.pi, np.pi)
    tilt = rng.normal(0.0, 0.03, 2)
    quat = np.array([tilt[0], tilt[1], np.sin(yaw / 2), np.cos(yaw / 2)])
    q = np.zeros(m.nq)
    q[:3] = rng.normal(0.0, 1.0, 3)
    q[3:7] = quat / np.linalg.norm(quat)
    q[7:] = rng.uniform(-0.1, 0.1, m.njoints)
    return q, rng.normal(0.0, 0.3, m.nv), rng.normal(0.0, 0.3, m.nv)


def kernel_terms(problem: ContactProblem, q: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, ...]:
    model = problem.model
    nv = model.nv
    mass, h, jac = np.empty((nv, nv)), np.empty(nv), np.empty((problem.jac_rows, nv))
    t = problem.t.copy()
    status = entry_points.FLOATING_CONTACT.call(
        model.floating_args[1], q, v, G, problem.points, mass, h, jac, t
    )
    assert status == 0
    return mass, h, jac, t


@pytest.mark.parametrize("name", sorted(CASES))
def test_kernel_terms_match_pinocchio_and_the_python_path(name: str) -> None:
    ref, contacts = REFS[name], CASES[name].contacts
    model, pm, pd = ref.model, ref.pin, ref.data
    problem = contact_problem(model, contacts)
    assert problem is not None
    rng = np.random.default_rng(7)
    vidx = ref.vidx
    for _ in range(10):
        q, v, _a = ref.random_state(rng)  # any configuration: the terms do not need feasibility
        mass, h, jac, _ = kernel_terms(problem, q, v)
        np.testing.assert_array_equal(mass, mass_matrix(model, q))
        np.testing.assert_array_equal(h, nonlinear_effects(model, q, v))
        pq, pv = ref.q(q), ref.v(v)
        pin.computeAllTerms(pm, pd, pq, pv)
        pin.updateFramePlacements(pm, pd)
        m_pin = (np.triu(pd.M) + np.triu(pd.M, 1).T)[np.ix_(vidx, vidx)]
        assert relerr(mass, m_pin) <= TOL
        assert relerr(h, pd.nle[vidx]) <= TOL
        row = 0
        for contact in contacts:
            frame = pm.getFrameId(contact.link)
            j_pin = pin.getFrameJacobian(pm, pd, frame, pin.LOCAL_WORLD_ALIGNED)[:, vidx]
            rows = jac[row : row + contact.rows]
            assert relerr(rows, j_pin[: contact.rows]) <= TOL, contact.link
            assert relerr(rows, jacobian(model, q, contact.link)[: contact.rows]) <= TOL, contact.link
            row += contact.rows


@pytest.mark.parametrize("name", sorted(CASES))
def test_fast_path_equals_the_python_path(name: str) -> None:
    ref, contacts = REFS[name], CASES[name].contacts
    model = ref.model
    problem = contact_problem(model, list(contacts))
    assert problem is not None
    rng = np.random.default_rng(3)
    compared = 0
    for _ in range(20):
        q, v, a = standing_state(ref, rng)
        fast = solve_problem(problem, q, v, a, G)
        slow = reference_contact_inverse_dynamics(model, q, v, a, contacts)
        if slow.status != ContactStatus.OK:  # handed over to the checked path
            assert fast is None
            continue
        assert fast is not None  # the compiled path took it
        compared += 1
        assert equation_err(fast.tau, slow.tau, slow) <= TOL
        assert equation_err(fast.f, slow.f, slow) <= TOL
        assert equation_err(fast.base_residual, slow.base_residual, slow) <= TOL
        for mine, theirs in zip(fast.forces, slow.forces, strict=True):
            assert equation_err(mine, theirs, slow) <= TOL
        public = contact_inverse_dynamics(model, q, v, a, contacts)
        np.testing.assert_array_equal(public.tau, fast.tau)
    assert compared >= 15


def test_the_problem_is_cached_per_contact_set() -> None:
    model, contacts = REFS["solo12"].model, CASES["solo12"].contacts
    first = contact_problem(model, contacts)
    assert contact_problem(model, list(contacts)) is first
    equal = tuple(Contact(c.link, "point", mu=0.8) for c in contacts)  # equal, not the same objects
    assert contact_problem(model, equal) is first
    three = contact_problem(model, contacts[:3])  # the mask dropped a foot: a new problem
    assert three is not first and three is not None and three.m == 9
    assert contact_problem(model, contacts[:3]) is three
    assert contact_problem(model, [*contacts, contacts[0]]) is None  # a repeated link: checked path
    assert contact_problem(model, [Contact("no_such_link")]) is None


def test_two_feet_take_the_svd_and_equal_the_python_path() -> None:
    """Two point feet: the base rows have rank 5 (no moment about the line through the feet)."""
    ref = REFS["solo12"]
    model = ref.model
    contacts = (Contact("FL_FOOT", "point", mu=0.8), Contact("HR_FOOT", "point", mu=0.8))
    problem = contact_problem(model, contacts)
    assert problem is not None
    rng = np.random.default_rng(5)
    compared = 0
    for _ in range(10):
        q, v, a = standing_state(ref, rng)
        slow = reference_contact_inverse_dynamics(model, q, v, a, contacts)
        fast = contact_inverse_dynamics(model, q, v, a, contacts)
        assert fast.status == slow.status
        assert equation_err(fast.tau, slow.tau, slow) <= TOL
        assert equation_err(fast.f, slow.f, slow) <= TOL
        compared += solve_problem(problem, q, v, a, G) is not None
    assert compared == 0  # base rows outside the span of two feet: always the checked path


def test_infeasible_demand_and_wrenches_and_a_planar_root() -> None:
    ref = REFS["solo12"]
    model, contacts = ref.model, CASES["solo12"].contacts
    rng = np.random.default_rng(11)
    q, v, a = standing_state(ref, rng)
    a_up = a.copy()
    a_up[2] = -30.0  # the base pulled down faster than gravity: the feet would have to pull
    slow = reference_contact_inverse_dynamics(model, q, v, a_up, contacts)
    fast = contact_inverse_dynamics(model, q, v, a_up, contacts)
    assert slow.status == fast.status == ContactStatus.INFEASIBLE
    np.testing.assert_array_equal(fast.tau, slow.tau)
    wrenches = {"FL_LOWER_LEG": rng.normal(0.0, 0.5, 6), model.root_link: rng.normal(0.0, 0.5, 6)}
    gravity = np.array([0.3, -0.2, -9.7])
    problem = contact_problem(model, contacts, tuple(wrenches))
    assert problem is not None
    slow_w = reference_contact_inverse_dynamics(model, q, v, a, contacts, gravity=gravity, wrenches=wrenches)
    assert slow_w.status == ContactStatus.OK
    fast_w = solve_problem(problem, q, v, a, gravity, wrenches)
    assert fast_w is not None
    assert equation_err(fast_w.tau, slow_w.tau, slow_w) <= TOL
    assert equation_err(fast_w.f, slow_w.f, slow_w) <= TOL
    planar = FloatingRef(example_urdf_path(CASES["solo12"].urdf), "planar")
    pq, pv, pa = planar.random_state(rng)
    p_problem = contact_problem(planar.model, contacts)
    assert p_problem is not None
    _, _, jac, _ = kernel_terms(p_problem, pq, pv)
    row = 0
    for contact in contacts:
        assert relerr(jac[row : row + 3], jacobian(planar.model, pq, contact.link)[:3]) <= TOL
        row += 3
