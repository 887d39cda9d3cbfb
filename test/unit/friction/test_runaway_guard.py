"""The runaway guard (rnea_ros.friction.runaway_guard): its energy bookkeeping against closed forms on a
one-joint plant, when it trips and when it must not, the fade, and in MuJoCo: a node friction model
far above the plant's (scale 1) drives an xArm7 joint, the guard fades it and the joint stops."""

from __future__ import annotations

import numpy as np
import pytest

from rnea_ros import Friction, RobotModel
from rnea_ros.compiled.kernels.friction_guard import MID_ROWS, MID_TAU_MODEL, SAMPLE_ROWS, guard_step_kernel
from rnea_ros.compiled.kernels.layout import packed_slices
from rnea_ros.control.effort_law import EffortLaw
from rnea_ros.friction.compensation import CompensationRules
from rnea_ros.friction.runaway_guard import G_DISSIPATED, G_INJECTED, SPEED, RunawayGuard
from rnea_ros.model.example_robots import example_urdf_path
from rnea_ros.sim.closed_loop import Loop, coast
from rnea_ros.sim.scenario import home_of, split_arm


def one_joint(m: float) -> RobotModel:
    """One body on a revolute joint about z, inertia m kg m² about the axis: with no gravity,
    rnea(q, v, a) = m a for every q and v (no Coriolis term for a single body)."""
    inertia = f'<inertia ixx="{m}" iyy="{m}" izz="{m}" ixy="0" ixz="0" iyz="0"/>'
    return RobotModel.from_urdf(
        '<robot name="one"><link name="base"/><link name="arm"><inertial><mass value="1"/>'
        f'<origin xyz="0 0 0"/>{inertia}</inertial></link>'
        '<joint name="j" type="revolute"><parent link="base"/><child link="arm"/><axis xyz="0 0 1"/>'
        '<limit effort="10" velocity="10" lower="-10" upper="10"/></joint></robot>'
    )


def feed(guard: RunawayGuard, m: float, v: np.ndarray, friction: np.ndarray, applied: np.ndarray, dt: float):
    """Run a one-joint record through the guard's period kernel as the effort law calls it
    (`guard_step_kernel`; the disabled guard is the MuJoCo test's): velocities v[k], and over each
    period k → k+1 the applied effort and its friction term; the model computes what the motion
    needs, which must be m Δv/dt."""
    model = one_joint(m)
    record = model.kernel_record.copy()  # the tree, a workspace, and no gravity:
    record[packed_slices(model.nv)[1]] = 0.0
    mass, zero, drive = np.array([m]), np.zeros(1), np.zeros(1, dtype=np.int64)
    mid, prev = np.zeros((MID_ROWS, 1)), np.zeros((SAMPLE_ROWS, 1))
    q = np.concatenate([[0.3], 0.3 + np.cumsum(0.5 * (v[1:] + v[:-1]) * dt)])
    trips = []
    for k in range(len(v) - 1):
        prev[:, 0] = q[k], v[k], applied[k], friction[k]  # SAMPLE_Q, SAMPLE_QD, SAMPLE_TOTAL, SAMPLE_FRICTION
        args = record, q[k + 1 : k + 2], v[k + 1 : k + 2], zero, drive, dt, mid, mass
        trips.append(guard_step_kernel(*args, guard.state, guard.clock, prev))
        assert mid[MID_TAU_MODEL, 0] == pytest.approx(m * (v[k + 1] - v[k]) / dt, rel=1e-9, abs=1e-12)
    return np.array(trips)


def test_energy_bookkeeping_is_the_work_integrals() -> None:
    """Within one window: E = Σ φ v̄ dt and D = Σ (τ − m Δv/dt) v̄ dt, against closed forms for a
    joint decelerating under constant friction (τ = φ = 0.5 N m, plant friction 2 N m)."""
    m, dt = 0.1, 1e-3
    guard = RunawayGuard(1, window=10.0)
    v = 1.0 - (2.0 - 0.5) / m * dt * np.arange(51)  # 50 periods of constant deceleration
    feed(guard, m, v, np.full(50, 0.5), np.full(50, 0.5), dt)
    distance = np.sum(0.5 * (v[1:] + v[:-1])) * dt
    assert guard.state[G_INJECTED, 0] == pytest.approx(0.5 * distance, rel=1e-12)
    assert guard.state[G_DISSIPATED, 0] == pytest.approx(2.0 * distance, rel=1e-9)  # plant friction work


