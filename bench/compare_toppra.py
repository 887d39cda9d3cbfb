"""Uniform time scaling (`minimal_time_scale`) against TOPP-RA's time-optimal re-timing
(`time_optimal_parameterisation`: toppra's JointTorqueConstraint fed by batch `rnea`, plus joint
velocity limits) on the same paths, both checked on what JTC would receive: the trajectory
resampled every 5 ms (the default period), efforts from `trajectory_efforts`.

Trajectories: Panda arm (fingers held) multi-sines (the demo's, and a fast one), point-to-point
quintic moves too fast for the effort limits (Panda, UR5). Effort law: gravity + Coriolis +
inertia (TOPP-RA's torque constraint has no term linear in path speed, so no viscous friction).

Columns: original duration; uniform k, its duration, what binds; TOPP-RA's duration; for both
the largest |τ|/limit and |q̇|/limit over the resampled points (must be ≤ 1); and the largest
error of JTC's linear effort interpolation against the exact τ(t) between those points, relative
to the limit; wall time of each method.

    .venv/bin/python bench/compare_toppra.py [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import replace

import numpy as np

from rnea_ros import RobotModel
from rnea_ros.control.effort_law import EffortLaw
from rnea_ros.demo import PANDA_ARM, PANDA_HOME
from rnea_ros.identification.excitation import ExcitationOptions, design
from rnea_ros.model.example_robots import example_urdf_path
from rnea_ros.trajectory.efforts import (
    DEFAULT_RESAMPLE_PERIOD,
    interpolation_error,
    resample,
    trajectory_efforts,
)
from rnea_ros.trajectory.joint_map import JointMap
from rnea_ros.trajectory.time_optimal import time_optimal_parameterisation
from rnea_ros.trajectory.time_scaling import minimal_time_scale, scale_trajectory

PERIOD = DEFAULT_RESAMPLE_PERIOD  # 5 ms
LAW = EffortLaw(compensate=frozenset({"gravity", "coriolis", "inertia"}))
UR5_HOME = {
    "shoulder_pan_joint": 0.0,
    "shoulder_lift_joint": -1.0,
    "elbow_joint": 1.0,
    "wrist_1_joint": -1.5,
    "wrist_2_joint": -1.5,
    "wrist_3_joint": 0.0,
}


def model(name: str) -> RobotModel:
    return RobotModel.from_urdf(example_urdf_path(name).read_text())


def multisine(m: RobotModel, fast: bool, seed: int) -> tuple:
    """Model-order points of a Panda arm multi-sine around the demo's home, fingers held."""
    jm = JointMap(m, PANDA_ARM)
    home = np.array([PANDA_HOME[j] for j in PANDA_ARM])
    lo, hi, vlim = (x[jm.index] for x in (m.position_lower, m.position_upper, m.velocity_limit))
    if fast:
        options = ExcitationOptions(
            duration=4.0,
            ramp=0.5,
            frequency_range=(0.5, 2.0),
            max_amplitude=0.8,
            velocity_scale=1.0,
            seed=seed,
        )
        motion = design(home, lo, hi, 10 * vlim, 60.0, options)
    else:  # the demo's multisine_node defaults
        motion = design(home, lo, hi, vlim, 3.0, ExcitationOptions(seed=seed))
    t, q, qd, qdd = motion.points(100.0)  # the demo sends 100 points/s
    return (t, *jm.expand_trajectory(q, qd, qdd, PANDA_HOME))


def point_to_point(m: RobotModel, start: dict, delta: dict, duration: float) -> tuple:
    """Rest-to-rest quintic (JTC: two points with zero velocity and acceleration)."""
    q0 = np.array([start.get(j, 0.0) for j in m.joint_names])
    q1 = q0 + np.array([delta.get(j, 0.0) for j in m.joint_names])
    zero = np.zeros((2, m.nv))
    return np.array([0.0, duration]), np.stack([q0, q1]), zero, zero


