"""The node's ~/joint_trajectory timing as joint_trajectory_controller's, seen through the PD
feedback term (kp > 0, kd = 0: ~/terms/feedback = kp (q_des − q)): a point is ramped to, not
stepped to; nothing moves before a future stamp; a trajectory that ends in the past is refused
with its reason on /diagnostics; a partial trajectory keeps the other joints held.

The node compares a state with the desired state at the state's stamp (as JTC compares the state
of a cycle with the desired state at the cycle's time), not at the moment it handles the state:
so every feedback term is exact for the stamp, on any machine speed, also for a state that comes
50 ms late.
"""

from __future__ import annotations

import re
import time

import numpy as np
import pytest
from builtin_interfaces.msg import Duration
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from rnea_ros import RobotModel
from rnea_ros.model.example_robots import example_urdf_path
from rnea_ros.ros.stamps import set_stamp, stamp_ns
from rnea_ros.testing.rosgraph import FRICTION_OFF, Driver, start_node, stop

URDF = example_urdf_path("panda").read_text()
MODEL = RobotModel.from_urdf(URDF, tip_link="panda_hand")
NAMES = list(MODEL.joint_names)
KP = 100.0
Q0 = 0.5 * (MODEL.position_lower + MODEL.position_upper)  # mid-range, at rest
ZERO = np.zeros(MODEL.nv)
TOPIC = "/inverse_dynamics/joint_trajectory"


@pytest.fixture(scope="module")
def node(tmp_path_factory):
    params = {
        "robot_description": URDF,
        "tip_link": "panda_hand",
        "feedback.kp": [KP],
        "feedback.kd": [0.0],
        # the gains as given: this driver's states come far apart, a loop the feedback bound
        # would slow down (test_delayed_loop.py tests the bound)
        "feedback.max_phase_lag": 0.0,
        "publish_terms": True,
        "diagnostics_period": 0.2,
        **FRICTION_OFF,
    }
    proc = start_node(tmp_path_factory.mktemp("trajectory"), params)
    driver = Driver("trajectory_driver", dict(zip(NAMES, MODEL.effort_limit, strict=True)))
    driver.trajectories = driver.node.create_publisher(JointTrajectory, TOPIC, 10)
    try:
        driver.wait_for_commands(lambda: driver.state(NAMES, Q0, ZERO))
        yield driver
    finally:
        driver.close()
        output = stop(proc)
        assert "Traceback" not in output, output


class Answer:
    """One command: the input's stamp (ns) and the arrival of its answer (s, node clock = system
    clock), the feedback term and the total effort (N m)."""

    def __init__(self, stamp_ns: int, arrival: float, feedback: np.ndarray, total: np.ndarray) -> None:
        self.stamp_ns, self.arrival, self.feedback, self.total = stamp_ns, arrival, feedback, total
        self.stamp = stamp_ns * 1e-9


def answer(driver: Driver, q: np.ndarray, age: float = 0.0) -> Answer:
    """The answer to a state q stamped `age` s before now."""
    msg = driver.state(NAMES, q, ZERO)
    total = driver.command_for(msg, timeout=30.0, age=age)  # a ceiling
    assert total is not None, f"no command within 30 s: {driver.latest_diagnostics()}"
    arrival = driver.node.get_clock().now().nanoseconds * 1e-9
    stamp = stamp_ns(msg.header.stamp)
    end = time.monotonic() + 2.0
    while time.monotonic() < end:
        for js in reversed(driver.terms["feedback"][-20:]):
            if stamp_ns(js.header.stamp) == stamp:
                return Answer(stamp, arrival, np.array(js.effort), total)
        driver.spin(0.005)
    raise AssertionError("no feedback term for the state")


def send(driver: Driver, joints: list[str], times, points, stamp_s: float = 0.0) -> int:
    """Publish a trajectory stamped `stamp_s` (0: none); its stamp, ns."""
    msg = JointTrajectory(joint_names=joints)
    if stamp_s:
        set_stamp(msg.header.stamp, round(stamp_s * 1e9))
    for t, p in zip(times, points, strict=True):
        sec, ns = divmod(round(t * 1e9), 1_000_000_000)
        msg.points.append(
            JointTrajectoryPoint(
                positions=[float(x) for x in p], time_from_start=Duration(sec=sec, nanosec=ns)
            )
        )
    driver.trajectories.publish(msg)
    return round(stamp_s * 1e9)


def now_s(driver: Driver) -> float:
    return driver.node.get_clock().now().nanoseconds * 1e-9


def until(driver: Driver, q: np.ndarray, done, seconds: float = 10.0) -> list[Answer]:
    """Answers to states q, published one after the other, until done(answer) (bounded)."""
    answers: list[Answer] = []
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        answers.append(answer(driver, q))
        if done(answers[-1]):
            return answers
    raise AssertionError(
        f"not done within {seconds} s (last feedback {answers[-1].feedback if answers else None})"
    )


