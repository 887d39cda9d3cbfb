"""Reliability of the running node: fuzzed inputs and parameters, and a short flood.

Whatever arrives, every effort the node publishes is finite and within limit × scale (checked by
the Driver on close), the node never dies, and it commands correctly again on the next good
message. Injected faults are in test_faults.py; the 30 s flood soak is bench/soak.py.
"""

from __future__ import annotations

import signal
import time

import numpy as np
import psutil
import pytest
from builtin_interfaces.msg import Duration
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from paths import SUPPORT
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from rnea_ros import Friction, RobotModel, rnea
from rnea_ros.model.example_robots import example_urdf_path
from rnea_ros.testing.rosgraph import FRICTION_OFF, Driver, start_node, stop

URDF = example_urdf_path("panda").read_text()
MODEL = RobotModel.from_urdf(URDF, tip_link="panda_hand")
FRICTION = Friction.from_model(MODEL)
NAMES = list(MODEL.joint_names)
BOUNDS = dict(zip(NAMES, MODEL.effort_limit, strict=True))
PUBLISHER = SUPPORT / "joint_state_publisher.py"
Q = np.linspace(-0.5, 0.5, MODEL.nv)
QD = np.linspace(0.2, -0.2, MODEL.nv)
PARAMS = {"robot_description": URDF, "tip_link": "panda_hand", "joint_states_timeout": 0.5, **FRICTION_OFF}
FUZZ = settings(max_examples=120, deadline=None, suppress_health_check=list(HealthCheck))


def expected(q=Q, qd=QD) -> np.ndarray:
    return rnea(MODEL, q, qd, np.zeros(MODEL.nv))  # the node runs with FRICTION_OFF


@pytest.fixture(scope="module")
def running(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("reliability")
    proc = start_node(tmp, PARAMS)
    driver = Driver("reliability_driver", BOUNDS)
    driver.wait_for_commands(lambda: driver.state(NAMES, Q, QD))
    yield driver, proc, tmp
    published = driver.check_published_efforts()
    driver.close()
    output = stop(proc)
    assert "Traceback" not in output, output
    assert published > 0


def assert_commands_correctly(driver: Driver) -> None:
    got = driver.command_for(driver.state(NAMES, Q, QD))
    assert got is not None, "no command for a good joint_states"
    assert np.allclose(got, expected(), atol=1e-9)


NUMBER = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0.0, 1e300, -1e300, 1e155, np.nan, np.inf]),
)
NAME = st.one_of(st.sampled_from([*NAMES, "panda_finger_joint1", ""]), st.text(max_size=5))


@FUZZ
@given(
    names=st.lists(NAME, max_size=10),
    position=st.lists(NUMBER, max_size=10),
    velocity=st.lists(NUMBER, max_size=10),
    shuffle=st.booleans(),
)
def test_fuzzed_joint_states(running, names, position, velocity, shuffle) -> None:
    driver, _, _ = running
    if shuffle:  # a plausible message: every joint, garbage values
        names = list(reversed(NAMES)) + names[:1]
        position = (position + [0.1] * 10)[: len(names)]
        velocity = (velocity + [0.0] * 10)[: len(names)]
    msg = driver.state(names, [0.0] * 0, stamp=True)
    msg.position, msg.velocity = [float(x) for x in position], [float(x) for x in velocity]
    driver.joint_states.publish(msg)
    driver.spin(0.002)


def test_node_still_commands_correctly_after_fuzzed_joint_states(running) -> None:
    driver, _, _ = running
    driver.spin(0.3)
    assert_commands_correctly(driver)
    assert driver.check_published_efforts() > 0


def _point(t: float, positions, velocities=(), accelerations=()) -> JointTrajectoryPoint:
    t = float(np.nan_to_num(t, nan=0.0, posinf=1e9, neginf=-1e9))
    sec = int(np.clip(np.floor(t), -(2**31), 2**31 - 1))
    return JointTrajectoryPoint(
        positions=[float(x) for x in positions],
        velocities=[float(x) for x in velocities],
        accelerations=[float(x) for x in accelerations],
        time_from_start=Duration(sec=sec, nanosec=int(np.clip((t - np.floor(t)) * 1e9, 0, 999_999_999))),
    )


@FUZZ
@given(
    times=st.lists(st.floats(-1.0, 3.0), min_size=0, max_size=4),
    width=st.integers(0, 9),
    values=st.lists(NUMBER, min_size=40, max_size=40),
    with_velocities=st.booleans(),
    names=st.one_of(st.just(NAMES), st.lists(NAME, max_size=8)),
)
def test_fuzzed_trajectories(running, times, width, values, with_velocities, names) -> None:
    driver, _, _ = running
    publisher = getattr(driver, "traj_pub", None) or driver.node.create_publisher(
        JointTrajectory, "/inverse_dynamics/joint_trajectory", 10
    )
    driver.traj_pub = publisher
    msg = JointTrajectory(joint_names=list(names))
    for k, t in enumerate(times):
        row = values[k * 9 : k * 9 + width]
        msg.points.append(_point(t, row, row if with_velocities else ()))
    publisher.publish(msg)
    driver.joint_states.publish(driver.state(NAMES, Q, QD))
    driver.spin(0.003)


