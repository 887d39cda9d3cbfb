"""The contact forces on matrices (rnea_ros.algorithms.contact_qp.solve_contact_forces) against
Pinocchio.

Free-flyer models of example-robot-data built by Pinocchio (solo12 standing on 4 point feet,
TALOS half-sitting on 2 sole rectangles): M = crba, h = nonLinearEffects, contact rows from
getFrameJacobian(LOCAL_WORLD_ALIGNED). Checked: M a + h = Sᵀ τ + J_cᵀ f to 1e-9, the base rows
carried by f alone, the forces in their cones (Coulomb cone, pyramid, centre of pressure in the
sole, minimum normal force), a mirror-symmetric stance giving mirror-symmetric forces, τ =
rnea(q, v, a) − J_cᵀ f on the actuated rows, closed forms on a point mass, and the INFEASIBLE
status with finite least-violating forces.
"""

from __future__ import annotations

import math

import numpy as np
import pinocchio as pin
import pytest

from rnea_ros.algorithms.contact_qp import solve_contact_forces
from rnea_ros.algorithms.contacts import Contact, ContactStatus
from rnea_ros.errors import ContactError, RneaError
from rnea_ros.model.example_robots import example_robots_dir

SOLO_FEET = ("FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT")
TALOS_SOLES = ("left_sole_link", "right_sole_link")
TALOS_SOLE = (0.1, 0.065)  # half length and width (m) of TALOS's sole rectangle
TOL = 1e-9


class Robot:
    """A Pinocchio free-flyer model at a reference configuration."""

    def __init__(self, urdf: str, srdf: str, key: str) -> None:
        root = example_robots_dir()
        self.model = pin.buildModelFromUrdf(str(root / urdf), pin.JointModelFreeFlyer())
        pin.loadReferenceConfigurations(self.model, str(root / srdf), False)
        self.q0 = self.model.referenceConfigurations[key].copy()
        self.data = self.model.createData()
        self.mass = sum(inertia.mass for inertia in self.model.inertias)

    def problem(self, q, v, a, contacts):
        """(M, h, jacobians, rnea(q, v, a)) with each contact's LOCAL_WORLD_ALIGNED rows."""
        m, d = self.model, self.data
        mm = pin.crba(m, d, q)
        mm = np.triu(mm) + np.triu(mm, 1).T
        h = pin.nonLinearEffects(m, d, q, v).copy()
        pin.computeJointJacobians(m, d, q)
        pin.updateFramePlacements(m, d)
        jacs = []
        for c in contacts:
            jac = pin.getFrameJacobian(m, d, m.getFrameId(c.link), pin.LOCAL_WORLD_ALIGNED)
            jacs.append(jac[:3].copy() if c.kind == "point" else jac.copy())
        return mm, h, jacs, pin.rnea(m, d, q, v, a).copy()

    def sole_axis(self, q, link: str) -> tuple[float, float, float]:
        pin.framesForwardKinematics(self.model, self.data, q)
        x = self.data.oMf[self.model.getFrameId(link)].rotation[:, 0]
        return (float(x[0]), float(x[1]), float(x[2]))

    def frame_position(self, q, link: str) -> np.ndarray:
        pin.framesForwardKinematics(self.model, self.data, q)
        return self.data.oMf[self.model.getFrameId(link)].translation.copy()


@pytest.fixture(scope="module")
def solo() -> Robot:
    return Robot("solo_description/robots/solo12.urdf", "solo_description/srdf/solo.srdf", "standing")


@pytest.fixture(scope="module")
def talos() -> Robot:
    return Robot("talos_data/robots/talos_reduced.urdf", "talos_data/srdf/talos.srdf", "half_sitting")


def feet(mu: float = 0.7, names=SOLO_FEET, **kw) -> list[Contact]:
    return [Contact(name, "point", mu=mu, **kw) for name in names]


def soles(robot: Robot, q, mu: float = 0.7, names=TALOS_SOLES) -> list[Contact]:
    return [
        Contact(n, "6d", mu=mu, tangent=robot.sole_axis(q, n), half_extents=TALOS_SOLE, min_normal_force=5.0)
        for n in names
    ]


