"""JointState and Float64MultiArray as the middleware carries them (CDR bytes), for the hot path:
read a joint_states message taken raw without building a JointState, and publish efforts as
bytes built from a prefix kept per header and names, without building or serializing a message.

A JointState built and converted by rclpy costs the node's cycle more than its whole effort law
(taking it and serializing the outputs; the figures: docs/performance.md): here a
message is a few slices, `np.frombuffer` copies and one bytes join. rclpy's public API carries the
bytes: a subscription created with `raw=True` hands its callback the serialized message, and
`Publisher.publish` takes bytes as already serialized.

The format is the one ROS 2's middlewares use (Fast DDS, Cyclone DDS, Zenoh): classic CDR, little
endian, after the 4-byte encapsulation header 00 01 00 00; every primitive aligned to its size
counted from the end of that header; a string is its length with the NUL, its bytes and the NUL;
a sequence its count, then its elements. Each reader and writer checks itself once against
rclpy's own (de)serializer (`rclpy.serialization`, the running middleware's): where the two
disagree (another format, a big-endian host), it uses rclpy's conversion instead, so a message is
never misread, only read slower.
"""

from __future__ import annotations

import struct
import sys
from collections.abc import Sequence
from typing import Any

import numpy as np
from rclpy.serialization import deserialize_message, serialize_message
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray, Header

__all__ = ["Float64ArrayWriter", "JointStateReader", "JointStateWriter", "WireJointState"]

ENCAPSULATION = b"\x00\x01\x00\x00"  # CDR, little endian, no options
_NATIVE = sys.byteorder == "little"  # the arrays read are float64 in the host's order
_F8 = np.dtype("<f8")
_U32 = struct.Struct("<I")
_STAMP = struct.Struct("<iI")  # builtin_interfaces/Time: int32 sec, uint32 nanosec
_HEAD = struct.Struct("<iII")  # the stamp, then the length of header.frame_id
_EMPTY = np.empty(0)
_EMPTY.flags.writeable = False


class WireJointState:
    """A joint_states message as the node uses it: `name` a tuple (the same tuple object for every
    message with the same names), `position`, `velocity`, `effort` float64 arrays (empty when the
    message has none), the stamp as `sec`, `nanosec` and `stamp_ns`, `frame_id`; `header` builds a
    std_msgs/Header on first use."""

    __slots__ = ("_header", "effort", "frame_id", "name", "nanosec", "position", "sec", "velocity")

    def __init__(
        self, sec: int, nanosec: int, frame_id: str, name: tuple[str, ...], position: np.ndarray,
        velocity: np.ndarray, effort: np.ndarray,
    ) -> None:  # fmt: skip
        self.sec = sec
        self.nanosec = nanosec
        self.frame_id = frame_id
        self.name = name
        self.position = position
        self.velocity = velocity
        self.effort = effort
        self._header: Header | None = None

    @property
    def stamp_ns(self) -> int:
        return self.sec * 1_000_000_000 + self.nanosec

    @property
    def header(self) -> Header:
        if self._header is None:
            header = Header(frame_id=self.frame_id)
            header.stamp.sec = self.sec
            header.stamp.nanosec = self.nanosec
            self._header = header
        return self._header

    @classmethod
    def of(cls, msg: JointState) -> WireJointState:
        """From a JointState (rclpy's conversion): the same fields."""
        return cls(
            msg.header.stamp.sec, msg.header.stamp.nanosec, msg.header.frame_id, tuple(msg.name),
            _doubles_of(msg.position), _doubles_of(msg.velocity), _doubles_of(msg.effort),
        )  # fmt: skip


def _doubles_of(values: Sequence[float]) -> np.ndarray:
    return np.array(values, dtype=np.float64) if len(values) else _EMPTY


