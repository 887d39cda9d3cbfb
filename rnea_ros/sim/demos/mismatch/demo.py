"""Closed-loop demo on a robot that is not its URDF: record, identify, track (`--mismatch`).

    python -m rnea_ros.demo --mismatch [--seed 0] [--record 40] [--track 15] [--out out] [--no-plot]
        [--plant MJCF [--urdf URDF] [--plant-joints URDF_JOINT=PLANT_JOINT ...]]

The plant is MuJoCo compiling the Panda URDF changed by `rnea_ros.sim.plant` (seeded): every
link's mass and inertia off by up to ±20 %, Coulomb friction 0.5–2 N m, viscous friction and
armature the URDF lacks; for run B and the tracking runs the same robot carries a 1.5 kg tool on
panda_hand with its com off the flange. The nodes (`mujoco_sim` with that plant,
`inverse_dynamics`, `multisine_trajectory`) run as separate processes over real DDS, lock-step by
default, with the same PD gains (`feedback.kp/kd`) in every run, each from rest at the same pose:

1. run A, no load: the node with the URDF model tracks a seeded excitation (`--record` s,
   config/excitation.yaml); joint_states (position, velocity, applied effort) go to a rosbag2;
   `identify` fits inertials, friction and armature of the chain up to panda_hand, validated on
   the last 30 % (`out/mismatch/identified.yaml`, `identified.urdf`, `report_A/`);
2. run B, the tool on: the node runs run A's model, another excitation is recorded, `identify`
   fits the payload alone with run A's model held (`payload.yaml`, `report_B/`);
3. the same test multi-sine (`--track` s) tracked with the tool on, by the URDF model and by the
   identified one (`identified.urdf` + `payload.yaml`).

With `--plant` the plant is a robot someone else modelled instead: an MJCF file (e.g. MuJoCo
Menagerie's panda.xml) simulated as written under the node's URDF (`--urdf`, default the Panda,
or example-robot-data's model of a Menagerie arm it knows; rnea_ros.sim.foreign_plant checks that
they share their kinematics, else exit 2). There is no tool to add: run A is recorded and
identified on that plant as it is (a gripper the URDF lacks, like xArm7's, is held by the
simulator and identified as part of the last link), then the test multi-sine is tracked on it by
the URDF model and by the identified one (`identified.urdf` + `identified.yaml`). The gains are
the Panda's below for the Panda, else `rnea_ros.sim.scenario.gains` at GAIN_HZ.

Prints per joint the tracking RMS of both and their ratio, run A's held-out torque RMS of both
models, the identified friction and armature against the plant's, the payload against the tool,
writes a plot, and exits 1 when a target of rnea_ros.sim.demos.mismatch.report is missed, 2 on bad
options or a refused plant. Every child process is stopped on exit, Ctrl-C or error.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import shlex
import subprocess
import sys
import time
from pathlib import Path
from typing import cast

import numpy as np

from rnea_ros.identification.bag import write_joint_states
from rnea_ros.identification.cli import EXIT_WARNINGS
from rnea_ros.model.example_robots import example_urdf_path, find_urdf
from rnea_ros.model.robot_model import RobotModel
from rnea_ros.model.urdf import parse_urdf
from rnea_ros.sim.cli import (
    MISSED,
    OK,
    REFUSED,
    add_output_options,
    add_plant_arguments,
    add_ros_options,
    demo_parser,
    ended,
    write_json,
)
from rnea_ros.sim.demos.mismatch.report import (
    HELD_OUT,
    IDENTIFIED,
    TRUTH,
    Track,
    check_targets,
    plot,
    table,
    targets,
)
from rnea_ros.sim.foreign_plant import load_mjcf, match, plant_home
from rnea_ros.sim.plant import PAYLOAD_COM, PAYLOAD_MASS, Plant, foreign_plant, make_plant
from rnea_ros.sim.processes import Processes, start_nodes
from rnea_ros.sim.report import Recording
from rnea_ros.sim.scenario import (
    PANDA_ARM,
    RATE,
    Config,
    check_arm,
    gains,
    home_of,
    menagerie_urdf,
    parameters,
    split_arm,
    write_parameters,
)

# Impedance gains of the runs (N m/rad, N m s/rad), Franka-like: stiff enough for the excitation
# to be followed closely with the URDF model, the same in every run.
KP = [2000.0, 2000.0, 2000.0, 2000.0, 500.0, 500.0, 200.0]
KD = [100.0, 100.0, 60.0, 60.0, 15.0, 15.0, 6.0]
PAYLOAD_LINK = "panda_hand"
GAIN_HZ = 5.0  # another arm's gains: rnea_ros.sim.scenario.gains at this bandwidth
MIN_SPEED = 0.05  # rad/s, identify's default --min-speed
IDENTIFY = "rnea_ros_identify"  # the console script a user runs (setup.py)
IDENTIFY_COMMAND = "command"  # the key of that command line in the report `identify` returns
# The excitation: five sines per joint, large and fast within the URDF's limits (as
# config/excitation.yaml, whose duration --record replaces).
EXCITATION = {
    "components": 5,
    "frequency_min": 0.1,
    "frequency_max": 0.6,
    "max_amplitude": 1.5,
    "position_margin": 0.15,
    "velocity_scale": 0.9,
    "max_acceleration": [20.0],
    "ramp": 2.0,
    "effort_scale": 1.0,
}


def argument_parser() -> argparse.ArgumentParser:
    parser = demo_parser("--mismatch", __doc__)
    parser.add_argument("--seed", type=int, default=0, help="plant and trajectories (default 0)")
    parser.add_argument("--record", type=float, default=40.0, help="excitation length, s (default 40)")
    parser.add_argument("--track", type=float, default=15.0, help="test trajectory length, s (default 15)")
    parser.add_argument(
        "--lockstep", action=argparse.BooleanOptionalAction, default=True, help="lock-step (default)"
    )
    add_output_options(parser, "the results")
    add_ros_options(parser, 600.0)
    parser.add_argument(
        "--urdf", help="the node's URDF with --plant (default: the Panda, or the Menagerie arm's own)"
    )
    add_plant_arguments(parser)
    return parser


def make_config(args: argparse.Namespace) -> tuple[Config, Plant]:
    """The runs' configuration and the plant without load; ValueError on bad options or a plant
    that is not the URDF's arm."""
    if args.record < 10.0 or args.track < 4.0:
        raise ValueError(f"--record must be >= 10 s and --track >= 4 s, got {args.record}, {args.track}")
    mjcf = args.plant or ""
    if args.urdf and not mjcf:
        raise ValueError("--urdf needs --plant (the made-up plant is the Panda's)")
    path = find_urdf(args.urdf) if args.urdf else example_urdf_path(menagerie_urdf(mjcf) or "panda")
    urdf = path.read_text()
    model = RobotModel.from_urdf(urdf)
    joints = split_arm(model).chain
    home = home_of(model)
    pairs = tuple(args.plant_joints or ())
    if mjcf:  # the plant's own home pose, when it has one
        plant_model = load_mjcf(mjcf)[0]
        home.update(plant_home(urdf, plant_model, match(urdf, plant_model, pairs)))
    kp, kd = (KP, KD) if joints == PANDA_ARM else gains(model, home, joints, GAIN_HZ)
    check_arm(model, home, joints, kp, kd)
    config = Config(
        urdf,
        joints,
        home,
        kp,
        kd,
        lockstep=args.lockstep,
        seed=args.seed,
        urdf_path=str(path),
        plant=mjcf,
        plant_joints=pairs,
    )
    return config, foreign_plant(urdf, mjcf, pairs) if mjcf else make_plant(urdf, args.seed)