def check_equation(mm, h, a, jacs, sol, n_base=6) -> None:
    """M a + h = Sᵀ τ + J_cᵀ f to 1e-9 (relative to the largest entry of M a + h, which is ≥ 1)."""
    b = mm @ a + h
    st_tau = np.concatenate([np.zeros(n_base), sol.tau])
    jc = np.vstack(jacs)
    scale = max(1.0, float(np.max(np.abs(b))))
    assert np.max(np.abs(b - st_tau - jc.T @ sol.f)) <= TOL * scale
    # the base rows are carried by f alone
    assert np.max(np.abs(b[:n_base] - (jc.T @ sol.f)[:n_base])) <= TOL * scale
    assert np.max(np.abs(sol.base_residual)) <= TOL * scale


def check_point_cone(contact: Contact, f: np.ndarray, tol: float = 1e-9) -> None:
    """Coulomb cone ‖f_t‖ ≤ μ f_n, the inscribed 4-facet pyramid and the minimum normal force."""
    t1, t2, n = contact.axes.T
    fn = float(f @ n)
    scale = max(1.0, fn)
    assert fn >= contact.min_normal_force - tol * scale
    assert math.hypot(f @ t1, f @ t2) <= contact.mu * fn + tol * scale
    if contact.facets == 4:
        assert max(abs(f @ t1), abs(f @ t2)) <= contact.mu / math.sqrt(2) * fn + tol * scale


def check_sole_cone(contact: Contact, w: np.ndarray, tol: float = 1e-9) -> None:
    """Force in the pyramid, centre of pressure in the rectangle, minimum normal force."""
    check_point_cone(contact, w[:3], tol)
    t1, t2, n = contact.axes.T
    ext_x, ext_y = contact.half_extents
    fn = float(w[:3] @ n)
    # moment about the origin of a normal force at (x, y): m·t₁ = y f_n, m·t₂ = −x f_n
    assert abs(w[3:] @ t1) <= ext_y * fn + tol * fn
    assert abs(w[3:] @ t2) <= ext_x * fn + tol * fn
    # yaw moment: at most what friction at the farthest corner allows
    assert abs(w[3:] @ n) <= contact.mu * math.hypot(ext_x, ext_y) * fn + tol * fn


# --- quadruped, 4 point feet ------------------------------------------------------------------


def test_quadruped_standing_weight_and_symmetry(solo: Robot) -> None:
    q = solo.q0
    v = a = np.zeros(solo.model.nv)
    contacts = feet()
    mm, h, jacs, tau_pin = solo.problem(q, v, a, contacts)
    sol = solve_contact_forces(mm, h, a, contacts, jacs)
    assert sol.status is ContactStatus.OK and sol.message == ""
    check_equation(mm, h, a, jacs, sol)
    for c, f in zip(contacts, sol.forces, strict=True):
        check_point_cone(c, f)
    # at rest the feet carry the weight (a physics identity)
    total = np.sum(sol.forces, axis=0)
    g = 9.81
    assert total == pytest.approx([0.0, 0.0, solo.mass * g], abs=1e-9 * solo.mass * g)
    # the standing pose is mirror-symmetric in x and y (feet and centre of mass): so are the forces
    fl, fr, hl, hr = sol.forces
    p = [solo.frame_position(q, n) for n in SOLO_FEET]
    assert p[1] == pytest.approx(p[0] * [1, -1, 1], abs=1e-12)
    assert p[2] == pytest.approx(p[0] * [-1, 1, 1], abs=1e-12)
    scale = solo.mass * g
    assert np.max(np.abs(fr - fl * [1, -1, 1])) <= 1e-9 * scale
    assert np.max(np.abs(hl - fl * [-1, 1, 1])) <= 1e-9 * scale
    assert np.max(np.abs(hr - fl * [-1, -1, 1])) <= 1e-9 * scale
    assert fl[2] == pytest.approx(scale / 4, rel=1e-9)
    # τ = Pinocchio's rnea minus J_cᵀ f on the actuated rows
    jc = np.vstack(jacs)
    assert np.max(np.abs(sol.tau - (tau_pin - jc.T @ sol.f)[6:])) <= 1e-9 * scale
    assert sol.tau.shape == (solo.model.nv - 6,)


