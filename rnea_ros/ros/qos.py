"""QoS overrides from parameters, as rclcpp and rclpy nodes offer them (`QoSOverridingOptions`).

For each topic created here the node declares read-only parameters
`qos_overrides.<fully qualified topic>.<publisher|subscription>.<history|depth|reliability>`
(`ros2 param list` shows them), whose start-up values (a params file, `-p`) replace the built-in
profile. The topic is the resolved one, after remapping, as rclcpp names it: with
`-r '~/effort_commands:=/effort_controller/commands'` the override is
`qos_overrides./effort_controller/commands.publisher.reliability`. An invalid value ends start-up
with one line naming the parameter (ParameterError); `warn_unmatched` warns about start-up
`qos_overrides.*` parameters that name no topic of the node (a remapped or misspelled topic).

The built-in profiles the nodes share: `JOINT_STATES_QOS`, `LATEST_STATE_QOS`, `DESCRIPTION_QOS`.
"""

from __future__ import annotations

import copy
import weakref
from collections.abc import Callable
from typing import Any

from rclpy.node import Node
from rclpy.publisher import Publisher
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
from rclpy.qos_overriding_options import QoSOverridingOptions
from rclpy.subscription import Subscription

from rnea_ros.errors import ParameterError
from rnea_ros.ros.schema import did_you_mean

# Best effort (matches reliable and best-effort publishers), keep last 10: a gripper driver's
# message is not overwritten by the arm's next one; the node drains the queue each cycle, so the
# newest state still wins.
JOINT_STATES_QOS = QoSProfile(
    depth=10, reliability=ReliabilityPolicy.BEST_EFFORT, history=HistoryPolicy.KEEP_LAST
)
# The newest state only (a trajectory source that needs no other).
LATEST_STATE_QOS = QoSProfile(
    depth=1, reliability=ReliabilityPolicy.BEST_EFFORT, history=HistoryPolicy.KEEP_LAST
)
# robot_description as robot_state_publisher offers it: reliable, latched.
DESCRIPTION_QOS = QoSProfile(
    depth=1, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL
)
# history, depth and reliability: what users change (durability stays the node's choice)
OPTIONS = QoSOverridingOptions.with_default_policies()
# node → (topic as named, expanded; resolved (remapped); publisher | subscription) of each entity
_TOPICS: weakref.WeakKeyDictionary[Node, list[tuple[str, str, str]]] = weakref.WeakKeyDictionary()


def _prefix(node: Node, topic: str, kind: str) -> str:
    return f"qos_overrides.{node.resolve_topic_name(topic)}.{kind}"


def _created(node: Node, topic: str, kind: str, create: Callable[[QoSProfile], Any], qos: QoSProfile) -> Any:
    try:
        entity = create(copy.copy(qos))  # rclpy writes the overrides into the profile it is given
    except Exception as exc:  # noqa: BLE001 - rclpy raises RuntimeError, type errors and its own
        text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise ParameterError(f"{_prefix(node, topic, kind)}.*", text) from None
    named = node.resolve_topic_name(topic, only_expand=True)
    _TOPICS.setdefault(node, []).append((named, node.resolve_topic_name(topic), kind))
    return entity


def subscription(
    node: Node, msg_type: type, topic: str, callback: Callable, qos: QoSProfile, *, raw: bool = False
) -> Subscription:
    """A subscription whose QoS the qos_overrides.<topic>.subscription.* parameters may change;
    raw: its callback gets the serialized message (bytes)."""

    def create(profile: QoSProfile) -> Subscription:
        return node.create_subscription(
            msg_type, topic, callback, profile, qos_overriding_options=OPTIONS, raw=raw
        )

    return _created(node, topic, "subscription", create, qos)


def publisher(node: Node, msg_type: type, topic: str, qos: QoSProfile) -> Publisher:
    """A publisher whose QoS the qos_overrides.<topic>.publisher.* parameters may change."""

    def create(profile: QoSProfile) -> Publisher:
        return node.create_publisher(msg_type, topic, profile, qos_overriding_options=OPTIONS)

    return _created(node, topic, "publisher", create, qos)


def warn_unmatched(node: Node) -> list[str]:
    """Warn (and return the warnings) about every start-up `qos_overrides.*` parameter that names
    no topic of `node` (call it once its topics exist): a topic named before its remapping (the
    override follows the remapped name, as in rclcpp) or misspelled would otherwise be ignored
    without a word."""
    overrides = getattr(node, "_parameter_overrides", {})
    topics = _TOPICS.get(node, [])
    known = [f"qos_overrides.{k}" for k in node.get_parameters_by_prefix("qos_overrides")]
    out = []
    for name in sorted(n for n in overrides if n.startswith("qos_overrides.") and not node.has_parameter(n)):
        text = f"parameter '{name}' matches no topic of this node: ignored"
        for named, resolved, _ in topics:
            head = f"qos_overrides.{named}."
            if named != resolved and name.startswith(head):
                text += (
                    f"; {named} is remapped to {resolved}, and overrides follow the remapped name "
                    f"(as in rclcpp): qos_overrides.{resolved}.{name[len(head) :]}"
                )
                break
        else:
            mine = ", ".join(f"{resolved} ({kind})" for _, resolved, kind in topics)
            text += f"{did_you_mean(name, known)}; its topics with QoS overrides: {mine or 'none'}"
        node.get_logger().warn(text)
        out.append(text)
    return out


def profile_text(qos: QoSProfile) -> str:
    """A QoS profile in words, for logs and diagnostics."""
    return f"{qos.reliability.name.lower()}, {qos.history.name.lower()} {qos.depth}"


__all__ = [
    "DESCRIPTION_QOS",
    "JOINT_STATES_QOS",
    "LATEST_STATE_QOS",
    "OPTIONS",
    "profile_text",
    "publisher",
    "subscription",
    "warn_unmatched",
]
