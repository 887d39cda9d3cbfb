"""The inverse_dynamics node's joint_states intake: the raw subscription, every queued message
taken and read from its CDR bytes (`rnea_ros.ros.cdr`), checked (lengths, names, stamp, finite
and plausible values) and merged per joint into the model's cache (`rnea_ros.ros.joint_states`);
then one command cycle for the newest message that carries a commanded joint."""

from __future__ import annotations

import math
import time
from collections.abc import Callable

import numpy as np
from rclpy.node import Node
from rclpy.subscription import Subscription
from sensor_msgs.msg import JointState

from rnea_ros.nodes.inverse_dynamics.diagnostics import CycleStats
from rnea_ros.nodes.inverse_dynamics.loaded_model import LoadedModel
from rnea_ros.ros import qos
from rnea_ros.ros.cdr import JointStateReader, WireJointState
from rnea_ros.ros.joint_states import efforts_of, layout
from rnea_ros.ros.kernel_startup import KernelsInBackground
from rnea_ros.ros.qos import JOINT_STATES_QOS
from rnea_ros.ros.stamps import clock_ns
from rnea_ros.ros.waitset_loop import stream

# Stamps this far (s) from the node clock come from another clock source, not from lag.
CLOCK_MIXUP = 1e6
MISSING_SHOWN = 12  # joint names quoted from a joint_states without the commanded joints
LAYOUTS_KEPT = 32  # name layouts kept per model before they are forgotten (publishers' name orders)

# (the model, the message that triggered the cycle, node clock when it was taken (ns),
# perf_counter when the callback started (s))
CommandCycle = Callable[[LoadedModel, WireJointState, int, float], None]


