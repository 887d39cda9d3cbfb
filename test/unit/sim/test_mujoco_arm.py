"""The closed-loop demo's cores, no ROS: MuJoCo against rnea_ros's model, the multi-sine
trajectory, pairing commands with states, metrics and plot.

MuJoCo is an independent implementation of rigid-body dynamics (its own URDF compiler, its own
algorithms), so agreement to ~1e-12 on random states shows that the simulated robot and the
node's model are the same robot: same joints in the same order, same masses and inertias.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import replace

import numpy as np
import pinocchio as pin
import pytest
from pinref import PinRef

from rnea_ros import RobotModel, gravity_torques, mass_matrix, rnea
from rnea_ros.identification.excitation import ExcitationOptions, MultiSine, design, within_effort_limits
from rnea_ros.model.example_robots import example_urdf_path
from rnea_ros.sim.answer_pairing import AnswerMatcher
from rnea_ros.sim.mujoco_arm import MujocoArm, mujoco_urdf
from rnea_ros.sim.report import Recording, check_targets, plot, summarize, table
from rnea_ros.trajectory.sampling import TrajectorySampler

ROBOTS = ("panda", "ur5", "double_pendulum", "xarm_description/urdf/xarm7.urdf")
RNG = np.random.default_rng(7)


def robot(name: str) -> tuple[str, RobotModel, MujocoArm]:
    urdf = example_urdf_path(name).read_text()
    return urdf, RobotModel.from_urdf(urdf), MujocoArm(urdf)


def random_state(model: RobotModel, scale: float = 1.0):
    lo = np.where(np.isfinite(model.position_lower), model.position_lower, -np.pi)
    hi = np.where(np.isfinite(model.position_upper), model.position_upper, np.pi)
    return RNG.uniform(lo, hi), RNG.normal(0, scale, model.nv), RNG.normal(0, 3 * scale, model.nv)


# --- MuJoCo vs rnea_ros ---------------------------------------------------------------------


@pytest.mark.parametrize("name", ROBOTS)
def test_mujoco_has_the_model_joints_in_the_model_order(name: str) -> None:
    _, model, arm = robot(name)
    assert arm.joint_names == model.joint_names
    assert np.array_equal(arm.lower, model.position_lower)
    assert np.array_equal(arm.upper, model.position_upper)
    assert np.array_equal(arm.damping, model.damping)  # URDF <dynamics damping>
    assert np.array_equal(arm.coulomb, model.coulomb)  # URDF <dynamics friction>
    assert np.array_equal(arm.model.dof_damping, model.damping)
    assert np.all(arm.model.dof_frictionloss == 0)  # dry friction: implicit damping (default)
    lossy = MujocoArm(example_urdf_path(name).read_text(), coulomb="frictionloss", friction_scale=0.7)
    np.testing.assert_allclose(lossy.model.dof_frictionloss, 0.7 * model.coulomb, rtol=1e-15)
    np.testing.assert_allclose(lossy.model.dof_damping, 0.7 * model.damping, rtol=1e-15)
    assert np.all(arm.model.dof_armature == 0)  # no rotor inertia on either side


def test_mujoco_keeps_every_urdf_inertial_as_written() -> None:
    """No inertia balancing, mass bounds or inertia from geometry: each body's mass, centre of
    mass and inertia tensor (rotated back from MuJoCo's principal axes) equal the URDF's."""
    urdf, _, arm = robot("panda")
    m = arm.model
    checked = 0
    for link in ET.fromstring(urdf).iter("link"):
        inertial = link.find("inertial")
        if inertial is None:
            continue
        body = m.body(link.get("name"))
        mass = float(inertial.find("mass").get("value"))
        assert m.body_mass[body.id] == pytest.approx(mass, abs=1e-15)
        if mass == 0:
            continue
        xyz = [float(v) for v in inertial.find("origin").get("xyz").split()]
        assert np.allclose(m.body_ipos[body.id], xyz, atol=1e-15)
        i = {k: float(v) for k, v in inertial.find("inertia").attrib.items()}
        tensor = np.array(
            [[i["ixx"], i["ixy"], i["ixz"]], [i["ixy"], i["iyy"], i["iyz"]], [i["ixz"], i["iyz"], i["izz"]]]
        )
        w, x, y, z = m.body_iquat[body.id]
        rot = np.array(
            [
                [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
            ]
        )
        assert np.allclose(rot @ np.diag(m.body_inertia[body.id]) @ rot.T, tensor, atol=1e-12)
        checked += 1
    assert checked >= 10


@pytest.mark.parametrize("name", ROBOTS)
def test_mujoco_bias_forces_equal_rnea(name: str) -> None:
    """MuJoCo's qfrc_bias = c(q, q̇) + g(q) equals rnea(q, q̇, 0) on random states."""
    _, model, arm = robot(name)
    for _ in range(20):
        q, qd, _ = random_state(model)
        expected = rnea(model, q, qd, np.zeros(model.nv))
        assert np.allclose(arm.bias(q, qd), expected, rtol=0, atol=1e-9 * max(1.0, np.abs(expected).max()))
        assert np.allclose(arm.bias(q, 0 * qd), gravity_torques(model, q), rtol=0, atol=1e-9)


@pytest.mark.parametrize("name", ROBOTS)
def test_mujoco_inverse_dynamics_and_mass_matrix_equal_ours(name: str) -> None:
    _, model, arm = robot(name)
    worst = 0.0
    for _ in range(20):
        q, qd, qdd = random_state(model)
        tau = rnea(model, q, qd, qdd)
        worst = max(worst, np.abs(arm.inverse(q, qd, qdd) - tau).max() / max(1.0, np.abs(tau).max()))
        assert np.allclose(arm.mass_matrix(q), mass_matrix(model, q), rtol=0, atol=1e-12)
    assert worst < 1e-9


def test_stepping_with_rnea_efforts_gives_the_requested_acceleration() -> None:
    """The effort interface: efforts in joint_names order, N m, applied as they are (UR5: no
    damping, no mimic joints, away from the limits, so nothing else acts)."""
    _, model, arm = robot("ur5")
    arm.reset(dict(zip(model.joint_names, [0.3, -1.2, 1.0, -0.5, 0.7, 0.2], strict=True)))
    q, qd = arm.q, arm.qd
    qdd = np.array([1.0, -2.0, 0.5, 3.0, -1.0, 2.0])
    arm.step(rnea(model, q, qd, qdd))
    assert np.allclose((arm.qd - qd) / arm.timestep, qdd, rtol=0, atol=1e-8)
    assert arm.time == pytest.approx(1e-3)


def test_gravity_compensated_panda_stays_at_rest() -> None:
    """Efforts g(q) from our model hold MuJoCo's Panda (fingers held by the servo) still."""
    urdf, model, _ = robot("panda")
    arm = MujocoArm(urdf, held=("panda_finger_joint1", "panda_finger_joint2"))
    home = [0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785, 0.02, 0.02]
    arm.reset(dict(zip(arm.joint_names, home, strict=True)))
    q0 = arm.q
    for _ in range(2000):
        arm.step(gravity_torques(model, arm.q))
    assert np.abs(arm.q - q0).max() < 1e-6  # fingers: held by a PD, off by their weight at most
    assert np.abs(arm.q[:7] - q0[:7]).max() < 1e-10
    assert np.allclose(arm.applied[7:], arm.hold_kp * (q0[7:] - arm.q[7:]) - arm.hold_kd * arm.qd[7:])
    arm.step(np.zeros(9))  # without gravity compensation the arm falls
    for _ in range(200):
        arm.step(np.zeros(9))
    assert np.abs(arm.q[:7] - q0[:7]).max() > 1e-2


def test_mujoco_urdf_keeps_links_and_joints_only() -> None:
    urdf = example_urdf_path("panda").read_text()
    reduced = ET.fromstring(mujoco_urdf(urdf))
    assert not list(reduced.iter("visual")) and not list(reduced.iter("collision"))
    assert not list(reduced.iter("mesh"))
    assert len(reduced.findall("link")) == len(ET.fromstring(urdf).findall("link"))
    compiler = reduced.find("mujoco/compiler")
    assert compiler.get("balanceinertia") == "false" and compiler.get("fusestatic") == "false"
    assert compiler.get("boundmass") == "0" and compiler.get("inertiafromgeom") == "false"


def test_bad_inputs_raise_value_errors() -> None:
    with pytest.raises(ValueError, match="not XML"):
        mujoco_urdf("<robot")
    with pytest.raises(ValueError, match="<robot>"):
        mujoco_urdf("<sdf/>")
    urdf = example_urdf_path("ur5").read_text()
    with pytest.raises(ValueError, match="not a movable joint"):
        MujocoArm(urdf, held=("nope",))
    arm = MujocoArm(urdf)
    with pytest.raises(ValueError, match="6 finite values"):
        arm.step(np.zeros(5))
    with pytest.raises(ValueError, match="6 finite values"):
        arm.step(np.array([np.nan, 0, 0, 0, 0, 0]))
    with pytest.raises(ValueError, match="timestep"):
        MujocoArm(urdf, timestep=0.0)
    with pytest.raises(ValueError, match="coulomb"):
        MujocoArm(urdf, coulomb="stiction")
    with pytest.raises(ValueError, match="friction_scale"):
        MujocoArm(urdf, friction_scale=-1.0)
    xarm = example_urdf_path("xarm_description/urdf/xarm7.urdf").read_text()
    with pytest.raises(ValueError, match="implicitfast"):
        MujocoArm(xarm, integrator="rk4")


# --- joint friction in the simulator ------------------------------------------------------------

XARM = example_urdf_path("xarm_description/urdf/xarm7.urdf").read_text()


def spin_up(arm: MujocoArm, joint: str, effort: float, seconds: float) -> float:
    """Velocity of `joint` after `seconds` under a constant `effort`, every other joint held,
    no gravity."""
    arm.model.opt.gravity[:] = 0.0
    j = arm.indices([joint])[0]
    tau = np.zeros(arm.nv)
    tau[j] = effort
    for _ in range(int(round(seconds / arm.timestep))):
        arm.step(tau)
    return float(arm.qd[j])


@pytest.mark.parametrize(
    ("joint", "effort"), [("joint1", 12.0), ("joint1", 2.0), ("joint7", 1.5), ("joint7", 0.5)]
)
def test_implicit_coulomb_friction_balances_the_effort_in_steady_state(joint: str, effort: float) -> None:
    """Default simulation of URDF friction: a joint driven by a constant effort τ settles where
    d v + F_c tanh(v / v_s) = τ (v_s = 1 mm/s), on the heavy base joint and on xArm7's 1e-4 kg m²
    last joint alike (stable although its friction slope F_c / v_s is 1e4 times its inertia per
    second); below F_c it creeps at v < v_s."""
    from scipy.optimize import brentq

    held = tuple(j for j in RobotModel.from_urdf(XARM).joint_names if j != joint)
    arm = MujocoArm(XARM, held=held)
    v = spin_up(arm, joint, effort, 3.0)
    i = arm.indices([joint])[0]
    d, fc, vs = arm.damping[i], arm.coulomb[i], arm.coulomb_velocity
    want = brentq(lambda x: d * x + fc * np.tanh(x / vs) - effort, 0.0, effort / d + 1.0, xtol=1e-14)
    assert v == pytest.approx(want, rel=1e-3, abs=1e-7)
    if effort < fc:
        assert 0 < v < vs


def test_frictionloss_is_a_viscous_damper_up_to_its_level() -> None:
    """MuJoCo's frictionloss on a joint moving at v (nothing else acting): a force linear in v
    (a soft constraint steering the acceleration to −b v) up to F_c, where it saturates. Its slope
    scales with the joint's inertia: on xArm7's last joint (1e-4 kg m²) it reaches the URDF's
    1 N m only above 50 rad/s, on the base joint below 0.3 rad/s. And it resists whatever else
    decelerates the joint, its own damping included: then it pushes along the motion."""
    arm = MujocoArm(XARM, coulomb="frictionloss")
    for joint in ("joint1", "joint7"):
        i = arm.indices([joint])[0]
        v = np.array([1e-4, 1e-3, 1e-2])
        f = arm.frictionloss_torque(joint, v)
        slope = -f[0] / v[0]
        np.testing.assert_allclose(f, -slope * v, rtol=1e-6)
        saturation = arm.coulomb[i] / slope
        assert arm.frictionloss_torque(joint, [2 * saturation])[0] == pytest.approx(-arm.coulomb[i], rel=1e-9)
        assert (saturation > 50) if joint == "joint7" else (saturation < 0.3)
    import mujoco

    d = mujoco.MjData(arm.model)
    d.qpos[:] = arm.q
    d.qvel[6] = 0.1
    arm.model.opt.gravity[:] = 0.0
    mujoco.mj_forward(arm.model, d)  # damping 2 N m s/rad on joint 7: frictionloss counters it
    assert d.qfrc_constraint[6] > 0.0 > d.qfrc_passive[6]


def test_friction_forces_are_the_plants_friction_efforts() -> None:
    """friction_forces() after a step equals −(d + F_c tanh(|v|/v_s)/|v|) v⁺ (implicit damping at
    the step's end velocity) on every joint, and the frictionloss constraint force in that mode."""
    arm = MujocoArm(XARM)
    arm.data.qvel[:] = RNG.normal(0, 0.5, arm.nv)
    v0 = arm.qd
    arm.step(np.zeros(arm.nv))
    x = np.abs(v0) / arm.coulomb_velocity
    want = -(arm.damping + arm.coulomb / arm.coulomb_velocity * np.tanh(x) / x) * arm.qd
    np.testing.assert_allclose(arm.friction_forces(), want, rtol=1e-12)
    lossy = MujocoArm(XARM, coulomb="frictionloss")
    lossy.data.qvel[0] = 1.0
    lossy.step(np.zeros(lossy.nv))  # no joint at a limit: every constraint row is a frictionloss
    np.testing.assert_allclose(
        lossy.friction_forces(), -lossy.damping * lossy.qd + lossy.data.qfrc_constraint, rtol=1e-12
    )


def test_held_light_gripper_is_held_stably() -> None:
    """The simulator's hold servo (kp 200, kd 2, damping implicit) on SO-100's gripper, whose
    inertia is ~1e-5 kg m²: an explicit kd would be 200x past the 1 kHz stability limit."""
    urdf = example_urdf_path("so_arm_description/urdf/so100.urdf").read_text()
    arm = MujocoArm(urdf, held=("gripper",))
    j = arm.indices(["gripper"])[0]
    assert np.linalg.inv(arm.mass_matrix(arm.q))[j, j] > 1e4  # light: M_eff < 1e-4 kg m²
    start = arm.q[j]
    for _ in range(2000):
        arm.step(np.zeros(arm.nv))
    assert np.all(np.isfinite(arm.q)) and abs(arm.q[j] - start) < 1e-2


# --- multi-sine -----------------------------------------------------------------------------

PANDA = RobotModel.from_urdf(example_urdf_path("panda").read_text())
HOME = np.array([0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785])


def panda_multisine(**kwargs) -> MultiSine:
    return design(
        HOME,
        PANDA.position_lower[:7],
        PANDA.position_upper[:7],
        PANDA.velocity_limit[:7],
        3.0,
        ExcitationOptions(**kwargs),
    )


def test_multisine_starts_and_ends_at_rest_at_home() -> None:
    ms = panda_multisine(duration=8.0, ramp=1.5)
    for t in (0.0, 8.0, -1.0, 9.0):
        q, qd, qdd = ms.sample(t)
        assert np.allclose(q, HOME, atol=1e-15) and np.allclose(qd, 0, atol=1e-15)
        assert np.allclose(qdd, 0, atol=1e-15)
    q, _, _ = ms.sample(4.0)
    assert np.all(np.abs(q - HOME) > 1e-3)  # every joint moves


def test_multisine_stays_within_limits() -> None:
    margin, vscale, acc = 0.1, 0.5, 3.0
    ms = panda_multisine(duration=12.0, ramp=1.5, position_margin=margin, velocity_scale=vscale)
    q, qd, qdd = ms.sample(np.linspace(0, 12.0, 24001))
    assert np.all(q >= PANDA.position_lower[:7] + margin) and np.all(q <= PANDA.position_upper[:7] - margin)
    assert np.all(np.abs(q - HOME) <= 0.4 + 1e-12)
    assert np.all(np.abs(qd) <= vscale * PANDA.velocity_limit[:7])
    assert np.all(np.abs(qdd) <= acc + 1e-12)
    bound_q, bound_qd, bound_qdd = ms.bounds()
    assert np.all(np.abs(q - HOME).max(0) <= bound_q + 1e-12)
    assert np.all(np.abs(qd).max(0) <= bound_qd) and np.all(np.abs(qdd).max(0) <= bound_qdd)
    # the bounds are not vacuous: the trajectory uses a good part of what it may
    assert np.all(np.abs(qdd).max(0) > 0.2 * bound_qdd)


def test_multisine_joints_differ_in_amplitude_frequency_and_phase() -> None:
    ms = panda_multisine()
    for a in (ms.amplitudes, ms.frequencies, ms.phases):
        assert len({tuple(np.round(row, 9)) for row in a}) == 7
    assert np.all((ms.frequencies >= 0.15) & (ms.frequencies <= 0.6))
    again = panda_multisine()
    assert np.array_equal(again.amplitudes, ms.amplitudes) and np.array_equal(again.phases, ms.phases)
    assert not np.array_equal(panda_multisine(seed=1).phases, ms.phases)


def test_multisine_derivatives_match_finite_differences() -> None:
    ms = panda_multisine(duration=6.0, ramp=1.0)
    h = 1e-5
    for t in np.linspace(0.01, 5.99, 41):  # in the ramps and between them
        q_lo, qd_lo, _ = ms.sample(t - h)
        q_hi, qd_hi, _ = ms.sample(t + h)
        _, qd, qdd = ms.sample(t)
        assert np.allclose((q_hi - q_lo) / (2 * h), qd, rtol=0, atol=1e-8)
        assert np.allclose((qd_hi - qd_lo) / (2 * h), qdd, rtol=0, atol=1e-8)
    for t in (0.0, 1.0, 5.0, 6.0):  # where the ramps join: q, q̇, q̈ continuous (C2)
        for before, after in zip(ms.sample(t - 1e-9), ms.sample(t + 1e-9), strict=True):
            assert np.allclose(before, after, rtol=0, atol=1e-7)


def test_multisine_points_interpolated_quintic_reproduce_it() -> None:
    """What the node does with the published points (100 Hz, quintic) is the multi-sine."""
    ms = panda_multisine(duration=5.0, ramp=1.0)
    times, q, qd, qdd = ms.points(100.0)
    assert times[0] == 0 and times[-1] == 5.0 and np.allclose(np.diff(times), 0.01)
    sampler = TrajectorySampler(times, q, qd, qdd)
    t = np.linspace(0, 5.0, 1237)
    for got, want in zip(sampler.sample(t), ms.sample(t), strict=True):
        assert np.abs(got - want).max() < 1e-7


def _pinocchio_peak_ratio(ms: MultiSine, rest: np.ndarray) -> np.ndarray:
    """Per joint max |τ| / effort limit along `ms` (first 7 joints), τ from Pinocchio's rnea (the
    Panda URDF has no friction), sampled at 1 kHz."""
    ref = PinRef("panda")
    t = np.linspace(0.0, ms.duration, int(ms.duration * 1000) + 1)
    path = ms.sample(t)
    peak = np.zeros(PANDA.nv)
    for k in range(t.size):
        x = [rest.copy(), np.zeros(PANDA.nv), np.zeros(PANDA.nv)]
        for full, part in zip(x, path, strict=True):
            full[:7] = part[k]
        tau = pin.rnea(ref.pin, ref.data, *(ref.to_pin(v) for v in x))[ref.idx]
        peak = np.maximum(peak, np.abs(tau))
    return peak / PANDA.effort_limit


def test_multisine_shrinks_to_the_effort_limits_against_pinocchio() -> None:
    rest = np.concatenate([HOME, [0.02, 0.02]])
    joints = np.arange(7)
    fast = design(
        HOME,
        PANDA.position_lower[:7],
        PANDA.position_upper[:7],
        PANDA.velocity_limit[:7],
        20.0,
        ExcitationOptions(
            duration=6.0,
            ramp=1.0,
            components=5,
            max_amplitude=1.5,
            position_margin=0.15,
            velocity_scale=0.9,
            seed=3,
        ),
    )
    before = _pinocchio_peak_ratio(fast, rest)
    held = _pinocchio_peak_ratio(replace(fast, amplitudes=0 * fast.amplitudes), rest)
    scale = 0.5 * (held.max() + before.max())  # exceeded by the trajectory, not by holding home
    shrunk, s = within_effort_limits(fast, PANDA, joints, rest, effort_scale=scale)
    assert 0.0 < s < 1.0
    np.testing.assert_allclose(shrunk.amplitudes, fast.amplitudes * s, rtol=1e-15)
    after = _pinocchio_peak_ratio(shrunk, rest)
    gap = before.max() - held.max()
    assert after.max() <= scale + 1e-3 * gap  # sampled at 500 Hz inside, 1 kHz here
    assert after.max() >= scale - 1e-2 * gap  # the largest such scale, not any
    same, one = within_effort_limits(fast, PANDA, joints, rest, effort_scale=1.01 * before.max())
    assert one == 1.0 and same is fast  # within the limits already: unchanged
    worst = PANDA.joint_names[int(np.argmax(held))]
    with pytest.raises(ValueError, match=f"holding the start pose needs .* '{worst}'"):
        within_effort_limits(fast, PANDA, joints, rest, effort_scale=0.5 * held.max())


def test_multisine_rejects_impossible_requests() -> None:
    with pytest.raises(ValueError, match="within 0.1 of a limit"):
        design([1.7], [-1.7628], [1.7628], [2.0], 3.0)
    with pytest.raises(ValueError, match="ramp"):
        MultiSine([0.0], [0.1], [0.2], [0.0], duration=1.0, ramp=0.6)
    with pytest.raises(ValueError, match="shape"):
        MultiSine([0.0, 0.0], [[0.1, 0.1]], [[0.2]], [[0.0]], duration=4.0, ramp=1.0)


# --- pairing commands with states -----------------------------------------------------------


def test_answers_pair_commands_with_states_in_either_order() -> None:
    m = AnswerMatcher()
    m.published(1, 10.0)
    m.command([1.0, 2.0], 10.5)
    assert not m.answered(1)
    m.answer(1, [1.0, 2.0])
    assert m.answered(1)
    m.published(2, 11.0)
    m.answer(2, [3.0, 4.0])  # the answer first
    assert not m.answered(2)
    m.command([3.0, 4.0], 11.25)
    assert m.answered(2)
    assert m.latencies == [0.5, 0.25]


def test_equal_commands_for_different_states_are_told_apart() -> None:
    """An arm at rest: the same command answers consecutive states; each pairs once."""
    m = AnswerMatcher()
    m.published(1, 0.0)
    m.command([5.0], 0.1)
    m.answer(1, [5.0])
    m.published(2, 1.0)
    m.answer(2, [5.0])  # its command is still on the way: the first one is used up
    assert not m.answered(2)
    m.command([5.0], 1.2)
    assert m.answered(2) and m.latencies == pytest.approx([0.1, 0.2])
    m.command([9.0], 2.0)  # someone else's command
    m.answer(3, [8.0])  # an answer whose command never came
    assert not m.answered(3)


# --- metrics and plot -----------------------------------------------------------------------


def synthetic_recording() -> Recording:
    t = np.arange(0, 10.0, 1e-3)
    n = 2
    q_des = np.full((t.size, n), np.nan)
    traj = t >= 3.0
    q_des[traj] = np.sin(t[traj])[:, None] * [1.0, 0.5]
    q = np.where(np.isnan(q_des), 0.1, q_des)
    q[(t >= 3) & (t < 6)] += np.radians(2.0)  # PD alone: 2 degrees off
    q[t >= 6] += np.radians(0.01)  # with feedforward: 0.01 degrees off
    q[t < 3, 1] += np.radians(0.05) * t[t < 3] / 3  # drift on joint 2
    effort = np.stack([np.cos(t), 0 * t], axis=1)
    return Recording(
        ["a", "b"], t, q, q_des, (0.0, 2.999), (3.0, 5.999), (6.0, 9.999),
        {"gravity": (t, effort), "feedback": (t, 0.5 * effort)}, np.array([1e-3, 2e-3, 3e-3]),
    )  # fmt: skip


def test_summary_numbers() -> None:
    s = summarize(synthetic_recording())
    assert np.allclose(s.drift, [0.0, 0.05], atol=1e-3)
    assert np.allclose(s.rms_pd, 2.0) and np.allclose(s.max_pd, 2.0)
    assert np.allclose(s.rms_ff, 0.01) and np.allclose(s.improvement, 200.0)
    assert s.latency_ms[:2] == pytest.approx((2.0, 2.98)) and s.latency_ms[2] == 3
    assert check_targets(s) == []
    assert check_targets(s, drift_deg=0.01) == ["b: hold drift 0.05 deg >= 0.01"]
    text = table(s)
    assert "200x" in text and "p50 2.000 ms" in text
    assert s.to_dict()["improvement"] == pytest.approx([200.0, 200.0])


def test_plot_writes_a_png(tmp_path) -> None:
    path = plot(synthetic_recording(), tmp_path / "sub" / "run.png", "test")
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000
