"""Speed of the dynamics core against Pinocchio called from Python, side by side in one process.

For the double pendulum (2 DOF), UR5 (6), Panda (9) and Talos reduced (32, fixed base):
- single calls of rnea, gravity_torques and mass_matrix vs pin.rnea, pin.computeGeneralizedGravity
  and pin.crba, on the same states, interleaved (the two sides alternate within every repeat);
- a batch of N = 10,000 states in one call vs a Python loop over the Pinocchio function;
- time per DOF and a least-squares fit t = a + b n over the robots (fixed overhead, cost per DOF);
- the pure-Python fallback (RNEA_ROS_NO_NUMBA=1, in a subprocess) for Panda;
- the humanoids TALOS reduced and G1 (29 DOF) with a free-flyer root (nv = 6 + joints) against
  Pinocchio's JointModelFreeFlyer, next to the same robots with a fixed base (`--floating-only`);
- time from process start to the first rnea result (imports, URDF parse, model build,
  compile_kernels, first call) in fresh subprocesses, with an empty numba cache (compiles) and a
  warm one.
Both sides' results are compared on the states used (max abs difference, N m or kg m²).
Medians of many repeats; the ratio is ours / Pinocchio's (lower is better).

    .venv/bin/python bench/bench_kernels.py [--repeats 501] [--batch 10000] [--quick]
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

ROBOTS = ("double_pendulum", "ur5", "panda", "talos")
STATES = 100  # distinct states cycled through in the single-call loops
FIRST_RESULT = """
import time
t0 = time.monotonic()
import numpy as np
from rnea_ros import RobotModel, compile_kernels, rnea
from rnea_ros.model.example_robots import example_urdf_path
t1 = time.monotonic()
model = RobotModel.from_urdf(example_urdf_path("panda").read_text())
compile_kernels()  # as a control process does at start-up (else the first call compiles)
t2 = time.monotonic()
z = np.zeros(model.nv)
tau = rnea(model, z, z, z)
t3 = time.monotonic()
print(t0, t1, t2, t3)
"""


def _sample(rng: np.random.Generator, model, count: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    lo = np.where(np.isfinite(model.position_lower), model.position_lower, -np.pi)
    hi = np.where(np.isfinite(model.position_upper), model.position_upper, np.pi)
    q = rng.uniform(lo, hi, (count, model.nv))
    return q, rng.normal(0, 1.5, (count, model.nv)), rng.normal(0, 3.0, (count, model.nv))


class Robot:
    """Our model and Pinocchio's for one example robot, with states in both joint orders."""

    def __init__(self, name: str, batch: int) -> None:
        import pinocchio as pin

        from rnea_ros import RobotModel
        from rnea_ros.model.example_robots import example_urdf_path

        path = example_urdf_path(name)
        self.name = name
        self.model = RobotModel.from_urdf(path.read_text())
        self.pin = pin.buildModelFromUrdf(str(path))  # fixed base
        self.data = self.pin.createData()
        self.nv = self.model.nv
        assert self.pin.nv == self.nv, (name, self.pin.nv, self.nv)
        self.idx = np.array([self.pin.joints[self.pin.getJointId(j)].idx_v for j in self.model.joint_names])
        rng = np.random.default_rng(0)
        self.batch = _sample(rng, self.model, batch)  # (N, n) each, our order
        self.batch_pin = tuple(self.to_pin(a) for a in self.batch)
        # single states: separate C-contiguous 1-D arrays, as a control loop would hold them
        self.single = [tuple(a[i].copy() for a in self.batch) for i in range(STATES)]
        self.single_pin = [tuple(a[i].copy() for a in self.batch_pin) for i in range(STATES)]
        self.rows_pin = [tuple(a[i].copy() for a in self.batch_pin) for i in range(batch)]

    def to_pin(self, x: np.ndarray) -> np.ndarray:
        y = np.zeros(x.shape)
        y[..., self.idx] = x
        return y

    def from_pin(self, y: np.ndarray) -> np.ndarray:
        return y[..., self.idx]


def _median_pair(ours: Callable[[], None], theirs: Callable[[], None], repeats: int) -> tuple[float, float]:
    """Median seconds of ours() and theirs(), interleaved, alternating which goes first."""
    a, b = [], []
    clock = time.perf_counter
    for r in range(repeats):
        for side in (0, 1) if r % 2 == 0 else (1, 0):
            fn, acc = (ours, a) if side == 0 else (theirs, b)
            t0 = clock()
            fn()
            acc.append(clock() - t0)
    return statistics.median(a), statistics.median(b)


