"""The desired joint state of the inverse_dynamics node over time: trajectories for any subset of
the joints, joined and timed as ros2_control's joint_trajectory_controller (JTC) does (no ROS).

Each joint is free (no target: it follows the measured state, pure compensation), held (a target
position at rest) or driven by the running trajectory. Rules (times in integer ns of one clock):

- `receive` takes a trajectory starting at `start_ns` (0: at receipt). One ending before receipt
  is refused (TrajectoryInPastError; nothing changes). It replaces a received one whose start
  is still to come; one already started (even if no sample has come since) takes over first.
- Until its start the current desired state goes on (running trajectory, holds, free joints).
- At its takeover (the later of its start and its receipt) its first segment starts from the
  desired state at that instant (the running trajectory's q, q̇, q̈ or the held position; the
  measured state for a free joint) and reaches the first point at start + its time_from_start.
  A first point already due at the takeover (time_from_start 0, or a past start) is followed as
  is, from where the trajectory is.
- Joints with a target that it leaves out are held at rest at their desired position of that
  instant; free joints it leaves out stay free.
- After its last point its final positions are held at rest.
- `cancel` frees every joint.

The time a measured state is compared with (`sample_time_ns`) is the state's own stamp, as JTC
compares the state it read in a cycle with the desired state at that cycle's time: sampled when
the node handles the state instead, the error would read the desired state of a later instant
than the measured one, and the loop would lead the trajectory by the state's age (0.5 ms over
local DDS: 0.5 ms × q̇ on every joint of the real-time mismatch demo, docs/demos.md).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rnea_ros.errors import RneaError, TrajectoryInPastError
from rnea_ros.trajectory.sampling import TrajectorySampler

NS = 1_000_000_000
# A first point closer than this (s) to the takeover is not joined to: it is taken at once (a
# join over a shorter time would only be a step with an overflowing spline).
MIN_JOIN = 1e-6
# Trajectories kept that started but wait for a sample to take over (without joint_states the
# node samples nothing): beyond this many the oldest is dropped.
MAX_QUEUED = 16
# A state stamped further back than this (s), or ahead of the node's clock, is not sampled at its
# stamp but at the node's clock: another clock, a replay (within joint_states_timeout, 0.1 s by
# default, every state is younger)
MAX_STATE_AGE = 1.0


@dataclass(frozen=True)
class _Waiting:
    """A received trajectory before its takeover."""

    joints: np.ndarray  # model indices (int64)
    times: np.ndarray  # s from start_ns
    positions: np.ndarray
    velocities: np.ndarray | None
    accelerations: np.ndarray | None
    sampler: TrajectorySampler  # the points alone (no join), checked at receipt
    start_ns: int
    takeover_ns: int


@dataclass(frozen=True)
class _Running:
    """The trajectory being followed: `sampler` time 0 is origin_ns; held from end_ns on."""

    sampler: TrajectorySampler
    joints: np.ndarray
    origin_ns: int
    end_ns: int


class DesiredState:
    """Per-joint desired state (q, q̇, q̈) of an nv-joint model at any time; see the module text."""

    def __init__(self, nv: int) -> None:
        self.nv = nv
        self._targeted = np.zeros(nv, dtype=bool)  # held or driven by the running trajectory
        self._driven = np.zeros(nv, dtype=np.int64)  # the same as int64 (compute_efforts' `driven`)
        self._hold = np.zeros(nv)  # held positions (of targeted joints outside the running one)
        self._zero = np.zeros(nv)
        self._running: _Running | None = None
        self._any_target = False  # self._targeted.any(), kept: `idle` is asked every cycle
        self._queue: list[_Waiting] = []  # by takeover time; all but the last are due

    @property
    def idle(self) -> bool:
        """No target and nothing waiting: every joint follows the measured state."""
        return not self._queue and not self._any_target

    @property
    def targeted(self) -> np.ndarray:
        """Per joint, whether it has a target (held or driven); a copy."""
        return self._targeted.copy()

    def receive(
        self,
        joints,
        times,
        positions,
        velocities=None,
        accelerations=None,
        *,
        start_ns: int,
        now_ns: int,
    ) -> None:
        """A trajectory for model joints `joints` (indices, any order), points as
        TrajectorySampler takes them (times s from the start), starting at `start_ns` (0: now).
        RneaError when its points are bad or it ends before `now_ns`; nothing changes then."""
        index = np.asarray(joints, dtype=np.int64).reshape(-1)
        if index.size == 0:
            raise RneaError("a trajectory needs at least one joint")
        if index.min() < 0 or index.max() >= self.nv or np.unique(index).size != index.size:
            raise RneaError(f"joint indices must be distinct and in 0..{self.nv - 1}, got {index.tolist()}")
        sampler = TrajectorySampler(times, positions, velocities, accelerations)
        if sampler.nv != index.size:
            raise RneaError(f"points have {sampler.nv} values for {index.size} joints")
        start = int(start_ns) or int(now_ns)
        end = start + round(sampler.duration * NS)
        if end < now_ns:
            raise TrajectoryInPastError(
                f"it ends in the past ({(now_ns - end) / NS:.3f} s ago: header.stamp {start / NS:.3f} s "
                f"+ last time_from_start {sampler.duration:g} s, now {now_ns / NS:.3f} s); "
                "stamp it 0 to start on receipt"
            )
        queue = self._queue
        if queue and queue[-1].takeover_ns > now_ns:
            queue.pop()  # not started yet: replaced, as joint_trajectory_controller does
        if len(queue) >= MAX_QUEUED:
            del queue[0]
        queue.append(
            _Waiting(
                index,
                sampler.times.copy(),
                np.asarray(positions, dtype=float),
                None if velocities is None else np.asarray(velocities, dtype=float),
                None if accelerations is None else np.asarray(accelerations, dtype=float),
                sampler,
                start,
                max(start, int(now_ns)),
            )
        )

    def cancel(self) -> None:
        """Drop every target and every waiting trajectory: every joint follows the measured state."""
        self._targeted[:] = False
        self._driven[:] = 0
        self._any_target = False
        self._running = None
        self._queue.clear()

    def sample(
        self, now_ns: int, q: np.ndarray, qd: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(q_d, q̇_d, q̈_d, driven) at now_ns for the measured (q, q̇), in model order: new
        arrays, but `driven` (int64, 1 where a joint has a target) is shared and read-only to the
        caller. Waiting trajectories whose takeover is due take over here, in order."""
        queue = self._queue
        while queue and now_ns >= queue[0].takeover_ns:
            new = queue.pop(0)
            self._end_if_done(new.takeover_ns)
            self._take_over(new, q, qd)
        self._end_if_done(now_ns)
        return (*self._at(now_ns, q, qd), self._driven)

    def _end_if_done(self, now_ns: int) -> None:
        """A running trajectory past its last point becomes a hold of its final positions."""
        running = self._running
        if running is not None and now_ns >= running.end_ns:
            self._hold[running.joints] = running.sampler.final
            self._running = None

    def _at(self, now_ns: int, q: np.ndarray, qd: np.ndarray):
        """Desired (q, q̇, q̈) at now_ns with the current targets (new arrays)."""
        targeted, running = self._targeted, self._running
        q_d = np.where(targeted, self._hold, q)
        qd_d = np.where(targeted, self._zero, qd)
        qdd_d = np.zeros(self.nv)
        if running is not None:
            x = running.sampler.sample_at((now_ns - running.origin_ns) * 1e-9)
            j = running.joints
            q_d[j], qd_d[j], qdd_d[j] = x[0], x[1], x[2]
        return q_d, qd_d, qdd_d

    def _take_over(self, new: _Waiting, q: np.ndarray, qd: np.ndarray) -> None:
        """Switch to `new` at its takeover instant, joined to the desired state there."""
        at = new.takeover_ns
        q_0, qd_0, qdd_0 = self._at(at, q, qd)
        left_out = self._targeted.copy()
        left_out[new.joints] = False
        self._hold[left_out] = q_0[left_out]  # held at rest where they are now
        self._targeted[new.joints] = True
        self._driven[:] = self._targeted
        self._any_target = True
        j = new.joints
        lead = (at - new.start_ns) / NS  # how far the trajectory's own clock has run
        sampler, origin = new.sampler, new.start_ns
        if new.times[0] - lead > MIN_JOIN:
            try:
                sampler = TrajectorySampler(
                    new.times - lead,
                    new.positions,
                    new.velocities,
                    new.accelerations,
                    start=(q_0[j], qd_0[j], qdd_0[j]),
                )
                origin = at
            except RneaError:  # a join that overflows: the points as they are (checked at receipt)
                pass
        self._running = _Running(sampler, j, origin, origin + round(sampler.duration * NS))


def sample_time_ns(stamp_ns: int, now_ns: int) -> int:
    """The instant (node clock, ns) whose desired state a state stamped `stamp_ns` and handled
    at `now_ns` is compared with: its stamp when that is 0 to MAX_STATE_AGE s old, else now_ns
    (unstamped, from another clock, or from the future)."""
    if stamp_ns and 0 <= now_ns - stamp_ns <= MAX_STATE_AGE * NS:
        return stamp_ns
    return now_ns


__all__ = ["MAX_STATE_AGE", "DesiredState", "sample_time_ns"]
