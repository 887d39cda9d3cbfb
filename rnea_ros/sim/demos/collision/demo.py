"""`python -m rnea_ros.demo --collision`: external-torque estimation and collision detection against
MuJoCo, in one process (no ROS): the node's effort law (feedforward + PD) tracks a fast
multi-sine on the arm while known wrenches act on a link (MuJoCo `xfrc_applied`), and the momentum
observer (`rnea_ros.estimation.observer`, the node's ~/external_efforts) and the naive estimator
τ_m − rnea(q, q̇, q̈) − τ_f (q̈ from twice-differentiated positions) run on what the simulator
publishes in joint_states (q, q̇ and the applied effort, as sim_node does).

Runs (simulated seconds, 1 kHz, plant equal to the URDF model):
1. calibration, no contact: the collision thresholds, per joint, are THRESHOLD_MARGIN × the
   largest |r| seen (at least THRESHOLD_FLOOR);
2. a wrench step on the tip link (on 1 s), then a 0.5 Hz sine wrench: r against the true external
   joint torques (MuJoCo's Jacobians, not ours) and the tip wrench against the applied one, RMS
   over the contact windows from 5 observer time constants after onset (targets: 5 %);
3. a collision: a 25 ms force pulse on an elbow link during fast motion (target: flagged within
   10 ms);
4. contact-free fast motion on other seeds (`--minutes`): no false alarm with the thresholds of 1.

Units: N, N m, s. Wrenches in root axes, moment about the link origin; the "true" wrench is the
one the link exerts on its environment (the guide's convention), i.e. minus what is applied to it.
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import mujoco
import numpy as np

from rnea_ros.algorithms.dynamics import rnea
from rnea_ros.control.effort_law import EffortLaw
from rnea_ros.estimation.observer import TipWrench, observe
from rnea_ros.friction.model import friction_torques
from rnea_ros.model.example_robots import example_urdf_path
from rnea_ros.model.robot_model import RobotModel
from rnea_ros.sim.cli import MISSED, OK, add_output_options, demo_parser, save_figure, write_json
from rnea_ros.sim.closed_loop import Loop
from rnea_ros.sim.demos.collision.scenario import (
    PULSE,
    THRESHOLD_MARGIN,
    Disturbance,
    fast_motion,
    first_flag,
)
from rnea_ros.sim.scenario import MODEL_TERMS, gains, home_of, split_arm

GAIN = 100.0  # observer gain K_O, rad/s (time constant 10 ms)
THRESHOLD_FLOOR = 0.5  # N m
SETTLE_CONSTANTS = 5.0  # observer time constants skipped after an onset before scoring
ENCODER_BITS = 20


@dataclass
class Record:
    """What the simulator publishes (t, q, qd, effort) and the truth, sample by sample."""

    t: np.ndarray  # (N,) s
    q: np.ndarray  # (N, n)
    qd: np.ndarray
    effort: np.ndarray  # applied over the step that ended at t
    tau_ext: np.ndarray  # (N, n) true external joint torques over that step
    wrench: np.ndarray  # (N, 6) wrench the link exerts on its environment, root axes, about its origin


def simulate(
    urdf: str, duration: float, link: str, disturbance: Disturbance | None = None, seed: int = 0
) -> Record:
    """Track a fast multi-sine for `duration` s with the node's law, `disturbance` on `link`."""
    model = RobotModel.from_urdf(urdf)
    chain = split_arm(model).chain
    home = home_of(model)
    kp, kd = gains(model, home, chain)
    index = [model.joint_index(j) for j in chain]
    kp_full, kd_full = np.zeros(model.nv), np.zeros(model.nv)
    kp_full[index], kd_full[index] = kp, kd
    law = EffortLaw(kp=kp_full, kd=kd_full, compensate=frozenset(MODEL_TERMS))
    loop = Loop(urdf, chain, law, home)
    arm = loop.arm
    m, d = arm.model, arm.data
    body = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_BODY, link)
    if body < 0:
        raise ValueError(f"link '{link}' is not a body of the simulated robot")
    motion = fast_motion(model, chain, home, duration, seed)
    steps = int(round(duration / arm.timestep))
    n = model.nv
    t, q, qd, effort, tau, wrench = (np.zeros((steps + 1, *s)) for s in ((), (n,), (n,), (n,), (n,), (6,)))
    t[0], q[0], qd[0] = arm.time, arm.q, arm.qd
    jacp, jacr = np.zeros((3, m.nv)), np.zeros((3, m.nv))
    samples = motion.sample(np.arange(steps) * arm.timestep)
    for k in range(steps):
        applied = np.zeros(6) if disturbance is None else np.asarray(disturbance(arm.time), dtype=float)
        d.xfrc_applied[body] = applied
        if applied.any():  # the truth from MuJoCo's own Jacobians at the point of application
            mujoco.mj_jac(m, d, jacp, jacr, d.xipos[body], body)
            tau[k + 1] = jacp.T @ applied[:3] + jacr.T @ applied[3:]
            moment = applied[3:] + np.cross(d.xipos[body] - d.xpos[body], applied[:3])
            wrench[k + 1] = -np.concatenate([applied[:3], moment])
        loop.step((samples[0][k], samples[1][k], samples[2][k]))
        t[k + 1], q[k + 1], qd[k + 1], effort[k + 1] = arm.time, arm.q, arm.qd, arm.applied
    return Record(t, q, qd, effort, tau, wrench)


