"""Task-space dynamics against Pinocchio (Panda 9-DOF redundant, UR5 6-DOF square), the closed-form
2R arm of Modern Robotics ch. 8 and physics identities."""

from __future__ import annotations

import numpy as np
import pytest
from pinref import PinRef, relerr

from rnea_ros import (
    IllConditionedError,
    RobotModel,
    UnknownLinkError,
    acceleration_ellipsoid,
    apparent_mass,
    force_ellipsoid,
    forward_dynamics,
    gravity_torques,
    jacobian,
    jacobian_dot_qd,
    task_space_bias,
    task_space_inertia,
    task_space_inertia_inverse,
    tip_apparent_mass,
)

RTOL = 1e-9
# full-rank links: J has rank 6 (panda_leftfinger's chain includes a prismatic finger joint)
FULL_RANK = [
    ("panda", "panda_hand"),
    ("panda", "panda_link8"),
    ("panda", "panda_leftfinger"),
    ("ur5", "ee_link"),
]
# links on part of the chain (fewer than 6 joints): J̇q̇ and the linear part only
PARTIAL = [("panda", "panda_link5"), ("ur5", "wrist_2_link"), ("ur5", "wrist_1_link")]
LINEAR = np.hstack([np.eye(3), np.zeros((3, 3))])
_REFS: dict[str, PinRef] = {}


def ref_of(name: str) -> PinRef:
    if name not in _REFS:
        _REFS[name] = PinRef(name)
    return _REFS[name]


@pytest.mark.parametrize(("robot", "link"), FULL_RANK + PARTIAL)
def test_jacobian_dot_qd_is_pinocchio_classical_acceleration_at_zero_qdd(robot: str, link: str) -> None:
    ref = ref_of(robot)
    rng = np.random.default_rng(10)
    qs, qds, worst = [], [], 0.0
    for _ in range(20):
        q, qd, _ = ref.random_state(rng)
        expected = ref.classical_acceleration(q, qd, np.zeros(ref.model.nv), link)
        worst = max(worst, relerr(jacobian_dot_qd(ref.model, q, qd, link), expected))
        qs.append(q)
        qds.append(qd)
    assert worst < RTOL
    batch = jacobian_dot_qd(ref.model, np.array(qs), np.array(qds), link)
    assert batch.shape == (20, 6)
    assert np.allclose(batch[7], jacobian_dot_qd(ref.model, qs[7], qds[7], link), rtol=0, atol=1e-13)


@pytest.mark.parametrize(("robot", "link"), FULL_RANK)
def test_task_space_inertia_matches_pinocchio(robot: str, link: str) -> None:
    """Λ = (J M⁻¹ Jᵀ)⁻¹ assembled from pin.computeMinverse and pin.getFrameJacobian, 6-D and linear."""
    ref = ref_of(robot)
    rng = np.random.default_rng(11)
    qs = []
    for _ in range(15):
        q, _, _ = ref.random_state(rng)
        qs.append(q)
        for part, s in (("full", None), ("linear", LINEAR)):
            inv_pin = ref.inertia_inverse(q, link, s)
            result = task_space_inertia(ref.model, q, link, part=part)
            assert result.well_conditioned
            assert relerr(result.inverse, inv_pin) < RTOL
            assert relerr(result.inertia, np.linalg.inv(inv_pin)) < RTOL
            assert np.isclose(result.condition, np.linalg.cond(inv_pin), rtol=1e-6)
    batch = task_space_inertia_inverse(ref.model, np.array(qs), link)
    assert batch.shape == (15, 6, 6)
    assert relerr(batch[3], ref.inertia_inverse(qs[3], link)) < RTOL


def test_square_jacobian_inertia_is_jinv_t_m_jinv() -> None:
    ref = ref_of("ur5")
    rng = np.random.default_rng(12)
    for _ in range(10):
        q, _, _ = ref.random_state(rng)
        jinv = np.linalg.inv(ref.jacobian(q, "ee_link"))
        expected = jinv.T @ ref.mass(q) @ jinv
        assert relerr(task_space_inertia(ref.model, q, "ee_link").inertia, expected) < RTOL


@pytest.mark.parametrize(("robot", "link"), PARTIAL)
def test_linear_part_on_partial_chains_and_rank_deficient_full_twist(robot: str, link: str) -> None:
    ref = ref_of(robot)
    q, _, _ = ref.random_state(np.random.default_rng(13))
    lin = task_space_inertia(ref.model, q, link, part="linear")
    assert relerr(lin.inertia, np.linalg.inv(ref.inertia_inverse(q, link, LINEAR))) < RTOL
    full = task_space_inertia(ref.model, q, link)  # fewer than 6 joints move this link: Λ⁻¹ is singular
    assert full.inertia is None and full.condition > 1e12
    assert relerr(full.inverse, ref.inertia_inverse(q, link)) < RTOL
    with pytest.raises(IllConditionedError):
        full.require()


