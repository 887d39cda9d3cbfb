"""End-to-end latency joint_states -> answer of the inverse_dynamics node and of echo nodes, measured
by a harness that cannot be the bottleneck.

Three processes per measurement (bench/latency_roles.py): a publisher sends stamped, numbered
JointState messages of the Panda arm's 7 joints on an absolute schedule (t_k = t0 + k / rate,
sleep then busy-wait); the subject answers; a receiver takes every answer from a dedicated wait
set in its own process and records its arrival (the middleware's reception time; the take time
too, to show the receiver never lags). Publisher, subject and receiver share the system clock, so
latency = arrival - the input's stamp (answers carry the input's header). Publisher and receiver
run at SCHED_FIFO when permitted (else nice -10) and pinned to the first and last CPU, so the
subject's load cannot delay them; slots the publisher itself misses by more than 2 periods (a
stalled machine) are skipped and counted rather than sent in a burst. Subjects:

- null: no subject, the receiver listens to the publisher itself: the harness's own capacity;
- echo: JointState in -> JointState out (input header, positions as efforts) under rclpy.spin
  (the default executor): the reference;
- echo-waitset: the same echo taking from a dedicated wait set in a loop: the rclpy floor;
- echo-loop: the same echo spun by the nodes' loop (rnea_ros.ros.waitset_loop.WaitSetExecutor);
- echo-events: the same echo under rclpy.experimental.EventsExecutor().spin_once in a loop;
- node, node-default, node-events: `python -m rnea_ros.nodes.inverse_dynamics` (or --node-cmd) with the Panda
  URDF, tip_link panda_hand, publish_terms false, timed on ~/joint_efforts (which carries the
  input's header), spinning its default loop (the wait-set loop), rclpy's default executor
  (RNEA_ROS_EXECUTOR=default) or the EventsExecutor (=events).

Besides the table: the tail of each subject (p99.9, maximum, answers later than 1 and 2 ms) and
each node subject against the issue's targets. `--long MINUTES` is the long run (1 kHz, one
repetition of MINUTES per subject).

Every subject runs for the whole bench, each on its own input topic; at each rate the subjects are
measured one after the other, in an order rotated per repetition, and each subject's p50, p99 and
CPU are also given relative to the echo of the same repetition. Delivered = answered inputs / sent
inputs (after a warm-up that is not counted); the node answers the newest of the states queued
while it worked, so an input it merged without answering counts as not delivered. CPU per answer =
the subject process's utime + stime over the measurement / the answers received.

    .venv/bin/python bench/bench_latency.py [--rates 1000 2000] [--repeat 3] [--duration 8]
        [--subjects null echo echo-waitset echo-loop node node-default ...] [--long MINUTES]
        [--node-cmd "python -m ..."]
        [--sched auto|fifo|nice|none] [--pin PUB_CPU RX_CPU | --no-pin] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import psutil
import yaml

from rnea_ros.ros.processes import die_with_parent

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
ROLES = str(HERE / "latency_roles.py")
SUBJECTS = ["null", "echo", "echo-waitset", "echo-loop", "echo-events", "node", "node-default", "node-events"]
DEFAULT_SUBJECTS = ["null", "echo", "echo-waitset", "echo-loop", "node", "node-default"]
REFERENCE = "echo"
FLOOR = "echo-waitset"
RATIOS = ("p50", "p99", "cpu_us")
ECHO_MODES = {"echo": "spin", "echo-waitset": "waitset", "echo-loop": "loop", "echo-events": "events"}
# node subjects: RNEA_ROS_EXECUTOR of each ("" = the node's default, the wait-set loop)
NODE_EXECUTORS = {"node": "", "node-default": "default", "node-events": "events"}


@dataclass
class Subject:
    """A process under test: how it is started, where it listens and where it answers."""

    name: str
    argv: list[str] | None  # None: no process (the null subject)
    input: str
    answer: str
    env: dict = field(default_factory=dict)  # environment overrides of this subject
    proc: subprocess.Popen | None = None
    log: Path | None = None
    cells: list[dict] = field(default_factory=list)


def subjects_for(names: list[str], node_cmd: list[str], node_answer: str, tmp: Path) -> list[Subject]:
    from rnea_ros.model.example_robots import example_urdf_path

    out = []
    for name in names:
        topic = f"/latency/{name.replace('-', '_')}/joint_states"
        if name == "null":
            out.append(Subject(name, None, topic, topic))
        elif name in ECHO_MODES:
            answer = f"/latency/{name.replace('-', '_')}/answer"
            argv = [sys.executable, ROLES, "echo", ECHO_MODES[name], topic, answer]
            out.append(Subject(name, argv, topic, answer))
        elif name in NODE_EXECUTORS:
            params = {
                "robot_description": example_urdf_path("panda").read_text(),
                "tip_link": "panda_hand",
                "publish_terms": False,
            }
            path = tmp / "node_params.yaml"
            path.write_text(yaml.safe_dump({"/**": {"ros__parameters": params}}))
            argv = [*node_cmd, "--ros-args", "--params-file", str(path), "-r", f"joint_states:={topic}"]
            executor = NODE_EXECUTORS[name]
            answer = node_answer.replace("/inverse_dynamics/", f"/{name.replace('-', '_')}/")
            argv += ["-r", f"__node:={name.replace('-', '_')}"]
            env = {"RNEA_ROS_EXECUTOR": executor} if executor else {}
            out.append(Subject(name, argv, topic, answer, env))
        else:
            raise SystemExit(f"unknown subject {name!r} (choose from {', '.join(SUBJECTS)})")
    return out


def start(subject: Subject, tmp: Path, env: dict) -> None:
    if subject.argv is None:
        return
    subject.log = tmp / f"{subject.name}.log"
    with subject.log.open("w") as log:
        subject.proc = subprocess.Popen(
            subject.argv,
            stdout=log,
            stderr=subprocess.STDOUT,
            env={**env, **subject.env},
            preexec_fn=die_with_parent,
        )


def stop(subject: Subject) -> None:
    proc = subject.proc
    if proc is None or proc.poll() is not None:
        return
    proc.send_signal(signal.SIGINT)
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def cpu_seconds(proc: subprocess.Popen | None) -> float:
    """utime + stime of a process and all its threads (s), from /proc/<pid>/stat."""
    if proc is None:
        return float("nan")
    times = psutil.Process(proc.pid).cpu_times()
    return times.user + times.system


def run_cell(
    subject: Subject, rate: float, duration: float, warmup: float, args, tmp: Path, env: dict
) -> dict:
    """One measurement: receiver up, publisher sends warm-up + duration seconds, receiver stopped."""
    if subject.proc is not None and subject.proc.poll() is not None:
        raise RuntimeError(f"{subject.name} exited ({subject.proc.returncode}); log: {subject.log}")
    rx_out, tx_out = tmp / "rx.npy", tmp / "tx.npy"
    for f in (rx_out, tx_out):
        f.unlink(missing_ok=True)
    pin_tx = ["--sched", args.sched, *(["--cpu", str(args.pin[0])] if args.pin else [])]
    pin_rx = ["--sched", args.sched, *(["--cpu", str(args.pin[1])] if args.pin else [])]
    wait = [] if subject.argv is not None else ["--no-wait"]
    count = int(round(rate * (warmup + duration)))
    # Both start at once; the publisher sends when told, once the receiver is ready.
    receiver = subprocess.Popen(
        [sys.executable, ROLES, "receive", subject.answer, str(rx_out), *pin_rx, *wait],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
        preexec_fn=die_with_parent,
    )
    publisher = subprocess.Popen(
        [
            sys.executable,
            ROLES,
            "publish",
            subject.input,
            str(rate),
            str(count),
            str(tx_out),
            "--spin-us",
            str(args.spin_us),
            *pin_tx,
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=env,
        preexec_fn=die_with_parent,
    )
    try:
        for proc, word in ((receiver, "ready"), (publisher, "matched")):
            line = proc.stdout.readline()  # blocks until the topic has a peer
            if line.strip() != word:
                raise RuntimeError(
                    f"{subject.name}: the {'receiver' if proc is receiver else 'publisher'} did not start"
                )
        cpu0 = cpu_seconds(subject.proc)
        load = os.getloadavg()[0]
        publisher.stdin.write("go\n")
        publisher.stdin.close()
        publisher.wait(warmup + duration + 60.0)
        if publisher.returncode != 0:
            raise RuntimeError(f"publisher to {subject.input} failed ({publisher.returncode})")
        time.sleep(0.3)  # the last answers
        cpu1 = cpu_seconds(subject.proc)
    finally:
        for proc in (publisher, receiver):
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
    tx_cpu = np.load(str(tx_out).replace(".npy", "_cpu.npy"))  # cpu s, wall s, skipped slots
    rx_cpu = np.load(str(rx_out).replace(".npy", "_cpu.npy"))  # cpu s, wall s
    return analyse(np.load(tx_out), np.load(rx_out), int(round(rate * warmup)), cpu1 - cpu0) | {
        "subject": subject.name,
        "rate": rate,
        "load": load,
        "publisher_cpu": float(tx_cpu[0] / tx_cpu[1]),
        "skipped": int(tx_cpu[2]),
        "receiver_cpu": float(rx_cpu[0] / rx_cpu[1]),
    }


# A harness stall: the publisher sent a message more than this late, skipped a slot, or the
# receiver took an answer more than this after its reception (ms). The publisher and the receiver
# run at SCHED_FIFO on their own CPUs, so a stall of theirs is the machine's.
STALL_MS = 1.0
# An answer later than 2 ms counts as in a harness stall when one lies between this long before
# its input was sent and its arrival (ms).
STALL_BEFORE_MS = 5.0


def stall_times(tx: np.ndarray, rx: np.ndarray) -> np.ndarray:
    """Sorted times (system ns) of the harness's own stalls: the scheduled time of every message the
    publisher sent more than STALL_MS late or skipped (a gap in its sequence numbers), and the
    reception of every answer the receiver took more than STALL_MS after it arrived."""
    late = tx[tx[:, 2] - tx[:, 1] > STALL_MS * 1e6, 1]
    gaps = np.flatnonzero(np.diff(tx[:, 0]) > 1)  # slots skipped after row i: at its next slot
    period = (tx[-1, 1] - tx[0, 1]) / max(tx[-1, 0] - tx[0, 0], 1) if len(tx) > 1 else 0
    skipped = tx[gaps, 1] + int(period)
    lagged = rx[(rx[:, 1] > 0) & (rx[:, 0] - rx[:, 1] > STALL_MS * 1e6), 1]
    return np.sort(np.concatenate([late, skipped, lagged]).astype(np.int64))


def analyse(tx: np.ndarray, rx: np.ndarray, warmup: int, cpu: float) -> dict:
    """tx rows: seq, scheduled, stamp; rx rows: take, reception, stamp, seq (all ns)."""
    seq_of = dict(zip(tx[:, 2].tolist(), tx[:, 0].tolist(), strict=True))
    matched = np.array([s in seq_of for s in rx[:, 2].tolist()], dtype=bool)
    rx = rx[matched]
    _, first = np.unique(rx[:, 2], return_index=True)
    rx = rx[np.sort(first)]  # each input's first answer
    seq = np.array([seq_of[s] for s in rx[:, 2].tolist()], dtype=np.int64)
    measured = rx[seq >= warmup]
    sent = int((tx[:, 0] >= warmup).sum())
    arrival = np.where(measured[:, 1] > 0, measured[:, 1], measured[:, 0])  # middleware reception
    lat = (arrival - measured[:, 2]) * 1e-6
    take_lag = (measured[:, 0] - arrival) * 1e-6
    late = (tx[tx[:, 0] >= warmup, 2] - tx[tx[:, 0] >= warmup, 1]) * 1e-6
    stalls = stall_times(tx, rx)
    over = lat > 2.0
    in_stall = 0
    if len(stalls):  # a stall between STALL_BEFORE_MS before the input was sent and the answer
        first = np.searchsorted(stalls, measured[over, 2] - int(STALL_BEFORE_MS * 1e6))
        hit = stalls[np.minimum(first, len(stalls) - 1)] <= arrival[over]
        in_stall = int(((first < len(stalls)) & hit).sum())
    pct = (lambda a, p: float(np.percentile(a, p))) if len(lat) else (lambda a, p: float("nan"))
    return {
        "sent": sent,
        "answered": len(measured),
        "delivered": len(measured) / sent,
        "p50": pct(lat, 50),
        "p99": pct(lat, 99),
        "p999": pct(lat, 99.9),
        "max": float(lat.max()) if len(lat) else float("nan"),
        "over_1ms": int((lat > 1.0).sum()),
        "over_2ms": int(over.sum()),
        "over_2ms_in_stall": in_stall,
        "harness_stalls": len(stalls),
        "cpu_us": cpu / max(len(rx), 1) * 1e6,  # every answer, warm-up included, as the CPU window
        "publisher_late_p99": float(np.percentile(late, 99)),
        "receiver_lag_p99": pct(take_lag, 99),
    }


def wait_ready(subject: Subject, args, tmp: Path, env: dict) -> None:
    """Short probe runs until the subject answers (the node loads its model and compiles first)."""
    end = time.monotonic() + 120.0
    while time.monotonic() < end:
        if subject.proc is not None and subject.proc.poll() is not None:
            raise RuntimeError(f"{subject.name} exited: {subject.log.read_text()[-2000:]}")
        cell = run_cell(subject, 200.0, 0.5, 0.0, args, tmp, env)
        if cell["answered"] > 0:
            return
    raise RuntimeError(f"{subject.name}: no answer within 120 s; log: {subject.log}")


def permitted_priority() -> str:
    """The strongest priority this user may give the harness: "fifo", "nice" or "none"."""
    for sched, argv in (
        ("fifo", "import os; os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(10))"),
        ("nice", "import os; os.nice(-10)"),
    ):
        if subprocess.run([sys.executable, "-c", argv], capture_output=True).returncode == 0:
            return sched
    return "none"


def median_range(values: list[float], fmt: str) -> str:
    v = np.array(values, dtype=float)
    if np.isnan(v).all():
        return "–"
    mid = format(float(np.nanmedian(v)), fmt)
    return mid if len(v) == 1 else f"{mid} ({format(np.nanmin(v), fmt)}–{format(np.nanmax(v), fmt)})"


def summarize(cells: list[dict], rates: list[float], names: list[str]) -> list[dict]:
    rows = []
    for rate in rates:
        ref = {c["rep"]: c for c in cells if c["rate"] == rate and c["subject"] == REFERENCE}
        for name in names:
            mine = [c for c in cells if c["rate"] == rate and c["subject"] == name]
            row = {"rate": rate, "subject": name, "reps": len(mine)}
            for key in (
                "delivered",
                "p50",
                "p99",
                "p999",
                "max",
                "cpu_us",
                "over_1ms",
                "over_2ms",
                "over_2ms_in_stall",
                "answered",
            ):
                row[key] = [c[key] for c in mine]
            for key in RATIOS:  # the null subject has no process: nothing to compare
                row[f"{key}_ratio"] = [
                    c[key] / ref[c["rep"]][key] for c in mine if c["rep"] in ref and name != "null"
                ]
            rows.append(row)
    return rows


def markdown(rows: list[dict]) -> str:
    head = (
        "| rate Hz | subject | delivered % | p50 ms | p99 ms | max ms | CPU µs/answer "
        "| p50 / echo | p99 / echo | CPU / echo |"
    )
    lines = [head, "| --: | --- | --: | --: | --: | --: | --: | --: | --: | --: |"]
    for r in rows:
        cells = [
            f"{r['rate']:.0f}",
            r["subject"],
            median_range([100 * d for d in r["delivered"]], ".1f"),
            median_range(r["p50"], ".3f"),
            median_range(r["p99"], ".3f"),
            f"{np.nanmax(r['max']):.2f}",
            median_range(r["cpu_us"], ".0f"),
            *(median_range(r[f"{k}_ratio"], ".2f") if r[f"{k}_ratio"] else "–" for k in RATIOS),
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def tails(rows: list[dict]) -> str:
    """The tail of every subject: p99.9, the maximum, answers later than 1 and 2 ms (all reps), and
    how many of the latter came while the harness itself was stalled (`stall_times`)."""
    lines = [
        "| rate Hz | subject | answers | p99.9 ms | max ms | later than 1 ms | later than 2 ms "
        "| of them in a harness stall |",
        "| --: | --- | --: | --: | --: | --: | --: | --: |",
    ]
    for r in rows:
        lines.append(
            f"| {r['rate']:.0f} | {r['subject']} | {sum(r['answered'])} | {median_range(r['p999'], '.3f')} "
            f"| {np.nanmax(r['max']):.2f} | {sum(r['over_1ms'])} | {sum(r['over_2ms'])} "
            f"| {sum(r['over_2ms_in_stall'])} |"
        )
    return "\n".join(lines)


def verdicts(cells: list[dict], rates: list[float], names: list[str]) -> list[str]:
    """Each node subject against the issue's targets, from per-repetition ratios (medians)."""
    out = []
    for rate in rates:
        by = {(c["subject"], c["rep"]): c for c in cells if c["rate"] == rate}
        for name in [n for n in names if n.startswith("node")]:

            def ratio(key: str, ref: str, name: str = name, by: dict = by) -> float:
                v = [c[key] / by[(ref, r)][key] for (s, r), c in by.items() if s == name and (ref, r) in by]
                return float(np.median(v)) if v else float("nan")

            delivered = float(np.median([c["delivered"] for (s, _), c in by.items() if s == name]))
            checks = [
                ("delivered", 100 * delivered, "≥ 99 %", delivered >= 0.99, ".2f"),
                ("p50 / echo", ratio("p50", REFERENCE), "≤ 1.0", ratio("p50", REFERENCE) <= 1.0, ".2f"),
                ("p99 / echo", ratio("p99", REFERENCE), "≤ 0.5", ratio("p99", REFERENCE) <= 0.5, ".2f"),
                ("p50 / echo-waitset", ratio("p50", FLOOR), "≤ 1.3", ratio("p50", FLOOR) <= 1.3, ".2f"),
                ("p99 / echo-waitset", ratio("p99", FLOOR), "≤ 1.3", ratio("p99", FLOOR) <= 1.3, ".2f"),
                ("CPU / echo", ratio("cpu_us", REFERENCE), "≤ 0.5", ratio("cpu_us", REFERENCE) <= 0.5, ".2f"),
            ]
            text = "; ".join(
                f"{k} {format(v, f)} ({t}: {'met' if ok else 'MISSED'})" for k, v, t, ok, f in checks
            )
            out.append(f"- {rate:.0f} Hz {name}: {text}")
    return out


