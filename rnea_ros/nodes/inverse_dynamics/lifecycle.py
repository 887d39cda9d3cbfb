"""The managed (lifecycle) variant of the inverse_dynamics node: `inverse_dynamics_lifecycle_node`.

The same node (topics, parameters, rules), driven by the ROS 2 lifecycle state machine:
- unconfigured: parameters declared and settable; nothing else exists.
- configure: compiles the kernels (waits for them: a cold cache takes minutes), creates every
  publisher, subscription and timer, loads the model (robot_description parameter, or the
  latched topic's message, waited for up to DESCRIPTION_WAIT_S) and fails, releasing all of it,
  when that gives no model (the reason in the log). Inactive: joint_states is merged (the state
  stays fresh), trajectories, wrenches and payloads are taken, no command goes out.
- activate: commands on every joint_states, as the plain node does.
- deactivate: stops commanding and publishes ONE hold command: the gravity term alone
  (gravity or, with gravity_source imu_*, the newest IMU gravity; payload, compensate.gravity,
  clamped like any command) at the last measured state; with a floating or planar root, the
  last cycle's contact-consistent model term (floating_base_node.md).
  A forward command controller holds the last effort it got; the full last command would keep
  pushing with its inertia, Coriolis, friction and PD parts as if the arm were still moving,
  and zeros would drop the arm; gravity alone holds a resting arm where it is. Without a
  measured state nothing is sent. The running trajectory is cancelled.
- cleanup / shutdown: destroy every publisher, subscription, timer and service configure made, and drop
  the model, the joint cache, the message wrenches and payload, and the counters.
Diagnostics (while configured) carry `lifecycle_state`; inactive is OK, "not commanding".
"""

from __future__ import annotations

if __name__ == "__main__" and __spec__ is not None:  # python -m: a stop while importing is one line
    from rnea_ros.ros.entry import run_module

    run_module("inverse_dynamics", __spec__.name)

import sys
from typing import Any

import numpy as np
from diagnostic_msgs.msg import DiagnosticStatus, KeyValue
from rclpy.lifecycle import LifecycleNodeMixin, LifecycleState, TransitionCallbackReturn

from rnea_ros.algorithms.dynamics import gravity_torques
from rnea_ros.nodes.inverse_dynamics.diagnostics import CycleStats
from rnea_ros.nodes.inverse_dynamics.node import InverseDynamicsNode
from rnea_ros.nodes.inverse_dynamics.overrides import NONE
from rnea_ros.ros.model_source import take_description
from rnea_ros.ros.run_node import run_node

DESCRIPTION_WAIT_S = 5.0  # configure waits this long for the latched robot_description topic