class JointStateReader:
    """Reads serialized JointState messages (`read(raw)`); keeps the last names block, so that a
    stream with unchanging names costs one bytes comparison for them."""

    __slots__ = ("_block", "_names", "direct")

    def __init__(self) -> None:
        self._block = b""  # the last names sequence as bytes: its count, then its strings
        self._names: tuple[str, ...] = ()
        self.direct = _NATIVE and _reads_as_rclpy(self)  # else every message goes through rclpy

    def read(self, raw: bytes) -> WireJointState:
        """The message; ValueError when the bytes are not a JointState (named so)."""
        if self.direct and raw[:2] == ENCAPSULATION[:2]:
            try:
                return self._parse(raw)
            except (struct.error, ValueError, IndexError):
                pass  # malformed for this reader: rclpy's conversion decides
        try:
            return WireJointState.of(deserialize_message(raw, JointState))
        except Exception as exc:  # noqa: BLE001 - rclpy raises its own error types
            raise ValueError(
                f"a joint_states message of {len(raw)} bytes is not a JointState: {exc}"
            ) from None

    def _parse(self, raw: bytes) -> WireJointState:
        sec, nanosec, length = _HEAD.unpack_from(raw, 4)
        end = 16 + length
        if length == 0 or raw[end - 1] != 0:
            raise ValueError("frame_id")
        frame_id = _text(raw[16 : end - 1]) if length > 1 else ""
        at = (end + 3) & ~3  # offsets count from the buffer; its header is 4 bytes: same 4-alignment
        block = self._block
        if block and raw.startswith(block, at):
            names = self._names
            at += len(block)
        else:
            names, stop = _strings(raw, at)
            self._block, self._names = raw[at:stop], names
            at = stop
        position, at = _doubles(raw, at)
        velocity, at = _doubles(raw, at)
        effort, _ = _doubles(raw, at)
        return WireJointState(sec, nanosec, frame_id, names, position, velocity, effort)


def _strings(raw: bytes, at: int) -> tuple[tuple[str, ...], int]:
    """A sequence of strings at `at` (4-aligned): the strings and the offset after the last one."""
    (count,) = _U32.unpack_from(raw, at)
    if count > len(raw):
        raise ValueError("name count")
    at += 4
    names = []
    for _ in range(count):
        at = (at + 3) & ~3
        (length,) = _U32.unpack_from(raw, at)
        at += 4
        end = at + length
        if length == 0 or end > len(raw) or raw[end - 1] != 0:
            raise ValueError("name")
        names.append(_text(raw[at : end - 1]))
        at = end
    return tuple(names), at


def _text(data: bytes) -> str:
    """A string's bytes as rclpy reads them: up to the first NUL, UTF-8 with replacement."""
    if b"\x00" in data:
        data = data[: data.index(b"\x00")]
    return data.decode("utf-8", "replace")


def _doubles(raw: bytes, at: int) -> tuple[np.ndarray, int]:
    """A float64 sequence whose count is at the next 4-aligned offset: a copy, and the offset after."""
    at = (at + 3) & ~3
    (count,) = _U32.unpack_from(raw, at)
    at += 4
    if count == 0:
        return _EMPTY, at
    at += (4 - at) & 7  # 8-aligned counted from the end of the 4-byte header
    return np.frombuffer(raw, _F8, count, at).copy(), at + 8 * count


class _Cdr:
    """Builds CDR bytes (after the encapsulation header) field by field, for the prefixes."""

    def __init__(self, start: int) -> None:
        self.out = bytearray()
        self.start = start  # offset counted from the end of the header where `out` begins

    def align(self, size: int) -> None:
        self.out += bytes(-(self.start + len(self.out)) % size)

    def u32(self, value: int) -> None:
        self.align(4)
        self.out += _U32.pack(value)

    def string(self, text: str) -> None:
        data = text.encode("utf-8") + b"\x00"
        self.u32(len(data))
        self.out += data


