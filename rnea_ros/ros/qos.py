"""QoS overrides from parameters, as rclcpp and rclpy nodes offer them (`QoSOverridingOptions`).

For each topic created here the node declares read-only parameters
`qos_overrides.<fully qualified topic>.<publisher|subscription>.<history|depth|reliability>`
(`ros2 param list` shows them), whose start-up values (a params file, `-p`) replace the built-in
profile. An invalid value ends start-up with one line naming the parameter (ParameterError).
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from rclpy.node import Node
from rclpy.publisher import Publisher
from rclpy.qos import QoSProfile
from rclpy.qos_overriding_options import QoSOverridingOptions
from rclpy.subscription import Subscription

from rnea_ros.errors import ParameterError

# history, depth and reliability: what users change (durability stays the node's choice)
OPTIONS = QoSOverridingOptions.with_default_policies()


def _prefix(node: Node, topic: str, kind: str) -> str:
    return f"qos_overrides.{node.resolve_topic_name(topic)}.{kind}"


def _created(node: Node, topic: str, kind: str, create: Callable[[QoSProfile], Any], qos: QoSProfile) -> Any:
    try:
        return create(copy.copy(qos))  # rclpy writes the overrides into the profile it is given
    except Exception as exc:  # noqa: BLE001 - rclpy raises RuntimeError, type errors and its own
        text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise ParameterError(f"{_prefix(node, topic, kind)}.*", text) from None


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


def profile_text(qos: QoSProfile) -> str:
    """A QoS profile in words, for logs and diagnostics."""
    return f"{qos.reliability.name.lower()}, {qos.history.name.lower()} {qos.depth}"


__all__ = ["OPTIONS", "profile_text", "publisher", "subscription"]