class InverseDynamicsLifecycleNode(LifecycleNodeMixin, InverseDynamicsNode):
    """inverse_dynamics as a managed node (see the module docstring)."""

    def __init__(self, **kwargs) -> None:
        InverseDynamicsNode.__init__(self, managed=True, **kwargs)
        LifecycleNodeMixin.__init__(self)
        self._lifecycle_state = "unconfigured"
        self._owned: list[tuple[str, Any]] = []  # (kind, entity) made by configure

    # --- transitions -----------------------------------------------------------------------

    def on_configure(self, state: LifecycleState) -> TransitionCallbackReturn:
        before = self._entities()
        try:
            self._start()
            self._await_model()
        except ValueError as exc:  # a robot_description that gives no model, or none
            self._owned = self._entities_since(before)
            self._release()
            self.get_logger().error(f"configure failed: {exc}")
            return TransitionCallbackReturn.FAILURE
        self._owned = self._entities_since(before)
        self._lifecycle_state = "inactive"
        return TransitionCallbackReturn.SUCCESS

    def _await_model(self) -> None:
        """A model, or ValueError saying why there is none: the kernels ready (a cold cache
        compiles them now), the description built; from the topic, the latched robot_description
        taken within DESCRIPTION_WAIT_S."""
        if not self._kernels.wait():
            raise ValueError(f"the dynamics kernels did not compile: {self._kernels.error}")
        self._on_kernels_ready()  # a description that waited for them (ParameterError from the parameter)
        sub = self._description_sub
        if (
            self._loaded is None
            and sub is not None
            and not take_description(sub, self._load_description, DESCRIPTION_WAIT_S)
        ):
            raise ValueError(
                f"no robot_description on topic {sub.topic_name} within {DESCRIPTION_WAIT_S:g} s"
            )
        if self._loaded is None:
            raise ValueError(f"no model: {self.stats.model_error or 'no robot description'}")

    def on_activate(self, state: LifecycleState) -> TransitionCallbackReturn:
        self._lifecycle_state = "active"
        self.get_logger().info("active: commanding")
        return TransitionCallbackReturn.SUCCESS

    def on_deactivate(self, state: LifecycleState) -> TransitionCallbackReturn:
        self._lifecycle_state = "inactive"
        self._hold()
        loaded = self._loaded
        if loaded is not None and not loaded.desired.idle:
            loaded.desired.cancel()
            self.get_logger().warning(
                "the running trajectory is cancelled, held positions released: the node was deactivated"
            )
        return TransitionCallbackReturn.SUCCESS

    def on_cleanup(self, state: LifecycleState) -> TransitionCallbackReturn:
        self._release()
        return TransitionCallbackReturn.SUCCESS

    def on_shutdown(self, state: LifecycleState) -> TransitionCallbackReturn:
        if self._lifecycle_state == "active":
            self._hold()
        self._release()
        self._lifecycle_state = "finalized"
        return TransitionCallbackReturn.SUCCESS

    def on_error(self, state: LifecycleState) -> TransitionCallbackReturn:
        self._release()
        return TransitionCallbackReturn.SUCCESS

    # --- what the states change ------------------------------------------------------------

    def _command_cycle(self, *args) -> None:
        if self._lifecycle_state == "active":
            super()._command_cycle(*args)

    def _hold(self) -> None:
        """Publish the gravity-only hold command at the last measured state (module docstring)."""
        loaded = self._loaded
        if loaded is None:
            return
        state = loaded.cache.state(None)
        if isinstance(state, list):
            self.get_logger().info("deactivated before any complete joint_states: no hold command")
            return
        cycle, params = loaded.cycle, self._params
        tau = np.zeros(cycle.model.nv)
        if cycle.floating is not None:  # a floating base: the last contact-consistent model term
            if cycle.floating.solution is None:
                self.get_logger().info("deactivated before any contact-consistent cycle: no hold command")
                return
            tau = cycle.efforts.terms["gravity"].copy()
        elif params["compensate.gravity"]:
            gravity = self._imu.latest(params)  # gravity_source imu_*: the base's newest
            tau = gravity_torques(cycle.model, state[0], gravity=gravity)
        if self._send(cycle, tau) is None:  # the output stage: limits and effort_unit, as every command
            return
        self.get_logger().info("inactive: published one gravity-only hold command, then stopped commanding")

    def _entities(self) -> dict[str, set]:
        return {
            "publisher": set(self.publishers),
            "subscription": set(self.subscriptions),
            "timer": set(self.timers),
            "service": set(self.services),
        }

    def _entities_since(self, before: dict[str, set]) -> list[tuple[str, Any]]:
        now = self._entities()
        return [(kind, e) for kind in now for e in now[kind] - before[kind]]

    def _release(self) -> None:
        """Destroy what configure made and forget the model and everything tied to it."""
        for kind, entity in self._owned:
            if kind == "publisher":
                self.destroy_publisher(entity)
            elif kind == "subscription":
                self.destroy_subscription(entity)
            elif kind == "service":
                self.destroy_service(entity)
            else:
                self.destroy_timer(entity)
        self._owned = []
        self._loaded, self._pending, self._overrides = None, None, NONE
        self._payload_estimation = None
        self._listened = []
        self.stats = CycleStats()
        self._lifecycle_state = "unconfigured"

    def _diagnostic_status(self, now_ns: int) -> DiagnosticStatus:
        status = super()._diagnostic_status(now_ns)
        status.values.append(KeyValue(key="lifecycle_state", value=self._lifecycle_state))
        if self._lifecycle_state != "active" and status.level != DiagnosticStatus.OK:
            if self._loaded is not None:  # not commanding is what inactive means
                status.level, status.message = DiagnosticStatus.OK, "inactive (managed node): not commanding"
        elif self._lifecycle_state == "active":
            status.message = f"active: {status.message}"
        return status


def main(args: list[str] | None = None) -> int:
    """Run the managed inverse_dynamics node (`ros2 run rnea_ros inverse_dynamics_lifecycle_node`)."""
    return run_node(args, InverseDynamicsLifecycleNode, "inverse_dynamics")


__all__ = ["InverseDynamicsLifecycleNode", "main"]

if __name__ == "__main__":
    sys.exit(main())
