"""QoS overrides from parameters (`qos_overrides.<topic>.<publisher|subscription>.<policy>`):
declared (visible to `ros2 param`), applied at start-up, and what connects with what: the node as
a real process with best-effort and reliable joint_states publishers, against its default
(best-effort) subscription and a reliable one set by an override."""

from __future__ import annotations

import time

import numpy as np
import pytest
from rcl_interfaces.srv import GetParameters, ListParameters
from rclpy.qos import QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from rnea_ros import RobotModel, rnea
from rnea_ros.model.example_robots import example_urdf_path
from rnea_ros.testing.rosgraph import FRICTION_OFF, NODE, Driver, start_node, stop

URDF = example_urdf_path("ur5").read_text()
MODEL = RobotModel.from_urdf(URDF)
NAMES = list(MODEL.joint_names)
BEST_EFFORT = QoSProfile(depth=10, reliability=ReliabilityPolicy.BEST_EFFORT)
RELIABLE = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE)
JS = "qos_overrides./joint_states.subscription"
TRAJ = f"qos_overrides.{NODE}/joint_trajectory.subscription"
CMD = f"qos_overrides.{NODE}/effort_commands.publisher"
Q = np.linspace(-1.0, 1.0, MODEL.nv)
QD = np.linspace(0.5, -0.5, MODEL.nv)


def call(driver: Driver, srv_type, name: str, request, timeout: float = 10.0):
    client = driver.node.create_client(srv_type, f"{NODE}/{name}")
    assert client.wait_for_service(timeout), name
    for _ in range(4):  # a first call right after discovery can lose its answer: ask again
        future = client.call_async(request)
        end = time.monotonic() + 3.0
        while not future.done() and time.monotonic() < end:
            driver.spin(0.01)
        if future.done():
            return future.result()
        client.remove_pending_request(future)
    raise AssertionError(f"{name} did not answer")


def qos_parameters(driver: Driver) -> dict[str, object]:
    names = call(
        driver, ListParameters, "list_parameters", ListParameters.Request(prefixes=["qos_overrides"])
    )
    names = list(names.result.names)
    values = call(driver, GetParameters, "get_parameters", GetParameters.Request(names=names)).values
    out: dict[str, object] = {}
    for name, value in zip(names, values, strict=True):
        out[name] = value.string_value if value.type == 4 else value.integer_value
    return out


def connected(driver: Driver, publisher, timeout: float = 3.0) -> bool:
    """Whether the node's joint_states subscription matched `publisher` (bounded wait)."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if publisher.get_subscription_count() > 0:
            return True
        driver.spin(0.05)
    return False


def answers(driver: Driver, publisher) -> np.ndarray | None:
    """The node's command for (Q, QD) sent on `publisher`."""
    driver.joint_states = publisher
    return driver.command_for(driver.state(NAMES, Q, QD), timeout=1.5)


@pytest.fixture
def graph(tmp_path):
    started: list = []

    def start(overrides: dict) -> Driver:
        params = {"robot_description": URDF, "joint_states_timeout": 0.5, **FRICTION_OFF, **overrides}
        started.append(start_node(tmp_path, params))
        driver = Driver(f"qos_driver_{len(started)}")
        started.append(driver)
        driver.best_effort = driver.node.create_publisher(JointState, "joint_states", BEST_EFFORT)
        driver.reliable = driver.node.create_publisher(JointState, "joint_states", RELIABLE)
        driver.joint_states = driver.reliable
        driver.wait_for_commands(lambda: driver.state(NAMES, Q, QD), timeout=30.0)
        return driver

    yield start
    for item in reversed(started):
        if isinstance(item, Driver):
            item.close()
        else:
            assert "Traceback" not in stop(item)


def test_default_best_effort_subscription_takes_both_publishers(graph) -> None:
    driver = graph({})
    want = rnea(MODEL, Q, QD, np.zeros(MODEL.nv))
    for publisher in (driver.best_effort, driver.reliable):
        assert connected(driver, publisher)
        got = answers(driver, publisher)
        assert got is not None and np.allclose(got, want, atol=1e-9)
    params = qos_parameters(driver)  # declared with the built-in profile: what ros2 param shows
    assert params[f"{JS}.reliability"] == "best_effort" and params[f"{JS}.depth"] == 10
    assert params[f"{JS}.history"] == "keep_last"
    assert params[f"{TRAJ}.reliability"] == "reliable" and params[f"{CMD}.reliability"] == "reliable"