@pytest.mark.parametrize(("robot", "link"), FULL_RANK)
def test_task_space_bias_matches_pinocchio_assembly(robot: str, link: str) -> None:
    """η = Λ (J M⁻¹ (c + g) − J̇ q̇) with every piece from Pinocchio, random gravity."""
    ref = ref_of(robot)
    rng = np.random.default_rng(14)
    qs, qds = [], []
    for _ in range(10):
        q, qd, _ = ref.random_state(rng)
        gravity = rng.normal(0, 6, 3)
        qs.append(q)
        qds.append(qd)
        j, minv = ref.jacobian(q, link), ref.minverse(q)
        jdq = ref.classical_acceleration(q, qd, np.zeros(ref.model.nv), link)
        h = ref.nle(q, qd, gravity)
        for part, s in (("full", np.eye(6)), ("linear", LINEAR)):
            lam = np.linalg.inv(s @ j @ minv @ j.T @ s.T)
            expected = lam @ (s @ j @ minv @ h - s @ jdq)
            eta = task_space_bias(ref.model, q, qd, link, part=part, gravity=gravity)
            assert relerr(eta, expected) < RTOL
    batch = task_space_bias(ref.model, np.array(qs), np.array(qds), link)
    assert batch.shape == (10, 6)
    assert relerr(batch[4], task_space_bias(ref.model, qs[4], qds[4], link)) < 1e-12


def test_square_jacobian_task_space_equation_is_joint_space_equation() -> None:
    """Jᵀ (Λ V̇ + η) = M q̈ + c + g (pin.rnea) with V̇ = J q̈ + J̇ q̇, for the UR5 (square J)."""
    ref = ref_of("ur5")
    rng = np.random.default_rng(15)
    for _ in range(15):
        q, qd, qdd = ref.random_state(rng)
        vdot = ref.classical_acceleration(q, qd, qdd, "ee_link")
        lam = task_space_inertia(ref.model, q, "ee_link").inertia
        f = lam @ vdot + task_space_bias(ref.model, q, qd, "ee_link")
        assert relerr(ref.jacobian(q, "ee_link").T @ f, ref.rnea(q, qd, qdd)) < RTOL


@pytest.mark.parametrize(("robot", "link"), FULL_RANK)
def test_task_space_efforts_give_requested_acceleration_free_and_in_contact(robot: str, link: str) -> None:
    """τ = Jᵀ (Λ V̇ + η + F_ext) through pin.aba with the link exerting F_ext gives exactly V̇
    (the redundant Panda included: the dynamically consistent η)."""
    ref = ref_of(robot)
    rng = np.random.default_rng(16)
    for _ in range(10):
        q, qd, _ = ref.random_state(rng)
        vdot = rng.normal(0, 2, 6)
        f_ext = rng.normal(0, 20, 6)
        lam = task_space_inertia(ref.model, q, link).inertia
        j = ref.jacobian(q, link)
        for wrench in (np.zeros(6), f_ext):
            tau = j.T @ (lam @ vdot + task_space_bias(ref.model, q, qd, link) + wrench)
            qdd = ref.aba(q, qd, tau, ref.fext(q, link, wrench))
            assert relerr(ref.classical_acceleration(q, qd, qdd, link), vdot) < 1e-8


@pytest.mark.parametrize(("robot", "link"), FULL_RANK)
def test_kinetic_energy_in_task_space(robot: str, link: str) -> None:
    """½ Vᵀ Λ V = ½ q̇ᵀ M q̇ for q̇ = J̄ V (any q̇ when J is square), and ≤ otherwise (redundant)."""
    ref = ref_of(robot)
    rng = np.random.default_rng(17)
    for _ in range(10):
        q, qd, _ = ref.random_state(rng)
        j, m, minv = ref.jacobian(q, link), ref.mass(q), ref.minverse(q)
        lam = task_space_inertia(ref.model, q, link).inertia
        v = j @ qd
        if j.shape[0] == np.linalg.matrix_rank(j) == ref.model.nv:
            assert np.isclose(v @ lam @ v, qd @ m @ qd, rtol=RTOL)
        else:
            assert v @ lam @ v <= qd @ m @ qd * (1 + 1e-12)
            qd_consistent = minv @ j.T @ lam @ v  # dynamically consistent inverse J̄ V
            assert np.isclose(v @ lam @ v, qd_consistent @ m @ qd_consistent, rtol=RTOL)


