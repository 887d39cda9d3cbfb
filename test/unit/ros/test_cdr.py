"""rnea_ros.ros.cdr against rclpy's own serialization (the running middleware's), the reference:
every JointState it reads equals rclpy's reading of the same bytes, and every message it writes
reads back through rclpy as the message meant."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rclpy.serialization import deserialize_message, serialize_message
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray, MultiArrayDimension

from rnea_ros.ros.cdr import Float64ArrayWriter, JointStateReader, JointStateWriter, WireJointState

TEXT = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=12)
DOUBLES = st.lists(st.floats(width=64), max_size=9)


@st.composite
def joint_states(draw: st.DrawFn) -> JointState:
    names = draw(st.lists(TEXT, max_size=9))
    msg = JointState(name=names, position=draw(DOUBLES), velocity=draw(DOUBLES), effort=draw(DOUBLES))
    msg.header.frame_id = draw(TEXT)
    msg.header.stamp.sec = draw(st.integers(-(2**31), 2**31 - 1))
    msg.header.stamp.nanosec = draw(st.integers(0, 2**32 - 1))
    return msg


def assert_same(got: WireJointState, msg: JointState) -> None:
    assert (got.sec, got.nanosec, got.frame_id) == (
        msg.header.stamp.sec,
        msg.header.stamp.nanosec,
        msg.header.frame_id,
    )
    assert got.stamp_ns == msg.header.stamp.sec * 1_000_000_000 + msg.header.stamp.nanosec
    assert got.name == tuple(msg.name)
    for field in ("position", "velocity", "effort"):
        values = getattr(got, field)
        assert values.dtype == np.float64
        np.testing.assert_array_equal(values, np.array(getattr(msg, field), dtype=np.float64))
    assert got.header == msg.header


def test_the_reader_passes_its_self_check_here() -> None:
    assert JointStateReader().direct  # else every case below would test rclpy's path only


@settings(max_examples=300, deadline=None)
@given(st.lists(joint_states(), min_size=1, max_size=6))
def test_a_stream_reads_as_rclpy_reads_it(stream: list[JointState]) -> None:
    """Names kept from one message to the next, frame_ids of every length, empty and full arrays."""
    reader = JointStateReader()
    for msg in stream:
        raw = serialize_message(msg)
        assert_same(reader.read(raw), deserialize_message(raw, JointState))


def test_unchanged_names_give_the_same_tuple_and_changed_names_are_read_again() -> None:
    reader = JointStateReader()
    first = JointState(name=["a", "b"], position=[1.0, 2.0])
    same = JointState(name=["a", "b"], position=[3.0, 4.0])
    longer = JointState(name=["a", "bc"], position=[5.0, 6.0])
    fewer = JointState(name=["a"], position=[7.0])
    got = [reader.read(serialize_message(m)) for m in (first, same, longer, fewer)]
    assert got[0].name is got[1].name
    assert [g.name for g in got] == [("a", "b"), ("a", "b"), ("a", "bc"), ("a",)]
    assert [g.position.tolist() for g in got] == [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0], [7.0]]


@settings(max_examples=200, deadline=None)
@given(joint_states(), st.data())
def test_cut_or_damaged_bytes_give_a_value_error_or_rclpys_reading(
    msg: JointState, data: st.DataObject
) -> None:
    raw = bytearray(serialize_message(msg))
    if data.draw(st.booleans()):
        raw = raw[: data.draw(st.integers(0, len(raw)))]
    else:
        at = data.draw(st.integers(0, len(raw) - 1))
        raw[at] = data.draw(st.integers(0, 255))
    try:
        expected = deserialize_message(bytes(raw), JointState)
    except Exception:  # noqa: BLE001 - rclpy's own error types
        expected = None
    try:
        got = JointStateReader().read(bytes(raw))
    except ValueError as exc:
        assert "is not a JointState" in str(exc)
        return
    if expected is not None and got.name == tuple(expected.name):
        assert_same(got, expected)  # where both read it, alike (rclpy's may read beyond the cut)


def test_a_nul_inside_a_string_ends_it_as_rclpy_reads_it() -> None:
    msg = JointState(name=["abc", "de"], position=[1.0, 2.0])
    msg.header.frame_id = "xyz"
    raw = bytearray(serialize_message(msg))
    for text in (b"xyz", b"abc"):
        at = raw.index(text)
        raw[at + 1] = 0  # "x\0z", "a\0c"
    expected = deserialize_message(bytes(raw), JointState)
    assert expected.header.frame_id == "x" and list(expected.name) == ["a", "de"]
    assert_same(JointStateReader().read(bytes(raw)), expected)


def test_without_its_direct_path_the_reader_gives_the_same_through_rclpy() -> None:
    reader = JointStateReader()
    reader.direct = False
    msg = JointState(name=["j1", "j2"], position=[0.5, -0.5], velocity=[], effort=[1.0, 2.0])
    msg.header.frame_id = "base"
    assert_same(reader.read(serialize_message(msg)), msg)
    with pytest.raises(ValueError, match="is not a JointState"):
        reader.read(b"\x00\x01\x00\x00\x01")


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(TEXT, st.integers(-(2**31), 2**31 - 1), st.integers(0, 2**32 - 1)), min_size=1, max_size=5
    ),
    st.lists(TEXT, min_size=1, max_size=9),
    st.data(),
)
def test_written_answers_read_back_through_rclpy(
    headers: list, names: list[str], data: st.DataObject
) -> None:
    """One writer, a frame_id and stamp per message (as a driver that counts in frame_id)."""
    writer = JointStateWriter()
    for frame_id, sec, nanosec in headers:
        effort = np.array(data.draw(st.lists(st.floats(width=64), min_size=len(names), max_size=len(names))))
        msg = WireJointState(sec, nanosec, frame_id, (), effort[:0], effort[:0], effort[:0])
        raw = writer.bytes_for(msg, names, effort)
        assert raw is not None
        back = deserialize_message(raw, JointState)
        assert (back.header.stamp.sec, back.header.stamp.nanosec, back.header.frame_id) == (
            sec,
            nanosec,
            frame_id,
        )
        assert list(back.name) == names and len(back.position) == len(back.velocity) == 0
        np.testing.assert_array_equal(np.array(back.effort), effort)


def test_answers_a_writer_cannot_write_are_left_to_the_message_path() -> None:
    writer = JointStateWriter()
    msg = WireJointState(1, 2, "base", (), np.empty(0), np.empty(0), np.empty(0))
    assert writer.bytes_for(msg, [], np.empty(0)) is None  # no effort
    assert writer.bytes_for(msg, ["a", "b"], np.ones(3)) is None  # names and efforts differ in count
    assert writer.bytes_for(msg, ["a\x00b"], np.ones(1)) is None  # a NUL: not a ROS string
    assert writer.bytes_for(msg, ["a"], np.ones(1)) is not None
    as_float32 = deserialize_message(
        writer.bytes_for(msg, ["a"], np.array([0.25], dtype=np.float32)), JointState
    )
    assert list(as_float32.effort) == [0.25]  # other dtypes are converted, never sent as raw bytes
    command = Float64ArrayWriter(Float64MultiArray()).bytes_for(np.array([1, -2], dtype=np.int32))
    assert list(deserialize_message(command, Float64MultiArray).data) == [1.0, -2.0]


@settings(max_examples=100, deadline=None)
@given(
    st.lists(st.tuples(TEXT, st.integers(0, 2**32 - 1), st.integers(0, 2**32 - 1)), max_size=3),
    st.integers(0, 2**32 - 1),
    st.lists(st.lists(st.floats(width=64), max_size=9), min_size=1, max_size=4),
)
def test_written_commands_read_back_through_rclpy(dims: list, offset: int, stream: list[list[float]]) -> None:
    template = Float64MultiArray()
    template.layout.dim = [
        MultiArrayDimension(label=label, size=size, stride=stride) for label, size, stride in dims
    ]
    template.layout.data_offset = offset
    writer = Float64ArrayWriter(template)
    for values in stream:
        raw = writer.bytes_for(np.array(values, dtype=np.float64))
        assert raw is not None
        back = deserialize_message(raw, Float64MultiArray)
        assert back.layout == template.layout
        np.testing.assert_array_equal(np.array(back.data), np.array(values))
