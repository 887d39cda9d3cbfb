"""Tail latency at 1 kHz over minutes: the inverse_dynamics node against the lean wait-set echo
(the rclpy floor) in one run, with the harness's own capacity (the null subject) beside them.

bench_latency.py's pieces (bench/latency_roles.py's publisher and receiver processes, same
priority and pinning, same analysis): a publisher process sends stamped JointStates of the
Panda's 7 joints at --rate on an absolute schedule, the subject answers, a receiver process
records each answer's arrival. Each subject is measured for --seconds after --warmup seconds that
are not counted (start-up), one after the other in one run. Per subject: delivered %, p50, p99,
p99.9 and the maximum latency, the answers later than 1 ms and 2 ms (outside the warm-up), CPU
per answer; the node also as a ratio of the echo's figures. --gc-compare adds the node with the
collector left unfrozen (RNEA_ROS_GC_FREEZE=0): what gc.freeze changes in the tail.

    .venv/bin/python bench/tail_latency.py [--seconds 600] [--rate 1000] [--warmup 5] [--gc-compare]
        [--subjects null echo-waitset node] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_latency as bl  # noqa: E402

NOFREEZE = "node-nofreeze"
KEYS = ("delivered", "p50", "p99", "p999", "max", "over_1ms", "over_2ms", "cpu_us")


def nofreeze_subject(tmp: Path, node_cmd: list[str], node_answer: str) -> bl.Subject:
    """The node subject again under another name and topics, its collector never frozen."""
    (node,) = bl.subjects_for(["node"], node_cmd, node_answer, tmp)
    topic = "/latency/node_nofreeze/joint_states"
    argv = [a.replace(node.input, topic).replace("__node:=node", "__node:=node_nofreeze") for a in node.argv]
    answer = node.answer.replace("/node/", "/node_nofreeze/")
    return bl.Subject(NOFREEZE, argv, topic, answer, {"RNEA_ROS_GC_FREEZE": "0"})


def table(cells: list[dict]) -> str:
    ref = next((c for c in cells if c["subject"] == bl.FLOOR), None)
    lines = [
        "| subject | sent | delivered % | p50 ms | p99 ms | p99.9 ms | max ms | > 1 ms | > 2 ms "
        "| CPU µs/answer | p50 / echo-waitset | p99.9 / echo-waitset | CPU / echo-waitset |",
        "| --- | --: | --: | --: | --: | --: | --: | --: | --: | --: | --: | --: | --: |",
    ]
    for c in cells:
        ratios = ["–"] * 3
        if ref is not None and c["subject"] not in ("null", bl.FLOOR):
            ratios = [f"{c[k] / ref[k]:.2f}" for k in ("p50", "p999", "cpu_us")]
        cpu = "–" if c["subject"] == "null" else f"{c['cpu_us']:.0f}"
        lines.append(
            f"| {c['subject']} | {c['sent']} | {100 * c['delivered']:.2f} | {c['p50']:.3f} | {c['p99']:.3f} "
            f"| {c['p999']:.3f} | {c['max']:.2f} | {c['over_1ms']} | {c['over_2ms']} | {cpu} | "
            + " | ".join(ratios)
            + " |"
        )
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=600.0, help="measured seconds per subject")
    parser.add_argument("--rate", type=float, default=1000.0, help="joint_states Hz")
    parser.add_argument("--warmup", type=float, default=5.0, help="seconds first sent, not counted")
    parser.add_argument("--subjects", nargs="+", default=["null", bl.FLOOR, "node"], choices=bl.SUBJECTS)
    parser.add_argument(
        "--gc-compare", action="store_true", help=f"also {NOFREEZE}: the node with RNEA_ROS_GC_FREEZE=0"
    )
    node_cmd = f"{shlex.quote(sys.executable)} -m rnea_ros.nodes.inverse_dynamics"
    parser.add_argument("--node-cmd", default=node_cmd)
    parser.add_argument("--node-answer", default="/inverse_dynamics/joint_efforts")
    parser.add_argument("--spin-us", type=float, default=20.0, help="publisher busy-wait before a send, µs")
    parser.add_argument("--sched", choices=("auto", "fifo", "nice", "none"), default="auto")
    cpus = sorted(os.sched_getaffinity(0))
    parser.add_argument("--pin", type=int, nargs=2, default=[cpus[0], cpus[-1]] if len(cpus) > 1 else None)
    parser.add_argument("--no-pin", dest="pin", action="store_const", const=None)
    parser.add_argument("--json", metavar="PATH")
    args = parser.parse_args()
    if args.sched == "auto":
        args.sched = bl.permitted_priority()

    env = dict(os.environ)
    env.setdefault("ROS_DOMAIN_ID", str(150 + os.getpid() % 80))
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(bl.ROOT), env.get("PYTHONPATH")) if p)
    sys.path.insert(0, str(bl.ROOT))
    tmp = Path(tempfile.mkdtemp(prefix="tail_latency_"))
    node_cmd = shlex.split(args.node_cmd)
    subjects = bl.subjects_for(args.subjects, node_cmd, args.node_answer, tmp)
    if args.gc_compare:
        subjects.append(nofreeze_subject(tmp, node_cmd, args.node_answer))
    load_before = os.getloadavg()
    t_start = time.monotonic()
    cells: list[dict] = []
    try:
        for s in subjects:
            bl.start(s, tmp, env)
        for s in subjects:
            bl.wait_ready(s, args, tmp, env)
        for s in subjects:
            cell = bl.run_cell(s, args.rate, args.seconds, args.warmup, args, tmp, env)
            cell["load_after"] = os.getloadavg()[0]
            cells.append(cell)
            print(
                f"{s.name:<14} delivered {100 * cell['delivered']:6.2f} % p50 {cell['p50']:.3f} "
                f"p99.9 {cell['p999']:.3f} max {cell['max']:.2f} ms, > 1 ms {cell['over_1ms']}, "
                f"> 2 ms {cell['over_2ms']} (load {cell['load']:.1f} -> {cell['load_after']:.1f})",
                flush=True,
            )
    finally:
        for s in subjects:
            bl.stop(s)
        shutil.rmtree(tmp, ignore_errors=True)
    load_after = os.getloadavg()
    print(
        f"\ntail latency joint_states -> answer at {args.rate:.0f} Hz, Panda 7 joints, "
        f"{args.seconds:g} s per subject after {args.warmup:g} s warm-up (not counted), one after the "
        f"other; {os.cpu_count()} cores, "
        f"load average {load_before[0]:.1f}/{load_before[1]:.1f}/{load_before[2]:.1f} before, "
        f"{load_after[0]:.1f}/{load_after[1]:.1f}/{load_after[2]:.1f} after, "
        f"{time.monotonic() - t_start:.0f} s in all\n"
    )
    print(table(cells))
    node = next((c for c in cells if c["subject"] == "node"), None)
    if node is not None:
        print(
            f"\naim (issue 22): none later than 2 ms outside start-up: {node['over_2ms']} "
            f"({'met' if node['over_2ms'] == 0 else 'MISSED'}; {node['over_2ms_in_stall']} of them "
            f"while the harness itself was stalled, of {node['harness_stalls']} harness stalls > "
            f"{bl.STALL_MS:g} ms); delivered ≥ 99 %: "
            f"{100 * node['delivered']:.2f} % ({'met' if node['delivered'] >= 0.99 else 'MISSED'})"
        )
    print(
        f"\nharness (publisher and receiver: priority {args.sched}, "
        f"CPUs {'not pinned' if args.pin is None else tuple(args.pin)}):"
    )
    for c in cells:
        c["rep"] = 0
    print("\n".join(bl.harness(cells, [args.rate])))
    if args.json:
        Path(args.json).write_text(json.dumps({"args": vars(args), "cells": cells}, indent=1, default=float))
    return 0 if all(np.isfinite(c["p50"]) for c in cells) else 1


if __name__ == "__main__":
    sys.exit(main())