def test_overrides_make_joint_states_reliable_and_commands_best_effort(graph) -> None:
    driver = graph({f"{JS}.reliability": "reliable", f"{JS}.depth": 3, f"{CMD}.reliability": "best_effort"})
    want = rnea(MODEL, Q, QD, np.zeros(MODEL.nv))
    assert connected(driver, driver.reliable)
    got = answers(driver, driver.reliable)
    assert got is not None and np.allclose(got, want, atol=1e-9)
    # a best-effort publisher cannot feed a reliable subscription: no match, no command
    assert not connected(driver, driver.best_effort, timeout=1.0)
    assert answers(driver, driver.best_effort) is None
    params = qos_parameters(driver)
    assert params[f"{JS}.reliability"] == "reliable" and params[f"{JS}.depth"] == 3
    # the commands went best effort: a reliable subscriber no longer matches, a best-effort one does
    reliable_sub = driver.node.create_subscription(
        Float64MultiArray, f"{NODE}/effort_commands", lambda m: None, 10
    )
    got_best: list = []
    driver.node.create_subscription(
        Float64MultiArray, f"{NODE}/effort_commands", got_best.append, BEST_EFFORT
    )
    driver.spin(1.0)
    assert answers(driver, driver.reliable) is not None
    end = time.monotonic() + 3
    while not got_best and time.monotonic() < end:
        driver.spin(0.05)
    assert got_best and np.allclose(got_best[-1].data, want, atol=1e-9)
    assert reliable_sub.get_publisher_count() == 0


def test_an_invalid_override_ends_start_up_naming_it(tmp_path) -> None:
    proc = start_node(tmp_path, {"robot_description": URDF, f"{JS}.reliability": "sometimes"})
    try:
        assert proc.wait(60) == 2
    finally:
        output = stop(proc)
    assert f"{JS}.*" in output and "sometimes" in output and "Traceback" not in output, output


def test_overrides_follow_the_remapped_topic_and_one_naming_no_topic_is_said(tmp_path) -> None:
    """As rclcpp names them: with `-r '~/effort_commands:=/effort_controller/commands'` the
    commands' override is qos_overrides./effort_controller/commands.publisher.*; one named before
    the remap, or after a misspelled topic, matches nothing and the node says so, naming the one
    that would match."""
    remapped = "qos_overrides./effort_controller/commands.publisher"
    params = {
        "robot_description": URDF,
        **FRICTION_OFF,
        f"{remapped}.reliability": "best_effort",
        f"{CMD}.depth": 5,  # the topic before the remap: ignored, and said
        "qos_overrides./joint_state.subscription.reliability": "reliable",  # misspelled
    }
    proc = start_node(tmp_path, params, "~/effort_commands:=/effort_controller/commands")
    driver = Driver("qos_remap_driver")
    try:
        got: list = []
        driver.node.create_subscription(
            Float64MultiArray, "/effort_controller/commands", got.append, BEST_EFFORT
        )
        reliable = driver.node.create_subscription(
            Float64MultiArray, "/effort_controller/commands", lambda m: None, RELIABLE
        )
        want = rnea(MODEL, Q, QD, np.zeros(MODEL.nv))
        driver.wait_for_commands(lambda: driver.state(NAMES, Q, QD), timeout=120.0)
        end = time.monotonic() + 30.0
        while not got and time.monotonic() < end:
            driver.joint_states.publish(driver.state(NAMES, Q, QD))
            driver.spin(0.05)
        assert got and np.allclose(got[-1].data, want, atol=1e-9)  # best effort on the remapped topic
        assert reliable.get_publisher_count() == 0  # a best-effort publisher: no reliable match
        params = qos_parameters(driver)
        assert params[f"{remapped}.reliability"] == "best_effort" and params[f"{remapped}.depth"] == 10
        assert not any(name.startswith(CMD) for name in params)
    finally:
        driver.close()
        output = stop(proc)
    assert (
        f"parameter '{CMD}.depth' matches no topic of this node: ignored; {NODE}/effort_commands is "
        f"remapped to /effort_controller/commands, and overrides follow the remapped name (as in "
        f"rclcpp): {remapped}.depth"
    ) in output, output
    assert (
        "parameter 'qos_overrides./joint_state.subscription.reliability' matches no topic of this node: "
        "ignored (did you mean 'qos_overrides./joint_states.subscription.reliability'?)"
    ) in output, output