def reset(driver: Driver) -> None:
    """Cancel every target: the feedback term of a state becomes zero."""
    driver.trajectories.publish(JointTrajectory())
    until(driver, Q0, lambda a: not a.feedback.any(), 5.0)


def hold(driver: Driver, q_hold: np.ndarray, q: np.ndarray) -> None:
    """A one-point hold of all joints at q_hold (zero stamp, time 0: at once), measured at q."""
    send(driver, NAMES, [0.0], [q_hold])
    until(driver, q, lambda a: np.allclose(a.feedback, KP * (q_hold - q), atol=1e-9), 5.0)


def ramp_fraction(stamp_ns: int, start_ns: int, duration: float) -> float:
    """The fraction of a linear ramp of `duration` s from start_ns done at stamp_ns (integers:
    exact to the nanosecond)."""
    return float(np.clip((stamp_ns - start_ns) / (duration * 1e9), 0.0, 1.0))


def round_trip(driver: Driver, q: np.ndarray) -> float:
    """The median time (s) of five answers now: the scale of this machine's delays, from which a
    test takes its time spans, so that a busy machine gets as many answers in each as a quiet one
    (0.3 s ahead and a 0.4 s ramp once gave no answer in the ramp's middle under load)."""
    times = []
    for _ in range(5):
        t0 = time.monotonic()
        answer(driver, q)
        times.append(time.monotonic() - t0)
    return float(np.median(times))


@pytest.mark.parametrize(("joints", "step"), [(NAMES, 0.1), (NAMES[:1], 1.5)])
def test_a_point_is_ramped_to_from_the_measured_state_not_stepped_to(
    node: Driver, joints: list[str], step: float
) -> None:
    """One point `step` rad away at time_from_start D (0.4 s, longer on a slow machine; positions
    only: linear, as JTC): the feedback term is kp × step × the fraction of D done at the state's
    stamp, exactly; half-way it is about half, and a 1.5 rad point does not saturate at once.
    Joints outside the trajectory (no target) have no feedback."""
    reset(node)
    index = [NAMES.index(j) for j in joints]
    rt = round_trip(node, Q0)
    # whole milliseconds: the point's time_from_start is whole ns, as the expected values' ramp
    lead, ramp = max(0.3, 10 * rt), round(max(0.4, 20 * rt), 3)
    # received well before its start: the start is known on this clock
    start_ns = send(node, joints, [ramp], [Q0[index] + step], now_s(node) + lead)
    start = start_ns * 1e-9
    answers = until(node, Q0, lambda a: a.stamp > start + ramp + 0.1, lead + ramp + 60.0)
    others = [k for k in range(MODEL.nv) if k not in index]
    for a in answers:
        expected = KP * step * ramp_fraction(a.stamp_ns, start_ns, ramp)
        assert np.allclose(a.feedback[index], expected, rtol=0.0, atol=1e-9), (a.stamp - start, a.feedback)
        assert not a.feedback[others].any()
    before = [a for a in answers if a.stamp < start]
    middle = [a for a in answers if start + ramp / 4 <= a.stamp <= start + 3 * ramp / 4]
    assert before and middle, f"no answer before the start or mid-ramp (round trip {rt:.3f} s)"
    if step > 1.0:  # at the limit with the step; well below it on the ramp's first half
        limit = MODEL.effort_limit[index[0]]
        assert all(abs(a.total[index[0]]) < limit - 1.0 for a in middle if a.stamp <= start + ramp / 2)
    assert np.allclose(answers[-1].feedback[index], KP * step, atol=1e-9)


def test_a_late_state_is_compared_with_the_desired_state_of_its_stamp(node: Driver) -> None:
    """States stamped 50 ms before they are sent, along a 0.1 rad ramp: each feedback term is kp
    × 0.1 × the fraction done at its stamp (sampled when the node handles it, it would be at
    least kp × 0.1 × 50 ms / D more: the arm would lead the trajectory by the state's age)."""
    reset(node)
    rt = round_trip(node, Q0)
    age, ramp = 0.05, round(max(1.0, 40 * rt), 3)  # whole ms (time_from_start: whole ns)
    start_ns = send(node, NAMES, [ramp], [Q0 + 0.1], now_s(node) + max(0.2, 5 * rt))
    start = start_ns * 1e-9
    late: list[Answer] = []
    end = time.monotonic() + ramp + 60.0
    while time.monotonic() < end and (not late or late[-1].stamp < start + ramp):
        late.append(answer(node, Q0, age))
    during = [a for a in late if start < a.stamp < start + ramp]
    assert len(during) >= 5, f"{len(during)} late states along the ramp (round trip {rt:.3f} s)"
    for a in during:
        expected = KP * 0.1 * ramp_fraction(a.stamp_ns, start_ns, ramp)
        seen = (a.stamp - start, a.feedback[0], expected)
        assert np.allclose(a.feedback, expected, rtol=0.0, atol=1e-9), seen
        assert a.arrival - a.stamp >= age  # it did come late
    print(f"{len(during)} states {age * 1e3:.0f} ms old along a {ramp:.2f} s ramp: exact at their stamps")


