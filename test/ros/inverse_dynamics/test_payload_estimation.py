"""The inverse_dynamics node's online payload estimation as a real process (UR5, load on ee_link):
the ~/estimate_payload service, the auto mode (collision flag held), the blend into the model,
~/payload, /diagnostics, and every refusal.

joint_states carry efforts τ_m = rnea(arm + load) − τ_ext computed by Pinocchio (the load
appended to the URDF's wrist_3_joint as a rigid body: an independent reference for what a load
exerts), stamped on a synthetic clock 1 ms apart and sent one by one, each answered before the
next; every wait is bounded. The node's model is the URDF's (no load) until it estimates one."""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np
import pinocchio as pin
import pytest
from geometry_msgs.msg import InertiaStamped
from pinref import PinRef
from sensor_msgs.msg import JointState
from std_srvs.srv import Trigger

from rnea_ros import RobotModel, gravity_torques
from rnea_ros.model.example_robots import example_urdf_path
from rnea_ros.testing.rosgraph import NODE, Driver, rclpy, start_node, stop

URDF = example_urdf_path("ur5").read_text()
MODEL = RobotModel.from_urdf(URDF)
NAMES = list(MODEL.joint_names)
LINK = "ee_link"
PERIOD = 1e-3
GAIN = 100.0
HOME = np.array([0.3, -1.2, 1.5, -1.0, 1.2, 0.5])
MASS, COM = 1.5, np.array([0.06, 0.01, -0.02])  # ee_link frame
INERTIA = np.diag([2e-3, 3e-3, 2.5e-3])
WINDOW, MAX_WINDOW, HOLD, BLEND = 0.4, 1.0, 0.1, 0.1
REF = PinRef("ur5")


