"""Soak of the inverse_dynamics node: joint_states flooded (5 kHz; `make bench`: 20 kHz), garbage
storms, memory.

Phases against one node process (Panda to panda_hand), the Driver of the test suite checking
every published effort (finite, within the URDF limit):
  1. warm-up flood, 2 s;
  2. flood at RATE for DURATION s, RSS sampled every second;
  3. a garbage storm: random names, lengths, NaN/Inf/huge values, duplicates, empty messages;
  4. round-trip latency before and after, and a correctness check on a good message against the
     core's rnea (friction off, no trajectory: the command is rnea(q, q̇, 0)).
The flood's publisher is a Python node: the rate it reached is printed beside the one asked.
Prints a table for the README.

    .venv/bin/python bench/soak.py [--rate 5000] [--duration 30] [--storm 20000]
        [--executor waitset|default|events]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import psutil

from rnea_ros import RobotModel, rnea
from rnea_ros.model.example_robots import example_urdf_path
from rnea_ros.testing.rosgraph import FRICTION_OFF, Driver, start_node, stop

URDF = example_urdf_path("panda").read_text()
MODEL = RobotModel.from_urdf(URDF, tip_link="panda_hand")
NAMES = list(MODEL.joint_names)
Q, QD = np.linspace(-0.5, 0.5, 7), np.linspace(0.2, -0.2, 7)


def storm(driver: Driver, count: int, rng: np.random.Generator) -> int:
    pool = [*NAMES, "panda_finger_joint1", "x", ""]
    specials = np.array([np.nan, np.inf, -np.inf, 1e300, -1e300, 1e155, 0.0])
    for k in range(count):
        n = int(rng.integers(0, 11))
        names = list(rng.choice(pool, n)) if k % 3 else list(NAMES)
        width = max(0, len(names) + int(rng.integers(-1, 2)) * (k % 5 == 0))  # some lengths wrong
        values = rng.normal(0, 3, (2, width))
        mask = rng.random(values.shape) < 0.2
        values[mask] = rng.choice(specials, int(mask.sum()))
        msg = driver.state(names, [])
        msg.position = values[0].tolist()
        msg.velocity = values[1].tolist() if k % 7 else []
        if k % 11 == 0:
            msg.header.stamp.sec = 0
            msg.header.stamp.nanosec = 0
        driver.joint_states.publish(msg)
        if k % 200 == 0:
            driver.spin(0.001)
    return count


def round_trip_ms(driver: Driver, n: int = 50) -> float:
    times = []
    for _ in range(n):
        t0 = time.monotonic()
        assert driver.command_for(driver.state(NAMES, Q, QD), timeout=2.0) is not None
        times.append((time.monotonic() - t0) * 1e3)
    return float(np.median(times))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rate", type=float, default=5000.0)
    parser.add_argument("--duration", type=float, default=30.0)
    parser.add_argument("--storm", type=int, default=20000)
    parser.add_argument(
        "--executor",
        choices=("waitset", "default", "events"),
        default="waitset",
        help="the node's RNEA_ROS_EXECUTOR (waitset: its default loop)",
    )
    args = parser.parse_args()
    os.environ["RNEA_ROS_EXECUTOR"] = args.executor
    tmp = Path(tempfile.mkdtemp(prefix="rnea_soak_"))
    # friction from the measured velocity depends on the measured loop period: off, so that the
    # final check is exact (test_friction_node checks that term)
    params = {"robot_description": URDF, "tip_link": "panda_hand", "joint_states_timeout": 0.5}
    params.update(FRICTION_OFF)
    proc = start_node(tmp, params)
    driver = Driver("soak_driver", dict(zip(NAMES, MODEL.effort_limit, strict=True)))
    try:
        driver.wait_for_commands(lambda: driver.state(NAMES, Q, QD))
        node = psutil.Process(proc.pid)
        before = round_trip_ms(driver)
        msg = driver.state(NAMES, Q, QD)
        driver.flood(msg, 2.0, args.rate)
        published_before = int(driver.latest_diagnostics()["commands_published"])
        rss = []
        sent = driver.flood(msg, args.duration, args.rate, lambda: rss.append(node.memory_info().rss / 2**20))
        answered = int(driver.latest_diagnostics()["commands_published"]) - published_before
        tried = storm(driver, args.storm, np.random.default_rng(0))
        driver.spin(2.0)
        after = round_trip_ms(driver)
        got = driver.command_for(driver.state(NAMES, Q, QD))
        want = rnea(MODEL, Q, QD, np.zeros(7))
        correct = got is not None and np.allclose(got, want, rtol=0, atol=1e-9)
        error = float(np.abs(got - want).max()) if got is not None else float("nan")
        checked = driver.check_published_efforts()
        alive = proc.poll() is None
    finally:
        driver.close()
        output = stop(proc)
    crashes = int(not alive) + output.count("Traceback")
    rows = [
        ("node's executor", args.executor),
        (
            "joint_states flood",
            f"{sent} msgs at {sent / args.duration:.0f} Hz for {args.duration:.0f} s "
            f"(asked: {args.rate:.0f} Hz)",
        ),
        ("commands during the flood", f"{answered} ({answered / args.duration:.0f} Hz, newest state wins)"),
        (
            "RSS during the flood",
            f"{rss[0]:.1f} -> {rss[-1]:.1f} MiB (growth {rss[-1] - rss[0]:+.2f} MiB "
            f"over {len(rss) - 1} s, peak {max(rss):.1f}; target ≤ 5)",
        ),
        ("garbage joint_states storm", f"{tried} msgs (bad names, lengths, NaN/Inf/1e300, unstamped)"),
        ("round trip p50 before / after", f"{before:.2f} ms / {after:.2f} ms"),
        ("published efforts checked", f"{checked}, non-finite or over limit: 0 (asserted)"),
        ("node crashes", str(crashes)),
        ("correct command after all of it", f"{correct} (largest difference from rnea {error:.1e} N m)"),
    ]
    print("| soak | result |\n| --- | --- |")
    for name, value in rows:
        print(f"| {name} | {value} |")
    ok = crashes == 0 and correct and rss[-1] - rss[0] < 5 and after < max(3 * before, 20)
    print(f"soak {'passed' if ok else 'FAILED'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