class JointStatesIntake:
    """joint_states in, merged per joint; `receive` is the subscription's (guarded) callback's
    body. Rejections go through `drop(reason, text)`, counted and logged by the node."""

    def __init__(self, node: Node, drop: Callable[[str, str], None], command_cycle: CommandCycle) -> None:
        self._node = node
        self._drop = drop
        self._command_cycle = command_cycle
        self._reader = JointStateReader()  # joint_states are taken raw (bytes) and read by it
        self._subscription: Subscription | None = None
        self._kernels: KernelsInBackground | None = None
        self.uncommanded: tuple[str, ...] = ()  # names of the last joint_states without a commanded joint

    def subscribe(
        self, callback: Callable[[bytes | None], None], kernels: KernelsInBackground
    ) -> Subscription:
        """The raw joint_states subscription (a stream of the wait-set loop) calling `callback`;
        no message is answered before `kernels` are ready."""
        self._kernels = kernels
        self._subscription = stream(
            qos.subscription(self._node, JointState, "joint_states", callback, JOINT_STATES_QOS, raw=True)
        )
        return self._subscription

    def receive(self, raw: bytes | None, loaded: LoadedModel | None, params: dict, stats: CycleStats) -> None:
        """Merge this message (serialized: the subscription is raw) and every one queued behind it
        (any publisher's), then command once for the newest that carries a commanded joint:
        nothing is lost, the newest state wins. Each message is judged against the clock read
        when it is taken: a drain can last (a flood, a stall), and one taken later must not be
        judged by a reading from before it was sent."""
        t0 = time.perf_counter()
        clock = self._node.get_clock()
        now_ns = clock_ns(clock)
        stats.last_receive_ns = now_ns
        kernels = self._kernels
        assert kernels is not None and self._subscription is not None  # subscribe() came first
        if not kernels.ready:  # compiling (cold cache): no kernel call in this thread
            self._not_ready(raw, kernels)
            return
        trigger = None
        take = self._subscription.handle.take_message
        while raw is not None:
            if loaded is None:
                stats.reject("no_model", "no model loaded")
            else:
                try:
                    msg = self._reader.read(raw)
                except ValueError as exc:
                    self._drop("bad_message", f"{exc}: no command")
                else:
                    if self._merge(loaded, msg, now_ns, params, stats):
                        trigger = msg
            taken = take(JointState, True)
            raw = None if taken is None else taken[0]
            if raw is not None:
                now_ns = stats.last_receive_ns = clock_ns(clock)
        if trigger is not None and loaded is not None:  # a trigger implies a model
            self._command_cycle(loaded, trigger, now_ns, t0)

    def _not_ready(self, raw: bytes | None, kernels: KernelsInBackground) -> None:
        """joint_states while the kernels compile: every queued message taken, none answered."""
        reason = "kernels_failed" if kernels.error else "kernels_compiling"
        text = kernels.error or "the dynamics kernels are still compiling (cold numba cache)"
        take = self._subscription.handle.take_message  # type: ignore[union-attr]
        while raw is not None:
            self._drop(reason, f"{text}: no command")
            taken = take(JointState, True)
            raw = None if taken is None else taken[0]

    def _merge(
        self, loaded: LoadedModel, msg: WireJointState, now_ns: int, params: dict, stats: CycleStats
    ) -> bool:
        """Check a joint_states message and store its joints in the cache; whether it should
        trigger a command (it carries a commanded joint)."""
        n_msg = len(msg.name)
        if len(msg.position) != n_msg or len(msg.velocity) not in (0, n_msg):
            self._drop("bad_length", "joint_states position/velocity lengths differ from name: no command")
            return False
        key = msg.name  # a tuple
        lay = loaded.layouts.get(key)
        if lay is None:
            try:
                lay = layout(loaded.cycle.model, loaded.cycle.output, msg.name)
            except ValueError as exc:
                self._drop("bad_names", f"{exc}: no command")
                return False
            if len(loaded.layouts) > LAYOUTS_KEPT:
                loaded.layouts.clear()
            loaded.layouts[key] = lay
        stamp = msg.stamp_ns or now_ns
        stats.last_stamp_ns = max(stats.last_stamp_ns, stamp)
        timeout = params["joint_states_timeout"]
        if timeout > 0 and not self._fresh(stamp, now_ns, timeout):
            return False
        position = msg.position
        velocity = msg.velocity if len(msg.velocity) else None
        bounds = loaded.bounds
        for values, what in ((position, "position"), (velocity, "velocity")):
            if values is None:
                continue
            listed = values.tolist()
            # nearly always: finite and within every joint's bound, no gather of the model's joints
            if math.isfinite(sum(listed)) and bounds.fast(listed):
                continue
            mine = values[lay.msg_index]
            if not np.isfinite(mine).all():
                bad = lay.msg_index[~np.isfinite(mine)]
                joint = msg.name[int(bad[0])]
                self._drop("not_finite", f"joint_states {what} of '{joint}' is NaN or Inf: no command")
                return False
            text = bounds.beyond(f"joint_states {what}", mine, lay.model_index, what == "velocity")
            if text:
                self._drop("implausible", f"{text}: no command")
                return False
        loaded.cache.update(lay, position, velocity, stamp, efforts_of(msg.effort, lay))
        if not lay.commanded:
            stats.ignored += 1  # another publisher's joints: kept for the next cycle
            self.uncommanded = key
        return lay.commanded

    def _fresh(self, stamp: int, now_ns: int, timeout: float) -> bool:
        """Whether a joint_states stamp is within the timeout of the node clock (else dropped)."""
        age = (now_ns - stamp) * 1e-9
        if -timeout <= age <= timeout:
            return True
        hint = ""
        if abs(age) > CLOCK_MIXUP:
            hint = (
                f"; stamps and this node's clock are {abs(age):.2g} s apart: is use_sim_time set on "
                "one side only (simulated vs wall-clock time)?"
            )
        if age > 0:
            self._drop("stale", f"joint_states is {age:.3f} s old (joint_states_timeout {timeout} s){hint}")
        else:
            self._drop("clock_skew", f"joint_states is stamped {-age:.3f} s in the future (clock skew){hint}")
        return False

    def missing_text(self, loaded: LoadedModel, missing: list[str], timeout: float) -> str:
        """Why no command: the joints without a recent state, the joints the last message
        without a commanded joint named, and the hint for joints off the commanded chain."""
        text = f"no recent joint_states for {', '.join(missing)} (within {timeout} s): no command"
        if self.uncommanded:
            shown = ", ".join(self.uncommanded[:MISSING_SHOWN])
            more = f", ... ({len(self.uncommanded)} in all)" if len(self.uncommanded) > MISSING_SHOWN else ""
            text += f"; the last joint_states without a commanded joint named {shown}{more}"
        outside = [j for j in missing if j not in loaded.cycle.output_names]
        if outside:
            text += (
                f"; {', '.join(outside)} are not commanded: set tip_link (locks joints off the chain) "
                "or publish them, if the model should not need them"
            )
        return text


__all__ = ["CLOCK_MIXUP", "JointStatesIntake"]
