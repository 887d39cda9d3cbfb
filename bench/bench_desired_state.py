"""Per-cycle cost of the node's desired state (µs, median of 7 repeats), 7 joints, a 1000-point
quintic trajectory: DesiredState.sample (running trajectory for all / 3 joints, held, idle) and,
for comparison, the node's path before rnea_ros.trajectory.desired_state (copies + TrajectorySampler.sample
with fancy indexing, as inverse_dynamics.Desired.sample did).

    nice -n 10 .venv/bin/python bench/bench_desired_state.py
"""

from __future__ import annotations

import timeit

import numpy as np

from rnea_ros.trajectory.desired_state import DesiredState
from rnea_ros.trajectory.sampling import TrajectorySampler

N, K, NUMBER = 7, 1000, 2000
NOW = 3_333_000_000


def median_us(fn) -> float:
    return float(np.median(timeit.repeat(fn, number=NUMBER, repeat=7)) / NUMBER * 1e6)


def main() -> None:
    rng = np.random.default_rng(0)
    times = np.arange(K) * 0.01
    p, v, a = (rng.normal(size=(K, N)) for _ in range(3))
    q, qd = rng.normal(size=N), rng.normal(size=N)
    rows = []
    for label, joints in (("all 7 joints", np.arange(N)), ("joints 0-2", np.arange(3))):
        m = joints.size
        sampler = TrajectorySampler(times, p[:, :m], v[:, :m], a[:, :m])

        def before(sampler=sampler, joints=joints) -> tuple:
            q_d, qd_d, qdd_d = q.copy(), qd.copy(), np.zeros_like(q)
            tq, tqd, tqdd = sampler.sample((NOW - 0) * 1e-9)
            q_d[joints], qd_d[joints], qdd_d[joints] = tq, tqd, tqdd
            return q_d, qd_d, qdd_d

        desired = DesiredState(N)
        desired.receive(joints, times, p[:, :m], v[:, :m], a[:, :m], start_ns=1, now_ns=1)
        desired.sample(1, q, qd)
        rows.append(
            (f"running, {label}", median_us(before), median_us(lambda d=desired: d.sample(NOW, q, qd)))
        )
    held = DesiredState(N)
    held.receive(np.arange(N), [0.1], p[:1], start_ns=1, now_ns=1)
    held.sample(NOW, q, qd)
    rows.append(("held (after the last point)", float("nan"), median_us(lambda: held.sample(NOW, q, qd))))
    print(f"{'case':32s} {'before µs':>10s} {'now µs':>8s}")
    for label, old, new in rows:
        print(f"{label:32s} {old:10.1f} {new:8.1f}")


if __name__ == "__main__":
    main()
