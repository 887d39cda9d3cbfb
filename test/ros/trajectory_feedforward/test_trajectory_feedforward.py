"""The trajectory_feedforward node as a real process, driven by a real rclpy node.

Every output point's effort is compared with Pinocchio's rnea (+ the friction law) at that
point's state, the other joints at their joint_states positions; the points with JTC's spline
through the input (slowed down k times); the slow-down with the limits (all points within, one
within 1 % of its limit, 0.99 k beyond one, by Pinocchio); rejections publish nothing and say why
on /diagnostics. Every wait is bounded; nothing asserts on durations.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import yaml
from builtin_interfaces.msg import Duration
from diagnostic_msgs.msg import DiagnosticArray
from pinref import PinRef
from rcl_interfaces.srv import GetParameters, SetParameters
from rclpy.node import Node
from rclpy.parameter import Parameter, parameter_value_to_python
from sensor_msgs.msg import JointState
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from rnea_ros import Friction, friction_torques
from rnea_ros.ros.processes import die_with_parent
from rnea_ros.testing.rosgraph import rclpy, stop
from rnea_ros.trajectory.efforts import resample
from rnea_ros.trajectory.sampling import TrajectorySampler
from rnea_ros.trajectory.time_scaling import scale_trajectory

NODE = "/trajectory_feedforward"
OUT = "/jtc/joint_trajectory"  # ~/trajectory_out remapped, as a launch file does
ARM = [f"panda_joint{i}" for i in range(1, 8)]
HOME = np.array([0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785])
# the too-fast trajectory: home → +d → home → −d → home, rest-to-rest quintics of 0.1 s
SHAKE = np.array([HOME, HOME + 0.15, HOME, HOME - 0.15, HOME])
SHAKE_TIMES = np.arange(5) * 0.1


@pytest.fixture(scope="module")
def panda() -> PinRef:
    return PinRef("panda")


@pytest.fixture(scope="module")
def ur5() -> PinRef:
    return PinRef("ur5")


def start(tmp: Path, params: dict, *extra: str, env: dict | None = None) -> subprocess.Popen:
    path = tmp / f"params_{time.monotonic_ns()}.yaml"
    path.write_text(yaml.safe_dump({"trajectory_feedforward": {"ros__parameters": params}}))
    return start_file(path, *extra, env=env)


def start_file(path: Path, *extra: str, env: dict | None = None) -> subprocess.Popen:
    args = [sys.executable, "-m", "rnea_ros.nodes.trajectory_feedforward", "--ros-args"]
    args += ["--params-file", str(path), "-r", f"~/trajectory_out:={OUT}", *extra]
    return subprocess.Popen(
        args,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env or os.environ.copy(),
        preexec_fn=die_with_parent,
    )


def trajectory(names, times, positions, velocities=None, accelerations=None, stamp=(0, 0)) -> JointTrajectory:
    msg = JointTrajectory(joint_names=list(names))
    msg.header.stamp.sec, msg.header.stamp.nanosec = stamp
    for k, t in enumerate(times):
        sec, nanosec = divmod(round(float(t) * 1e9), 1_000_000_000)
        point = JointTrajectoryPoint(positions=[float(x) for x in positions[k]])
        point.time_from_start = Duration(sec=sec, nanosec=nanosec)
        if velocities is not None:
            point.velocities = [float(x) for x in velocities[k]]
        if accelerations is not None:
            point.accelerations = [float(x) for x in accelerations[k]]
        msg.points.append(point)
    return msg


class Points:
    """An output message as arrays (time, q, q̇, q̈, effort), in its joint order."""

    def __init__(self, msg: JointTrajectory) -> None:
        self.msg = msg
        self.names = list(msg.joint_names)
        p = msg.points
        self.t = np.array([x.time_from_start.sec + x.time_from_start.nanosec * 1e-9 for x in p])
        self.q, self.qd, self.qdd, self.effort = (
            np.array([list(getattr(x, f)) for x in p])
            for f in ("positions", "velocities", "accelerations", "effort")
        )


class Driver:
    """Feeds the node and records its output and diagnostics."""

    def __init__(self, name: str) -> None:
        if not rclpy.ok():
            rclpy.init()
        self.node = n = Node(name)
        self.out: list[JointTrajectory] = []
        self.diagnostics: list[dict] = []
        n.create_subscription(JointTrajectory, OUT, self.out.append, 10)
        n.create_subscription(DiagnosticArray, "/diagnostics", self._on_diagnostics, 10)
        self.pub = n.create_publisher(JointTrajectory, f"{NODE}/trajectory_in", 10)
        self.joint_states = n.create_publisher(JointState, "joint_states", 10)
        self._published = "0"

    def _on_diagnostics(self, msg: DiagnosticArray) -> None:
        for s in msg.status:
            if s.name.startswith(f"{NODE}:"):
                level = int.from_bytes(s.level, "little") if isinstance(s.level, bytes) else s.level
                self.diagnostics.append(
                    {"level": level, "message": s.message, **{kv.key: kv.value for kv in s.values}}
                )

    def spin_until(self, done, timeout: float = 30.0) -> bool:
        end = time.monotonic() + timeout
        while not done() and time.monotonic() < end:
            rclpy.spin_once(self.node, timeout_sec=0.02)
        return bool(done())

    def status(self) -> dict:
        return self.diagnostics[-1] if self.diagnostics else {}

    def wait_ready(self) -> None:
        assert self.spin_until(
            lambda: (
                self.status().get("model_loaded") == "True"
                and int(self.status().get("trajectory_out_subscribers", "0")) >= 1
                and self.pub.get_subscription_count() >= 1
            ),
            60.0,
        ), f"node not ready: {self.status()}"

    def publish_state(self, names, q) -> None:
        """joint_states, until the node has seen every one of `names` (joints_measured grows)."""
        before = int(self.status().get("joints_measured", "0"))
        msg = JointState(name=list(names), position=[float(x) for x in q], velocity=[0.0] * len(names))

        def seen() -> bool:
            self.joint_states.publish(msg)
            return int(self.status().get("joints_measured", "0")) >= before + len(names)

        assert self.spin_until(seen, 20.0), "joint_states not seen by the node"

    def send(self, msg: JointTrajectory) -> Points | None:
        """Publish a trajectory; its output, or None when the node rejected it. Returns once
        /diagnostics has counted it (status() then describes it)."""
        received = int(self.status().get("trajectories_received", "0"))
        count = len(self.out)
        self.pub.publish(msg)
        assert self.spin_until(lambda: int(self.status().get("trajectories_received", "0")) > received), (
            "the node did not count the trajectory"
        )
        if len(self.out) == count:
            self.spin_until(lambda: len(self.out) > count, 0.5)  # an output on its way
        assert len(self.out) <= count + 1
        published = int(self.status()["trajectories_published"]) > int(self._published)
        self._published = self.status()["trajectories_published"]
        if not published:
            assert len(self.out) == count, "a rejected trajectory was published"
            return None
        assert self.spin_until(lambda: len(self.out) > count, 10.0), "published but not received"
        return Points(self.out[-1])

    def set_parameters(self, values: dict) -> list:
        client = self.node.create_client(SetParameters, f"{NODE}/set_parameters")
        assert client.wait_for_service(20.0)
        request = SetParameters.Request(
            parameters=[Parameter(k, value=v).to_parameter_msg() for k, v in values.items()]
        )
        future = client.call_async(request)
        assert self.spin_until(future.done, 10.0)
        self.node.destroy_client(client)
        return future.result().results

    def get_parameters(self, names: list[str]) -> dict:
        client = self.node.create_client(GetParameters, f"{NODE}/get_parameters")
        assert client.wait_for_service(20.0)
        future = client.call_async(GetParameters.Request(names=names))
        assert self.spin_until(future.done, 10.0)
        self.node.destroy_client(client)
        return dict(zip(names, [parameter_value_to_python(v) for v in future.result().values], strict=True))

    def close(self) -> None:
        self.node.destroy_node()


def reference(ref: PinRef, points: Points, held: np.ndarray, friction: Friction, gravity_scale: float = 1.0):
    """Pinocchio's rnea (+ the friction law) at every output point's state, the other joints at
    `held` at rest; gravity 9.81 m/s² x gravity_scale (gravity torques are linear in it); the
    output's joint columns."""
    model = ref.model
    cols = [model.joint_index(j) for j in points.names]
    out = np.empty((points.t.size, len(cols)))
    zero = np.zeros(model.nv)
    for k in range(points.t.size):
        q, qd, qdd = held.copy(), np.zeros(model.nv), np.zeros(model.nv)
        q[cols], qd[cols], qdd[cols] = points.q[k], points.qd[k], points.qdd[k]
        tau = ref.rnea(q, qd, qdd) + (gravity_scale - 1.0) * ref.rnea(q, zero, zero)
        out[k] = (tau + friction_torques(friction, qd))[cols]
    return out