def test_trips_when_the_friction_term_drives_the_joint_and_fades_it_within_a_window() -> None:
    """Friction term 0.5 N m along the motion, no plant friction: the joint speeds up, every bit
    of energy came from the friction term; tripped at the end of the first window whose error RMS
    exceeds SPEED and grew, then the weight falls linearly to 0 over one window."""
    m, dt, window = 0.05, 1e-3, 0.1
    guard = RunawayGuard(1, window)
    steps = 600
    v = 0.01 + 0.5 / m * dt * np.arange(steps + 1)
    trips = feed(guard, m, v, np.full(steps, 0.5), np.full(steps, 0.5), dt)
    first = int(np.flatnonzero(trips)[0])
    ends = np.arange(2, steps // 100 + 1) * 100 - 1  # last period of each window but the first
    assert first in ends
    rms = np.sqrt(np.mean(v[first - 99 : first + 1] ** 2))
    assert rms > SPEED
    assert trips.sum() == 1 and guard.trips == 1 and guard.tripped[0]
    assert guard.weights[0] == 0.0
    fresh = RunawayGuard(1, window)
    feed(fresh, m, v[: first + 2 + 50], np.full(first + 51, 0.5), np.full(first + 51, 0.5), dt)
    assert fresh.weights[0] == pytest.approx(0.5, abs=0.011)  # half a window after the trip
    guard.reset()
    assert not guard.tripped.any() and guard.weights[0] == 1.0 and guard.trips == 0


@pytest.mark.parametrize(
    "case",
    ["dissipating", "error_shrinking", "below_speed"],
)
def test_does_not_trip(case: str) -> None:
    m, dt = 0.05, 1e-3
    guard = RunawayGuard(1, 0.1)
    steps = 600
    if case == "dissipating":  # speeding up (the PD pulls), friction term 0.5 N m < plant's 1 N m
        v = np.linspace(0.2, 3.0, steps + 1)
        applied = m * np.diff(v) / dt + 1.0  # what the motion needs plus the plant's friction
        friction = np.full(steps, 0.5)
    elif case == "error_shrinking":  # the friction term injects, but the joint slows down
        v = np.linspace(3.0, 0.3, steps + 1)
        applied, friction = m * np.diff(v) / dt, np.full(steps, 0.5)
    else:  # below_speed
        v = np.linspace(0.0, 0.9 * SPEED, steps + 1)
        applied, friction = np.full(steps, 0.5), np.full(steps, 0.5)
    trips = feed(guard, m, v, friction, applied, dt)
    assert trips.sum() == 0 and not guard.tripped.any() and guard.weights[0] == 1.0


def test_in_mujoco_an_overcompensating_model_is_faded_and_the_arm_stops_gaining() -> None:
    """xArm7 in MuJoCo with no friction at all in the plant, the node's model 20x the URDF's,
    almost all of it compensated (scale 0.999, no deadband): joint 1 kicked at 0.5 rad/s is driven
    and drags others along. The guard fades joint 1's friction term (and those of the joints it
    drives) within a few windows; afterwards the arm's kinetic energy stays (within 5 %: what is
    left is the slow drift of a joint below SPEED, which the guard does not judge). Without the
    guard the energy keeps growing."""
    urdf = example_urdf_path("xarm_description/urdf/xarm7.urdf").read_text()
    model = RobotModel.from_urdf(urdf)
    chain = split_arm(model).chain
    friction = Friction(20 * model.damping, 20 * model.coulomb)
    rules = CompensationRules(scale=0.999, deadband=0.0)
    results, loops = {}, {}
    for window in (0.1, 0.0):
        terms = frozenset(("gravity", "coriolis", "friction"))
        law = EffortLaw(compensate=terms, friction_rules=rules, guard_window=window)
        loops[window] = Loop(urdf, chain, law, home_of(model), friction, plant_friction_scale=0.0)
        results[window] = coast(loops[window], "joint1", 0.5, 1.0)
    guarded, unguarded = results[0.1], results[0.0]
    half = len(guarded.time) // 2
    assert unguarded.kinetic[-1] > 2.0 * unguarded.kinetic[half] > 2.0 * unguarded.kinetic[0]
    assert guarded.tripped
    # a window of 0 s disables the guard on the live path: nothing trips, every weight stays 1
    assert loops[0.0].efforts.guard.trips == 0 and np.all(loops[0.0].efforts.guard.weights == 1.0)
    assert loops[0.1].efforts.guard.tripped[0] and loops[0.1].efforts.guard.weights[0] == 0.0
    assert guarded.kinetic[-1] <= 1.05 * guarded.kinetic[half]
    assert guarded.kinetic[-1] < 0.2 * unguarded.kinetic[-1]
