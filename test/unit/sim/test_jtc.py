"""The simulated joint_trajectory_controller law (rnea_ros.sim.jtc) against hand computations:

u = ff_velocity_scale · q̇_d(t + dt) + τ_d(t + dt) + p e + i Σ e dt + d ė, with e, ė from the
desired state at t (JTC's state_desired_) and the feedforward from one update ahead (its
command_next_); the cubic through two rest-free points and the linear effort interpolation are
written out in closed form here. Plus: hold before any trajectory, the hold after the last point,
joining a first point in the future, replacement, integral clamp, and a closed loop in MuJoCo
without ROS in which the annotated efforts beat the PID alone by far.
"""

from __future__ import annotations

import numpy as np
import pytest

from rnea_ros.sim.jtc import Gains, JointTrajectoryController

DT = 0.01
P, I, D = np.array([10.0, 20.0]), np.array([2.0, 0.0]), np.array([1.0, 3.0])
FF = np.array([0.5, 0.0])
DELTA = np.array([1.0, -2.0])  # cubic from 0 at rest to DELTA at rest in 1 s
E0, E1 = np.array([1.0, 2.0]), np.array([3.0, 6.0])  # efforts at the two points


def cubic(s: float) -> tuple[np.ndarray, np.ndarray]:
    """q, q̇ of the rest-to-rest cubic 0 → DELTA over [0, 1] (3s² − 2s³), held outside."""
    s = min(max(s, 0.0), 1.0)
    return DELTA * (3 * s**2 - 2 * s**3), DELTA * (6 * s - 6 * s**2)


def controller(i_clamp=np.inf) -> JointTrajectoryController:
    gains = Gains.of(2, p=P, i=I, d=D, i_clamp=i_clamp, ff_velocity_scale=FF)
    return JointTrajectoryController(2, gains, DT)


def send(c: JointTrajectoryController, start: float) -> None:
    c.receive(start, [0.0, 1.0], [[0.0, 0.0], DELTA], np.zeros((2, 2)), None, [E0, E1])


def test_law_by_hand_along_a_cubic_with_linear_efforts() -> None:
    c = controller()
    send(c, start=0.2)
    integral = np.zeros(2)
    rng = np.random.default_rng(0)
    for t in (0.7, 0.71, 0.72, 1.1, 1.195):
        q, qd = rng.normal(size=2), rng.normal(size=2)
        s = t - 0.2
        q_d, qd_d = cubic(s)
        _, qd_next = cubic(s + DT)
        tau_next = E0 + (E1 - E0) * min(s + DT, 1.0)
        integral = integral + I * (q_d - q) * DT
        expected = FF * qd_next + tau_next + P * (q_d - q) + integral + D * (qd_d - qd)
        np.testing.assert_allclose(c.update(t, q, qd), expected, rtol=0, atol=1e-12)


def test_hold_before_any_trajectory_and_after_the_last_point() -> None:
    c = controller()
    q0 = np.array([0.3, -0.4])
    c.hold(q0)
    q, qd = np.array([0.25, -0.5]), np.array([0.1, 0.2])
    expected = P * (q0 - q) + I * (q0 - q) * DT + D * (0 - qd)  # no effort, no velocity feedforward
    np.testing.assert_allclose(c.update(3.0, q, qd), expected, rtol=0, atol=1e-12)

    c = controller()
    send(c, start=0.0)
    c.update(0.0, np.zeros(2), np.zeros(2))
    c.integral[:] = 0.0
    q, qd = DELTA + 0.01, np.array([0.05, -0.05])
    expected = E1 + P * (DELTA - q) + I * (DELTA - q) * DT + D * (0 - qd)  # last point held, its effort
    np.testing.assert_allclose(c.update(2.5, q, qd), expected, rtol=0, atol=1e-12)


def test_a_first_point_in_the_future_is_joined_from_the_measured_state() -> None:
    """Received at t = 1 for a start at 1.5 (first point at 0 s from it): the spline joins the
    measured state at 1 to the first point at 1.5, τ_d goes linearly from the last command (0:
    none yet) to the first point's."""
    c = controller()
    c.hold(np.zeros(2))
    c.receive(1.5, [0.0, 1.0], [[0.2, 0.1], DELTA], np.zeros((2, 2)), None, [E0, E1])
    q, qd = np.array([0.05, -0.02]), np.zeros(2)
    u = c.update(1.0, q, qd)
    # at t = 1 the desired state is the measured one (e = ė = 0): only the feedforward is left
    _, _, tau_next = c.active.sample(1.0 + DT)
    np.testing.assert_allclose(tau_next, E0 * DT / 0.5, rtol=0, atol=1e-12)
    q_next, qd_next, _ = c.active.sample(1.0 + DT)
    np.testing.assert_allclose(u, FF * qd_next + tau_next, rtol=0, atol=1e-12)
    q_first, qd_first, tau_first = c.active.sample(1.5)
    np.testing.assert_allclose(q_first, [0.2, 0.1], atol=1e-12)
    np.testing.assert_allclose(qd_first, 0.0, atol=1e-12)
    np.testing.assert_allclose(tau_first, E0, atol=1e-12)


