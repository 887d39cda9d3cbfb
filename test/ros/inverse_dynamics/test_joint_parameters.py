"""Per-joint parameters (rnea_ros.ros.per_joint) on the running node: feedback.<joint>.kp/kd,
friction.<joint>.viscous/coulomb and armature.<joint>, declared once the model is known with a
range each (rqt_reconfigure: a slider), one view with the arrays feedback.kp/kd and
friction.viscous/coulomb; re-declared for a new model; the old `armature` array refused with the
new form; a one-value `contacts.types: point` taken as the table allows."""

from __future__ import annotations

import time

import pytest
from rcl_interfaces.srv import DescribeParameters, GetParameters, ListParameters
from rclpy.parameter import parameter_value_to_python
from std_msgs.msg import String

from rnea_ros import RobotModel
from rnea_ros.model.example_robots import example_urdf_path
from rnea_ros.testing.rosgraph import NODE, Driver, start_node, stop

PANDA = example_urdf_path("panda").read_text()
UR5 = example_urdf_path("ur5").read_text()
KINOVA = example_urdf_path("kinova_description/robots/kinova.urdf").read_text()
MODEL = RobotModel.from_urdf(PANDA, tip_link="panda_hand")
NAMES = list(MODEL.joint_names)
KINDS = ("feedback.{}.kp", "feedback.{}.kd", "friction.{}.viscous", "friction.{}.coulomb", "armature.{}")
# each kind's upper bound per unit of the joint's URDF effort limit (rnea_ros.ros.per_joint.JointKind)
PER_LIMIT = {"feedback.{}.kp": 100.0, "feedback.{}.kd": 10.0, "friction.{}.viscous": 1.0,
             "friction.{}.coulomb": 1.0, "armature.{}": 0.1}  # fmt: skip


def call(d: Driver, srv, name: str, request, timeout: float = 20.0):
    client = d.node.create_client(srv, f"{NODE}/{name}")
    assert client.wait_for_service(timeout), name
    future = client.call_async(request)
    end = time.monotonic() + timeout
    while not future.done() and time.monotonic() < end:
        d.spin(0.02)
    assert future.done(), f"{name} did not answer"
    d.node.destroy_client(client)
    return future.result()


def names(d: Driver) -> list[str]:
    return list(call(d, ListParameters, "list_parameters", ListParameters.Request()).result.names)


def get(d: Driver, *params: str) -> dict:
    values = call(d, GetParameters, "get_parameters", GetParameters.Request(names=list(params))).values
    return {n: parameter_value_to_python(v) for n, v in zip(params, values, strict=True)}


def joint_names_declared(d: Driver, joints: list[str]) -> bool:
    declared = set(names(d))
    return all(kind.format(j) in declared for kind in KINDS for j in joints)


def wait_declared(d: Driver, joints: list[str], timeout: float = 60.0) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if joint_names_declared(d, joints):
            return
        d.spin(0.2)
    raise AssertionError(f"per-joint parameters of {joints} not declared: {names(d)}")


def test_declared_with_ranges_one_view_with_the_arrays(tmp_path) -> None:
    params = {
        "robot_description": PANDA,
        "tip_link": "panda_hand",
        "feedback": {"kp": [20.0], "panda_joint2": {"kp": 50.0}},  # the joint's value wins
        "armature": {"panda_joint1": 0.3},
        "contacts": {"types": "point"},  # one value, as the table allows (was: exit 2, "must be a list")
    }
    proc = start_node(tmp_path, params)
    d = Driver("joint_params_driver")
    try:
        wait_declared(d, NAMES)
        declared = set(names(d))
        assert not any("finger" in n for n in declared)  # locked by tip_link: no output joint
        every = [kind.format(j) for kind in KINDS for j in NAMES]
        descriptors = call(
            d, DescribeParameters, "describe_parameters", DescribeParameters.Request(names=every)
        ).descriptors
        for name, descriptor in zip(every, descriptors, strict=True):  # a slider each
            kind, joint = next((k, j) for k in KINDS for j in NAMES if k.format(j) == name)
            (span,) = descriptor.floating_point_range
            limit = MODEL.effort_limit[NAMES.index(joint)]
            assert span.from_value == 0.0 and span.to_value == pytest.approx(PER_LIMIT[kind] * limit), name
            assert descriptor.type == 3 and not descriptor.read_only, name  # a double, tunable
        got = get(d, "feedback.kp", "feedback.panda_joint2.kp", "feedback.panda_joint7.kp",
                  "armature.panda_joint1", "armature.panda_joint2", "friction.panda_joint3.viscous",
                  "friction.viscous", "contacts.types")  # fmt: skip
        assert got["feedback.kp"] == [20.0, 50.0, 20.0, 20.0, 20.0, 20.0, 20.0]  # the array shows them
        assert got["feedback.panda_joint2.kp"] == 50.0 and got["feedback.panda_joint7.kp"] == 20.0
        assert got["armature.panda_joint1"] == 0.3 and got["armature.panda_joint2"] == 0.0
        assert got["friction.panda_joint3.viscous"] == MODEL.damping[2] and got["friction.viscous"] == [-1.0]
        assert got["contacts.types"] == ["point"]

        # a joint's value (an integer, as `ros2 param set` types it) rewrites the array ...
        assert d.set_parameters({"feedback.panda_joint3.kp": 70})[0].successful
        got = get(d, "feedback.kp", "feedback.panda_joint3.kp")
        assert got["feedback.kp"] == [20.0, 50.0, 70.0, 20.0, 20.0, 20.0, 20.0]
        assert got["feedback.panda_joint3.kp"] == 70.0
        # ... the array sets every joint's ([-1]: the URDF's friction again) ...
        assert d.set_parameters({"feedback.kp": [5.0]})[0].successful
        assert d.set_parameters({"friction.panda_joint5.coulomb": 0.4})[0].successful
        assert get(d, "friction.coulomb")["friction.coulomb"] == [0.0, 0.0, 0.0, 0.0, 0.4, 0.0, 0.0]
        assert d.set_parameters({"friction.coulomb": [-1.0]})[0].successful
        got = get(d, *(f"feedback.{j}.kp" for j in NAMES), "friction.panda_joint5.coulomb", "feedback.kp")
        assert all(got[f"feedback.{j}.kp"] == 5.0 for j in NAMES) and got["feedback.kp"] == [5.0]
        assert got["friction.panda_joint5.coulomb"] == MODEL.coulomb[4]
        # ... and a value out of a joint's range is refused naming it, nothing changes
        result = d.set_parameters({"feedback.panda_joint7.kp": 1300.0})[0]  # > 100 x 12 N m
        assert not result.successful and "feedback.panda_joint7.kp" in result.reason, result.reason
        got = get(d, "feedback.panda_joint7.kp", "feedback.kp")
        assert got == {"feedback.panda_joint7.kp": 5.0, "feedback.kp": [5.0]}
    finally:
        d.close()
        output = stop(proc)
    assert "Traceback" not in output and "unknown parameter" not in output, output[-4000:]


