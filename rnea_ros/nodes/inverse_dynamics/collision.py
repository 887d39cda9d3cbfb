"""Collision detection and external-torque estimation for the inverse_dynamics node (optional,
`observer.enabled`): a helper the node calls after it has published the command.

On every command cycle it runs the momentum observer (`rnea_ros.estimation.observer`) on the cached state and
the measured efforts of joint_states (each output joint's in its effort_unit, converted back to
joint torque first), and publishes
  ~/external_efforts  sensor_msgs/JointState, the estimate r of τ_ext (torque the environment
                      applies to the joints), output joints in `joints` order, stamped as the
                      joint_states that triggered the cycle;
  ~/external_wrench   geometry_msgs/WrenchStamped, the wrench the observer.wrench_link (default
                      tip_link) exerts on its environment explaining r (τ_ext = −Jᵀ F), in that
                      link's axes, moment about its origin (the force on the link is −F);
  ~/collision         std_msgs/Bool, on every change (transient local, depth 1): true when some
                      |r_i| exceeds collision.threshold_i, false again once every |r_i| is below
                      collision.hysteresis × threshold_i;
and a "contact" status on /diagnostics (its name kept: monitors match it). It needs an effort for
every model joint in the same joint_states message as its position; otherwise it says so
(diagnostics and a throttled log) and publishes nothing. A gap between joint_states stamps longer
than observer.max_gap, a model change or a stamp that does not advance restarts it (r = 0).
"""

from __future__ import annotations

import numpy as np
from diagnostic_msgs.msg import DiagnosticStatus
from geometry_msgs.msg import WrenchStamped
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile
from sensor_msgs.msg import JointState
from std_msgs.msg import Bool, Header

from rnea_ros.errors import ParameterError
from rnea_ros.estimation.observer import MomentumObserver, TipWrench
from rnea_ros.model.robot_model import RobotModel
from rnea_ros.nodes.inverse_dynamics.cycle_model import CycleModel
from rnea_ros.ros.diagnostics import status
from rnea_ros.ros.law_params import friction_of
from rnea_ros.ros.throttled_log import ThrottledLog

FLAG_QOS = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL)


def wrench_link(model: RobotModel, params: dict) -> str | None:
    """The link of ~/external_wrench (observer.wrench_link, else tip_link; None: no wrench);
    ParameterError when it is not a link of the model."""
    link = params["observer.wrench_link"] or params["tip_link"] or None
    if link is not None and link not in model.link_frames:
        raise ParameterError(
            "observer.wrench_link",
            f"link '{link}' is not part of the model (links: {', '.join(model.link_names)})",
        )
    return link


def per_model_joint(value: list[float], output: np.ndarray, nv: int, rest: float) -> np.ndarray:
    """One value or one per output joint, spread over the model's joints (`rest` elsewhere)."""
    values = np.asarray(value, dtype=float)
    if values.size == 1:
        return np.full(nv, values[0])
    full = np.full(nv, rest)
    full[output] = values
    return full


def check(params: dict, model: RobotModel | None, n_outputs: int | None) -> None:
    """Rules between the observer and collision parameters and the model; ParameterError naming one."""
    if model is not None:
        wrench_link(model, params)
    for name in ("observer.gain", "collision.threshold"):
        size = len(params[name])
        if n_outputs is not None and size not in (1, n_outputs):
            raise ParameterError(name, f"must have 1 or {n_outputs} values (one per joint of 'joints')")


