"""`python -m rnea_ros.demo --ship-deck`: a Panda on a ship deck that rolls, pitches and heaves,
in MuJoCo, in one process (no ROS): the node's effort law with gravity from the deck's IMU.

The plant: the Panda (example-robot-data) bolted 3 m above the deck's roll and pitch axes, the
deck (a massive body on heave, roll and pitch joints) driven along a prescribed sea state:
heave 1 m at 0.25 Hz (±2.5 m/s²), roll 4° at 0.12 Hz, pitch 2.5° at 0.2 Hz, faded in over the
first RAMP s. An IMU link is fixed to panda_link0 (offset and rotated, as a real mounting is);
MuJoCo's own accelerometer, gyro and framequat sensors on a site there are the IMU. The arm's
plant has the URDF's viscous damping, no dry friction; the gripper is held by its own servo.

The controller (1 kHz, lock-step, the state and the IMU of the step before): the package's
effort law (rnea_ros.control.effort_law, the node's) for the 7 arm joints with the demo's PD gains
(rnea_ros.sim.scenario.gains, 2 Hz), in four cases:
1. PD alone (no model term);
2. PD + gravity, Coriolis and inertia with `gravity_source: parameter` (fixed (0, 0, −9.81));
3. PD + the same with `imu_orientation`: the tilt from the IMU's orientation, no heave;
4. PD + the same with `imu_acceleration`: −(specific force) with the lever arm, low-passed at
   CUTOFF Hz (rnea_ros.estimation.base_gravity, as the node computes it from ~/imu).

Each case holds the home pose for HOLD s (posture drift: the largest |q − home| of any joint
after RAMP), then tracks a multi-sine for TRACK s (tracking RMS over joints and time). Targets
(issue 23): drift and tracking RMS with imu_acceleration at most 0.1 × PD alone, and no fall
(every joint within FALL rad of its target, finite).

Units: rad, m, s, m/s², N m. Frames: world z up; the root is panda_link0.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import mujoco
import numpy as np

from rnea_ros.control.effort_law import EffortLaw, Efforts, compute_efforts
from rnea_ros.estimation.base_gravity import BaseGravity, imu_mount
from rnea_ros.friction.model import Friction
from rnea_ros.model.example_robots import example_urdf_path
from rnea_ros.model.robot_model import RobotModel
from rnea_ros.sim.cli import MISSED, OK, add_output_options, demo_parser, save_figure, write_json
from rnea_ros.sim.mujoco_arm import mujoco_urdf
from rnea_ros.sim.scenario import PANDA_ARM, PANDA_HOME, gains, multisine

IMU_LINK = "imu_link"
IMU_XYZ, IMU_RPY = (0.1, -0.05, 0.02), (0.0, 0.3, math.pi / 2)
DECK_HEIGHT = 3.0  # m, panda_link0 above the roll and pitch axes
HEAVE, ROLL, PITCH = (1.0, 0.25), (math.radians(4.0), 0.12), (math.radians(2.5), 0.2)  # (amplitude, Hz)
DECK = ("deck_heave", "deck_roll", "deck_pitch")
RAMP = 2.0  # s, the sea state fades in
HOLD, TRACK = 30.0, 30.0  # s
CUTOFF = 5.0  # Hz, low-pass of imu_acceleration
FALL = 0.5  # rad from the target: fallen
TIMESTEP = 1e-3
CASES = ("pd", "parameter", "imu_orientation", "imu_acceleration")
LABELS = {
    "pd": "PD alone",
    "parameter": "PD + node, gravity_source: parameter",
    "imu_orientation": "PD + node, gravity_source: imu_orientation",
    "imu_acceleration": "PD + node, gravity_source: imu_acceleration",
}
TARGET_RATIO = 0.1  # imu_acceleration / PD alone, drift and tracking RMS


def panda_with_imu(panda: str) -> str:
    """The Panda URDF with IMU_LINK fixed to panda_link0 at IMU_XYZ, IMU_RPY."""
    imu = (
        f'<link name="{IMU_LINK}"/><joint name="imu_mount" type="fixed"><parent link="panda_link0"/>'
        f'<child link="{IMU_LINK}"/><origin xyz="{" ".join(map(str, IMU_XYZ))}" '
        f'rpy="{" ".join(map(str, IMU_RPY))}"/></joint>'
    )
    return panda.replace("</robot>", imu + "</robot>")


def _deck_urdf(arm_urdf: str) -> str:
    """The arm's URDF on a deck with heave (z), roll (x) and pitch (y) joints below its root."""
    inertia = '<inertia ixx="{0}" iyy="{0}" izz="{0}" ixy="0" ixz="0" iyz="0"/>'
    links = "".join(
        f'<link name="{name}"><inertial><mass value="{mass}"/>{inertia.format(mass)}</inertial></link>'
        for name, mass in (("deck_heave", 2000), ("deck_roll", 2000), ("deck", 20000))
    )
    joints = "".join(
        f'<joint name="{name}" type="{kind}"><parent link="{parent}"/><child link="{child}"/>'
        f'<axis xyz="{axis}"/><limit lower="-{lim}" upper="{lim}" effort="1e9" velocity="100"/></joint>'
        for name, kind, parent, child, axis, lim in (
            ("deck_heave", "prismatic", "sea", "deck_heave", "0 0 1", 5),
            ("deck_roll", "revolute", "deck_heave", "deck_roll", "1 0 0", 0.5),
            ("deck_pitch", "revolute", "deck_roll", "deck", "0 1 0", 0.5),
        )
    )
    mount = (
        '<joint name="deck_mount" type="fixed"><parent link="deck"/><child link="panda_link0"/>'
        f'<origin xyz="0 0 {DECK_HEIGHT}"/></joint>'
    )
    return arm_urdf.replace("</robot>", f'<link name="sea"/>{links}{joints}{mount}</robot>')


