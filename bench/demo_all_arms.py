"""The closed-loop demo on every arm of example-robot-data (`make bench`).

Walks example-robot-data's robots/ for URDFs, sorts them with the demo's own rule
(rnea_ros.sim.scenario: arms, and robots refused up front with the reason), runs

    python -m rnea_ros.demo --urdf X --lockstep --duration 20 --no-plot --json ...

on every accepted arm (three processes over DDS each; lock-step, so the numbers do not depend on
the machine), and the in-process passivity check (rnea_ros.sim.closed_loop.passivity: each chain
joint started at 0.5 rad/s with PD gains zero, the plant's friction equal to the URDF's and 30 %
lower). Prints a Markdown table (the README's) and writes the numbers as JSON.

    python bench/demo_all_arms.py [--duration 20] [--only xarm7 z1] [--in-process] [--json out.json]

--in-process runs the demo's phases without ROS (rnea_ros.sim.closed_loop.run_phases): a quick
check, same timeline and law, no DDS.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from rnea_ros.model.example_robots import example_robots_dir  # noqa: E402
from rnea_ros.sim.demos.forward import argument_parser  # noqa: E402
from rnea_ros.sim.scenario import Refused, make_config  # noqa: E402


def classify(root: Path) -> tuple[list[Path], dict[str, str]]:
    """(accepted URDFs, refused URDF → reason) by the demo's rule."""
    accepted, refused = [], {}
    for path in sorted(root.rglob("*.urdf")):
        name = str(path.relative_to(root))
        try:
            make_config(argument_parser().parse_args(["--urdf", str(path)]))
            accepted.append(path)
        except (Refused, ValueError, OSError) as exc:
            refused[name] = str(exc)
    return accepted, refused


def run_demo(path: Path, duration: float, domain: int) -> dict:
    with tempfile.TemporaryDirectory(prefix="demo_all_") as tmp:
        out = Path(tmp) / "summary.json"
        cmd = [
            sys.executable, "-m", "rnea_ros.demo", "--urdf", str(path), "--lockstep", "--duration",
            str(duration), "--no-plot", "--out", tmp, "--json", str(out), "--domain-id", str(domain),
        ]  # fmt: skip
        started = time.monotonic()
        run = subprocess.run(cmd, capture_output=True, text=True, timeout=1800)
        wall = time.monotonic() - started
        if not out.exists():
            return {"error": (run.stdout + run.stderr)[-2000:], "wall": wall}
        return {**json.loads(out.read_text()), "exit": run.returncode, "wall": wall}


def run_in_process(path: Path, duration: float) -> dict:
    from rnea_ros.sim.closed_loop import run_phases
    from rnea_ros.sim.report import check_targets, summarize

    config = make_config(argument_parser().parse_args(["--urdf", str(path), "--duration", str(duration)]))
    started = time.monotonic()
    summary = summarize(run_phases(config))
    return {**summary.to_dict(), "failed": check_targets(summary), "wall": time.monotonic() - started}


def passivity_figures(path: Path) -> dict:
    """Per plant friction scale: the largest end/start and peak/start kinetic energy ratios over
    the chain's joints, and whether the guard tripped."""
    from rnea_ros.sim.closed_loop import passivity

    urdf = path.read_text()
    out = {}
    for scale in (1.0, 0.7):
        coasts = passivity(urdf, scale)
        out[str(scale)] = {
            "end": max(c.ratio for c in coasts),
            "peak": max(c.peak_ratio for c in coasts),
            "tripped": [c.joint for c in coasts if c.tripped],
        }
    return out


def row(name: str, result: dict, figures: dict) -> str:
    if "error" in result:
        return f"| {name} | run failed: {result['error'].splitlines()[-1] if result['error'] else '?'} |"
    joints = result["joints"]
    worst = min(range(len(joints)), key=lambda j: result["improvement"][j])
    p1, p7 = figures["1.0"], figures["0.7"]
    verdict = "met" if not result["failed"] else "MISSED: " + "; ".join(result["failed"][:2])
    return (
        f"| {name} | {len(joints)} | {min(result['improvement']):.0f}x ({joints[worst]}) | "
        f"{max(result['max_ff']):.3f} | {max(result['max_pd']):.2f} | {max(result['drift']):.1e} | "
        f"{result.get('guard_trips', 0)} | {p1['end']:.2g} / {p1['peak']:.3f} | "
        f"{p7['end']:.2g} / {p7['peak']:.3f} | {verdict} |"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--duration", type=float, default=20.0, help="simulated seconds per demo")
    parser.add_argument("--only", nargs="+", help="run only URDFs whose path contains one of these")
    parser.add_argument("--in-process", action="store_true", help="the phases without ROS (quick)")
    parser.add_argument("--json", help="write every number to this file")
    args = parser.parse_args()
    root = example_robots_dir()
    accepted, refused = classify(root)
    print(f"example-robot-data: {len(accepted) + len(refused)} URDFs, {len(accepted)} arms accepted\n")
    if args.only:
        accepted = [p for p in accepted if any(s in str(p) for s in args.only)]
    results = {}
    head = (
        "| arm | joints | min RMS ratio (joint) | max error FF, deg | max error PD, deg | hold drift, deg | "
        "guard trips | KE end/peak, friction = model | KE end/peak, friction 30 % lower | targets |\n"
        "| --- | --: | --: | --: | --: | --: | --: | --: | --: | --- |"
    )
    rows = []
    for k, path in enumerate(accepted):
        name = str(path.relative_to(root))
        result = (
            run_in_process(path, args.duration) if args.in_process else run_demo(path, args.duration, 200 + k)
        )
        figures = passivity_figures(path)
        results[name] = {"demo": result, "passivity": figures}
        rows.append(row(name, result, figures))
        print(f"{name}: {result.get('wall', 0):.0f} s wall", file=sys.stderr)
    print(head)
    print("\n".join(rows))
    arms_like = {n: r for n, r in refused.items() if not r.startswith("not an arm")}
    print(f"\nrefused up front besides non-arms ({len(refused) - len(arms_like)} URDFs are not arms):")
    for name, reason in arms_like.items():
        print(f"- {name}: {reason}")
    if args.json:
        Path(args.json).write_text(json.dumps({"arms": results, "refused": refused}, indent=1))
    failed = [n for n, r in results.items() if r["demo"].get("failed", ["error"])]
    return 1 if failed else 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
