"""End-to-end latency of the inverse_dynamics node at 1 kHz, side by side with an echo node.

A driver publishes stamped joint_states of a 7-DOF arm (Panda, plus its two finger joints as a
real robot driver would) at RATE for DURATION seconds to each subject in turn and times, in the
driver process, the publish of every message to the arrival of the Float64MultiArray answering it:

- echo: a trivial rclpy node (JointState in, the positions out as Float64MultiArray), subscribed
  with the node's own joint_states QoS: the rclpy floor on this machine;
- inverse_dynamics: the real node (`python -m rnea_ros.node.main --ros-args --params-file ...`),
  timed on ~/effort_commands, with the default parameters and with publish_terms off.

Answers are matched to inputs by value (positions are unique per message; the node's
~/effort_commands equal ~/joint_efforts, which carries the input stamp), so a lost message never
shifts the pairing. Target (issue 4): p50 and p99 within 1.25x of the echo, no more lost.

    .venv/bin/python bench/bench_latency.py [--rate 1000] [--duration 10]
"""

from __future__ import annotations

import argparse
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("ROS_DOMAIN_ID", str(150 + os.getpid() % 80))

import numpy as np  # noqa: E402
import psutil  # noqa: E402
import rclpy  # noqa: E402
import yaml  # noqa: E402
from rclpy.executors import SingleThreadedExecutor  # noqa: E402
from rclpy.node import Node  # noqa: E402
from rclpy.qos import QoSProfile, ReliabilityPolicy  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from std_msgs.msg import Float64MultiArray  # noqa: E402

ARM = [f"panda_joint{i}" for i in range(1, 8)]
NAMES = [*ARM, "panda_finger_joint1", "panda_finger_joint2"]
Q0 = np.array([0.0, -0.4, 0.0, -2.0, 0.0, 1.6, 0.8, 0.02, 0.02])
# Deep enough to hold a whole run: the driver sleeps while measuring and drains afterwards, so
# its own executor neither competes for the CPU nor drops answers.
NODE = "/inverse_dynamics"
RESULTS = QoSProfile(depth=20000, reliability=ReliabilityPolicy.RELIABLE)


def positions(k: int) -> list[float]:
    """The k-th published joint positions (unique per k), rad and m."""
    q = Q0 + 0.3 * np.sin(2 * math.pi * 0.07 * k * 1e-3 + np.arange(len(NAMES)))
    q[0] += k * 1e-9
    return [float(x) for x in q]


def state(k: int) -> JointState:
    """The k-th joint_states message, stamped now (system clock, as the node's clock)."""
    msg = JointState(name=NAMES, position=positions(k), velocity=[0.05] * len(NAMES))
    msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(time.time_ns(), 1_000_000_000)
    return msg


def run_echo() -> None:
    """The reference subject: every joint_states answered with its positions, nothing else."""
    from rnea_ros.node.inverse_dynamics import JOINT_STATES_QOS

    rclpy.init(args=sys.argv)
    node = Node("echo")
    pub = node.create_publisher(Float64MultiArray, "~/commands", 10)
    node.create_subscription(
        JointState,
        "joint_states",
        lambda m: pub.publish(Float64MultiArray(data=m.position)),
        JOINT_STATES_QOS,
    )
    try:
        rclpy.spin(node)
    except (KeyboardInterrupt, rclpy.executors.ExternalShutdownException):
        pass
    finally:
        rclpy.try_shutdown()


def run_publisher(rate: float, count: int, out: str) -> None:
    """Publish states 1..count at `rate` Hz on an absolute schedule; save their stamps (ns)."""
    rclpy.init()
    node = Node("latency_publisher")
    pub = node.create_publisher(JointState, "joint_states", 10)
    end = time.monotonic() + 10.0
    while pub.get_subscription_count() == 0 and time.monotonic() < end:
        time.sleep(0.01)
    time.sleep(0.3)  # let the match settle on both sides
    stamps = np.zeros(count + 1, dtype=np.int64)
    period = 1.0 / rate
    t0 = time.perf_counter()
    for k in range(1, count + 1):
        delay = t0 + (k - 1) * period - time.perf_counter()
        if delay > 0:
            time.sleep(delay)
        msg = state(k)
        stamps[k] = msg.header.stamp.sec * 1_000_000_000 + msg.header.stamp.nanosec
        pub.publish(msg)
    np.save(out, stamps)
    node.destroy_node()
    rclpy.try_shutdown()