def spline_check(points: Points, times, positions, velocities, accelerations, k: float = 1.0) -> None:
    """The output points are JTC's spline through the input, slowed down k times (their times
    are rounded to 1 ns in the message, hence the tolerances: |q̇|, |q̈|, |q⃛| × 1 ns)."""
    scaled = scale_trajectory(times, positions, velocities, accelerations, k=k)
    q, qd, qdd = TrajectorySampler(*scaled).sample(points.t, inclusive=True)
    np.testing.assert_allclose(points.q, q, rtol=0, atol=1e-8)
    # a cubic's acceleration jumps at the input points: either side is right there
    away = np.min(np.abs(points.t[:, None] - scaled[0][None, 1:-1]), axis=1, initial=1.0) > 1e-6
    smooth = away if accelerations is None else np.ones_like(away)
    np.testing.assert_allclose(points.qd, qd, rtol=0, atol=1e-6)
    np.testing.assert_allclose(points.qdd[smooth], qdd[smooth], rtol=0, atol=1e-4)


def test_efforts_at_every_point_for_a_subset_in_any_order(tmp_path, panda: PinRef) -> None:
    """Panda (9 joints): 3 arm joints in their own order; the others at 0 before any
    joint_states, then at the measured positions; a first point later than 0 joined from the
    measured state; stamp and joint order kept; points every resample_period."""
    model = panda.model
    proc = start(
        tmp_path, {"robot_description": panda_urdf(), "resample_period": 0.004, "diagnostics_period": 0.2}
    )
    driver = Driver("ff_subset")
    friction = Friction.from_model(model)
    try:
        driver.wait_ready()
        names = ["panda_joint6", "panda_joint2", "panda_joint4"]
        times = np.array([0.0, 0.45, 1.0])
        p = np.array([[1.5, -0.7, -2.3], [1.8, -0.5, -2.0], [1.6, -0.6, -2.2]])
        v = np.array([[0.0, 0.0, 0.0], [0.4, 0.3, 0.5], [0.0, 0.0, 0.0]])
        a = np.array([[0.0, 0.0, 0.0], [-0.5, 0.2, 0.1], [0.0, 0.0, 0.0]])
        msg = trajectory(names, times, p, v, a, stamp=(123, 456_000_000))

        out = driver.send(msg)  # no joint_states yet: every other joint at 0
        assert out is not None and out.names == names
        assert (out.msg.header.stamp.sec, out.msg.header.stamp.nanosec) == (123, 456_000_000)
        np.testing.assert_allclose(np.diff(out.t), 0.004, atol=1e-9)
        assert out.t[0] == 0.0 and out.t[-1] == pytest.approx(1.0, abs=1e-9)
        spline_check(out, times, p, v, a)
        err = np.abs(out.effort - reference(panda, out, np.zeros(model.nv), friction))
        assert err.max() < 1e-9, err.max()
        print(f"line 250: {out.t.size} points, max |effort - Pinocchio| = {err.max():.2e} N m")

        rng = np.random.default_rng(3)
        measured = rng.uniform(model.position_lower, model.position_upper)
        cols = [model.joint_index(j) for j in names]
        measured[cols] = p[0] + [0.05, -0.05, 0.05]  # the arm near the first point (for the join below)
        driver.publish_state(model.joint_names[::-1], measured[::-1])  # any order
        out = driver.send(msg)
        assert out is not None
        err = np.abs(out.effort - reference(panda, out, measured, friction))
        assert err.max() < 1e-9, err.max()
        print(f"line 260: {out.t.size} points, max |effort - Pinocchio| = {err.max():.2e} N m")
        # the same with the held joints at 0 differs: joint_states mattered
        assert np.abs(out.effort - reference(panda, out, np.zeros(model.nv), friction)).max() > 1e-3

        # the first point 0.3 s after the start: the measured state at 0 joins it
        late = trajectory(names, times + 0.3, p, v, a)
        out = driver.send(late)
        assert out is not None and driver.status()["last_outcome"] == "within limits"
        np.testing.assert_allclose(out.q[0], measured[cols], atol=1e-12)
        assert out.t[-1] == pytest.approx(1.3, abs=1e-9)
        joined = (np.r_[0.0, times + 0.3], np.vstack([measured[cols], p]), np.vstack([0 * v[0], v]))
        spline_check(out, *joined, np.vstack([0 * a[0], a]))
        assert np.abs(out.effort - reference(panda, out, measured, friction)).max() < 1e-9

        # an empty trajectory (JTC: cancel) goes out as it came
        out = driver.send(JointTrajectory(joint_names=names))
        assert out is not None and out.names == names and out.t.size == 0
        assert driver.status()["trajectories_rejected"] == "0"
    finally:
        driver.close()
        output = stop(proc)
    assert proc.returncode == 0 and "Traceback" not in output, output
    assert output.count("within limits") >= 3, output  # every decision is logged


