"""Read (and write) sensor_msgs/JointState from rosbag2 directories with the `rosbags` library.

Both storage formats of rosbag2 (sqlite3 and mcap) are read; no ROS install is needed. Times are
s since the first sample, from the message header stamps, or from the bag's receive times when a
stamp is zero (`zero_stamps` counts those messages; the command warns), kept in integer ns until
then (float seconds since the epoch round to 0.24 µs). Arrays are
(N, n) in the requested joint order: positions rad or m, velocities rad/s or m/s, efforts N m or N.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
from rosbags.rosbag2 import Reader, StoragePlugin, Writer
from rosbags.typesys import Stores, get_typestore
from rosbags.typesys.store import Typestore

from rnea_ros.errors import RneaError

JOINT_STATE = "sensor_msgs/msg/JointState"
STORAGES = {"sqlite3": StoragePlugin.SQLITE3, "mcap": StoragePlugin.MCAP}


@dataclass(frozen=True)
class JointStates:
    """Joint states of one topic: t (N,) s since `start`, arrays (N, n) in `names` order; velocity
    or effort is None when some message lacks it."""

    t: np.ndarray
    names: tuple[str, ...]
    position: np.ndarray
    velocity: np.ndarray | None
    effort: np.ndarray | None
    time_source: str  # "header" or "bag"
    start: float  # time of the first sample (header stamp or bag time), s since the epoch
    skipped: int  # messages without every joint of `names`, or with a repeated time
    zero_stamps: int = 0  # messages whose header stamp is 0 (then every time is the bag's)


def typestore() -> Typestore:
    """The ROS 2 Jazzy message types (rosbags)."""
    return get_typestore(Stores.ROS2_JAZZY)


def _topic(reader: Reader, topic: str):
    """The connections of `topic` ("joint_states" also matches "/joint_states")."""
    want = topic.lstrip("/")
    conns = [c for c in reader.connections if c.topic.lstrip("/") == want]
    if not conns:
        available = sorted({c.topic for c in reader.connections})
        raise RneaError(f"topic '{topic}' is not in the bag (topics: {', '.join(available) or 'none'})")
    types = {c.msgtype for c in conns}
    if types != {JOINT_STATE}:
        raise RneaError(f"topic '{topic}' has type {', '.join(sorted(types))}, not {JOINT_STATE}")
    return conns


def read_joint_states(
    path: str | Path, topic: str = "joint_states", joints: Sequence[str] | None = None
) -> JointStates:
    """JointState messages of `topic` in a rosbag2 directory, mapped by name to `joints` (default:
    the joints of the first message). Messages lacking one of `joints` are skipped; ValueError when
    the bag cannot be read, the topic is missing or of another type, or no message has every joint
    (naming those never seen)."""
    path = Path(path)
    if not path.exists():
        raise RneaError(f"bag '{path}' does not exist")
    store = typestore()
    try:
        reader = Reader(path)
        reader.open()
    except Exception as exc:  # rosbags raises several types for unreadable input
        raise RneaError(f"bag '{path}' cannot be read: {exc}") from None
    try:
        conns = _topic(reader, topic)
        names = None if joints is None else tuple(joints)
        stamps, bag_times, pos, vel, eff = [], [], [], [], []
        has_vel = has_eff = True
        seen: set[str] = set()
        skipped = 0
        for conn, timestamp, raw in reader.messages(connections=conns):
            msg: Any = store.deserialize_cdr(raw, conn.msgtype)  # a sensor_msgs/JointState
            index = {name: i for i, name in enumerate(msg.name)}
            seen.update(index)
            if names is None:
                names = tuple(msg.name)
            if (
                len(index) != len(msg.name)
                or len(msg.position) != len(msg.name)
                or any(n not in index for n in names)
            ):
                skipped += 1
                continue
            take = [index[n] for n in names]
            pos.append(np.asarray(msg.position, dtype=float)[take])
            if len(msg.velocity) == len(msg.name):
                vel.append(np.asarray(msg.velocity, dtype=float)[take])
            else:
                has_vel = False
            if len(msg.effort) == len(msg.name):
                eff.append(np.asarray(msg.effort, dtype=float)[take])
            else:
                has_eff = False
            stamps.append(msg.header.stamp.sec * 1_000_000_000 + msg.header.stamp.nanosec)
            bag_times.append(timestamp)
    finally:
        reader.close()
    if names is None:
        raise RneaError(f"topic '{topic}' has no messages")
    if not pos:
        missing = [n for n in names if n not in seen]
        raise RneaError(
            f"no message on '{topic}' has every joint; never seen: {', '.join(missing) or 'none'}"
        )
    stamps_a = np.array(stamps, dtype=np.int64)  # ns: float s since the epoch would round to 0.2 µs
    source = "header" if np.all(stamps_a > 0) else "bag"
    ns = stamps_a if source == "header" else np.array(bag_times, dtype=np.int64)
    order = np.argsort(ns, kind="stable")
    ns = ns[order]
    t = (ns - ns[0]) * 1e-9
    keep = np.concatenate([[True], np.diff(t) > 0])  # a repeated time carries no new sample
    sel = order[keep]
    return JointStates(
        t=t[keep],
        names=names,
        position=np.array(pos)[sel],
        velocity=np.array(vel)[sel] if has_vel else None,
        effort=np.array(eff)[sel] if has_eff else None,
        time_source=source,
        start=ns[0] * 1e-9,
        skipped=skipped + int(np.sum(~keep)),
        zero_stamps=int(np.sum(stamps_a <= 0)),
    )


def write_joint_states(
    path: str | Path,
    t: npt.ArrayLike,
    names: Sequence[str],
    position: npt.ArrayLike,
    velocity: npt.ArrayLike | None = None,
    effort: npt.ArrayLike | None = None,
    topic: str = "/joint_states",
    storage: str = "sqlite3",
    stamped: bool = True,
) -> Path:
    """Write JointState messages to a new rosbag2 directory `path` (storage "sqlite3" or "mcap").

    t (N,) s is the bag receive time and, with `stamped`, the header stamp (else zero stamps).
    Arrays (N, n) in `names` order; None leaves that field empty.
    """
    if storage not in STORAGES:
        raise RneaError(f"storage must be one of {tuple(STORAGES)}, got '{storage}'")
    t = np.asarray(t, dtype=float)
    position = np.asarray(position, dtype=float)
    arrays = [None if a is None else np.asarray(a, dtype=float) for a in (velocity, effort)]
    store = typestore()
    js = store.types[JOINT_STATE]
    header = store.types["std_msgs/msg/Header"]
    time = store.types["builtin_interfaces/msg/Time"]
    empty = np.zeros(0)
    with Writer(path, version=Writer.VERSION_LATEST, storage_plugin=STORAGES[storage]) as writer:
        conn = writer.add_connection(topic, JOINT_STATE, typestore=store)
        for k, tk in enumerate(t):
            ns = int(round(tk * 1e9))
            stamp = time(sec=ns // 1_000_000_000, nanosec=ns % 1_000_000_000) if stamped else time(0, 0)
            msg = js(
                header=header(stamp=stamp, frame_id=""),
                name=list(names),
                position=position[k],
                velocity=empty if arrays[0] is None else arrays[0][k],
                effort=empty if arrays[1] is None else arrays[1][k],
            )
            writer.write(conn, ns, store.serialize_cdr(msg, JOINT_STATE))
    return Path(path)
