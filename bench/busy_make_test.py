"""`make test` beside two processes spinning on both cores (issue 33's acceptance): each run
starts `python3 -c "while True: pass"` twice, samples the 1-minute load every 5 s, runs `make
test` in CLONE (a fresh clone of this repository with ../shared beside it, made on the first run
when CLONE does not exist), stops the spinners, and prints one row per run for docs/tests.md:

    .venv/bin/python bench/busy_make_test.py --runs 5 --clone /tmp/busy/main

Each run's whole output goes to CLONE/../busy_run_<n>.log. A run that fails does not stop the others."""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

from rnea_ros.ros.processes import die_with_parent

REPO = Path(__file__).resolve().parents[1]
SPIN = [sys.executable, "-c", "while True: pass"]


def clone(target: Path) -> str:
    """A fresh clone of this repository's HEAD at `target`, ../shared linked beside it; its commit."""
    target.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "clone", "-q", str(REPO), str(target)], check=True)
    shared = target.parent / "shared"
    if not shared.exists():
        shared.symlink_to((REPO.parent / "shared").resolve())
    return git_head(target)


def git_head(folder: Path) -> str:
    out = subprocess.run(
        ["git", "-C", str(folder), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    )
    return out.stdout.strip()


def one_run(folder: Path, n: int) -> str:
    """Run n: make test beside two spinners; the table row."""
    loads: list[float] = []
    done = threading.Event()

    def sample() -> None:
        while not done.wait(5.0):
            loads.append(float(Path("/proc/loadavg").read_text().split()[0]))

    spinners = [subprocess.Popen(SPIN, preexec_fn=die_with_parent) for _ in range(2)]
    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    log = folder.parent / f"busy_run_{n}.log"
    start = time.monotonic()
    try:
        with log.open("w") as out:
            code = subprocess.run(
                ["make", "test"], cwd=folder, stdout=out, stderr=subprocess.STDOUT, preexec_fn=die_with_parent
            ).returncode  # make ends when this script is killed; pytest's controller under it does not
    finally:
        done.set()
        for s in spinners:
            s.kill()
            s.wait()
    wall = time.monotonic() - start
    text = log.read_text(errors="replace")
    summaries = re.findall(r"^=* ?(\d+ (?:passed|failed).*?) in ([\d.]+)s", text, re.M)
    result = "; ".join(f"{s} ({float(t):.0f} s)" for s, t in summaries) or f"no pytest summary (exit {code})"
    load = f"{statistics.median(loads):.1f} ({min(loads):.1f}-{max(loads):.1f})" if loads else "-"
    date = time.strftime("%Y-%m-%d")
    verdict = "pass" if code == 0 else f"FAIL (exit {code})"
    return f"| {n} | {date}, `{git_head(folder)}` | {load} | {verdict}: {result} | make test {wall:.0f} s |"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--clone", type=Path, required=True, help="the clone to run in (made when absent)")
    parser.add_argument("--first", type=int, default=1, help="the number of the first run (for the table)")
    args = parser.parse_args(argv)
    if not args.clone.exists():
        print(f"cloned {clone(args.clone)} into {args.clone}", flush=True)
    rows = []
    for n in range(args.first, args.first + args.runs):
        rows.append(one_run(args.clone, n))
        print(rows[-1], flush=True)
    return 0 if all("| pass" in r for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
