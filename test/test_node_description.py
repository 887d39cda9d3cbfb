"""robot_description over the transient-local topic: late arrival, replacement, broken input,
mimic joints, and a node started with an invalid parameter file."""

from __future__ import annotations

import numpy as np
from std_msgs.msg import String

from rnea_ros import Friction, RobotModel, friction_torques, rnea
from rnea_ros.robots import example_urdf_path

from .rosgraph import Driver, start_node, stop

PANDA = example_urdf_path("panda").read_text()
UR5 = example_urdf_path("ur5").read_text()


def feedforward(model: RobotModel, q, qd) -> np.ndarray:
    return rnea(model, q, qd, np.zeros(model.nv)) + friction_torques(Friction.from_model(model), qd)


def test_late_description_replacement_broken_one_and_mimic_joints(tmp_path) -> None:
    proc = start_node(tmp_path, {"joint_states_timeout": 1.0})
    bounds = {}
    for text in (PANDA, UR5):
        model = RobotModel.from_urdf(text)
        bounds.update(zip(model.joint_names, model.effort_limit, strict=True))
    driver = Driver("description_driver", bounds)
    try:
        ur5 = RobotModel.from_urdf(UR5)
        q, qd = np.linspace(-1, 1, ur5.nv), np.linspace(0.5, -0.5, ur5.nv)
        driver.spin(1.0)  # the node is up and has no model: no command
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
        driver.spin(0.5)
        got = driver.command_for(driver.state(names, qp[:-1], qdp[:-1]))
        assert got is not None and np.allclose(got, feedforward(panda, qp, qdp), atol=1e-9)
        diag = driver.latest_diagnostics()
        assert "several root links" in diag["last_model_error"] and diag["model"].startswith("panda")
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
