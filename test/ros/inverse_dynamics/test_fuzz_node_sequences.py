"""Stateful fuzzing of the running node: hypothesis interleaves descriptions (robots of other
sizes, broken ones, inconsistent inertias), joint_states (for the model, for another one,
partial, from two publishers, garbage), trajectories, parameter sets, wrenches and payloads on
the model's links; on a second node with root_joint floating (solo12, solo8), odometry and IMU
messages (bad frames, stale, non-finite), contact masks and contacts.* changes; on a third with
the gravity from ~/imu (gravity_source imu_acceleration, low-passed, or imu_orientation), IMU
samples. Every number may be absurd but finite (±1e3 … ±1e308), NaN or Inf, and quaternions
have tiny and huge norms.

Invariants after every step: the process is alive, every effort it published is finite and
within the effort limit × the largest scale, and once the good inputs are back (the trajectory
cancelled, the wrenches cleared, the payload removed, a good base state or IMU), a complete
fresh joint_states for the current model gets the command the core computes (1e-9;
contact_inverse_dynamics for the floating node) by its second answer at the latest: no command
leaves that band for longer than one cycle after a good input returns (the first answer may
come before the good inputs: they travel on topics of their own). The long run is
bench/soak.py --sequences.
"""

from __future__ import annotations

import math
import os
import re
import time
from collections import Counter

import numpy as np
import pytest
from builtin_interfaces.msg import Duration
from geometry_msgs.msg import InertiaStamped, WrenchStamped
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule, run_state_machine_as_test
from nav_msgs.msg import Odometry
from sensor_msgs.msg import Imu, JointState
from std_msgs.msg import Header, String, UInt8MultiArray
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from rnea_ros import RobotModel, gravity_torques, nonlinear_effects
from rnea_ros.algorithms.contact_dynamics import Contact, contact_inverse_dynamics
from rnea_ros.model.example_robots import example_urdf_path
from rnea_ros.testing.rosgraph import FRICTION_OFF, Driver, start_node, stop

ROBOTS = {
    "ur5": "ur5",
    "panda": "panda",
    "double_pendulum": "double_pendulum",
    "kinova": "kinova_description/robots/kinova.urdf",
    "xarm7": "xarm_description/urdf/xarm7.urdf",
    "so101": "so_arm_description/urdf/so101.urdf",
    "talos_arm": "talos_data/robots/talos_left_arm.urdf",
}
TEXTS = {name: example_urdf_path(path).read_text() for name, path in ROBOTS.items()}
# The Panda with panda_link3's inertia 10 % over the triangle limit: loads with a warning.
TEXTS["panda_cad"] = re.sub(
    r'(<link name="panda_link3">.*?<inertia )[^/]*/>',
    r'\1ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.022"/>',
    TEXTS["panda"],
    count=1,
    flags=re.S,
)
MODELS = {name: RobotModel.from_urdf(text) for name, text in TEXTS.items()}
assert MODELS["panda_cad"].warnings
BROKEN = ["<robot", "", "<robot name='x'><link name='a'/><link name='b'/></robot>", "not xml at all"]
TIMEOUT = 0.5
MAX_SCALE = 10.0
BOUNDS: dict[str, float] = {}
for _model in MODELS.values():
    for _name, _limit in zip(_model.joint_names, _model.effort_limit, strict=True):
        BOUNDS[_name] = max(BOUNDS.get(_name, 0.0), _limit * MAX_SCALE)
SEQUENCES = int(os.environ.get("RNEA_FUZZ_SEQUENCES", "30"))
STEPS = int(os.environ.get("RNEA_FUZZ_STEPS", "20"))
# absurd but finite: ±(1 … 9.99) × 10^(3 … 307)
ABSURD = st.builds(
    lambda m, e, sign: sign * m * 10.0**e,
    st.floats(1.0, 9.99),
    st.integers(3, 307),
    st.sampled_from([1.0, -1.0]),
)
NUMBER = st.one_of(
    st.floats(-3.0, 3.0), st.sampled_from([np.nan, np.inf, -np.inf, 1e300, -1e300, 0.0]), ABSURD
)
# a rotation scaled to a tiny or huge norm (or left a unit quaternion)
QUATERNION = st.builds(
    lambda q, scale: tuple(scale * x / float(np.linalg.norm(q)) for x in q),
    st.tuples(*[st.floats(-1.0, 1.0)] * 4).filter(lambda q: float(np.linalg.norm(q)) > 0.1),
    st.one_of(st.just(1.0), st.floats(1e-12, 1e-3), st.builds(lambda e: 10.0**e, st.integers(1, 300))),
)