# --- the planar 2R arm of Modern Robotics 8.1 (point masses at the link ends) -----------------

L1, L2, M1, M2, G = 0.7, 0.45, 2.3, 1.1, 9.81
XY = np.array([[1.0, 0, 0, 0, 0, 0], [0, 1.0, 0, 0, 0, 0]])
TWO_R = f"""<robot name="two_r">
  <link name="base"/>
  <link name="link1"><inertial><origin xyz="{L1} 0 0"/><mass value="{M1}"/>
    <inertia ixx="0" ixy="0" ixz="0" iyy="0" iyz="0" izz="0"/></inertial></link>
  <link name="link2"><inertial><origin xyz="{L2} 0 0"/><mass value="{M2}"/>
    <inertia ixx="0" ixy="0" ixz="0" iyy="0" iyz="0" izz="0"/></inertial></link>
  <link name="tip"/>
  <joint name="j1" type="continuous"><parent link="base"/><child link="link1"/><axis xyz="0 0 1"/></joint>
  <joint name="j2" type="continuous"><parent link="link1"/><child link="link2"/>
    <origin xyz="{L1} 0 0"/><axis xyz="0 0 1"/></joint>
  <joint name="tip_joint" type="fixed"><parent link="link2"/><child link="tip"/>
    <origin xyz="{L2} 0 0"/></joint>
</robot>"""


def two_r_closed_form(th: np.ndarray, thd: np.ndarray):
    """(M, c, g, J, J̇ θ̇) of the seed's 2R arm, gravity g along −y, tip (x, y)."""
    s1, c1, s2, c2 = np.sin(th[0]), np.cos(th[0]), np.sin(th[1]), np.cos(th[1])
    s12, c12 = np.sin(th.sum()), np.cos(th.sum())
    m = np.array(
        [
            [M1 * L1**2 + M2 * (L1**2 + L2**2 + 2 * L1 * L2 * c2), M2 * (L2**2 + L1 * L2 * c2)],
            [M2 * (L2**2 + L1 * L2 * c2), M2 * L2**2],
        ]
    )
    c = np.array([-M2 * L1 * L2 * s2 * (2 * thd[0] * thd[1] + thd[1] ** 2), M2 * L1 * L2 * s2 * thd[0] ** 2])
    g = np.array([(M1 + M2) * L1 * G * c1 + M2 * L2 * G * c12, M2 * L2 * G * c12])
    j = np.array([[-L1 * s1 - L2 * s12, -L2 * s12], [L1 * c1 + L2 * c12, L2 * c12]])
    w12 = thd.sum() ** 2
    jdq = np.array([-L1 * c1 * thd[0] ** 2 - L2 * c12 * w12, -L1 * s1 * thd[0] ** 2 - L2 * s12 * w12])
    return m, c, g, j, jdq


@pytest.fixture(scope="module")
def two_r() -> RobotModel:
    return RobotModel.from_urdf(TWO_R)


def test_two_r_inertia_and_bias_match_closed_form(two_r: RobotModel) -> None:
    """Λ = J⁻ᵀ M J⁻¹ and η = J⁻ᵀ (c + g) − Λ J̇ θ̇ (MR 8.6) with the seed's M, c, g."""
    rng = np.random.default_rng(18)
    for _ in range(20):
        th = rng.uniform(-np.pi, np.pi, 2)
        th[1] = np.sign(th[1]) * max(abs(th[1]), 0.3)  # away from the straight arm
        thd = rng.normal(0, 2, 2)
        m, c, g, j, jdq = two_r_closed_form(th, thd)
        jinv = np.linalg.inv(j)
        lam = jinv.T @ m @ jinv
        result = task_space_inertia(two_r, th, "tip", part=XY)
        assert relerr(result.inertia, lam) < 1e-12
        assert relerr(result.inverse, j @ np.linalg.inv(m) @ j.T) < 1e-12
        eta = task_space_bias(two_r, th, thd, "tip", part=XY, gravity=(0, -G, 0))
        assert relerr(eta, jinv.T @ (c + g) - lam @ jdq) < 1e-12
        assert relerr(jacobian_dot_qd(two_r, th, thd, "tip")[:2], jdq) < 1e-12
        v = j @ thd
        assert np.isclose(v @ result.inertia @ v, thd @ m @ thd, rtol=1e-12)


