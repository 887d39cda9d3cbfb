"""Command line: identify friction, payload or inertial parameters from a rosbag2 of joint_states.

    rnea_ros_identify BAG --urdf URDF [--identify friction payload inertial]
    (= python -m rnea_ros.identification.cli)
        [--topic joint_states] [--payload-link L] [--payload-inertia] [--split 0.7] [--cutoff HZ]
        [--differentiate-positions] [--max-condition 1e5]
        [--out-params params.yaml] [--urdf-out corrected.urdf] [--report-dir DIR]

Reads sensor_msgs/JointState (position, effort and, when recorded, velocity) mapped by name to
the model's joints, fits the chosen parameters (`rnea_ros.identification.fit`), prints per-joint
torque RMS on the held-out part for the URDF model and the identified one, and writes:

- `--out-params`: a parameter file for the inverse_dynamics node (friction.viscous/coulomb, the
  `joints` they follow, armature, payload.*);
- `--urdf-out`: the input URDF with only `<inertial>` and `<dynamics damping friction>` changed
  (a body that merges links on fixed joints gets its whole correction on its joint's child link;
  a payload and the armature are not in the URDF, they go to the parameter file);
- `--report-dir`: report.json (every number) and efforts.png (measured vs predicted efforts).

Exit status: 0 the fit explains the recording; 2 bad input (unreadable bag or URDF, missing
topic, model joints absent from the messages, no efforts, no velocities without
`--differentiate-positions`, too few samples), one error line on stderr, nothing written;
3 the fit ran and its files are written, but it does not explain the recording: one
`rnea_ros_identify: warning: ...` line per finding on stderr (`rnea_ros.identification.checks`).
"""

from __future__ import annotations

import argparse
import json
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np

from rnea_ros.errors import RneaError, URDFError
from rnea_ros.friction.model import SMOOTHING_VELOCITY
from rnea_ros.identification.bag import read_joint_states
from rnea_ros.identification.checks import MAX_CONDITION, check
from rnea_ros.identification.fit import (
    GAP,
    WHAT,
    Identification,
    Samples,
    identify,
    predict,
    prepare,
    sample_rate,
    stretches,
)
from rnea_ros.identification.regressor import (
    body_columns,
    body_links,
    standard_parameters,
    with_parameters,
)
from rnea_ros.model.robot_model import RobotModel
from rnea_ros.model.urdf import parse_urdf

PROG = "rnea_ros_identify"
EXIT_BAD_INPUT = 2
EXIT_WARNINGS = 3


