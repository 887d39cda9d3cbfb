"""The managed variant of inverse_dynamics (`inverse_dynamics_lifecycle_node`) as a real process,
driven through its lifecycle services with rclpy and with `ros2 lifecycle set`: what each state
publishes, the hold command on deactivate (gravity alone at the last state, against the core),
release on cleanup, a second configure, shutdown, and the lifecycle state on diagnostics."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
import time

import numpy as np
import pytest
from lifecycle_msgs.msg import Transition
from lifecycle_msgs.srv import ChangeState, GetState
from ros_install import WHEELS
from std_msgs.msg import String

from rnea_ros import RobotModel, gravity_torques, rnea
from rnea_ros.model.example_robots import example_urdf_path
from rnea_ros.testing.rosgraph import FRICTION_OFF, NODE, START_TIMEOUT, Driver, ros_distro, start_node, stop

URDF = example_urdf_path("ur5").read_text()
MODEL = RobotModel.from_urdf(URDF)
NAMES = list(MODEL.joint_names)
RNG = np.random.default_rng(4)


def random_state() -> tuple[np.ndarray, np.ndarray]:
    return RNG.uniform(-2.0, 2.0, MODEL.nv), RNG.normal(0, 0.5, MODEL.nv)


def call(driver: Driver, srv_type, name: str, request):
    client = driver.node.create_client(srv_type, f"{NODE}/{name}")
    assert client.wait_for_service(20.0), name
    try:
        for _ in range(4):  # a first call right after discovery can lose its answer: ask again
            future = client.call_async(request)
            end = time.monotonic() + 60.0 if srv_type is ChangeState else time.monotonic() + 3.0
            while not future.done() and time.monotonic() < end:
                driver.spin(0.01)
            if future.done():
                return future.result()
            client.remove_pending_request(future)
        raise AssertionError(f"{name} did not answer")
    finally:
        driver.node.destroy_client(client)


def change(driver: Driver, transition: int) -> bool:
    return call(
        driver, ChangeState, "change_state", ChangeState.Request(transition=Transition(id=transition))
    ).success


def lifecycle_state(driver: Driver) -> str:
    return call(driver, GetState, "get_state", GetState.Request()).current_state.label


def joint_states_subscribed(driver: Driver, expected: bool, timeout: float = 5.0) -> bool:
    """Whether the node's joint_states subscription is there (bounded wait for the expected answer)."""
    end = time.monotonic() + timeout
    while (driver.joint_states.get_subscription_count() > 0) != expected and time.monotonic() < end:
        driver.spin(0.05)
    return (driver.joint_states.get_subscription_count() > 0) == expected


def commands_like_the_core(driver: Driver) -> np.ndarray:
    """One state commanded as the plain node does; its q."""
    q, qd = random_state()
    got = driver.command_for(driver.state(NAMES, q, qd))
    assert got is not None and np.allclose(got, rnea(MODEL, q, qd, np.zeros(MODEL.nv)), atol=1e-9)
    return q


def one_hold(driver: Driver, before: int, hold: np.ndarray) -> bool:
    """Whether exactly one command after the first `before` is the hold command `hold`, once it
    came (a late answer to a state sent while active is no hold: it has the q̇ and q̈ terms)."""
    holds = lambda: [c for _, c in driver.commands[before:] if np.allclose(c, hold)]  # noqa: E731
    seen = lambda: f"the hold {hold}; after deactivate: {driver.commands[before:]}"  # noqa: E731
    driver.until(lambda: holds(), 30.0, seen)
    driver.settle()
    return len(holds()) == 1


@pytest.fixture
def managed(tmp_path):
    params = {
        "robot_description": URDF,
        "joint_states_timeout": 0.5,
        "diagnostics_period": 0.2,
        **FRICTION_OFF,
    }
    proc = start_node(tmp_path, params, module="rnea_ros.nodes.inverse_dynamics.lifecycle")
    driver = Driver("lifecycle_driver", dict(zip(NAMES, MODEL.effort_limit, strict=True)))
    try:
        yield driver, proc
    finally:
        driver.close()
        output = stop(proc)
        assert "Traceback" not in output, output


