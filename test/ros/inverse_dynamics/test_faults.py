"""Injected faults: the joint_states publisher killed and restarted, robot_description broken then
good, the trajectory publisher vanishing mid-trajectory, the node killed and restarted. After each,
the node commands correctly again within one message of good input."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import numpy as np
from std_msgs.msg import String
from test_reliability import BOUNDS, NAMES, PARAMS, PUBLISHER, QD, URDF, Q, expected

from rnea_ros import RobotModel, rnea
from rnea_ros.ros.processes import die_with_parent
from rnea_ros.testing.rosgraph import START_TIMEOUT, Driver, start_node, stop


def _publisher() -> subprocess.Popen:
    args = [f"{n}={q}:{qd}" for n, q, qd in zip(NAMES, Q, QD, strict=True)]
    return subprocess.Popen([sys.executable, str(PUBLISHER), "200", *args], preexec_fn=die_with_parent)


def _first_answer_after(driver: Driver, since: float, timeout: float = START_TIMEOUT) -> np.ndarray:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        n = len(driver.joint_efforts)
        driver.spin(0.05)
        for k in range(n, len(driver.joint_efforts)):
            if driver.joint_efforts_times[k] > since:
                return np.array(driver.joint_efforts[k].effort)
    raise TimeoutError("no command after the fault")


def _log_count(proc: subprocess.Popen, text: str) -> int:
    """How many times the node's log holds `text`."""
    proc.log.flush()  # type: ignore[attr-defined]
    return Path(proc.log.name).read_text().count(text)  # type: ignore[attr-defined]


def _until_logged(driver: Driver, proc: subprocess.Popen, text: str, count: int) -> None:
    """Until the node's log holds `text` `count` times: it took the input sent before."""
    driver.until(lambda: _log_count(proc, text) >= count, 60.0, f"{count} x {text!r} in the node's log")


def _until_answer(driver: Driver, want: np.ndarray) -> None:
    """Until an answer is `want` (the node holds a state it reaches by itself)."""
    end = time.monotonic() + 60.0
    got = None
    while time.monotonic() < end:
        got = _first_answer_after(driver, time.monotonic())
        if np.allclose(got, want, atol=1e-9):
            return
    raise AssertionError(f"no answer {want} within 60 s; the last {got}")


def test_faults_publisher_restart_description_swap_trajectory_vanishing_node_restart(tmp_path) -> None:
    proc = start_node(tmp_path, {**PARAMS, "robot_description": ""})
    driver = Driver("fault_driver", BOUNDS)
    publisher = None
    try:
        driver.description.publish(String(data=URDF))
        publisher = _publisher()
        assert np.allclose(_first_answer_after(driver, 0.0), expected(), atol=1e-9)

        # the joint_states publisher is killed, then restarted
        publisher.kill()
        publisher.wait(5)
        # silence: nothing published without input (the answers in flight came first)
        driver.until(lambda: time.monotonic() - driver.joint_efforts_times[-1] > 0.3, 30.0, "silence")
        restarted = time.monotonic()
        publisher = _publisher()
        assert np.allclose(_first_answer_after(driver, restarted), expected(), atol=1e-9)

        # robot_description replaced by a broken one, then by a good one (with a payload)
        rejected, taken = "rejected robot description from topic", "from topic robot_description:"
        driver.description.publish(String(data=URDF.replace("<robot", "<robo", 1)))
        _until_logged(driver, proc, rejected, 1)
        assert np.allclose(_first_answer_after(driver, time.monotonic()), expected(), atol=1e-9)
        heavier = URDF.replace('<mass value="0.73"/>', '<mass value="1.73"/>', 1)
        assert heavier != URDF
        models = _log_count(proc, taken)
        driver.description.publish(String(data=heavier))
        _until_logged(driver, proc, taken, models + 1)
        want = rnea(RobotModel.from_urdf(heavier, tip_link="panda_hand"), Q, QD, np.zeros(7))
        assert np.allclose(
            _first_answer_after(driver, time.monotonic()),
            want,  # FRICTION_OFF: no friction term
        )
        driver.description.publish(String(data=URDF))
        _until_logged(driver, proc, taken, models + 2)

        # a trajectory whose publisher vanishes: the node keeps sampling it, then holds the end
        traj = subprocess.run(
            [sys.executable, "-c", _TRAJECTORY_ONCE], timeout=60, capture_output=True, text=True
        )
        assert traj.returncode == 0, traj.stderr
        _until_answer(driver, expected())  # its end held (0.8 s after the node took it)

        # the node is killed and restarted while joint_states keep coming
        proc.kill()
        proc.wait(5)
        proc = start_node(tmp_path, PARAMS)
        _until_logged(driver, proc, "from parameter robot_description:", 1)  # the new node's model
        restarted = time.monotonic()  # answers of the old one came long before
        assert np.allclose(_first_answer_after(driver, restarted), expected(), atol=1e-9)
    finally:
        if publisher is not None:
            publisher.kill()
            publisher.wait(5)
        driver.close()
        output = stop(proc)
    assert "Traceback" not in output


# Publishes one 0.8 s trajectory that ends at the current state, then exits.
_TRAJECTORY_ONCE = f"""
import time, rclpy
from rclpy.node import Node
from builtin_interfaces.msg import Duration
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint
rclpy.init()
node = Node("vanishing_trajectory_source")
pub = node.create_publisher(JointTrajectory, "/inverse_dynamics/joint_trajectory", 10)
end = time.monotonic() + 5
while pub.get_subscription_count() == 0 and time.monotonic() < end:
    time.sleep(0.05)
msg = JointTrajectory(joint_names={NAMES!r})
msg.points = [JointTrajectoryPoint(positions={[float(x) for x in Q]!r}, velocities=[0.0] * 7,
                                   time_from_start=Duration(sec=0, nanosec=800_000_000))]
pub.publish(msg)
time.sleep(0.3)
"""