class Subject:
    """A process under test: how to start it, where it answers, how an answer finds its input."""

    def __init__(self, label: str, argv: list[str], output: str, stamp_topic: str | None) -> None:
        self.label, self.argv, self.output, self.stamp_topic = label, argv, output, stamp_topic


class Driver:
    """Receives every answer with its arrival time (system clock, ns); publishes only to probe."""

    def __init__(self, subjects: list[Subject]) -> None:
        self.node = Node("latency_driver")
        self.executor = SingleThreadedExecutor()
        self.executor.add_node(self.node)
        self.probe = self.node.create_publisher(JointState, "joint_states", 10)
        self.arrivals: dict[str, list[tuple[tuple, int]]] = {}
        self.stamps: dict[tuple, int] = {}  # node answer values -> input stamp (ns)
        for s in subjects:
            self.arrivals[s.output] = []
            self.node.create_subscription(
                Float64MultiArray, s.output, self._recorder(self.arrivals[s.output]), RESULTS
            )
            if s.stamp_topic:
                self.node.create_subscription(JointState, s.stamp_topic, self._on_stamped, RESULTS)

    @staticmethod
    def _recorder(into: list):
        """Arrival = the middleware's reception time (system clock), not this executor's pick-up."""
        return lambda msg, info: into.append((tuple(msg.data), info["received_timestamp"]))

    def _on_stamped(self, msg: JointState) -> None:
        self.stamps[tuple(msg.effort)] = msg.header.stamp.sec * 1_000_000_000 + msg.header.stamp.nanosec

    def reset(self) -> None:
        self.stamps.clear()
        for answers in self.arrivals.values():
            answers.clear()

    def spin_until(self, done, timeout: float) -> bool:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if done():
                return True
            self.executor.spin_once(timeout_sec=0.01)
        return done()

    def drain(self) -> None:
        """Take every queued answer (stops after 0.2 s without one)."""
        quiet_since = time.monotonic()
        seen = -1
        while time.monotonic() - quiet_since < 0.2:
            self.executor.spin_once(timeout_sec=0.01)
            count = len(self.stamps) + sum(map(len, self.arrivals.values()))
            if count != seen:
                seen, quiet_since = count, time.monotonic()

    def latencies(self, subject: Subject, stamps: np.ndarray, first: int) -> np.ndarray:
        """Latency (s) of every answered input k >= first."""
        wanted = {int(s) for s in stamps[first:]}
        by_positions = {tuple(positions(k)): int(stamps[k]) for k in range(first, len(stamps))}
        out = []
        for values, t_arrival in self.arrivals[subject.output]:
            stamp = self.stamps.get(values) if subject.stamp_topic else by_positions.get(values)
            if stamp in wanted:
                out.append((t_arrival - stamp) * 1e-9)
        return np.array(out)