@pytest.mark.parametrize("seed", range(5))
def test_quadruped_moving(solo: Robot, seed: int) -> None:
    rng = np.random.default_rng(seed)
    nv = solo.model.nv
    q = pin.integrate(solo.model, solo.q0, rng.normal(0.0, 0.05, nv))
    v = rng.normal(0.0, 0.5, nv)
    a = rng.normal(0.0, 1.0, nv)
    contacts = feet(mu=0.8, min_normal_force=0.5)
    mm, h, jacs, tau_pin = solo.problem(q, v, a, contacts)
    sol = solve_contact_forces(mm, h, a, contacts, jacs)
    assert sol.status is ContactStatus.OK
    check_equation(mm, h, a, jacs, sol)
    for c, f in zip(contacts, sol.forces, strict=True):
        check_point_cone(c, f)
    jc = np.vstack(jacs)
    scale = float(np.max(np.abs(tau_pin)))
    assert np.max(np.abs(sol.tau - (tau_pin - jc.T @ sol.f)[6:])) <= 1e-9 * scale
    # the minimum-norm choice: no admissible f of smaller norm meets the base rows (perturb along
    # the null space of the base rows and stay admissible: the norm does not decrease)
    ju = jc[:, :6].T
    null = np.linalg.svd(ju)[2][6:]
    for direction in null:
        for step in (1e-3, -1e-3):
            f2 = sol.f + step * direction
            if all(
                (f2[3 * i : 3 * i + 3] @ c.axes[:, 2]) >= c.min_normal_force
                and max(abs(f2[3 * i : 3 * i + 3] @ c.axes[:, 0]), abs(f2[3 * i : 3 * i + 3] @ c.axes[:, 1]))
                <= c.mu / math.sqrt(2) * (f2[3 * i : 3 * i + 3] @ c.axes[:, 2])
                for i, c in enumerate(contacts)
            ):
                assert f2 @ f2 >= sol.f @ sol.f - 1e-9


def test_quadruped_diagonal_pair_rank_deficient_but_feasible(solo: Robot) -> None:
    """Two diagonal feet (a trot stance) under the centre of mass: 6 base rows of rank 5 with a
    consistent right-hand side: carried exactly, the feet sharing the weight."""
    q = solo.q0
    v = a = np.zeros(solo.model.nv)
    contacts = feet(names=("FL_FOOT", "HR_FOOT"))
    mm, h, jacs, _ = solo.problem(q, v, a, contacts)
    sol = solve_contact_forces(mm, h, a, contacts, jacs)
    assert sol.status is ContactStatus.OK
    check_equation(mm, h, a, jacs, sol)
    for c, f in zip(contacts, sol.forces, strict=True):
        check_point_cone(c, f)
    assert sol.forces[0][2] == pytest.approx(solo.mass * 9.81 / 2, rel=1e-9)


def test_quadruped_front_pair_is_infeasible(solo: Robot) -> None:
    """Two front feet only: the centre of mass is behind their line, no force can hold it."""
    q = solo.q0
    v = a = np.zeros(solo.model.nv)
    contacts = feet(names=("FL_FOOT", "FR_FOOT"))
    mm, h, jacs, _ = solo.problem(q, v, a, contacts)
    sol = solve_contact_forces(mm, h, a, contacts, jacs)
    assert sol.status is ContactStatus.INFEASIBLE and "span" in sol.message
    assert np.all(np.isfinite(sol.f)) and np.all(np.isfinite(sol.tau))
    assert np.max(np.abs(sol.base_residual)) > 0.01 * solo.mass
    for c, f in zip(contacts, sol.forces, strict=True):
        check_point_cone(c, f, tol=1e-7)
    # the actuated rows still hold with the returned forces
    b = mm @ a + h
    jc = np.vstack(jacs)
    assert np.max(np.abs(b[6:] - sol.tau - (jc.T @ sol.f)[6:])) <= 1e-9 * np.max(np.abs(b))
    assert np.max(np.abs(b[:6] - (jc.T @ sol.f)[:6] - sol.base_residual)) <= 1e-9 * np.max(np.abs(b))


def test_quadruped_friction_exceeded_is_infeasible(solo: Robot) -> None:
    """A base acceleration of 0.5 g forward on μ = 0.3: the base rows have solutions, none in
    the friction cones; the least-violating forces lie on the cones' boundary."""
    q = solo.q0
    v = np.zeros(solo.model.nv)
    a = np.zeros(solo.model.nv)
    a[0] = 0.5 * 9.81
    contacts = feet(mu=0.3)
    mm, h, jacs, _ = solo.problem(q, v, a, contacts)
    sol = solve_contact_forces(mm, h, a, contacts, jacs)
    assert sol.status is ContactStatus.INFEASIBLE and "friction" in sol.message
    assert np.all(np.isfinite(sol.f)) and np.all(np.isfinite(sol.tau))
    for c, f in zip(contacts, sol.forces, strict=True):
        check_point_cone(c, f, tol=1e-7)
        # forward friction at the pyramid's limit: as much as the feet can give
        assert f[0] == pytest.approx(0.3 / math.sqrt(2) * f[2], rel=1e-4)