class CollisionMonitor:
    """The node's collision outputs (external torques, wrench, collision flag); `cycle` once per
    command, `status` for diagnostics."""

    def __init__(self, node: Node) -> None:
        """The observer's kernels are compiled with all the others by the node's `prepare_kernels`,
        before any cycle."""
        self._node = node
        self._log = ThrottledLog(node)
        self._pubs: tuple | None = None  # created when first enabled
        self._observer: MomentumObserver | None = None
        self._model: RobotModel | None = None
        self._params: dict | None = None
        self._tip: TipWrench | None = None
        self._last_ns = 0
        self.collision = False
        self.collisions = 0
        self.problem = ""  # why the last cycle estimated nothing
        self.peak = np.zeros(0)  # largest |r| / threshold per output joint, this diagnostics period
        self.cycles = 0

    def _publishers(self) -> tuple:
        if self._pubs is None:
            node = self._node
            self._pubs = (
                node.create_publisher(JointState, "~/external_efforts", 10),
                node.create_publisher(WrenchStamped, "~/external_wrench", 10),
                node.create_publisher(Bool, "~/collision", FLAG_QOS),
            )
            self._pubs[2].publish(Bool(data=False))
        return self._pubs

    def _observer_for(self, cycle: CycleModel, params: dict) -> MomentumObserver:
        model = cycle.model
        gain = per_model_joint(
            params["observer.gain"], cycle.output, model.nv, float(np.median(params["observer.gain"]))
        )
        obs = self._observer
        if obs is None or self._model is not model:
            friction = friction_of(model, params, cycle.output) if params["observer.friction"] else None
            obs = MomentumObserver(
                model,
                gain,
                friction=friction,
                effort_includes_gravity=params["observer.effort_includes_gravity"],
                gravity=params["gravity"],
            )
            self._observer, self._model = obs, model
            self._set_flag(False)
        else:
            obs.set_gain(gain)
            friction = friction_of(model, params, cycle.output) if params["observer.friction"] else None
            obs.configure(friction, params["observer.effort_includes_gravity"], params["gravity"])
        return obs

    def cycle(
        self,
        cycle: CycleModel,
        params: dict,
        q: np.ndarray,
        qd: np.ndarray,
        effort: np.ndarray,
        fresh: np.ndarray,
        header: Header,
        stamp_ns: int,
    ) -> np.ndarray | None:
        """One observer step at the cycle's state; `fresh` marks the joints whose effort came with
        their latest position. Returns r (model order; the observer's array: read it before the
        next cycle), None when it estimated nothing."""
        pubs = self._publishers()
        if not fresh.all():
            names = [cycle.model.joint_names[i] for i in np.flatnonzero(~fresh)]
            self.problem = f"joint_states carry no effort for {', '.join(names)}: no external-torque estimate"
            self._log.warn("contact.no_effort", self.problem)
            self._observer = None  # restart when efforts come back
            self._set_flag(False)
            return None
        obs = self._observer
        if obs is None or self._model is not cycle.model or params is not self._params:
            obs = self._observer_for(cycle, params)  # the node replaces its dict on every change
            self._params = params
        gap = (stamp_ns - self._last_ns) * 1e-9
        if self._last_ns and (gap > params["observer.max_gap"] or gap < 0):
            obs.reset()
        self._last_ns = stamp_ns
        if cycle.units is not None:  # effort_unit: measured efforts back to joint torque
            effort = cycle.units.measured(effort)
        r = obs.update(stamp_ns * 1e-9, q, qd, effort)
        if not np.isfinite(r).all():
            obs.reset()
            self.problem = "the external-torque estimate was not finite: observer restarted"
            self._log.warn("contact.not_finite", self.problem)
            return None
        self.problem = ""
        self.cycles += 1
        out = cycle.output
        r_out = r[out]
        thresholds = per_model_joint(params["collision.threshold"], out, cycle.model.nv, np.inf)[out]
        ratio = np.abs(r_out) / thresholds
        self.peak = ratio if self.peak.size != ratio.size else np.maximum(self.peak, ratio)
        if self.collision:
            if ratio.max(initial=0.0) < params["collision.hysteresis"]:
                self._set_flag(False)
        elif ratio.max(initial=0.0) > 1.0:
            self._set_flag(True)
            joints = [cycle.output_names[i] for i in np.flatnonzero(ratio > 1.0)]
            self._log.warn(
                "contact.collision", f"collision: external torque above threshold on {', '.join(joints)}"
            )
        pubs[0].publish(JointState(header=header, name=cycle.output_names, effort=r_out.tolist()))
        try:
            link = wrench_link(cycle.model, params)
        except ParameterError as exc:
            self.problem = str(exc)
            link = None
        if link is not None:
            tip = self._tip
            damping = params["observer.wrench_damping"]
            if tip is None or tip.model is not cycle.model or tip.link != link or tip.damping != damping:
                tip = self._tip = TipWrench(cycle.model, link, damping)
            f, rot = tip(q, r)
            msg = WrenchStamped()
            msg.header.stamp = header.stamp
            msg.header.frame_id = link
            fl, ml = rot.T @ f[:3], rot.T @ f[3:]
            msg.wrench.force.x, msg.wrench.force.y, msg.wrench.force.z = (float(x) for x in fl)
            msg.wrench.torque.x, msg.wrench.torque.y, msg.wrench.torque.z = (float(x) for x in ml)
            pubs[1].publish(msg)
        return r

    def _set_flag(self, value: bool) -> None:
        if value != self.collision:
            self.collision = value
            self.collisions += int(value)
            if self._pubs is not None:
                self._pubs[2].publish(Bool(data=value))

    def status(self, node_name: str) -> DiagnosticStatus:
        """The "contact" status: ERROR while in collision, WARN when no estimate runs."""
        if self.collision:
            level, message = DiagnosticStatus.ERROR, "collision"
        elif self.problem:
            level, message = DiagnosticStatus.WARN, self.problem
        elif self.cycles == 0:
            level, message = DiagnosticStatus.WARN, "no estimate yet: waiting for joint_states with efforts"
        else:
            level, message = DiagnosticStatus.OK, "estimating external torques"
        values = {
            "collision": str(self.collision).lower(),
            "collisions": str(self.collisions),
            "estimates": str(self.cycles),
            "peak_ratio_to_threshold": ", ".join(f"{x:.3g}" for x in self.peak),
        }
        self.peak = np.zeros(0)
        return status(f"{node_name}: contact", level, message, "", values)
