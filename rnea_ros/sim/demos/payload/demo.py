"""`python -m rnea_ros.demo --payload`: the node estimates a grasped object online and its gravity
compensation follows (issue 38).

    python -m rnea_ros.demo --payload [--lockstep] [--minutes 10] [--no-off] [--headless] [--out out]

The Panda in MuJoCo tracks a multi-sine (the usual trajectory: multisine_trajectory's defaults),
three processes over DDS as in `make demo` (the simulator, the inverse_dynamics node, the
trajectory source; rnea_ros.sim.demos.forward), the node with its momentum observer, collision detection
and `payload.estimation: auto`, and PD gains of Franka's joint impedance example (kp 600, 600,
600, 600, 250, 150, 50 N m/rad, kd critically damped on each joint's inertia at home). The
simulator (rnea_ros.sim.demos.payload.plant) follows a schedule the node is not told:

1. grasp run: at PULSE_AT s the collision demo's collision pulse on the elbow (25 ms); at GRASP_AT s
   a 2 kg object, its centre of mass 5 cm out along the flange axis, is welded to the hand; at
   RELEASE_AT s it is released.
2. the same with `payload.estimation: off`: how far the arm sags with the load unknown.
3. free run: `--minutes` of multi-sines (a new seed each minute), no grasp, no collision.

Targets (lock-step and real time): the estimate in force within 1.5 s of the grasp, its mass
within 3 % and its centre of mass within 1 cm; the tracking error (the largest joint's RMS over
the last LEVEL_WINDOW s) back below 1.5 × its largest value in the PRE_GRASP s before the grasp
within 2 s of the grasp, and below it from then on; after the release the payload removed within
1.5 s and the largest tracking error within 2 s of the release (the "kick") below 1°; no estimate
after the collision pulse, none in the free run. Exit 1 when a target is missed, 3 when a
real-time run stopped because the machine did not keep real time. Units: s (plant time), deg,
kg, m, N m.
"""

from __future__ import annotations

import argparse
import io
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from rnea_ros.sim.cli import (
    MISSED,
    OK,
    REAL_TIME_LOST,
    add_output_options,
    add_ros_options,
    demo_parser,
    ended,
    save_figure,
    write_json,
)
from rnea_ros.sim.demos.payload.plant import OBJECT, Schedule
from rnea_ros.sim.demos.payload.scenario import (
    END,
    ESTIMATION,
    FREE_TRAJECTORY,
    GRASP_AT,
    PULSE_AT,
    RELEASE_AT,
    START,
    TRAJECTORY,
    Run,
    config,
    node_parameters,
    start,
)
from rnea_ros.sim.processes import Processes
from rnea_ros.sim.report import RealTimeLost
from rnea_ros.sim.scenario import Config, write_parameters

if TYPE_CHECKING:
    from rnea_ros.sim.report import Recording

LEVEL_WINDOW, PRE_GRASP = 0.5, 2.0  # s
TARGETS = {  # largest allowed (module docstring): s, ratio, m, s, s, deg
    "estimate_delay": 1.5,
    "mass_error": 0.03,
    "com_error": 0.01,
    "recovery": 2.0,
    "removal_delay": 1.5,
    "kick": 1.0,
}


def run(c: Config, out: Path, estimation: str, schedule: Schedule, minutes: float, timeout: float) -> Run:
    """One run in processes of its own: a grasp run (minutes 0) or a free run of `minutes`."""
    from rnea_ros.sim.demos.payload.supervisor import PayloadSupervisor  # ROS: once the environment is set

    free = minutes > 0
    processes = Processes(out / "payload_logs")
    try:
        with tempfile.TemporaryDirectory(prefix="rnea_payload_") as tmp:
            trajectory = min(FREE_TRAJECTORY, minutes * 60.0) if free else TRAJECTORY
            path = write_parameters(
                node_parameters(c, estimation, trajectory, not free), Path(tmp) / "params.yaml"
            )
            start(processes, path, schedule)
            supervisor = PayloadSupervisor(c, processes, timeout, estimation != "off")
            try:
                if free:
                    try:
                        return supervisor.free_run(minutes * 60.0, trajectory)
                    except RealTimeLost as exc:  # what ran until then still counts
                        return supervisor.stopped(exc)
                return supervisor.grasp_run(END)
            finally:
                supervisor.close()
    finally:
        processes.stop()