def panda_urdf() -> str:
    from rnea_ros.model.example_robots import example_urdf_path

    return example_urdf_path("panda").read_text()


def test_parameters_as_users_write_them_reach_the_efforts(tmp_path, ur5: PinRef) -> None:
    """UR5: a nested params file with integers for doubles (gravity, friction, scale), the
    model from the robot_description topic; the efforts use those values."""
    from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
    from std_msgs.msg import String

    from rnea_ros.model.example_robots import example_urdf_path

    model = ur5.model
    path = tmp_path / "user.yaml"
    path.write_text(
        """\
trajectory_feedforward:
  ros__parameters:
    gravity: [0, 0, -10]
    effort_limit_scale: 2
    resample_period: 0.01
    diagnostics_period: 0.2
    compensate:
      wrench: false
    friction:
      viscous: [1, 1, 1, 2, 2, 2]
      coulomb: [0.5, 0.5, 0.5, 0.25, 0.25, 0.25]
      smoothing_velocity: 0.02
"""
    )
    proc = start_file(path)
    driver = Driver("ff_user")
    latched = QoSProfile(
        depth=1, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL
    )
    description = driver.node.create_publisher(String, "robot_description", latched)
    description.publish(String(data=example_urdf_path("ur5").read_text()))
    try:
        driver.wait_ready()
        got = driver.get_parameters(["gravity", "effort_limit_scale", "friction.viscous", "resample_period"])
        assert got == {
            "gravity": [0, 0, -10],
            "effort_limit_scale": 2,
            "friction.viscous": [1, 1, 1, 2, 2, 2],
            "resample_period": 0.01,
        }
        names = [
            "wrist_1_joint",
            "elbow_joint",
            "shoulder_pan_joint",
            "shoulder_lift_joint",
            "wrist_2_joint",
            "wrist_3_joint",
        ]
        times = np.array([0.0, 0.6, 1.2])
        p = np.array(
            [
                [-1.5, 1.0, 0.0, -1.0, -1.5, 0.0],
                [-1.2, 1.3, 0.4, -1.3, -1.2, 0.5],
                [-1.4, 1.1, 0.2, -1.1, -1.4, 0.2],
            ]
        )
        v = np.array([np.zeros(6), [0.5, 0.4, 0.6, -0.4, 0.5, 0.6], np.zeros(6)])
        out = driver.send(trajectory(names, times, p, v))  # cubic (no accelerations)
        assert out is not None and out.names == names
        assert driver.status()["last_outcome"] == "within limits"
        np.testing.assert_allclose(np.diff(out.t), 0.01, atol=1e-9)
        spline_check(out, times, p, v, None)
        friction = Friction([1, 1, 1, 2, 2, 2], [0.5, 0.5, 0.5, 0.25, 0.25, 0.25], 0.02)
        err = np.abs(out.effort - reference(ur5, out, np.zeros(model.nv), friction, gravity_scale=10 / 9.81))
        assert err.max() < 1e-9, err.max()
        print(f"line 357: {out.t.size} points, max |effort - Pinocchio| = {err.max():.2e} N m")
        assert (
            np.abs(out.effort - reference(ur5, out, np.zeros(model.nv), friction)).max() > 1e-2
        )  # g mattered
    finally:
        driver.close()
        output = stop(proc)
    assert proc.returncode == 0 and "Traceback" not in output, output
    assert "unknown parameter" not in output, output