def test_a_joined_new_goal_starts_its_effort_from_the_last_whole_command() -> None:
    """While a trajectory runs, a new one whose first point is 0.5 s ahead: τ_d over the join
    starts from the last command u (PID included, as JTC's current state takes `effort` from its
    effort command interface), not from the last τ_d; without efforts in the points it is 0 (JTC
    interpolates efforts only between points that both carry them). test_ros2_control_jtc.py
    checks the same on the real JTC."""
    for efforts in ([E0, E1], None):
        c = controller()
        send(c, start=0.0)
        q, qd = np.array([0.1, -0.3]), np.array([0.2, 0.1])
        last = c.update(0.5, q, qd)  # mid-way: e, ė and τ_d all non-zero
        _, _, tau_last = c.active.sample(0.5 + DT)
        assert np.all(np.abs(last - tau_last) > 0.1)  # the command is more than its feedforward
        c.receive(1.0, [0.0, 1.0], [[0.2, 0.1], DELTA], np.zeros((2, 2)), None, efforts)
        c.update(0.5 + DT, q, qd)  # takes the new goal: joined from here to its first point at 1.0
        _, _, tau = c.active.sample((0.5 + DT + 1.0) / 2)  # half-way through the join
        expected = 0.5 * (last + E0) if efforts is not None else np.zeros(2)
        np.testing.assert_allclose(tau, expected, rtol=0, atol=1e-12)


def test_a_new_trajectory_replaces_the_running_one_at_the_next_update() -> None:
    c = controller()
    send(c, start=0.0)
    c.update(0.0, np.zeros(2), np.zeros(2))
    c.receive(0.0, [0.0, 2.0], [[0.0, 0.0], [5.0, 5.0]], None, None, None)  # linear, no efforts, old start
    c.integral[:] = 0.0
    q, qd = np.zeros(2), np.zeros(2)
    t = 1.0
    q_d, qd_d = 5.0 * t / 2 * np.ones(2), np.full(2, 2.5)  # linear: slope 2.5
    expected = FF * 2.5 + P * q_d + I * q_d * DT + D * qd_d
    np.testing.assert_allclose(c.update(t, q, qd), expected, rtol=0, atol=1e-12)


def test_integral_is_clamped() -> None:
    c = controller(i_clamp=np.array([0.05, 0.05]))
    c.hold(np.array([1.0, 1.0]))
    for k in range(100):  # constant error 1: integral 2 · 1 · 0.01 per step, clamped at 0.05
        u = c.update(k * DT, np.zeros(2), np.zeros(2))
    np.testing.assert_allclose(c.integral, [0.05, 0.0], atol=1e-15)
    np.testing.assert_allclose(u, P * 1.0 + [0.05, 0.0], atol=1e-12)


def test_malformed_trajectories_are_refused_and_gains_checked() -> None:
    c = controller()
    with pytest.raises(ValueError, match="increasing"):
        c.receive(0.0, [0.0, 0.0], np.zeros((2, 2)))
    with pytest.raises(ValueError, match="efforts"):
        c.receive(0.0, [0.0, 1.0], np.zeros((2, 2)), None, None, np.zeros((3, 2)))
    with pytest.raises(ValueError, match="efforts"):
        c.receive(0.0, [0.0, 1.0], np.zeros((2, 2)), None, None, [[np.nan, 0], [0, 0]])
    assert c.pending is None
    with pytest.raises(ValueError, match="gains.p"):
        Gains.of(2, p=[-1.0, 0.0])
    with pytest.raises(ValueError, match="unknown"):
        Gains.of(2, kp=1.0)


@pytest.mark.parametrize("seed", [0, 1])
def test_closed_loop_in_mujoco_annotated_efforts_beat_the_pid(seed: int) -> None:
    """The arm of the Panda in MuJoCo (no ROS) under this JTC, a 3 s multi-sine: with the
    efforts of rnea_ros.trajectory.jtc_points the RMS tracking error is >= 10x lower on every joint
    than with the same PID alone."""
    from rnea_ros import Friction, RobotModel
    from rnea_ros.control.effort_law import EffortLaw
    from rnea_ros.model.example_robots import example_urdf_path
    from rnea_ros.sim.demos.jtc.demo import ARM, FINGER_HOME, FINGERS, HOME, KD, KP, multisine_points
    from rnea_ros.sim.mujoco_arm import MujocoArm
    from rnea_ros.trajectory.jtc_points import effort_trajectory
    from rnea_ros.trajectory.sampling import TrajectorySampler

    urdf = example_urdf_path("panda").read_text()
    model = RobotModel.from_urdf(urdf)
    points = multisine_points(model, 3.0, seed)
    held = {j: FINGER_HOME for j in FINGERS}

    def rms(annotated: bool) -> np.ndarray:
        arm = MujocoArm(urdf, 1e-3, "implicitfast", tuple(FINGERS))
        arm.reset({**dict(zip(ARM, HOME, strict=True)), **held})
        index = arm.indices(ARM)
        jtc = JointTrajectoryController(7, Gains.of(7, p=KP, d=KD), arm.timestep)
        jtc.hold(arm.q[index])
        p = (points.times, points.positions, points.velocities, points.accelerations)
        if annotated:
            out = effort_trajectory(
                model, ARM, *p, held=held, law=EffortLaw(friction=Friction.from_model(model))
            )
            jtc.receive(0.0, out.times, out.positions, out.velocities, out.accelerations, out.efforts)
        else:
            jtc.receive(0.0, *p)
        effort, t, q = np.zeros(arm.nv), [], []
        while arm.time < points.times[-1]:
            effort[index] = jtc.update(arm.time, arm.q[index], arm.qd[index])
            arm.step(effort)
            t.append(arm.time)
            q.append(arm.q[index])
        q_d = TrajectorySampler(*p).sample(np.array(t))[0]
        return np.sqrt(np.mean(np.degrees(q_d - np.array(q)) ** 2, axis=0))

    pid, ff = rms(False), rms(True)
    assert np.all(pid / ff >= 10.0), (pid, ff)
    assert np.max(ff) < 0.02  # deg
