"""Payload estimation from a link's wrench or the external joint torques, against Pinocchio: the
wrench a known load exerts (Pinocchio's spatial inertia times the link's motion from Pinocchio's
kinematics) and the torques it causes (Pinocchio's rnea with the load appended to the URDF's
joint); exact data recovered to 1e-9, noisy data within the stated standard deviations, every
refusal, and the regressors, blend and rotation measure in closed form."""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest
from pinref import PinRef

from rnea_ros.errors import PayloadRefused, RneaError
from rnea_ros.estimation.payload import (
    PayloadLimits,
    bias_regressor,
    blend_payloads,
    estimate_payload,
    fit_payload,
    link_motion,
    momentum_regressor,
    payload_from_parameters,
    payload_parameters,
    payload_regressor,
    rotation_spread,
)
from rnea_ros.model.robot_model import Payload
from rnea_ros.model.urdf import inertia_defect

ROBOTS = {"panda": "panda_hand", "ur5": "ee_link"}
G = np.array([0.0, 0.0, -9.81])


def random_load(rng: np.random.Generator) -> tuple[float, np.ndarray, np.ndarray]:
    """(mass, com, inertia about the com) of a random rigid body: a box's inertia, rotated."""
    mass = rng.uniform(0.3, 5.0)
    com = rng.uniform(-0.15, 0.15, 3)
    sides = rng.uniform(0.02, 0.3, 3)
    box = (
        mass
        / 12.0
        * np.diag(
            [sides[1] ** 2 + sides[2] ** 2, sides[0] ** 2 + sides[2] ** 2, sides[0] ** 2 + sides[1] ** 2]
        )
    )
    rot = pin.rpy.rpyToMatrix(*rng.uniform(-np.pi, np.pi, 3))
    return mass, com, rot @ box @ rot.T


class Load:
    """A load on a link of an example robot, with Pinocchio's view of what it exerts."""

    def __init__(self, name: str, mass: float, com: np.ndarray, inertia: np.ndarray) -> None:
        self.ref = PinRef(name)
        self.link = ROBOTS[name]
        self.mass, self.com, self.inertia = mass, com, inertia
        self.frame = self.ref.pin.getFrameId(self.link)
        self.body = pin.Inertia(mass, com, inertia)
        loaded = self.ref.pin.copy()
        frame = loaded.frames[self.frame]
        loaded.appendBodyToJoint(frame.parentJoint, frame.placement.act(self.body), pin.SE3.Identity())
        self.loaded, self.loaded_data = loaded, loaded.createData()

    def wrench(self, q, qd, qdd) -> np.ndarray:
        """[f; n] the link exerts on the load, root axes, moment about the link origin."""
        ref = self.ref
        pin.forwardKinematics(ref.pin, ref.data, ref.to_pin(q), ref.to_pin(qd), ref.to_pin(qdd))
        pin.updateFramePlacements(ref.pin, ref.data)
        v = pin.getFrameVelocity(ref.pin, ref.data, self.frame, pin.LOCAL)
        a = pin.getFrameAcceleration(ref.pin, ref.data, self.frame, pin.LOCAL)
        rot = ref.data.oMf[self.frame].rotation
        f = self.body * (a - pin.Motion(rot.T @ G, np.zeros(3))) + v.cross(self.body * v)
        return np.concatenate([rot @ f.linear, rot @ f.angular])

    def tau_ext(self, q, qd, qdd) -> np.ndarray:
        """External joint torques the load causes: −(rnea with it − rnea without)."""
        ref = self.ref
        args = (ref.to_pin(q), ref.to_pin(qd), ref.to_pin(qdd))
        with_load = pin.rnea(self.loaded, self.loaded_data, *args)
        return -(with_load - pin.rnea(ref.pin, ref.data, *args))[ref.idx]


def samples(load: Load, rng: np.random.Generator, n: int, moving: bool):
    states = [load.ref.random_state(rng) for _ in range(n)]
    q = np.array([s[0] for s in states])
    if not moving:
        return q, np.zeros_like(q), np.zeros_like(q)
    return q, np.array([s[1] for s in states]), np.array([s[2] for s in states])