def naive(model: RobotModel, rec: Record) -> np.ndarray:
    """The naive estimate of τ_ext, rnea(q, q̇, q̈) + τ_f − τ_m, with q̈ the second backward
    difference of q (N, n)."""
    qdd = np.zeros_like(rec.q)
    dt = np.diff(rec.t).mean()
    qdd[2:] = (rec.q[2:] - 2 * rec.q[1:-1] + rec.q[:-2]) / dt**2
    return rnea(model, rec.q, rec.qd, qdd) + friction_torques(_friction(model), rec.qd) - rec.effort


def quantized(rec: Record, bits: int) -> Record:
    """The record as `bits`-bit joint encoders report it: q rounded to 2π / 2^bits, q̇ the backward
    difference of the rounded positions (as many drivers estimate it)."""
    step = 2 * np.pi / 2**bits
    q = np.round(rec.q / step) * step
    qd = rec.qd.copy()
    qd[1:] = np.diff(q, axis=0) / np.diff(rec.t)[:, None]
    return Record(rec.t, q, qd, rec.effort, rec.tau_ext, rec.wrench)


def _friction(model: RobotModel):
    from rnea_ros.friction.model import Friction

    return Friction.from_model(model)


def residual(model: RobotModel, rec: Record, gain: float = GAIN) -> np.ndarray:
    return observe(model, rec.t, rec.q, rec.qd, rec.effort, gain, friction=_friction(model))


def windows(active: np.ndarray, t: np.ndarray, settle: float) -> np.ndarray:
    """Samples of `active` stretches, from `settle` s after each onset."""
    out = np.zeros_like(active)
    onset = None
    for i, on in enumerate(active):
        if on and onset is None:
            onset = t[i]
        if not on:
            onset = None
        out[i] = on and onset is not None and t[i] - onset >= settle
    return out


def rms_ratio(estimate: np.ndarray, truth: np.ndarray, mask: np.ndarray) -> float:
    return float(np.sqrt(np.mean((estimate[mask] - truth[mask]) ** 2)) / np.sqrt(np.mean(truth[mask] ** 2)))


def delay_to_half(estimate: np.ndarray, truth: np.ndarray, t: np.ndarray, onset: float, end: float) -> float:
    """Time from `onset` until the estimate first covers half of the true step (its largest
    joint, the step's value just before `end`)."""
    after = t >= onset
    last = int(np.flatnonzero(t < end)[-1])
    j = int(np.argmax(np.abs(truth[last])))
    target = 0.5 * truth[last, j]
    hit = np.flatnonzero(after & (np.sign(target) * estimate[:, j] >= abs(target)))
    return float(t[hit[0]] - onset) if hit.size else float("inf")