# --- figures ------------------------------------------------------------------------------


def tracking_level(rec: Recording) -> tuple[np.ndarray, np.ndarray]:
    """(t, the largest joint's RMS tracking error over the LEVEL_WINDOW s ending at t, deg)."""
    e = np.degrees(np.nan_to_num(rec.q_des - rec.q))
    cum = np.vstack([np.zeros(e.shape[1]), np.cumsum(e**2, axis=0)])
    start = np.searchsorted(rec.t, rec.t - LEVEL_WINDOW)
    count = np.maximum(np.arange(1, rec.t.size + 1) - start, 1)
    mean = (cum[1:] - cum[start]) / count[:, None]
    return rec.t, np.sqrt(np.max(mean, axis=1))


def grasp_figures(r: Run) -> dict[str, Any]:
    """The grasp run's figures (module docstring)."""
    rec = r.recording
    assert rec is not None
    truth_com = np.asarray(OBJECT.com)
    after = [(t, m, c) for t, m, c in r.estimates if GRASP_AT <= t < RELEASE_AT]
    removed = [t for t, m, _ in r.estimates if t >= RELEASE_AT and m == 0.0]
    t, level = tracking_level(rec)
    pre = float(level[(t >= GRASP_AT - PRE_GRASP) & (t < GRASP_AT)].max())
    held = (t >= GRASP_AT) & (t < RELEASE_AT)
    above = np.flatnonzero(held & (level >= 1.5 * pre))
    recovery = float(t[above[-1]] - GRASP_AT) if above.size else 0.0
    after_recovery = held & (t > GRASP_AT + recovery)
    error = np.degrees(np.abs(np.nan_to_num(rec.q_des - rec.q)))
    kick_window = (rec.t >= RELEASE_AT) & (rec.t < RELEASE_AT + 2.0)
    sag_window = (rec.t >= GRASP_AT) & (rec.t < RELEASE_AT)
    out: dict[str, Any] = {
        "pre_grasp_level": pre,
        "estimates_before_grasp": sum(1 for t_, _, _ in r.estimates if t_ < GRASP_AT),
        "estimate_delay": (after[0][0] - GRASP_AT) if after else float("inf"),
        "mass": after[0][1] if after else float("nan"),
        "com": after[0][2].tolist() if after else [],
        "mass_error": abs(after[0][1] - OBJECT.mass) / OBJECT.mass if after else float("inf"),
        "com_error": float(np.linalg.norm(after[0][2] - truth_com)) if after else float("inf"),
        "refined": len(after) - 1,
        "final_mass_error": abs(after[-1][1] - OBJECT.mass) / OBJECT.mass if after else float("inf"),
        "final_com_error": float(np.linalg.norm(after[-1][2] - truth_com)) if after else float("inf"),
        "recovery": recovery,
        "level_after_recovery": float(level[after_recovery].max()) if after_recovery.any() else float("nan"),
        "max_error_after_grasp": float(error[sag_window].max()),
        "removal_delay": (removed[0] - RELEASE_AT) if removed else float("inf"),
        "kick": float(error[kick_window].max()),
        "collisions_ignored": int(r.status.get("collisions_ignored", "0")),
        "refusals": int(r.status.get("refusals", "0")),
        "latency_ms_p50": float(np.median(rec.latencies) * 1e3) if rec.latencies.size else float("nan"),
        "command_step": command_steps(rec, after[0][0] if after else None),
    }
    return out


