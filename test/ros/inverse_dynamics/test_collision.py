"""The inverse_dynamics node's external-torque estimation as a real process (UR5): ~/external_efforts
equals the core's streaming observer on the same joint_states, ~/external_wrench the core's tip
wrench in the link's axes, ~/collision with thresholds and hysteresis, the contact status on
/diagnostics, joint_states without efforts, the gravity switch set live, invalid parameters.

joint_states are a smooth motion with efforts τ_m = rnea(q, q̇, q̈) − τ_ext (so the data obey the
dynamics with a known external torque), stamped on a synthetic clock 1 ms apart and sent one by
one, each answered before the next; every wait is bounded."""

from __future__ import annotations

import time

import numpy as np
import pytest
from geometry_msgs.msg import WrenchStamped
from rclpy.qos import DurabilityPolicy, QoSProfile
from sensor_msgs.msg import JointState
from std_msgs.msg import Bool

from rnea_ros import Friction, RobotModel, gravity_torques, link_pose, rnea
from rnea_ros.estimation.observer import MomentumObserver, tip_wrench
from rnea_ros.model.example_robots import example_urdf_path
from rnea_ros.testing.rosgraph import NODE, Driver, rclpy, start_node, stop

URDF = example_urdf_path("ur5").read_text()
MODEL = RobotModel.from_urdf(URDF)
NAMES = list(MODEL.joint_names)
LINK = "ee_link"
PERIOD = 1e-3
GAIN = 50.0
THRESHOLD = 3.0
HOME = np.array([0.3, -1.2, 1.5, -1.0, 1.2, 0.5])
STEP = np.array([0.0, 5.0, -2.0, 1.0, 0.0, 0.5])  # τ_ext, N m


def motion(t: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    w = np.linspace(1.0, 2.5, 6)
    return HOME + 0.2 * np.sin(w * t), 0.2 * w * np.cos(w * t), -0.2 * w * w * np.sin(w * t)


class Feed:
    """Sends joint_states and collects the node's contact outputs, matched by stamp."""

    def __init__(self, driver: Driver) -> None:
        self.driver, self.t = driver, 100.0
        node = driver.node
        self.external: dict[tuple[int, int], np.ndarray] = {}
        self.wrench: dict[tuple[int, int], WrenchStamped] = {}
        self.flags: list[bool] = []
        node.create_subscription(JointState, f"{NODE}/external_efforts", self._on_external, 100)
        node.create_subscription(WrenchStamped, f"{NODE}/external_wrench", self._on_wrench, 100)
        latched = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL)
        node.create_subscription(Bool, f"{NODE}/collision", lambda m: self.flags.append(m.data), latched)

    def _on_external(self, msg: JointState) -> None:
        assert list(msg.name) == NAMES
        self.external[(msg.header.stamp.sec, msg.header.stamp.nanosec)] = np.array(msg.effort)

    def _on_wrench(self, msg: WrenchStamped) -> None:
        self.wrench[(msg.header.stamp.sec, msg.header.stamp.nanosec)] = msg

    def send(self, q, qd, effort, *, expect: bool = True, timeout: float = 5.0) -> tuple[int, int]:
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
            if expect and key in self.external:
                return key
            if not expect and any(
                js.header.stamp.sec == key[0] and js.header.stamp.nanosec == key[1]
                for js in self.driver.joint_efforts[-5:]
            ):
                return key
        raise TimeoutError(f"no answer to the joint_states stamped {self.t:.3f}")

    def contact_status(self, timeout: float = 3.0) -> dict[str, str]:
        self.driver.diagnostics.clear()
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            rclpy.spin_once(self.driver.node, timeout_sec=0.02)
            for msg in self.driver.diagnostics:
                for status in msg.status:
                    if status.name.endswith(": contact"):
                        level = status.level
                        level = int.from_bytes(level, "little") if isinstance(level, bytes) else level
                        return {
                            "level": level,
                            "message": status.message,
                            **{kv.key: kv.value for kv in status.values},
                        }
        raise AssertionError("no contact status on /diagnostics")