def run(urdf: str, tip: str, elbow: str, minutes: float, calibrate: float = 20.0, seed: int = 0) -> dict:
    """Every run of the module docstring; the figures as a dict (see `table`)."""
    model = RobotModel.from_urdf(urdf)
    chain = [model.joint_index(j) for j in split_arm(model).chain]
    out: dict = {"gain": GAIN}
    # 1. calibration
    cal = simulate(urdf, calibrate, tip, None, seed)
    r_cal = residual(model, cal)[:, chain]
    skip = cal.t > 0.05
    thresholds = np.maximum(THRESHOLD_MARGIN * np.abs(r_cal[skip]).max(axis=0), THRESHOLD_FLOOR)
    out["thresholds"] = thresholds.tolist()
    out["naive_quiet_peak"] = float(np.abs(naive(model, cal)[:, chain][skip]).max())
    # 2. wrench step, then sine
    force = np.array([15.0, -10.0, 20.0, 0.5, -0.4, 0.3])

    def wrench(t: float) -> np.ndarray:
        if 1.0 <= t < 2.0:
            return force
        if 3.0 <= t < 7.0:
            return force * np.sin(2 * np.pi * 0.5 * (t - 3.0))
        return np.zeros(6)

    rec = simulate(urdf, 7.5, tip, wrench, seed + 1)
    r = residual(model, rec)
    nv = naive(model, rec)
    settle = SETTLE_CONSTANTS / GAIN
    step = windows((rec.t >= 1.0 + 1e-3) & (rec.t < 2.0), rec.t, settle)
    sine = windows((rec.t >= 3.0 + 1e-3) & (rec.t < 7.0), rec.t, settle)
    for name, mask in (("step", step), ("sine", sine)):
        out[f"{name}_torque_rms"] = rms_ratio(r[:, chain], rec.tau_ext[:, chain], mask)
        out[f"{name}_naive_rms"] = rms_ratio(nv[:, chain], rec.tau_ext[:, chain], mask)
        tipw = TipWrench(model, tip, 1e-3)
        est = np.array([tipw(rec.q[i], r[i])[0] for i in np.flatnonzero(mask)])
        truth = rec.wrench[mask]
        out[f"{name}_force_rms"] = rms_ratio(est[:, :3], truth[:, :3], np.ones(len(est), bool))
        out[f"{name}_moment_rms"] = rms_ratio(est[:, 3:], truth[:, 3:], np.ones(len(est), bool))
    out["step_delay_observer"] = delay_to_half(r[:, chain], rec.tau_ext[:, chain], rec.t, 1.0, 2.0)
    out["step_delay_naive"] = delay_to_half(nv[:, chain], rec.tau_ext[:, chain], rec.t, 1.0, 2.0)
    coarse = quantized(rec, ENCODER_BITS)  # the same run through 20-bit encoders
    r_q, nv_q = residual(model, coarse)[:, chain], naive(model, coarse)[:, chain]
    out["encoder_step_torque_rms"] = rms_ratio(r_q, rec.tau_ext[:, chain], step)
    out["encoder_step_naive_rms"] = rms_ratio(nv_q, rec.tau_ext[:, chain], step)
    plot_data = {
        "t": rec.t,
        "r": r[:, chain],
        "truth": rec.tau_ext[:, chain],
        "naive": nv_q,
        "r_encoder": r_q,
    }
    # 3. collision: a force pulse on the elbow during fast motion
    onset = 2.0
    push = np.array([0.0, 60.0, -40.0, 0.0, 0.0, 0.0])

    def pulse(t: float) -> np.ndarray:
        return push * np.sin(np.pi * (t - onset) / PULSE) if onset <= t < onset + PULSE else np.zeros(6)

    hit = simulate(urdf, 2.5, elbow, pulse, seed + 2)
    r_hit = residual(model, hit)[:, chain]
    out["false_alarm_before_pulse"] = bool(first_flag(r_hit, thresholds, hit.t, 0.05) < onset)
    out["detection_delay"] = first_flag(r_hit, thresholds, hit.t, onset) - onset
    out["pulse_peak_torque"] = float(np.abs(hit.tau_ext[:, chain]).max())
    # 4. contact-free minutes on other seeds
    alarms, peak, simulated = 0, 0.0, 0.0
    chunk = 60.0
    k = 0
    while simulated < minutes * 60.0 - 1e-9:
        length = min(chunk, minutes * 60.0 - simulated)
        free = simulate(urdf, length, tip, None, seed + 10 + k)
        r_free = residual(model, free)[:, chain]
        ratio = np.abs(r_free[free.t > 0.05]) / thresholds
        alarms += int((ratio > 1.0).any(axis=1).sum())
        peak = max(peak, float(ratio.max()))
        simulated += length
        k += 1
    out["free_seconds"] = simulated
    out["false_alarm_samples"] = alarms
    out["free_peak_ratio"] = peak
    out["_plot"] = plot_data
    return out