def test_states_through_the_lifecycle_services(managed) -> None:
    driver, proc = managed
    assert lifecycle_state(driver) == "unconfigured"
    assert joint_states_subscribed(driver, False, timeout=1.0)  # nothing exists before configure

    assert change(driver, Transition.TRANSITION_CONFIGURE) and lifecycle_state(driver) == "inactive"
    assert joint_states_subscribed(driver, True)
    q, qd = random_state()
    # the model comes once the kernels are loaded (seconds when busy)
    driver.diagnostics_until(lambda s: s["model_loaded"] == "True", START_TIMEOUT)
    assert driver.no_command_for(driver.state(NAMES, q, qd))  # inactive: merged, not commanded
    diag = driver.diagnostics_while_publishing(lambda: driver.state(NAMES, q, qd))
    assert diag["lifecycle_state"] == "inactive" and diag["model_loaded"] == "True"
    assert diag["level"] == 0 and diag["message"].startswith("inactive")

    assert change(driver, Transition.TRANSITION_ACTIVATE) and lifecycle_state(driver) == "active"
    q_last = commands_like_the_core(driver)
    assert driver.latest_diagnostics()["lifecycle_state"] == "active"

    # deactivate: one hold command, gravity alone at the last state, then silence
    driver.settle()
    before = len(driver.commands)
    assert change(driver, Transition.TRANSITION_DEACTIVATE) and lifecycle_state(driver) == "inactive"
    hold = np.clip(gravity_torques(MODEL, q_last), -MODEL.effort_limit, MODEL.effort_limit)
    assert one_hold(driver, before, hold)
    assert driver.no_command_for(driver.state(NAMES, *random_state()))

    assert change(driver, Transition.TRANSITION_ACTIVATE)  # commanding again
    commands_like_the_core(driver)

    assert change(driver, Transition.TRANSITION_DEACTIVATE)
    assert change(driver, Transition.TRANSITION_CLEANUP) and lifecycle_state(driver) == "unconfigured"
    assert joint_states_subscribed(driver, False)  # released
    driver.diagnostics.clear()
    driver.spin(0.6)
    assert not driver.diagnostics  # the diagnostics timer went with it

    # configured again from scratch (QoS override parameters already declared)
    assert change(driver, Transition.TRANSITION_CONFIGURE) and change(driver, Transition.TRANSITION_ACTIVATE)
    commands_like_the_core(driver)
    assert int(driver.latest_diagnostics()["commands_published"]) >= 1

    assert change(driver, Transition.TRANSITION_ACTIVE_SHUTDOWN)
    assert lifecycle_state(driver) == "finalized"
    assert joint_states_subscribed(driver, False)
    assert proc.poll() is None  # finalized, not ended: the process stays until told to stop


def test_configure_fails_with_a_bad_description_and_the_node_stays_unconfigured(tmp_path) -> None:
    lifecycle = "rnea_ros.nodes.inverse_dynamics.lifecycle"
    proc = start_node(tmp_path, {"robot_description": "<robot name='x'>"}, module=lifecycle)
    driver = Driver("lifecycle_bad_driver")
    try:
        assert not change(driver, Transition.TRANSITION_CONFIGURE)
        assert lifecycle_state(driver) == "unconfigured"
        assert joint_states_subscribed(driver, False, timeout=1.0)
    finally:
        driver.close()
        output = stop(proc)
    assert "configure failed: robot_description" in output and "Traceback" not in output, output


PANDA = example_urdf_path("panda").read_text()


@pytest.mark.parametrize(
    ("where", "params", "description", "said"),
    [
        ("parameter", {"robot_description": URDF, "tip_link": "panda_hand"}, None, "panda_hand"),
        ("topic", {"tip_link": "panda_hand"}, URDF, "panda_hand"),
        ("topic", {"joints": ["panda_joint1"]}, URDF, "panda_joint1"),
        ("topic", {}, None, "no robot_description on topic /robot_description within"),
    ],
    ids=["parameter_unknown_tip", "topic_unknown_tip", "topic_unknown_joint", "topic_silent"],
)
def test_configure_fails_without_a_model(tmp_path, where, params, description, said) -> None:
    """Whatever keeps the model from being built (a tip_link or joint the description lacks, from
    the parameter or the latched topic, or no description at all), configure fails saying why and
    the node stays unconfigured; it once answered "Transitioning successful" without a model."""
    lifecycle = "rnea_ros.nodes.inverse_dynamics.lifecycle"
    proc = start_node(tmp_path, params, module=lifecycle)
    driver = Driver(f"lifecycle_nomodel_driver_{where}")
    try:
        if description is not None:
            driver.description.publish(String(data=description))
        assert not change(driver, Transition.TRANSITION_CONFIGURE)
        assert lifecycle_state(driver) == "unconfigured"
        assert joint_states_subscribed(driver, False, timeout=1.0)
    finally:
        driver.close()
        output = stop(proc)
    assert "configure failed: " in output and said in output, output
    assert "Traceback" not in output, output


def test_configure_takes_the_latched_description_at_once(tmp_path) -> None:
    """From the topic, configure has the model when it answers: the first state after activate
    gets its command."""
    proc = start_node(tmp_path, {"joint_states_timeout": 0.5, **FRICTION_OFF},
                      module="rnea_ros.nodes.inverse_dynamics.lifecycle")  # fmt: skip
    driver = Driver("lifecycle_topic_driver", dict(zip(NAMES, MODEL.effort_limit, strict=True)))
    try:
        driver.description.publish(String(data=URDF))
        assert change(driver, Transition.TRANSITION_CONFIGURE)
        assert driver.latest_diagnostics()["model_loaded"] == "True"
        assert change(driver, Transition.TRANSITION_ACTIVATE)
        commands_like_the_core(driver)
    finally:
        driver.close()
        output = stop(proc)
    assert "Traceback" not in output, output