@pytest.mark.parametrize("name", sorted(ROBOTS))
@pytest.mark.parametrize("source", ["wrench", "tau_ext"])
def test_exact_data_over_random_poses_and_motions_gives_mass_com_and_inertia(name: str, source: str) -> None:
    rng = np.random.default_rng(7)
    for _ in range(5):
        load = Load(name, *random_load(rng))
        q, qd, qdd = samples(load, rng, 40, moving=True)
        data = np.array([getattr(load, source)(*s) for s in zip(q, qd, qdd, strict=True)])
        wrenches, tau = (data, None) if source == "wrench" else (None, data)
        est = estimate_payload(
            load.ref.model, q, wrenches, load.link, tau_ext=tau, qd=qd, qdd=qdd, inertia=True
        )
        assert abs(est.mass - load.mass) < 1e-9 * load.mass
        assert np.max(np.abs(est.com - load.com)) < 1e-9
        assert np.max(np.abs(est.inertia - load.inertia)) < 1e-9 * np.max(np.abs(load.inertia))
        assert est.mismatch < 1e-9 and est.present


@pytest.mark.parametrize("name", sorted(ROBOTS))
def test_exact_data_at_rest_gives_mass_and_com(name: str) -> None:
    rng = np.random.default_rng(11)
    load = Load(name, *random_load(rng))
    q, qd, qdd = samples(load, rng, 30, moving=False)
    wrenches = np.array([load.wrench(*s) for s in zip(q, qd, qdd, strict=True)])
    est = estimate_payload(load.ref.model, q, wrenches, load.link)
    assert abs(est.mass - load.mass) < 1e-9 * load.mass and np.max(np.abs(est.com - load.com)) < 1e-9
    assert est.inertia is None and est.payload().inertia.tolist() == [[0.0] * 3] * 3  # a point mass
    # the same wrenches in the link's axes
    local = []
    for qi, w in zip(q, wrenches, strict=True):
        pin.framesForwardKinematics(load.ref.pin, load.ref.data, load.ref.to_pin(qi))
        rot = load.ref.data.oMf[load.frame].rotation
        local.append(np.concatenate([rot.T @ w[:3], rot.T @ w[3:]]))
    est = estimate_payload(load.ref.model, q, np.array(local), load.link, axes="link")
    assert abs(est.mass - load.mass) < 1e-9 * load.mass and np.max(np.abs(est.com - load.com)) < 1e-9


def test_noisy_wrenches_give_errors_within_the_stated_standard_deviations() -> None:
    """200 draws of 100 poses at rest, white noise of 0.5 N and 0.05 N m on the wrench: the
    reported standard deviations match the spread of the estimates within 20 %, and no error
    exceeds 4.5 of them."""
    rng = np.random.default_rng(3)
    load = Load("panda", 2.0, np.array([0.03, -0.02, 0.05]), np.diag([3e-3, 2e-3, 1e-3]))
    q, qd, qdd = samples(load, rng, 100, moving=False)
    clean = np.array([load.wrench(*s) for s in zip(q, qd, qdd, strict=True)])
    masses, coms, mass_std, com_std = [], [], [], []
    for _ in range(200):
        noise = np.concatenate([rng.normal(0, 0.5, (100, 3)), rng.normal(0, 0.05, (100, 3))], axis=1)
        est = estimate_payload(load.ref.model, q, clean + noise, load.link)
        masses.append(est.mass)
        coms.append(est.com)
        mass_std.append(est.mass_std)
        com_std.append(est.com_std)
    masses, coms, mass_std, com_std = (np.array(x) for x in (masses, coms, mass_std, com_std))
    assert 0.8 < np.std(masses) / np.mean(mass_std) < 1.25
    assert np.all(
        (np.std(coms, axis=0) / np.mean(com_std, axis=0) > 0.8)
        & (np.std(coms, axis=0) / np.mean(com_std, axis=0) < 1.25)
    )
    assert np.max(np.abs(masses - load.mass) / mass_std) < 4.5
    assert np.max(np.abs(coms - load.com) / com_std) < 4.5
    assert np.mean(mass_std) < 0.02 and np.max(np.mean(com_std, axis=0)) < 0.002  # what such noise allows