def harness(cells: list[dict], rates: list[float]) -> list[str]:
    out = []
    for rate in rates:
        mine = [c for c in cells if c["rate"] == rate]
        null = [c["delivered"] for c in mine if c["subject"] == "null"]
        text = f"- {rate:.0f} Hz: "
        if null:
            text += f"null subject delivered {100 * min(null):.2f} % (worst of {len(null)}); "
        text += (
            f"publisher send lateness p99 ≤ {max(c['publisher_late_p99'] for c in mine):.3f} ms "
            f"({sum(c['skipped'] for c in mine)} slots skipped as the publisher was stalled > 2 periods, "
            f"{sum(c['sent'] for c in mine)} sent), "
            f"receiver reception→take p99 ≤ {max(c['receiver_lag_p99'] for c in mine):.3f} ms, "
            f"publisher CPU ≤ {100 * max(c['publisher_cpu'] for c in mine):.0f} %, "
            f"receiver CPU ≤ {100 * max(c['receiver_cpu'] for c in mine):.0f} % of a core"
        )
        out.append(text)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rates", type=float, nargs="+", default=[1000.0, 2000.0], help="joint_states Hz")
    parser.add_argument("--repeat", type=int, default=3, help="repetitions (subject order rotated)")
    parser.add_argument("--duration", type=float, default=8.0, help="measured seconds per cell")
    parser.add_argument("--warmup", type=float, default=0.5, help="seconds sent first, not counted")
    parser.add_argument("--subjects", nargs="+", default=DEFAULT_SUBJECTS, choices=SUBJECTS)
    parser.add_argument(
        "--long",
        type=float,
        metavar="MINUTES",
        help="the long run: 1 kHz, one repetition of MINUTES per subject (default subjects: "
        "null, echo-waitset, node); prints p99.9, max, answers later than 1 and 2 ms",
    )
    parser.add_argument(
        "--node-cmd",
        default=f"{shlex.quote(sys.executable)} -m rnea_ros.nodes.inverse_dynamics",
        help="command starting the node (--ros-args ... is appended)",
    )
    parser.add_argument(
        "--node-answer",
        default="/inverse_dynamics/joint_efforts",
        help="the node's answer topic (JointState carrying the input header)",
    )
    parser.add_argument("--spin-us", type=float, default=20.0, help="publisher busy-wait before a send, µs")
    cpus = sorted(os.sched_getaffinity(0))
    parser.add_argument(
        "--pin",
        type=int,
        nargs=2,
        metavar=("PUB_CPU", "RX_CPU"),
        default=[cpus[0], cpus[-1]] if len(cpus) > 1 else None,
        help="pin the publisher and the receiver to these CPUs (default: first, last)",
    )
    parser.add_argument("--no-pin", dest="pin", action="store_const", const=None, help="do not pin")
    parser.add_argument(
        "--sched",
        choices=("auto", "fifo", "nice", "none"),
        default="auto",
        help="harness priority (auto: fifo if permitted, else nice, else none)",
    )
    parser.add_argument("--json", metavar="PATH", help="also write every cell and the summary as JSON")
    args = parser.parse_args()
    if args.long:
        args.rates, args.repeat, args.duration = [1000.0], 1, 60.0 * args.long
        if args.subjects == DEFAULT_SUBJECTS:
            args.subjects = ["null", "echo-waitset", "node"]
    if args.sched == "auto":
        args.sched = permitted_priority()

    env = dict(os.environ)
    env.setdefault("ROS_DOMAIN_ID", str(150 + os.getpid() % 80))
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH")) if p)
    sys.path.insert(0, str(ROOT))
    tmp = Path(tempfile.mkdtemp(prefix="bench_latency_"))
    subjects = subjects_for(args.subjects, shlex.split(args.node_cmd), args.node_answer, tmp)
    t_start = time.monotonic()
    cells: list[dict] = []
    try:
        for s in subjects:
            start(s, tmp, env)
        for s in subjects:
            wait_ready(s, args, tmp, env)
        print(f"subjects answering after {time.monotonic() - t_start:.1f} s", flush=True)
        for rate in args.rates:
            for rep in range(args.repeat):
                order = subjects[rep % len(subjects) :] + subjects[: rep % len(subjects)]
                for s in order:
                    t_cell = time.monotonic()
                    cell = run_cell(s, rate, args.duration, args.warmup, args, tmp, env)
                    cell["rep"] = rep
                    cells.append(cell)
                    print(
                        f"{rate:.0f} Hz rep {rep} {s.name:<13} delivered {100 * cell['delivered']:6.2f} % "
                        f"p50 {cell['p50']:.3f} p99 {cell['p99']:.3f} max {cell['max']:.2f} ms "
                        f"cpu {cell['cpu_us']:.0f} µs/answer load {cell['load']:.1f} "
                        f"({time.monotonic() - t_cell:.1f} s)",
                        flush=True,
                    )
    finally:
        for s in subjects:
            stop(s)
        shutil.rmtree(tmp, ignore_errors=True)
    rows = summarize(cells, args.rates, args.subjects)
    loads = [c["load"] for c in cells]
    print(
        f"\nlatency joint_states -> answer, Panda 7 joints, {args.duration:g} s per cell after "
        f"{args.warmup:g} s warm-up, {args.repeat} repetitions, {os.cpu_count()} cores, "
        f"load {min(loads):.1f}–{max(loads):.1f}, {time.monotonic() - t_start:.0f} s in all; "
        "median (min–max) over repetitions, max over all\n"
    )
    print(markdown(rows))
    print("\ntails (every answer of every repetition):\n")
    print(tails(rows))
    if REFERENCE in args.subjects and FLOOR in args.subjects:
        print("\nagainst the targets (median of the per-repetition ratios):")
        print("\n".join(verdicts(cells, args.rates, args.subjects)))
    print(
        f"\nharness (publisher and receiver: priority {args.sched}, "
        f"CPUs {'not pinned' if args.pin is None else tuple(args.pin)}, busy-wait {args.spin_us:g} µs):"
    )
    print("\n".join(harness(cells, args.rates)))
    if args.json:
        report = {"args": vars(args), "cells": cells, "summary": rows}
        Path(args.json).write_text(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