def test_node_recovers_after_fuzzed_trajectories(running) -> None:
    driver, _, _ = running
    driver.traj_pub.publish(JointTrajectory(joint_names=NAMES))  # cancel whatever was accepted
    driver.spin(0.3)
    assert_commands_correctly(driver)


PARAM_VALUE = st.one_of(
    st.booleans(),
    st.integers(-5, 5),
    NUMBER,
    st.text(max_size=6),
    st.lists(NUMBER, max_size=8),
    st.lists(st.booleans(), min_size=1, max_size=3),
    st.lists(st.text(max_size=3), min_size=1, max_size=3),
)
PARAM_NAME = st.sampled_from(
    [
        "gravity",
        "ee_wrench",
        "ee_wrench_frame",
        "compensate.gravity",
        "friction.viscous",
        "friction.coulomb",
        "friction.smoothing_velocity",
        "payload.mass",
        "payload.com",
        "payload.inertia",
        "payload.link",
        "feedback.kp",
        "feedback.kd",
        "state_source",
        "effort_limit_scale",
        "joint_states_timeout",
        "joints",
        "robot_description",
    ]
)


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(name=PARAM_NAME, value=PARAM_VALUE)
def test_fuzzed_parameters_are_applied_or_rejected_with_a_reason(running, name, value) -> None:
    driver, _, _ = running
    if name == "effort_limit_scale" and isinstance(value, float) and 1.0 < value <= 10.0:
        value = 1.0  # larger scales are valid but would widen the limits this suite checks
    result = driver.set_parameters({name: value})[0]
    assert result.successful or result.reason
    driver.joint_states.publish(driver.state(NAMES, Q, QD))
    driver.spin(0.005)


def test_node_recovers_after_fuzzed_parameters(running) -> None:
    driver, proc, _ = running
    defaults = {
        "gravity": [0.0, 0.0, -9.81],
        "ee_wrench": [0.0] * 6,
        "ee_wrench_frame": "root",
        "compensate.gravity": True,
        "friction.viscous": [-1.0],
        "friction.coulomb": [-1.0],
        "friction.smoothing_velocity": 0.01,
        "payload.mass": 0.0,
        "payload.link": "",
        "feedback.kp": [0.0],
        "feedback.kd": [0.0],
        "state_source": "measured",
        "effort_limit_scale": 1.0,
        "joint_states_timeout": 0.5,
    }
    for name, value in defaults.items():
        assert driver.set_parameters({name: value})[0].successful, name
    assert proc.poll() is None
    assert_commands_correctly(driver)


def test_flood_keeps_memory_flat_and_latency_normal(running) -> None:
    driver, proc, _ = running
    node = psutil.Process(proc.pid)

    def round_trip() -> float:
        t0 = time.monotonic()
        assert driver.command_for(driver.state(NAMES, Q, QD), timeout=2.0) is not None
        return time.monotonic() - t0

    before = sorted(round_trip() for _ in range(20))[10]

    msg = driver.state(NAMES, Q, QD)
    driver.flood(msg, 1.0, 5000.0)  # warm-up
    rss_warm = node.memory_info().rss
    sent = driver.flood(msg, 4.0, 5000.0)
    rss_after = node.memory_info().rss
    assert sent > 4.0 * 3000, f"the flood reached only {sent / 4.0:.0f} Hz"
    assert proc.poll() is None
    assert rss_after - rss_warm < 5 * 2**20, f"RSS grew by {(rss_after - rss_warm) / 2**20:.1f} MiB"
    driver.spin(0.2)
    after = sorted(round_trip() for _ in range(20))[10]
    assert after < max(3 * before, 0.02), (
        f"round trip {after * 1e3:.2f} ms after vs {before * 1e3:.2f} ms before"
    )
    assert_commands_correctly(driver)


def test_a_drain_judges_each_message_at_its_take(tmp_path) -> None:
    """joint_states flooded faster than the node answers, so that it spends its time draining the
    subscription; five times the node process is stopped for 0.5 s (SIGSTOP: a stall, as a loaded
    machine gives) and the flood goes on. Every message is stamped on this machine's clock just
    before it is sent, so none is from the future. A drain once judged every message against the
    clock read when it began: after a stall inside it, the messages sent since were refused as
    "stamped 0.5 s in the future (clock skew)"."""
    proc = start_node(tmp_path, {**PARAMS, "joint_states_timeout": 0.3, "diagnostics_period": 0.2})
    d = Driver("drain_driver", BOUNDS)

    def stall() -> None:
        proc.send_signal(signal.SIGSTOP)
        time.sleep(0.5)
        proc.send_signal(signal.SIGCONT)

    try:
        d.wait_for_commands(lambda: d.state(NAMES, Q, QD), timeout=120.0)  # a loaded machine starts slowly
        sent = d.flood(d.state(NAMES, Q, QD), 5.5, 20000, every_second=stall)
        diag = d.diagnostics_while_publishing(lambda: d.state(NAMES, Q, QD))
        assert "rejected.clock_skew" not in diag, (sent, diag)
        assert_commands_correctly(d)
    finally:
        proc.send_signal(signal.SIGCONT)
        d.close()
        output = stop(proc)
    assert "in the future (clock skew)" not in output, output[-3000:]
    assert "Traceback" not in output, output
