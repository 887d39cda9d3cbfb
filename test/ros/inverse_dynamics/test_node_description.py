"""robot_description over the transient-local topic: late arrival, replacement, broken input,
mimic joints, and a node started with an invalid parameter file."""

from __future__ import annotations

import numpy as np
from builtin_interfaces.msg import Duration
from std_msgs.msg import String
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from rnea_ros import RobotModel, rnea
from rnea_ros.model.example_robots import example_urdf_path
from rnea_ros.testing.rosgraph import FRICTION_OFF, Driver, output_of, start_node, stop, wait_for_output

PANDA = example_urdf_path("panda").read_text()
UR5 = example_urdf_path("ur5").read_text()
FULL = RobotModel.from_urdf(PANDA)
TIMEOUT = 0.5
WARN, OK = 1, 0


def feedforward(model: RobotModel, q, qd) -> np.ndarray:
    return rnea(model, q, qd, np.zeros(model.nv))  # the node runs with FRICTION_OFF


def test_late_description_replacement_broken_one_and_mimic_joints(tmp_path) -> None:
    proc = start_node(tmp_path, {"joint_states_timeout": 1.0, **FRICTION_OFF})
    bounds = {}
    for text in (PANDA, UR5):
        model = RobotModel.from_urdf(text)
        bounds.update(zip(model.joint_names, model.effort_limit, strict=True))
    driver = Driver("description_driver", bounds)
    try:
        ur5 = RobotModel.from_urdf(UR5)
        q, qd = np.linspace(-1, 1, ur5.nv), np.linspace(0.5, -0.5, ur5.nv)
        wait_for_output(proc, "waiting for a URDF on topic robot_description")  # up, no model: no command
        assert driver.no_command_for(driver.state(ur5.joint_names, q, qd), wait=0.5)
        driver.description.publish(String(data=UR5))  # arrives after start-up
        got = driver.wait_for_commands(lambda: driver.state(ur5.joint_names, q, qd))
        assert np.allclose(got, feedforward(ur5, q, qd), atol=1e-9)
        assert driver.latest_diagnostics()["model"].startswith("ur5")

        # replaced at runtime by the whole Panda tree; the finger mimic joint follows its leader
        panda = RobotModel.from_urdf(PANDA)
        driver.description.publish(String(data=PANDA))
        names = [n for n in panda.joint_names if n != "panda_finger_joint2"]
        qp = np.linspace(0.2, 0.8, panda.nv)
        qp[-1] = qp[-2]
        qdp = np.linspace(-0.3, 0.3, panda.nv)
        qdp[-1] = qdp[-2]
        got = driver.wait_for_commands(lambda: driver.state(names, qp[:-1], qdp[:-1]))
        assert got.shape == (panda.nv,)
        assert np.allclose(got, feedforward(panda, qp, qdp), atol=1e-9)

        # a broken description is logged and the Panda keeps running
        driver.description.publish(
            String(data="<robot name='broken'><link name='a'/><link name='b'/></robot>")
        )
        diag = driver.diagnostics_until(lambda s: "several root links" in s.get("last_model_error", ""))
        assert diag["model"].startswith("panda")
        got = driver.command_for(driver.state(names, qp[:-1], qdp[:-1]))
        assert got is not None and np.allclose(got, feedforward(panda, qp, qdp), atol=1e-9)
    finally:
        driver.close()
        output = stop(proc)
    assert "rejected robot description from topic robot_description: several root links" in output
    assert "Traceback" not in output


def test_invalid_parameter_file_fails_at_start_naming_the_parameter(tmp_path) -> None:
    proc = start_node(tmp_path, {"gravity": [0.0, -9.81]})
    try:
        assert proc.wait(30) == 2
    finally:
        output = stop(proc)
    assert "invalid parameter gravity: must have 3 values" in output


