"""Counters of the control cycle and their diagnostic_msgs/DiagnosticStatus."""

from __future__ import annotations

from dataclasses import dataclass, field

from diagnostic_msgs.msg import DiagnosticStatus

from rnea_ros.model.robot_model import RobotModel
from rnea_ros.nodes.inverse_dynamics.cycle_model import CycleModel
from rnea_ros.nodes.inverse_dynamics.overrides import describe_payload
from rnea_ros.ros.diagnostics import NodeStats, status


@dataclass
class CycleStats(NodeStats):
    """Totals since start and the figures of the current diagnostics period (NodeStats' and the
    cycle's). Times in ns of the node clock (0: never)."""

    commands: int = 0
    ignored: int = 0  # joint_states carrying no commanded joint (another publisher's joints)
    cycle_times: list[float] = field(default_factory=list)  # s, this period
    clamped: set[str] = field(default_factory=set)  # joints clamped this period
    last_stamp_ns: int = 0  # stamp of the newest joint_states received
    last_receive_ns: int = 0  # when it was received
    last_command_ns: int = 0  # when the last command was published
    unheard: str = ""  # why nobody receives the commands (rnea_ros.ros.unheard), while so

    def published(self, now_ns: int, cycle_time: float, clamped: list[str]) -> None:
        self.commands += 1
        self.last_command_ns = now_ns
        if len(self.cycle_times) < 100_000:
            self.cycle_times.append(cycle_time)
        self.clamped.update(clamped)

    def new_period(self) -> None:
        super().new_period()
        self.cycle_times = []
        self.clamped = set()


def _age(now_ns: int, then_ns: int) -> float | None:
    return None if then_ns == 0 else (now_ns - then_ns) * 1e-9


def _friction_values(cycle: CycleModel | None) -> dict[str, str]:
    """The friction compensation's loop period and runaway guard (output joints only)."""
    if cycle is None:
        return {"friction_period_ms": "none", "friction_guard_trips": "0", "friction_faded_joints": ""}
    efforts = cycle.efforts
    tripped = efforts.guard.tripped[cycle.output]
    period = efforts.period
    return {
        "friction_period_ms": f"{period * 1e3:.3f}" if period > 0 else "none",
        "friction_guard_trips": str(efforts.guard.trips),
        "friction_faded_joints": " ".join(n for n, t in zip(cycle.output_names, tripped, strict=True) if t),
    }


SCALED = 0.999  # a feedback gain scale below this is reported


def feedback_scaled_text(cycle: CycleModel) -> str:
    """Which output joints' PD gains the feedback bound lowers, and why."""
    efforts = cycle.efforts
    scale = efforts.feedback_scale[cycle.output]
    joints = ", ".join(f"{n} x{s:.2f}" for n, s in zip(cycle.output_names, scale, strict=True) if s < SCALED)
    return (
        f"feedback gains lowered (kd x s, kp x s^2) by the loop's period {efforts.period * 1e3:.1f} ms and "
        f"state age {efforts.delay * 1e3:.1f} ms (feedback.max_phase_lag): {joints}"
    )


def _feedback_values(cycle: CycleModel | None) -> dict[str, str]:
    """The feedback bound's state (output joints only)."""
    if cycle is None:
        return {"feedback_scale_min": "none", "feedback_scaled_joints": "", "state_age_ms": "none"}
    efforts = cycle.efforts
    scale = efforts.feedback_scale[cycle.output]
    return {
        "feedback_scale_min": f"{scale.min():.3f}" if scale.size else "none",
        "feedback_scaled_joints": " ".join(
            n for n, s in zip(cycle.output_names, scale, strict=True) if s < SCALED
        ),
        "state_age_ms": f"{efforts.delay * 1e3:.3f}",
    }


def _units_values(cycle: CycleModel | None) -> dict[str, str]:
    """The effort_unit of the joints not in joint torque, when there are any."""
    if cycle is None or cycle.units is None:
        return {}
    return {"effort_units": cycle.units.text(cycle.output_names)}


