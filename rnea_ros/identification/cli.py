"""Command line: identify friction, payload or inertial parameters from a rosbag2 of joint_states.

    rnea_ros_identify BAG --urdf URDF [--identify friction payload inertial]
    (= python -m rnea_ros.identification.cli)
        [--topic joint_states] [--root-link L] [--tip-link L] [--window T0 T1] [--fit-joints J ...]
        [--velocity auto|recorded|positions] [--effort-params node.yaml] [--payload-link L]
        [--payload-inertia] [--split 0.7] [--cutoff HZ] [--max-condition 1e5]
        [--out-params params.yaml] [--urdf-out corrected.urdf] [--report-dir DIR]

Reads sensor_msgs/JointState (position, effort and, when recorded, velocity) mapped by name to
the model's joints, optionally within a time window and with the efforts converted from drive
units (`rnea_ros.identification.recording`), fits the chosen parameters
(`rnea_ros.identification.fit`) on the efforts of `--fit-joints`, writes the files
(`rnea_ros.identification.written`):

- `--out-params`: a parameter file for the inverse_dynamics node (friction.viscous/coulomb, the
  `joints` they follow, armature, payload.*);
- `--urdf-out`: the input URDF with only `<inertial>` and `<dynamics damping friction>` changed,
  each identified body written into its links so that they add up to it;
- `--report-dir`: report.json (every number) and efforts.png (measured vs predicted efforts),

then reads the written files back as the node would and scores that model on the held-out
samples: the table, the report and the exit status are those of the written model.

Exit status: 0 the fit explains the recording; 2 bad input (unreadable bag or URDF, missing
topic, model joints absent from the messages, no efforts, too few samples), one error line on
stderr, nothing written; 3 the fit ran and its files are written, but it does not explain the
recording (or the recording has a flaw): one `rnea_ros_identify: warning: ...` line per finding
on stderr (`rnea_ros.identification.checks`); 4 the files written are not the identified model
(a body that is not physical, or a part of the model no file holds): one error line with the size
of the difference.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np

from rnea_ros.errors import BadInputError, RneaError, URDFError
from rnea_ros.friction.model import SMOOTHING_VELOCITY
from rnea_ros.identification.bag import JointStates, read_joint_states
from rnea_ros.identification.checks import MAX_CONDITION, check
from rnea_ros.identification.fit import WHAT, FitOptions, Identification, identify
from rnea_ros.identification.prediction import held_out_rms
from rnea_ros.identification.recording import (
    LAG_LIMIT,
    chain_tip,
    effort_factors,
    quantised,
    velocity_lag,
    window,
)
from rnea_ros.identification.regressor import standard_parameters
from rnea_ros.identification.report import plot, pooled, table
from rnea_ros.identification.signals import GAP, Samples, prepare, sample_rate, stretches
from rnea_ros.identification.written import apply_params, corrected_urdf, params_yaml, reload, ros_parameters
from rnea_ros.model.robot_model import RobotModel

PROG = "rnea_ros_identify"
EXIT_BAD_INPUT = 2
EXIT_WARNINGS = 3
EXIT_WRITTEN_DIFFERS = 4
WRITTEN_RTOL = 1e-6  # held-out pooled RMS of the written files vs the identified model, relative
VELOCITY = ("auto", "recorded", "positions")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(
        prog=PROG,
        description="Identify friction, payload and inertial parameters from a rosbag2. Exit status: "
        "0 fine, 2 bad input, 3 written but with warnings (the fit does not explain the recording), "
        "4 the files written are not the identified model.",
    )
    ap.add_argument("bag", help="rosbag2 directory (sqlite3 or mcap)")
    ap.add_argument("--urdf", required=True, help="URDF file of the robot (the prior)")
    ap.add_argument(
        "--topic", default="joint_states", help="sensor_msgs/JointState topic (default joint_states)"
    )
    ap.add_argument(
        "--identify",
        nargs="+",
        choices=WHAT,
        default=["friction"],
        metavar="WHAT",
        help="any of friction, payload, inertial (not payload with inertial); default friction",
    )
    ap.add_argument(
        "--payload-link", help="link carrying the payload (default: tip link, else the last body)"
    )
    ap.add_argument("--payload-inertia", action="store_true", help="also fit the payload's inertia")
    ap.add_argument(
        "--armature",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="fit the armature (default: with inertial only)",
    )
    ap.add_argument("--root-link", help="model root link (default: the URDF's root)")
    ap.add_argument("--tip-link", help="model chain tip (joints off the chain locked at 0)")
    ap.add_argument(
        "--window",
        nargs=2,
        type=float,
        metavar=("T0", "T1"),
        help="use the messages from T0 to T1 only (s since the first message)",
    )
    ap.add_argument(
        "--fit-joints",
        nargs="+",
        metavar="JOINT",
        help="the joints whose efforts are fitted and scored (default: all); the others' motion stays "
        "in the model, their efforts (unknown drive constants, quantised) are left out",
    )
    ap.add_argument(
        "--velocity",
        choices=VELOCITY,
        default="auto",
        help="recorded: the messages' velocities; positions: derivatives of the low-passed positions; "
        f"auto (default): recorded, unless absent or lagging the position derivative by more than "
        f"{LAG_LIMIT} sample",
    )
    ap.add_argument(
        "--differentiate-positions",
        action="store_true",
        help="the same as --velocity positions",
    )
    ap.add_argument(
        "--effort-params",
        type=Path,
        help="node parameter file whose effort_unit and gearing.ratio / gearing.torque_constant say "
        "the unit of the recorded efforts (current, motor_torque): converted to joint torque",
    )
    ap.add_argument(
        "--split", type=float, default=0.7, help="fraction (in time) used to fit; the rest validates"
    )
    ap.add_argument(
        "--cutoff",
        type=float,
        default=10.0,
        help="zero-phase low-pass cut-off, Hz, before differentiating (0: no filter)",
    )
    ap.add_argument(
        "--max-condition",
        type=float,
        default=MAX_CONDITION,
        help=f"warn above this base-regressor condition number (default {MAX_CONDITION:g})",
    )
    ap.add_argument("--prior-weight", type=float, default=1.0, help="ridge weight toward the URDF values")
    ap.add_argument(
        "--smoothing-velocity",
        type=float,
        default=SMOOTHING_VELOCITY,
        help="tanh Coulomb velocity scale, rad/s",
    )
    ap.add_argument(
        "--min-speed",
        type=float,
        default=0.05,
        help="rad/s (m/s): samples of a joint slower than this are not fitted (dry-friction sticking)",
    )
    ap.add_argument(
        "--params",
        type=Path,
        help="parameter file of an earlier run: its friction and armature become the model's (prior)",
    )
    ap.add_argument("--out-params", type=Path, help="node parameter file to write (YAML)")
    ap.add_argument("--urdf-out", type=Path, help="corrected URDF to write")
    ap.add_argument("--report-dir", type=Path, help="directory for report.json and efforts.png")
    args = ap.parse_args(argv)
    if args.differentiate_positions:
        args.velocity = "positions"
    return args


def _read(args: argparse.Namespace, urdf: str, model: RobotModel) -> JointStates:
    """The bag's joint states of the model's joints; BadInputError with a hint when it lacks some."""
    try:
        return read_joint_states(args.bag, args.topic, joints=model.joint_names)
    except ValueError as exc:
        msg = str(exc)
        if "never seen" not in msg:
            raise BadInputError(msg) from None
    try:
        present = read_joint_states(args.bag, args.topic).names  # the first message's joints
    except ValueError:
        present = ()
    missing = [j for j in model.joint_names if j not in present]
    hint = ""
    tip = chain_tip(urdf, present, args.root_link) if present else None
    if tip is not None:
        hint = (
            f"; the messages have {len(present)} joints ({', '.join(present[:8])}"
            f"{', ...' if len(present) > 8 else ''}): model only the chain they move with --tip-link "
            f"{tip} (joints off the root→tip chain are locked at 0, their links still count)"
        )
    raise BadInputError(f"joints of the model missing from '{args.topic}': {', '.join(missing)}{hint}")


def _velocity(
    args: argparse.Namespace, states: JointStates, facts: dict
) -> tuple[np.ndarray | None, list[str]]:
    """The velocities to use (None: from the positions) and warnings, by --velocity; facts get
    the choice, why, and the measured lags."""
    warnings: list[str] = []
    recorded = states.velocity
    lags = None if recorded is None else velocity_lag(states.t, states.position, recorded)
    moving = (
        []
        if lags is None
        else [(n, lag) for n, lag in zip(states.names, lags, strict=True) if np.isfinite(lag)]
    )
    lag = float(np.median([x for _, x in moving])) if moving else 0.0
    dt = 1.0 / sample_rate(states.t)
    facts["velocity_lag_samples"] = None if lags is None else {n: int(x) for n, x in moving}
    span = ""
    if moving:
        low, high = min(x for _, x in moving), max(x for _, x in moving)
        span = f"{low:g}" if low == high else f"{low:g}-{high:g}"
        span = f"{span} samples ({low * dt:.3g}-{high * dt:.3g} s)"
    lagging = abs(lag) > LAG_LIMIT
    if args.velocity == "recorded":
        if recorded is None:
            raise BadInputError(
                f"messages on '{args.topic}' carry no velocity for every joint: record velocities, or pass "
                "--velocity positions (or auto) to take them from the low-passed positions"
            )
        use, why = "recorded", "--velocity recorded"
        if lagging:
            warnings.append(
                f"the recorded velocity lags the derivative of the recorded positions by {span} (median "
                f"{lag:g} samples: a filtered velocity): the velocity columns of the model are behind the "
                "efforts; --velocity positions (or auto) takes velocities from the positions instead"
            )
    elif args.velocity == "positions":
        use, why = "positions", "--velocity positions"
    elif recorded is None:
        use, why = "positions", "auto: the messages carry no velocity"
    elif lagging:
        use = "positions"
        why = (
            f"auto: the recorded velocity lags the position derivative by {span}, more than "
            f"{LAG_LIMIT} sample; --velocity recorded uses it anyway"
        )
    else:
        use, why = "recorded", "auto: the recorded velocity keeps up with the position derivative"
    facts["velocity"] = "recorded" if use == "recorded" else "differentiated"
    facts["velocity_choice"] = why
    return (recorded if use == "recorded" else None), warnings


def load(args: argparse.Namespace) -> tuple[str, RobotModel, Samples, dict, list[str]]:
    """URDF text, model, prepared samples, facts about the recording and warnings about it;
    BadInputError otherwise."""
    try:
        urdf = Path(args.urdf).read_text()
    except OSError as exc:
        raise BadInputError(f"cannot read URDF '{args.urdf}': {exc.strerror}") from None
    try:
        model = RobotModel.from_urdf(urdf, root_link=args.root_link, tip_link=args.tip_link)
    except URDFError as exc:
        raise BadInputError(f"URDF '{args.urdf}': {exc}") from None
    if args.params:
        try:
            text = Path(args.params).read_text()
        except OSError as exc:
            raise BadInputError(f"--params '{args.params}': {exc.strerror}") from None
        try:
            model = apply_params(
                model, ros_parameters(text, f"--params '{args.params}'"), f"--params '{args.params}'"
            )
        except RneaError as exc:
            raise BadInputError(str(exc)) from None
    states = _read(args, urdf, model)
    warnings: list[str] = []
    facts: dict = {"bag": str(args.bag), "topic": args.topic, "messages_read": int(states.t.size)}
    if states.zero_stamps:
        warnings.append(
            f"{states.zero_stamps} of {states.t.size + states.skipped} messages on '{args.topic}' have a "
            "header stamp of 0, so every sample is timed by the bag's receive time (the recorder's "
            "delivery jitter, not the time of the measurement): stamp joint_states where they are "
            "measured (header.stamp = the time the driver read the joints, e.g. "
            "node.get_clock().now().to_msg(); ros2_control's joint_state_broadcaster does)"
        )
    try:
        if args.window:
            states = window(states, *args.window)
            facts["window_s"] = [float(args.window[0]), float(args.window[1])]
    except RneaError as exc:
        raise BadInputError(str(exc)) from None
    if states.effort is None:
        raise BadInputError(f"messages on '{args.topic}' carry no effort for every joint")
    fitted = list(args.fit_joints or model.joint_names)
    unknown = [j for j in fitted if j not in model.joint_names]
    if unknown:
        raise BadInputError(
            f"--fit-joints: {', '.join(unknown)}: not joints of the model ({', '.join(model.joint_names)})"
        )
    coarse = quantised(states.names, states.effort)
    facts["quantised_efforts"] = [
        {"joint": q.joint, "distinct_values": q.distinct, "most_frequent": q.value, "share": q.share}
        for q in coarse
    ]
    for q in coarse:
        if q.joint in fitted:
            warnings.append(
                f"the efforts of {q.joint} are quantised: {q.distinct} distinct values over {states.t.size} "
                f"samples, {100 * q.share:.1f} % of them exactly {q.value + 0.0:g} (a coarse drive reading, "
                "not a torque the model can follow); leave them out of the fit with --fit-joints (the "
                "joint's motion stays in the model)"
            )
    effort = states.effort
    if args.effort_params:
        try:
            units = effort_factors(args.effort_params, model.joint_names)
        except RneaError as exc:
            raise BadInputError(str(exc)) from None
        effort = effort * units.to_joint
        facts["effort_units"] = dict(zip(model.joint_names, units.units, strict=True))
        facts["effort_to_joint_torque"] = [float(x) for x in units.to_joint]
        facts["effort_sign_reversed"] = list(units.reversed)
    qd, velocity_warnings = _velocity(args, states, facts)
    warnings += velocity_warnings
    try:
        rate = sample_rate(states.t)
        cutoff = args.cutoff if args.cutoff and args.cutoff > 0 else None
        samples = prepare(states.t, states.position, effort, qd=qd, cutoff=cutoff)
    except ValueError as exc:
        raise BadInputError(str(exc)) from None
    facts.update(
        {
            "messages": int(states.t.size),
            "skipped_messages": states.skipped,
            "time_source": states.time_source,
            "zero_stamps": states.zero_stamps,
            "sample_rate_hz": rate,
            "cutoff_hz": cutoff,
            "duration_s": float(states.t[-1] - states.t[0]),
            **gaps(states.t, cutoff),
            "samples_kept": len(samples),
            "fit_joints": fitted,
        }
    )
    return urdf, model, samples, facts, warnings


def gaps(t: np.ndarray, cutoff: float | None) -> dict:
    """The recording's gaps (lost messages: intervals over GAP median intervals): count, longest
    (s), and the stretches `prepare` cuts the recording into."""
    dt = np.diff(t)
    over = dt[dt > GAP * np.median(dt)]
    longest = float(over.max()) if over.size else 0.0
    return {"gaps": int(over.size), "longest_gap_s": longest, "stretches": len(stretches(t, cutoff))}


def write(
    args: argparse.Namespace, urdf: str, model: RobotModel, result: Identification
) -> tuple[list[str], list[str], str | None, str | None]:
    """Write the files asked for; notes, errors (bodies not written as identified), and the texts
    of the URDF and the parameter file the written model is made of (None: not written)."""
    notes: list[str] = []
    errors: list[str] = []
    written_urdf = written_params = None
    if args.out_params:
        written_params = params_yaml(result, args.root_link, args.tip_link)
        args.out_params.write_text(written_params)
        print(f"wrote {args.out_params}")
    if args.urdf_out:
        written_urdf, notes, errors = corrected_urdf(urdf, model, result)
        args.urdf_out.write_text(written_urdf)
        for note in notes:
            print(f"note: {note}")
        print(f"wrote {args.urdf_out}")
    return notes, errors, written_urdf, written_params


def written_model(
    args: argparse.Namespace, urdf: str, written_urdf: str | None, written_params: str | None
) -> tuple[RobotModel, float, list[str]]:
    """The model of the written files, read back as the node builds it (the input URDF and
    --params for what was not written), its Coulomb smoothing velocity, and which files it is."""
    params_text = written_params
    sources = [str(args.urdf_out) if written_urdf is not None else str(args.urdf)]
    if params_text is None and args.params:
        params_text = Path(args.params).read_text()
    if written_params is not None:
        sources.append(str(args.out_params))
    elif args.params:
        sources.append(str(args.params))
    model, smoothing = reload(
        written_urdf if written_urdf is not None else urdf, params_text, args.root_link, args.tip_link
    )
    return model, smoothing, sources


def fit_options(args: argparse.Namespace, fit_joints: list[str]) -> FitOptions:
    """How the command line asks `identify` to fit (RneaError naming a value it refuses)."""
    return FitOptions(
        payload_link=args.payload_link,
        payload_inertia=args.payload_inertia,
        armature=args.armature,
        split=args.split,
        prior_weight=args.prior_weight,
        smoothing_velocity=args.smoothing_velocity,
        min_speed=args.min_speed,
        fit_joints=tuple(fit_joints),
    )


def run(args: argparse.Namespace) -> int:
    urdf, model, samples, facts, warnings = load(args)
    if args.payload_link is not None and args.payload_link not in model.link_frames:
        raise BadInputError(f"--payload-link '{args.payload_link}' is not a link of the model")
    try:
        result = identify(model, samples, args.identify, fit_options(args, facts["fit_joints"]))
    except ValueError as exc:
        raise BadInputError(str(exc)) from None
    print(
        f"velocity: {'recorded' if facts['velocity'] == 'recorded' else 'from the positions'} "
        f"({facts['velocity_choice']})"
    )
    if facts["gaps"]:
        print(
            f"recording: {facts['gaps']} gaps (lost messages; longest "
            f"{facts['longest_gap_s'] * 1e3:.4g} ms): "
            + (f"{facts['stretches']} stretch(es) filtered on their own, " if facts["cutoff_hz"] else "")
            + f"{facts['samples_kept']} of {facts['messages']} samples kept"
        )
    start = result.train_samples if result.validation_samples < len(samples) else 0
    urdf_notes, errors, written_urdf, written_params = write(args, urdf, model, result)
    score = {"min_speed": args.min_speed}
    rms_id, rms_id_moving = held_out_rms(
        result.model, samples, result.parameters, start, smoothing_velocity=result.smoothing_velocity, **score
    )
    written = None
    if written_urdf is not None or written_params is not None:
        try:
            model_w, smoothing_w, sources = written_model(args, urdf, written_urdf, written_params)
        except (RneaError, OSError) as exc:
            print(f"{PROG}: error: the written files cannot be read back: {exc}", file=sys.stderr)
            return EXIT_WRITTEN_DIFFERS
        rms_w, rms_w_moving = held_out_rms(
            model_w, samples, standard_parameters(model_w), start, smoothing_velocity=smoothing_w, **score
        )
        identified_pooled, written_pooled = pooled(result, rms_id), pooled(result, rms_w)
        differs = abs(written_pooled - identified_pooled) > WRITTEN_RTOL * max(identified_pooled, 1e-12)
        written = {
            "files": sources,
            "rms_identified_model": [float(x) for x in rms_id],
            "pooled_identified_model": identified_pooled,
            "pooled_written_files": written_pooled,
            "relative_difference": abs(written_pooled - identified_pooled) / max(identified_pooled, 1e-12),
            "same": not differs,
            "errors": errors,
        }
        print(f"scored: the model of {' + '.join(sources)}, read back")
        result = replace(result, rms_identified=rms_w, rms_identified_moving=rms_w_moving)
    print(table(result))
    warnings += check(
        model, samples, result, args.max_condition, quantised=[q["joint"] for q in facts["quantised_efforts"]]
    )
    if args.report_dir:
        args.report_dir.mkdir(parents=True, exist_ok=True)
        valid = samples.part(slice(start, len(samples)))
        report = {
            **facts,
            **result.to_dict(),
            "validation_time_s": [float(valid.t[0]), float(valid.t[-1])],
            "train_time_s": [float(samples.t[0]), float(samples.t[max(start - 1, 0)])],
            "pooled_rms_model": pooled(result, result.rms_model),
            "pooled_rms_identified": pooled(result, result.rms_identified),
            "written_model": written,
            "urdf_notes": urdf_notes,
            "warnings": warnings,
        }
        (args.report_dir / "report.json").write_text(json.dumps(report, indent=2) + "\n")
        plot(args.report_dir / "efforts.png", model, result, valid)
        print(f"wrote {args.report_dir / 'report.json'} and {args.report_dir / 'efforts.png'}")
    for warning in warnings:
        print(f"{PROG}: warning: {warning}", file=sys.stderr)
    if written is not None and not written["same"]:
        why = "; ".join(errors) or (
            "a part of the identified model is in no file written"
            + (
                " (inertials: no --urdf-out)"
                if "inertial" in result.identified and written_urdf is None
                else ""
            )
            + (" (armature, payload, smoothing velocity: no --out-params)" if written_params is None else "")
        )
        print(
            f"{PROG}: error: the files written are not the identified model: held-out pooled RMS "
            f"{written['pooled_written_files']:.6g} (files) vs {written['pooled_identified_model']:.6g} "
            f"(identified), relative difference {written['relative_difference']:.3g}: {why}",
            file=sys.stderr,
        )
        return EXIT_WRITTEN_DIFFERS
    return EXIT_WARNINGS if warnings else 0


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        return run(args)
    except BadInputError as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT


if __name__ == "__main__":
    sys.exit(main())
