"""How the node spins (README "Executor"): under each RNEA_ROS_EXECUTOR (the wait-set loop, the
default when unset; rclpy's default executor; the EventsExecutor) the real node process answers
joint_states with the core's command, publishes /diagnostics (a timer), answers set_parameters
(a service) and loads a robot_description from the topic. Its own module: the node of
test_node.py's module fixture has the same name and would answer instead."""

from __future__ import annotations

import numpy as np
import pytest
from std_msgs.msg import String

from rnea_ros import RobotModel, rnea
from rnea_ros.model.example_robots import example_urdf_path
from rnea_ros.testing.rosgraph import FRICTION_OFF, Driver, start_node, stop

URDF = example_urdf_path("panda").read_text()
MODEL = RobotModel.from_urdf(URDF, tip_link="panda_hand")
NAMES = list(MODEL.joint_names)
RNG = np.random.default_rng(5)
LOG_LINE = {
    "": "spinning the wait-set loop",
    "waitset": "spinning the wait-set loop",
    "default": "spinning rclpy's default executor",
    "events": "spinning rclpy's EventsExecutor",
}


def expected(q, qd, gravity=(0, 0, -9.81)) -> np.ndarray:
    return rnea(MODEL, q, qd, np.zeros(MODEL.nv), gravity=gravity)


@pytest.mark.parametrize("executor", ["", "waitset", "default", "events"])
def test_every_executor_serves_states_timers_services_and_the_description_topic(
    tmp_path, monkeypatch, executor: str
) -> None:
    """The same commands (1e-9 against the core), /diagnostics and set_parameters answers on
    every executor; the model comes from the latched robot_description topic, whose subscription
    the node creates while starting."""
    monkeypatch.setenv("RNEA_ROS_EXECUTOR", executor)
    params = {"tip_link": "panda_hand", "joint_states_timeout": 0.5, **FRICTION_OFF}
    proc = start_node(tmp_path, params)
    bounds = dict(zip(NAMES, MODEL.effort_limit, strict=True))
    driver = Driver(f"test_executor_driver_{executor or 'unset'}", bounds)
    try:
        driver.description.publish(String(data=URDF))
        q, qd = RNG.uniform(-1, 1, MODEL.nv), RNG.uniform(-1, 1, MODEL.nv)
        driver.wait_for_commands(lambda: driver.state(NAMES, q, qd), timeout=60.0)
        got = driver.command_for(driver.state(NAMES, q, qd))
        assert got is not None and np.allclose(got, expected(q, qd), rtol=0, atol=1e-9)
        assert all(r.successful for r in driver.set_parameters({"gravity": [0.0, 0.0, -3.71]}))
        got = driver.command_for(driver.state(NAMES, q, qd))
        assert got is not None and np.allclose(got, expected(q, qd, gravity=(0, 0, -3.71)), atol=1e-9)
        rejected = driver.set_parameters({"effort_limit_scale": -1.0})
        assert not rejected[0].successful and "effort_limit_scale" in rejected[0].reason
        status = driver.latest_diagnostics()
        assert int(status["commands_published"]) >= 2
        assert proc.poll() is None
    finally:
        driver.close()
        output = stop(proc)
    assert "Traceback" not in output, output
    assert LOG_LINE[executor] in output, output  # this node answered, on that executor