class BadInput(RneaError):
    """Input the tool cannot use; the message is printed as one line."""


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(
        prog=PROG,
        description="Identify friction, payload and inertial parameters from a rosbag2. Exit status: "
        "0 fine, 2 bad input, 3 written but with warnings (the fit does not explain the recording).",
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
        "--split", type=float, default=0.7, help="fraction (in time) used to fit; the rest validates"
    )
    ap.add_argument(
        "--cutoff",
        type=float,
        default=10.0,
        help="zero-phase low-pass cut-off, Hz, before differentiating (0: no filter)",
    )
    ap.add_argument(
        "--differentiate-positions",
        action="store_true",
        help="when the messages carry no velocities, take them (and accelerations) as central "
        "differences of the --cutoff low-passed positions; without it such a bag is refused",
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
    return ap.parse_args(argv)


def load(args: argparse.Namespace) -> tuple[str, RobotModel, Samples, dict]:
    """URDF text, model, prepared samples and facts about the recording; BadInput otherwise."""
    try:
        urdf = Path(args.urdf).read_text()
    except OSError as exc:
        raise BadInput(f"cannot read URDF '{args.urdf}': {exc.strerror}") from None
    try:
        model = RobotModel.from_urdf(urdf, root_link=args.root_link, tip_link=args.tip_link)
    except URDFError as exc:
        raise BadInput(f"URDF '{args.urdf}': {exc}") from None
    if args.params:
        model = apply_params(model, args.params)
    try:
        states = read_joint_states(args.bag, args.topic, joints=model.joint_names)
    except ValueError as exc:
        msg = str(exc)
        if "never seen" in msg:
            msg = f"joints of the model missing from '{args.topic}': " + msg.split("never seen: ")[1]
        raise BadInput(msg) from None
    if states.effort is None:
        raise BadInput(f"messages on '{args.topic}' carry no effort for every joint")
    if states.velocity is None and not args.differentiate_positions:
        raise BadInput(
            f"messages on '{args.topic}' carry no velocity for every joint: record velocities, or pass "
            "--differentiate-positions to take them as central differences of the low-passed positions"
        )
    try:
        rate = sample_rate(states.t)
        cutoff = args.cutoff if args.cutoff and args.cutoff > 0 else None
        samples = prepare(states.t, states.position, states.effort, qd=states.velocity, cutoff=cutoff)
    except ValueError as exc:
        raise BadInput(str(exc)) from None
    facts = {
        "bag": str(args.bag),
        "topic": args.topic,
        "messages": int(states.t.size),
        "skipped_messages": states.skipped,
        "time_source": states.time_source,
        "sample_rate_hz": rate,
        "cutoff_hz": cutoff,
        "velocity": "recorded" if states.velocity is not None else "differentiated",
        "duration_s": float(states.t[-1] - states.t[0]),
        **gaps(states.t, cutoff),
        "samples_kept": len(samples),
    }
    return urdf, model, samples, facts


def gaps(t: np.ndarray, cutoff: float | None) -> dict:
    """The recording's gaps (lost messages: intervals over GAP median intervals): count, longest
    (s), and the stretches `prepare` cuts the recording into."""
    dt = np.diff(t)
    over = dt[dt > GAP * np.median(dt)]
    longest = float(over.max()) if over.size else 0.0
    return {"gaps": int(over.size), "longest_gap_s": longest, "stretches": len(stretches(t, cutoff))}


def apply_params(model: RobotModel, path: Path) -> RobotModel:
    """The model with friction.viscous/coulomb and armature of a parameter file written by this
    tool (mapped by its `joints`); BadInput when it cannot be used."""
    import yaml

    try:
        doc = yaml.safe_load(Path(path).read_text())
        params = next(v["ros__parameters"] for v in doc.values() if "ros__parameters" in v)
        names = list(params["joints"])
    except (OSError, yaml.YAMLError, AttributeError, KeyError, StopIteration, TypeError) as exc:
        raise BadInput(
            f"--params '{path}': not a parameter file of this tool ({type(exc).__name__})"
        ) from None
    missing = [j for j in model.joint_names if j not in names]
    if missing:
        raise BadInput(f"--params '{path}': no values for joints {', '.join(missing)}")
    take = [names.index(j) for j in model.joint_names]
    pi = standard_parameters(model)
    n = model.nv
    try:
        for key, offset in (("viscous", 10 * n), ("coulomb", 11 * n)):
            values = params.get("friction", {}).get(key)
            if values is not None:
                pi[offset : offset + n] = np.asarray(values, dtype=float)[take]
        armature = params.get("armature")
        if isinstance(armature, dict):  # armature.<joint>, as this tool writes it
            pi[12 * n : 13 * n] = [float(armature.get(j, 0.0)) for j in model.joint_names]
        elif armature is not None:  # a list in `joints` order (files written before the per-joint form)
            pi[12 * n : 13 * n] = np.asarray(armature, dtype=float)[take]
        return with_parameters(model, pi)
    except (ValueError, IndexError, TypeError) as exc:
        raise BadInput(f"--params '{path}': {exc}") from None


def params_yaml(result: Identification, args: argparse.Namespace) -> str:
    """The inverse_dynamics node's parameter file for the result (YAML text)."""
    import yaml

    params: dict = {"joints": list(result.joint_names)}
    if args.root_link:
        params["root_link"] = args.root_link
    if args.tip_link:
        params["tip_link"] = args.tip_link
    params["friction"] = {
        "viscous": [float(x) for x in result.viscous],
        "coulomb": [float(x) for x in result.coulomb],
        "smoothing_velocity": float(result.smoothing_velocity),
    }
    # one parameter per joint, armature.<joint> (the node has no armature array)
    params["armature"] = {j: float(x) for j, x in zip(result.joint_names, result.armature, strict=True)}
    if result.payload is not None:
        p = result.payload
        i = p.inertia
        params["payload"] = {
            "link": p.link,
            "mass": float(p.mass),
            "com": [float(x) for x in p.com],
            "inertia": [float(x) for x in (i[0, 0], i[0, 1], i[0, 2], i[1, 1], i[1, 2], i[2, 2])],
        }
    header = (
        "# Identified by rnea_ros.identification.cli; per-joint arrays follow `joints`, armature is\n"
        "# one parameter per joint (armature.<joint>).\n"
        "# friction: N m s/rad and N m (N s/m and N for prismatic); armature: kg m^2 (kg).\n"
    )
    return header + yaml.safe_dump({"inverse_dynamics": {"ros__parameters": params}}, sort_keys=False)


def _physical(m: float, i_c: np.ndarray) -> tuple[float, np.ndarray, list[str]]:
    """The nearest loadable inertial: mass ≥ 0, principal moments ≥ 0 and triangle inequality."""
    fixes = []
    if m < 0:
        fixes.append(f"mass {m:.4g} kg set to 0")
        m = 0.0
    moments, axes = np.linalg.eigh(0.5 * (i_c + i_c.T))
    fixed = np.maximum(moments, 0.0)
    if fixed[0] + fixed[1] < fixed[2]:
        fixed[2] = fixed[0] + fixed[1]
    if not np.allclose(fixed, moments, rtol=0, atol=1e-12):
        fixes.append(f"principal moments {np.array2string(moments, precision=4)} made physical")
    return m, axes @ np.diag(fixed) @ axes.T, fixes


def corrected_urdf(urdf: str, model: RobotModel, result: Identification) -> tuple[str, list[str]]:
    """The input URDF with each body's inertial correction on its joint's child link and the
    identified friction in <dynamics>; notes on what was done."""
    parser = ET.XMLParser(target=ET.TreeBuilder(insert_comments=True))
    root = ET.fromstring(urdf, parser=parser)
    links = {el.get("name"): el for el in root.findall("link")}
    robot = parse_urdf(urdf)
    notes: list[str] = []
    pi_old = standard_parameters(model)
    if "inertial" in result.identified:  # never with a payload: result.parameters is the robot
        for b, link in enumerate(body_links(model)):
            delta = result.parameters[body_columns(model, b)] - pi_old[body_columns(model, b)]
            if not np.any(delta):
                continue
            inertial = robot.links[link]
            m, h, i_o = 0.0, np.zeros(3), np.zeros((3, 3))
            if inertial is not None:
                m, c = inertial.mass, inertial.com
                h = m * c
                i_o = inertial.inertia + m * (float(c @ c) * np.eye(3) - np.outer(c, c))
            m += delta[0]
            h = h + delta[1:4]
            xx, xy, yy, xz, yz, zz = delta[4:]
            i_o = i_o + np.array([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]])
            c = h / m if m > 0 else np.zeros(3)
            i_c = i_o - m * (float(c @ c) * np.eye(3) - np.outer(c, c))
            m, i_c, fixes = _physical(m, i_c)
            if fixes:
                notes.append(f"link '{link}': identified inertial not physical ({'; '.join(fixes)})")
            merged = [k for k, f in model.link_frames.items() if f.body == b and k != link]
            if merged:
                notes.append(
                    f"body of link '{link}' also holds {', '.join(merged)}: correction put on '{link}'"
                )
            el = links[link]
            for old in el.findall("inertial"):
                el.remove(old)
            new = ET.Element("inertial")
            ET.SubElement(new, "origin", {"xyz": " ".join(f"{x:.12g}" for x in c), "rpy": "0 0 0"})
            ET.SubElement(new, "mass", {"value": f"{m:.12g}"})
            ET.SubElement(
                new,
                "inertia",
                {
                    k: f"{i_c[a, b2]:.12g}"
                    for k, (a, b2) in {
                        "ixx": (0, 0),
                        "ixy": (0, 1),
                        "ixz": (0, 2),
                        "iyy": (1, 1),
                        "iyz": (1, 2),
                        "izz": (2, 2),
                    }.items()
                },
            )
            el.insert(0, new)
    if "friction" in result.identified or "inertial" in result.identified:
        joints = {el.get("name"): el for el in root.findall("joint")}
        for j, name in enumerate(model.joint_names):
            el = joints[name]
            dyn = el.find("dynamics")
            if dyn is None:
                dyn = ET.SubElement(el, "dynamics")
            dyn.set("damping", f"{result.viscous[j]:.12g}")
            dyn.set("friction", f"{result.coulomb[j]:.12g}")
    if np.any(result.armature > 0):
        notes.append("armature is not a URDF quantity: it is in the parameter file only")
    ET.indent(root)
    return ET.tostring(root, encoding="unicode") + "\n", notes