@pytest.fixture(scope="module")
def feed(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("contact_node")
    params = {
        "robot_description": URDF,
        "tip_link": LINK,
        "joint_states_timeout": 0.0,
        "diagnostics_period": 0.2,
        "observer.enabled": True,
        "observer.gain": [GAIN],
        "collision.threshold": [THRESHOLD],
        "collision.hysteresis": 0.5,
    }
    proc = start_node(tmp, params)
    driver = Driver("contact_driver")
    feed = Feed(driver)
    try:
        end = time.monotonic() + 30.0
        while time.monotonic() < end:  # the node is starting
            try:
                q, qd, _ = motion(0.0)
                feed.send(q, qd, gravity_torques(MODEL, q), timeout=0.05)
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


def run(feed: Feed, observer: MomentumObserver, seconds: float, ext, *, effort_offset=None):
    """Send the motion with τ_ext(t) for `seconds`; compare each answer with the core observer."""
    worst, worst_wrench = 0.0, 0.0
    r = np.zeros(6)
    start = feed.t
    for _ in range(int(seconds / PERIOD)):
        s = feed.t + PERIOD - start
        q, qd, qdd = motion(s)
        effort = rnea(MODEL, q, qd, qdd) - ext(s)
        sent = effort if effort_offset is None else effort - effort_offset(q)
        key = feed.send(q, qd, sent)
        r = observer.update(feed.t, q, qd, effort).copy()
        worst = max(worst, float(np.max(np.abs(feed.external[key] - r))))
        w = feed.wrench.get(key)
        if w is not None:
            rot, _ = link_pose(MODEL, q, LINK)
            f = tip_wrench(MODEL, q, r, LINK, damping=1e-3)
            local = np.concatenate([rot.T @ f[:3], rot.T @ f[3:]])
            got = [
                w.wrench.force.x,
                w.wrench.force.y,
                w.wrench.force.z,
                w.wrench.torque.x,
                w.wrench.torque.y,
                w.wrench.torque.z,
            ]
            assert w.header.frame_id == LINK
            worst_wrench = max(worst_wrench, float(np.max(np.abs(np.array(got) - local))))
    return worst, worst_wrench, r


def test_external_efforts_wrench_and_collision_flag_match_the_core(feed: Feed) -> None:
    friction = Friction.from_model(MODEL)
    observer = MomentumObserver(MODEL, GAIN, friction=friction)
    # the node's observer restarts after the start-up gap: align ours on a first quiet sample
    feed.t += 1.0
    q, qd, _ = motion(0.0)
    feed.send(q, qd, rnea(MODEL, q, qd, np.zeros(6)))
    observer.update(feed.t, q, qd, rnea(MODEL, q, qd, np.zeros(6)))
    feed.flags.clear()
    quiet, quiet_wrench, r = run(feed, observer, 0.15, lambda s: np.zeros(6))
    assert quiet < 1e-9 and quiet_wrench < 1e-9
    assert np.max(np.abs(r)) < 0.05  # no external torque: r ≈ 0
    assert True not in feed.flags
    worst, worst_wrench, r = run(feed, observer, 0.15, lambda s: STEP)
    assert worst < 1e-9 and worst_wrench < 1e-9
    assert np.allclose(r, STEP, atol=0.01 * np.max(STEP))  # 7.5 time constants later
    feed.driver.spin(0.05)
    assert feed.flags and feed.flags[-1] is True  # joint 2 is above its threshold
    status = feed.contact_status()
    assert status["level"] == 2 and status["collision"] == "true"
    # off again: the flag clears once every |r| is below hysteresis × threshold
    worst, _, r = run(feed, observer, 0.1, lambda s: np.zeros(6))
    assert worst < 1e-9
    feed.driver.spin(0.05)
    assert feed.flags[-1] is False


def test_gravity_switch_set_live_keeps_the_estimate(feed: Feed) -> None:
    results = feed.driver.set_parameters({"observer.effort_includes_gravity": False})
    assert all(r.successful for r in results)
    try:
        friction = Friction.from_model(MODEL)
        observer = MomentumObserver(MODEL, GAIN, friction=friction)
        feed.t += 1.0  # a gap: the node restarts its observer; so does ours
        q, qd, _ = motion(0.0)
        feed.send(q, qd, rnea(MODEL, q, qd, np.zeros(6)) - gravity_torques(MODEL, q))
        observer.update(feed.t, q, qd, rnea(MODEL, q, qd, np.zeros(6)))
        worst, _, r = run(
            feed, observer, 0.1, lambda s: STEP, effort_offset=lambda q: gravity_torques(MODEL, q)
        )
        assert worst < 1e-9
        assert np.allclose(r, STEP * (1 - np.exp(-GAIN * 0.1)), atol=0.01 * np.max(STEP))
    finally:
        assert all(
            r.successful for r in feed.driver.set_parameters({"observer.effort_includes_gravity": True})
        )


def test_joint_states_without_efforts_say_so_and_still_get_a_command(feed: Feed) -> None:
    q, qd, _ = motion(0.0)
    for _ in range(5):
        feed.send(q, qd, None, expect=False)
    status = feed.contact_status()
    assert status["level"] == 1 and "no effort for" in status["message"] and NAMES[0] in status["message"]


@pytest.mark.parametrize(
    ("values", "words"),
    [
        ({"observer.gain": [1.0, 2.0]}, "observer.gain"),
        ({"collision.threshold": [1.0, 2.0, 3.0]}, "collision.threshold"),
        ({"observer.wrench_link": "no_such_link"}, "no_such_link"),
        ({"collision.hysteresis": 1.5}, "collision.hysteresis"),
    ],
)
def test_invalid_contact_parameters_are_rejected_naming_them(feed: Feed, values: dict, words: str) -> None:
    results = feed.driver.set_parameters(values)
    assert not results[0].successful and words in results[0].reason