def tip_link(config: Config, plant: Plant) -> str:
    """The link whose chain identify fits: the hand (payload) for the made-up Panda, else the
    link the chain's last joint moves."""
    if not plant.mjcf:
        return PAYLOAD_LINK
    return next(j.child for j in parse_urdf(config.urdf).joints if j.name == config.joints[-1])


def node_parameters(config: Config, plant: Plant, multisine: dict, description: str) -> dict[str, dict]:
    """The three nodes' parameters for one run: the simulator runs the plant, the node
    `description`."""
    params = parameters(config)
    if not plant.mjcf:  # a foreign plant is the config's (its own armature)
        params["mujoco_sim"].update(
            robot_description=plant.urdf,
            armature=[float(plant.armature[plant.joints.index(j)]) for j in config.joints],
        )
    params["inverse_dynamics"]["robot_description"] = description
    params["multisine_trajectory"].update(multisine)
    return params


def supervise(
    config: Config,
    params: dict[str, dict],
    node_files: tuple[Path, ...],
    name: str,
    args: argparse.Namespace,
    duration: float,
    keep_messages: bool = False,
) -> tuple[Recording, tuple[float, float], list, int]:
    """Start the nodes, run one trajectory of `duration` s from rest, stop them; (Recording,
    window, every joint_states message when `keep_messages`, else [], the stamp of plant time 0
    in ns: 0 in lock-step, the wall clock's when the physics started in real time)."""
    from rnea_ros.sim.demos.forward import supervised

    out = Path(args.out) / "mismatch"
    processes = Processes(out / "logs" / name)
    # the supervisor's joint_states subscription too (its recorder, or its gate), created once the
    # node has the hold: the physics starts with it, and the bag at rest
    params["mujoco_sim"]["start_subscribers"] = 2
    try:
        start_nodes(processes, write_parameters(params, out / f"{name}.params.yaml"), node_files)
        options = {"keep_messages": keep_messages, "hold": True}
        with supervised(config, processes, args.timeout, False, **options) as supervisor:
            window = supervisor.track(duration)
            recording = supervisor.recording((0.0, 0.0), window, window)
            return recording, window, supervisor.messages or [], supervisor.origin_ns or 0
    finally:
        processes.stop()