def motion(t: float, amplitude: float = 1.0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Slow swings, the wrist the widest (the load turns against gravity)."""
    a = amplitude * np.array([0.1, 0.1, 0.1, 0.4, 0.4, 0.4])
    w = np.linspace(1.0, 2.5, 6)
    return HOME + a * np.sin(w * t), a * w * np.cos(w * t), -a * w * w * np.sin(w * t)


def loaded_model(mass: float, com: np.ndarray, inertia: np.ndarray) -> tuple[pin.Model, pin.Data]:
    """Pinocchio's UR5 with the load appended to the joint that carries ee_link."""
    model = REF.pin.copy()
    frame = model.frames[model.getFrameId(LINK)]
    model.appendBodyToJoint(
        frame.parentJoint, frame.placement.act(pin.Inertia(mass, com, inertia)), pin.SE3.Identity()
    )
    return model, model.createData()


LOADED = loaded_model(MASS, COM, INERTIA)
FAR = loaded_model(1.0, np.array([0.4, 0.0, 0.0]), np.zeros((3, 3)))  # its centre of mass 0.4 m out


def efforts(q, qd, qdd, load=None, tau_ext=None) -> np.ndarray:
    """τ_m of the arm carrying `load` (a Pinocchio model and data; None: none) less τ_ext."""
    model, data = (REF.pin, REF.data) if load is None else load
    tau = pin.rnea(model, data, REF.to_pin(q), REF.to_pin(qd), REF.to_pin(qdd))[REF.idx]
    return tau if tau_ext is None else tau - tau_ext


def push(force) -> Callable:
    """τ_ext(t, q) of a constant force (root axes, N) of the environment on ee_link's origin."""
    wrench = np.concatenate([np.asarray(force, dtype=float), np.zeros(3)])
    return lambda t, q: REF.jacobian(q, LINK).T @ wrench


class Feed:
    """Sends joint_states and collects what the node says about the payload."""

    log: Callable[[], str]  # the node's output so far

    def __init__(self, driver: Driver) -> None:
        self.driver, self.t = driver, 100.0
        node = driver.node
        self.answered: set[tuple[int, int]] = set()
        self.payloads: list[InertiaStamped] = []
        self.gravity: dict[tuple[int, int], np.ndarray] = {}
        node.create_subscription(JointState, f"{NODE}/external_efforts", self._on_external, 100)
        node.create_subscription(JointState, f"{NODE}/terms/gravity", self._on_gravity, 100)
        node.create_subscription(InertiaStamped, f"{NODE}/payload", self.payloads.append, 10)
        self.client = node.create_client(Trigger, f"{NODE}/estimate_payload")

    def _on_external(self, msg: JointState) -> None:
        self.answered.add((msg.header.stamp.sec, msg.header.stamp.nanosec))

    def _on_gravity(self, msg: JointState) -> None:
        self.gravity[(msg.header.stamp.sec, msg.header.stamp.nanosec)] = np.array(msg.effort)

    def send(self, q, qd, effort, timeout: float = 30.0, again: bool = False) -> tuple[int, int]:
        """One joint_states 1 ms after the last (again: at the same time, as a simulator resends
        an unanswered state) and its answer."""
        self.t += 0.0 if again else PERIOD
        msg = self.driver.state(NAMES, q, qd, stamp=False)
        msg.effort = [float(x) for x in effort]
        key = divmod(round(self.t * 1e9), 1_000_000_000)
        msg.header.stamp.sec, msg.header.stamp.nanosec = key
        self.driver.joint_states.publish(msg)
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            rclpy.spin_once(self.driver.node, timeout_sec=0.005)
            if key in self.answered:
                self.answered.discard(key)
                return key
        raise TimeoutError(f"no answer to the joint_states stamped {self.t:.3f}")

    def run(self, seconds: float, load=None, amplitude: float = 1.0, tau_ext=None) -> tuple[int, int]:
        """`seconds` of the motion (continuing from the feed's clock; amplitude 0: at rest), the
        arm carrying `load` (see `efforts`), τ_ext(t, q) on the joints besides; the key of the
        last message."""
        key = (0, 0)
        for _ in range(int(round(seconds / PERIOD))):
            q, qd, qdd = motion(self.t + PERIOD, amplitude)
            ext = None if tau_ext is None else tau_ext(self.t + PERIOD, q)
            key = self.send(q, qd, efforts(q, qd, qdd, load, ext))
        return key

    def request(self, timeout: float = 10.0) -> Trigger.Response:
        assert self.client.wait_for_service(timeout), "~/estimate_payload not available"
        future = self.client.call_async(Trigger.Request())
        end = time.monotonic() + timeout
        while not future.done() and time.monotonic() < end:
            rclpy.spin_once(self.driver.node, timeout_sec=0.01)
        assert future.done(), "~/estimate_payload did not answer"
        return future.result()

    def status(self, suffix: str, timeout: float = 3.0) -> dict[str, str]:
        """The newest /diagnostics status whose name ends with `suffix`."""
        self.driver.diagnostics.clear()
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            rclpy.spin_once(self.driver.node, timeout_sec=0.02)
            for msg in self.driver.diagnostics:
                for status in msg.status:
                    if status.name.endswith(suffix):
                        level = status.level
                        level = int.from_bytes(level, "little") if isinstance(level, bytes) else level
                        return {
                            "level": level,
                            "message": status.message,
                            **{kv.key: kv.value for kv in status.values},
                        }
        raise AssertionError(f"no '{suffix}' status on /diagnostics")

    def reset(self) -> None:
        """No payload in the node's model, the estimation idle: a payload.mass parameter set
        (which replaces an estimate), then a gap (the observer restarts) and a quiet second."""
        results = self.driver.set_parameters({"payload.mass": 0.0})
        assert all(r.successful for r in results)
        self.t += 1.0
        self.run(0.3)
        self.payloads.clear()

    def counts(self) -> tuple[int, int, int]:
        """(estimates, refusals, collisions ignored) so far, from /diagnostics."""
        s = self.status("payload estimation")
        return int(s["estimates"]), int(s["refusals"]), int(s["collisions_ignored"])


def _read(proc) -> str:
    proc.log.flush()
    with open(proc.log.name) as f:
        return f.read()


@pytest.fixture(scope="module")
def feed(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("payload_node")
    params = {
        "robot_description": URDF,
        "tip_link": LINK,
        "joint_states_timeout": 0.0,
        "diagnostics_period": 0.2,
        "observer.enabled": True,
        "observer.gain": [GAIN],
        "observer.friction": False,
        "collision.threshold": [3.0],
        "payload.estimation": "auto",
        "payload.estimation_window": WINDOW,
        "payload.estimation_max_window": MAX_WINDOW,
        "payload.trigger_hold": HOLD,
        "payload.blend_time": BLEND,
    }
    proc = start_node(tmp, params)
    driver = Driver("payload_driver")
    feed = Feed(driver)
    feed.log = lambda: _read(proc)
    try:
        end = time.monotonic() + 60.0
        while time.monotonic() < end:  # the node is starting
            try:
                q, qd, _ = motion(feed.t)
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


def _inertia(msg: InertiaStamped) -> tuple[float, np.ndarray]:
    i = msg.inertia
    return i.m, np.array([i.com.x, i.com.y, i.com.z])


def _set(feed: Feed, values: dict) -> None:
    results = feed.driver.set_parameters(values)
    assert all(r.successful for r in results), [r.reason for r in results]


def test_auto_estimates_a_grasped_load_blends_it_in_and_removes_it_on_release(feed: Feed) -> None:
    feed.reset()
    estimates, refusals, _ = feed.counts()
    feed.run(0.5)
    assert not feed.payloads
    # grasp: the flag rises, holds, a window later the estimate goes in over BLEND
    feed.run(HOLD + WINDOW + BLEND + 0.05, LOADED)
    assert len(feed.payloads) == 1, "no estimate published on ~/payload"
    mass, com = _inertia(feed.payloads[-1])
    assert feed.payloads[-1].header.frame_id == LINK
    assert abs(mass - MASS) < 0.002 * MASS and np.linalg.norm(com - COM) < 0.002
    status = feed.status("payload estimation")
    assert status["level"] == 0 and feed.counts()[:2] == (estimates + 1, refusals)
    assert f"{mass:.4f} +- " in status["last_estimate"]
    assert "(estimated)" in feed.status(": inverse dynamics")["payload"]
    # the gravity term now carries the load: Pinocchio's with the load, to the estimate's accuracy
    q, qd, qdd = motion(feed.t + PERIOD)
    key = feed.send(q, qd, efforts(q, qd, qdd, LOADED))
    feed.driver.spin(0.05)
    loaded_gravity = pin.computeGeneralizedGravity(*LOADED, REF.to_pin(q))[REF.idx]
    assert np.max(np.abs(feed.gravity[key] - loaded_gravity)) < 0.003 * np.max(np.abs(loaded_gravity))
    # refined from twice, then three times the window (MAX_WINDOW), each published; its own
    # ~/payload messages are not taken back as messages: the source stays "estimated"
    feed.run(2 * (WINDOW + BLEND + 0.1) + 0.2, LOADED)
    assert len(feed.payloads) == 3 and feed.counts()[:2] == (estimates + 3, refusals)
    assert "refined at" in feed.status("payload estimation")["last_estimate"]
    mass, com = _inertia(feed.payloads[-1])
    assert abs(mass - MASS) < 0.002 * MASS and np.linalg.norm(com - COM) < 0.002
    assert "(estimated)" in feed.status(": inverse dynamics")["payload"]
    # release: the wrench returns, the payload goes out the same way (nothing to refine)
    feed.run(HOLD + WINDOW + BLEND + 0.6)
    assert len(feed.payloads) == 4 and feed.payloads[-1].inertia.m == 0.0
    assert feed.counts()[:2] == (estimates + 4, refusals)
    assert feed.status(": inverse dynamics")["payload"] == "none (estimated)"


def test_a_resent_joint_states_does_not_end_a_collection(feed: Feed) -> None:
    feed.reset()
    estimates, refusals, _ = feed.counts()
    feed.run(0.2)
    feed.run(HOLD + 0.1, LOADED)  # collecting
    q, qd, qdd = motion(feed.t)
    for _ in range(3):
        feed.send(q, qd, efforts(q, qd, qdd, LOADED), again=True)
    feed.run(WINDOW + BLEND, LOADED)
    assert len(feed.payloads) == 1 and feed.counts()[:2] == (estimates + 1, refusals)


def test_a_collision_pulse_is_ignored(feed: Feed) -> None:
    feed.reset()
    estimates, refusals, ignored = feed.counts()
    start = feed.t + 0.1
    pulse = np.array([0.0, 20.0, -10.0, 0.0, 0.0, 0.0])  # 30 ms on the shoulder and elbow

    def tau(t: float, q) -> np.ndarray:
        return pulse if start <= t < start + 0.03 else np.zeros(6)

    feed.run(0.1 + 0.03 + HOLD + WINDOW + BLEND + 0.2, tau_ext=tau)
    assert not feed.payloads
    assert feed.counts() == (estimates, refusals, ignored + 1)


@pytest.mark.parametrize(
    ("case", "load", "amplitude", "tau_ext", "reason", "words"),
    [
        # a steady push sideways: no rigid load under gravity explains it
        ("contact", None, 1.0, push([15.0, 0.0, 0.0]), "changing", "no rigid load explains"),
        # lifted: the force on the link points up
        ("lifted", None, 1.0, push([0.0, 0.0, 20.0]), "negative_mass", "negative mass"),
        # a load whose centre of mass is 0.4 m out (payload.max_com_distance 0.3)
        ("far", FAR, 1.0, None, "com_distance", "beyond 0.3 m"),
        # the arm at rest: the centre of mass along gravity cannot be seen (after MAX_WINDOW)
        ("at rest", LOADED, 0.0, None, "rotation", "too little rotation"),
    ],
)
def test_auto_refuses_with_the_reason(feed: Feed, case, load, amplitude, tau_ext, reason, words) -> None:
    _set(feed, {"payload.max_com_distance": 0.3})
    try:
        feed.reset()
        estimates, refusals, _ = feed.counts()
        feed.run(HOLD + MAX_WINDOW + 0.3, load, amplitude, tau_ext)
        assert not feed.payloads, case
        status = feed.status("payload estimation")
        assert feed.counts()[:2] == (estimates, refusals + 1), case
        assert status["level"] == 1 and words in status["message"] and words in status["last_refusal"]
        assert "none" in feed.status(": inverse dynamics")["payload"]
        assert words in feed.log(), f"{case}: the refusal is not in the node's log"
    finally:
        _set(feed, {"payload.max_com_distance": 0.5})


def test_a_contact_that_goes_away_during_the_window_is_no_load(feed: Feed) -> None:
    feed.reset()
    estimates, refusals, _ = feed.counts()
    start = feed.t
    sideways = push([0.0, 0.0, -20.0])  # pressed down like a load, but only for a while
    feed.run(
        HOLD + WINDOW + 0.5, tau_ext=lambda t, q: sideways(t, q) if t < start + HOLD + 0.2 else np.zeros(6)
    )
    assert not feed.payloads
    assert feed.counts()[:2] == (estimates, refusals + 1)
    assert "went away" in feed.status("payload estimation")["last_refusal"]


def test_the_service_estimates_answers_and_applies(feed: Feed) -> None:
    _set(feed, {"payload.estimation": "on_request"})
    try:
        feed.reset()
        # at rest with the load: the centre of mass along gravity is not seen; the mass is
        feed.run(WINDOW + 0.2, LOADED, amplitude=0.0)
        answer = feed.request()
        assert not answer.success and "too little rotation" in answer.message
        assert f"the mass alone: {MASS:.3f} +- " in answer.message
        assert "too little rotation" in feed.status("payload estimation")["last_refusal"]
        # moving: an estimate with its standard deviations, applied over BLEND
        feed.run(WINDOW + 0.1, LOADED)
        answer = feed.request()
        assert answer.success, answer.message
        assert " +- " in answer.message and f"applied over {BLEND:g} s" in answer.message
        feed.run(BLEND + 0.1, LOADED)
        mass, com = _inertia(feed.payloads[-1])
        assert abs(mass - MASS) < 0.002 * MASS and np.linalg.norm(com - COM) < 0.002
        assert f"{mass:.4f} +- " in answer.message
        assert "(estimated)" in feed.status(": inverse dynamics")["payload"]
        # on_request never starts one by itself: the load released, nothing changes
        count = len(feed.payloads)
        feed.run(HOLD + WINDOW + BLEND + 0.3)
        assert len(feed.payloads) == count
        # right after a gap the observer restarts: not enough data yet
        feed.t += 1.0
        feed.run(0.1)
        answer = feed.request()
        assert not answer.success and "not enough data" in answer.message
    finally:
        _set(feed, {"payload.estimation": "auto"})


def test_the_service_says_when_estimation_is_off(feed: Feed) -> None:
    _set(feed, {"payload.estimation": False})  # `ros2 param set ... payload.estimation off`: YAML's false
    try:
        answer = feed.request()
        assert not answer.success and answer.message == "payload.estimation is off"
    finally:
        _set(feed, {"payload.estimation": "auto"})


def test_an_estimate_being_blended_in_finishes_when_estimation_is_switched_off(feed: Feed) -> None:
    feed.reset()
    feed.run(HOLD + WINDOW + 0.03, LOADED)  # the estimate came a few ms ago: blending
    assert feed.status("payload estimation")["state"] == "blending" and not feed.payloads
    _set(feed, {"payload.estimation": "off"})
    try:
        feed.run(BLEND + 0.05, LOADED)
        assert len(feed.payloads) == 1 and abs(feed.payloads[0].inertia.m - MASS) < 0.002 * MASS
        assert "(estimated)" in feed.status(": inverse dynamics")["payload"]
    finally:
        _set(feed, {"payload.estimation": "auto"})


def test_a_payload_parameter_replaces_the_estimate(feed: Feed) -> None:
    feed.reset()
    feed.run(HOLD + WINDOW + BLEND + 0.3, LOADED)
    assert feed.payloads and "(estimated)" in feed.status(": inverse dynamics")["payload"]
    _set(feed, {"payload.mass": 0.5})
    payload = feed.status(": inverse dynamics")["payload"]
    assert payload.startswith("0.5 kg on ee_link") and "payload.* parameters" in payload


@pytest.mark.parametrize(
    ("values", "words"),
    [
        ({"observer.enabled": False}, "needs observer.enabled"),
        ({"payload.estimation_max_window": 0.1}, "payload.estimation_max_window"),
        ({"payload.estimation": "sometimes"}, "payload.estimation"),
        ({"payload.link": "base_link"}, "payload.link"),
    ],
)
def test_invalid_estimation_parameters_are_rejected_naming_them(feed: Feed, values: dict, words: str) -> None:
    results = feed.driver.set_parameters(values)
    assert not results[0].successful and words in results[0].reason
