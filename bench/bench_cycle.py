"""Per-cycle Python time of the inverse_dynamics node's effort law (`compute_efforts`), this
checkout against a base revision, side by side in one run, with Pinocchio's computeAllTerms as
the reference and the harness's own overhead (an empty call).

The cycle: Panda and UR5, every model term, friction compensation (feedforward on half the
joints, bounded feedback on the others, runaway guard), a constant root-axes tip wrench (passed
each cycle by the base, as its node did; carried by the EffortLaw here, as the node now does),
PD feedback with the feedback bound, a new state every 1 ms. The base revision's package is extracted with
`git archive` into a temporary folder and run in a subprocess per round; rounds alternate
(base, this, base, this, …) so that a busy machine slows both alike. Medians of per-call times.

    python bench/bench_cycle.py [--base REV] [--rounds 5] [--calls 3000]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TIPS = {"panda": "panda_hand", "ur5": "tool0"}

# Run in a subprocess with the package to measure first on sys.path; prints JSON medians (µs).
CHILD = r"""
import inspect, json, sys, time
import numpy as np
from rnea_ros.control import effort_law as el
from rnea_ros.compiled.entry_points import compile_kernels
from rnea_ros.friction.model import Friction
from rnea_ros.model.example_robots import example_urdf_path
from rnea_ros.model.robot_model import RobotModel

calls = int(sys.argv[1])
compile_kernels()
one_law = "law" in inspect.signature(el.Efforts.__init__).parameters and len(
    inspect.signature(el.Efforts.__init__).parameters) == 3
out = {}
for name, tip in (("panda", "panda_hand"), ("ur5", "tool0")):
    model = RobotModel.from_urdf(example_urdf_path(name).read_text())
    n = model.nv
    rng = np.random.default_rng(1)
    friction = Friction(rng.uniform(0.1, 1, n), rng.uniform(0.2, 2, n), 0.02)
    wrench = {tip: rng.normal(size=6)}
    kw = dict(kp=np.full(n, 100.0), kd=np.full(n, 5.0))
    if one_law:  # the law carries the constant (root-axes) wrench, as the node's does now
        law = el.EffortLaw(**kw, friction=friction, wrenches=wrench)
        efforts, cycle_wrench = el.Efforts(model, law), None
    else:  # the node passed its root-axes wrenches every cycle
        efforts, cycle_wrench = el.Efforts(model, friction, el.EffortLaw(**kw)), wrench
    driven = (np.arange(n) % 2).astype(np.int64)
    qs = 0.3 * rng.normal(size=(64, n))
    qds = rng.normal(size=(64, n))
    desired = [(q + 0.01, qd + 0.1, np.ones(n)) for q, qd in zip(qs, qds)]
    samples = []
    for i in range(calls):
        j = i % 64
        t0 = time.perf_counter()
        el.compute_efforts(
            efforts, qs[j], qds[j], desired[j], cycle_wrench, driven=driven, t=1e-3 * i, delay=2e-4
        )
        samples.append(time.perf_counter() - t0)
    out[name] = 1e6 * float(np.median(samples[calls // 10:]))
out["package"] = el.__file__
print(json.dumps(out))
"""

REFERENCE = r"""
import json, sys, time
import numpy as np
import pinocchio as pin
from rnea_ros.model.example_robots import example_urdf_path

calls = int(sys.argv[1])
out = {}
def empty(*args):
    return None
for name in ("panda", "ur5"):
    model = pin.buildModelFromUrdf(str(example_urdf_path(name)))
    data = model.createData()
    rng = np.random.default_rng(1)
    qs = 0.3 * rng.normal(size=(64, model.nq))
    vs = rng.normal(size=(64, model.nv))
    samples, empty_samples = [], []
    for i in range(calls):
        j = i % 64
        t0 = time.perf_counter()
        pin.computeAllTerms(model, data, qs[j], vs[j])
        t1 = time.perf_counter()
        empty(model, data, qs[j], vs[j])
        t2 = time.perf_counter()
        samples.append(t1 - t0)
        empty_samples.append(t2 - t1)
    out[name] = 1e6 * float(np.median(samples[calls // 10:]))
    out[name + " empty call"] = 1e6 * float(np.median(empty_samples[calls // 10:]))
print(json.dumps(out))
"""


def run(code: str, path: Path, calls: int) -> dict[str, float]:
    env_path = str(path)
    result = subprocess.run(
        [sys.executable, "-c", code, str(calls)],
        capture_output=True,
        text=True,
        check=True,
        cwd=env_path,  # `python -c` puts the working folder first on sys.path: the package measured
        env={"PYTHONPATH": env_path, "PATH": "/usr/bin:/bin", "HOME": str(Path.home())},
    )
    return json.loads(result.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", default="df5012e", help="revision to compare with (git)")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--calls", type=int, default=3000)
    parser.add_argument(
        "--base-dir", help="an extracted copy of the base's rnea_ros (warm numba cache) instead"
    )
    args = parser.parse_args()
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True)
    with tempfile.TemporaryDirectory(prefix="bench_cycle_") as tmp:
        if args.base_dir is None:
            archive = subprocess.run(
                ["git", "archive", args.base, "rnea_ros"], cwd=ROOT, capture_output=True, check=True
            )
            subprocess.run(["tar", "-x", "-C", tmp], input=archive.stdout, check=True)
        base = Path(args.base_dir or tmp)
        paths = {f"base {args.base}": base, f"this {head.stdout.strip()}": ROOT}
        rows: dict[str, list[float]] = {}
        start = time.perf_counter()
        for _ in range(args.rounds):  # interleaved
            for label, path in paths.items():
                result = run(CHILD, path, args.calls)
                if not result.pop("package").startswith(str(path)):
                    raise SystemExit(f"{label}: the child imported another rnea_ros")
                for robot, us in result.items():
                    rows.setdefault(f"compute_efforts {robot}, {label}", []).append(us)
            for robot, us in run(REFERENCE, ROOT, args.calls).items():
                rows.setdefault(
                    f"pin.computeAllTerms {robot}" if "empty" not in robot else f"harness {robot}", []
                ).append(us)
    print(
        f"median over {args.rounds} interleaved rounds of the per-round median of {args.calls} calls, µs "
        f"({time.perf_counter() - start:.0f} s)"
    )
    for label, values in sorted(rows.items()):
        each = ", ".join(f"{v:.2f}" for v in values)
        print(f"  {label:48s} {statistics.median(values):8.2f}   (rounds: {each})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
