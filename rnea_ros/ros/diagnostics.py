"""One diagnostics style for the nodes: a node keeps its counters in a dataclass derived from
`NodeStats` (rejected inputs by reason, the last rejected robot description, internal errors by
callback, what went wrong in the current period), builds its values as a dict and publishes one
DiagnosticStatus per concern with `status` and `publish`."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field

from builtin_interfaces.msg import Time as TimeMsg
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from rclpy.publisher import Publisher


@dataclass
class NodeStats:
    """Counters every node keeps: totals since start and the current diagnostics period."""

    rejected: Counter = field(default_factory=Counter)  # reason → rejected inputs since start
    rejected_in_period: int = 0
    last_drop: str = ""  # why the last input was rejected
    model_error: str = ""  # last rejected robot description
    model_error_in_period: bool = False
    internal_errors: dict[str, str] = field(default_factory=dict)  # callback → its last exception
    internal_errors_in_period: int = 0

    def reject(self, reason: str, text: str = "") -> None:
        self.rejected[reason] += 1
        self.rejected_in_period += 1
        self.last_drop = text or reason

    def model_rejected(self, text: str) -> None:
        self.model_error = text
        self.model_error_in_period = True

    def internal_error(self, where: str, text: str) -> None:
        self.internal_errors[where] = text
        self.internal_errors_in_period += 1

    @property
    def problems_in_period(self) -> int:
        """Rejected inputs, internal errors and rejected descriptions in this period."""
        return self.rejected_in_period + self.internal_errors_in_period + int(self.model_error_in_period)

    def rejected_values(self) -> dict[str, str]:
        """`rejected.<reason>` counts, by reason."""
        return {f"rejected.{reason}": str(count) for reason, count in sorted(self.rejected.items())}

    def internal_error_values(self) -> dict[str, str]:
        """`internal_error.<callback>` texts, by callback."""
        return {f"internal_error.{where}": text for where, text in sorted(self.internal_errors.items())}

    def new_period(self) -> None:
        self.rejected_in_period = 0
        self.model_error_in_period = False
        self.internal_errors_in_period = 0


def status(
    name: str, level: bytes, message: str, hardware_id: str, values: Mapping[str, str]
) -> DiagnosticStatus:
    """A DiagnosticStatus with `values` as its key-value pairs, in order."""
    return DiagnosticStatus(
        level=level,
        name=name,
        message=message,
        hardware_id=hardware_id,
        values=[KeyValue(key=k, value=v) for k, v in values.items()],
    )


def publish(publisher: Publisher, stamp: TimeMsg, statuses: list[DiagnosticStatus]) -> None:
    """One DiagnosticArray of `statuses`, stamped."""
    msg = DiagnosticArray(status=statuses)
    msg.header.stamp = stamp
    publisher.publish(msg)


__all__ = ["NodeStats", "publish", "status"]