def single_calls(robot: Robot, repeats: int) -> list[dict]:
    """Per-call microseconds of the three functions on STATES states, and the max difference."""
    import pinocchio as pin

    from rnea_ros import gravity_torques, mass_matrix, rnea

    m, pm, pd = robot.model, robot.pin, robot.data
    ours_states, pin_states = robot.single, robot.single_pin

    def our_rnea() -> None:
        for q, qd, qdd in ours_states:
            rnea(m, q, qd, qdd)

    def pin_rnea() -> None:
        for q, qd, qdd in pin_states:
            pin.rnea(pm, pd, q, qd, qdd)

    def our_gravity() -> None:
        for q, _, _ in ours_states:
            gravity_torques(m, q)

    def pin_gravity() -> None:
        for q, _, _ in pin_states:
            pin.computeGeneralizedGravity(pm, pd, q)

    def our_mass() -> None:
        for q, _, _ in ours_states:
            mass_matrix(m, q)

    def pin_mass() -> None:
        for q, _, _ in pin_states:
            pin.crba(pm, pd, q)

    diffs = {"rnea": 0.0, "gravity_torques": 0.0, "mass_matrix": 0.0}
    ix = np.ix_(robot.idx, robot.idx)
    for (q, qd, qdd), (pq, pqd, pqdd) in zip(ours_states, pin_states, strict=True):
        tau_pin = pin.rnea(pm, pd, pq, pqd, pqdd)[robot.idx]
        diffs["rnea"] = max(diffs["rnea"], _diff(rnea(m, q, qd, qdd), tau_pin))
        g_pin = pin.computeGeneralizedGravity(pm, pd, pq)[robot.idx]
        diffs["gravity_torques"] = max(diffs["gravity_torques"], _diff(gravity_torques(m, q), g_pin))
        mp = pin.crba(pm, pd, pq)
        mp = np.triu(mp) + np.triu(mp, 1).T
        diffs["mass_matrix"] = max(diffs["mass_matrix"], _diff(mass_matrix(m, q), mp[ix]))
    rows = []
    for name, ours, theirs in (
        ("rnea", our_rnea, pin_rnea),
        ("gravity_torques", our_gravity, pin_gravity),
        ("mass_matrix", our_mass, pin_mass),
    ):
        ours(), theirs()  # warm caches
        a, b = _median_pair(ours, theirs, repeats)
        rows.append(dict(fn=name, ours=a / STATES * 1e6, pin=b / STATES * 1e6, diff=diffs[name]))
    return rows


TIPS = {"ur5": "tool0", "panda": "panda_hand"}


def call_forms(robot: Robot, repeats: int) -> list[dict]:
    """Per-call µs of every public call form against Pinocchio's matching call, on the same states,
    interleaved: rnea with the default gravity, gravity as a tuple and as an array, a caller-owned
    Data (with and without out=), a wrench on the tip (Pinocchio: its fext argument, prebuilt:
    a lower bound of its cost); gravity_torques the same ways."""
    import pinocchio as pin

    from rnea_ros import gravity_torques, rnea

    m, pm, pd = robot.model, robot.pin, robot.data
    ours_states, pin_states = robot.single, robot.single_pin
    g_tuple, g_array = (0.0, 0.0, -9.81), np.array([0.0, 0.0, -9.81])
    datas = {k: m.create_data() for k in ("data", "out", "gdata", "wrench")}
    out = np.empty(m.nv)
    tip = TIPS[robot.name]
    wrench = {tip: np.array([1.0, -2.0, 3.0, 0.1, 0.2, -0.3])}
    fext = pin.StdVec_Force()
    for _ in range(pm.njoints):
        fext.append(pin.Force(np.array([1.0, -2.0, 3.0, 0.1, 0.2, -0.3])))

    def loop(call: Callable[..., object], states: list) -> Callable[[], None]:
        def run() -> None:
            for q, qd, qdd in states:
                call(q, qd, qdd)

        return run

    pin_rnea = loop(lambda q, qd, qdd: pin.rnea(pm, pd, q, qd, qdd), pin_states)
    pin_gravity = loop(lambda q, qd, qdd: pin.computeGeneralizedGravity(pm, pd, q), pin_states)
    forms = [
        ("rnea(model, q, qd, qdd)", lambda q, qd, qdd: rnea(m, q, qd, qdd), pin_rnea),
        ("rnea(..., gravity=tuple)", lambda q, qd, qdd: rnea(m, q, qd, qdd, gravity=g_tuple), pin_rnea),
        ("rnea(..., gravity=array)", lambda q, qd, qdd: rnea(m, q, qd, qdd, gravity=g_array), pin_rnea),
        ("rnea(..., data=own)", lambda q, qd, qdd: rnea(m, q, qd, qdd, data=datas["data"]), pin_rnea),
        (
            "rnea(..., data=own, out=own)",
            lambda q, qd, qdd: rnea(m, q, qd, qdd, data=datas["out"], out=out),
            pin_rnea,
        ),
        (
            "rnea(..., wrenches={tip: w}, data=own)",
            lambda q, qd, qdd: rnea(m, q, qd, qdd, wrenches=wrench, data=datas["wrench"]),
            loop(lambda q, qd, qdd: pin.rnea(pm, pd, q, qd, qdd, fext), pin_states),
        ),
        ("gravity_torques(model, q)", lambda q, qd, qdd: gravity_torques(m, q), pin_gravity),
        (
            "gravity_torques(..., gravity=tuple)",
            lambda q, qd, qdd: gravity_torques(m, q, gravity=g_tuple),
            pin_gravity,
        ),
        (
            "gravity_torques(..., data=own)",
            lambda q, qd, qdd: gravity_torques(m, q, data=datas["gdata"]),
            pin_gravity,
        ),
    ]
    rows = []
    for name, ours, theirs in forms:
        run = loop(ours, ours_states)
        run(), theirs()  # warm caches
        a, b = _median_pair(run, theirs, repeats)
        rows.append(dict(form=name, ours=a / STATES * 1e6, pin=b / STATES * 1e6))
    return rows