def test_limits_slow_down_minimally_reject_and_time_optimal(tmp_path, panda: PinRef) -> None:
    """The shake needs 1.7x the effort limit of panda_joint3: slow_down stretches it by the
    smallest k (all points within, one within 1 %, 0.99 k beyond by Pinocchio); reject publishes
    nothing and says by how much; a trajectory gravity alone cannot hold is rejected in both
    modes; time_optimal (TOPP-RA) publishes one within the limits."""
    model = panda.model
    proc = start(tmp_path, {"robot_description": panda_urdf(), "diagnostics_period": 0.2})
    driver = Driver("ff_limits")
    friction = Friction.from_model(model)
    arm = [model.joint_index(j) for j in ARM]
    limit = model.effort_limit[arm]
    try:
        driver.wait_ready()
        fingers = ["panda_finger_joint1", "panda_finger_joint2"]
        driver.publish_state(fingers, [0.02, 0.02])
        held = np.zeros(model.nv)
        held[[model.joint_index(j) for j in fingers]] = 0.02
        zeros = np.zeros_like(SHAKE)
        shake = trajectory(ARM, SHAKE_TIMES, SHAKE, zeros, zeros)

        out = driver.send(shake)
        assert out is not None
        k = out.t[-1] / SHAKE_TIMES[-1]
        assert k > 1.0
        status = driver.status()
        assert status["last_outcome"] == "slowed down" and float(status["last_k"]) == pytest.approx(
            k, rel=1e-5
        )
        assert status["last_binding_joint"] == "panda_joint3" and status["last_binding_limit"] == "effort"
        spline_check(out, SHAKE_TIMES, SHAKE, zeros, zeros, k=k)
        tau = reference(panda, out, held, friction)
        assert np.abs(out.effort - tau).max() < 1e-9
        ratio = np.abs(tau) / limit
        assert ratio.max() <= 1.0 + 1e-9 and ratio.max() >= 0.99, ratio.max()
        print(f"slow-down k = {k:.5f}, max |tau|/limit = {ratio.max():.6f}")
        assert ARM[int(np.argmax(ratio.max(axis=0)))] == "panda_joint3"
        # 1 % less slow-down exceeds a limit (Pinocchio on the points JTC would get)
        t, q, qd, qdd = resample(scale_trajectory(SHAKE_TIMES, SHAKE, zeros, zeros, k=0.99 * k), 0.005)
        faster = Points(trajectory(ARM, t, q, qd, qdd))
        faster.effort = np.zeros_like(faster.q)
        beyond = np.max(np.abs(reference(panda, faster, held, friction)) / limit)
        print(f"0.99 k: max |tau|/limit = {beyond:.4f}")
        assert beyond > 1.0

        assert all(r.successful for r in driver.set_parameters({"on_limit": "reject"}))
        assert driver.send(shake) is None
        status = driver.status()
        assert status["last_outcome"] == "rejected" and status["rejected.limits"] == "1"
        assert "panda_joint3" in status["last_reason"] and f"stretch it {k:.4f}x" in status["last_reason"]
        assert status["level"] == 1 and "rejected" in status["message"]  # WARN

        # gravity alone beyond the limit (scale 0.1): no slow-down helps, in both modes
        slow = trajectory(ARM, [0.0, 5.0], [HOME, HOME + 0.05], np.zeros((2, 7)), np.zeros((2, 7)))
        assert all(r.successful for r in driver.set_parameters({"effort_limit_scale": 0.1}))
        for mode in ("reject", "slow_down"):
            assert all(r.successful for r in driver.set_parameters({"on_limit": mode}))
            assert driver.send(slow) is None, mode
            assert "no slow-down helps" in driver.status()["last_reason"], driver.status()

        # TOPP-RA re-timing (needs no viscous friction): within the limits, efforts exact
        assert all(r.successful for r in driver.set_parameters({"effort_limit_scale": 1.0}))
        bad = driver.set_parameters({"on_limit": "fastest"})
        assert not bad[0].successful and "on_limit" in bad[0].reason
        pytest.importorskip("toppra")
        driver.set_parameters({"on_limit": "time_optimal", "compensate.friction": False})
        out = driver.send(shake)
        assert out is not None and driver.status()["last_outcome"] == "re-timed"
        tau = reference(panda, out, held, Friction(np.zeros(model.nv), np.zeros(model.nv)))
        assert np.abs(out.effort - tau).max() < 1e-9
        print(f"TOPP-RA: duration {out.t[-1]:.4f} s, max |tau|/limit = {np.max(np.abs(tau) / limit):.6f}")
        assert np.max(np.abs(tau) / limit) <= 1.0 + 1e-9
    finally:
        driver.close()
        output = stop(proc)
    assert proc.returncode == 0 and "Traceback" not in output, output
    assert "slowed down" in output and "trajectory rejected" in output, output


