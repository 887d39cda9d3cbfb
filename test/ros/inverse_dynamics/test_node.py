"""The inverse_dynamics node across processes: efforts, inputs, parameters, trajectory, limits.

One node (Panda, chain to panda_hand, model from the robot_description parameter) serves the
whole module; tests that change parameters put them back.
"""

from __future__ import annotations

import time

import numpy as np
import pytest
from builtin_interfaces.msg import Duration
from geometry_msgs.msg import WrenchStamped
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from rnea_ros import RobotModel, gravity_torques, jacobian, link_pose, mass_matrix, rnea
from rnea_ros.model.example_robots import example_urdf_path
from rnea_ros.testing.rosgraph import FRICTION_OFF, Driver, start_node, stop

URDF = example_urdf_path("panda").read_text()
MODEL = RobotModel.from_urdf(URDF, tip_link="panda_hand")
NAMES = list(MODEL.joint_names)
RNG = np.random.default_rng(0)


def random_state():
    lo, hi = MODEL.position_lower, MODEL.position_upper
    return RNG.uniform(lo, hi), RNG.normal(0, 0.5, MODEL.nv)


def expected(q, qd, qdd=None, gravity=(0, 0, -9.81), wrenches=None):
    """g + c + M q̈ + Jᵀ F from the core, for the same state (the node runs with FRICTION_OFF)."""
    qdd = np.zeros(MODEL.nv) if qdd is None else qdd
    return rnea(MODEL, q, qd, qdd, gravity=gravity, wrenches=wrenches)


def _is(got: np.ndarray | None, want: np.ndarray) -> bool:
    """Whether an answer came and is `want`."""
    return got is not None and bool(np.allclose(got, want, atol=1e-9))