def print_call_forms(robots: list[Robot], repeats: int) -> None:
    print(f"\n## Every call form vs Pinocchio's matching call (median of {repeats} x {STATES} states, µs)\n")
    print("| robot | call | rnea_ros µs | Pinocchio µs | ratio |")
    print("| --- | --- | --: | --: | --: |")
    for robot in robots:
        if robot.name not in TIPS:
            continue
        for row in call_forms(robot, repeats):
            print(
                f"| {robot.name} | `{row['form']}` | {row['ours']:.2f} | {row['pin']:.2f} "
                f"| {row['ours'] / row['pin']:.2f} |"
            )


def batch_calls(robot: Robot, repeats: int) -> list[dict]:
    """Seconds for the whole batch in one call vs a Python loop of Pinocchio calls."""
    import pinocchio as pin

    from rnea_ros import gravity_torques, mass_matrix, rnea

    m, pm, pd = robot.model, robot.pin, robot.data
    q, qd, qdd = robot.batch
    rows_pin = robot.rows_pin
    results = {}

    def our_rnea() -> None:
        results["rnea"] = rnea(m, q, qd, qdd)

    def pin_rnea() -> None:
        for a, b, c in rows_pin:
            pin.rnea(pm, pd, a, b, c)

    def our_gravity() -> None:
        results["gravity_torques"] = gravity_torques(m, q)

    def pin_gravity() -> None:
        for a, _, _ in rows_pin:
            pin.computeGeneralizedGravity(pm, pd, a)

    def our_mass() -> None:
        results["mass_matrix"] = mass_matrix(m, q)

    def pin_mass() -> None:
        for a, _, _ in rows_pin:
            pin.crba(pm, pd, a)

    rows = []
    for name, ours, theirs in (
        ("rnea", our_rnea, pin_rnea),
        ("gravity_torques", our_gravity, pin_gravity),
        ("mass_matrix", our_mass, pin_mass),
    ):
        ours()
        a, b = _median_pair(ours, theirs, repeats)
        rows.append(dict(fn=name, ours=a, pin=b))
    # agreement on a spread of the batch rows (every one would take as long as the timing)
    picks = np.linspace(0, len(q) - 1, 50).astype(int)
    worst = {"rnea": 0.0, "gravity_torques": 0.0, "mass_matrix": 0.0}
    for i in picks:
        a, b, c = rows_pin[i]
        worst["rnea"] = max(worst["rnea"], _diff(results["rnea"][i], pin.rnea(pm, pd, a, b, c)[robot.idx]))
        g = pin.computeGeneralizedGravity(pm, pd, a)[robot.idx]
        worst["gravity_torques"] = max(worst["gravity_torques"], _diff(results["gravity_torques"][i], g))
        mp = pin.crba(pm, pd, a)
        mp = (np.triu(mp) + np.triu(mp, 1).T)[np.ix_(robot.idx, robot.idx)]
        worst["mass_matrix"] = max(worst["mass_matrix"], _diff(results["mass_matrix"][i], mp))
    for row in rows:
        row["diff"] = worst[row["fn"]]
    return rows