class JointStateWriter:
    """Serialized JointState answers: the input's stamp and frame_id, `names`, no position or
    velocity, `effort`. `bytes_for(...)` builds one; None where a message must be published
    instead (its self-check failed, a frame_id or name holds a NUL, or no effort). The frame_id
    may change with every message (some drivers count in it); the names part is kept."""

    __slots__ = ("_frame", "_frame_id", "_key", "_tails", "direct")

    def __init__(self) -> None:
        self._frame_id: str | None = None  # the last frame_id, and its bytes (a string, padded)
        self._frame = b""
        self._key: tuple[Any, int] | None = None  # (names object, n) of `_tails`
        self._tails: dict[int, bytes] = {}  # names and counts up to the efforts, per start offset mod 8
        self.direct = _NATIVE

    def bytes_for(self, msg: WireJointState, names: Sequence[str], effort: np.ndarray) -> bytes | None:
        if not self.direct:
            return None
        if effort.dtype is not _F8:
            effort = effort.astype(_F8)
        if msg.frame_id != self._frame_id:
            if "\x00" in msg.frame_id:
                return None
            cdr = _Cdr(8)  # after the stamp
            cdr.string(msg.frame_id)
            cdr.align(4)
            self._frame_id, self._frame = msg.frame_id, bytes(cdr.out)
        n = len(effort)
        key = self._key
        if key is None or key[0] is not names or key[1] != n:
            if n == 0 or n != len(names) or any("\x00" in s for s in names):
                return None
            self._key, self._tails = (names, n), {}
        start = (8 + len(self._frame)) & 7
        tail = self._tails.get(start)
        if tail is None:
            tail = self._tail(names, n, start)
            if tail is None:
                return None
        return b"".join(
            (ENCAPSULATION, _STAMP.pack(msg.sec, msg.nanosec), self._frame, tail, effort.tobytes())
        )

    def _tail(self, names: Sequence[str], n: int, start: int) -> bytes | None:
        """The bytes from the name count to the first effort, starting at an offset ≡ start
        (mod 8); checked once against rclpy's reading of a whole message."""
        cdr = _Cdr(start)
        cdr.u32(len(names))
        for name in names:
            cdr.string(name)
        cdr.u32(0)  # position
        cdr.u32(0)  # velocity
        cdr.u32(n)  # effort
        cdr.align(8)
        tail = bytes(cdr.out)
        probe = np.arange(1.0, n + 1.0)
        raw = b"".join((ENCAPSULATION, _STAMP.pack(-7, 123), self._frame, tail, probe.tobytes()))
        msg = deserialize_message(raw, JointState)  # the self-check: rclpy reads what it would write
        if not (
            msg.header.stamp.sec == -7 and msg.header.stamp.nanosec == 123
            and msg.header.frame_id == self._frame_id and list(msg.name) == list(names)
            and len(msg.position) == len(msg.velocity) == 0 and list(msg.effort) == probe.tolist()
        ):  # fmt: skip
            self.direct = False
            return None
        self._tails[start] = tail
        return tail


class Float64ArrayWriter:
    """Serialized Float64MultiArray with a fixed layout (`template.layout`) and `data` the values
    of each call. `bytes_for(values)`; None where a message must be published instead."""

    __slots__ = ("_n", "_prefix", "direct", "template")

    def __init__(self, template: Float64MultiArray) -> None:
        self.template = template
        self._n = -1
        self._prefix = b""
        self.direct = _NATIVE

    def bytes_for(self, values: np.ndarray) -> bytes | None:
        n = len(values)
        if n != self._n and not self._prepare(n):
            return None
        if values.dtype is not _F8:
            values = values.astype(_F8)
        return self._prefix + values.tobytes() if self.direct else None

    def _prepare(self, n: int) -> bool:
        if not self.direct:
            return False
        layout = self.template.layout
        cdr = _Cdr(0)
        cdr.u32(len(layout.dim))
        for dim in layout.dim:
            if "\x00" in dim.label:
                self.direct = False
                return False
            cdr.string(dim.label)
            cdr.u32(dim.size)
            cdr.u32(dim.stride)
        cdr.u32(layout.data_offset)
        cdr.u32(n)
        if n:
            cdr.align(8)
        prefix = ENCAPSULATION + bytes(cdr.out)
        probe = np.arange(1.0, n + 1.0)
        expected = Float64MultiArray(layout=layout, data=probe.tolist())
        if deserialize_message(prefix + probe.tobytes(), Float64MultiArray) != expected:  # self-check
            self.direct = False
            return False
        self._prefix, self._n = prefix, n
        return True


def _reads_as_rclpy(reader: JointStateReader) -> bool:
    """The reader's self-check: rclpy's serialization of awkward messages (every frame_id and name
    length modulo 4, empty and full sequences) reads back field for field."""
    for frame_id, names, velocity in (
        ("", [], []),
        ("b", ["a", "bc", "def", "ghij", "é"], [0.5] * 5),
        ("abcd", ["x"], []),
    ):
        msg = JointState(name=names, position=[float(i) for i in range(len(names))], velocity=velocity)
        msg.header.frame_id = frame_id
        msg.header.stamp.sec, msg.header.stamp.nanosec = -3, 999_999_999
        msg.effort = [2.5] * len(names)
        try:
            got = reader._parse(serialize_message(msg))
        except (struct.error, ValueError, IndexError):
            return False
        if (
            got.sec != -3 or got.nanosec != 999_999_999 or got.frame_id != frame_id or list(got.name) != names
            or got.position.tolist() != list(msg.position) or got.velocity.tolist() != list(msg.velocity)
            or got.effort.tolist() != list(msg.effort)
        ):  # fmt: skip
            return False
    reader._block, reader._names = b"", ()
    return True
