"""Online payload estimation for the inverse_dynamics node (`payload.estimation`, off by default):
a helper the node calls after the contact monitor, once per command cycle.

The estimate is of the load on `payload.link` (empty: tip_link), from the momentum observer's
external torques (observer.enabled is needed), by `rnea_ros.estimation.payload_monitor`:
  on_request  `~/estimate_payload` (std_srvs/Trigger) estimates over the last
              payload.estimation_window seconds and answers with the estimate and its standard
              deviations, or the reason it refuses; an estimate is blended into the model;
  auto        the same, started by the collision flag (~/collision) held for
              payload.trigger_hold seconds; the service answers too.
An estimate becomes the model's one payload, as a ~/payload message would (replacing the
payload.* parameters' or a message's), blended in over payload.blend_time; once in, it is
published on `~/payload` (geometry_msgs/InertiaStamped, header.frame_id the link; mass 0: the
payload was removed) and named "estimated" on /diagnostics. Setting a payload.mass, .com,
.inertia or .link parameter or a ~/payload message ends a blend and replaces the estimate. The
node ignores its own ~/payload messages. Refusals are logged (warning), answered and shown on
/diagnostics ("<node>: payload estimation").
"""

from __future__ import annotations

import numpy as np
from diagnostic_msgs.msg import DiagnosticStatus
from geometry_msgs.msg import InertiaStamped
from rclpy.node import Node
from rclpy.parameter import Parameter
from std_msgs.msg import Header
from std_srvs.srv import Trigger

from rnea_ros.errors import ParameterError, RneaError
from rnea_ros.estimation.payload import PayloadLimits
from rnea_ros.estimation.payload_monitor import SAMPLE_RATE, MonitorSettings, Outcome, PayloadMonitor
from rnea_ros.estimation.payload_stream import PayloadStream
from rnea_ros.model.robot_model import Payload, RobotModel
from rnea_ros.nodes.inverse_dynamics.cycle_model import CycleModel
from rnea_ros.ros.diagnostics import status

OFF = "off"
ECHOES = 5  # own ~/payload messages recognised when they come back


def check(params: dict, model: RobotModel | None = None) -> None:
    """Rules between the estimation parameters and the others; ParameterError naming one."""
    if params["payload.estimation"] == OFF:
        return
    if not params["observer.enabled"]:
        raise ParameterError("payload.estimation", "needs observer.enabled (it reads the external torques)")
    if params["root_joint"] != "fixed":
        raise ParameterError("payload.estimation", "needs root_joint fixed")
    if params["payload.estimation_max_window"] < params["payload.estimation_window"]:
        raise ParameterError("payload.estimation_max_window", "must be at least payload.estimation_window")
    link = params["payload.link"] or params["tip_link"]
    if not link:
        raise ParameterError(
            "payload.estimation", "needs payload.link or tip_link (the link carrying the load)"
        )
    if model is not None:
        frame = model.link_frames.get(link)
        if frame is None or frame.body < 0:
            raise ParameterError(
                "payload.link", f"link '{link}' is not a link of the model that a joint moves"
            )


def off_as_string(params: list[Parameter]) -> list[Parameter]:
    """A pre-set parameters callback: `payload.estimation` set to false (what YAML, and so
    `ros2 param set ... payload.estimation off`, makes of an unquoted off) is "off"."""
    return [
        Parameter(p.name, Parameter.Type.STRING, OFF)
        if p.name == "payload.estimation" and p.type_ == Parameter.Type.BOOL and p.value is False
        else p
        for p in params
    ]


def settings_of(params: dict) -> MonitorSettings:
    return MonitorSettings(
        params["payload.estimation"],
        params["payload.estimation_window"],
        params["payload.estimation_max_window"],
        params["payload.trigger_hold"],
        params["payload.blend_time"],
        PayloadLimits(
            params["payload.min_mass"],
            params["payload.max_com_distance"],
            params["payload.min_rotation"],
            params["payload.max_mismatch"],
        ),
    )


