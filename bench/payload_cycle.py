"""What online payload estimation adds to the inverse_dynamics node, on the Panda: medians over
many calls, same run (the machine may be loaded: compare the ratios, not the absolute numbers).

    python bench/payload_cycle.py [--calls 3000]

Rows: the command's effort law (`compute_efforts`) and the momentum observer's update, for scale;
the payload stream's update (every cycle with payload.estimation on: the link's Jacobian, its
velocity, gravity and r stored), and its mean while an estimation is under way (the lag-matched
regressor computed every 50 samples); the same for 1.5 s of samples at once (a request after
idling); the fit over 0.4 s and over 3 s of 1 kHz samples (once per window); a step of a blend
(the cycle model rebuilt with a new payload: every 5 ms while an estimate goes in).
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import numpy as np

from rnea_ros import Friction, RobotModel, compile_kernels
from rnea_ros.control.effort_law import EffortLaw, Efforts, compute_efforts
from rnea_ros.estimation.observer import MomentumObserver
from rnea_ros.estimation.payload import PayloadLimits
from rnea_ros.estimation.payload_stream import PayloadStream
from rnea_ros.model.example_robots import example_urdf_path
from rnea_ros.model.robot_model import Payload
from rnea_ros.nodes.inverse_dynamics.cycle_model import build_cycle_model
from rnea_ros.nodes.inverse_dynamics.overrides import NONE
from rnea_ros.nodes.inverse_dynamics.params import INVERSE_DYNAMICS


def median_us(call: Callable[[int], object], calls: int) -> float:
    times = np.empty(calls)
    for i in range(calls):
        start = time.perf_counter()
        call(i)
        times[i] = time.perf_counter() - start
    return float(np.median(times) * 1e6)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=3000)
    calls = parser.parse_args().calls
    compile_kernels()
    urdf = example_urdf_path("panda").read_text()
    model = RobotModel.from_urdf(urdf)
    n = model.nv
    rng = np.random.default_rng(0)
    q = rng.uniform(-1, 1, (calls + 4000, n))
    qd = rng.normal(0, 0.5, (calls + 4000, n))
    tau = rng.normal(0, 5, (calls + 4000, n))
    efforts = Efforts(model, EffortLaw(kp=np.full(n, 100.0), kd=np.full(n, 10.0)))
    observer = MomentumObserver(model, 100.0, friction=Friction.from_model(model))
    stream = PayloadStream(model, "panda_hand", 100.0, 8000)
    rows = {
        "effort law (compute_efforts)": median_us(
            lambda i: compute_efforts(efforts, q[i], qd[i], (q[i], qd[i], np.zeros(n)), t=i * 1e-3), calls
        ),
        "momentum observer update": median_us(
            lambda i: observer.update(i * 1e-3, q[i], qd[i], tau[i]), calls
        ),
        "payload stream update (every cycle)": median_us(
            lambda i: stream.update(i * 1e-3, q[i], qd[i], tau[i]), calls
        ),
    }
    # while an estimation is under way: every BATCH samples processed as they come (mean per cycle)
    stream.eager = True
    start = time.perf_counter()
    for i in range(calls, calls + 2000):
        stream.update(i * 1e-3, q[i], qd[i], tau[i])
    rows["... while estimating (eager), mean per cycle"] = (time.perf_counter() - start) / 2000 * 1e6
    stream.eager = False
    for i in range(calls + 2000, calls + 3500):
        stream.update(i * 1e-3, q[i], qd[i], tau[i])
    start = time.perf_counter()
    stream.samples()  # the last 1.5 s processed at once, as a request finds them
    rows["processing 1.5 s of samples at once (a request after idling)"] = (time.perf_counter() - start) * 1e6
    for i in range(calls + 3500, calls + 4000):
        stream.update(i * 1e-3, q[i], qd[i], tau[i])
    end = (calls + 4000 - 1) * 1e-3
    free = PayloadLimits(max_mismatch=1e9, min_rotation=0.0, max_com_distance=1e9, min_mass=0.0)

    def estimate(span: float) -> Callable[[int], object]:
        def call(_: int) -> object:
            try:
                return stream.estimate(end - span, limits=free)
            except ValueError:  # random data: a negative mass refused, after the work
                return None

        return call

    rows["fit over 0.4 s (once per window)"] = median_us(estimate(0.4), 50)
    rows["fit over 3 s (the last refinement)"] = median_us(estimate(3.0), 20)
    params = {k: p.default for k, p in INVERSE_DYNAMICS.items()}
    params.update({"robot_description": urdf, "joints": [f"panda_joint{i}" for i in range(1, 8)]})
    cycle = build_cycle_model(model, params, NONE)

    def swap(i: int) -> object:
        payload = Payload("panda_hand", 1.0 + 1e-3 * i, np.array([0.0, 0.0, 0.05]), np.zeros((3, 3)))
        return build_cycle_model(model, params, NONE.with_payload(payload, "estimate"), (cycle, params))

    rows["blend step (cycle model rebuilt, every 5 ms)"] = median_us(swap, 200)
    width = max(len(k) for k in rows)
    for name, value in rows.items():
        print(f"{name.ljust(width)}  {value:10.1f} us")


if __name__ == "__main__":
    main()
