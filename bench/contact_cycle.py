"""What the contact monitor adds to the inverse_dynamics node's cycle (after the command), against
the command's own effort law, per robot: medians over many calls, same run (the machine may be
loaded: compare the ratios, not the absolute numbers).

    python bench/contact_cycle.py [--calls 5000]

Rows: the effort law (`compute_efforts`, what precedes the command), the momentum observer update
(p = M q̇ and Cᵀ q̇ compiled, gravity, friction, the exact lag), the tip wrench (compiled link
Jacobian, 6×6 solve), and Pinocchio-free references: `jacobian` + `tip_wrench` in numpy.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import numpy as np

from rnea_ros import Friction, RobotModel, compile_kernels
from rnea_ros.control.effort_law import EffortLaw, Efforts, compute_efforts
from rnea_ros.estimation.observer import MomentumObserver, TipWrench, tip_wrench
from rnea_ros.model.example_robots import example_urdf_path

ROBOTS = {"panda": "panda_hand", "ur5": "ee_link"}


def median_us(call: Callable[[int], object], calls: int) -> float:
    times = np.empty(calls)
    for i in range(calls):
        start = time.perf_counter()
        call(i)
        times[i] = time.perf_counter() - start
    return float(np.median(times) * 1e6)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=5000)
    calls = parser.parse_args().calls
    compile_kernels()  # the observer's kernels too
    rng = np.random.default_rng(0)
    print(
        f"{'robot':8} {'effort law':>11} {'observer':>9} {'tip wrench':>11} {'numpy wrench':>13} (µs, median)"
    )
    for name, link in ROBOTS.items():
        print(row(name, link, calls, rng))


def row(name: str, link: str, calls: int, rng: np.random.Generator) -> str:
    model = RobotModel.from_urdf(example_urdf_path(name).read_text())
    n = model.nv
    q, qd, tau = rng.normal(0, 0.5, n), rng.normal(0, 1.0, n), rng.normal(0, 5.0, n)
    friction = Friction.from_model(model)
    efforts = Efforts(model, EffortLaw(friction=friction))
    desired = (q, qd, np.zeros(n))
    law = median_us(lambda i: compute_efforts(efforts, q, qd, desired, t=1e-3 * i), calls)
    observer = MomentumObserver(model, 50.0, friction=friction)
    update = median_us(lambda i: observer.update(1e-3 * (i + 1), q, qd, tau), calls)
    tip = TipWrench(model, link)
    wrench = median_us(lambda i: tip(q, observer.residual), calls)
    slow = median_us(lambda i: tip_wrench(model, q, observer.residual, link), max(calls // 10, 10))
    return f"{name:8} {law:11.1f} {update:9.1f} {wrench:11.1f} {slow:13.1f}"


if __name__ == "__main__":
    main()