def test_two_r_straight_arm_is_ill_conditioned_with_finite_inverse(two_r: RobotModel) -> None:
    th, thd = np.array([0.4, 0.0]), np.array([0.3, -0.2])
    m, _, _, j, _ = two_r_closed_form(th, thd)
    result = task_space_inertia(two_r, th, "tip", part=XY)
    assert result.inertia is None and not result.well_conditioned and result.condition > 1e14
    assert np.all(np.isfinite(result.inverse))
    assert relerr(result.inverse, j @ np.linalg.inv(m) @ j.T) < 1e-12
    with pytest.raises(IllConditionedError) as err:
        task_space_bias(two_r, th, thd, "tip", part=XY)
    assert isinstance(err.value, ValueError) and err.value.condition > 1e14
    # along the arm the tip cannot be accelerated: infinite apparent mass / force ellipsoid axis
    along = np.array([np.cos(0.4), np.sin(0.4), 0.0])
    assert apparent_mass(two_r, th, "tip", along) > 1e14
    across = np.array([-np.sin(0.4), np.cos(0.4), 0.0])
    expected = 1 / (across[:2] @ j @ np.linalg.inv(m) @ j.T @ across[:2])
    assert np.isclose(apparent_mass(two_r, th, "tip", across), expected, rtol=1e-12)
    ellipsoid = force_ellipsoid(two_r, th, "tip", part=XY)
    assert ellipsoid.lengths[0] == np.inf and np.isfinite(ellipsoid.lengths[1])
    assert np.isclose(abs(ellipsoid.axes[:, 0] @ along[:2]), 1.0)


def test_ur5_wrist_singularity_reports_ill_conditioning() -> None:
    """wrist_2 = 0 aligns the wrist_1 and wrist_3 axes: J (6×6) loses rank."""
    ref = ref_of("ur5")
    q, qd, _ = ref.random_state(np.random.default_rng(19))
    q[ref.model.joint_names.index("wrist_2_joint")] = 0.0
    result = task_space_inertia(ref.model, q, "ee_link")
    assert result.inertia is None and result.condition > 1e12
    assert np.all(np.isfinite(result.inverse))
    assert relerr(result.inverse, ref.inertia_inverse(q, "ee_link")) < RTOL
    with pytest.raises(IllConditionedError):
        task_space_bias(ref.model, q, qd, "ee_link")
    with pytest.raises(IllConditionedError, match="state 1"):
        task_space_bias(ref.model, np.array([q + 0.3, q]), np.array([qd, qd]), "ee_link")
    assert np.isinf(force_ellipsoid(ref.model, q, "ee_link", part="full").lengths[0])
    assert np.isfinite(apparent_mass(ref.model, q, "ee_link", [0, 0, 1]))
    # the position part stays regular at a wrist singularity
    assert task_space_inertia(ref.model, q, "ee_link", part="linear").well_conditioned


# --- apparent mass and ellipsoids --------------------------------------------------------------


@pytest.mark.parametrize(("robot", "link"), FULL_RANK + PARTIAL[:1])
def test_apparent_mass_is_force_over_acceleration_at_rest(robot: str, link: str) -> None:
    """A force m(u)·u at the link (τ = g + J_vᵀ f, at rest) accelerates its origin by 1 m/s² along u;
    m(u) also equals 1 / (uᵀ J_v M⁻¹ J_vᵀ u) from Pinocchio."""
    ref = ref_of(robot)
    rng = np.random.default_rng(20)
    qs, us = [], []
    for _ in range(10):
        q, _, _ = ref.random_state(rng)
        u = rng.normal(size=3)
        u /= np.linalg.norm(u)
        mass = apparent_mass(ref.model, q, link, 3.0 * u)  # any length: normalised
        assert np.isclose(mass, 1.0 / (u @ ref.inertia_inverse(q, link, LINEAR) @ u), rtol=RTOL)
        jv = jacobian(ref.model, q, link)[:3]
        tau = gravity_torques(ref.model, q) + jv.T @ (mass * u)
        qdd = forward_dynamics(ref.model, q, np.zeros(ref.model.nv), tau)
        assert np.isclose(u @ (jv @ qdd), 1.0, rtol=1e-9)
        qs.append(q)
        us.append(u)
    qs, us = np.array(qs), np.array(us)
    per_state = apparent_mass(ref.model, qs, link, us)
    one_direction = apparent_mass(ref.model, qs, link, us[2])
    assert per_state.shape == one_direction.shape == (10,)
    assert np.isclose(per_state[5], apparent_mass(ref.model, qs[5], link, us[5]), rtol=1e-12)
    assert np.isclose(one_direction[5], apparent_mass(ref.model, qs[5], link, us[2]), rtol=1e-12)