def _diff(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.max(np.abs(np.asarray(a) - np.asarray(b))))


def fallback_child(repeats: int) -> None:
    """(In a RNEA_ROS_NO_NUMBA=1 subprocess.) Panda per-call medians and results, as JSON."""
    from rnea_ros import gravity_torques, mass_matrix, rnea
    from rnea_ros.compiled.jit import HAVE_NUMBA

    assert not HAVE_NUMBA
    robot = Robot("panda", STATES)
    m = robot.model
    states = robot.single[:20]
    out: dict[str, object] = {}
    for name, fn in (
        ("rnea", lambda s: rnea(m, *s)),
        ("gravity_torques", lambda s: gravity_torques(m, s[0])),
        ("mass_matrix", lambda s: mass_matrix(m, s[0])),
    ):
        times = []
        for _ in range(repeats):
            for s in states:
                t0 = time.perf_counter()
                fn(s)
                times.append(time.perf_counter() - t0)
        out[name] = statistics.median(times) * 1e6
        out[name + "_result"] = [fn(s).tolist() for s in states]
    print(json.dumps(out))


def fallback(repeats: int) -> dict:
    """Run fallback_child in a subprocess and compare its results with the compiled ones."""
    from rnea_ros import gravity_torques, mass_matrix, rnea

    env = {**os.environ, "RNEA_ROS_NO_NUMBA": "1"}
    proc = subprocess.run(
        [sys.executable, __file__, "--fallback-child", "--repeats", str(repeats)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    res = json.loads(proc.stdout.strip().splitlines()[-1])
    robot = Robot("panda", STATES)
    m = robot.model
    states = robot.single[:20]
    compiled = {
        "rnea": [rnea(m, *s) for s in states],
        "gravity_torques": [gravity_torques(m, s[0]) for s in states],
        "mass_matrix": [mass_matrix(m, s[0]) for s in states],
    }
    worst = {
        name: max(_diff(a, b) for a, b in zip(compiled[name], res[name + "_result"], strict=True))
        for name in compiled
    }
    return {name: (res[name], worst[name]) for name in compiled}


def first_result(cache_dir: str | None) -> tuple[float, float, float, float]:
    """Seconds from spawning a fresh interpreter to the first rnea result, and the child's split
    (imports, model build and compile_kernels, first call); cache_dir None = the default numba cache."""
    env = dict(os.environ)
    env.pop("RNEA_ROS_NO_NUMBA", None)
    if cache_dir is not None:
        env["NUMBA_CACHE_DIR"] = cache_dir
    start = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-c", FIRST_RESULT], env=env, capture_output=True, text=True, check=True
    )
    t0, t1, t2, t3 = (float(x) for x in proc.stdout.split())
    return t3 - start, t1 - t0, t2 - t1, t3 - t2


def linear_fit(dofs: list[int], times: list[float]) -> tuple[float, float]:
    """Least-squares t = a + b n: (a fixed overhead, b cost per DOF)."""
    b, a = np.polyfit(np.array(dofs, dtype=float), np.array(times), 1)
    return float(a), float(b)


HUMANOIDS = {
    "talos": "talos_data/robots/talos_reduced.urdf",
    "g1": "g1_description/urdf/g1_29dof_rev_1_0.urdf",
}


def humanoid_calls(label: str, path: str, root_joint: str, repeats: int) -> list[dict]:
    """Per-call µs of rnea, gravity_torques, nonlinear_effects and mass_matrix vs Pinocchio's
    (JointModelFreeFlyer for root_joint "floating"), interleaved, and the max relative difference."""
    import pinocchio as pin

    from rnea_ros import RobotModel, gravity_torques, mass_matrix, nonlinear_effects, rnea
    from rnea_ros.model.example_robots import example_urdf_path

    file = example_urdf_path(path)
    m = RobotModel.from_urdf(file.read_text(), root_joint=root_joint)
    if root_joint == "floating":
        pm = pin.buildModelFromUrdf(str(file), pin.JointModelFreeFlyer())
    else:
        pm = pin.buildModelFromUrdf(str(file))
    pd = pm.createData()
    assert pm.nq == m.nq and pm.nv == m.nv  # no continuous joints on these two
    nq0, nv0 = m.root_nq, m.root_nv
    qidx = list(range(nq0)) + [pm.joints[pm.getJointId(j)].idx_q for j in m.joint_names]
    vidx = list(range(nv0)) + [pm.joints[pm.getJointId(j)].idx_v for j in m.joint_names]
    rng = np.random.default_rng(0)
    ours, theirs = [], []
    for _ in range(STATES):
        q = np.zeros(m.nq)
        if nq0:
            quat = rng.normal(size=4)
            q[:3], q[3:7] = rng.normal(size=3), quat / np.linalg.norm(quat)
        lo = np.where(np.isfinite(m.position_lower), m.position_lower, -np.pi)
        hi = np.where(np.isfinite(m.position_upper), m.position_upper, np.pi)
        q[nq0:] = rng.uniform(lo, hi)
        v, a = rng.normal(0, 1.5, m.nv), rng.normal(0, 3.0, m.nv)
        pq, pv, pa = np.zeros(pm.nq), np.zeros(pm.nv), np.zeros(pm.nv)
        pq[qidx], pv[vidx], pa[vidx] = q, v, a
        ours.append((q, v, a))
        theirs.append((pq, pv, pa))
    calls = {
        "rnea": (lambda q, v, a: rnea(m, q, v, a), lambda q, v, a: pin.rnea(pm, pd, q, v, a)),
        "gravity_torques": (
            lambda q, v, a: gravity_torques(m, q),
            lambda q, v, a: pin.computeGeneralizedGravity(pm, pd, q),
        ),
        "nonlinear_effects": (
            lambda q, v, a: nonlinear_effects(m, q, v),
            lambda q, v, a: pin.nonLinearEffects(pm, pd, q, v),
        ),
        "mass_matrix": (lambda q, v, a: mass_matrix(m, q), lambda q, v, a: pin.crba(pm, pd, q)),
    }
    rows = []
    for fn, (our_call, pin_call) in calls.items():
        diff = 0.0
        for (q, v, a), (pq, pv, pa) in zip(ours, theirs, strict=True):
            x, y = np.asarray(our_call(q, v, a)), np.array(pin_call(pq, pv, pa))
            y = (np.triu(y) + np.triu(y, 1).T)[np.ix_(vidx, vidx)] if y.ndim == 2 else y[vidx]
            diff = max(diff, float(np.max(np.abs(x - y)) / max(1.0, np.max(np.abs(y)))))

        def run_ours(call=our_call) -> None:
            for q, v, a in ours:
                call(q, v, a)

        def run_pin(call=pin_call) -> None:
            for q, v, a in theirs:
                call(q, v, a)

        run_ours(), run_pin()
        t_ours, t_pin = _median_pair(run_ours, run_pin, repeats)
        rows.append(
            dict(
                robot=label,
                root=root_joint,
                nv=m.nv,
                fn=fn,
                ours=t_ours / STATES * 1e6,
                pin=t_pin / STATES * 1e6,
                diff=diff,
            )
        )
    return rows


def print_humanoids(repeats: int) -> None:
    print(f"\n## Humanoids, free flyer vs fixed base (median of {repeats} x {STATES} states, µs)\n")
    print("| robot | root | nv | function | rnea_ros µs | Pinocchio µs | ratio | max rel diff |")
    print("| --- | --- | --: | --- | --: | --: | --: | --: |")
    for label, path in HUMANOIDS.items():
        for root_joint in ("floating", "fixed"):
            for row in humanoid_calls(label, path, root_joint, repeats):
                print(
                    f"| {row['robot']} | {row['root']} | {row['nv']} | {row['fn']} | {row['ours']:.2f} "
                    f"| {row['pin']:.2f} | {row['ours'] / row['pin']:.2f} | {row['diff']:.1e} |"
                )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeats", type=int, default=501, help="repeats of the single-call loops")
    ap.add_argument("--batch", type=int, default=10_000, help="states in the batch")
    ap.add_argument("--batch-repeats", type=int, default=9)
    ap.add_argument("--first-result-runs", type=int, default=5)
    ap.add_argument("--quick", action="store_true", help="few repeats, small batch (a smoke test)")
    ap.add_argument("--forms-only", action="store_true", help="only the call forms (Panda, UR5)")
    ap.add_argument("--floating-only", action="store_true", help="only the free-flyer humanoids (TALOS, G1)")
    ap.add_argument("--fallback-child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.quick:
        args.repeats, args.batch, args.batch_repeats, args.first_result_runs = 11, 200, 3, 1
    if args.fallback_child:
        fallback_child(max(args.repeats // 10, 5))
        return

    import numba
    import pinocchio as pin

    print(
        f"python {sys.version.split()[0]}, numpy {np.__version__}, numba {numba.__version__}, "
        f"pinocchio {pin.__version__}; {_cpu()}, {os.cpu_count()} cores"
    )
    gc.disable()
    if args.forms_only:
        print_call_forms([Robot(name, STATES) for name in TIPS], args.repeats)
        return
    if args.floating_only:
        print_humanoids(args.repeats)
        return
    robots = [Robot(name, args.batch) for name in ROBOTS]

    print(f"\n## Single call (median of {args.repeats} x {STATES} states, µs per call, interleaved)\n")
    print(
        "| robot | DOF | function | rnea_ros µs | Pinocchio µs | ratio | rnea_ros µs/DOF | Pinocchio µs/DOF "
        "| max abs diff |"
    )
    print("| --- | --: | --- | --: | --: | --: | --: | --: | --: |")
    fits: dict[str, tuple[list[int], list[float], list[float]]] = {}
    for robot in robots:
        for row in single_calls(robot, args.repeats):
            dofs, ours, theirs = fits.setdefault(row["fn"], ([], [], []))
            dofs.append(robot.nv)
            ours.append(row["ours"])
            theirs.append(row["pin"])
            print(
                f"| {robot.name} | {robot.nv} | {row['fn']} | {row['ours']:.2f} | {row['pin']:.2f} "
                f"| {row['ours'] / row['pin']:.2f} | {row['ours'] / robot.nv:.3f} "
                f"| {row['pin'] / robot.nv:.3f} | {row['diff']:.1e} |"
            )

    print_call_forms(robots, args.repeats)
    print_humanoids(args.repeats)

    print("\n## Fit t = a + b·n over the four robots (a: fixed cost per call µs, b: µs per DOF)\n")
    print("| function | rnea_ros a | rnea_ros b | Pinocchio a | Pinocchio b |")
    print("| --- | --: | --: | --: | --: |")
    for fn, (dofs, ours, theirs) in fits.items():
        a1, b1 = linear_fit(dofs, ours)
        a2, b2 = linear_fit(dofs, theirs)
        print(f"| {fn} | {a1:.2f} | {b1:.3f} | {a2:.2f} | {b2:.3f} |")

    n = args.batch
    print(
        f"\n## Batch of {n:,} states (median of {args.batch_repeats}; Pinocchio: Python loop over the call)\n"
    )
    print(
        "| robot | DOF | function | rnea_ros ms | Pinocchio loop ms | speed-up | rnea_ros µs/state "
        "| max abs diff |"
    )
    print("| --- | --: | --- | --: | --: | --: | --: | --: |")
    for robot in robots:
        for row in batch_calls(robot, args.batch_repeats):
            print(
                f"| {robot.name} | {robot.nv} | {row['fn']} | {row['ours'] * 1e3:.2f} "
                f"| {row['pin'] * 1e3:.2f} | {row['pin'] / row['ours']:.1f}x | {row['ours'] / n * 1e6:.3f} "
                f"| {row['diff']:.1e} |"
            )
    gc.enable()

    print("\n## Pure-Python fallback (RNEA_ROS_NO_NUMBA=1, subprocess), Panda, median µs per call\n")
    print("| function | µs per call | max abs diff vs compiled |")
    print("| --- | --: | --: |")
    for fn, (us, diff) in fallback(args.repeats).items():
        print(f"| {fn} | {us:.1f} | {diff:.1e} |")

    print("\n## First result after process start (Panda: imports, URDF, build, compile, first rnea)\n")
    print("| numba cache | total s | imports s | model build + compile_kernels s | first call ms |")
    print("| --- | --: | --: | --: | --: |")
    with tempfile.TemporaryDirectory() as cache:
        cold = first_result(cache)  # empty cache: everything compiles
        warm = [first_result(cache) for _ in range(args.first_result_runs)]
    default = [first_result(None) for _ in range(args.first_result_runs)]
    for label, runs in (
        ("empty (compiles), 1 run", [cold]),
        (f"warm, fresh dir, median of {len(warm)}", warm),
        (f"warm, default (in-tree), median of {len(default)}", default),
    ):
        total, imports, build, call = (statistics.median(c) for c in zip(*runs, strict=True))
        print(f"| {label} | {total:.2f} | {imports:.2f} | {build:.2f} | {call * 1e3:.2f} |")


def _cpu() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown CPU"


if __name__ == "__main__":
    main()