@pytest.fixture(scope="module")
def node(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("node")
    params = {
        "robot_description": URDF,
        "tip_link": "panda_hand",
        "joint_states_timeout": 0.5,
        "tip_apparent_mass.rate": 20.0,
        "tip_apparent_mass.direction": [0.0, 1.0, 0.0],
        **FRICTION_OFF,
    }
    proc = start_node(tmp, params)
    driver = Driver("test_node_driver", dict(zip(NAMES, MODEL.effort_limit, strict=True)))
    q, qd = random_state()
    try:
        driver.wait_for_commands(lambda: driver.state(NAMES, q, qd))
        yield driver
    finally:
        driver.close()
        output = stop(proc)
        assert "Traceback" not in output, output


def test_efforts_equal_core_torques(node: Driver) -> None:
    for _ in range(5):
        q, qd = random_state()
        msg = node.state(NAMES, q, qd)
        got = node.command_for(msg)
        assert got is not None
        assert np.allclose(got, expected(q, qd), rtol=0, atol=1e-9)
    node.spin(0.1)
    js = node.joint_efforts[-1]
    assert list(js.name) == NAMES
    assert (js.header.stamp.sec, js.header.stamp.nanosec) == (msg.header.stamp.sec, msg.header.stamp.nanosec)
    assert np.allclose(js.effort, got, atol=1e-12)
    terms = {t: np.array(node.terms[t][-1].effort) for t in node.terms}
    assert np.allclose(sum(terms.values()), got, atol=1e-9)
    assert np.allclose(terms["gravity"], gravity_torques(MODEL, q), atol=1e-9)
    assert np.array_equal(terms["friction"], np.zeros(MODEL.nv))


def test_shuffled_and_extra_joints_are_mapped_by_name(node: Driver) -> None:
    q, qd = random_state()
    order = RNG.permutation(MODEL.nv)
    names = [NAMES[i] for i in order] + ["panda_finger_joint1", "some_other_joint"]
    msg = node.state(names, [*q[order], 0.02, 5.0], [*qd[order], 0.0, 1.0])
    got = node.command_for(msg)
    assert got is not None and np.allclose(got, expected(q, qd), atol=1e-9)
    # another publisher's joints at the edge of float64: their sum overflows, their values are
    # finite, and the message still commands (the cheap check's false alarm is cleared)
    names = [*NAMES, "rail_a", "rail_b"]
    msg = node.state(names, [*q, 1.5e308, 1.5e308], [*qd, -1.7e308, -1.7e308])
    got = node.command_for(msg)
    assert got is not None and np.allclose(got, expected(q, qd), atol=1e-9)
    msg = node.state(names, [*q, 1.5e308, np.nan], [*qd, 0.0, 0.0])  # not a model joint: ignored
    got = node.command_for(msg)
    assert got is not None and np.allclose(got, expected(q, qd), atol=1e-9)


def test_missing_nan_wrong_length_and_stale_input_get_no_command_then_resume(node: Driver) -> None:
    q, qd = random_state()
    before = node.latest_diagnostics()
    node.spin(0.6)  # longer than joint_states_timeout: the cached value of every joint is too old
    assert node.no_command_for(node.state(NAMES[:-1], q[:-1], qd[:-1]))
    assert node.no_command_for(node.state(NAMES, [*q[:-1], np.nan], qd))
    assert node.no_command_for(node.state(NAMES, q, [*qd[:-1], np.inf]))
    assert node.no_command_for(node.state(NAMES, q[:-1], qd))
    assert node.no_command_for(node.state(NAMES, q, qd[:-2]))
    assert node.no_command_for(node.state(NAMES, q, qd, stamp_offset=-2.0))
    got = node.command_for(node.state(NAMES, q, qd))
    assert got is not None and np.allclose(got, expected(q, qd), atol=1e-9)
    after = node.latest_diagnostics()
    for reason, count in [("missing_joints", 1), ("not_finite", 2), ("bad_length", 2), ("stale", 1)]:
        assert int(after.get(f"rejected.{reason}", 0)) - int(before.get(f"rejected.{reason}", 0)) == count


def test_parameters_change_through_set_parameters_and_take_effect(node: Driver) -> None:
    q, qd = random_state()
    results = node.set_parameters({"gravity": [0.0, 9.81, 0.0], "compensate.friction": False})
    assert all(r.successful for r in results)
    try:
        got = node.command_for(node.state(NAMES, q, qd))
        want = rnea(MODEL, q, qd, np.zeros(MODEL.nv), gravity=(0, 9.81, 0))
        assert np.allclose(got, want, atol=1e-9)
    finally:
        assert node.set_parameters({"gravity": [0.0, 0.0, -9.81], "compensate.friction": True})[0].successful
    assert np.allclose(node.command_for(node.state(NAMES, q, qd)), expected(q, qd), atol=1e-9)


@pytest.mark.parametrize(
    ("values", "reason"),
    [
        ({"gravity": [0.0, -9.81]}, "gravity: must have 3 values"),
        ({"gravity": [0.0, float("nan"), 1.0]}, "gravity: must be finite"),
        ({"friction.viscous": [0.1] * 6 + [-0.1]}, "friction.viscous: must be in [0, "),
        ({"friction.coulomb": [0.1, 0.2]}, "friction.coulomb: must have 7 values"),
        ({"ee_wrench_frame": "camera"}, "ee_wrench_frame: must be one of"),
        ({"state_source": "predicted"}, "state_source: must be one of"),
        ({"feedback.kp": [1.0, 2.0]}, "feedback.kp: must have 1 or 7 values"),
        ({"payload.link": "nowhere"}, "link 'nowhere' is not part of the model"),
        ({"effort_limit_scale": -1.0}, ""),
        ({"tip_link": "panda_link5"}, ""),
        ({"gravity": "down"}, ""),
    ],
)
def test_invalid_parameters_are_rejected_with_a_reason_and_the_old_value_stays(
    node: Driver, values, reason
) -> None:
    q, qd = random_state()
    result = node.set_parameters(values)
    assert not all(r.successful for r in result)
    assert reason in " ".join(r.reason for r in result)
    assert np.allclose(node.command_for(node.state(NAMES, q, qd)), expected(q, qd), atol=1e-9)


def test_end_effector_wrench_parameter_and_topic(node: Driver) -> None:
    q, qd = random_state()
    wrench = np.array([1.0, -2.0, -10.0, 0.3, 0.2, -0.1])
    assert node.set_parameters({"ee_wrench": wrench.tolist()})[0].successful
    try:
        got = node.command_for(node.state(NAMES, q, qd))
        assert np.allclose(got, expected(q, qd) + jacobian(MODEL, q, "panda_hand").T @ wrench, atol=1e-9)
        # the same wrench given in the hand's own axes through ~/ee_wrench (frame_id: the link)
        assert node.set_parameters({"ee_wrench_frame": "link"})[0].successful
        rot, _ = link_pose(MODEL, q, "panda_hand")
        local = np.concatenate([rot.T @ wrench[:3], rot.T @ wrench[3:]])
        msg = WrenchStamped()
        msg.header.frame_id = "panda_hand"
        (msg.wrench.force.x, msg.wrench.force.y, msg.wrench.force.z) = local[:3]
        (msg.wrench.torque.x, msg.wrench.torque.y, msg.wrench.torque.z) = local[3:]
        node.node.create_publisher(WrenchStamped, "/inverse_dynamics/ee_wrench", 10).publish(msg)
        want = expected(q, qd, wrenches={"panda_hand": wrench})
        # another topic than joint_states: taken when the node gets to it (the parameter's wrench,
        # in root axes, commands until then)
        node.until(lambda: _is(node.command_for(node.state(NAMES, q, qd)), want), 30.0, "the link wrench")
    finally:
        assert node.set_parameters({"ee_wrench": [0.0] * 6, "ee_wrench_frame": "root"})[0].successful
    assert np.allclose(node.command_for(node.state(NAMES, q, qd)), expected(q, qd), atol=1e-9)


def test_payload_parameters(node: Driver) -> None:
    q, qd = random_state()
    assert node.set_parameters({"payload.mass": 2.0, "payload.com": [0.0, 0.0, 0.1]})[0].successful
    try:
        got = node.command_for(node.state(NAMES, q, qd))
        loaded = MODEL.with_payload("panda_hand", 2.0, (0, 0, 0.1))
        want = rnea(loaded, q, qd, np.zeros(MODEL.nv))
        assert np.allclose(got, want, atol=1e-9)
        assert not np.allclose(got, expected(q, qd), atol=1e-3)
    finally:
        assert node.set_parameters({"payload.mass": 0.0})[0].successful


def test_efforts_are_clamped_to_limit_times_scale_and_reported(node: Driver) -> None:
    q, qd = random_state()
    assert node.set_parameters({"effort_limit_scale": 0.05})[0].successful
    try:
        got = node.command_for(node.state(NAMES, q, qd))
        limit = MODEL.effort_limit * 0.05
        want = np.clip(expected(q, qd), -limit, limit)
        assert np.allclose(got, want, atol=1e-9) and np.any(np.abs(expected(q, qd)) > limit)
        diag = node.latest_diagnostics()
        clamped = {NAMES[i] for i in np.flatnonzero(np.abs(expected(q, qd)) > limit)}
        assert clamped <= set(diag["clamped_joints"].split())
    finally:
        assert node.set_parameters({"effort_limit_scale": 1.0})[0].successful


def _trajectory(q0, accel, duration, stamp_zero=True) -> JointTrajectory:
    """Constant acceleration from q0 at rest: q = q0 + a t²/2 (exact for every spline)."""
    msg = JointTrajectory(joint_names=list(NAMES))
    for t in np.linspace(0.0, duration, 4):
        sec, frac = divmod(t, 1.0)
        msg.points.append(
            JointTrajectoryPoint(
                positions=(q0 + 0.5 * accel * t**2).tolist(),
                velocities=(accel * t).tolist(),
                accelerations=accel.tolist(),
                time_from_start=Duration(sec=int(sec), nanosec=int(frac * 1e9)),
            )
        )
    return msg


def test_trajectory_feedforward_and_hold_after_the_end(node: Driver) -> None:
    q, qd = random_state()
    accel = 0.5 * (np.linspace(-1.0, 1.0, MODEL.nv) + 0.1)  # no zero: the check below divides by it
    kp = 5.0  # small enough that nothing is clamped
    publisher = node.node.create_publisher(JointTrajectory, "/inverse_dynamics/joint_trajectory", 10)
    node.command_for(node.state(NAMES, q, qd))
    t_published = time.monotonic()  # the trajectory cannot start before this
    publisher.publish(_trajectory(q, accel, duration=1.5))
    # another topic than joint_states: taken when the node gets to it, then every answer shows it
    running = expected(q, qd) + mass_matrix(MODEL, q) @ accel
    node.until(lambda: _is(node.command_for(node.state(NAMES, q, qd)), running), 30.0, "the trajectory")
    t_running = time.monotonic()  # the trajectory started before this answer (it shows in it)
    # the desired state moves: a PD term on the tracking error shows the sampled q, q̇ (the gains
    # as given: this driver's states come every 0.2 s, a loop the feedback bound would slow down)
    gains = {"feedback.kp": [kp], "feedback.kd": [0.0], "feedback.max_phase_lag": 0.0}
    assert all(r.successful for r in node.set_parameters(gains))
    try:
        t_sent = time.monotonic()
        got = node.command_for(node.state(NAMES, q, np.zeros(MODEL.nv)))
        feedback = got - expected(q, np.zeros(MODEL.nv)) - mass_matrix(MODEL, q) @ accel
        elapsed = feedback / (kp * 0.5 * accel)  # kp (q_des - q) = kp a t²/2  ->  t²
        assert np.all(elapsed > 0.0) and np.allclose(elapsed, elapsed[0], rtol=1e-6)
        # bounds from events, not from guesses of when the node received the trajectory: it ran
        # before t_running, and this state was sampled after t_sent
        assert (t_sent - t_running - 0.01) ** 2 < elapsed[0] < (time.monotonic() - t_published + 0.01) ** 2
        node.spin(max(0.0, 1.7 - (time.monotonic() - t_sent)))
        got = node.command_for(node.state(NAMES, q, np.zeros(MODEL.nv)))
        q_final = q + 0.5 * accel * 1.5**2
        assert np.allclose(got, expected(q, np.zeros(MODEL.nv)) + kp * (q_final - q), atol=1e-8)
    finally:
        publisher.publish(JointTrajectory(joint_names=NAMES))  # empty: cancel
        node.spin(0.2)
        restored = node.set_parameters({"feedback.kp": [0.0], "feedback.max_phase_lag": 0.5})
        assert all(r.successful for r in restored)
    assert np.allclose(node.command_for(node.state(NAMES, q, qd)), expected(q, qd), atol=1e-9)


def test_bad_trajectories_are_rejected_and_counted(node: Driver) -> None:
    publisher = node.node.create_publisher(JointTrajectory, "/inverse_dynamics/joint_trajectory", 10)
    before = int(node.latest_diagnostics().get("rejected.bad_trajectory", 0))
    unsorted = _trajectory(np.zeros(MODEL.nv), np.ones(MODEL.nv), 1.0)
    unsorted.points.reverse()
    unknown = _trajectory(np.zeros(MODEL.nv), np.ones(MODEL.nv), 1.0)
    unknown.joint_names[0] = "elbow"
    short = _trajectory(np.zeros(MODEL.nv), np.ones(MODEL.nv), 1.0)
    short.points[1].positions = short.points[1].positions[:3]
    for msg in (unsorted, unknown, short):
        publisher.publish(msg)
    diag = node.diagnostics_until(lambda s: int(s.get("rejected.bad_trajectory", 0)) - before >= 3)
    assert int(diag["rejected.bad_trajectory"]) - before == 3
    q, qd = random_state()
    assert np.allclose(node.command_for(node.state(NAMES, q, qd)), expected(q, qd), atol=1e-9)


def test_diagnostics_report_model_input_age_and_cycle_time(node: Driver) -> None:
    q, qd = random_state()
    node.diagnostics.clear()
    while not node.diagnostics:  # input flows while the status is made: its age stays small
        node.joint_states.publish(node.state(NAMES, q, qd))
        node.spin(0.01)
    diag = node.status(node.diagnostics[-1])
    assert diag["model_loaded"] == "True"
    assert diag["model"].startswith("panda (7 joints, root panda_link0)")
    assert diag["joints"].split() == NAMES
    assert 0.0 <= float(diag["input_age_s"]) < 0.5
    assert 0.0 < float(diag["cycle_time_median_us"]) <= float(diag["cycle_time_max_us"])
    assert int(diag["commands_published"]) > 0


def test_tip_apparent_mass_along_the_tip_velocity_or_the_rest_direction(node: Driver) -> None:
    from std_msgs.msg import Float64

    got: list[float] = []
    sub = node.node.create_subscription(
        Float64, "/inverse_dynamics/tip_apparent_mass", lambda m: got.append(m.data), 10
    )
    try:
        q, qd = random_state()
        for velocity, direction in ((np.zeros(MODEL.nv), np.array([0.0, 1.0, 0.0])), (qd, None)):
            j_v = jacobian(MODEL, q, "panda_hand")[:3]
            u = direction if direction is not None else j_v @ velocity / np.linalg.norm(j_v @ velocity)
            b = j_v.T @ u
            want = 1.0 / (b @ np.linalg.solve(mass_matrix(MODEL, q), b))  # seed 004: 1 / (u^T Λ^-1 u)
            got.clear()
            end = time.monotonic() + 5.0
            while len(got) < 3 and time.monotonic() < end:  # the state stays fresh while it flows
                node.joint_states.publish(node.state(NAMES, q, velocity))
                node.spin(0.02)
            assert len(got) >= 3 and got[-1] == pytest.approx(want, rel=1e-9)
    finally:
        node.node.destroy_subscription(sub)


def test_a_slow_loop_lowers_the_feedback_gains_and_says_so(node: Driver) -> None:
    """States 0.1 s apart, a loop far slower than kp = 400 N m/rad is tuned for: the feedback
    bound (rnea_ros.control.feedback_bound) lowers the gains, never raises them, and /diagnostics names
    the joints; with feedback.max_phase_lag 0 the PD acts exactly as given."""
    q, zero, offset, kp = random_state()[0], np.zeros(MODEL.nv), 0.01, 400.0
    publisher = node.node.create_publisher(JointTrajectory, "/inverse_dynamics/joint_trajectory", 10)
    hold = JointTrajectory(joint_names=list(NAMES))
    hold.points.append(JointTrajectoryPoint(positions=(q + offset).tolist()))  # at once: a target
    assert all(r.successful for r in node.set_parameters({"feedback.kp": [kp], "feedback.kd": [0.0]}))
    try:
        publisher.publish(hold)
        node.spin(0.2)
        for _ in range(5):
            got = node.command_for(node.state(NAMES, q, zero))
            node.spin(0.1)
        feedback = got - expected(q, zero)
        assert np.all(feedback > 0.0) and np.all(feedback <= kp * offset + 1e-9), feedback
        assert np.any(feedback < 0.9 * kp * offset), feedback
        diagnostics = node.latest_diagnostics()
        assert diagnostics["feedback_scaled_joints"] and float(diagnostics["feedback_scale_min"]) < 0.9
        assert node.set_parameters({"feedback.max_phase_lag": 0.0})[0].successful
        got = node.command_for(node.state(NAMES, q, zero))
        assert np.allclose(got - expected(q, zero), kp * offset, atol=1e-9)
    finally:
        publisher.publish(JointTrajectory(joint_names=NAMES))  # empty: cancel
        node.spin(0.2)
        restored = node.set_parameters({"feedback.kp": [0.0], "feedback.max_phase_lag": 0.5})
        assert all(r.successful for r in restored)
