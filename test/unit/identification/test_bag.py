"""rosbag2 JointState reading on bags written with rosbags (sqlite3 and mcap)."""

from __future__ import annotations

import numpy as np
import pytest
from rosbags.rosbag2 import Writer
from rosbags.typesys import Stores, get_typestore

from rnea_ros.identification.bag import read_joint_states, write_joint_states

NAMES = ["a", "b", "c"]


def data(count: int = 200):
    rng = np.random.default_rng(0)
    t = 100.0 + np.arange(count) * 2e-3
    return t, rng.normal(size=(count, 3)), rng.normal(size=(count, 3)), rng.normal(size=(count, 3))


@pytest.mark.parametrize("storage", ["sqlite3", "mcap"])
def test_round_trip_mapped_by_name(tmp_path, storage: str) -> None:
    t, q, qd, tau = data()
    write_joint_states(tmp_path / "bag", t, NAMES, q, qd, tau, storage=storage)
    js = read_joint_states(tmp_path / "bag", "joint_states", joints=["c", "a"])
    assert js.names == ("c", "a") and js.time_source == "header" and js.skipped == 0
    np.testing.assert_allclose(js.t, t - t[0], rtol=0, atol=1e-9)
    assert js.start == pytest.approx(t[0], abs=1e-6)
    np.testing.assert_allclose(np.diff(js.t), 2e-3, rtol=0, atol=1e-12)  # whole ns, no epoch rounding
    np.testing.assert_array_equal(js.position, q[:, [2, 0]])
    np.testing.assert_array_equal(js.velocity, qd[:, [2, 0]])
    np.testing.assert_array_equal(js.effort, tau[:, [2, 0]])
    everything = read_joint_states(tmp_path / "bag", "/joint_states")
    assert everything.names == tuple(NAMES)


def test_unstamped_messages_use_bag_time_and_missing_fields_are_none(tmp_path) -> None:
    t, q, _, _ = data()
    write_joint_states(tmp_path / "bag", t, NAMES, q, stamped=False)
    js = read_joint_states(tmp_path / "bag")
    assert js.time_source == "bag"
    np.testing.assert_allclose(js.t + js.start, t, rtol=0, atol=1e-6)
    assert js.velocity is None and js.effort is None


def test_messages_with_other_joints_or_orders_are_mapped_or_skipped(tmp_path) -> None:
    """Hand-written bag: a message order per message, a gripper-only message, out-of-order stamps."""
    store = get_typestore(Stores.ROS2_JAZZY)
    js_type = store.types["sensor_msgs/msg/JointState"]
    header, stamp = store.types["std_msgs/msg/Header"], store.types["builtin_interfaces/msg/Time"]
    msgs = [
        (2.0, ["b", "a"], [2.0, 1.0]),
        (1.0, ["a", "b"], [10.0, 20.0]),
        (1.5, ["gripper"], [0.5]),
        (3.0, ["a", "b", "x"], [5.0, 6.0, 7.0]),
        (3.0, ["a", "b"], [8.0, 9.0]),  # same stamp again: dropped
    ]
    with Writer(tmp_path / "bag", version=Writer.VERSION_LATEST) as writer:
        conn = writer.add_connection("/joint_states", js_type.__msgtype__, typestore=store)
        for k, (ts, names, pos) in enumerate(msgs):
            msg = js_type(
                header=header(stamp=stamp(sec=int(ts), nanosec=int((ts % 1) * 1e9)), frame_id=""),
                name=names,
                position=np.array(pos),
                velocity=np.zeros(0),
                effort=np.array(pos) * 10,
            )
            writer.write(conn, 1000 + k, store.serialize_cdr(msg, js_type.__msgtype__))
    js = read_joint_states(tmp_path / "bag", joints=["a", "b"])
    np.testing.assert_array_equal(js.t, [0.0, 1.0, 2.0])
    assert js.start == 1.0
    np.testing.assert_array_equal(js.position, [[10.0, 20.0], [1.0, 2.0], [5.0, 6.0]])
    np.testing.assert_array_equal(js.effort, [[100.0, 200.0], [10.0, 20.0], [50.0, 60.0]])
    assert js.velocity is None and js.skipped == 2


def test_errors_name_the_problem(tmp_path) -> None:
    t, q, _, _ = data(20)
    write_joint_states(tmp_path / "bag", t, NAMES, q, storage="mcap")
    with pytest.raises(ValueError, match="topic 'states' is not in the bag .*/joint_states"):
        read_joint_states(tmp_path / "bag", "states")
    with pytest.raises(ValueError, match="never seen: z"):
        read_joint_states(tmp_path / "bag", joints=["a", "z"])
    with pytest.raises(ValueError, match="does not exist"):
        read_joint_states(tmp_path / "missing")
    (tmp_path / "empty").mkdir()
    with pytest.raises(ValueError, match="cannot be read"):
        read_joint_states(tmp_path / "empty")
    with pytest.raises(ValueError, match="storage"):
        write_joint_states(tmp_path / "other", t, NAMES, q, storage="csv")
