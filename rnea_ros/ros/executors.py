"""How a node spins, as RNEA_ROS_EXECUTOR selects (README "Executor"): the wait-set loop (the
default, rnea_ros.ros.waitset_loop), rclpy's default executor or its EventsExecutor."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable

import rclpy
from rclpy.node import Node

from rnea_ros.ros.signals import join_signal_shutdown, shutdown_is_a_stop

# RNEA_ROS_EXECUTOR values → how the nodes spin (README "Executor").
EXECUTOR_ENV = "RNEA_ROS_EXECUTOR"
EXECUTORS = ("waitset", "default", "events")


def spin_default(node: Node) -> None:
    """Spin `node` with rclpy's default executor (`rclpy.spin`) until shutdown."""
    node.get_logger().info("spinning rclpy's default executor (RNEA_ROS_EXECUTOR=default)")
    with shutdown_is_a_stop(node.context):  # it builds a wait set in every wait
        rclpy.spin(node)


def spin_events(node: Node) -> None:
    """Spin `node` with rclpy's EventsExecutor until shutdown: callbacks run as their events
    arrive, without rebuilding a wait set per callback as the default executor does (less
    latency and CPU per message). Opt-in only: its event queue is unbounded, one event per
    arriving message whatever the QoS depth, so when messages come faster than the callbacks
    finish, memory grows without limit (docs/performance.md, "The executor"; the default executor
    stays flat; rclcpp's EventsExecutor has the same limitation). Its spin()
    never runs a callback in this rclpy, so it is driven by spin_once in a loop, which serves
    timers too."""
    from rclpy.experimental import EventsExecutor

    executor = EventsExecutor(context=node.context)
    executor.add_node(node)
    node.get_logger().info("spinning rclpy's EventsExecutor (RNEA_ROS_EXECUTOR=events, unbounded queue)")
    try:
        with shutdown_is_a_stop(node.context):
            while node.context.ok():
                executor.spin_once(timeout_sec=0.1)
    finally:
        join_signal_shutdown()
        executor.shutdown()


def selected_spin() -> Callable[[Node], None]:
    """How run_node spins, from RNEA_ROS_EXECUTOR: "waitset" (the default: one wait set, see
    waitset_loop), "default" (rclpy.spin, rclpy's SingleThreadedExecutor) or "events" (rclpy's
    EventsExecutor, unbounded queue). An unknown value is reported and the default used."""
    from rnea_ros.ros.waitset_loop import spin_waitset

    name = os.environ.get(EXECUTOR_ENV, "") or EXECUTORS[0]
    if name == "default":
        return spin_default
    if name == "events":
        return spin_events
    if name != "waitset":
        print(
            f"[WARN] {EXECUTOR_ENV}={name!r} is not one of {', '.join(EXECUTORS)}: using waitset",
            file=sys.stderr,
        )
    return spin_waitset