def measure(driver: Driver, subject: Subject, rate: float, duration: float, tmp: Path) -> dict:
    driver.reset()
    proc = subprocess.Popen(subject.argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        answers = driver.arrivals[subject.output]

        def answered() -> bool:
            driver.probe.publish(state(-1))
            return bool(answers)

        if not driver.spin_until(answered, 60.0):
            raise RuntimeError(f"{subject.label}: no answer within 60 s")
        warmup = int(rate)  # 1 s of caches, allocator and discovery settling, not counted
        count = warmup + int(rate * duration)
        out = tmp / "stamps.npy"
        publisher = subprocess.Popen(
            [sys.executable, __file__, "--publish", str(rate), str(count), str(out)]
        )
        cpu = psutil.Process(proc.pid)
        cpu_before = sum(cpu.cpu_times()[:2])
        try:
            publisher.wait(duration + 30.0)
        except subprocess.TimeoutExpired:
            publisher.kill()
        cpu_per_message = (sum(cpu.cpu_times()[:2]) - cpu_before) / count
        load = os.getloadavg()[0]
        time.sleep(0.2)  # late answers
        driver.drain()
        if publisher.poll() is None or publisher.returncode != 0:
            publisher.kill()
            raise RuntimeError("the publisher did not finish")
        lat = driver.latencies(subject, np.load(out), warmup + 1) * 1e3
    finally:
        proc.send_signal(2)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
        errors = proc.stderr.read() if proc.stderr else ""
    if "Traceback" in errors:
        raise RuntimeError(f"{subject.label} failed:\n{errors}")
    sent = count - warmup
    return {
        "label": subject.label,
        "sent": sent,
        "lost": sent - len(lat),
        **{f"p{p}": float(np.percentile(lat, p)) for p in (50, 90, 99)},
        "max": float(lat.max()),
        "cpu": cpu_per_message * 1e6,
        "load": load,
    }


COLUMNS = [  # header, width, row -> text
    ("subject", -36, lambda r, e: r["label"]),
    ("sent", 7, lambda r, e: f"{r['sent']}"),
    ("lost", 6, lambda r, e: f"{r['lost']}"),
    *[(f"{p} ms", 9, lambda r, e, p=p: f"{r[p]:.3f}") for p in ("p50", "p90", "p99", "max")],
    ("cpu us/msg", 11, lambda r, e: f"{r['cpu']:.0f}"),
    ("load", 6, lambda r, e: f"{r['load']:.1f}"),
    *[(f"{p}/echo", 10, lambda r, e, p=p: f"{r[p] / e[p]:.2f}") for p in ("p50", "p99")],
]


def table(rows: list[dict], echo: dict) -> str:
    def line(cells) -> str:
        widths = [w for _, w, _ in COLUMNS]
        return "".join(f"{c:<{-w}}" if w < 0 else f"{c:>{w}}" for c, w in zip(cells, widths, strict=True))

    head = line([h for h, _, _ in COLUMNS])
    return "\n".join([head, "-" * len(head), *(line([f(r, echo) for _, _, f in COLUMNS]) for r in rows)])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rate", type=float, default=1000.0, help="joint_states rate, Hz")
    parser.add_argument("--duration", type=float, default=10.0, help="measured seconds per subject")
    args = parser.parse_args()

    from rnea_ros.robots import example_urdf_path

    tmp = Path(tempfile.mkdtemp(prefix="bench_latency_"))
    node_cmd = [sys.executable, "-m", "rnea_ros.node.main", "--ros-args", "--params-file"]
    subjects = [Subject("echo", [sys.executable, __file__, "--echo"], "/echo/commands", None)]
    urdf = example_urdf_path("panda").read_text()
    variants = [("inverse_dynamics", {}), ("inverse_dynamics, publish_terms off", {"publish_terms": False})]
    for label, extra in variants:
        params = {"robot_description": urdf, "tip_link": "panda_hand", **extra}
        path = tmp / f"params_{len(subjects)}.yaml"
        path.write_text(yaml.safe_dump({"inverse_dynamics": {"ros__parameters": params}}))
        argv = [*node_cmd, str(path)]
        subjects.append(Subject(label, argv, f"{NODE}/effort_commands", f"{NODE}/joint_efforts"))

    rclpy.init()
    driver = Driver(subjects)
    try:
        rows = [measure(driver, s, args.rate, args.duration, tmp) for s in subjects]
    finally:
        driver.node.destroy_node()
        rclpy.try_shutdown()
    echo = rows[0]
    print(f"\nend-to-end latency, joint_states -> command, {args.rate:.0f} Hz for {args.duration:.0f} s, "
          f"Panda (7 DOF), {os.cpu_count()} cores, ROS_DOMAIN_ID {os.environ['ROS_DOMAIN_ID']}")
    print(table(rows, echo))
    for row in rows[1:]:
        ok = all(row[p] <= 1.25 * echo[p] for p in ("p50", "p99")) and row["lost"] <= echo["lost"]
        print(f"target (p50, p99 <= 1.25x echo, lost <= echo), {row['label']}: {'met' if ok else 'NOT met'}")
    return 0


if __name__ == "__main__":
    if "--echo" in sys.argv:
        run_echo()
    elif sys.argv[1:2] == ["--publish"]:
        run_publisher(float(sys.argv[2]), int(sys.argv[3]), sys.argv[4])
    else:
        sys.exit(main())
