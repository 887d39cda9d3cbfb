"""effort_unit in the inverse_dynamics node as a real process (Panda to panda_hand, friction off):
commands in current are the core's joint torque / (G K_t) per joint, clamped in joint torque first;
live switches to motor_torque and joint_torque and back; a missing torque constant refused naming
the joint; the contact observer reads efforts given in current as the same joint torques (its
estimate equals the core observer's on the joint torques, and the node's own estimate with the
efforts sent in joint torque).

joint_states are stamped on a synthetic clock (joint_states_timeout 0) and sent one by one, each
answered before the next; every wait is bounded."""

from __future__ import annotations

import time

import numpy as np
import pytest
from sensor_msgs.msg import JointState

from rnea_ros import RobotModel, rnea
from rnea_ros.estimation.observer import MomentumObserver
from rnea_ros.model.example_robots import example_urdf_path
from rnea_ros.testing.rosgraph import FRICTION_OFF, NODE, Driver, rclpy, start_node, stop

URDF = example_urdf_path("panda").read_text()
MODEL = RobotModel.from_urdf(URDF, tip_link="panda_hand")
NAMES = list(MODEL.joint_names)
RATIO = np.array([101.0, 121.0, 81.0, 99.0, 51.0, 47.0, 33.0])
KT = np.array([0.11, 0.09, 0.13, 0.10, 0.07, 0.06, 0.05])  # N m/A
GAIN = 50.0
PERIOD = 1e-3
RNG = np.random.default_rng(24)
HOME = np.array([0.2, -0.5, 0.1, -2.0, 0.3, 1.6, 0.7])
TAU_EXT = np.array([3.0, -4.0, 2.0, 5.0, -1.0, 1.5, 0.5])  # N m