TARGETS = {
    "step_torque_rms": 0.05,
    "sine_torque_rms": 0.05,
    "step_force_rms": 0.05,
    "step_moment_rms": 0.05,
    "sine_force_rms": 0.05,
    "sine_moment_rms": 0.05,
    "detection_delay": 0.010,
}


# how the table shows each target figure: label, scale to the unit, unit
SHOWN = {
    "step_torque_rms": ("external torques, step: RMS error / RMS truth", 100.0, "%"),
    "sine_torque_rms": ("external torques, sine: RMS error / RMS truth", 100.0, "%"),
    "step_force_rms": ("tip force, step: RMS error / RMS truth", 100.0, "%"),
    "step_moment_rms": ("tip moment, step: RMS error / RMS truth", 100.0, "%"),
    "sine_force_rms": ("tip force, sine: RMS error / RMS truth", 100.0, "%"),
    "sine_moment_rms": ("tip moment, sine: RMS error / RMS truth", 100.0, "%"),
    "detection_delay": ("collision pulse flagged after", 1e3, "ms"),
}


def table(out: dict) -> str:
    """The figures and their targets as a text table, each with its unit."""
    rows = [("figure", "value", "target", "met")]
    for key, target in TARGETS.items():
        value = out[key]
        label, scale, unit = SHOWN[key]
        met = "yes" if value <= target else "NO"
        rows.append((label, f"{value * scale:.3g} {unit}", f"<= {target * scale:g} {unit}", met))
    rows.append(
        (
            "false alarms (samples)",
            f"{out['false_alarm_samples']} in {out['free_seconds']:.0f} s",
            "0",
            "yes" if out["false_alarm_samples"] == 0 and not out["false_alarm_before_pulse"] else "NO",
        )
    )
    rows.append(
        ("free motion: largest |r| / threshold", f"{out['free_peak_ratio'] * 100:.3g} %", "< 100 %", "")
    )
    rows.append(
        ("naive/observer RMS error, step", f"{out['step_naive_rms'] / out['step_torque_rms']:.3g}", "", "")
    )
    rows.append(
        ("naive/observer RMS error, sine", f"{out['sine_naive_rms'] / out['sine_torque_rms']:.3g}", "", "")
    )
    rows.append(
        (
            f"{ENCODER_BITS}-bit encoders, step: observer / naive RMS error / RMS truth",
            f"{out['encoder_step_torque_rms'] * 100:.3g} / {out['encoder_step_naive_rms'] * 100:.3g} %",
            "",
            "",
        )
    )
    rows.append(
        (
            "delay to half the step: observer / naive",
            f"{out['step_delay_observer'] * 1e3:.1f} / {out['step_delay_naive'] * 1e3:.1f} ms",
            "",
            "",
        )
    )
    rows.append(("thresholds", ", ".join(f"{x:.2f}" for x in out["thresholds"]) + " N m", "", ""))
    width = [max(len(r[i]) for r in rows) for i in range(4)]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(r, width, strict=True)) for r in rows)