def table(result: Identification) -> str:
    """Per-joint validation RMS before and after, as text."""
    lines = [
        f"{'':<22}{'held-out torque RMS, N m (N)':^32} | {'moving samples only':^32}",
        f"{'joint':<22}" + f"{'URDF':>12}{'identified':>12}{'ratio':>8} | " * 2,
    ]
    lines[1] = lines[1][:-3]
    lines.append("-" * len(lines[1]))

    def ratio(a: float, b: float) -> float:
        return b / a if a > 0 else float("nan")

    for j, name in enumerate(result.joint_names):
        a, b = result.rms_model[j], result.rms_identified[j]
        c, d = result.rms_model_moving[j], result.rms_identified_moving[j]
        lines.append(
            f"{name:<22}{a:>12.4g}{b:>12.4g}{ratio(a, b):>8.3f} | {c:>12.4g}{d:>12.4g}{ratio(c, d):>8.3f}"
        )
    lines.append("-" * len(lines[1]))
    lines.append("moving samples: the joint faster than --min-speed (the rows that are fitted)")
    lines.append(
        f"base regressor: rank {result.rank} of {result.free} free parameters, "
        f"{result.rank - len(result.unexcited)} excited by the data, "
        f"condition number {result.condition_number:.4g} (over the excited ones)"
    )
    lines.append(f"samples: {result.train_samples} to fit, {result.validation_samples} to validate")
    if "friction" in result.identified or "inertial" in result.identified:
        lines.append("viscous: " + " ".join(f"{x:.4g}" for x in result.viscous))
        lines.append("coulomb: " + " ".join(f"{x:.4g}" for x in result.coulomb))
        lines.append("armature: " + " ".join(f"{x:.4g}" for x in result.armature))
    if result.payload is not None:
        p = result.payload
        lines.append(f"payload on {p.link}: {p.mass:.4g} kg at ({', '.join(f'{x:.4g}' for x in p.com)}) m")
    bad = [c.link for c in result.consistency if not c.ok]
    lines.append("physically consistent bodies: " + ("all" if not bad else f"all but {', '.join(bad)}"))
    lines.extend(f"note: {note}" for note in result.notes)
    return "\n".join(lines)