class PayloadEstimation:
    """The node's payload estimation; `cycle` once per command after the contact monitor,
    `status` for diagnostics. `apply(payload)` puts a payload into the node's model (whether it
    could)."""

    def __init__(self, node: Node, apply) -> None:
        self._node = node
        self._apply = apply
        self._monitor: PayloadMonitor | None = None
        self._key: tuple | None = None  # what the monitor's stream was built for
        self._params: dict | None = None  # the parameters the monitor's settings come from
        self._model: RobotModel | None = None  # the cycle's model at the last cycle
        self._origin_ns = 0  # times are seconds from the first stamp (precision)
        self._last_ns = 0
        self._current: Payload | None = None  # the model's payload on the link at the last cycle
        self._published: list[tuple] = []  # the last ECHOES ~/payload sent: their fields (echo check)
        self._pub = node.create_publisher(InertiaStamped, "~/payload", 10)
        self._srv = node.create_service(Trigger, "~/estimate_payload", self._on_request)
        self.problem = ""

    # --- per cycle ------------------------------------------------------------------------

    def _monitor_for(self, cycle: CycleModel, params: dict, base: RobotModel) -> PayloadMonitor:
        if (
            self._monitor is not None
            and self._key is not None
            and params is self._params
            and base is self._key[0]
        ):
            return self._monitor  # the node replaces its parameter dict on every change
        self._params = params
        gains = np.asarray(params["observer.gain"], dtype=float)
        link = params["payload.link"] or params["tip_link"]
        settings = settings_of(params)
        key = (base, link, float(np.median(gains)), tuple(params["gravity"]), settings.max_window)
        if self._monitor is None or key != self._key:
            capacity = int((settings.max_window + settings.window + 1.0) * SAMPLE_RATE)
            stream = PayloadStream(base, link, key[2], capacity, gravity=params["gravity"])
            self._monitor, self._key = PayloadMonitor(stream, settings), key
        self._monitor.settings = settings
        return self._monitor

    def cycle(
        self,
        cycle: CycleModel,
        base: RobotModel,
        params: dict,
        q: np.ndarray,
        qd: np.ndarray,
        residual: np.ndarray | None,
        collision: bool,
        header: Header,
        stamp_ns: int,
    ) -> None:
        """One step at the cycle's state; `residual` the observer's r (None: it did not run)."""
        try:
            monitor = self._monitor_for(cycle, params, base)
        except RneaError as exc:
            self.problem = str(exc)
            return
        self.problem = ""
        if not self._origin_ns:
            self._origin_ns = stamp_ns
        gap = (stamp_ns - self._last_ns) * 1e-9
        if self._last_ns and gap == 0 and residual is not None and cycle.model is self._model:
            return  # the same joint_states again (a simulator's resend): nothing new
        if residual is None:
            why = "the observer did not run"
        elif cycle.model is not self._model:
            why = "the model changed"
        elif self._last_ns and not 0 < gap <= params["observer.max_gap"]:
            why = f"joint_states stamps {gap:.3f} s apart (observer.max_gap {params['observer.max_gap']:g} s)"
        else:
            why = ""
        self._model, self._last_ns = cycle.model, stamp_ns
        if why:
            monitor.restart(why, (stamp_ns - self._origin_ns) * 1e-9)
        if residual is None:
            return
        payload = cycle.model.payload
        if payload is not None and payload.link != monitor.link:
            self._current = None
            self.problem = (
                f"the payload in force is on '{payload.link}', estimation is on '{monitor.link}' "
                "(payload.link or tip_link): no estimate"
            )
            return
        self._current = payload
        t = (stamp_ns - self._origin_ns) * 1e-9
        step = monitor.cycle(t, q, qd, residual, collision, payload)
        if step is not None and not self._apply(step):
            monitor.cancel("the estimate did not fit the model", t)
        self._report(monitor)
        final = monitor.pending_final
        if final is not None:
            monitor.pending_final = None
            self._publish(final, header)

    def _report(self, monitor: PayloadMonitor) -> None:
        log = self._node.get_logger()
        for outcome in monitor.outcomes:
            if outcome.refused:
                log.warn(f"payload estimation ({outcome.source}): {outcome.text}")
            else:
                log.info(f"payload estimation ({outcome.source}): {outcome.text}; blending it in")
        monitor.outcomes.clear()

    def _publish(self, payload: Payload, header: Header) -> None:
        msg = InertiaStamped()
        msg.header.stamp = header.stamp
        msg.header.frame_id = payload.link
        i = msg.inertia
        i.m = float(payload.mass)
        i.com.x, i.com.y, i.com.z = (float(x) for x in payload.com)
        tensor = np.asarray(payload.inertia, dtype=float)
        i.ixx, i.ixy, i.ixz = float(tensor[0, 0]), float(tensor[0, 1]), float(tensor[0, 2])
        i.iyy, i.iyz, i.izz = float(tensor[1, 1]), float(tensor[1, 2]), float(tensor[2, 2])
        self._published = [*self._published[-ECHOES + 1 :], _fields(msg)]
        self._pub.publish(msg)
        what = "removed" if payload.mass <= 0 else f"{payload.mass:.4g} kg on {payload.link}"
        self._node.get_logger().info(f"payload estimate in force: {what} (published on ~/payload)")

    def is_echo(self, msg: InertiaStamped) -> bool:
        """Whether a ~/payload message is one of this node's own last estimates."""
        return _fields(msg) in self._published

    @property
    def busy(self) -> bool:
        """Whether an estimate is being blended in (it finishes even if estimation is switched off)."""
        return self._monitor is not None and self._monitor.state == "blending"

    def cancel(self, why: str) -> None:
        """The payload was set otherwise: a blend or a collection in progress ends."""
        if self._monitor is not None:
            self._monitor.cancel(why, (self._last_ns - self._origin_ns) * 1e-9)
            self._report(self._monitor)

    # --- the service ------------------------------------------------------------------------

    def _on_request(self, request: Trigger.Request, response: Trigger.Response) -> Trigger.Response:
        monitor = self._monitor
        params = getattr(self._node, "_params", {})
        if params.get("payload.estimation", OFF) == OFF:
            response.success, response.message = False, "payload.estimation is off"
            return response
        if monitor is None or not self._last_ns:
            response.success = False
            response.message = f"no data yet: {self.problem or 'waiting for joint_states with efforts'}"
            return response
        if self.problem:
            response.success, response.message = False, self.problem
            return response
        outcome = monitor.request((self._last_ns - self._origin_ns) * 1e-9, self._current)
        self._report(monitor)
        response.success = not outcome.refused
        blend = monitor.settings.blend
        response.message = outcome.text if outcome.refused else f"{outcome.text}; applied over {blend:g} s"
        return response

    # --- diagnostics ----------------------------------------------------------------------

    def status(self, node_name: str) -> DiagnosticStatus:
        """The "payload estimation" status: WARN when the last outcome was a refusal or it cannot
        run, OK otherwise."""
        monitor = self._monitor
        last: Outcome | None = None if monitor is None else monitor.last
        if self.problem:
            level, message = DiagnosticStatus.WARN, self.problem
        elif last is not None and last.refused:
            level, message = DiagnosticStatus.WARN, f"last estimation refused: {last.text}"
        elif monitor is None:
            level, message = DiagnosticStatus.WARN, "no estimate yet: waiting for joint_states with efforts"
        else:
            level, message = DiagnosticStatus.OK, f"{monitor.settings.mode}: {monitor.state}"
        values = {
            "mode": "" if monitor is None else monitor.settings.mode,
            "state": "" if monitor is None else monitor.state,
            "link": "" if monitor is None else monitor.link,
            "estimates": "0" if monitor is None else str(monitor.estimates),
            "refusals": "0" if monitor is None else str(monitor.refusals),
            "collisions_ignored": "0" if monitor is None else str(monitor.ignored_collisions),
            "last_estimate": _last(monitor, refused=False),
            "last_refusal": _last(monitor, refused=True),
        }
        return status(f"{node_name}: payload estimation", level, message, "", values)


def _last(monitor: PayloadMonitor | None, refused: bool) -> str:
    if monitor is None:
        return ""
    for outcome in reversed(monitor.history):
        if outcome.refused == refused:
            return f"{outcome.source} at {outcome.t:.3f} s: {outcome.text}"
    return ""


def _fields(msg: InertiaStamped) -> tuple:
    i = msg.inertia
    return (
        msg.header.stamp.sec, msg.header.stamp.nanosec, msg.header.frame_id, i.m, i.com.x, i.com.y, i.com.z,
        i.ixx, i.ixy, i.ixz, i.iyy, i.iyz, i.izz,
    )  # fmt: skip


__all__ = ["PayloadEstimation", "check", "off_as_string", "settings_of"]