def test_tip_apparent_mass_follows_velocity_or_rest_direction() -> None:
    ref = ref_of("panda")
    rng = np.random.default_rng(21)
    q, qd, _ = ref.random_state(rng)
    v = ref.jacobian(q, "panda_hand")[:3] @ qd
    rest = np.array([0.0, 0.0, 1.0])
    moving = tip_apparent_mass(ref.model, q, qd, "panda_hand", rest)
    assert np.isclose(moving, 1 / (v @ ref.inertia_inverse(q, "panda_hand", LINEAR) @ v / (v @ v)), rtol=RTOL)
    still = tip_apparent_mass(ref.model, q, 1e-9 * qd, "panda_hand", rest)
    assert np.isclose(still, 1 / (rest @ ref.inertia_inverse(q, "panda_hand", LINEAR) @ rest), rtol=RTOL)
    assert not np.isclose(moving, still)


@pytest.mark.parametrize(("robot", "link"), FULL_RANK)
def test_force_and_acceleration_ellipsoids(robot: str, link: str) -> None:
    """Force ellipsoid: unit accelerations through Λ (MR 8.1.3); acceleration ellipsoid: unit forces
    through Λ⁻¹. Checked as physics at rest: a force of length ℓ_i along axis i gives exactly the
    unit acceleration along axis i, a unit force gives acceleration of length 1/ℓ_i."""
    ref = ref_of(robot)
    rng = np.random.default_rng(22)
    q, _, _ = ref.random_state(rng)
    forces = force_ellipsoid(ref.model, q, link)
    accels = acceleration_ellipsoid(ref.model, q, link)
    lam_pin = np.linalg.inv(ref.inertia_inverse(q, link, LINEAR))
    assert np.all(np.diff(forces.lengths) <= 0) and np.all(np.diff(accels.lengths) <= 0)
    assert np.allclose(forces.axes.T @ forces.axes, np.eye(3), atol=1e-12)
    assert relerr(np.sort(forces.lengths), np.linalg.eigvalsh(lam_pin)) < RTOL
    assert np.allclose(accels.lengths, 1 / forces.lengths[::-1], rtol=1e-9)
    jv = ref.jacobian(q, link)[:3]
    g = gravity_torques(ref.model, q)
    zero = np.zeros(ref.model.nv)
    for i in range(3):
        axis = forces.axes[:, i]
        accel = jv @ forward_dynamics(ref.model, q, zero, g + jv.T @ (forces.lengths[i] * axis))
        assert np.allclose(accel, axis, atol=1e-9)
        axis = accels.axes[:, i]
        accel = jv @ forward_dynamics(ref.model, q, zero, g + jv.T @ axis)
        assert np.allclose(accel, accels.lengths[i] * axis, atol=1e-9 * accels.lengths[0])
    # the longest force axis is the largest apparent mass over all directions
    dirs = rng.normal(size=(200, 3))
    masses = apparent_mass(ref.model, np.tile(q, (200, 1)), link, dirs)
    assert masses.max() <= forces.lengths[0] * (1 + 1e-12)
    assert np.isclose(apparent_mass(ref.model, q, link, forces.axes[:, 0]), forces.lengths[0], rtol=1e-9)


# --- arguments ---------------------------------------------------------------------------------


def test_bad_arguments_raise_value_error_naming_them() -> None:
    model = ref_of("ur5").model
    q = np.zeros(model.nv)
    with pytest.raises(UnknownLinkError, match="link 'nope'"):
        task_space_inertia(model, q, "nope")
    with pytest.raises(ValueError, match="part"):
        task_space_inertia(model, q, "ee_link", part="angular")
    with pytest.raises(ValueError, match="part"):
        task_space_inertia(model, q, "ee_link", part=np.ones((2, 5)))
    with pytest.raises(ValueError, match="rcond"):
        task_space_inertia(model, q, "ee_link", rcond=0)
    with pytest.raises(ValueError, match="q must"):
        task_space_inertia(model, q[:3], "ee_link")
    with pytest.raises(ValueError, match="qd contains NaN"):
        jacobian_dot_qd(model, q, np.full(model.nv, np.nan), "ee_link")
    with pytest.raises(ValueError, match="direction must not be zero"):
        apparent_mass(model, q, "ee_link", [0, 0, 0])
    with pytest.raises(ValueError, match="rest_direction"):
        tip_apparent_mass(model, q, q, "ee_link", [0, 0])
