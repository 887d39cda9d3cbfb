"""rnea_ros_identify and FIGAROH side by side on a real robot's recording: the TIAGo arm of
../shared/real-data/tiago/ (PAL Robotics TIAGo, 2021-07-01, FIGAROH examples, Apache-2.0;
data: Thanh Nguyen / CNRS / Toward SAS).

    python bench/identify_tiago.py [--split 0.7] [--keep DIR]

1. The CSVs become a rosbag2 of JointState (efforts in drive units, header stamps) and the
   drive constants a node parameter file (`bench/tiago_recording.py`).
2. `rnea_ros_identify` as a user runs it: the excitation window 9.21-67.90 s (the data's rows
   921-6791), `--tip-link hand_palm_link` (the Hey5 hand's joints locked, merged into arm_7's
   body), `--identify inertial friction`, `--fit-joints arm_1..arm_4`, `--effort-params`,
   `--velocity auto`, `--split` of the kept samples to fit, the rest held out; it writes a URDF
   and a parameter file.
3. FIGAROH (`bench/figaroh_tiago.py`, its TIAGo example's pipeline) fitted on the CSV rows of the
   same training times, predicting the rows of the same held-out times.
4. Scored alike on the held-out rows, arm_1-arm_4: RMSE = sqrt(mean of (measured - predicted)^2),
   measured = raw effort x ratio x kmotor as logged (not filtered), per joint and pooled over the
   four joints. rnea_ros: the model of the files it wrote, read back as the node builds it (URDF +
   parameter file), its rigid-body dynamics + friction at its own states (low-passed positions,
   their derivatives). FIGAROH: its base parameters at its states. Baseline: the nominal URDF
   model at rnea_ros's states, as the node would run it (inertials and the URDF's
   <dynamics damping friction>), and FIGAROH's own nominal (inertials only) at its states.

Target: rnea_ros's pooled held-out RMSE <= FIGAROH's and <= 0.5 x the nominal model's (exit 1
otherwise). Also printed: FIGAROH fitted on the whole excitation, its fit RMSE on those rows, next
to the figure it published (0.884 N m): the check that FIGAROH runs here as it did there.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import figaroh_tiago  # noqa: E402
import tiago_recording as tr  # noqa: E402

from rnea_ros import Friction, RobotModel, friction_torques, rnea  # noqa: E402
from rnea_ros.identification import cli  # noqa: E402
from rnea_ros.identification.written import reload  # noqa: E402

URDF = tr.DATA / "tiago_48_hey5.urdf"
TIP = "hand_palm_link"
PUBLISHED_FIT_RMSE = 0.884  # N m, FIGAROH on the excitation rows, arm_1-arm_4 pooled (the data's README)


def rows_between(t: np.ndarray, span: list[float]) -> np.ndarray:
    """CSV rows whose time is within span (s since the first message), to the microsecond."""
    return np.flatnonzero((t >= span[0] - 1e-6) & (t <= span[1] + 1e-6))


def node_efforts(model: RobotModel, smoothing: float, q, qd, qdd) -> np.ndarray:
    """The efforts the node's model gives: rigid-body dynamics (armature included) + friction."""
    return rnea(model, q, qd, qdd) + friction_torques(Friction(model.damping, model.coulomb, smoothing), qd)