def record_bag(
    messages: list, window: tuple[float, float], path: Path, origin_ns: int = 0
) -> tuple[Path, int, int]:
    """The joint_states messages stamped within `window` (plant time, s: recording starts and
    stops with the excitation; a message's plant time is its stamp less `origin_ns`, the stamp of
    plant time 0: in real time the simulator stamps with the wall clock) → a rosbag2 (sqlite3),
    stamped and received at plant time; (its path, the messages in it, the messages of the window
    the recorder lost: identify bridges or cuts the gaps)."""
    if not messages:
        raise RuntimeError("no joint_states recorded")
    names = list(messages[0].name)
    rows = [m for m in messages if list(m.name) == names]
    ns = np.array([m.header.stamp.sec * 1_000_000_000 + m.header.stamp.nanosec for m in rows], dtype=np.int64)
    stamps = (ns - origin_ns) * 1e-9
    _, first = np.unique(stamps, return_index=True)  # a re-published state once
    first = first[(stamps[first] >= window[0]) & (stamps[first] <= window[1])]
    if first.size == 0:
        raise RuntimeError(f"no joint_states within {window[0]:.3f}..{window[1]:.3f} s")
    rows = [rows[k] for k in first]
    kept = stamps[first]
    # states of the window not in the bag, of one per physics step: lost by the recorder, or (real
    # time) never published by a simulator catching up after a late wake-up
    lost = int(round((kept[-1] - kept[0]) * RATE)) + 1 - kept.size
    if path.exists():
        import shutil

        shutil.rmtree(path)
    bag = write_joint_states(
        path,
        stamps[first],
        names,
        [list(m.position) for m in rows],
        [list(m.velocity) for m in rows],
        [list(m.effort) for m in rows],
    )
    return bag, kept.size, lost


def identify(bag: Path, args: list[str], report_dir: Path) -> dict:
    """`rnea_ros_identify BAG ARGS --report-dir DIR` (as `python -m rnea_ros.identification.cli`),
    as a user runs it; its report.json, with the command line a user types under IDENTIFY_COMMAND.
    Exit 3 (the files are written, with warnings) goes on: the warnings are printed and in the
    report, and the demo's targets judge the model."""
    words = [str(bag), *args, "--report-dir", str(report_dir)]
    typed = shlex.join([IDENTIFY, *words])
    print(f"  $ {typed}")
    command = [sys.executable, "-m", "rnea_ros.identification.cli", *words]
    done = subprocess.run(command, capture_output=True, text=True, timeout=600, check=False)
    if done.returncode not in (0, EXIT_WARNINGS):
        raise RuntimeError(f"identify exited with {done.returncode}: {done.stderr.strip()}")
    report = json.loads((report_dir / "report.json").read_text())
    for warning in report.get("warnings", []):
        print(f"  identify warned: {warning}")
    return {**report, IDENTIFY_COMMAND: typed}