def test_refusals_name_their_reason() -> None:
    rng = np.random.default_rng(5)
    load = Load("ur5", 1.5, np.array([0.05, 0.0, 0.02]), np.diag([2e-3, 2e-3, 1e-3]))
    model, link = load.ref.model, load.link
    q, qd, qdd = samples(load, rng, 30, moving=False)
    clean = np.array([load.wrench(*s) for s in zip(q, qd, qdd, strict=True)])

    def refused(q_, wrenches, **kw) -> PayloadRefused:
        with pytest.raises(PayloadRefused) as info:
            estimate_payload(model, q_, wrenches, link, **kw)
        return info.value

    # one pose held: the mass is known, the centre of mass along gravity is not
    exc = refused(np.repeat(q[:1], 30, axis=0), np.repeat(clean[:1], 30, axis=0))
    assert exc.reason == "rotation" and "the mass alone: 1.500" in str(exc) and exc.estimate is not None
    # a sideways push that changes from pose to pose: no rigid load explains it
    push = np.zeros_like(clean)
    push[:, 0] = rng.uniform(-20, 20, 30)
    exc = refused(q, clean + push)
    assert exc.reason == "changing" and "no rigid load explains" in str(exc)
    # the link lifted: a negative mass
    assert refused(q, -clean).reason == "negative_mass"
    # a centre of mass beyond the limit
    exc = refused(q, clean, limits=PayloadLimits(max_com_distance=0.04))
    assert exc.reason == "com_distance" and "0.054 m" in str(exc)
    # an inertia no rigid body has (I_zz > I_xx + I_yy) fitted from exact data
    odd = Load("ur5", 1.5, np.array([0.05, 0.0, 0.02]), np.diag([1e-3, 1e-3, 5e-3]))
    q2, qd2, qdd2 = samples(odd, rng, 40, moving=True)
    tau = np.array([odd.tau_ext(*s) for s in zip(q2, qd2, qdd2, strict=True)])
    exc = refused(q2, None, tau_ext=tau, qd=qd2, qdd=qdd2, inertia=True)
    assert exc.reason == "inertia" and "triangle inequality" in str(exc)
    assert refused(q[:1], clean[:1]).reason == "samples"


def test_no_load_and_a_load_below_min_mass_are_no_payload() -> None:
    rng = np.random.default_rng(6)
    load = Load("ur5", 0.05, np.array([0.0, 0.0, 0.03]), np.zeros((3, 3)))
    q, qd, qdd = samples(load, rng, 30, moving=False)
    for scale in (0.0, 1.0):  # nothing, then 50 g (min_mass 0.1 kg)
        wrenches = scale * np.array([load.wrench(*s) for s in zip(q, qd, qdd, strict=True)])
        est = estimate_payload(load.ref.model, q, wrenches, load.link)
        assert not est.present and est.mass == 0.0 and est.payload().mass == 0.0
        assert "no payload on ee_link" in est.text()


def test_bad_input_is_an_error_naming_it() -> None:
    ref = PinRef("ur5")
    q = np.zeros((3, 6))
    with pytest.raises(RneaError, match="either wrenches or tau_ext"):
        estimate_payload(ref.model, q, None, "ee_link")
    with pytest.raises(RneaError, match="wrenches must have shape"):
        estimate_payload(ref.model, q, np.zeros((2, 6)), "ee_link")
    with pytest.raises(RneaError, match="inertia needs qd and qdd"):
        estimate_payload(ref.model, q, np.zeros((3, 6)), "ee_link", inertia=True)
    with pytest.raises(RneaError, match="fixed to the root"):
        estimate_payload(ref.model, q, np.zeros((3, 6)), "base_link")
    with pytest.raises(RneaError, match="axes"):
        estimate_payload(ref.model, q, np.zeros((3, 6)), "ee_link", axes="tool")