def test_the_hold_goes_out_in_effort_unit_as_every_command(tmp_path) -> None:
    """effort_unit current (G 100, K_t 0.1 N m/A): the cycle's commands and the hold on deactivate
    are both the clamped joint torque / (G K_t), in amps (the hold once went out in N m)."""
    model = RobotModel.from_urdf(PANDA, tip_link="panda_hand")
    names = list(model.joint_names)
    params = {
        "robot_description": PANDA, "tip_link": "panda_hand", "effort_unit": ["current"],
        "gearing.ratio": [100.0], "gearing.torque_constant": [0.1], "joint_states_timeout": 0.5,
        **FRICTION_OFF,
    }  # fmt: skip
    proc = start_node(tmp_path, params, module="rnea_ros.nodes.inverse_dynamics.lifecycle")
    amps = 1.0 / (100.0 * 0.1)
    driver = Driver("lifecycle_units_driver", dict(zip(names, model.effort_limit * amps, strict=True)))
    try:
        assert change(driver, Transition.TRANSITION_CONFIGURE)
        assert change(driver, Transition.TRANSITION_ACTIVATE)
        q = np.array([0.3, -0.6, 0.2, -2.2, 0.1, 1.7, 0.4])
        qd = np.array([0.1, -0.2, 0.3, 0.1, -0.1, 0.2, 0.0])
        got = driver.command_for(driver.state(names, q, qd))
        limit = model.effort_limit
        want = np.clip(rnea(model, q, qd, np.zeros(7)), -limit, limit) * amps
        assert got is not None and np.allclose(got, want, atol=1e-9)
        driver.spin(0.2)
        before = len(driver.commands)
        assert change(driver, Transition.TRANSITION_DEACTIVATE)
        end = time.monotonic() + 5
        while len(driver.commands) == before and time.monotonic() < end:
            driver.spin(0.05)
        assert len(driver.commands) == before + 1
        hold = np.array(driver.commands[-1][1])
        want_hold = np.clip(gravity_torques(model, q), -limit, limit) * amps
        assert np.allclose(hold, want_hold, atol=1e-9), (hold, want_hold)
        assert abs(hold[3]) < 3.0  # panda_joint4: about 2 A, not its ~20 N m sent as amps
    finally:
        driver.close()
        output = stop(proc)
    assert "Traceback" not in output, output


def ros2_command() -> list[str] | None:
    """The ros2 command of this venv (ROS 2 Jazzy's command-line wheels), or None."""
    if importlib.util.find_spec("ros2cli") is None:
        return None
    exe = shutil.which("ros2", path=os.path.dirname(sys.executable))
    return [exe] if exe else [sys.executable, "-m", "ros2cli.cli"]


def ros2(*args: str) -> str:
    """Run `ros2 ...` (no daemon), asking again while discovery is still under way."""
    command = ros2_command()
    assert command is not None
    out = ""
    for _ in range(5):
        done = subprocess.run(
            [*command, *args, "--no-daemon", "--spin-time", "3"], capture_output=True, text=True, timeout=60
        )
        out = done.stdout + done.stderr
        if done.returncode == 0:
            return out
        time.sleep(0.5)
    raise AssertionError(f"ros2 {' '.join(args)} failed: {out}")


@pytest.mark.jazzy_tools  # ../shared/ros2-wheels: built for Jazzy
def test_ros2_lifecycle_set_drives_it(request) -> None:
    if ros2_command() is None:  # decided before the node starts
        if WHEELS.exists() and ros_distro() == "jazzy":
            pytest.fail(f"the ros2 command is missing: install {WHEELS} (install.sh .venv/bin/python)")
        pytest.skip(f"no ROS 2 command-line wheels for {ros_distro()} here (../shared/ros2-wheels: Jazzy)")
    driver, _ = request.getfixturevalue("managed")
    assert "unconfigured" in ros2("lifecycle", "get", NODE)
    assert "Transitioning successful" in ros2("lifecycle", "set", NODE, "configure")
    assert "inactive" in ros2("lifecycle", "get", NODE)
    assert "Transitioning successful" in ros2("lifecycle", "set", NODE, "activate")
    assert "active" in ros2("lifecycle", "get", NODE)
    q_last = commands_like_the_core(driver)
    driver.settle()
    before = len(driver.commands)
    assert "Transitioning successful" in ros2("lifecycle", "set", NODE, "deactivate")
    hold = np.clip(gravity_torques(MODEL, q_last), -MODEL.effort_limit, MODEL.effort_limit)
    assert one_hold(driver, before, hold)
    assert driver.no_command_for(driver.state(NAMES, *random_state()), wait=0.6)
    assert "Transitioning successful" in ros2("lifecycle", "set", NODE, "cleanup")
    assert lifecycle_state(driver) == "unconfigured"