def plant_min_speed(config: Config, plant: Plant) -> tuple[float, str]:
    """identify's --min-speed for a foreign plant, and the joint that sets it: the speed above
    which MuJoCo's frictionloss gives 95 % of its level on every arm joint at home (slower it is
    a soft constraint that acts like a damper and resists the other forces too, as sticking
    does: not a function of q̇), rounded up to 0.01 rad/s; at least identify's default 0.05."""
    from rnea_ros.sim.mujoco_arm import MujocoArm

    arm = MujocoArm(config.urdf, plant=plant.mjcf, plant_joints=plant.plant_joints)
    arm.reset(config.home)
    speeds = np.geomspace(1e-3, 2.0, 400)  # rad/s or m/s
    worst, joint = MIN_SPEED, ""
    for j, level in zip(plant.joints, plant.coulomb, strict=True):
        if level <= 0:
            continue
        force = -arm.frictionloss_torque(j, speeds)
        speed = float(speeds[np.argmax(force >= 0.95 * level)])
        if speed > worst:
            worst, joint = speed, j
    return float(np.ceil(worst * 100) / 100), joint


def record_and_identify(
    config: Config,
    plant: Plant,
    description: str,
    node_files: tuple[Path, ...],
    run: str,
    args: argparse.Namespace,
    identify_args: list[str],
) -> dict:
    """Run `run`: the node (`description` and `node_files`) tracks the excitation on `plant`,
    joint_states go to a bag, `identify` reads it; its report."""
    out = Path(args.out) / "mismatch"
    excitation = {**EXCITATION, "duration": args.record, "seed": args.seed + (run == "B")}
    params = node_parameters(config, plant, excitation, description)
    _, window, messages, origin = supervise(
        config, params, node_files, f"record_{run}", args, args.record, True
    )
    bag, count, lost = record_bag(messages, window, out / f"bag_{run}", origin)
    span = f"{window[0]:.2f}..{window[1]:.2f} s"
    print(f"  joint_states of {span} ({count} messages, {lost} steps missing) -> {bag}")
    return identify(bag, [*identify_args, "--tip-link", tip_link(config, plant)], out / f"report_{run}")


