"""The inverse_dynamics node's floating-base cycle in-process: what it calls per joint_states for a
floating root (`compute_floating_efforts`: the fixed-base law's friction path, then
contact-consistent inverse dynamics), before and after the compiled contact path, same run.

    python bench/bench_floating_cycle.py [--calls 300] [--rounds 20]

Robots: solo12 standing on four point feet, TALOS standing on two sole rectangles (6-D contacts
with half extents, their tangent from the sole's x axis: the generators follow the sole).
Rows (µs per call, median over rounds × calls; the rows are interleaved round by round, as the
machine may be busy):
  harness     the timing loop around an empty call (its own overhead, in every other row too)
  before      the checked Python path (`reference_contact_inverse_dynamics`: a Jacobian per
              contact in numpy, M and h by separate calls, the program built and solved per call)
  after       the compiled path (`contact_inverse_dynamics`: one kernel for M, h and every
              contact Jacobian, the cached ContactProblem, no SVD when the base rows allow)
  pinocchio   reference cost of the model terms alone: computeAllTerms + updateFramePlacements +
              getFrameJacobian (LOCAL_WORLD_ALIGNED) per contact, no program solved
and the largest difference of the efforts after − before, relative to the equation's largest
term (max |f|, |τ|).
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import numpy as np
import pinocchio as pin

from rnea_ros import RobotModel, compile_kernels
from rnea_ros.algorithms.contact_dynamics import Contact, reference_contact_inverse_dynamics
from rnea_ros.control.effort_law import EffortLaw
from rnea_ros.control.floating_efforts import FloatingEfforts, compute_floating_efforts
from rnea_ros.model.example_robots import example_urdf_path

SOLES = ("left_sole_link", "right_sole_link")
SOLO_POSTURE = [0.05, 0.8, -1.6, -0.05, 0.8, -1.6, 0.05, -0.8, 1.6, -0.05, -0.8, 1.6]
ROBOTS = {
    "solo12": (
        "solo_description/robots/solo12.urdf",
        tuple(Contact(f, "point", mu=0.8) for f in ("FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT")),
    ),
    "talos": (
        "talos_data/robots/talos_reduced.urdf",
        tuple(Contact(s, "6d", mu=0.8, half_extents=(0.1, 0.065)) for s in SOLES),
    ),
}
ROWS = ("harness", "before", "after", "pinocchio")


def block(call: Callable[[], object], calls: int, out: list[float]) -> None:
    for _ in range(calls):
        start = time.perf_counter()
        call()
        out.append(time.perf_counter() - start)


def variants(name: str) -> tuple[dict[str, Callable[[], object]], float]:
    """The calls of each row for one robot, and the largest after − before difference."""
    urdf, contacts = ROBOTS[name]
    path = example_urdf_path(urdf)
    floating = RobotModel.from_urdf(path.read_text(), root_joint="floating")
    joints = RobotModel.from_urdf(path.read_text())
    law = EffortLaw()
    after, before = FloatingEfforts(floating, joints, law), FloatingEfforts(floating, joints, law)
    before.solve = reference_contact_inverse_dynamics
    n = joints.nv
    rng = np.random.default_rng(0)
    q = np.array(SOLO_POSTURE) if name == "solo12" else rng.uniform(-0.02, 0.02, n)
    qd = rng.normal(0.0, 0.1, n)
    q_base = np.array([0.0, 0.0, 0.3 if name == "solo12" else 1.0, 0.0, 0.0, 0.0, 1.0])
    v_base = rng.normal(0.0, 0.05, 6)
    desired = (q, qd, rng.normal(0.0, 0.1, n))
    tau = {}
    for key, fe in (("after", after), ("before", before)):
        tau[key] = compute_floating_efforts(fe, q_base, v_base, q, qd, desired, contacts).total.copy()
        assert fe.solution is not None and fe.solution.status.value == "ok", (name, key)
    sol = after.solution
    assert sol is not None
    scale = max(1.0, float(np.max(np.abs(sol.f))), float(np.max(np.abs(sol.tau))))
    diff = float(np.max(np.abs(tau["after"] - tau["before"]))) / scale
    pm = pin.buildModelFromUrdf(str(path), pin.JointModelFreeFlyer())
    pd = pm.createData()
    pq, pv = pin.neutral(pm), rng.normal(0.0, 0.1, pm.nv)
    pq[2] = q_base[2]
    frames = [pm.getFrameId(c.link) for c in contacts]

    def pinocchio() -> None:
        pin.computeAllTerms(pm, pd, pq, pv)
        pin.updateFramePlacements(pm, pd)
        for frame in frames:
            pin.getFrameJacobian(pm, pd, frame, pin.LOCAL_WORLD_ALIGNED)

    calls = {
        "harness": lambda: None,
        "before": lambda: compute_floating_efforts(before, q_base, v_base, q, qd, desired, contacts),
        "after": lambda: compute_floating_efforts(after, q_base, v_base, q, qd, desired, contacts),
        "pinocchio": pinocchio,
    }
    return calls, diff


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=300, help="calls per row and round")
    parser.add_argument("--rounds", type=int, default=20)
    args = parser.parse_args()
    compile_kernels()
    print(f"{'robot':8} " + " ".join(f"{row:>10}" for row in ROWS) + "   after/before  |Δτ| (µs, medians)")
    for name in ROBOTS:
        calls, diff = variants(name)
        times: dict[str, list[float]] = {row: [] for row in ROWS}
        for row in ROWS:  # warm-up
            block(calls[row], 20, [])
        for _ in range(args.rounds):
            for row in ROWS:
                block(calls[row], args.calls, times[row])
        med = {row: float(np.median(times[row])) * 1e6 for row in ROWS}
        print(
            f"{name:8} " + " ".join(f"{med[row]:10.1f}" for row in ROWS)
            + f"   {med['after'] / med['before']:12.3f}  {diff:.1e}"
        )  # fmt: skip


if __name__ == "__main__":
    main()