def command_steps(rec: Recording, blend_end: float | None) -> dict[str, float]:
    """Largest change of the applied effort from one step to the next (N m, any joint) while the
    estimate was blended in, and over the PRE_GRASP s before the grasp (the trajectory's own)."""
    if rec.applied is None or blend_end is None:
        return {}
    du = np.abs(np.diff(rec.applied, axis=0)).max(axis=1)
    t = rec.t[1:]
    blend = float(ESTIMATION["payload.blend_time"])
    during = (t >= blend_end - blend) & (t <= blend_end)
    before = (t >= GRASP_AT - PRE_GRASP) & (t < GRASP_AT)
    return {
        "blend": float(du[during].max()) if during.any() else float("nan"),
        "trajectory": float(du[before].max()),
    }


def off_figures(r: Run, pre: float) -> dict[str, float]:
    """With estimation off: the largest error and the level while the object is held."""
    rec = r.recording
    assert rec is not None
    t, level = tracking_level(rec)
    held = (t >= GRASP_AT + 2.0) & (t < RELEASE_AT)
    error = np.degrees(np.abs(np.nan_to_num(rec.q_des - rec.q)))
    window = (rec.t >= GRASP_AT) & (rec.t < RELEASE_AT)
    return {
        "max_error_after_grasp": float(error[window].max()),
        "level_while_held": float(level[held].max()),
        "level_ratio": float(level[held].max() / pre),
        "kick": float(error[(rec.t >= RELEASE_AT) & (rec.t < RELEASE_AT + 2.0)].max()),
    }


def missed(figures: dict[str, Any]) -> list[str]:
    """The targets a run's figures miss, in words."""
    grasp, free = figures.get("grasp", {}), figures.get("free")
    out = [f"{k} {grasp[k]:.4g} > {v:g}" for k, v in TARGETS.items() if k in grasp and not grasp[k] <= v]
    if grasp.get("estimates_before_grasp"):
        out.append(f"{grasp['estimates_before_grasp']} estimate(s) before the grasp (the collision pulse)")
    if grasp and grasp.get("collisions_ignored", 0) < 1:
        out.append("the collision pulse was not seen (no flag ignored)")
    if free is not None and free["estimates"]:
        out.append(f"{free['estimates']} false estimate(s) in the free run")
    if free is not None and free.get("stopped"):
        out.append(f"the free run stopped after {free['seconds']:.0f} s: {free['stopped']}")
    return out


def table(figures: dict[str, Any]) -> str:
    g = figures["grasp"]
    lines = [
        f"grasp at {GRASP_AT:g} s: estimate in force after {g['estimate_delay']:.3f} s (target <= 1.5): "
        f"{g['mass']:.4f} kg (error {100 * g['mass_error']:.2f} %, target <= 3 %), centre of mass "
        f"[{', '.join(f'{x:.4f}' for x in g['com'])}] m (error {1000 * g['com_error']:.2f} mm, target <= 10)",
        f"refined {g['refined']} time(s) while held: mass error {100 * g['final_mass_error']:.2f} %, centre "
        f"of mass error {1000 * g['final_com_error']:.2f} mm",
        f"tracking level (largest joint's RMS over {LEVEL_WINDOW:g} s): {g['pre_grasp_level']:.4f} deg "
        f"before the grasp; below 1.5x that from {g['recovery']:.3f} s after it on (target <= 2), then "
        f"at most {g['level_after_recovery']:.4f} deg; largest error after the grasp "
        f"{g['max_error_after_grasp']:.3f} deg",
        f"release at {RELEASE_AT:g} s: payload removed after {g['removal_delay']:.3f} s (target <= 1.5), "
        f"largest error within 2 s {g['kick']:.3f} deg (target <= 1)",
        f"collision pulse at {PULSE_AT:g} s: {g['estimates_before_grasp']} estimate(s), "
        f"{g['collisions_ignored']} flag(s) ignored; refusals in the run: {g['refusals']}",
        f"command latency (joint_states published -> its command received) p50 {g['latency_ms_p50']:.2f} ms",
    ]
    steps = g["command_step"]
    if steps:
        lines.append(
            f"command: largest change in one 1 ms step while blending {steps['blend']:.3f} N m, along the "
            f"trajectory before the grasp {steps['trajectory']:.3f} N m"
        )
    off = figures.get("off")
    if off:
        lines.append(
            f"estimation off: largest error while held {off['max_error_after_grasp']:.3f} deg, level "
            f"from 2 s after the grasp {off['level_while_held']:.4f} deg ({off['level_ratio']:.1f}x the "
            f"pre-grasp level), after the release {off['kick']:.3f} deg"
        )
    free = figures.get("free")
    if free:
        lines.append(
            f"free run: {free['seconds']:.0f} s{' (stopped: real time lost)' if free['stopped'] else ''}, "
            f"{free['estimates']} estimate(s), {free['refusals']} "
            f"refusal(s), {free['collisions_ignored']} flag(s) ignored, largest |r| / threshold "
            f"{free['peak_ratio']:.3g}"
        )
    return "\n".join(lines)


