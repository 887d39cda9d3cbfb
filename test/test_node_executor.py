"""rnea_ros.node.common.spin_events: the opt-in EventsExecutor (RNEA_ROS_EXECUTOR=events; README
"Executor") serves the node like the default executor. Its own module: the node of test_node.py's
module fixture has the same name and would answer instead."""

from __future__ import annotations

import numpy as np
import pytest

from rnea_ros import RobotModel, rnea
from rnea_ros.robots import example_urdf_path
from rnea_ros.testing.rosgraph import FRICTION_OFF, Driver, start_node, stop

pytestmark = pytest.mark.ros

URDF = example_urdf_path("panda").read_text()
MODEL = RobotModel.from_urdf(URDF, tip_link="panda_hand")
NAMES = list(MODEL.joint_names)
RNG = np.random.default_rng(5)


def expected(q, qd, gravity=(0, 0, -9.81)) -> np.ndarray:
    return rnea(MODEL, q, qd, np.zeros(MODEL.nv), gravity=gravity)


def test_opt_in_events_executor_serves_states_timers_and_services(tmp_path, monkeypatch) -> None:
    """RNEA_ROS_EXECUTOR=events (README "Executor"): the same commands, /diagnostics (a timer)
    and set_parameters (a service) as on the default executor."""
    monkeypatch.setenv("RNEA_ROS_EXECUTOR", "events")
    params = {
        "robot_description": URDF,
        "tip_link": "panda_hand",
        "joint_states_timeout": 0.5,
        **FRICTION_OFF,
    }
    proc = start_node(tmp_path, params)
    driver = Driver("test_events_driver", dict(zip(NAMES, MODEL.effort_limit, strict=True)))
    try:
        q, qd = RNG.uniform(-1, 1, MODEL.nv), RNG.uniform(-1, 1, MODEL.nv)
        driver.wait_for_commands(lambda: driver.state(NAMES, q, qd))
        got = driver.command_for(driver.state(NAMES, q, qd))
        assert got is not None and np.allclose(got, expected(q, qd), rtol=0, atol=1e-9)
        assert all(r.successful for r in driver.set_parameters({"gravity": [0.0, 0.0, -3.71]}))
        got = driver.command_for(driver.state(NAMES, q, qd))
        assert got is not None and np.allclose(got, expected(q, qd, gravity=(0, 0, -3.71)), atol=1e-9)
        assert driver.latest_diagnostics()["commands_published"]
    finally:
        driver.close()
        output = stop(proc)
    assert "Traceback" not in output, output
    assert "spinning rclpy's EventsExecutor" in output, output  # this node answered, on that executor
