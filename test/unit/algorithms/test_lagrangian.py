"""Christoffel symbols, Coriolis matrix, Ṁ, momentum terms and the geared form, against Pinocchio
over every example-robot-data arm, physics identities and the seed's 2R closed form."""

from __future__ import annotations

import functools

import numpy as np
import pinocchio as pin
import pytest

from rnea_ros import RobotModel, gravity_torques, mass_matrix, nonlinear_effects, rnea
from rnea_ros.algorithms.gearing import Gearing, armature_model, geared_inverse_dynamics
from rnea_ros.algorithms.lagrangian import (
    christoffel,
    coriolis_matrix,
    mass_matrix_derivative,
    mass_matrix_partials,
)
from rnea_ros.errors import RneaError
from rnea_ros.estimation.momentum import momentum_terms
from rnea_ros.model.example_robots import example_robots_dir
from rnea_ros.sim.scenario import Refused, split_arm

TOL = 1e-9  # relative to the largest entry of the reference


@functools.cache
def arm_files() -> tuple[str, ...]:
    """Every example-robot-data URDF that is an arm (scenario.split_arm), and the double pendulum."""
    root = example_robots_dir()
    arms = ["double_pendulum_description/urdf/double_pendulum.urdf"]
    for path in sorted(root.rglob("*.urdf")):
        try:
            split_arm(RobotModel.from_urdf(path.read_text()))
        except (Refused, RneaError, ValueError):
            continue
        arms.append(str(path.relative_to(root)))
    return tuple(arms)


