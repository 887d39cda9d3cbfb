"""The real rqt_reconfigure (../shared/rqt-wheels) tunes the running node through its own widgets:
one joint's kp typed into its slider's line edit, the compensate.gravity check box clicked; after
each, the node's next command is the core's effort law (rnea_ros.control.effort_law) with the new
values, and only that joint's feedback (or the gravity term) changed. The last screenshot is
docs/rqt_reconfigure.png (RNEA_DOCS_SCREENSHOTS=1 copies it there)."""

from __future__ import annotations

import time

import numpy as np
import pytest
from rcl_interfaces.srv import GetParameters
from rclpy.parameter import parameter_value_to_python
from rqt_session import RqtSession, require_rqt, save_for_docs
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from rnea_ros import RobotModel, gravity_torques
from rnea_ros.control.effort_law import EffortLaw, Efforts, compute_efforts
from rnea_ros.model.example_robots import example_urdf_path
from rnea_ros.testing.rosgraph import NODE, Driver, rclpy, start_node, stop

pytestmark = pytest.mark.jazzy_tools  # ../shared/rqt-wheels: built for Jazzy

PANDA = example_urdf_path("panda").read_text()
MODEL = RobotModel.from_urdf(PANDA, tip_link="panda_hand")
NAMES = list(MODEL.joint_names)
TERMS = frozenset({"gravity", "coriolis", "inertia", "wrench"})  # compensate.friction off
KP, NEW_KP, JOINT = 20.0, 150.0, 3  # panda_joint4's kp: 20 -> 150 N m/rad
Q = np.array([0.1, -0.4, 0.2, -2.0, 0.1, 1.6, 0.3])
TARGET = Q + np.array([0.01, -0.02, 0.015, 0.02, -0.01, 0.02, 0.01])  # a hold point: PD on this error
ZERO = np.zeros(MODEL.nv)


def law_command(kp: np.ndarray, terms: frozenset[str]) -> np.ndarray:
    """The core's effort law at the test's state, holding TARGET."""
    law = EffortLaw(gravity=(0.0, 0.0, -9.81), compensate=terms, kp=kp, kd=0.0, max_phase_lag=0.0)
    driven = np.ones(MODEL.nv, dtype=np.int64)
    return compute_efforts(Efforts(MODEL, law), Q, ZERO, (TARGET, ZERO, ZERO), driven=driven).total.copy()


def command_becomes(d: Driver, want: np.ndarray, ceiling: float = 60.0) -> np.ndarray:
    """The node's command at the test's state, once it is `want` (the parameter set is
    asynchronous: the GUI's Return sends it); fails with the last one seen."""
    end, got = time.monotonic() + ceiling, None
    while time.monotonic() < end:
        got = d.command_for(d.state(NAMES, Q, ZERO), timeout=1.0)
        if got is not None and np.allclose(got, want, rtol=0.0, atol=1e-9):
            return got
        d.spin(0.2)
    raise AssertionError(f"the node's command {got} never became {want}")


def parameters(d: Driver, names: list[str]) -> dict:
    client = d.node.create_client(GetParameters, f"{NODE}/get_parameters")
    assert client.wait_for_service(20.0)
    future = client.call_async(GetParameters.Request(names=names))
    end = time.monotonic() + 20.0
    while not future.done() and time.monotonic() < end:
        rclpy.spin_once(d.node, timeout_sec=0.05)
    assert future.done(), "get_parameters did not answer"
    return {n: parameter_value_to_python(v) for n, v in zip(names, future.result().values, strict=True)}


def test_rqt_reconfigure_tunes_one_joints_kp_and_a_compensate_switch(tmp_path) -> None:
    require_rqt()
    params = {
        "robot_description": PANDA,
        "tip_link": "panda_hand",
        "feedback.kp": [KP],
        "feedback.kd": [0.0],
        "feedback.max_phase_lag": 0.0,  # the gains as given: this driver's states are not a loop
        "compensate.friction": False,
    }
    proc = start_node(tmp_path, params)
    d = Driver("rqt_test_driver", dict(zip(NAMES, MODEL.effort_limit, strict=True)))
    png = tmp_path / "rqt_reconfigure.png"
    gui = None
    try:
        d.wait_for_commands(lambda: d.state(NAMES, Q, ZERO), timeout=120.0)
        hold = JointTrajectory(joint_names=NAMES, points=[JointTrajectoryPoint(positions=TARGET.tolist())])
        d.node.create_publisher(JointTrajectory, f"{NODE}/joint_trajectory", 10).publish(hold)
        kp = np.full(MODEL.nv, KP)
        before = command_becomes(d, law_command(kp, TERMS))

        steps = [
            {"double": f"feedback.{NAMES[JOINT]}.kp", "value": f"{NEW_KP:g}"},
            {"bool": "compensate.gravity", "checked": False},
        ]
        gui = RqtSession(tmp_path, NODE, steps, png, filter_key="feedback.")
        gui.step_done(0)
        kp[JOINT] = NEW_KP
        after_kp = command_becomes(d, law_command(kp, TERMS))
        change = np.zeros(MODEL.nv)
        change[JOINT] = (NEW_KP - KP) * (TARGET - Q)[JOINT]  # that joint's PD, nothing else
        assert np.allclose(after_kp - before, change, rtol=0.0, atol=1e-9)
        # the array shows the same values (one view of them)
        assert parameters(d, ["feedback.kp"])["feedback.kp"] == kp.tolist()
        gui.ack(0)

        gui.step_done(1)
        after_gravity = command_becomes(d, law_command(kp, TERMS - {"gravity"}))
        assert np.allclose(after_gravity - after_kp, -gravity_torques(MODEL, Q), rtol=0.0, atol=1e-9)
        assert parameters(d, ["compensate.gravity"])["compensate.gravity"] is False
        gui.ack(1)
        out = gui.finish()
    finally:
        if gui is not None:
            gui.close()
        d.close()
        output = stop(proc)
    assert "typed 150 into feedback.panda_joint4.kp (range 0.0..8700.0, slider shown)" in out, out
    assert png.stat().st_size > 10_000
    save_for_docs(png, "rqt_reconfigure.png")
    assert "Traceback" not in output and "parameters rejected" not in output, output[-4000:]
