"""Counters of the control cycle and their diagnostic_msgs/DiagnosticStatus."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from diagnostic_msgs.msg import DiagnosticStatus, KeyValue

from ..model import RobotModel
from .runtime import Runtime


@dataclass
class CycleStats:
    """Totals since start and the cycle-time figures of the current diagnostics period."""

    commands: int = 0
    rejected: Counter = field(default_factory=Counter)
    rejected_in_period: int = 0
    cycle_times: list[float] = field(default_factory=list)  # s, this period
    clamped: set[str] = field(default_factory=set)  # joints clamped this period
    input_age: float | None = None  # s, of the last joint_states
    model_error: str = ""

    def published(self, cycle_time: float, clamped: list[str]) -> None:
        self.commands += 1
        if len(self.cycle_times) < 100_000:
            self.cycle_times.append(cycle_time)
        self.clamped.update(clamped)

    def reject(self, reason: str) -> None:
        self.rejected[reason] += 1
        self.rejected_in_period += 1

    def new_period(self) -> None:
        self.cycle_times = []
        self.clamped = set()
        self.rejected_in_period = 0


def diagnostic_status(
    name: str, base: RobotModel | None, runtime: Runtime | None, params: dict, stats: CycleStats
) -> DiagnosticStatus:
    """OK while commanding; WARN on stale input, rejections or clamping; ERROR without a model."""
    times = sorted(stats.cycle_times)
    age = stats.input_age
    values = {
        "model_loaded": str(runtime is not None),
        "model": "" if base is None else f"{base.name} ({base.nv} joints, root {base.root_link})",
        "joints": "" if runtime is None else " ".join(runtime.output_names),
        "input_age_s": "none" if age is None else f"{age:.4f}",
        "cycle_time_median_us": f"{times[len(times) // 2] * 1e6:.1f}" if times else "none",
        "cycle_time_max_us": f"{times[-1] * 1e6:.1f}" if times else "none",
        "commands_published": str(stats.commands),
        "rejected_messages": str(sum(stats.rejected.values())),
        **{f"rejected.{reason}": str(count) for reason, count in sorted(stats.rejected.items())},
        "clamped_joints": " ".join(sorted(stats.clamped)),
        "last_model_error": stats.model_error,
    }
    if runtime is None:
        level, message = DiagnosticStatus.ERROR, "no model loaded"
    elif age is not None and age > params["joint_states_timeout"]:
        level, message = DiagnosticStatus.WARN, "joint_states is stale: not commanding"
    elif stats.rejected_in_period or stats.clamped or stats.model_error:
        level, message = DiagnosticStatus.WARN, "rejected input, clamped efforts or a rejected model"
    elif not times:
        level, message = DiagnosticStatus.WARN, "no joint_states received in this period"
    else:
        level, message = DiagnosticStatus.OK, "commanding"
    return DiagnosticStatus(
        level=level,
        name=f"{name}: inverse dynamics",
        message=message,
        hardware_id="" if base is None else base.name,
        values=[KeyValue(key=k, value=v) for k, v in values.items()],
    )
