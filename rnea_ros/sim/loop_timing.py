"""How the real controller manager's loop and topic_based_ros2_control's topics behave against the
simulator in real time (no ROS): the cycles joint_state_broadcaster stamped, and how old the state
each cycle read was.

Inputs: joint_state_broadcaster's /joint_states (one per controller manager cycle, stamped with the
cycle's time, wall clock in real time; velocities of the joints) and the simulator's step log
(rnea_ros.sim.step_log: the wall-clock stamp at which each physics state holds, its velocities).
A cycle's state is found in the log by its exact velocities (a moving arm's velocities are unique
to one step); cycles at rest are not matched. Times in s.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

QUANTILES = (10, 25, 50, 75, 90, 95, 99)


@dataclass(frozen=True)
class LoopTiming:
    """The controller manager's cycles and the age of the states they read."""

    cycles: int  # joint_state_broadcaster messages
    period: tuple[float, float, float]  # median, p99, max time between two cycles, s
    missed: int  # cycles that did not run: Σ max(round(gap / nominal) − 1, 0)
    matched: int  # cycles whose state was found in the step log
    age: tuple[float, float, float]  # median, p99, max (cycle stamp − stamp of the state read), s
    repeated: int  # matched cycles that read the same state as the cycle before (no new state)
    queued: int  # matched cycles that read a state older than the newest one sent before them
    age_quantiles: tuple[float, ...] = ()  # p10, p25, p50, p75, p90, p95, p99 of the age, s

    def to_dict(self) -> dict:
        return {
            "cycles": self.cycles,
            "period_s": list(self.period),
            "missed": self.missed,
            "matched": self.matched,
            "age_s": list(self.age),
            "age_quantiles_s": list(self.age_quantiles),
            "repeated": self.repeated,
            "queued": self.queued,
        }

    def lines(self) -> str:
        p, a = self.period, self.age
        return (
            f"controller manager: {self.cycles} cycles, period median {p[0] * 1e3:.3f} ms, p99 "
            f"{p[1] * 1e3:.3f} ms, max {p[2] * 1e3:.1f} ms; missed cycles {self.missed}\n"
            f"state read by a cycle ({self.matched} moving cycles matched): age median {a[0] * 1e3:.3f} ms, "
            f"p99 {a[1] * 1e3:.3f} ms, max {a[2] * 1e3:.1f} ms; the same state as the cycle before "
            f"{self.repeated}, an older state than the newest already sent {self.queued}"
        )


def _stats(x: np.ndarray) -> tuple[float, float, float]:
    if x.size == 0:
        return (float("nan"), float("nan"), float("nan"))
    return float(np.median(x)), float(np.percentile(x, 99)), float(np.max(x))


def loop_timing(
    cycle_stamps: np.ndarray,
    cycle_velocities: np.ndarray,
    state_stamps: np.ndarray,
    state_velocities: np.ndarray,
    sent_stamps: np.ndarray,
    sent_wall: np.ndarray,
    nominal: float = 1e-3,
) -> LoopTiming:
    """The timing of `cycle_stamps` (N,) ns with the velocities (N, n) each cycle read, against the
    simulator's steps (`state_stamps` (M,) ns, `state_velocities` (M, n)) and the states it
    published (`sent_stamps`: their stamps, `sent_wall`: when, both ns)."""
    cycle_stamps = np.asarray(cycle_stamps, dtype=np.int64)
    order = np.argsort(cycle_stamps, kind="stable")
    cycle_stamps, cycle_velocities = cycle_stamps[order], np.asarray(cycle_velocities)[order]
    gaps = np.diff(cycle_stamps) * 1e-9
    missed = int(np.maximum(np.round(gaps / nominal) - 1, 0).sum()) if gaps.size else 0
    index: dict[bytes, int] = {}
    for k, v in enumerate(np.asarray(state_velocities, dtype=float)):
        if np.any(v != 0.0):
            index.setdefault(v.tobytes(), k)
    sent_order = np.argsort(np.asarray(sent_wall, dtype=np.int64), kind="stable")
    sent_wall = np.asarray(sent_wall, dtype=np.int64)[sent_order]
    newest_sent = np.maximum.accumulate(np.asarray(sent_stamps, dtype=np.int64)[sent_order])
    ages, read, queued = [], [], 0
    for stamp, v in zip(cycle_stamps, cycle_velocities, strict=True):
        found = index.get(np.ascontiguousarray(v, dtype=float).tobytes())
        if found is None:
            continue
        k = found
        state = int(state_stamps[k])
        ages.append((stamp - state) * 1e-9)
        read.append(k)
        j = int(np.searchsorted(sent_wall, stamp, side="right")) - 1  # the states sent before
        if j >= 0 and newest_sent[j] > state:
            queued += 1
    repeated = int(np.sum(np.diff(read) == 0)) if len(read) > 1 else 0
    return LoopTiming(
        int(cycle_stamps.size),
        _stats(gaps),
        missed,
        len(read),
        _stats(np.asarray(ages)),
        repeated,
        queued,
        tuple(float(x) for x in np.percentile(ages, QUANTILES)) if ages else (),
    )


__all__ = ["LoopTiming", "loop_timing"]
