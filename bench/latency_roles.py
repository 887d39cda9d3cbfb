"""The processes of bench/bench_latency.py other than the subject under test (and the echo subjects).

    python bench/latency_roles.py publish TOPIC RATE COUNT OUT.npy [--spin-us 20] [--cpu N] [--sched S]
    python bench/latency_roles.py receive TOPIC OUT.npy [--no-wait] [--cpu N] [--sched S]
    python bench/latency_roles.py echo {spin,waitset,loop,events} IN_TOPIC OUT_TOPIC

- publish: JointState of the Panda arm's 7 joints on an absolute schedule t_k = t0 + k / RATE
  (sleep until SPIN_US before t_k, then busy-wait; a slot missed by more than 2 periods, when the
  publisher itself was stalled, is skipped rather than sent in a burst), each stamped with its send time
  (time.time_ns, the system clock) and numbered in header.frame_id, from the moment it reads a
  line on stdin (it prints "matched" once the topic has a subscriber). The message is serialized once
  and only its stamp and number are patched, so a publish costs one rcl call. Saves, per message,
  the sequence number, the scheduled time and the stamp (ns) of every message sent.
- receive: one subscription in a dedicated wait set; every wake-up takes every queued message
  (serialized, no deserialization) and records the take time (time.time_ns), the middleware's
  reception time and the stamp and number read from the CDR header. Prints "ready" once the topic
  has a publisher (at once with --no-wait) and runs until SIGTERM/SIGINT.
- both: --cpu pins the process, --sched fifo|nice raises its priority (set before rclpy.init, so
  the middleware's threads inherit both), so that the subject's load cannot delay the harness.
- echo: the reference subjects, JointState in -> JointState out with the input header (so also
  its stamp and number), the input positions as efforts: `spin` is a plain rclpy node under
  rclpy.spin (the default executor); `waitset` takes from a dedicated wait set in a loop;
  `loop` spins rnea_ros.ros.waitset_loop.WaitSetExecutor (the nodes' loop, with a plain node);
  `events` runs rclpy.experimental.EventsExecutor().spin_once in a loop (its spin() hangs in the
  wheel used here).
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import gc
import os
import signal
import struct
import sys
import time

import numpy as np
import rclpy
from rclpy.qos import HistoryPolicy, QoSProfile, ReliabilityPolicy
from rclpy.serialization import serialize_message
from rclpy.signals import SignalHandlerOptions
from sensor_msgs.msg import JointState

ARM = [f"panda_joint{i}" for i in range(1, 8)]
Q0 = [0.0, -0.4, 0.0, -2.0, 0.0, 1.6, 0.8]
MAX_LATE = 2  # periods: a slot the publisher missed by more is skipped (counted), not sent late
SEQ_DIGITS = 10  # header.frame_id = the zero-padded sequence number
BEST_EFFORT, RELIABLE = ReliabilityPolicy.BEST_EFFORT, ReliabilityPolicy.RELIABLE
KEEP_LAST = HistoryPolicy.KEEP_LAST
# What the inverse_dynamics node subscribes with (rnea_ros.ros.qos.JOINT_STATES_QOS).
SUBJECT_QOS = QoSProfile(depth=10, reliability=BEST_EFFORT, history=KEEP_LAST)
# The receiver's queue is deep so that a late wake-up shows as latency, never as loss.
RECEIVER_QOS = QoSProfile(depth=5000, reliability=BEST_EFFORT, history=KEEP_LAST)
# A robot driver's publisher (joint_state_broadcaster: reliable, depth 10).
PUBLISHER_QOS = QoSProfile(depth=10, reliability=RELIABLE, history=KEEP_LAST)
# Offsets in a CDR (little-endian) JointState: 4 bytes encapsulation, stamp.sec, stamp.nanosec,
# the frame_id length, then its characters.
SEC, NSEC, FRAME = 4, 8, 16


def pin(cpu: int | None, sched: str) -> None:
    """Pin the calling thread (and the threads it starts later) to a CPU (None: leave it) and raise
    its priority: "fifo" (SCHED_FIFO 10: runs before every normal process), "nice" (nice -10) or
    "none"."""
    if cpu is not None:
        os.sched_setaffinity(0, {cpu})
    try:
        if sched == "fifo":
            os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(10))
        elif sched == "nice":
            os.nice(-10)
    except OSError as exc:
        sys.exit(f"cannot raise the priority ({sched}): {exc}")


def unraise_async_writer() -> None:
    """Put Fast DDS's asynchronous-writer threads (dds.asyn.*) of this process back to normal
    priority. They inherit SCHED_FIFO from `pin`, but the harness never publishes through them
    (rmw_fastrtps publishes synchronously by default since Humble): they serve the built-in
    asynchronous writers. One of them was seen spinning for minutes (as in ros2/rmw_fastrtps#666),
    which at SCHED_FIFO took the receiver's CPU from everything else and hung the bench."""
    for tid in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{tid}/comm") as comm:
                if comm.read().startswith("dds.asyn"):
                    os.sched_setscheduler(int(tid), os.SCHED_OTHER, os.sched_param(0))
        except OSError:  # gone meanwhile, or not permitted (then it was never raised either)
            continue


def fine_timer_slack() -> None:
    """Ask for 1 ns timer slack (default 50 us) so that sleeps end close to their deadline."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(29, 1, 0, 0, 0)  # PR_SET_TIMERSLACK


def template() -> bytearray:
    msg = JointState(name=ARM, position=Q0, velocity=[0.05] * len(ARM))
    msg.header.frame_id = "0" * SEQ_DIGITS
    raw = bytearray(serialize_message(msg))
    if raw[1] != 1 or raw[FRAME - 4 : FRAME] != struct.pack("<I", SEQ_DIGITS + 1):
        raise RuntimeError("unexpected CDR layout of sensor_msgs/JointState")
    return raw


def patch(raw: bytearray, stamp: int, seq: int) -> bytes:
    """The template with this stamp (ns) and sequence number, serialized."""
    struct.pack_into("<iI", raw, SEC, *divmod(stamp, 1_000_000_000))
    raw[FRAME : FRAME + SEQ_DIGITS] = b"%010d" % seq
    return bytes(raw)


def decode(raw: bytes) -> tuple[int, int]:
    """(stamp in ns, sequence number) of a serialized JointState (-1 when frame_id is no number)."""
    sec, nsec, length = struct.unpack_from("<iII", raw, SEC)
    frame = raw[FRAME : FRAME + length - 1]
    return sec * 1_000_000_000 + nsec, int(frame) if frame.isdigit() else -1


def publish(
    topic: str, rate: float, count: int, out: str, spin_us: float, cpu: int | None, sched: str
) -> None:
    fine_timer_slack()
    pin(cpu, sched)  # before init: the middleware's threads inherit it
    rclpy.init()
    node = rclpy.create_node("latency_publisher")
    pub = node.create_publisher(JointState, topic, PUBLISHER_QOS)
    unraise_async_writer()
    end = time.monotonic() + 30.0
    while pub.get_subscription_count() == 0:
        if time.monotonic() > end:
            sys.exit(f"publisher: nobody subscribed to {topic} within 30 s")
        time.sleep(0.01)
    print("matched", flush=True)
    sys.stdin.readline()  # "go"
    time.sleep(0.2)  # let the match settle on the subscriber's side too
    raw = template()
    log = np.zeros((count, 3), dtype=np.int64)  # seq, scheduled (monotonic ns), stamp (system ns)
    period = int(1e9 / rate)
    spin_ns = int(spin_us * 1e3)
    gc.disable()
    cpu0 = time.process_time()
    t0 = time.monotonic_ns() + 10_000_000
    sent = 0
    for k in range(count):
        due = t0 + k * period
        ahead = due - time.monotonic_ns() - spin_ns
        if ahead > 0:
            time.sleep(ahead * 1e-9)
        elif ahead < -MAX_LATE * period:
            continue  # the publisher was stalled: a driver sends its current state, not a backlog
        while time.monotonic_ns() < due:
            pass
        stamp = time.time_ns()
        pub.publish(patch(raw, stamp, k))
        log[sent] = k, due, stamp
        sent += 1
    wall = (time.monotonic_ns() - t0) * 1e-9
    cpu_s = time.process_time() - cpu0
    log = log[:sent]
    log[:, 1] += time.time_ns() - time.monotonic_ns()  # scheduled times on the system clock
    np.save(out, log)
    np.save(out.replace(".npy", "_cpu.npy"), np.array([cpu_s, wall, count - sent]))
    node.destroy_node()
    rclpy.try_shutdown()


def receive(topic: str, out: str, cpu: int | None, sched: str, wait: bool) -> None:
    pin(cpu, sched)  # before init: the middleware's threads inherit it
    rclpy.init(signal_handler_options=SignalHandlerOptions.NO)
    stop = []
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.append(1))
    node = rclpy.create_node("latency_receiver")
    sub = node.create_subscription(JointState, topic, lambda _: None, RECEIVER_QOS, raw=True)
    unraise_async_writer()
    from rclpy.impl.implementation_singleton import rclpy_implementation as _rclpy

    wait_set = _rclpy.WaitSet(1, 0, 0, 0, 0, 0, node.context.handle)
    handle = sub.handle
    while wait and sub.get_publisher_count() == 0 and not stop:
        time.sleep(0.01)
    print("ready", flush=True)
    rows: list[tuple[int, int, int, int]] = []  # take, middleware reception (system ns), stamp, seq
    append, take, now = rows.append, handle.take_message, time.time_ns
    gc.disable()
    cpu0, wall0 = time.process_time(), time.monotonic()
    while not stop:
        wait_set.clear_entities()
        wait_set.add_subscription(handle)
        wait_set.wait(50_000_000)
        while (taken := take(JointState, True)) is not None:
            t = now()
            raw, info = taken
            append((t, info["received_timestamp"], *decode(raw)))
    cpu_s, wall = time.process_time() - cpu0, time.monotonic() - wall0
    np.save(out, np.array(rows, dtype=np.int64).reshape(-1, 4))
    np.save(out.replace(".npy", "_cpu.npy"), np.array([cpu_s, wall]))
    node.destroy_node()
    rclpy.try_shutdown()


def echo(mode: str, in_topic: str, out_topic: str) -> None:
    rclpy.init()  # SIGINT/SIGTERM shut the context down
    node = rclpy.create_node(f"latency_echo_{mode}")
    pub = node.create_publisher(JointState, out_topic, 10)

    def answer(msg: JointState) -> None:
        pub.publish(JointState(header=msg.header, name=msg.name, effort=msg.position))

    sub = node.create_subscription(JointState, in_topic, answer, SUBJECT_QOS)
    print("ready", flush=True)
    try:
        if mode == "spin":
            rclpy.spin(node)
        elif mode == "waitset":
            from rclpy.impl.implementation_singleton import rclpy_implementation as _rclpy

            wait_set = _rclpy.WaitSet(1, 0, 0, 0, 0, 0, node.context.handle)
            handle = sub.handle
            while rclpy.ok():
                wait_set.clear_entities()
                wait_set.add_subscription(handle)
                wait_set.wait(50_000_000)
                while (taken := handle.take_message(JointState, False)) is not None:
                    answer(taken[0])
        elif mode == "loop":
            from rnea_ros.ros.waitset_loop import WaitSetExecutor

            executor = WaitSetExecutor()
            executor.add_node(node)
            executor.spin()
        elif mode == "events":
            from rclpy.experimental import EventsExecutor

            executor = EventsExecutor()
            executor.add_node(node)
            while rclpy.ok():
                executor.spin_once(timeout_sec=0.05)
        else:
            raise SystemExit(f"echo: unknown mode {mode!r}")
    except (KeyboardInterrupt, rclpy.executors.ExternalShutdownException):
        pass
    except Exception:  # noqa: BLE001 - a take or wait racing the shutdown
        if rclpy.ok():
            raise
    finally:
        rclpy.try_shutdown()


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    roles = parser.add_subparsers(dest="role", required=True)
    for name in ("publish", "receive"):
        role = roles.add_parser(name)
        role.add_argument("topic")
        if name == "publish":
            role.add_argument("rate", type=float)
            role.add_argument("count", type=int)
            role.add_argument("--spin-us", type=float, default=20.0, help="busy-wait before a send")
        else:
            role.add_argument("--no-wait", action="store_true", help="ready before a publisher appears")
        role.add_argument("out")
        role.add_argument("--cpu", type=int, help="pin to this CPU")
        role.add_argument("--sched", choices=("fifo", "nice", "none"), default="none")
    role = roles.add_parser("echo")
    role.add_argument("mode", choices=("spin", "waitset", "loop", "events"))
    role.add_argument("input")
    role.add_argument("output")
    args = parser.parse_args(argv)
    if args.role == "publish":
        publish(args.topic, args.rate, args.count, args.out, args.spin_us, args.cpu, args.sched)
    elif args.role == "receive":
        receive(args.topic, args.out, args.cpu, args.sched, not args.no_wait)
    else:
        echo(args.mode, args.input, args.output)


if __name__ == "__main__":
    main(sys.argv[1:])