def plot(out: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    data = out["_plot"]
    j = int(np.argmax(np.abs(data["truth"]).max(axis=0)))
    fig, ax = plt.subplots(figsize=(10, 4))
    bits = ENCODER_BITS
    ax.plot(
        data["t"],
        data["naive"][:, j],
        color="0.75",
        lw=0.5,
        label=f"naive rnea(q, q̇, q̈ from q) + τ_f − τ_m, {bits}-bit encoders",
    )
    ax.plot(data["t"], data["r_encoder"][:, j], "C0", lw=0.6, label=f"momentum observer, {bits}-bit encoders")
    ax.plot(data["t"], data["truth"][:, j], "k", lw=1.2, label="true external torque (MuJoCo)")
    ax.plot(
        data["t"],
        data["r"][:, j],
        "C3",
        lw=1.0,
        label=f"momentum observer r (K_O = {out['gain']:g} /s), exact q, q̇",
    )
    ax.set_ylim(1.5 * data["truth"][:, j].min() - 1, 1.5 * data["truth"][:, j].max() + 1)
    ax.set_xlabel("t (s)")
    ax.set_ylabel(f"joint {j + 1} external torque (N m)")
    ax.set_title("wrench step then 0.5 Hz sine on the tip link, fast multi-sine tracking")
    ax.legend(loc="upper right", fontsize=8)
    save_figure(fig, path)


def argument_parser() -> argparse.ArgumentParser:
    parser = demo_parser("--collision", __doc__)
    parser.add_argument(
        "--minutes", type=float, default=10.0, help="contact-free simulated minutes (default 10)"
    )
    add_output_options(parser)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--mismatch-record",
        type=float,
        default=40.0,
        help="mismatched plant (rnea_ros.sim.demos.collision.mismatch): excitation to identify from, s; "
        "0: skip",
    )
    parser.add_argument("--mismatch-free", type=float, default=60.0, help="its contact-free run, s")
    return parser


def mismatch_table(m: dict) -> str:
    """Per joint: peak and RMS |r| on the mismatched plant with the URDF and identified models."""
    rows = [("joint", "peak |r| URDF", "peak |r| identified", "RMS URDF", "RMS identified")]
    for j in range(len(m["peak_urdf"])):
        rows.append(
            (
                str(j + 1),
                f"{m['peak_urdf'][j]:.2f}",
                f"{m['peak_identified'][j]:.2f}",
                f"{m['rms_urdf'][j]:.2f}",
                f"{m['rms_identified'][j]:.2f}",
            )
        )
    width = [max(len(r[i]) for r in rows) for i in range(5)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, width, strict=True)) for r in rows]
    delays = (
        f"collision pulse flagged after {m['detection_delay_urdf'] * 1e3:.0f} ms (URDF model) / "
        f"{m['detection_delay_identified'] * 1e3:.0f} ms (identified), thresholds "
        f"{THRESHOLD_MARGIN:g} x each model's contact-free peak"
    )
    return f"mismatched plant, {m['free_seconds']:g} s contact-free (N m):\n" + "\n".join([*lines, delays])


def main(argv: list[str] | None = None) -> int:
    args = argument_parser().parse_args(argv)
    urdf = example_urdf_path("panda").read_text()
    start = time.monotonic()
    out = run(urdf, "panda_hand", "panda_link4", args.minutes, seed=args.seed)
    print(table(out))
    print(f"({time.monotonic() - start:.0f} s wall clock)")
    if args.plot:
        Path(args.out).mkdir(parents=True, exist_ok=True)
        path = Path(args.out) / "collision_demo.png"
        plot(out, path)
        print(f"plot: {path}")
    if args.mismatch_record > 0:
        from rnea_ros.sim.demos.collision.mismatch import mismatch_residuals

        out["mismatch"] = mismatch_residuals(args.mismatch_record, args.mismatch_free, args.seed, GAIN)
        print(mismatch_table(out["mismatch"]))
    if args.json:
        write_json(args.json, {k: v for k, v in out.items() if k != "_plot"})
    met = all(out[k] <= v for k, v in TARGETS.items()) and out["false_alarm_samples"] == 0
    return OK if met else MISSED


if __name__ == "__main__":
    sys.exit(main())
