"""Cold and warm start of the inverse_dynamics node: process start -> first command.

A driver publishes a Panda joint_states every 20 ms from the moment the node process is spawned
(`python -m rnea_ros.nodes.inverse_dynamics`, the URDF as a parameter);
the time to the first effort command is
measured. Cold: an empty numba cache (NUMBA_CACHE_DIR in a fresh directory: the node compiles
every kernel, as on a machine whose set-up did not prepare the cache); warm: the same directory
again (what `make` set-up and a colcon build leave: `python3 -m rnea_ros.compiled.cache`), then the
installation's own cache. The node's kernel log line is shown for each.

    .venv/bin/python bench/bench_start.py [--warm-runs 3] [--no-cold]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from rnea_ros import RobotModel
from rnea_ros.model.example_robots import example_urdf_path
from rnea_ros.testing.rosgraph import FRICTION_OFF, Driver, start_node, stop

URDF = example_urdf_path("panda").read_text()
MODEL = RobotModel.from_urdf(URDF, tip_link="panda_hand")
NAMES = list(MODEL.joint_names)


def first_command(driver: Driver, tmp: Path, cache: str | None) -> tuple[float, str]:
    """Seconds from spawning the node to its first command, and its kernel log line."""
    if cache is None:
        os.environ.pop("NUMBA_CACHE_DIR", None)
    else:
        os.environ["NUMBA_CACHE_DIR"] = cache
    params = {"robot_description": URDF, "tip_link": "panda_hand", **FRICTION_OFF}
    driver.spin(1.0)  # the previous node's last commands arrive before this one starts
    before = len(driver.commands)
    t0 = time.monotonic()
    proc = start_node(tmp, params)
    try:
        q = np.zeros(MODEL.nv)
        while len(driver.commands) == before:
            if time.monotonic() - t0 > 300 or proc.poll() is not None:
                raise RuntimeError("no command within 300 s (or the node exited)")
            driver.joint_states.publish(driver.state(NAMES, q, q))
            driver.spin(0.02)
        elapsed = driver.commands[before][0] - t0
    finally:
        output = stop(proc)
    line = next((ln for ln in output.splitlines() if "kernels ready" in ln), "?")
    return elapsed, line.split("]: ", 1)[-1]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--warm-runs", type=int, default=3)
    parser.add_argument("--no-cold", action="store_true", help="skip the cold start (it compiles)")
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="rnea_start_"))
    driver = Driver("start_driver")
    rows = []
    try:
        cache = str(tmp / "numba_cache")
        if not args.no_cold:
            rows.append(("cold: empty numba cache", [first_command(driver, tmp, cache)]))
            warm = [first_command(driver, tmp, cache) for _ in range(args.warm_runs)]
            rows.append((f"warm: the cache the cold start left, {args.warm_runs} runs", warm))
        own = [first_command(driver, tmp, None) for _ in range(args.warm_runs)]
        rows.append((f"warm: the installation's cache, {args.warm_runs} runs", own))
    finally:
        driver.close()
    print(f"process start -> first command, Panda, {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}\n")
    print("| start | s (median, min–max) | node's log |\n| --- | --: | --- |")
    for label, runs in rows:
        secs = [s for s, _ in runs]
        spread = "" if len(secs) == 1 else f" ({min(secs):.2f}–{max(secs):.2f})"
        print(f"| {label} | {statistics.median(secs):.2f}{spread} | {runs[-1][1]} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