def test_bad_trajectories_are_counted_and_the_node_carries_on(tmp_path, panda: PinRef) -> None:
    proc = start(tmp_path, {"robot_description": panda_urdf(), "joints": ARM, "diagnostics_period": 0.2})
    driver = Driver("ff_bad")
    good = trajectory(ARM[:2], [0.0, 1.0], [HOME[:2], HOME[:2] + 0.1], np.zeros((2, 2)), np.zeros((2, 2)))
    bad = [
        trajectory(["panda_joint1", "nope"], [0.0, 1.0], np.zeros((2, 2))),  # unknown joint
        trajectory(["panda_finger_joint1"], [0.0, 1.0], [[0.0], [0.01]]),  # not in `joints`
        trajectory(["panda_joint1", "panda_joint1"], [0.0, 1.0], np.zeros((2, 2))),  # twice
        trajectory(ARM[:2], [0.0, 1.0], [[0.0, 0.0], [0.1]]),  # ragged
        trajectory(ARM[:2], [0.0, 1.0], [[0.0, float("nan")], [0.1, 0.1]]),  # NaN
        trajectory(ARM[:2], [0.0, 0.0], np.zeros((2, 2))),  # times not increasing
        trajectory(ARM[:2], [0.0, 1.0], np.zeros((2, 2)), None, np.zeros((2, 2))),  # accelerations only
        trajectory(ARM[:2], [0.5, 1.0], np.zeros((2, 2))),  # late first point, nothing measured
        JointTrajectory(joint_names=ARM[:2], points=[JointTrajectoryPoint()]),  # no positions
    ]
    try:
        driver.wait_ready()
        for msg in bad:
            assert driver.send(msg) is None
        assert driver.spin_until(lambda: driver.status().get("rejected.bad_trajectory") == str(len(bad)))
        assert driver.status()["trajectories_published"] == "0"
        assert driver.send(good) is not None  # still working
    finally:
        driver.close()
        output = stop(proc)
    assert proc.returncode == 0 and "Traceback" not in output, output
    assert "not movable joints" in output and "not among this node's joints" in output, output
    assert "no joint_states for" in output, output