def check(m, points, effort_limit, joints) -> tuple[float, float, float]:
    """Largest |τ|/limit, |q̇|/limit over the resampled points; largest interpolation error/limit."""
    t, q, qd, qdd = resample(points, PERIOD)
    tau = trajectory_efforts(m, q, qd, qdd, LAW)
    idx = [m.joint_index(j) for j in joints]
    eff = np.max(np.abs(tau[:, idx]) / effort_limit[idx])
    vel = np.max(np.abs(qd[:, idx]) / m.velocity_limit[idx])
    err = interpolation_error(m, points, PERIOD, law=LAW)[idx] / effort_limit[idx]
    return float(eff), float(vel), float(np.max(err))


def run() -> list[dict]:
    panda, ur5 = model("panda"), model("ur5")
    heavy = panda.with_payload("panda_hand", mass=3.0, com=(0.0, 0.0, 0.1))  # its rated payload
    heavy_move = point_to_point(heavy, PANDA_HOME, {"panda_joint2": 0.2, "panda_joint4": -0.2}, 0.1)
    ur5_move = point_to_point(ur5, UR5_HOME, {"shoulder_lift_joint": 0.2, "elbow_joint": -0.2}, 0.1)
    cases = [
        ("Panda, demo multi-sine (seed 0)", panda, multisine(panda, False, 0), 1.0, PANDA_ARM),
        ("Panda, fast multi-sine (seed 0)", panda, multisine(panda, True, 0), 1.0, PANDA_ARM),
        ("Panda, fast multi-sine (seed 1), 45 % effort", panda, multisine(panda, True, 1), 0.45, PANDA_ARM),
        ("Panda + 3 kg, point-to-point 0.1 s", heavy, heavy_move, 1.0, PANDA_ARM),
        ("UR5, point-to-point 0.1 s", ur5, ur5_move, 1.0, list(ur5.joint_names)),
    ]  # fmt: skip
    rows = []
    for name, m, points, scale, joints in cases:
        limit = m.effort_limit * scale
        kw = {"law": replace(LAW, effort_limit_scale=scale), "joints": joints, "period": PERIOD}
        t0 = time.perf_counter()
        uniform = minimal_time_scale(m, *points, **kw)
        t_uniform = time.perf_counter() - t0
        t0 = time.perf_counter()
        optimal = time_optimal_parameterisation(m, *points, **kw)
        t_optimal = time.perf_counter() - t0
        scaled = scale_trajectory(*points, k=uniform.k)
        rows.append(
            {
                "trajectory": name,
                "duration": float(points[0][-1]),
                "k": uniform.k,
                "uniform_duration": uniform.duration,
                "binds": f"{uniform.limit} {uniform.joint}" if uniform.k > 1 else "none",
                "uniform": check(m, scaled, limit, joints),
                "toppra_duration": float(optimal[0][-1]),
                "toppra": check(m, optimal, limit, joints),
                "time_uniform": t_uniform,
                "time_toppra": t_optimal,
            }
        )
    return rows


def table(rows: list[dict]) -> str:
    head = (
        "| trajectory | T s | uniform k | uniform T s | binds | TOPP-RA T s | max τ/limit uniform / TOPP-RA "
        "| max q̇/limit uniform / TOPP-RA | interp. error/limit uniform / TOPP-RA | time uniform / TOPP-RA |"
    )
    lines = [head, "| --- | --: | --: | --: | --- | --: | --: | --: | --: | --: |"]
    for r in rows:
        u, o = r["uniform"], r["toppra"]
        lines.append(
            f"| {r['trajectory']} | {r['duration']:.2f} | {r['k']:.3f} | {r['uniform_duration']:.2f} | "
            f"{r['binds']} | {r['toppra_duration']:.2f} | {u[0]:.4f} / {o[0]:.4f} | "
            f"{u[1]:.4f} / {o[1]:.4f} | {u[2]:.4f} / {o[2]:.3f} | "
            f"{r['time_uniform'] * 1e3:.0f} ms / {r['time_toppra'] * 1e3:.0f} ms |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", help="write the rows here too")
    args = parser.parse_args()
    rows = run()
    print(table(rows))
    bad = [r["trajectory"] for r in rows if max(r["uniform"][:2]) > 1.0 or max(r["toppra"][:2]) > 1.0]
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    if bad:
        raise SystemExit(f"limits exceeded: {bad}")


if __name__ == "__main__":
    main()
