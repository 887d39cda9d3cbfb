"""The JTC demo's supervisor keeps only the new simulator's states (rnea_ros.sim.demos.jtc.demo.from_rest):
a loaded supervisor still holds the previous simulator's last states, stamped beyond the next
trajectory's end, when the next simulator starts; taken as the new run's, they ended it at once
(the CI failure "no joint_states stamped within the trajectory")."""

from __future__ import annotations

from sensor_msgs.msg import JointState

from rnea_ros.sim.demos.jtc.demo import from_rest


def state(t: float) -> JointState:
    msg = JointState(name=["a"], position=[t])
    msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(round(t * 1e9), 1_000_000_000)
    return msg


def stamps(states: list[JointState]) -> list[float]:
    return [m.header.stamp.sec + m.header.stamp.nanosec * 1e-9 for m in states]


def test_the_previous_runs_states_are_dropped_up_to_the_new_rest_state() -> None:
    states = [state(3.498), state(3.499), state(3.5), state(0.0), state(0.0)]
    assert from_rest(states)
    assert stamps(states) == [0.0, 0.0]
    states += [state(0.001), state(0.002)]  # the new run moves on; nothing more is dropped
    assert from_rest(states)
    assert stamps(states) == [0.0, 0.0, 0.001, 0.002]


def test_only_stale_states_are_not_a_start() -> None:
    states = [state(3.4), state(3.5), state(1e-9)]  # 1 ns is not rest
    assert not from_rest(states)
    assert states == []
    assert not from_rest(states)