def test_the_work_per_trajectory_is_bounded_and_last_reason_says_why(tmp_path) -> None:
    """A trajectory lasting 1e4 s (2e6 points every 5 ms: it once ended in MemoryError inside the
    callback, last_reason still the previous trajectory's), one slowed down past the bound, and
    absurd positions, velocities and times: each rejected with last_reason saying why, and a good
    trajectory goes out after them."""
    proc = start(tmp_path, {"robot_description": panda_urdf(), "joints": ARM, "diagnostics_period": 0.2})
    driver = Driver("ff_bounded")
    good = trajectory(ARM[:2], [0.0, 1.0], [HOME[:2], HOME[:2] + 0.1], np.zeros((2, 2)), np.zeros((2, 2)))
    far = np.array([HOME[:2], HOME[:2] + 0.1])
    cases = [
        (trajectory(ARM[:2], [0.0, 1e4], far), "is 2e+06 points, more than 100000"),
        (trajectory(ARM[:2], [0.0, 400.0], far), "is 8e+04 points"),  # within: goes out
        (trajectory(ARM[:2], [0.0, 1e8], far), "time_from_start 1e+08 s is beyond the plausible"),
        (trajectory(ARM[:2], [0.0, 1.0], [HOME[:2], [1e308, 0.0]]), "position of 'panda_joint1' is 1e+308"),
        (trajectory(ARM[:2], [0.0, 1.0], far, [[0.0, 0.0], [0.0, 1e150]]), "velocity of 'panda_joint2'"),
    ]
    try:
        driver.wait_ready()
        assert driver.send(good) is not None
        for msg, said in cases:
            out = driver.send(msg)
            reason = driver.status()["last_reason"]
            if said == "is 8e+04 points":
                assert out is not None and len(out.t) == 80001, reason
                continue
            assert out is None and said in reason, (said, reason)
            assert driver.status()["last_outcome"] == "rejected"
        assert driver.send(good) is not None  # still working
    finally:
        driver.close()
        output = stop(proc)
    assert proc.returncode == 0 and "Traceback" not in output and "MemoryError" not in output, output