def diagnostic_status(
    name: str,
    base: RobotModel | None,
    cycle: CycleModel | None,
    timeout: float,
    now_ns: int,
    stats: CycleStats,
    why: str = "",
) -> DiagnosticStatus:
    """ERROR without a model, or when commands stopped for longer than `timeout` (s) while a
    forward command controller keeps applying the last one; WARN while waiting for the first
    joint_states, on rejected input, clamping, a description rejected in this period, a
    friction term faded out by the runaway guard, or feedback gains lowered by the loop's period
    and delay; else OK. `why`: why no command would go out now (the node's current reason, for
    the message while it is silent; "": none known)."""
    times = sorted(stats.cycle_times)
    input_age = _age(now_ns, stats.last_stamp_ns)
    silent = _age(now_ns, stats.last_command_ns)
    values = {
        "model_loaded": str(cycle is not None),
        "model": "" if base is None else f"{base.name} ({base.nv} joints, root {base.root_link})",
        "model_warnings": "" if base is None else " | ".join(base.warnings),
        "joints": "" if cycle is None else " ".join(cycle.output_names),
        **_units_values(cycle),
        "input_age_s": "none" if input_age is None else f"{input_age:.4f}",
        "since_last_command_s": "none" if silent is None else f"{silent:.4f}",
        "cycle_time_median_us": f"{times[len(times) // 2] * 1e6:.1f}" if times else "none",
        "cycle_time_max_us": f"{times[-1] * 1e6:.1f}" if times else "none",
        "commands_published": str(stats.commands),
        "ignored_messages": str(stats.ignored),
        "rejected_messages": str(sum(stats.rejected.values())),
        **stats.rejected_values(),
        "last_drop": stats.last_drop,
        "clamped_joints": " ".join(sorted(stats.clamped)),
        "last_model_error": stats.model_error,
        "payload": "none" if cycle is None else describe_payload(cycle.model, cycle.payload_source),
        "wrench_links": "" if cycle is None else " ".join(cycle.wrench_links),
        **_friction_values(cycle),
        **_feedback_values(cycle),
        **stats.internal_error_values(),
    }
    threshold = timeout if timeout > 0 else 1.0
    if cycle is None:
        level, message = DiagnosticStatus.ERROR, "no model loaded"
    elif silent is not None and silent > threshold:
        lost = _age(now_ns, stats.last_receive_ns)
        if lost is None:
            why = "no joint_states received"
        elif lost > threshold:
            why = f"no joint_states for {lost:.1f} s (input lost)"
        level = DiagnosticStatus.ERROR
        why = why or "joint_states arrive, no reason known"
        message = f"no command for {silent:.1f} s (a forward controller holds the last effort): {why}"
    elif silent is None:
        level, message = (
            DiagnosticStatus.WARN,
            f"no command yet: {why or 'waiting for joint_states'}",
        )
    elif stats.unheard:  # commands that go nowhere: a remap that matched nothing
        level, message = DiagnosticStatus.WARN, stats.unheard
    elif stats.model_error_in_period:
        level, message = (
            DiagnosticStatus.WARN,
            "robot description rejected; the previous model still commands",
        )
    elif values["friction_faded_joints"]:
        level = DiagnosticStatus.WARN
        message = f"friction term faded out by the runaway guard: {values['friction_faded_joints']}"
    elif values["feedback_scaled_joints"]:
        level = DiagnosticStatus.WARN
        message = f"feedback gains lowered by a slow or late loop: {values['feedback_scaled_joints']}"
    elif stats.rejected_in_period or stats.clamped:
        level, message = DiagnosticStatus.WARN, "rejected input or clamped efforts"
    else:
        level, message = DiagnosticStatus.OK, "commanding"
    return status(f"{name}: inverse dynamics", level, message, "" if base is None else base.name, values)