COUNTS: Counter = Counter()  # sequences, steps, checks: printed and asserted at the end


class Law:
    """The parameters the machine has set successfully, as the node stores them (mirrored)."""

    def __init__(self) -> None:
        self.values = {
            "gravity": [0.0, 0.0, -9.81],
            "compensate.gravity": True,
            "compensate.coriolis": True,
            "compensate.friction": True,
            "effort_limit_scale": 1.0,
            "friction.smoothing_velocity": 0.01,
        }

    def command(self, model: RobotModel, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
        v = self.values
        g = gravity_torques(model, q, gravity=tuple(v["gravity"]))
        c = nonlinear_effects(model, q, qd, gravity=tuple(v["gravity"])) - g
        tau = g * v["compensate.gravity"] + c * v["compensate.coriolis"]  # FRICTION_OFF: no friction term
        limit = model.effort_limit * v["effort_limit_scale"]
        return np.clip(tau, -limit, limit)


@pytest.fixture  # torn down before the floating test: both nodes are /inverse_dynamics
def node(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("sequences")
    proc = start_node(tmp, {"joint_states_timeout": TIMEOUT, "diagnostics_period": 0.2, **FRICTION_OFF})
    driver = Driver("sequence_driver", BOUNDS)
    driver.gripper = driver.node.create_publisher(JointState, "joint_states", 10)  # a second publisher
    driver.trajectories = driver.node.create_publisher(
        JointTrajectory, "/inverse_dynamics/joint_trajectory", 10
    )
    driver.wrenches = driver.node.create_publisher(WrenchStamped, "/inverse_dynamics/ee_wrench", 10)
    driver.payloads = driver.node.create_publisher(InertiaStamped, "/inverse_dynamics/payload", 10)
    yield driver, proc
    driver.close()
    output = stop(proc)
    assert "Traceback" not in output, output[-3000:]


class NodeSequences(RuleBasedStateMachine):
    """One sequence of events against the running node (shared by every sequence)."""

    driver: Driver
    proc = None

    @initialize(robot=st.sampled_from(sorted(TEXTS)))
    def start(self, robot: str) -> None:
        self.law = Law()
        self.current: str | None = None  # robot of the model the node must be running (set below)
        self.wrenched: set[str] = set()  # links a wrench message named (cleared before each check)
        self.payload = False  # a payload message was sent (removed before each check)
        self.driver.set_parameters(dict(self.law.values))  # each sequence starts from the same law
        self.rng = np.random.default_rng(0)
        COUNTS["sequences"] += 1
        self.description(robot)

    # --- events -----------------------------------------------------------------------------

    @rule(robot=st.sampled_from(sorted(TEXTS)))
    def description(self, robot: str) -> None:
        self.driver.description.publish(String(data=TEXTS[robot]))
        self.driver.spin(0.05)
        self.current = robot
        self._wait_for_model(robot)

    @rule(text=st.one_of(st.sampled_from(BROKEN), st.text(max_size=40)))
    def broken_description(self, text: str) -> None:
        self.driver.description.publish(String(data=text))
        self.driver.spin(0.05)

    @rule(
        robot=st.sampled_from(sorted(TEXTS)),
        values=st.lists(NUMBER, min_size=18, max_size=18),
        cut=st.integers(0, 9),
    )
    def joint_states(self, robot: str, values, cut: int) -> None:
        """For the model or another one, complete or partial, finite or not."""
        names = list(MODELS[robot].joint_names)[cut:]
        q, qd = values[: len(names)], values[9 : 9 + len(names)]
        self.driver.joint_states.publish(self.driver.state(names, q, qd))
        self.driver.spin(0.01)

    @rule(names=st.lists(st.text(max_size=4), max_size=4), values=st.lists(NUMBER, max_size=6))
    def garbage_joint_states(self, names, values) -> None:
        msg = self.driver.state(names, [])
        msg.position, msg.velocity = [float(v) for v in values], [float(v) for v in values[:2]]
        self.driver.gripper.publish(msg)
        self.driver.spin(0.01)

    @rule(split=st.integers(1, 8))
    def two_publishers(self, split: int) -> None:
        """The model's joints in two messages from two publishers, then nothing else."""
        if self.current is None:
            return
        names = list(MODELS[self.current].joint_names)
        q = self.rng.uniform(-1, 1, len(names))
        self.driver.gripper.publish(self.driver.state(names[split:], q[split:], 0 * q[split:]))
        self.driver.joint_states.publish(self.driver.state(names[:split], q[:split], 0 * q[:split]))
        self.driver.spin(0.01)

    @rule(
        robot=st.sampled_from(sorted(TEXTS)),
        times=st.lists(st.one_of(st.floats(-0.5, 2.0), st.floats(1e3, 2e9)), max_size=3),
        value=NUMBER,
        velocity=st.one_of(st.none(), NUMBER),
    )
    def trajectory(self, robot: str, times, value: float, velocity: float | None) -> None:
        names = list(MODELS[robot].joint_names)
        msg = JointTrajectory(joint_names=names)
        for t in times:
            sec = int(np.floor(t))
            msg.points.append(
                JointTrajectoryPoint(
                    positions=[float(value)] * len(names),
                    velocities=[] if velocity is None else [float(velocity)] * len(names),
                    time_from_start=Duration(sec=sec, nanosec=int((t - sec) * 1e9)),
                )
            )
        self.driver.trajectories.publish(msg)
        self.driver.spin(0.01)

    @rule(
        name=st.sampled_from(
            [
                "gravity",
                "compensate.gravity",
                "compensate.coriolis",
                "compensate.friction",
                "effort_limit_scale",
                "friction.smoothing_velocity",
                "friction.viscous",
                "feedback.kp",
                "state_source",
                "joints",
            ]
        ),
        value=st.one_of(
            st.booleans(),
            st.integers(-2, 12),
            NUMBER,
            st.lists(st.floats(-20, 20), min_size=3, max_size=3),
            st.lists(st.floats(0, 2), min_size=13, max_size=13),
            st.sampled_from(["measured", "desired", "x"]),
        ),
    )
    def parameters(self, name: str, value) -> None:
        if self.current is None and name == "friction.viscous":
            return  # before any model, per-joint values bind to the first one (documented)
        results = self.driver.set_parameters({name: value})
        if all(r.successful for r in results) and name in self.law.values:
            self.law.values[name] = stored(self.driver, name)

    @rule(
        frame=st.sampled_from(["", "root", "tip", "world", "moving", "moving"]),
        values=st.lists(NUMBER, min_size=6, max_size=6),
    )
    def wrench(self, frame: str, values) -> None:
        if frame == "moving":  # a link of the current model that moves: the wrench may be taken
            if self.current is None:
                return
            frame = moving_link(MODELS[self.current])
            self.wrenched.add(frame)
        msg = WrenchStamped()
        msg.header.frame_id = frame
        f, t = msg.wrench.force, msg.wrench.torque
        f.x, f.y, f.z, t.x, t.y, t.z = (float(v) for v in values)
        self.driver.wrenches.publish(msg)
        self.driver.spin(0.01)

    @rule(
        mass=st.one_of(st.floats(0.0, 5.0), ABSURD, st.just(np.nan)),
        com=st.lists(NUMBER, min_size=3, max_size=3),
        inertia=st.lists(st.one_of(st.floats(0.0, 0.1), NUMBER), min_size=6, max_size=6),
    )
    def payload(self, mass: float, com, inertia) -> None:
        if self.current is None:
            return
        msg = InertiaStamped()
        msg.header.frame_id = moving_link(MODELS[self.current])
        i = msg.inertia
        i.m = float(mass)
        i.com.x, i.com.y, i.com.z = (float(v) for v in com)
        i.ixx, i.ixy, i.ixz, i.iyy, i.iyz, i.izz = (float(v) for v in inertia)
        self.driver.payloads.publish(msg)
        self.payload = True
        self.driver.spin(0.01)

    # --- invariants -------------------------------------------------------------------------

    @invariant()
    def alive_and_bounded(self) -> None:
        COUNTS["steps"] += 1  # the invariants run after every step (and after initialize)
        assert self.proc.poll() is None, "the node process ended"
        self.driver.check_published_efforts()

    @invariant()
    def commands_like_the_core(self) -> None:
        if self.current is None:
            return
        model = MODELS[self.current]
        d = self.driver
        self._good_inputs()
        q = self.rng.uniform(-1.0, 1.0, model.nv)
        qd = self.rng.uniform(-1.0, 1.0, model.nv)
        want = self.law.command(model, q, qd)
        within_one_cycle(
            lambda: d.command_for(d.state(model.joint_names, q, qd), timeout=1.0), want, self.current
        )

    def _good_inputs(self) -> None:
        """The good inputs back: the trajectory cancelled (the law at rest), no wrench (a zero one
        clears its link), no payload (mass 0 removes it)."""
        d = self.driver
        d.trajectories.publish(JointTrajectory())
        for link in sorted(self.wrenched):
            d.wrenches.publish(WrenchStamped(header=Header(frame_id=link)))
        if self.payload:
            d.payloads.publish(InertiaStamped())
        self.wrenched, self.payload = set(), False
        d.spin(0.02)

    def _wait_for_model(self, robot: str) -> None:
        """Until the node answers as this robot's model does (same names may be another model)."""
        self._good_inputs()  # a wrench or payload on a link both models have is kept
        model = MODELS[robot]
        q = np.linspace(-1.0, 1.0, model.nv)
        want = self.law.command(model, q, np.zeros(model.nv))
        for _ in range(100):
            got = self.driver.command_for(
                self.driver.state(model.joint_names, q, np.zeros(model.nv)), timeout=0.1
            )
            if got is not None and len(got) == model.nv and np.allclose(got, want, rtol=1e-9, atol=1e-9):
                return
        raise AssertionError(f"the node did not take the {robot} description")


def stored(driver: Driver, name: str):
    """What the node stores for `name` after a set it accepted: the value as given, or as the
    node converts it (a single value for a list of any length is a list of one)."""
    return driver.get_parameters([name])[name]


def moving_link(model: RobotModel) -> str:
    """The last link of `model` that moves with a joint (a wrench or payload there acts)."""
    return [name for name, frame in model.link_frames.items() if frame.body >= 0][-1]


def within_one_cycle(answer, want: np.ndarray, what) -> None:
    """Answers (`answer()`: the command for a good state, None when none came) equal `want` (1e-9)
    by the second at the latest: the first may come before the good inputs did, no later one."""
    answers = []
    for _ in range(5):  # None: not answered within the wait (a loaded machine); ask again
        got = answer()
        if got is None:
            continue
        answers.append(got)
        if np.allclose(got, want, rtol=1e-9, atol=1e-9):
            COUNTS["checks"] += 1
            return
        assert len(answers) < 2, (
            f"{what}: off the core's command for more than one cycle: {answers} != {want}"
        )
    raise AssertionError(f"{what}: no command for a complete good state ({answers}, want {want})")


def test_interleaved_events_never_end_the_node_nor_publish_a_bad_command(node) -> None:
    driver, proc = node
    NodeSequences.driver, NodeSequences.proc = driver, proc
    run = settings(
        max_examples=SEQUENCES,
        stateful_step_count=STEPS,
        deadline=None,
        suppress_health_check=list(HealthCheck),
        derandomize=os.environ.get("RNEA_FUZZ_RANDOM", "") == "",
    )
    COUNTS.clear()
    run_state_machine_as_test(NodeSequences, settings=run)
    assert proc.poll() is None
    published = driver.check_published_efforts()
    print(
        f"sequences {COUNTS['sequences']}, steps {COUNTS['steps']}, core checks {COUNTS['checks']}, "
        f"efforts checked {published}"
    )
    assert COUNTS["sequences"] >= SEQUENCES and COUNTS["steps"] >= SEQUENCES * STEPS // 2


# --- a floating base: root_joint floating, ~/odometry, ~/imu, ~/contact_state, contacts.* -------

FLOATING_ROBOTS = {
    "solo12": "solo_description/robots/solo12.urdf",
    "solo8": "solo_description/robots/solo.urdf",
}
FLOATING_TEXTS = {name: example_urdf_path(path).read_text() for name, path in FLOATING_ROBOTS.items()}
FLOATING_MODELS = {name: RobotModel.from_urdf(t, root_joint="floating") for name, t in FLOATING_TEXTS.items()}
FEET = ["FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT"]
FLOATING_BOUNDS = {
    n: lim * MAX_SCALE
    for m in FLOATING_MODELS.values()
    for n, lim in zip(m.joint_names, m.effort_limit, strict=True)
}
# a standing-like posture per robot (knees bent), and the base state the checks publish
POSTURE = {
    "solo12": np.array([0.0, 0.8, -1.6, 0.0, 0.8, -1.6, 0.0, -0.8, 1.6, 0.0, -0.8, 1.6]),
    "solo8": np.array([0.8, -1.6, 0.8, -1.6, -0.8, 1.6, -0.8, 1.6]),
}
BASE_QUAT = (0.0, 0.0, float(np.sin(0.15)), float(np.cos(0.15)))
BASE_OMEGA = np.array([0.01, -0.02, 0.05])


def stamped(driver: Driver, msg, offset: float = 0.0):
    now = driver.node.get_clock().now().nanoseconds + int(offset * 1e9)
    msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(now, 1_000_000_000)
    return msg


def odometry_msg(child: str, world: str, values) -> Odometry:
    msg = Odometry()
    msg.header.frame_id, msg.child_frame_id = world, child
    p, o, t = msg.pose.pose.position, msg.pose.pose.orientation, msg.twist.twist
    p.x, p.y, p.z, o.x, o.y, o.z, o.w = (float(v) for v in values[:7])
    t.linear.x, t.linear.y, t.linear.z, t.angular.x, t.angular.y, t.angular.z = (
        float(v) for v in values[7:13]
    )
    return msg


def imu_msg(frame: str, quat, omega, absent: bool = False) -> Imu:
    msg = Imu()
    msg.header.frame_id = frame
    o, w = msg.orientation, msg.angular_velocity
    o.x, o.y, o.z, o.w = (float(v) for v in quat)
    w.x, w.y, w.z = (float(v) for v in omega)
    if absent:
        msg.orientation_covariance[0] = -1.0
    return msg


class Stance:
    """The contact parameters the machine has set successfully, as the node stores them."""

    def __init__(self) -> None:
        self.values = {"contacts.links": list(FEET), "contacts.types": ["point"], "contacts.friction": [0.7],
                       "effort_limit_scale": 1.0, "base.source": "odometry",
                       "contacts.normal": [0.0, 0.0, 1.0], "contacts.min_normal_force": 1.0}  # fmt: skip

    def command(self, model: RobotModel, q: np.ndarray) -> np.ndarray:
        v = self.values
        links = [link for link in v["contacts.links"] if link]
        types = v["contacts.types"] * len(links) if len(v["contacts.types"]) == 1 else v["contacts.types"]
        mu = (
            v["contacts.friction"] * len(links)
            if len(v["contacts.friction"]) == 1
            else v["contacts.friction"]
        )
        normal = tuple(float(x) for x in v["contacts.normal"])
        least = float(v["contacts.min_normal_force"])
        contacts = [
            Contact(link, t, float(m), normal, min_normal_force=least)  # type: ignore[arg-type]
            for link, t, m in zip(links, types, mu, strict=True)
        ]
        q_full = np.concatenate([[0.0, 0.0, 0.3], BASE_QUAT, q])
        v_full = np.concatenate([np.zeros(3), BASE_OMEGA, np.zeros(model.njoints)])
        tau = contact_inverse_dynamics(model, q_full, v_full, np.zeros(model.nv), contacts).tau
        limit = model.effort_limit * v["effort_limit_scale"]
        return np.clip(tau, -limit, limit)


@pytest.fixture
def floating_node(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("floating_sequences")
    params = {
        "joint_states_timeout": TIMEOUT, "odometry.timeout": TIMEOUT, "imu.timeout": TIMEOUT,
        "root_joint": "floating", "contacts.links": FEET, "diagnostics_period": 0.2, **FRICTION_OFF,
    }  # fmt: skip
    proc = start_node(tmp, params)
    driver = Driver("floating_sequence_driver", FLOATING_BOUNDS)
    n = driver.node
    driver.odometry = n.create_publisher(Odometry, "/inverse_dynamics/odometry", 10)  # type: ignore[attr-defined]
    driver.imu = n.create_publisher(Imu, "/inverse_dynamics/imu", 10)  # type: ignore[attr-defined]
    driver.mask = n.create_publisher(UInt8MultiArray, "/inverse_dynamics/contact_state", 10)  # type: ignore[attr-defined]
    yield driver, proc
    driver.close()
    output = stop(proc)
    assert "Traceback" not in output, output[-3000:]


class FloatingSequences(RuleBasedStateMachine):
    """One sequence of events against the running floating-base node."""

    driver: Driver
    proc = None

    @initialize(robot=st.sampled_from(sorted(FLOATING_TEXTS)))
    def start(self, robot: str) -> None:
        self.stance = Stance()
        self.current: str | None = None
        self.driver.set_parameters(dict(self.stance.values))
        self.rng = np.random.default_rng(0)
        COUNTS["sequences"] += 1
        self.description(robot)

    @rule(robot=st.sampled_from(sorted(FLOATING_TEXTS)))
    def description(self, robot: str) -> None:
        self.driver.description.publish(String(data=FLOATING_TEXTS[robot]))
        self.driver.spin(0.05)
        self.current = robot
        self._wait_for_model(robot)

    @rule(text=st.sampled_from(BROKEN))
    def broken_description(self, text: str) -> None:
        self.driver.description.publish(String(data=text))
        self.driver.spin(0.05)

    @rule(robot=st.sampled_from(sorted(FLOATING_TEXTS)), values=st.lists(NUMBER, min_size=24, max_size=24))
    def joint_states(self, robot: str, values) -> None:
        names = list(FLOATING_MODELS[robot].joint_names)
        msg = self.driver.state(names, values[: len(names)], values[12 : 12 + len(names)])
        self.driver.joint_states.publish(msg)
        self.driver.spin(0.01)

    @rule(
        child=st.sampled_from(["base_link", "base_link", "FL_FOOT", "", "odom"]),
        world=st.sampled_from(["odom", "odom", "", "map"]),
        values=st.lists(NUMBER, min_size=13, max_size=13),
        quat=st.one_of(st.none(), QUATERNION),
        offset=st.sampled_from([0.0, 0.0, -2 * TIMEOUT, 2 * TIMEOUT, -1.7e9]),
    )
    def odometry(self, child: str, world: str, values, quat, offset: float) -> None:
        if quat is not None:  # a rotation of any norm, the other fields as drawn
            values = [*values[:3], *quat, *values[7:]]
        self.driver.odometry.publish(stamped(self.driver, odometry_msg(child, world, values), offset))
        self.driver.spin(0.01)

    @rule(
        frame=st.sampled_from(["base_link", "FL_FOOT", "", "nowhere"]),
        quat=st.one_of(st.lists(NUMBER, min_size=4, max_size=4), QUATERNION),
        omega=st.lists(NUMBER, min_size=3, max_size=3),
        absent=st.booleans(),
        offset=st.sampled_from([0.0, -2 * TIMEOUT]),
    )
    def imu(self, frame: str, quat, omega, absent: bool, offset: float) -> None:
        self.driver.imu.publish(stamped(self.driver, imu_msg(frame, quat, omega, absent), offset))
        self.driver.spin(0.01)

    @rule(mask=st.lists(st.integers(0, 255), max_size=5))
    def contact_state(self, mask) -> None:
        self.driver.mask.publish(UInt8MultiArray(data=mask))
        self.driver.spin(0.01)

    @rule(
        name=st.sampled_from(
            [
                "contacts.links",
                "contacts.types",
                "contacts.friction",
                "effort_limit_scale",
                "base.source",
                "feedback.kp",
                "contacts.normal",
                "contacts.min_normal_force",
            ]
        ),  # fmt: skip
        value=st.one_of(
            st.lists(st.sampled_from([*FEET, "base_link", "NOSE", ""]), min_size=1, max_size=4, unique=True),
            st.lists(st.sampled_from(["point", "6d", "x"]), min_size=1, max_size=4),
            st.lists(st.floats(-1, 3), min_size=1, max_size=4),
            NUMBER,
            st.sampled_from(["odometry", "odometry_imu", "imu", "x"]),
        ),
    )
    def parameters(self, name: str, value) -> None:
        results = self.driver.set_parameters({name: value})
        if all(r.successful for r in results) and name in self.stance.values:
            self.stance.values[name] = stored(self.driver, name)

    @invariant()
    def alive_and_bounded(self) -> None:
        COUNTS["steps"] += 1
        assert self.proc.poll() is None, "the node process ended"
        self.driver.check_published_efforts()

    def _command(self, q: np.ndarray) -> np.ndarray | None:
        """Every contact closed, a fresh base state (the same from ~/odometry and ~/imu), then q."""
        d = self.driver
        links = [link for link in self.stance.values["contacts.links"] if link]
        d.mask.publish(UInt8MultiArray(data=[1] * len(links)))
        odom = [0.0, 0.0, 0.3, *BASE_QUAT, 0.0, 0.0, 0.0, *BASE_OMEGA]
        d.odometry.publish(stamped(d, odometry_msg("base_link", "odom", odom)))
        d.imu.publish(stamped(d, imu_msg("base_link", BASE_QUAT, BASE_OMEGA)))
        d.spin(0.03)
        model = FLOATING_MODELS[self.current]
        return d.command_for(d.state(model.joint_names, q, np.zeros(model.njoints)), timeout=0.5)

    @invariant()
    def commands_like_the_core(self) -> None:
        if self.current is None:
            return
        model = FLOATING_MODELS[self.current]
        q = POSTURE[self.current] + self.rng.uniform(-0.1, 0.1, model.njoints)
        want = self.stance.command(model, q)
        # the mask, odometry, IMU and joint_states are separate topics: the first answer may come
        # before the node has taken the others; the second must be the core's
        within_one_cycle(lambda: self._command(q), want, (self.current, self.stance.values))

    def _wait_for_model(self, robot: str) -> None:
        model = FLOATING_MODELS[robot]
        want = self.stance.command(model, POSTURE[robot])
        for _ in range(40):
            got = self._command(POSTURE[robot])
            if got is not None and len(got) == model.njoints and np.allclose(got, want, rtol=1e-9, atol=1e-9):
                return
        raise AssertionError(f"the node did not take the {robot} description")


def test_floating_base_events_never_end_the_node_nor_publish_a_bad_command(floating_node) -> None:
    driver, proc = floating_node
    FloatingSequences.driver, FloatingSequences.proc = driver, proc
    sequences = max(SEQUENCES // 3, 3)
    run = settings(
        max_examples=sequences,
        stateful_step_count=STEPS,
        deadline=None,
        suppress_health_check=list(HealthCheck),
        derandomize=os.environ.get("RNEA_FUZZ_RANDOM", "") == "",
    )
    COUNTS.clear()
    run_state_machine_as_test(FloatingSequences, settings=run)
    assert proc.poll() is None
    published = driver.check_published_efforts()
    print(
        f"floating sequences {COUNTS['sequences']}, steps {COUNTS['steps']}, core checks {COUNTS['checks']}, "
        f"efforts checked {published}"
    )
    assert COUNTS["sequences"] >= sequences and COUNTS["steps"] >= sequences * STEPS // 2


# --- the gravity from ~/imu: gravity_source imu_acceleration (low-passed) or imu_orientation ------

IMU_PANDA = TEXTS["panda"].replace(
    "</robot>",
    '<link name="imu_link"/><joint name="imu_mount" type="fixed"><parent link="panda_link0"/>'
    '<child link="imu_link"/><origin xyz="0.1 -0.05 0.02" rpy="0 0.3 0"/></joint></robot>',
)
IMU_MODEL = RobotModel.from_urdf(IMU_PANDA, tip_link="panda_hand")
IMU_BOUNDS = dict(zip(IMU_MODEL.joint_names, IMU_MODEL.effort_limit, strict=True))
G_EFF = np.array([0.4, -0.3, -9.6])  # root axes: what the good IMU samples give
TILT = (0.0, float(np.sin(0.05)), 0.0, float(np.cos(0.05)))  # the IMU's orientation in the world


def r_root_imu() -> np.ndarray:
    c, s = np.cos(0.3), np.sin(0.3)
    return np.array([[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]])


def rot_of(x: float, y: float, z: float, w: float) -> np.ndarray:
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
            [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
            [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
        ]
    )


F_GOOD = r_root_imu().T @ -G_EFF  # the specific force in the IMU's axes
G_TILT = r_root_imu() @ (rot_of(*TILT).T @ np.array([0.0, 0.0, -9.81]))


def gravity_imu(driver: Driver, f=F_GOOD, omega=None, quat=TILT) -> Imu:
    msg = Imu()
    msg.header.frame_id = "imu_link"
    a, o = msg.linear_acceleration, msg.orientation
    a.x, a.y, a.z = (float(v) for v in f)
    o.x, o.y, o.z, o.w = (float(v) for v in quat)
    if omega is None:
        msg.angular_velocity_covariance[0] = -1.0
    else:
        w = msg.angular_velocity
        w.x, w.y, w.z = (float(v) for v in omega)
    return stamped(driver, msg)


@pytest.fixture
def imu_node(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("imu_sequences")
    params = {
        "robot_description": IMU_PANDA, "tip_link": "panda_hand", "joint_states_timeout": TIMEOUT,
        "gravity_source": "imu_acceleration", "imu.cutoff_frequency": 5.0, "imu.timeout": TIMEOUT,
        "diagnostics_period": 0.2, **FRICTION_OFF,
    }  # fmt: skip
    proc = start_node(tmp, params)
    driver = Driver("imu_sequence_driver", IMU_BOUNDS)
    driver.imu = driver.node.create_publisher(Imu, "/inverse_dynamics/imu", 10)  # type: ignore[attr-defined]
    yield driver, proc
    driver.close()
    output = stop(proc)
    assert "Traceback" not in output, output[-3000:]


class ImuSequences(RuleBasedStateMachine):
    """IMU samples with absurd fields among good ones: none may reach the low-pass filter (its
    state would hold the gravity off for as long as it takes to forget them: 23 s for 1e308)."""

    driver: Driver
    proc = None

    @initialize(source=st.sampled_from(["imu_acceleration", "imu_orientation"]))
    def start(self, source: str) -> None:
        assert self.driver.set_parameters({"gravity_source": source})[0].successful
        self.want_gravity = G_EFF if source == "imu_acceleration" else G_TILT
        self.rng = np.random.default_rng(0)
        COUNTS["sequences"] += 1
        end = time.monotonic() + 120.0  # the node may be starting
        while time.monotonic() < end and self._answer(np.zeros(7)) is None:
            pass

    @rule(field=st.integers(0, 2), value=st.one_of(ABSURD, st.sampled_from([np.nan, np.inf])))
    def absurd_force(self, field: int, value: float) -> None:
        f = F_GOOD.copy()
        f[field] = value
        self.driver.imu.publish(gravity_imu(self.driver, f=f))
        self.driver.spin(0.01)

    @rule(omega=st.lists(st.one_of(ABSURD, st.floats(-0.1, 0.1)), min_size=3, max_size=3))
    def absurd_rate(self, omega) -> None:
        if max(abs(w) for w in omega) < 1e3:
            return  # a plausible rate is a real sample, not this machine's concern
        self.driver.imu.publish(gravity_imu(self.driver, omega=omega))
        self.driver.spin(0.01)

    @rule(quat=QUATERNION)
    def odd_orientation(self, quat) -> None:
        if abs(math.hypot(*quat) - 1.0) <= 1e-3:
            return  # a unit quaternion: another real orientation, not this machine's concern
        self.driver.imu.publish(gravity_imu(self.driver, quat=quat))
        self.driver.spin(0.01)

    @rule(values=st.lists(NUMBER, min_size=14, max_size=14))
    def joint_states(self, values) -> None:
        self.driver.joint_states.publish(self.driver.state(IMU_MODEL.joint_names, values[:7], values[7:]))
        self.driver.spin(0.01)

    def _answer(self, q: np.ndarray) -> np.ndarray | None:
        d = self.driver
        for _ in range(3):  # good samples at about 100 Hz
            d.imu.publish(gravity_imu(d))
            d.spin(0.01)
        return d.command_for(d.state(IMU_MODEL.joint_names, q, np.zeros(7)), timeout=0.5)

    @invariant()
    def alive_and_bounded(self) -> None:
        COUNTS["steps"] += 1
        assert self.proc.poll() is None, "the node process ended"
        self.driver.check_published_efforts()

    @invariant()
    def commands_like_the_core(self) -> None:
        q = self.rng.uniform(-1.0, 1.0, 7)
        tau = gravity_torques(IMU_MODEL, q, gravity=tuple(self.want_gravity))
        want = np.clip(tau, -IMU_MODEL.effort_limit, IMU_MODEL.effort_limit)
        within_one_cycle(lambda: self._answer(q), want, "imu gravity")


def test_imu_gravity_events_never_poison_the_filter(imu_node) -> None:
    driver, proc = imu_node
    ImuSequences.driver, ImuSequences.proc = driver, proc
    sequences = max(SEQUENCES // 3, 3)
    run = settings(
        max_examples=sequences,
        stateful_step_count=STEPS,
        deadline=None,
        suppress_health_check=list(HealthCheck),
        derandomize=os.environ.get("RNEA_FUZZ_RANDOM", "") == "",
    )
    COUNTS.clear()
    run_state_machine_as_test(ImuSequences, settings=run)
    assert proc.poll() is None
    print(f"imu sequences {COUNTS['sequences']}, steps {COUNTS['steps']}, core checks {COUNTS['checks']}")
    assert COUNTS["sequences"] >= sequences and COUNTS["steps"] >= sequences * STEPS // 2