def main(argv: list[str] | None = None) -> int:
    args = argument_parser().parse_args(argv)
    cast(io.TextIOWrapper, sys.stdout).reconfigure(line_buffering=True)
    try:
        config, robot = make_config(args)
    except (OSError, ValueError) as exc:
        print(f"demo: {exc}", file=sys.stderr)
        return REFUSED
    foreign = bool(robot.mjcf)
    # the same robot with a tool on (a foreign plant is run as it is)
    loaded = robot if foreign else make_plant(config.urdf, args.seed, payload_link=PAYLOAD_LINK)
    os.environ["ROS_DOMAIN_ID"] = str(args.domain_id)
    os.environ["ROS_LOCALHOST_ONLY"] = "1"
    out = Path(args.out) / "mismatch"
    out.mkdir(parents=True, exist_ok=True)
    mode = "lock-step" if config.lockstep else "real time"
    what = (
        f"{robot.mjcf} under {config.urdf_path}"
        if foreign
        else f"a MuJoCo Panda unlike its URDF (seed {args.seed}; ±20 % inertials, friction, armature; "
        f"then a {PAYLOAD_MASS:g} kg tool on {PAYLOAD_LINK})"
    )
    print(
        f"mismatch demo: {what}, {mode}\n  PD gains (every run) "
        f"kp {np.round(config.kp, 3).tolist()} N m/rad, kd {np.round(config.kd, 3).tolist()} N m s/rad"
    )
    started = time.monotonic()
    test = {"duration": args.track, "ramp": min(1.5, args.track / 4), "seed": args.seed + 1}
    fit: list[str] = []
    if foreign:  # the test is of the excitation's kind: the armature shows with acceleration
        test = {**EXCITATION, **test, "ramp": min(EXCITATION["ramp"], args.track / 4)}
        speed, joint = plant_min_speed(config, robot)
        if speed > MIN_SPEED:
            fit = ["--min-speed", f"{speed:g}"]
            print(
                f"  identify --min-speed {speed:g} rad/s: below it the plant's dry friction (MuJoCo's "
                f"frictionloss) is not saturated on {joint}"
            )
    model_files = (out / "identified.yaml",)
    tool_files = model_files if foreign else (out / "payload.yaml",)
    load = "" if foreign else ", the tool on"
    try:
        run_a = "the plant as it is" if foreign else "no load"
        print(f"1. run A, {run_a}, URDF model: excitation {args.record:g} s, then identify")
        report_a = record_and_identify(
            config,
            robot,
            config.urdf,
            (),
            "A",
            args,
            ["--identify", "inertial", "friction", *fit]
            + ["--urdf", config.urdf_path, "--urdf-out", str(out / "identified.urdf")]
            + ["--out-params", str(model_files[0])],
        )
        identified = (out / "identified.urdf").read_text()
        reports = [report_a]
        if not foreign:
            print(f"2. run B, the tool on, run A's model: excitation {args.record:g} s, then the payload")
            reports.append(
                record_and_identify(
                    config,
                    loaded,
                    identified,
                    model_files,
                    "B",
                    args,
                    ["--identify", "payload"]
                    + ["--urdf", str(out / "identified.urdf"), "--params", str(model_files[0])]
                    + ["--payload-link", PAYLOAD_LINK, "--out-params", str(tool_files[0])],
                )
            )
        tracks = []
        for label, description, files in (
            ("URDF model", config.urdf, ()),
            ("identified", identified, tool_files),
        ):
            print(f"{len(reports) + 1}. track with the {label}{load}: test multi-sine {args.track:g} s")
            params = node_parameters(config, loaded, test, description)
            name = "track_" + label.split()[0].lower()
            recording, window, _, _ = supervise(config, params, files, name, args, args.track)
            tracks.append(Track.of(label, recording, window))
    except (KeyboardInterrupt, RuntimeError, TimeoutError, ValueError) as exc:
        return ended(exc, "mismatch demo", args.json)
    print(f"\nran in {time.monotonic() - started:.1f} s wall\n")
    print(table(tracks, reports, loaded))
    failed = check_targets(tracks, reports, loaded)
    verdict = "all met" if not failed else "MISSED\n  " + "\n  ".join(failed)
    print(f"\ntargets ({targets(loaded)}): {verdict}")
    if args.json:
        keys = ("joints", *HELD_OUT, *IDENTIFIED, "warnings")
        truth = {"joints": loaded.joints, **{k: getattr(loaded, k).tolist() for k in TRUTH}}
        if foreign:
            truth["plant"] = loaded.mjcf
        else:
            truth["payload"] = {"link": PAYLOAD_LINK, "mass": PAYLOAD_MASS, "com": PAYLOAD_COM.tolist()}
        numbers = {
            "tracks": [t.to_dict() for t in tracks],
            "run_a": {k: reports[0][k] for k in (*keys, "condition_number")},
            **({} if foreign else {"run_b": {k: reports[1][k] for k in (*keys[:5], "payload", "warnings")}}),
            "truth": truth,
            "failed": failed,
        }
        write_json(args.json, numbers)
    if args.plot:
        if foreign:
            title = f"{Path(loaded.mjcf).name} under {Path(config.urdf_path).name}, {mode}"
        else:
            title = f"Panda unlike its URDF, with a tool (seed {args.seed}), {mode}"
        path = plot(tracks, out / "tracking.png", title)
        print(f"plots: {path.resolve()}, {(out / 'report_A' / 'efforts.png').resolve()}")
    print(
        "\non a robot of your own: record joint_states as run A did (docs/identification.md), then run"
        f"\n  {reports[0][IDENTIFY_COMMAND]}"
    )
    return MISSED if failed else OK
