"""Identification on a simulated Panda that is not its URDF (offline, in-process, no ROS).

The plant is MuJoCo compiling a modified Panda URDF (`rnea_ros.sim.mujoco_arm`): every link's
mass and rotational inertia scaled by its own factor in [0.8, 1.2] (seeded; a positive scale keeps
each inertial physical), fingers fixed, and per joint a viscous damping, a Coulomb friction
(MuJoCo `frictionloss`, a dry-friction constraint, not rnea_ros's tanh) and an armature that the
URDF lacks. A computed-torque + PD controller built on the URDF model tracks a seeded multi-sine
(`rnea_ros.identification.excitation.design`) at 1 kHz; we record q, q̇ and the applied τ, add sensor noise,
and identify with `rnea_ros.identification.fit` from positions and efforts only (q̇, q̈ by zero-phase
filtering and differences).

Two runs, as one would on the robot: run A without load identifies inertials, friction and
armature; run B with a 1.5 kg payload on panda_hand (com offset from the flange) identifies the
payload with run A's model held. Each run is fitted on its first 70 % and validated on the rest.

Targets: held-out torque RMS of the identified model ≤ 10 % of the URDF model's on joints 1-6
(runs A and B), payload mass within 5 % and com within 1 cm, viscous and Coulomb coefficients
within 10 %. Prints a table, optionally writes JSON; exit status 1 when a target is missed.

    python bench/identify_mismatch.py [--seed 0] [--duration 60] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import sys
import time

import numpy as np

from rnea_ros import Friction, RobotModel, friction_torques, rnea
from rnea_ros.identification.excitation import ExcitationOptions, MultiSine, design
from rnea_ros.identification.fit import FitOptions, Identification, identify
from rnea_ros.identification.prediction import predict
from rnea_ros.identification.regressor import standard_parameters
from rnea_ros.identification.signals import Samples, prepare
from rnea_ros.model.example_robots import example_urdf_path
from rnea_ros.sim.mujoco_arm import MujocoArm
from rnea_ros.sim.plant import PAYLOAD_COM, PAYLOAD_MASS, Plant, make_plant

TIP = "panda_hand"
HOME = np.array([0.0, -0.2, 0.0, -1.8, 0.0, 1.7, 0.6])  # rad, inside every limit


def plant_of(urdf: str, seed: int, payload: bool) -> Plant:
    """The seeded Panda plant (rnea_ros.sim.plant), fingers fixed, the payload on TIP or none."""
    return make_plant(urdf, seed, payload_link=TIP if payload else "", fix_fingers=True)


def excitation(model: RobotModel, seed: int, duration: float) -> MultiSine:
    """A seeded multi-sine around HOME within the URDF limits (90 % of the velocity limits)."""
    return design(
        HOME,
        model.position_lower,
        model.position_upper,
        model.velocity_limit,
        acceleration_limit=20.0,
        options=ExcitationOptions(
            duration=duration,
            ramp=2.0,
            components=5,
            frequency_range=(0.1, 0.6),
            max_amplitude=1.5,
            position_margin=0.15,
            velocity_scale=0.9,
            seed=seed,
        ),
    )


KP = np.array([2000.0, 2000.0, 2000.0, 2000.0, 500.0, 500.0, 200.0])  # N m/rad
KD = np.array([100.0, 100.0, 60.0, 60.0, 15.0, 15.0, 6.0])  # N m s/rad


def simulate(
    plant: Plant, model: RobotModel, trajectory: MultiSine, friction_timeconst: float | None = None
) -> dict:
    """Track `trajectory` at 1 kHz with the URDF `model`'s inverse dynamics along it (computed
    torque feedforward, URDF friction) plus a joint PD (KP, KD). `friction_timeconst` (s) is the
    softness of MuJoCo's frictionloss constraint (None: MuJoCo's 0.02 s). Returns t (s), q, qd, tau
    (applied), q_des, all (N, n) in joint order."""
    arm = MujocoArm(plant.urdf, timestep=1e-3, coulomb="frictionloss")  # the dry-friction constraint
    if arm.joint_names != model.joint_names:
        raise RuntimeError(f"joint order differs: {arm.joint_names} vs {model.joint_names}")
    arm.model.dof_armature[:] = plant.armature
    if friction_timeconst is not None:
        arm.model.dof_solref[:, 0] = friction_timeconst
    arm.reset(dict(zip(model.joint_names, HOME, strict=True)))
    steps = int(round(trajectory.duration / arm.timestep))
    t = np.arange(steps) * arm.timestep
    q_des, qd_des, qdd_des = trajectory.sample(t)
    feedforward = rnea(model, q_des, qd_des, qdd_des) + friction_torques(Friction.from_model(model), qd_des)
    out = {k: np.empty((steps, model.nv)) for k in ("q", "qd", "tau")}
    d = arm.data
    for k in range(steps):
        q, qd = d.qpos.copy(), d.qvel.copy()
        tau = feedforward[k] + KP * (q_des[k] - q) + KD * (qd_des[k] - qd)
        out["q"][k], out["qd"][k], out["tau"][k] = q, qd, tau
        arm.step(tau)
    out["t"], out["q_des"] = t, q_des
    return out


def samples_of(
    run: dict,
    rng: np.random.Generator,
    q_noise: float,
    tau_noise: float,
    cutoff: float,
    use_velocity: bool,
    decimate: int,
) -> Samples:
    """Noisy measurements → identification samples (positions and efforts; q̇ only if use_velocity)."""
    q = run["q"] + rng.normal(0, q_noise, run["q"].shape)
    tau = run["tau"] + rng.normal(0, tau_noise, run["tau"].shape)
    qd = run["qd"] if use_velocity else None
    s = prepare(run["t"], q, tau, qd=qd, cutoff=cutoff)
    return s.part(slice(0, len(s), decimate))


def validation_rms(model: RobotModel, pi: np.ndarray, part: Samples, min_speed: float = 0.0) -> np.ndarray:
    """Per-joint RMS of τ − Y π on `part`, over the samples where |q̇_j| ≥ min_speed."""
    keep = np.abs(part.qd) >= min_speed
    residual = part.tau - predict(model, part, pi)
    return np.sqrt(np.sum(np.where(keep, residual, 0.0) ** 2, axis=0) / np.maximum(keep.sum(0), 1))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seed", type=int, default=0, help="plant, trajectories and noise")
    ap.add_argument("--duration", type=float, default=60.0, help="s per run")
    ap.add_argument(
        "--cutoff", type=float, default=15.0, help="Hz, zero-phase low-pass before differentiating"
    )
    ap.add_argument("--q-noise", type=float, default=1e-5, help="rad, std of the position noise")
    ap.add_argument("--tau-noise", type=float, default=0.05, help="N m, std of the effort noise")
    ap.add_argument("--use-velocity", action="store_true", help="use the simulator's q̇ instead of d q / dt")
    ap.add_argument(
        "--friction-timeconst",
        type=float,
        default=0.002,
        help="s, softness of MuJoCo's frictionloss constraint (0: MuJoCo's default 0.02)",
    )
    ap.add_argument(
        "--min-speed", type=float, default=0.05, help="rad/s, rows slower than this are not fitted"
    )
    ap.add_argument("--decimate", type=int, default=2, help="keep every k-th sample after filtering")
    ap.add_argument("--json", help="write the numbers here")
    args = ap.parse_args(argv)

    urdf = example_urdf_path("panda").read_text()
    model = RobotModel.from_urdf(urdf, tip_link=TIP)
    rng = np.random.default_rng(args.seed + 1000)
    opts = (args.q_noise, args.tau_noise, args.cutoff, args.use_velocity, args.decimate)
    clock = time.perf_counter()

    # run A: no load → inertials, friction, armature
    plant_a = plant_of(urdf, args.seed, payload=False)
    tc = args.friction_timeconst or None
    run_a = simulate(plant_a, model, excitation(model, args.seed, args.duration), tc)
    samples_a = samples_of(run_a, rng, *opts)
    sim_seconds = time.perf_counter() - clock
    res_a: Identification = identify(
        model, samples_a, ("inertial", "friction"), FitOptions(split=0.7, min_speed=args.min_speed)
    )
    # run B: the same robot with the payload → payload, run A's model held
    plant_b = plant_of(urdf, args.seed, payload=True)
    run_b = simulate(plant_b, model, excitation(model, args.seed + 1, args.duration), tc)
    samples_b = samples_of(run_b, rng, *opts)
    payload_options = FitOptions(payload_link=TIP, split=0.7, min_speed=args.min_speed)
    res_b = identify(res_a.model, samples_b, ("payload",), payload_options)
    total = time.perf_counter() - clock

    valid_b = samples_b.part(slice(res_b.train_samples, len(samples_b)))
    rms_urdf_b = validation_rms(model, standard_parameters(model), valid_b)
    rms_id_b = res_b.rms_identified
    ratio_a = res_a.rms_identified / res_a.rms_model
    ratio_b = rms_id_b / rms_urdf_b
    # the same on the moving samples only (|q̇| ≥ min_speed): dry friction's sticking excluded
    valid_a = samples_a.part(slice(res_a.train_samples, len(samples_a)))
    pi_urdf = standard_parameters(model)
    moving_a = validation_rms(model, res_a.parameters, valid_a, args.min_speed) / validation_rms(
        model, pi_urdf, valid_a, args.min_speed
    )
    slow_a = np.mean(np.abs(valid_a.qd) < args.min_speed, axis=0)
    visc_err = (res_a.viscous - plant_a.damping) / plant_a.damping
    coul_err = (res_a.coulomb - plant_a.coulomb) / plant_a.coulomb
    p = res_b.payload
    mass_err = (p.mass - PAYLOAD_MASS) / PAYLOAD_MASS
    com_err = float(np.linalg.norm(p.com - PAYLOAD_COM))
    track = np.degrees(np.sqrt(np.mean((run_a["q"] - run_a["q_des"]) ** 2, axis=0)))

    n = model.nv
    print(
        f"Panda plant (seed {args.seed}), {args.duration:g} s per run at 1 kHz, "
        f"noise q {args.q_noise:g} rad, "
        f"tau {args.tau_noise:g} N m, cutoff {args.cutoff:g} Hz, "
        f"{'recorded' if args.use_velocity else 'differentiated'} velocity"
    )
    print(
        f"{'joint':<13}| run A RMS N m: URDF  ident  ratio | run B: URDF  ident  ratio |"
        f" viscous true  ident  err | coulomb true  ident  err | armature true ident | track deg"
    )
    for j in range(n):
        print(
            f"{model.joint_names[j]:<13}| {res_a.rms_model[j]:>16.3f} {res_a.rms_identified[j]:>6.3f}"
            f" {ratio_a[j]:>6.3f} |"
            f" {rms_urdf_b[j]:>11.3f} {rms_id_b[j]:>6.3f} {ratio_b[j]:>6.3f} |"
            f" {plant_a.damping[j]:>12.3f} {res_a.viscous[j]:>6.3f} {100 * visc_err[j]:>+4.1f}% |"
            f" {plant_a.coulomb[j]:>12.3f} {res_a.coulomb[j]:>6.3f} {100 * coul_err[j]:>+4.1f}% |"
            f" {plant_a.armature[j]:>13.3f} {res_a.armature[j]:>5.3f} | {track[j]:>9.3f}"
        )
    print(
        "run A ratio on moving samples (|qd| >= min_speed): "
        + " ".join(f"{x:.3f}" for x in moving_a)
        + f"; fraction of held-out samples slower: {' '.join(f'{x:.2f}' for x in slow_a)}"
    )
    print(
        f"payload: mass {p.mass:.4f} kg (true {PAYLOAD_MASS}, {100 * mass_err:+.2f} %), com "
        f"{np.array2string(p.com, precision=4)} m (true {PAYLOAD_COM}, error {1000 * com_err:.2f} mm)"
    )
    print(
        f"run A: base regressor rank {res_a.rank} of {res_a.free}, "
        f"condition number {res_a.condition_number:.3g}; "
        f"bodies physically consistent: {all(c.ok for c in res_a.consistency)}; notes: {res_a.notes}"
    )
    print(
        f"run B: condition number {res_b.condition_number:.3g}; "
        f"samples {res_a.train_samples}+{res_a.validation_samples} (A), "
        f"{res_b.train_samples}+{res_b.validation_samples} (B); "
        f"time {total:.1f} s ({sim_seconds:.1f} s simulating A)"
    )

    checks = {
        "RMS ratio run A joints 1-6 <= 0.10": bool(np.all(ratio_a[:6] <= 0.10)),
        "RMS ratio run B joints 1-6 <= 0.10": bool(np.all(ratio_b[:6] <= 0.10)),
        "payload mass within 5 %": abs(mass_err) <= 0.05,
        "payload com within 1 cm": com_err <= 0.01,
        "viscous within 10 %": bool(np.all(np.abs(visc_err) <= 0.10)),
        "coulomb within 10 %": bool(np.all(np.abs(coul_err) <= 0.10)),
    }
    for name, ok in checks.items():
        print(f"{'ok  ' if ok else 'MISS'} {name}")
    if args.json:
        numbers = {
            "args": vars(args),
            "joints": list(model.joint_names),
            "run_a": {
                **res_a.to_dict(),
                "ratio": ratio_a.tolist(),
                "ratio_moving": moving_a.tolist(),
                "slow_fraction": slow_a.tolist(),
            },
            "run_b": {**res_b.to_dict(), "rms_urdf": rms_urdf_b.tolist(), "ratio": ratio_b.tolist()},
            "truth": {
                "damping": plant_a.damping.tolist(),
                "coulomb": plant_a.coulomb.tolist(),
                "armature": plant_a.armature.tolist(),
                "payload_mass": PAYLOAD_MASS,
                "payload_com": PAYLOAD_COM.tolist(),
            },
            "errors": {
                "viscous_rel": visc_err.tolist(),
                "coulomb_rel": coul_err.tolist(),
                "payload_mass_rel": mass_err,
                "payload_com_m": com_err,
            },
            "checks": checks,
        }
        with open(args.json, "w") as f:
            json.dump(numbers, f, indent=2)
    return 0 if all(checks.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