def rmse(measured: np.ndarray, predicted: np.ndarray) -> tuple[np.ndarray, float]:
    err = measured - predicted
    return np.sqrt(np.mean(err**2, axis=0)), float(np.sqrt(np.mean(err**2)))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--split", type=float, default=0.7, help="fraction of the excitation fitted")
    ap.add_argument("--keep", type=Path, help="keep the bag, the written files and the report here")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        out = args.keep or Path(tmp)
        out.mkdir(parents=True, exist_ok=True)
        bag = out / "tiago_bag"
        if not bag.exists():
            tr.write_bag(bag)
        tr.effort_params(out / "drives.yaml")
        t, _, _, raw = tr.load()
        first, last = t[tr.EXCITATION[0]], t[tr.EXCITATION[1] - 1]
        arguments = [str(bag), "--urdf", str(URDF), "--tip-link", TIP, "--identify", "inertial", "friction"]
        arguments += ["--window", f"{first:.6f}", f"{last:.6f}", "--fit-joints", *tr.SCORED]
        arguments += ["--effort-params", str(out / "drives.yaml"), "--split", str(args.split)]
        written = ["--out-params", str(out / "identified.yaml"), "--urdf-out", str(out / "identified.urdf")]
        print(f"$ rnea_ros_identify {' '.join(arguments + written)} --report-dir {out / 'report'}")
        clock = time.perf_counter()
        log = io.StringIO()
        with contextlib.redirect_stdout(log):
            code = cli.main([*arguments, *written, "--report-dir", str(out / "report")])
        ours_s = time.perf_counter() - clock
        print("\n".join(f"  {line}" for line in log.getvalue().splitlines() if line.startswith("velocity")))
        if code not in (0, cli.EXIT_WARNINGS):
            print(f"rnea_ros_identify exited with {code}")
            return 1
        report = json.loads((out / "report" / "report.json").read_text())
        train, held = rows_between(t, report["train_time_s"]), rows_between(t, report["validation_time_s"])

        # rnea_ros: the written files, read back, at the CLI's own states on the held-out samples
        _, _, samples, _, _ = cli.load(cli.parse_args(arguments))
        at = np.searchsorted(samples.t, t[held] - 1e-6)
        if not np.allclose(samples.t[at], t[held], atol=1e-6):
            raise RuntimeError("the held-out CSV rows are not the CLI's held-out samples")
        part = samples.part(at)
        files = [(out / name).read_text() for name in ("identified.urdf", "identified.yaml")]
        model, smoothing = reload(*files, None, None)
        nominal = RobotModel.from_urdf(URDF.read_text(), tip_link=TIP)
        scored = [model.joint_names.index(j) for j in tr.SCORED]
        ours = node_efforts(model, smoothing, part.q, part.qd, part.qdd)[:, scored]
        urdf = node_efforts(nominal, 0.01, part.q, part.qd, part.qdd)[:, scored]

        clock = time.perf_counter()
        with contextlib.redirect_stdout(io.StringIO()):
            fig = figaroh_tiago.run(train, held, URDF)
        fig_s = time.perf_counter() - clock
        # FIGAROH as published: fitted on the whole excitation, its fit RMSE on those rows
        excitation = np.arange(*tr.EXCITATION)
        with contextlib.redirect_stdout(io.StringIO()):
            published = figaroh_tiago.run(excitation, excitation, URDF)["fit_rmse"]

    measured = tr.torques(raw)[held][:, [tr.JOINTS.index(j) for j in tr.SCORED]]
    if not np.allclose(fig["measured"], measured, rtol=0, atol=1e-9):
        raise RuntimeError("FIGAROH's held-out efforts are not the measured ones")
    results = {
        "rnea_ros (written files)": rmse(measured, ours),
        "FIGAROH": rmse(measured, fig["predicted"]),
        "nominal URDF, node's model": rmse(measured, urdf),
        "nominal URDF, FIGAROH's": rmse(measured, fig["nominal"]),
    }
    print(f"\n{tr.ATTRIBUTION}")
    print(
        f"training rows {train[0]}-{train[-1]} ({train.size}, {t[train[0]]:.2f}-{t[train[-1]]:.2f} s), "
        f"held-out rows {held[0]}-{held[-1]} ({held.size}, {t[held[0]]:.2f}-{t[held[-1]]:.2f} s, the last "
        f"{100 * held.size / (tr.EXCITATION[1] - tr.EXCITATION[0]):.0f} % of the excitation)"
    )
    print("held-out RMSE, N m (measured: raw effort x ratio x kmotor, unfiltered)")
    print(f"{'model':<30}" + "".join(f"{j:>13}" for j in tr.SCORED) + f"{'pooled':>10}")
    for name, (per_joint, pooled) in results.items():
        print(f"{name:<30}" + "".join(f"{x:>13.3f}" for x in per_joint) + f"{pooled:>10.3f}")
    print(
        f"base parameters: rnea_ros {report['rank']} (condition {report['condition_number']:.3g}), "
        f"FIGAROH {fig['base_parameters']}; FIGAROH's fit RMSE on its (decimated) training rows "
        f"{fig['fit_rmse']:.3f}"
    )
    print(
        f"FIGAROH fitted on the whole excitation (rows {tr.EXCITATION[0]}-{tr.EXCITATION[1] - 1}, its "
        f"published setting): fit RMSE {published:.3f} N m (published: {PUBLISHED_FIT_RMSE})"
    )
    print(f"time (wall): rnea_ros_identify {ours_s:.1f} s (bag to written files), FIGAROH {fig_s:.1f} s")
    ours_pooled = results["rnea_ros (written files)"][1]
    half_nominal = 0.5 * results["nominal URDF, node's model"][1]
    target = min(results["FIGAROH"][1], half_nominal)
    verdict = "met" if ours_pooled <= target else "MISSED"
    print(
        f"target: rnea_ros <= FIGAROH ({results['FIGAROH'][1]:.3f}) and <= 0.5 x nominal "
        f"({half_nominal:.3f}): {ours_pooled:.3f}, {verdict}"
    )
    return 0 if verdict == "met" else 1


if __name__ == "__main__":
    sys.exit(main())