def test_single_point_foot_is_infeasible(solo: Robot) -> None:
    q = solo.q0
    v = a = np.zeros(solo.model.nv)
    contacts = feet(names=("FL_FOOT",))
    mm, h, jacs, _ = solo.problem(q, v, a, contacts)
    sol = solve_contact_forces(mm, h, a, contacts, jacs)
    assert sol.status is ContactStatus.INFEASIBLE
    assert all(np.all(np.isfinite(x)) for x in (sol.f, sol.tau, sol.base_residual))
    check_point_cone(contacts[0], sol.forces[0], tol=1e-7)
    # least violating: the least-squares force on the base rows (inside the cone here)
    b = (mm @ a + h)[:6]
    f_ls = np.linalg.lstsq(jacs[0][:, :6].T, b, rcond=None)[0]
    check_point_cone(contacts[0], f_ls)
    assert sol.forces[0] == pytest.approx(f_ls, rel=1e-5)


# --- humanoid, two 6-D soles -------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(4))
def test_humanoid_double_support(talos: Robot, seed: int) -> None:
    rng = np.random.default_rng(seed)
    nv = talos.model.nv
    q = talos.q0
    v = rng.normal(0.0, 0.1, nv) if seed else np.zeros(nv)
    a = rng.normal(0.0, 0.3, nv) if seed else np.zeros(nv)
    contacts = soles(talos, q)
    mm, h, jacs, tau_pin = talos.problem(q, v, a, contacts)
    sol = solve_contact_forces(mm, h, a, contacts, jacs)
    assert sol.status is ContactStatus.OK
    check_equation(mm, h, a, jacs, sol)
    for c, w in zip(contacts, sol.forces, strict=True):
        assert w.shape == (6,)
        check_sole_cone(c, w)
    jc = np.vstack(jacs)
    scale = float(np.max(np.abs(tau_pin)))
    assert np.max(np.abs(sol.tau - (tau_pin - jc.T @ sol.f)[6:])) <= 1e-9 * scale
    if seed == 0:  # at rest: the soles carry the weight, each about half
        total = sum(w[:3] for w in sol.forces)
        assert total == pytest.approx([0.0, 0.0, talos.mass * 9.81], abs=1e-9 * talos.mass * 9.81)
        assert sol.forces[0][2] == pytest.approx(talos.mass * 9.81 / 2, rel=0.05)


def test_humanoid_single_sole_centre_of_pressure_outside(talos: Robot) -> None:
    """One sole, 8.5 cm beside the centre of mass (its half width 6.5 cm): the centre of pressure
    would have to leave the sole. INFEASIBLE; the least-violating wrench puts it on the inner edge."""
    q = talos.q0
    v = a = np.zeros(talos.model.nv)
    contacts = soles(talos, q, names=("left_sole_link",))
    mm, h, jacs, _ = talos.problem(q, v, a, contacts)
    sol = solve_contact_forces(mm, h, a, contacts, jacs)
    assert sol.status is ContactStatus.INFEASIBLE and "friction" in sol.message
    w = sol.forces[0]
    assert np.all(np.isfinite(w)) and np.all(np.isfinite(sol.tau))
    check_sole_cone(contacts[0], w, tol=1e-7)
    t1, t2, n = contacts[0].axes.T
    fn = w[:3] @ n
    cop_t2 = (w[3:] @ t1) / fn  # m·t₁ = y f_n
    assert cop_t2 == pytest.approx(-TALOS_SOLE[1], abs=1e-4)  # inner edge (towards the body)
    assert fn == pytest.approx(talos.mass * 9.81, rel=1e-3)


# --- closed forms on a point mass (3 translations + one decoupled joint) ----------------------


