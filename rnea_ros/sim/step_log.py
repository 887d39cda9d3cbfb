"""Every physics step of a simulated run, kept in the simulator's process (no ROS): recording a
1 kHz run over DDS costs a subscriber a callback per step, which a 2-core machine running the
controller in real time cannot spare.

Saved as one .npz: `stamp_ns` (int64, the joint_states stamp of each step's state), `t` (plant
time since the physics started, s), `q`, `qd`, `applied` (steps × joints, rad, rad/s, N m; the
effort applied over the step that *starts* at that state), `names` (joint names) and `latency`
(s, every state → command latency the simulator paired, in pairing order), `sent_stamp_ns` and
`sent_wall_ns` (int64: the stamp of each state published, and the wall clock when it went out).
"""

from __future__ import annotations

from array import array
from pathlib import Path

import numpy as np

CHUNK = 8192  # steps per preallocated block


class StepLog:
    """Append-only log of steps (states and the effort applied from them)."""

    def __init__(self, names: list[str]) -> None:
        self.names = list(names)
        self._blocks: list[np.ndarray] = []  # rows: t, q, qd, applied
        self._stamps: list[np.ndarray] = []  # int64: a float64 cannot hold wall-clock ns exactly
        self._n = CHUNK  # rows used in the last block (full: a new one is needed)
        self._width = 1 + 3 * len(names)
        self._latencies = array("d")  # s
        self._sent = array("q")  # stamp, wall ns of each published state, interleaved

    def add_latencies(self, samples: list[float]) -> None:
        """State → command latencies (s) paired since the last call."""
        self._latencies.extend(samples)

    def add_sent(self, stamp_ns: int, wall_ns: int) -> None:
        """A state stamped `stamp_ns` was published at wall clock `wall_ns`."""
        self._sent.extend((stamp_ns, wall_ns))

    def __len__(self) -> int:
        return max(0, (len(self._blocks) - 1) * CHUNK + self._n) if self._blocks else 0

    def append(self, stamp_ns: int, t: float, q: np.ndarray, qd: np.ndarray, applied: np.ndarray) -> None:
        if self._n == CHUNK:
            self._blocks.append(np.empty((CHUNK, self._width)))
            self._stamps.append(np.empty(CHUNK, dtype=np.int64))
            self._n = 0
        row = self._blocks[-1][self._n]
        n = len(self.names)
        self._stamps[-1][self._n] = stamp_ns
        row[0] = t
        row[1 : 1 + n], row[1 + n : 1 + 2 * n], row[1 + 2 * n :] = q, qd, applied
        self._n += 1

    def arrays(self) -> dict[str, np.ndarray]:
        """The log as arrays (see the module docstring)."""
        count = len(self)
        rows = np.concatenate(self._blocks)[:count] if self._blocks else np.empty((0, self._width))
        stamps = np.concatenate(self._stamps)[:count] if self._stamps else np.empty(0, dtype=np.int64)
        n = len(self.names)
        return {
            "stamp_ns": stamps,
            "t": rows[:, 0],
            "q": rows[:, 1 : 1 + n],
            "qd": rows[:, 1 + n : 1 + 2 * n],
            "applied": rows[:, 1 + 2 * n :],
            "names": np.array(self.names),
            "latency": np.frombuffer(self._latencies, dtype=float).copy(),
            "sent_stamp_ns": np.frombuffer(self._sent, dtype=np.int64)[0::2].copy(),
            "sent_wall_ns": np.frombuffer(self._sent, dtype=np.int64)[1::2].copy(),
        }

    def save(self, path: str | Path) -> Path:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        arrays = self.arrays()
        np.savez(path, **arrays)  # type: ignore[arg-type]
        return path


def load(path: str | Path) -> dict[str, np.ndarray]:
    """A saved log as a dict of arrays."""
    with np.load(path) as data:
        return {key: data[key] for key in data.files}