def test_model_swap_under_a_running_trajectory_and_broken_descriptions(tmp_path) -> None:
    """The sequence that ended the process: a larger model replaces the current one, then a
    trajectory and joint_states arrive. Rejected descriptions warn for one period."""
    proc = start_node(tmp_path, {"joint_states_timeout": TIMEOUT, **FRICTION_OFF})
    d = Driver("swap_driver", dict(zip(FULL.joint_names, FULL.effort_limit, strict=True)))
    try:
        small = PANDA.replace("panda_joint7", "renamed7")  # 8 joints... then the whole 9
        names6 = list(RobotModel.from_urdf(UR5).joint_names)
        d.description.publish(String(data=UR5))
        d.wait_for_commands(lambda: d.state(names6, np.zeros(6), np.zeros(6)))
        trajectory = JointTrajectory(joint_names=names6)
        trajectory.points = [
            JointTrajectoryPoint(positions=[0.1] * 6, time_from_start=Duration(sec=5)),
        ]
        d.node.create_publisher(JointTrajectory, "/inverse_dynamics/joint_trajectory", 10).publish(trajectory)
        d.spin(0.3)
        for text in (PANDA, "<robot", small, PANDA):
            d.description.publish(String(data=text))
            d.spin(0.3)
            traj_pub = d.node.create_publisher(JointTrajectory, "/inverse_dynamics/joint_trajectory", 10)
            big = JointTrajectory(joint_names=list(FULL.joint_names))
            big.points = [JointTrajectoryPoint(positions=[0.2] * 9, time_from_start=Duration(sec=3))]
            traj_pub.publish(big)
            traj_pub.publish(trajectory)  # for the previous model: rejected, not fatal
            d.spin(0.3)
            d.joint_states.publish(d.state(names6, np.zeros(6), np.zeros(6)))
        assert proc.poll() is None
        q, qd = np.linspace(-0.5, 0.5, 9), np.zeros(9)
        got = d.wait_for_commands(lambda: d.state(FULL.joint_names, q, qd))
        assert got is not None
        # the trajectory sent after the last swap runs: its desired state feeds M q̈ and c, the
        # measured one the rest; at rest with kp = kd = 0 the command stays finite and bounded
        flowing = lambda: d.state(FULL.joint_names, q, qd)  # noqa: E731
        status = d.diagnostics_while_publishing(flowing)
        assert status["model"].startswith("panda (9 joints")
        d.description.publish(String(data="<robot"))
        d.until(lambda: "not valid XML" in output_of(proc), 60.0, "the broken description taken")
        status = d.diagnostics_while_publishing(flowing)
        assert status["level"] == WARN and "previous model still commands" in status["message"]
        assert "not valid XML" in status["last_model_error"]
        rejected = output_of(proc).count("rejected robot description")
        d.description.publish(String(data=""))  # an empty description is rejected too
        d.until(lambda: output_of(proc).count("rejected robot description") > rejected, 60.0, "the empty one")
        empty = JointTrajectory(joint_names=list(FULL.joint_names))  # cancel the trajectory
        d.node.create_publisher(JointTrajectory, "/inverse_dynamics/joint_trajectory", 10).publish(empty)
        # (another topic than joint_states: taken when the node gets to it, then the answers are exact)
        want = feedforward(FULL, q, qd)
        answer = lambda: d.command_for(d.state(FULL.joint_names, q, qd))  # noqa: E731
        exact = lambda got: got is not None and np.allclose(got, want, atol=1e-9)  # noqa: E731
        d.until(lambda: exact(answer()), 60.0, "the trajectory cancelled")
        d.diagnostics_while_publishing(flowing)  # the period of the rejection
        later = d.diagnostics_while_publishing(flowing)  # the warning lasted one period
        assert later["level"] == OK, later
    finally:
        d.close()
        output = stop(proc)
    assert proc.returncode in (0, -2)
    assert "Traceback" not in output, output
    assert "the running trajectory is cancelled" in output


def test_a_swap_to_a_robot_whose_joints_are_not_published_says_missing_joints(tmp_path) -> None:
    """Dropped before any model ("no model loaded"), then the UR5, then the Panda while only the
    UR5's joints keep coming: /diagnostics and the log name the Panda joints that are missing and
    the joints that do come (the ERROR once read "no model loaded", nothing was logged)."""
    proc = start_node(tmp_path, {"joint_states_timeout": 0.2, "diagnostics_period": 0.2, **FRICTION_OFF})
    ur5 = RobotModel.from_urdf(UR5)
    names = list(ur5.joint_names)
    bounds = dict(zip(names, ur5.effort_limit, strict=True)) | dict(
        zip(FULL.joint_names, FULL.effort_limit, strict=True)
    )
    d = Driver("missing_joints_driver", bounds)
    q = np.linspace(-1.0, 1.0, ur5.nv)
    try:
        for _ in range(5):  # before any model: dropped, "no model loaded"
            d.joint_states.publish(d.state(names, q))
            d.spin(0.05)
        d.description.publish(String(data=UR5))
        d.wait_for_commands(lambda: d.state(names, q), timeout=120.0)  # a loaded machine starts slowly
        d.description.publish(String(data=PANDA))
        diag: dict = {}
        for _ in range(50):
            diag = d.diagnostics_while_publishing(lambda: d.state(names, q))
            if diag["level"] == 2 and diag["model"].startswith("panda"):
                break
        assert diag["level"] == 2 and diag["model_loaded"] == "True", diag
        message = diag["message"]
        assert "no model loaded" not in message, message
        assert "no recent joint_states for panda_joint1, panda_joint2" in message, message
        assert "the last joint_states without a commanded joint named shoulder_pan_joint" in message
    finally:
        d.close()
        output = stop(proc)
    assert "no recent joint_states for panda_joint1" in output, output[-3000:]
    assert "Traceback" not in output