def point_mass(accel_x: float, facets: int, mu: float = 1.0):
    mass, inertia, g = 2.0, 0.5, 9.81
    mm = np.diag([mass, mass, mass, inertia])
    h = np.array([0.0, 0.0, mass * g, 0.3])
    a = np.array([accel_x, 0.0, 0.0, 1.5])
    contact = Contact("foot", "point", mu=mu, facets=facets, min_normal_force=0.0)
    jac = np.hstack([np.eye(3), np.zeros((3, 1))])
    return mm, h, a, contact, jac, solve_contact_forces(mm, h, a, [contact], [jac], n_base=3)


def test_point_mass_closed_form() -> None:
    mm, h, a, contact, jac, sol = point_mass(0.5 * 9.81, facets=4)
    assert sol.status is ContactStatus.OK
    assert sol.f == pytest.approx([2.0 * 0.5 * 9.81, 0.0, 2.0 * 9.81], rel=1e-12)
    assert sol.tau == pytest.approx([0.5 * 1.5 + 0.3], rel=1e-12)


@pytest.mark.parametrize(("facets", "ok"), [(4, False), (8, True)])
def test_point_mass_pyramid_facets(facets: int, ok: bool) -> None:
    """A tangential demand of 0.8 g on μ = 1: beyond the 4-facet pyramid (μ cos 45° = 0.707),
    inside the 8-facet one along a facet normal (μ cos 22.5° = 0.924)."""
    mm, h, a, contact, jac, sol = point_mass(0.8 * 9.81, facets=facets)
    assert (sol.status is ContactStatus.OK) is ok
    if ok:
        check_equation(mm, h, a, [jac], sol, n_base=3)
    else:
        # least violating: the demanded force (15.7, 0, 19.6) N projected on the facet fx = 0.707 fz
        b = np.array([2.0 * 0.8 * 9.81, 0.0, 2.0 * 9.81])
        nrm = np.array([1.0, 0.0, -math.cos(math.pi / 4)])
        expected = b - (b @ nrm) / (nrm @ nrm) * nrm
        assert sol.f == pytest.approx(expected, rel=1e-5)
        assert sol.base_residual == pytest.approx(b - expected, abs=1e-4)
        assert sol.tau == pytest.approx([0.5 * 1.5 + 0.3], rel=1e-12)


# --- errors -------------------------------------------------------------------------------------


def test_problem_errors() -> None:
    mm, h, a, contact, jac, _ = point_mass(0.0, facets=4)
    with pytest.raises(ContactError, match="contact 'foot': point contact: jacobian must have shape"):
        solve_contact_forces(mm, h, a, [contact], [np.zeros((6, 4))], n_base=3)
    with pytest.raises(ContactError, match="contact 'foot': point contact: jacobian contains NaN"):
        solve_contact_forces(mm, h, a, [contact], [np.full((3, 4), np.nan)], n_base=3)
    with pytest.raises(ContactError, match="contact 'foot': given more than once"):
        solve_contact_forces(mm, h, a, [contact, contact], [jac, jac], n_base=3)
    with pytest.raises(RneaError, match=r"M must have shape \(4, 4\)"):
        solve_contact_forces(mm[:3], h, a, [contact], [jac], n_base=3)
    with pytest.raises(RneaError, match=r"a must have shape \(4,\)"):
        solve_contact_forces(mm, h, a[:3], [contact], [jac], n_base=3)
    with pytest.raises(RneaError, match="n_base must be in"):
        solve_contact_forces(mm, h, a, [contact], [jac], n_base=0)
    with pytest.raises(RneaError, match="1 contacts but 2 jacobians"):
        solve_contact_forces(mm, h, a, [contact], [jac, jac], n_base=3)


def test_no_contact_in_free_fall_and_on_the_ground() -> None:
    """No contact: OK when the base rows need no force (free fall), else INFEASIBLE, finite."""
    mm = np.diag([2.0, 2.0, 2.0, 0.5])
    h = np.array([0.0, 0.0, 2.0 * 9.81, 0.0])
    falling = solve_contact_forces(mm, h, [0.0, 0.0, -9.81, 1.0], [], [], n_base=3)
    assert falling.status is ContactStatus.OK and falling.f.shape == (0,)
    assert falling.tau == pytest.approx([0.5])
    resting = solve_contact_forces(mm, h, np.zeros(4), [], [], n_base=3)
    assert resting.status is ContactStatus.INFEASIBLE
    assert resting.base_residual == pytest.approx([0.0, 0.0, 2.0 * 9.81])