@pytest.mark.parametrize(
    ("params", "expected"),
    [
        (
            {"on_limit": "slowdown"},
            "on_limit: must be one of slow_down, reject, time_optimal, got 'slowdown'",
        ),
        ({"resample_period": 0}, "resample_period: must be in"),
        (
            {"ee_wrench": [0, 0, -10, 0, 0, 0], "ee_wrench_frame": "tip", "tip_link": "panda_hand"},
            "ee_wrench_frame: must be 'root'",
        ),
    ],
)
def test_invalid_parameters_end_start_up_in_one_line(tmp_path, params: dict, expected: str) -> None:
    proc = start(tmp_path, {"robot_description": panda_urdf(), **params})
    try:
        proc.wait(60)
    finally:
        output = stop(proc)
    assert proc.returncode == 2, output
    assert expected in output and "Traceback" not in output, output
    assert "kernels" not in output, output  # it failed before loading them


def test_time_optimal_without_toppra_is_refused_with_the_reason(tmp_path) -> None:
    """A toppra that cannot be imported (shadowed on PYTHONPATH) makes on_limit: time_optimal
    an invalid parameter: exit 2, saying what to install."""
    fake = tmp_path / "fake" / "toppra"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text('raise ImportError("toppra hidden by the test")\n')
    env = os.environ.copy()
    env["PYTHONPATH"] = os.pathsep.join([str(fake.parent), env.get("PYTHONPATH", "")])
    proc = start(tmp_path, {"robot_description": panda_urdf(), "on_limit": "time_optimal"}, env=env)
    try:
        proc.wait(60)
    finally:
        output = stop(proc)
    assert proc.returncode == 2, output
    assert "on_limit: 'time_optimal' needs the optional package toppra (pip install toppra)" in output, output