def test_the_regressors_split_into_momentum_and_bias() -> None:
    """payload_regressor(b, ω̇, ωωᵀ) = momentum_regressor(v̇, ω̇) + bias_regressor(v, ω, g) for
    b = v̇ + ω × v − g; and Y π is Pinocchio's I (a − g) + v ×* I v."""
    rng = np.random.default_rng(8)
    v, w, vd, wd, g = (rng.normal(size=(20, 3)) for _ in range(5))
    b = vd + np.cross(w, v) - g
    full = payload_regressor(b, wd, np.einsum("ni,nj->nij", w, w))
    assert np.max(np.abs(full - momentum_regressor(vd, wd) - bias_regressor(v, w, g))) < 1e-13
    mass, com, inertia = random_load(rng)
    body = pin.Inertia(mass, com, inertia)
    pi = payload_parameters(Payload("x", mass, com, inertia))
    for k in range(20):
        f = body * pin.Motion(vd[k] - g[k], wd[k]) + pin.Motion(v[k], w[k]).cross(
            body * pin.Motion(v[k], w[k])
        )
        # Pinocchio's spatial acceleration a = (v̇, ω̇) in body axes is our b without ω × v
        assert (
            np.max(np.abs(full[k] @ pi - np.concatenate([f.linear, f.angular])))
            < 1e-12 * np.abs(f.vector).max()
        )


def test_blend_stays_a_rigid_body_and_ends_at_each_payload() -> None:
    rng = np.random.default_rng(9)
    old = Payload("l", *random_load(rng))
    new = Payload("l", *random_load(rng))
    for s, want in ((0.0, old), (1.0, new)):
        got = blend_payloads(old, new, s, "l")
        assert abs(got.mass - want.mass) < 1e-12 and np.max(np.abs(got.com - want.com)) < 1e-12
        assert np.max(np.abs(got.inertia - want.inertia)) < 1e-12
    for s in np.linspace(0.05, 0.95, 19):
        got = blend_payloads(old, new, s, "l")
        assert abs(got.mass - ((1 - s) * old.mass + s * new.mass)) < 1e-12
        assert inertia_defect(got.inertia) is None
    half = blend_payloads(None, new, 0.5, "l")  # from nothing: the new body at half its mass
    assert abs(half.mass - new.mass / 2) < 1e-12 and np.max(np.abs(half.com - new.com)) < 1e-12
    assert blend_payloads(old, None, 1.0, "l").mass == 0.0
    back = payload_from_parameters("l", payload_parameters(old))
    assert np.max(np.abs(back.inertia - old.inertia)) < 1e-12 and np.max(np.abs(back.com - old.com)) < 1e-12


@pytest.mark.parametrize("degrees", [0.0, 1.0, 10.0, 45.0])
def test_rotation_spread_of_a_cone_is_its_half_angle(degrees: float) -> None:
    theta = np.radians(degrees)
    phi = np.linspace(0, 2 * np.pi, 360, endpoint=False)
    u = np.stack(
        [np.sin(theta) * np.cos(phi), np.sin(theta) * np.sin(phi), np.cos(theta) * np.ones_like(phi)], 1
    )
    assert abs(rotation_spread(u) - theta) < 1e-7


def test_a_release_in_noisy_data_is_no_payload_not_a_contact() -> None:
    """The model carries 2 kg; the object goes: the observer sees minus its wrench, plus noise
    larger than a min_mass load's. Measured against what the observer saw (as large as the load),
    the residual is small: no payload. Against the targets alone (noise) it was a "contact"."""
    rng = np.random.default_rng(12)
    load = Load("ur5", 2.0, np.array([0.03, 0.0, 0.05]), np.zeros((3, 3)))
    q, qd, qdd = samples(load, rng, 200, moving=False)
    _, b, omega, omega_dot = link_motion(load.ref.model, q, load.link)
    regressor = payload_regressor(b, omega_dot, np.einsum("ni,nj->nij", omega, omega))
    current = payload_parameters(Payload(load.link, 2.0, load.com, np.zeros((3, 3))))
    observed = -regressor @ current + rng.normal(0, 0.5, (200, 6))  # the load gone, noisy
    targets = observed + regressor @ current
    directions = b / np.linalg.norm(b, axis=1, keepdims=True)
    est = fit_payload(regressor, targets, directions, load.link, observed=observed)
    assert not est.present and est.mismatch < 0.1
    with pytest.raises(PayloadRefused) as info:
        fit_payload(regressor, targets, directions, load.link)
    assert info.value.reason == "changing"