def test_a_new_model_redeclares_them_for_its_joints(tmp_path) -> None:
    """From the robot_description topic: the UR5's joints, then the Kinova's (the UR5's parameters
    undeclared, the arrays one value for all); a joint's value set since makes a model with other
    joints refused (feedback.kp then holds one value per UR5 joint), as before."""
    ur5 = list(RobotModel.from_urdf(UR5).joint_names)
    kinova = list(RobotModel.from_urdf(KINOVA).joint_names)
    params = {"feedback.kp": [30.0], "armature": {ur5[0]: 0.2, kinova[0]: 0.1}}
    proc = start_node(tmp_path, params)
    d = Driver("joint_params_swap")
    try:
        d.description.publish(String(data=UR5))
        wait_declared(d, ur5)
        assert get(d, f"armature.{ur5[0]}", f"feedback.{ur5[1]}.kp") == {
            f"armature.{ur5[0]}": 0.2,
            f"feedback.{ur5[1]}.kp": 30.0,
        }
        d.description.publish(String(data=KINOVA))
        wait_declared(d, kinova)
        declared = set(names(d))
        assert not any(kind.format(j) in declared for kind in KINDS for j in ur5 if j not in kinova)
        assert get(d, f"armature.{kinova[0]}", f"feedback.{kinova[2]}.kp") == {
            f"armature.{kinova[0]}": 0.1,
            f"feedback.{kinova[2]}.kp": 30.0,
        }
        assert d.set_parameters({f"feedback.{kinova[1]}.kp": 12.0})[0].successful
        d.description.publish(String(data=UR5))
        end = time.monotonic() + 30.0
        refused = "feedback.kp: has one value per joint"
        while refused not in d.latest_diagnostics(timeout=20.0).get("last_model_error", ""):
            assert time.monotonic() < end, d.latest_diagnostics()
        assert joint_names_declared(d, kinova)  # the Kinova still commands, its parameters stay
    finally:
        d.close()
        output = stop(proc)
    assert "Traceback" not in output, output[-4000:]


def test_the_old_armature_array_and_an_unknown_joint(tmp_path) -> None:
    """`armature: [...]` is refused at start-up (exit 2) with the per-joint form to use; a joint's
    parameter for a joint the model lacks is reported once the model is known."""
    proc = start_node(tmp_path, {"robot_description": PANDA, "armature": [0.1]})
    try:
        assert proc.wait(60) == 2
    finally:
        output = stop(proc)
    assert "armature: is one parameter per joint now: armature.<joint>" in output, output
    assert "Traceback" not in output
    typo = {"robot_description": PANDA, "tip_link": "panda_hand", "feedback.panda_jiont4.kp": 5.0}
    proc = start_node(tmp_path, typo)
    d = Driver("joint_params_unknown")
    try:
        wait_declared(d, NAMES)
    finally:
        d.close()
        output = stop(proc)
    assert "unknown parameter 'feedback.panda_jiont4.kp' ignored: the model's joints are" in output, output
    assert "(did you mean 'feedback.panda_joint4.kp'?)" in output, output