def plot(grasp: Run, off: Run | None, path: Path, title: str) -> Path:
    """The worst joint's tracking error with and without estimation, the payload in force, and
    the applied efforts, over the grasp run."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rec = grasp.recording
    assert rec is not None
    fig, ax = plt.subplots(3, 1, figsize=(11, 8), sharex=True)
    for r, label, color in (
        (off, "payload.estimation: off", "0.6"),
        (grasp, "payload.estimation: auto", "C3"),
    ):
        if r is None or r.recording is None:
            continue
        t, level = tracking_level(r.recording)
        ax[0].semilogy(t, np.maximum(level, 1e-4), color=color, lw=1.0, label=label)
    ax[0].set_ylabel(f"tracking error (deg)\nlargest joint's RMS over {LEVEL_WINDOW:g} s")
    truth = np.where((rec.t >= GRASP_AT) & (rec.t < RELEASE_AT), OBJECT.mass, 0.0)
    ax[1].plot(rec.t, truth, "k", lw=1.0, label="mass welded to the hand (MuJoCo)")
    blend = float(ESTIMATION["payload.blend_time"])
    times, masses = [START], [0.0]  # the model's payload: each estimate blended in, ending at its message
    for t_, m, _ in grasp.estimates:
        times += [t_ - blend, t_]
        masses += [masses[-1], m]
    times.append(float(rec.t[-1]))
    masses.append(masses[-1])
    ax[1].plot(times, masses, color="C3", lw=1.2, label="payload in the node's model (estimated, blended in)")
    com = [(t_, 100 * c[2]) for t_, m, c in grasp.estimates if m > 0]
    if com:
        twin = ax[1].twinx()
        twin.plot(*zip(*com, strict=True), "o", color="C0", ms=3, label="estimated centre of mass z")
        twin.axhline(100 * OBJECT.com[2], color="C0", lw=0.6, ls="--")
        twin.set_ylabel("centre of mass z (cm)", color="C0")
        twin.set_ylim(0, 10)
        twin.legend(loc="center right", fontsize=8)
    ax[1].set_ylabel("payload mass (kg)")
    ax[2].plot(rec.t, rec.applied if rec.applied is not None else np.zeros_like(rec.t), lw=0.6)
    ax[2].set_ylabel("applied effort (N m)")
    ax[2].set_xlabel("t (s)")
    for a in ax:
        for x in (PULSE_AT, GRASP_AT, RELEASE_AT):
            a.axvline(x, color="0.3", lw=0.6, ls=":")
        a.set_xlim(START, END)
    for x, name in ((PULSE_AT, "collision pulse"), (GRASP_AT, "grasp"), (RELEASE_AT, "release")):
        ax[0].annotate(
            name, (x, 1.0), xycoords=("data", "axes fraction"), va="bottom", ha="center", fontsize=8
        )
    ax[0].legend(loc="upper right", fontsize=8)
    ax[1].legend(loc="upper left", fontsize=8)
    fig.suptitle(title)
    return save_figure(fig, path)


# --- main -----------------------------------------------------------------------------------


def argument_parser() -> argparse.ArgumentParser:
    parser = demo_parser("--payload", __doc__)
    parser.add_argument("--lockstep", action="store_true", help="each physics step waits for its command")
    parser.add_argument(
        "--minutes", type=float, default=10.0, help="simulated minutes of the free run (0: none)"
    )
    parser.add_argument("--no-off", dest="off", action="store_false", help="skip the run with estimation off")
    add_output_options(parser, "the plot and logs")
    add_ros_options(parser, 3600.0)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = argument_parser().parse_args(argv)
    cast(io.TextIOWrapper, sys.stdout).reconfigure(line_buffering=True)
    os.environ["ROS_DOMAIN_ID"] = str(args.domain_id)
    os.environ["ROS_LOCALHOST_ONLY"] = "1"
    out = Path(args.out)
    c = config(args.lockstep)
    mode = "lock-step" if args.lockstep else "real time"
    print(
        f"payload demo ({mode}): Panda, {OBJECT.mass:g} kg welded to the hand at {GRASP_AT:g} s, "
        f"released at {RELEASE_AT:g} s"
    )
    figures: dict[str, Any] = {"mode": mode}
    started = time.monotonic()
    schedule = Schedule(GRASP_AT, RELEASE_AT, PULSE_AT)
    try:
        print("  grasp run, payload.estimation: auto")
        grasp = run(c, out, "auto", schedule, 0.0, args.timeout)
        figures["grasp"] = grasp_figures(grasp)
        figures["estimates"] = [(t, m, com.tolist()) for t, m, com in grasp.estimates]
        off = None
        if args.off:
            print("  the same, payload.estimation: off")
            off = run(c, out, "off", Schedule(GRASP_AT, RELEASE_AT), 0.0, args.timeout)
            figures["off"] = off_figures(off, figures["grasp"]["pre_grasp_level"])
        if args.minutes > 0:
            print(f"  free run: {args.minutes:g} simulated minutes of multi-sines, no grasp")
            free = run(c, out, "auto", Schedule(), args.minutes, args.timeout)
            figures["free"] = {
                "stopped": free.stopped,
                "seconds": free.seconds,
                "estimates": len(free.estimates),
                "refusals": int(free.status.get("refusals", "0")),
                "collisions_ignored": int(free.status.get("collisions_ignored", "0")),
                "peak_ratio": free.peak_ratio,
                "peak_at": free.peak_at[0],
                "peak_per_joint": free.peak_at[1],
            }
    except RealTimeLost as exc:
        print(f"demo stopped: {exc}", file=sys.stderr)
        if args.json:
            write_json(args.json, {"stopped": str(exc)})
        return REAL_TIME_LOST
    except (KeyboardInterrupt, RuntimeError, TimeoutError) as exc:
        return ended(exc, "payload demo", args.json)
    failed = missed(figures)
    figures["failed"] = failed
    figures["wall_seconds"] = time.monotonic() - started
    print(f"\n{table(figures)}\n")
    print(f"({figures['wall_seconds']:.0f} s wall clock)")
    print("targets: " + ("all met" if not failed else "MISSED\n  " + "\n  ".join(failed)))
    if args.json:
        write_json(args.json, figures)
    if args.plot:
        path = plot(
            grasp,
            off,
            out / "payload_demo.png",
            f"Panda: a {OBJECT.mass:g} kg object grasped and released ({mode})",
        )
        print(f"plot: {path.resolve()}")
    if figures.get("free", {}).get("stopped"):
        return REAL_TIME_LOST
    return MISSED if failed else OK


if __name__ == "__main__":
    sys.exit(main())