class Pin:
    def __init__(self, rel: str) -> None:
        path = example_robots_dir() / rel
        self.model = RobotModel.from_urdf(path.read_text())
        self.pin = pin.buildModelFromUrdf(str(path))
        self.data = self.pin.createData()
        joints = [self.pin.joints[self.pin.getJointId(j)] for j in self.model.joint_names]
        self.idx = [j.idx_v for j in joints]
        self.idx_q = [(j.idx_q, j.nq) for j in joints]  # continuous joints: nq = 2 (cos, sin)
        assert self.pin.nv == self.model.nv

    def to_pin(self, x: np.ndarray) -> np.ndarray:
        y = np.zeros(self.pin.nv)
        y[self.idx] = x
        return y

    def q_pin(self, q: np.ndarray) -> np.ndarray:
        y = np.zeros(self.pin.nq)
        for (i, nq), qi in zip(self.idx_q, q, strict=True):
            y[i : i + nq] = [np.cos(qi), np.sin(qi)] if nq == 2 else [qi]
        return y

    def coriolis(self, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
        c = pin.computeCoriolisMatrix(self.pin, self.data, self.q_pin(q), self.to_pin(qd))
        return c[np.ix_(self.idx, self.idx)].copy()

    def mass(self, q: np.ndarray) -> np.ndarray:
        m = pin.crba(self.pin, self.data, self.q_pin(q))
        m = np.triu(m) + np.triu(m, 1).T
        return m[np.ix_(self.idx, self.idx)]


def states(model: RobotModel, rng: np.random.Generator, count: int = 3):
    lo = np.where(np.isfinite(model.position_lower), model.position_lower, -np.pi)
    hi = np.where(np.isfinite(model.position_upper), model.position_upper, np.pi)
    for _ in range(count):
        yield rng.uniform(lo, hi), rng.normal(0.0, 1.5, model.nv)


def rel(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.max(np.abs(a - b)) / max(np.max(np.abs(b)), 1e-300))


def test_the_arm_walk_finds_the_arms() -> None:
    names = {a.split("/")[-1] for a in arm_files()}
    assert {"panda.urdf", "ur5_robot.urdf", "xarm7.urdf", "kinova.urdf", "so101.urdf", "z1.urdf"} <= names
    assert len(names) >= 15


@pytest.mark.parametrize("rel_path", arm_files())
def test_coriolis_christoffel_and_mdot_match_pinocchio(rel_path: str) -> None:
    ref = Pin(rel_path)
    m = ref.model
    n = m.nv
    rng = np.random.default_rng(abs(hash(rel_path)) % 2**32)
    for q, qd in states(m, rng):
        c_pin = ref.coriolis(q, qd)
        c = coriolis_matrix(m, q, qd)
        assert rel(c, c_pin) < TOL
        # Γ[:, :, k] is C at q̇ = e_k (C is linear in q̇)
        gamma = christoffel(m, q)
        gamma_pin = np.stack([ref.coriolis(q, np.eye(n)[k]) for k in range(n)], axis=2)
        assert rel(gamma, gamma_pin) < TOL
        mdot = mass_matrix_derivative(m, q, qd)
        assert rel(mdot, c_pin + c_pin.T) < TOL  # Pinocchio's Ṁ = C + Cᵀ
        mass, dm = mass_matrix_partials(m, q)
        assert rel(mass, ref.mass(q)) < TOL
        h = 1e-6  # central differences of Pinocchio's crba, along each q_k
        for k in range(n):
            e = np.eye(n)[k] * h
            fd = (ref.mass(q + e) - ref.mass(q - e)) / (2 * h)
            assert np.max(np.abs(dm[k] - fd)) <= 1e-6 * max(np.max(np.abs(mass)), 1.0)
        # identities: C q̇ = c − g, Ṁ − 2C skew-symmetric
        assert rel(c @ qd, nonlinear_effects(m, q, qd) - gravity_torques(m, q)) < TOL
        skew = mdot - 2 * c
        assert np.max(np.abs(skew + skew.T)) <= TOL * np.max(np.abs(mdot))
        # the observer's O(n) terms: p = M q̇, Cᵀ q̇
        p, ctqd = momentum_terms(m, q, qd)
        assert rel(p, mass @ qd) < TOL
        assert rel(ctqd, c_pin.T @ qd) < TOL


def two_link(m1: float, m2: float, l1: float, l2: float) -> RobotModel:
    """The seed's planar 2R arm: point masses at the link ends, joints about z."""
    links = "".join(
        f'<link name="l{i}"><inertial><origin xyz="{length} 0 0"/><mass value="{mass}"/>'
        '<inertia ixx="0" ixy="0" ixz="0" iyy="0" iyz="0" izz="0"/></inertial></link>'
        for i, (mass, length) in enumerate([(m1, l1), (m2, l2)], start=1)
    )
    joints = (
        '<joint name="j1" type="continuous"><parent link="base"/><child link="l1"/>'
        '<axis xyz="0 0 1"/></joint>'
        f'<joint name="j2" type="continuous"><parent link="l1"/><child link="l2"/><origin xyz="{l1} 0 0"/>'
        '<axis xyz="0 0 1"/></joint>'
    )
    return RobotModel.from_urdf(f'<robot name="r2"><link name="base"/>{links}{joints}</robot>')


def test_seed_2r_closed_form() -> None:
    m1, m2, l1, l2, grav = 1.3, 0.7, 0.9, 0.6, 9.81
    model = two_link(m1, m2, l1, l2)
    rng = np.random.default_rng(4)
    for _ in range(5):
        q = rng.uniform(-np.pi, np.pi, 2)
        qd = rng.normal(0, 2, 2)
        qdd = rng.normal(0, 2, 2)
        s2, c2 = np.sin(q[1]), np.cos(q[1])
        mass = np.array(
            [
                [m1 * l1**2 + m2 * (l1**2 + l2**2 + 2 * l1 * l2 * c2), m2 * (l2**2 + l1 * l2 * c2)],
                [m2 * (l2**2 + l1 * l2 * c2), m2 * l2**2],
            ]
        )
        h = m2 * l1 * l2 * s2
        c = np.array([-h * (2 * qd[0] * qd[1] + qd[1] ** 2), h * qd[0] ** 2])
        g = np.array(
            [
                (m1 + m2) * l1 * grav * np.cos(q[0]) + m2 * l2 * grav * np.cos(q.sum()),
                m2 * l2 * grav * np.cos(q.sum()),
            ]
        )
        gamma = np.zeros((2, 2, 2))
        gamma[0, 0, 1] = gamma[0, 1, 0] = gamma[0, 1, 1] = -h
        gamma[1, 0, 0] = h
        assert np.allclose(christoffel(model, q), gamma, rtol=0, atol=1e-12)
        assert np.allclose(coriolis_matrix(model, q, qd) @ qd, c, rtol=0, atol=1e-12)
        assert np.allclose(mass_matrix_partials(model, q)[0], mass, rtol=0, atol=1e-12)
        tau = rnea(model, q, qd, qdd, gravity=(0.0, -grav, 0.0))  # the seed's g acts along −y
        assert np.allclose(tau, mass @ qdd + c + g, rtol=0, atol=1e-12)


# ---------------------------------------------------------------- gearing


class GearedPin(Pin):
    """Pinocchio with each rotor as a body on its own joint (parent = the geared joint's parent,
    placement = the joint's), constrained to turn G times the joint: τ = Tᵀ τ_aug(T q̇, T q̈)."""

    def __init__(self, rel_path: str, gearing: Gearing) -> None:
        super().__init__(rel_path)
        from rnea_ros.compiled.kernels.layout import B_AXIS, BODY_STRIDE

        n = self.model.nv
        self.aug = pin.buildModelFromUrdf(str(example_robots_dir() / rel_path))
        rows = []
        for j, name in enumerate(self.model.joint_names):
            if gearing.ratio[j] == 0:
                continue
            jid = self.pin.getJointId(name)
            axis = self.model.body[j * BODY_STRIDE + B_AXIS : j * BODY_STRIDE + B_AXIS + 3]
            zz = np.outer(axis, axis)
            inertia = gearing.rotor_inertia[j] * zz + gearing.rotor_transverse[j] * (np.eye(3) - zz)
            rid = self.aug.addJoint(
                self.pin.parents[jid],
                pin.JointModelRevoluteUnaligned(*axis),
                self.pin.jointPlacements[jid],
                f"rotor_{name}",
            )
            self.aug.appendBodyToJoint(rid, pin.Inertia(0.0, np.zeros(3), inertia), pin.SE3.Identity())
            rows.append((self.aug.joints[rid].idx_v, j, gearing.ratio[j]))
        self.aug_data = self.aug.createData()
        self.t = np.zeros((self.aug.nv, n))
        for j in range(n):
            self.t[self.idx[j], j] = 1.0
        for row, j, ratio in rows:
            self.t[row, j] = ratio

    def tau(self, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray) -> np.ndarray:
        return self.t.T @ pin.rnea(self.aug, self.aug_data, self.t @ q, self.t @ qd, self.t @ qdd)

    def full_mass(self, q: np.ndarray) -> np.ndarray:
        """Columns from rnea (crba assumes depth-first joint indices, which the appended rotors break)."""
        zero = np.zeros(self.t.shape[1])
        base = self.tau(q, zero, zero)
        return np.stack([self.tau(q, zero, e) - base for e in np.eye(zero.size)], axis=1)


GEARED = [
    "ur_description/urdf/ur5_robot.urdf",
    "panda_description/urdf/panda.urdf",
    "z1_description/urdf/z1.urdf",
]


def gearing_for(model: RobotModel, ratio: float, armature: float = 0.1) -> Gearing:
    """Gear ratio `ratio` on every joint, rotors sized so that G² I_rotor = `armature` (kg m²)."""
    n = model.nv
    return Gearing(np.full(n, ratio), np.full(n, armature / ratio**2), np.full(n, 0.1))


@pytest.mark.parametrize("rel_path", GEARED)
@pytest.mark.parametrize("ratio", [6.0, 100.0])
def test_geared_form_matches_pinocchio_with_rotor_bodies(rel_path: str, ratio: float) -> None:
    model = Pin(rel_path).model
    gearing = gearing_for(model, ratio)
    ref = GearedPin(rel_path, gearing)
    rng = np.random.default_rng(7)
    for q, qd in states(model, rng):
        qdd = rng.normal(0, 2, model.nv)
        assert rel(geared_inverse_dynamics(model, gearing, q, qd, qdd), ref.tau(q, qd, qdd)) < TOL
        assert rel(mass_matrix_partials(model, q, gearing)[0], ref.full_mass(q)) < TOL
        c = coriolis_matrix(model, q, qd, gearing)
        skew = mass_matrix_derivative(model, q, qd, gearing) - 2 * c
        assert np.max(np.abs(skew + skew.T)) <= TOL * np.max(np.abs(c))
        # the armature-only model has the same diagonal G² I_rotor
        arm = mass_matrix(armature_model(model, gearing), q)
        assert np.allclose(np.diag(arm) - np.diag(mass_matrix(model, q)), gearing.armature, rtol=1e-12)


def armature_gap(rel_path: str, ratio: float) -> float:
    """RMS over random states of the armature-only model's effort error, relative to the RMS of the
    full geared effort (gravity left out: it is the same in both)."""
    model = Pin(rel_path).model
    gearing = gearing_for(model, ratio)
    approx = armature_model(model, gearing)
    rng = np.random.default_rng(11)
    err, ref = [], []
    for q, qd in states(model, rng, 20):
        qdd = rng.normal(0, 3, model.nv)
        full = geared_inverse_dynamics(model, gearing, q, qd, qdd) - gravity_torques(model, q)
        err.append(rnea(approx, q, qd, qdd) - gravity_torques(model, q) - full)
        ref.append(full)
    return float(np.sqrt(np.mean(np.square(err))) / np.sqrt(np.mean(np.square(ref))))


def test_armature_only_is_off_by_the_coupling_that_scales_with_one_over_g() -> None:
    """UR5, armature 0.1 kg m² per joint: the armature-only error of the inertial efforts is a few
    % at G = 6 (quasi-direct drive) and falls about as 1/G (the rotor couplings scale with G, the
    diagonal with G²)."""
    arm = "ur_description/urdf/ur5_robot.urdf"
    gaps = {g: armature_gap(arm, g) for g in (6.0, 30.0, 100.0)}
    assert gaps[6.0] > 0.01
    assert 3.0 < gaps[6.0] / gaps[30.0] < 7.0
    assert 2.0 < gaps[30.0] / gaps[100.0] < 5.0


def test_gearing_conversions_round_trip_and_scale() -> None:
    g = Gearing(np.array([100.0, 50.0, 0.0]), np.array([1e-5, 2e-5, 0.0]), np.array([0.05, 0.1, 0.0]))
    tau = np.array([[10.0, -4.0, 2.0], [1.0, 2.0, 3.0]])
    assert np.allclose(g.motor_torque(tau), tau / [100.0, 50.0, 1.0])
    assert np.allclose(g.current(tau), tau / [5.0, 5.0, 1.0])
    assert np.allclose(g.joint_torque(g.motor_torque(tau)), tau)
    assert np.allclose(g.joint_torque_from_current(g.current(tau)), tau)
    assert np.allclose(g.armature, [0.1, 0.05, 0.0])
    with pytest.raises(RneaError, match="ratio"):
        Gearing(np.array([-1.0]), np.array([0.0]), np.array([0.0]))
    with pytest.raises(RneaError, match="gearing has 3 joints"):
        armature_model(Pin(GEARED[0]).model, g)