def ship_model(arm_urdf: str) -> mujoco.MjModel:
    """MuJoCo's model of the deck and the arm with the IMU site and its three sensors (acc, gyro, quat)."""
    spec = mujoco.MjSpec.from_string(mujoco_urdf(_deck_urdf(arm_urdf)))
    spec.body(IMU_LINK).add_site(name="imu")
    site = mujoco.mjtObj.mjOBJ_SITE
    for name, kind in (
        ("acc", mujoco.mjtSensor.mjSENS_ACCELEROMETER),
        ("gyro", mujoco.mjtSensor.mjSENS_GYRO),
        ("quat", mujoco.mjtSensor.mjSENS_FRAMEQUAT),
    ):
        spec.add_sensor(name=name, type=kind, objtype=site, objname="imu")
    m = spec.compile()
    m.opt.timestep = TIMESTEP
    m.opt.integrator = mujoco.mjtIntegrator.mjINT_IMPLICITFAST
    return m


def sea_state(t: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Deck (heave m, roll rad, pitch rad): position, velocity, acceleration at t, faded in over
    RAMP s by e(t) = (1 − cos(π t / RAMP)) / 2."""
    if t < RAMP:
        e = 0.5 * (1 - math.cos(math.pi * t / RAMP))
        de = 0.5 * math.pi / RAMP * math.sin(math.pi * t / RAMP)
        dde = 0.5 * (math.pi / RAMP) ** 2 * math.cos(math.pi * t / RAMP)
    else:
        e, de, dde = 1.0, 0.0, 0.0
    x, v, a = np.zeros(3), np.zeros(3), np.zeros(3)
    for i, ((amp, hz), phase) in enumerate(zip((HEAVE, ROLL, PITCH), (0.0, 0.7, 1.9), strict=True)):
        w = 2 * math.pi * hz
        s, c = amp * math.sin(w * t + phase), amp * w * math.cos(w * t + phase)
        x[i] = e * s
        v[i] = de * s + e * c
        a[i] = dde * s + 2 * de * c - e * w * w * s
    return x, v, a


@dataclass
class Run:
    """One case: times, arm q and its target, the gravity the law used (root frame) and the truth."""

    t: np.ndarray
    q: np.ndarray  # (N, 7)
    target: np.ndarray  # (N, 7)
    gravity: np.ndarray  # (N, 3) used by the law (NaN for PD alone)
    true_gravity: np.ndarray  # (N, 3) g − a of the root origin, root frame (MuJoCo)


def simulate(case: str, hold: float = HOLD, track: float = TRACK, seed: int = 0) -> Run:
    """One case of the module docstring, HOLD then TRACK s."""
    if case not in CASES:
        raise ValueError(f"case must be one of {CASES}, got '{case}'")
    urdf = panda_with_imu(example_urdf_path("panda").read_text())
    model = RobotModel.from_urdf(urdf)
    m = ship_model(urdf)
    d = mujoco.MjData(m)
    names = [mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_JOINT, j) for j in range(m.njnt)]
    deck = [names.index(j) for j in DECK]
    arm_sim = [names.index(j) for j in model.joint_names]  # model order in MuJoCo's dofs
    chain = [model.joint_index(j) for j in PANDA_ARM]
    fingers = [i for i in range(model.nv) if i not in chain]
    home = np.array([PANDA_HOME.get(j, 0.0) for j in model.joint_names])
    kp, kd = np.zeros(model.nv), np.zeros(model.nv)
    kp[chain], kd[chain] = gains(model, PANDA_HOME, PANDA_ARM)
    terms = frozenset() if case == "pd" else frozenset(("gravity", "coriolis", "inertia"))
    law = EffortLaw(compensate=terms, kp=kp, kd=kd, friction=Friction.from_model(model))
    efforts = Efforts(model, law)
    estimator = None
    if case.startswith("imu_"):
        source = "orientation" if case == "imu_orientation" else "specific_force"
        estimator = BaseGravity(imu_mount(model, IMU_LINK), source, CUTOFF)
    root = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_BODY, "panda_link0")
    x0, v0, _ = sea_state(0.0)
    d.qpos[deck], d.qvel[deck] = x0, v0
    d.qpos[arm_sim] = home
    full_m = np.zeros((m.nv, m.nv))
    mujoco.mj_forward(m, d)  # then again with the deck held: the sensors' first sample is not free fall
    mujoco.mj_fullM(m, d, full_m)
    d.qfrc_applied[deck] = full_m[np.ix_(deck, deck)] @ sea_state(0.0)[2] + d.qfrc_bias[deck]
    mujoco.mj_forward(m, d)
    motion = multisine(model, chain, home[chain], 3.0, track, min(2.0, track / 4), seed)
    steps = int(round((hold + track) / TIMESTEP))
    n_hold = int(round(hold / TIMESTEP))
    samples = motion.sample(np.arange(steps - n_hold) * TIMESTEP)
    t = np.zeros(steps)
    q, target = np.zeros((steps, len(chain))), np.zeros((steps, len(chain)))
    used, truth = np.full((steps, 3), np.nan), np.zeros((steps, 3))
    acc6 = np.zeros(6)
    zeros = np.zeros(model.nv)
    for k in range(steps):
        now = d.time
        q_meas, qd_meas = d.qpos[arm_sim].copy(), d.qvel[arm_sim].copy()
        q_des, qd_des, qdd_des = home.copy(), zeros.copy(), zeros.copy()
        if k >= n_hold:
            i = k - n_hold
            q_des[chain], qd_des[chain], qdd_des[chain] = samples[0][i], samples[1][i], samples[2][i]
        if estimator is not None:  # MuJoCo's sensors of the step that just ended
            acc, gyro, wxyz = d.sensordata[0:3], d.sensordata[3:6], d.sensordata[6:10]
            if estimator.source == "orientation":
                g = estimator.update(now, orientation=(wxyz[1], wxyz[2], wxyz[3], wxyz[0]))
            else:
                g = estimator.update(now, specific_force=acc, angular_velocity=gyro)
            efforts.set_gravity(g)
        if case != "pd":
            used[k] = efforts.gravity
        compute_efforts(efforts, q_meas, qd_meas, (q_des, qd_des, qdd_des), t=now)
        tau = np.zeros(m.nv)
        tau[[arm_sim[i] for i in chain]] = efforts.total[chain]
        for i in fingers:  # the gripper's own servo
            j = arm_sim[i]
            tau[j] = 200.0 * (home[i] - d.qpos[j]) - 2.0 * d.qvel[j]
        # the deck follows the sea state: its rows of M q̈ + bias, with a stiff PD on the error
        x, v, a = sea_state(now)
        mujoco.mj_fullM(m, d, full_m)
        a_cmd = a + 400.0 * (x - d.qpos[deck]) + 40.0 * (v - d.qvel[deck])
        tau[deck] = full_m[np.ix_(deck, deck)] @ a_cmd + d.qfrc_bias[deck]
        d.qfrc_applied[:] = tau
        t[k], q[k], target[k] = now, q_meas[chain], q_des[chain]
        mujoco.mj_objectAcceleration(m, d, mujoco.mjtObj.mjOBJ_XBODY, root, acc6, 0)
        truth[k] = -d.xmat[root].reshape(3, 3).T @ acc6[3:]  # g − a of the root origin, root axes
        mujoco.mj_step(m, d)
        if not np.all(np.isfinite(d.qpos)):
            return Run(t[: k + 1], q[: k + 1], target[: k + 1], used[: k + 1], truth[: k + 1])
    return Run(t, q, target, used, truth)


def figures(run: Run, hold: float = HOLD) -> dict:
    """Posture drift (max |q − home| after RAMP, hold phase, rad), tracking RMS (rad), fallen, and
    the RMS error of the law's gravity against MuJoCo's root acceleration (m/s²)."""
    error = run.q - run.target
    holding = (run.t >= RAMP) & (run.t < hold)
    tracking = run.t >= hold
    gravity_error = run.gravity - run.true_gravity
    finite = bool(np.isfinite(run.q).all()) and len(run.t) > 0
    return {
        "drift": float(np.abs(error[holding]).max()) if holding.any() else math.inf,
        "tracking_rms": float(np.sqrt(np.mean(error[tracking] ** 2))) if tracking.any() else math.inf,
        "fallen": (not finite) or bool(np.abs(error).max() > FALL),
        "gravity_rms": float(np.sqrt(np.nanmean(np.sum(gravity_error[run.t >= RAMP] ** 2, axis=1))))
        if np.isfinite(run.gravity).any()
        else math.nan,
        "seconds": float(run.t[-1]) if len(run.t) else 0.0,
    }


def run(hold: float = HOLD, track: float = TRACK, seed: int = 0) -> tuple[dict, dict[str, Run]]:
    """Every case; (figures by case with the ratios to PD alone, runs by case)."""
    runs = {case: simulate(case, hold, track, seed) for case in CASES}
    out: dict = {case: figures(r, hold) for case, r in runs.items()}
    base = out["pd"]
    for case in CASES:
        out[case]["drift_ratio"] = out[case]["drift"] / base["drift"]
        out[case]["tracking_ratio"] = out[case]["tracking_rms"] / base["tracking_rms"]
    truth = runs["pd"].true_gravity[runs["pd"].t >= RAMP]
    size = np.linalg.norm(truth, axis=1)
    tilt = np.degrees(np.arccos(np.clip(-truth[:, 2] / size, -1.0, 1.0)))
    out["sea"] = {
        "effective_gravity_range": [float(size.min()), float(size.max())],
        "tilt_peak_deg": float(tilt.max()),
    }
    return out, runs


def met(out: dict) -> bool:
    imu = out["imu_acceleration"]
    return (
        imu["drift_ratio"] <= TARGET_RATIO
        and imu["tracking_ratio"] <= TARGET_RATIO
        and not any(out[c]["fallen"] for c in CASES)
    )


def table(out: dict) -> str:
    rows = [
        ("case", "drift (deg)", "tracking RMS (deg)", "x PD drift", "x PD RMS", "gravity RMS err", "fell")
    ]
    for case in CASES:
        f = out[case]
        rows.append(
            (
                LABELS[case],
                f"{math.degrees(f['drift']):.3f}",
                f"{math.degrees(f['tracking_rms']):.3f}",
                f"{f['drift_ratio']:.3f}",
                f"{f['tracking_ratio']:.3f}",
                "" if math.isnan(f["gravity_rms"]) else f"{f['gravity_rms']:.3f} m/s^2",
                "YES" if f["fallen"] else "no",
            )
        )
    width = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, width, strict=True)) for r in rows]
    sea = out["sea"]
    lines.append(
        f"sea state: |g - a| at the arm's root {sea['effective_gravity_range'][0]:.2f} to "
        f"{sea['effective_gravity_range'][1]:.2f} m/s^2, up to {sea['tilt_peak_deg']:.1f} deg off "
        "the root's -z"
    )
    lines.append(
        f"target: imu_acceleration drift and tracking RMS <= {TARGET_RATIO:g} x PD alone, no fall: "
        + ("met" if met(out) else "NOT met")
    )
    return "\n".join(lines)


def plot(out: dict, runs: dict[str, Run], path: Path, hold: float = HOLD) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(3, 1, figsize=(13, 9), sharex=True)  # the legends right of the panels
    pd_run = runs["pd"]
    ax = axes[0]
    for i, name in enumerate("xyz"):
        ax.plot(pd_run.t, pd_run.true_gravity[:, i], f"C{i}", lw=1.0, label=f"true g - a, {name} (MuJoCo)")
        ax.plot(
            runs["imu_acceleration"].t, runs["imu_acceleration"].gravity[:, i], f"C{i}--", lw=0.8,
            label=f"imu_acceleration, {name}",
        )  # fmt: skip
    ax.set_ylabel("root-frame gravity (m/s²)")
    ax.set_title("Panda on a ship deck: heave 1 m at 0.25 Hz, roll 4° at 0.12 Hz, pitch 2.5° at 0.2 Hz")
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    for ax, (lo, hi), what in ((axes[1], (0.0, hold), "hold"), (axes[2], (hold, np.inf), "track")):
        for k, case in enumerate(CASES):
            r = runs[case]
            mask = (r.t >= lo) & (r.t < hi)
            err = np.degrees(np.abs(r.q - r.target).max(axis=1))
            ax.plot(r.t[mask], err[mask], f"C{k}", lw=0.8, label=LABELS[case])
        ax.set_yscale("log")
        ax.set_ylim(bottom=1e-2)
        ax.set_ylabel(f"max |q - q_target| (deg), {what}")
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    axes[2].set_xlabel("t (s)")
    save_figure(fig, path)


def argument_parser() -> argparse.ArgumentParser:
    parser = demo_parser("--ship-deck", __doc__)
    parser.add_argument("--hold", type=float, default=HOLD, help=f"hold phase, s (default {HOLD:g})")
    parser.add_argument("--track", type=float, default=TRACK, help=f"tracking phase, s (default {TRACK:g})")
    add_output_options(parser)
    parser.add_argument("--seed", type=int, default=0)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = argument_parser().parse_args(argv)
    start = time.monotonic()
    out, runs = run(args.hold, args.track, args.seed)
    print(table(out))
    print(f"({time.monotonic() - start:.0f} s wall clock)")
    if args.plot:
        Path(args.out).mkdir(parents=True, exist_ok=True)
        path = Path(args.out) / "ship_deck.png"
        plot(out, runs, path, args.hold)
        print(f"plot: {path}")
    if args.json:
        write_json(args.json, out)
    return OK if met(out) else MISSED


if __name__ == "__main__":
    sys.exit(main())