def plot(path: Path, model: RobotModel, result: Identification, valid: Samples) -> None:
    """Measured vs predicted efforts on the validation samples, one panel per joint."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    step = max(1, len(valid) // 4000)
    part = valid.part(slice(0, len(valid), step))
    v = result.smoothing_velocity
    before = predict(model, valid, result.model_parameters, smoothing_velocity=v)[::step]
    after = predict(model, valid, result.parameters, smoothing_velocity=v)[::step]
    n = model.nv
    fig, axes = plt.subplots(n, 1, figsize=(10, 1.8 * n + 1), sharex=True, squeeze=False)
    t = part.t - valid.t[0]
    for j, ax in enumerate(axes[:, 0]):
        ax.plot(t, part.tau[:, j], "k", lw=1.2, label="measured")
        ax.plot(t, before[:, j], "tab:red", lw=0.8, label=f"URDF (RMS {result.rms_model[j]:.3g})")
        ax.plot(
            t,
            after[:, j],
            "tab:blue",
            lw=0.8,
            ls="--",
            label=f"identified (RMS {result.rms_identified[j]:.3g})",
        )
        ax.set_ylabel(f"{model.joint_names[j]}\nN m", fontsize=8)
        ax.legend(loc="upper right", fontsize=7, ncol=3)
    axes[-1, 0].set_xlabel("time in the validation part, s")
    fig.suptitle(
        f"efforts on held-out samples; base regressor condition number {result.condition_number:.3g}"
    )
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def run(args: argparse.Namespace) -> int:
    urdf, model, samples, facts = load(args)
    if args.payload_link is not None and args.payload_link not in model.link_frames:
        raise BadInput(f"--payload-link '{args.payload_link}' is not a link of the model")
    try:
        result = identify(
            model,
            samples,
            args.identify,
            payload_link=args.payload_link,
            payload_inertia=args.payload_inertia,
            armature=args.armature,
            split=args.split,
            prior_weight=args.prior_weight,
            smoothing_velocity=args.smoothing_velocity,
            min_speed=args.min_speed,
        )
    except ValueError as exc:
        raise BadInput(str(exc)) from None
    if facts["gaps"]:
        print(
            f"recording: {facts['gaps']} gaps (lost messages; longest "
            f"{facts['longest_gap_s'] * 1e3:.4g} ms): "
            + (f"{facts['stretches']} stretch(es) filtered on their own, " if facts["cutoff_hz"] else "")
            + f"{facts['samples_kept']} of {facts['messages']} samples kept"
        )
    print(table(result))
    warnings = check(model, samples, result, args.max_condition)
    if args.out_params:
        args.out_params.write_text(params_yaml(result, args))
        print(f"wrote {args.out_params}")
    urdf_notes: list[str] = []
    if args.urdf_out:
        text, urdf_notes = corrected_urdf(urdf, model, result)
        args.urdf_out.write_text(text)
        for note in urdf_notes:
            print(f"note: {note}")
        print(f"wrote {args.urdf_out}")
    if args.report_dir:
        args.report_dir.mkdir(parents=True, exist_ok=True)
        report = {**facts, **result.to_dict(), "urdf_notes": urdf_notes, "warnings": warnings}
        (args.report_dir / "report.json").write_text(json.dumps(report, indent=2) + "\n")
        start = result.train_samples if result.validation_samples < len(samples) else 0
        plot(args.report_dir / "efforts.png", model, result, samples.part(slice(start, len(samples))))
        print(f"wrote {args.report_dir / 'report.json'} and {args.report_dir / 'efforts.png'}")
    for warning in warnings:
        print(f"{PROG}: warning: {warning}", file=sys.stderr)
    return EXIT_WARNINGS if warnings else 0


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        return run(args)
    except BadInput as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT


if __name__ == "__main__":
    sys.exit(main())
