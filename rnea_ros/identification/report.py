"""What rnea_ros_identify prints and draws: the per-joint held-out torque RMS of the model before
and after identification as a table of fixed-width columns, and measured vs predicted efforts on
the held-out samples."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from rnea_ros.identification.fit import Identification
from rnea_ros.identification.prediction import predict
from rnea_ros.identification.signals import Samples
from rnea_ros.model.robot_model import RobotModel


def pooled(result: Identification, rms: np.ndarray) -> float:
    """RMS over the fitted joints' held-out samples (every joint has as many): √(mean of rms²)."""
    fit = [j in result.fit_joints for j in result.joint_names] if result.fit_joints else [True] * len(rms)
    values = np.asarray(rms, dtype=float)[fit]
    top = float(np.max(values, initial=0.0))
    return top * float(np.sqrt(np.mean((values / top) ** 2))) if top > 0 and np.isfinite(top) else top


COLUMN = 12  # characters of a number column: any float as .4g is at most 11 ("-1.234e-308"), then a space
NO_MOVING = "no moving sample"


def _number(x: float) -> str:
    return f"{x:>{COLUMN}.4g}"


def _columns(before: float, after: float) -> str:
    """URDF, identified and their ratio, three columns."""
    if before > 0:
        with np.errstate(over="ignore"):
            ratio = _number(float(np.float64(after) / np.float64(before)))
    else:
        ratio = f"{'n/a':>{COLUMN}}"
    return _number(before) + _number(after) + ratio


def table(result: Identification) -> str:
    """Per-joint validation RMS before and after, as text: fixed-width columns that hold any value
    (the name column as wide as the longest name); a joint with no moving held-out sample says so."""
    name_width = max(22, *(len(name) + 2 for name in result.joint_names))
    section = 3 * COLUMN
    header = f"{'URDF':>{COLUMN}}{'identified':>{COLUMN}}{'ratio':>{COLUMN}}"
    lines = [
        f"{'':<{name_width}}{'held-out torque RMS, N m (N)':^{section}} | {'moving samples only':^{section}}",
        f"{'joint':<{name_width}}{header} | {header}",
    ]
    rule = "-" * len(lines[1])
    lines.append(rule)
    counts = result.validation_moving_samples
    for j, name in enumerate(result.joint_names):
        if result.fit_joints and name not in result.fit_joints:
            lines.append(f"{name:<{name_width}}{'(effort not fitted, not scored)':<{section}} |")
            continue
        every = _columns(result.rms_model[j], result.rms_identified[j])
        if len(counts) and counts[j] == 0:
            moving = f"{NO_MOVING:^{section}}"
        else:
            moving = _columns(result.rms_model_moving[j], result.rms_identified_moving[j])
        lines.append(f"{name:<{name_width}}{every} | {moving}")
    lines.append(rule)
    a, b = pooled(result, result.rms_model), pooled(result, result.rms_identified)
    lines.append(f"{'pooled, fitted joints':<{name_width}}{_columns(a, b)} |")
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
    return "\n".join(line.rstrip() for line in lines)


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
        ax.plot(t, before[:, j], "tab:red", lw=0.8, label="URDF model")
        ax.plot(t, after[:, j], "tab:blue", lw=0.8, ls="--", label="identified model")
        rms = f"RMS URDF {result.rms_model[j]:.3g}, identified {result.rms_identified[j]:.3g} N m"
        ax.set_title(rms, fontsize=7, loc="right")  # above the panel: no legend over the data
        ax.set_ylabel(f"{model.joint_names[j]}\nN m", fontsize=8)
    axes[-1, 0].set_xlabel("time in the validation part, s")
    fig.suptitle(
        f"efforts on held-out samples; base regressor condition number {result.condition_number:.3g}"
    )
    handles, labels = axes[0, 0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=3, fontsize=8)
    fig.tight_layout(rect=(0, 0.025, 1, 1))
    fig.savefig(path, dpi=90)
    plt.close(fig)