def test_a_future_trajectory_is_not_followed_before_its_stamp(node: Driver) -> None:
    """Held at q_hold, measured 0.05 rad below it; a trajectory stamped 1.5 s ahead (more on a slow
    machine: room for more than ten answers): until the stamp the hold stays (feedback kp × 0.05
    exactly), then kp × (0.05 + 0.2 × the fraction done at the state's stamp), after its last
    point the new target."""
    reset(node)
    q = Q0 - 0.05
    hold(node, Q0, q)
    rt = round_trip(node, q)
    lead = max(1.5, 25 * rt)
    start_ns = send(node, NAMES, [0.5], [Q0 + 0.2], now_s(node) + lead)
    start = start_ns * 1e-9
    answers = until(node, q, lambda a: a.stamp > start + 0.6, lead + 60.0)
    early = [a for a in answers if a.stamp < start]
    assert len(early) > 10, f"{len(early)} answers in {lead:.2f} s (round trip {rt:.3f} s)"
    for a in answers:
        expected = KP * (0.05 + 0.2 * ramp_fraction(a.stamp_ns, start_ns, 0.5))
        assert np.allclose(a.feedback, expected, rtol=0.0, atol=1e-9), (a.stamp - start, a.feedback[0])
    assert np.allclose(answers[-1].feedback, KP * 0.25, atol=1e-9)


def test_a_trajectory_that_ends_in_the_past_is_refused_with_its_reason(node: Driver) -> None:
    """Stamped 2 s ago with its last point at 0.5 s: refused (counted, reason on /diagnostics),
    and the hold before it stays."""
    reset(node)
    q = Q0 + 0.03
    hold(node, Q0, q)
    before = int(node.latest_diagnostics().get("rejected.trajectory_in_past", 0))
    send(node, NAMES, [0.5], [Q0 + 0.3], now_s(node) - 2.0)
    end = time.monotonic() + 5.0
    diag: dict[str, str] = {}
    while time.monotonic() < end:
        diag = node.diagnostics_while_publishing(lambda: node.state(NAMES, q, ZERO))
        if int(diag.get("rejected.trajectory_in_past", 0)) > before:
            break
    assert int(diag.get("rejected.trajectory_in_past", 0)) == before + 1
    ago = re.search(r"ends in the past \(([0-9.]+) s ago", diag["last_drop"])
    assert ago is not None, diag["last_drop"]
    assert 1.5 <= float(ago.group(1)) < 3.0  # ended 1.5 s before it was sent
    for _ in range(5):
        assert np.allclose(answer(node, q).feedback, KP * -0.03, atol=1e-9)


def test_a_partial_trajectory_keeps_the_other_joints_held(node: Driver) -> None:
    """After a one-point hold of all 7 joints, a trajectory for panda_joint1 alone (zero stamp):
    joint 1 goes to its new target, joints 2-7 stay held at every answer."""
    reset(node)
    q = Q0 - 0.04
    hold(node, Q0, q)
    send(node, NAMES[:1], [0.2], [[Q0[0] + 0.1]])
    answers = until(node, q, lambda a: abs(a.feedback[0] - KP * 0.14) < 1e-9, 5.0)
    for a in answers:
        assert np.allclose(a.feedback[1:], KP * 0.04, atol=1e-9)
        assert KP * 0.04 - 1e-9 <= a.feedback[0] <= KP * 0.14 + 1e-9
    for _ in range(5):  # and stay so
        a = answer(node, q)
        assert np.allclose(a.feedback, KP * np.array([0.14, *[0.04] * 6]), atol=1e-9)


@pytest.mark.parametrize(
    ("joints", "value", "named"),
    [
        (["panda_joint2", "panda_joint2"], 0.1, "joint 'panda_joint2' is listed twice"),
        (["panda_joint3", "elbow"], 0.1, "joint 'elbow' is not a movable joint"),
        (["panda_joint1", "panda_joint4"], float("nan"), "positions of 'panda_joint1' is NaN"),
    ],
)
def test_a_bad_trajectory_is_refused_naming_the_joint_and_the_hold_stays(
    node: Driver, joints: list[str], value: float, named: str
) -> None:
    reset(node)
    q = Q0 + 0.02
    hold(node, Q0, q)
    before = int(node.latest_diagnostics().get("rejected.bad_trajectory", 0))
    send(node, joints, [0.3], [[value] * len(joints)])
    end = time.monotonic() + 5.0
    diag = {"rejected.bad_trajectory": str(before)}
    while time.monotonic() < end and int(diag.get("rejected.bad_trajectory", 0)) == before:
        diag = node.diagnostics_while_publishing(lambda: node.state(NAMES, q, ZERO))
    assert int(diag["rejected.bad_trajectory"]) == before + 1
    assert named in diag["last_drop"], diag["last_drop"]
    assert np.allclose(answer(node, q).feedback, KP * -0.02, atol=1e-9)
