"""rnea_ros.sim.demos.mismatch.demo's recording: joint_states messages → a rosbag2, read back by
identify's own reader (rnea_ros.identification.bag)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from sensor_msgs.msg import JointState

from rnea_ros.identification.bag import read_joint_states
from rnea_ros.sim.demos.mismatch.demo import record_bag

NAMES = ["a", "b"]


def messages(origin_ns: int, count: int = 5000) -> list[JointState]:
    """1 kHz states from plant time 0, stamped origin_ns + t (q = t, q̇ = 1, effort = 2 t)."""
    out = []
    for k in range(count):
        t_ns = origin_ns + k * 1_000_000
        msg = JointState(
            name=NAMES, position=[k * 1e-3, -k * 1e-3], velocity=[1.0, -1.0], effort=[2e-3 * k, 0.0]
        )
        msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(t_ns, 1_000_000_000)
        out.append(msg)
    return out


def test_a_lockstep_recording_is_cut_to_its_window(tmp_path: Path) -> None:
    bag, count, lost = record_bag(messages(0), (1.0, 3.0), tmp_path / "bag")
    assert (count, lost) == (2001, 0)
    states = read_joint_states(bag, joints=NAMES)
    np.testing.assert_allclose(states.start + states.t, np.arange(1000, 3001) * 1e-3, atol=1e-12)
    np.testing.assert_allclose(states.position[:, 0], np.arange(1000, 3001) * 1e-3, atol=1e-12)


def test_a_real_time_recording_is_stamped_by_the_wall_clock(tmp_path: Path) -> None:
    """In real time the simulator stamps joint_states with the wall clock (plant time 0 at the
    stamp `origin_ns`): the window (plant time) selects the same states, and the bag is at
    plant time. Before, no stamp fell in the window: 'no joint_states within 1.000..3.000 s'."""
    origin = 1_795_832_000_123_456_789  # ns, a wall-clock stamp
    recorded = messages(origin)
    del recorded[1500:1510]  # ten the recorder lost
    bag, count, lost = record_bag(recorded, (1.0, 3.0), tmp_path / "bag", origin)
    assert (count, lost) == (1991, 10)
    states = read_joint_states(bag, joints=NAMES)
    kept = np.r_[1000:1500, 1510:3001] * 1e-3
    np.testing.assert_allclose(states.start + states.t, kept, atol=1e-9)
    np.testing.assert_allclose(states.position[:, 0], kept, atol=1e-12)
    np.testing.assert_allclose(states.effort[:, 0], 2 * kept, atol=1e-12)
