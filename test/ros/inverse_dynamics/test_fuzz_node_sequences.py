"""Stateful fuzzing of the running node: hypothesis interleaves descriptions (robots of other
sizes, broken ones, inconsistent inertias), joint_states (for the model, for another one,
partial, from two publishers, garbage), trajectories, parameter sets and wrenches.

Invariants after every step: the process is alive, every effort it published is finite and
within the effort limit × the largest scale, and one complete fresh joint_states for the current
model gets the command the core computes (1e-9). The long run is bench/soak.py --sequences.
"""

from __future__ import annotations

import os
import re
from collections import Counter

import numpy as np
import pytest
from builtin_interfaces.msg import Duration
from geometry_msgs.msg import WrenchStamped
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule, run_state_machine_as_test
from sensor_msgs.msg import JointState
from std_msgs.msg import String
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from rnea_ros import RobotModel, gravity_torques, nonlinear_effects
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
NUMBER = st.one_of(st.floats(-3.0, 3.0), st.sampled_from([np.nan, np.inf, -np.inf, 1e300, -1e300, 0.0]))


COUNTS: Counter = Counter()  # sequences, steps, checks: printed and asserted at the end


class Law:
    """The parameters the machine has set successfully (the node's, mirrored)."""

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


@pytest.fixture(scope="module")
def node(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("sequences")
    proc = start_node(tmp, {"joint_states_timeout": TIMEOUT, "diagnostics_period": 0.2, **FRICTION_OFF})
    driver = Driver("sequence_driver", BOUNDS)
    driver.gripper = driver.node.create_publisher(JointState, "joint_states", 10)  # a second publisher
    driver.trajectories = driver.node.create_publisher(
        JointTrajectory, "/inverse_dynamics/joint_trajectory", 10
    )
    driver.wrenches = driver.node.create_publisher(WrenchStamped, "/inverse_dynamics/ee_wrench", 10)
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
        robot=st.sampled_from(sorted(TEXTS)), times=st.lists(st.floats(-0.5, 2.0), max_size=3), value=NUMBER
    )
    def trajectory(self, robot: str, times, value: float) -> None:
        names = list(MODELS[robot].joint_names)
        msg = JointTrajectory(joint_names=names)
        for t in times:
            sec = int(np.floor(t))
            msg.points.append(
                JointTrajectoryPoint(
                    positions=[float(value)] * len(names),
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
            self.law.values[name] = [float(x) for x in value] if isinstance(value, list) else value

    @rule(
        frame=st.sampled_from(["", "root", "tip", "world"]), values=st.lists(NUMBER, min_size=6, max_size=6)
    )
    def wrench(self, frame: str, values) -> None:
        msg = WrenchStamped()
        msg.header.frame_id = frame
        f, t = msg.wrench.force, msg.wrench.torque
        f.x, f.y, f.z, t.x, t.y, t.z = (float(v) for v in values)
        self.driver.wrenches.publish(msg)
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
        self.driver.trajectories.publish(JointTrajectory())  # cancel: the check is the law at rest
        self.driver.spin(0.02)
        q = self.rng.uniform(-1.0, 1.0, model.nv)
        qd = self.rng.uniform(-1.0, 1.0, model.nv)
        got = None
        for _ in range(5):  # the cancel and the state travel on two topics: either may come first
            got = self.driver.command_for(self.driver.state(model.joint_names, q, qd), timeout=1.0)
            if got is not None:
                break
        assert got is not None, f"no command for a complete joint_states of {self.current}"
        want = self.law.command(model, q, qd)
        assert np.allclose(got, want, rtol=1e-9, atol=1e-9), (self.current, got, want)
        COUNTS["checks"] += 1

    def _wait_for_model(self, robot: str) -> None:
        """Until the node answers as this robot's model does (same names may be another model)."""
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