def motion(t: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    w = np.linspace(1.0, 2.5, 7)
    return HOME + 0.2 * np.sin(w * t), 0.2 * w * np.cos(w * t), -0.2 * w * w * np.sin(w * t)


class Feed:
    """Sends joint_states on a synthetic clock; collects ~/joint_efforts and ~/external_efforts by
    stamp."""

    def __init__(self, driver: Driver) -> None:
        self.driver, self.t = driver, 100.0
        self.answers: dict[tuple[int, int], np.ndarray] = {}
        self.external: dict[tuple[int, int], np.ndarray] = {}
        node = driver.node
        node.create_subscription(JointState, f"{NODE}/joint_efforts", self._on_answer, 100)
        node.create_subscription(JointState, f"{NODE}/external_efforts", self._on_external, 100)

    def _on_answer(self, msg: JointState) -> None:
        self.answers[(msg.header.stamp.sec, msg.header.stamp.nanosec)] = np.array(msg.effort)

    def _on_external(self, msg: JointState) -> None:
        assert list(msg.name) == NAMES
        self.external[(msg.header.stamp.sec, msg.header.stamp.nanosec)] = np.array(msg.effort)

    def send(self, q, qd, effort=None, *, external: bool = False, timeout: float = 5.0):
        """The command (and with `external`, the external efforts) answering this state."""
        self.t += PERIOD
        msg = self.driver.state(NAMES, q, qd, stamp=False)
        if effort is not None:
            msg.effort = [float(x) for x in effort]
        key = divmod(round(self.t * 1e9), 1_000_000_000)
        msg.header.stamp.sec, msg.header.stamp.nanosec = key
        self.driver.joint_states.publish(msg)
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            rclpy.spin_once(self.driver.node, timeout_sec=0.005)
            if key in self.answers and (not external or key in self.external):
                return self.answers[key], self.external.get(key)
        raise TimeoutError(f"no answer to the joint_states stamped {self.t:.3f}")

    def set(self, values: dict) -> None:
        results = self.driver.set_parameters(values)
        assert all(r.successful for r in results), [r.reason for r in results]


@pytest.fixture(scope="module")
def feed(tmp_path_factory):
    params = {
        "robot_description": URDF,
        "tip_link": "panda_hand",
        "joint_states_timeout": 0.0,
        "diagnostics_period": 0.2,
        "effort_unit": ["current"],
        "gearing.ratio": RATIO.tolist(),
        "gearing.torque_constant": KT.tolist(),
        "observer.enabled": True,
        "observer.gain": [GAIN],
        "observer.friction": False,
        "collision.threshold": [1e3],
        **FRICTION_OFF,
    }
    proc = start_node(tmp_path_factory.mktemp("effort_unit_node"), params)
    driver = Driver("effort_unit_driver")
    feed = Feed(driver)
    try:
        end = time.monotonic() + 30.0
        while time.monotonic() < end:  # the node is starting
            try:
                feed.send(HOME, np.zeros(7), timeout=0.05)
                break
            except TimeoutError:
                continue
        else:
            raise TimeoutError("the node never answered")
        yield feed
    finally:
        driver.close()
        log = stop(proc)
        assert "Traceback" not in log, log


def random_state() -> tuple[np.ndarray, np.ndarray]:
    return RNG.uniform(MODEL.position_lower, MODEL.position_upper), RNG.normal(0, 0.5, MODEL.nv)


def test_commands_in_current_are_the_joint_torque_over_g_kt(feed: Feed) -> None:
    for _ in range(5):
        q, qd = random_state()
        got, _ = feed.send(q, qd)
        tau = rnea(MODEL, q, qd, np.zeros(7))
        assert np.all(np.abs(tau) <= MODEL.effort_limit)  # no clamp here
        assert np.allclose(got, tau / (RATIO * KT), rtol=0, atol=1e-9)
    feed.driver.spin(0.05)
    assert np.allclose(feed.driver.commands[-1][1], got, rtol=0, atol=1e-12)  # ~/effort_commands
    terms = sum(np.array(feed.driver.terms[t][-1].effort) for t in feed.driver.terms)
    assert np.allclose(terms, tau, rtol=0, atol=1e-9)  # ~/terms/* stay in joint torque
    status = feed.driver.latest_diagnostics()
    assert status["effort_units"] == " ".join(f"{n}:current" for n in NAMES)


def test_the_limit_clamps_the_joint_torque_before_the_conversion(feed: Feed) -> None:
    scale = 0.05
    feed.set({"effort_limit_scale": scale})
    try:
        clamped = 0
        for _ in range(5):
            q, qd = random_state()
            got, _ = feed.send(q, qd)
            tau = rnea(MODEL, q, qd, np.zeros(7))
            limit = scale * MODEL.effort_limit
            clamped += int(np.sum(np.abs(tau) > limit))
            assert np.allclose(got, np.clip(tau, -limit, limit) / (RATIO * KT), rtol=0, atol=1e-9)
        assert clamped >= 3
    finally:
        feed.set({"effort_limit_scale": 1.0})


def test_live_switches_between_units_and_back(feed: Feed) -> None:
    q, qd = random_state()
    tau = rnea(MODEL, q, qd, np.zeros(7))
    try:
        feed.set({"effort_unit": ["joint_torque"]})
        got, _ = feed.send(q, qd)
        assert np.allclose(got, tau, rtol=0, atol=1e-9)
        assert "effort_units" not in feed.driver.latest_diagnostics()
        units = ["motor_torque", "joint_torque", "current"] * 2 + ["motor_torque"]
        feed.set({"effort_unit": units})
        got, _ = feed.send(q, qd)
        factor = np.select(
            [np.array(units) == "motor_torque", np.array(units) == "current"],
            [1 / RATIO, 1 / (RATIO * KT)],
            1.0,
        )
        assert np.allclose(got, tau * factor, rtol=0, atol=1e-9)
        # a joint in current without a torque constant: refused naming it, the units stay
        results = feed.driver.set_parameters({"gearing.torque_constant": [0.1, 0.1, 0.0, 0.1, 0.1, 0.1, 0.1]})
        assert not results[0].successful
        assert "gearing.torque_constant" in results[0].reason and "'panda_joint3'" in results[0].reason
        bad = feed.driver.set_parameters({"effort_unit": ["amperes"]})
        assert not bad[0].successful and "joint_torque, motor_torque, current" in bad[0].reason
        got, _ = feed.send(q, qd)
        assert np.allclose(got, tau * factor, rtol=0, atol=1e-9)
    finally:
        feed.set({"effort_unit": ["current"]})
    got, _ = feed.send(q, qd)
    assert np.allclose(got, tau / (RATIO * KT), rtol=0, atol=1e-9)


def observe(feed: Feed, unit: str, seconds: float = 0.1) -> np.ndarray:
    """The motion with τ_m = rnea(q, q̇, q̈) − τ_ext, efforts sent in `unit` (after a gap that
    restarts the node's observer); the node's external efforts, checked against the core
    observer on the joint torques, one row per message."""
    feed.t += 1.0
    core = MomentumObserver(MODEL, GAIN)
    to_unit = 1 / (RATIO * KT) if unit == "current" else np.ones(7)
    rows = []
    for i in range(int(seconds / PERIOD) + 1):
        q, qd, qdd = motion(i * PERIOD)
        tau_m = rnea(MODEL, q, qd, qdd) - (TAU_EXT if i else 0.0)
        _, r = feed.send(q, qd, tau_m * to_unit, external=True)
        want = core.update(feed.t, q, qd, tau_m)
        assert np.allclose(r, want, rtol=0, atol=1e-9)
        rows.append(r)
    return np.array(rows)


def test_the_observer_reads_efforts_in_current_as_joint_torque(feed: Feed) -> None:
    in_current = observe(feed, "current")
    assert np.allclose(in_current[-1], TAU_EXT * (1 - np.exp(-GAIN * 0.1)), atol=0.02 * np.max(TAU_EXT))
    feed.set({"effort_unit": ["joint_torque"]})
    try:
        in_torque = observe(feed, "joint_torque")
    finally:
        feed.set({"effort_unit": ["current"]})
    assert np.allclose(in_current, in_torque, rtol=0, atol=1e-9)
