"""Numbers, table, targets and plot of the mismatch demo (no ROS; matplotlib only for the plot).

`reports` are identify's report.json of run A (inertials, friction, armature; no load) and run B
(the payload, run A's model held; absent for a foreign plant, which has no tool), per-joint arrays
in their `joints` order; the plant's arrays follow `plant.joints`; everything is mapped by joint
name. Tracking errors in degrees, torques in N m, friction in N m s/rad and N m, armature in
kg m², payload in kg and m (payload link frame).

A foreign plant (an MJCF, `plant.mjcf`) is judged on what the issue asks of a robot someone else
modelled: tracking, held-out torque on every joint, and the identified model's largest error
(FOREIGN_TARGETS); its friction is printed, not judged (MuJoCo's frictionloss is a soft
constraint, not the node's tanh Coulomb model, so the two coefficients need not agree).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from rnea_ros.sim.cli import save_figure
from rnea_ros.sim.plant import PAYLOAD_COM, PAYLOAD_MASS, Plant
from rnea_ros.sim.report import Recording

TRACKING_RATIO = 5.0  # tracking RMS, URDF model over identified, per joint
HELD_OUT_RATIO = 0.10  # held-out torque RMS where the joint moves, identified over URDF, joints 1-6
HELD_OUT_JOINTS = 6
FRICTION_ERROR = 0.10  # relative, viscous and Coulomb
PAYLOAD_MASS_ERROR = 0.05  # relative
PAYLOAD_COM_ERROR = 0.01  # m
MAX_ERROR = 1.0  # deg, the identified model's largest tracking error (foreign plant)
TARGETS = (
    f"tracking RMS >= {TRACKING_RATIO:g}x lower with the identified model on every joint, held-out "
    f"torque RMS <= {100 * HELD_OUT_RATIO:g} % of the URDF model's on joints 1-{HELD_OUT_JOINTS} "
    f"where they move, viscous and Coulomb within {100 * FRICTION_ERROR:g} %, payload mass within "
    f"{100 * PAYLOAD_MASS_ERROR:g} % and com within {100 * PAYLOAD_COM_ERROR:g} cm"
)
FOREIGN_TARGETS = (
    f"tracking RMS >= {TRACKING_RATIO:g}x lower with the identified model on every joint, held-out "
    f"torque RMS <= {100 * HELD_OUT_RATIO:g} % of the URDF model's on every joint where it moves, "
    f"the identified model's max tracking error < {MAX_ERROR:g} deg"
)


def targets(plant: Plant) -> str:
    """The targets a run on this plant is judged by."""
    return FOREIGN_TARGETS if plant.mjcf else TARGETS


TRUTH = ("damping", "coulomb", "armature")  # Plant fields
IDENTIFIED = ("viscous", "coulomb", "armature")  # identify's report keys
HELD_OUT = ("rms_model", "rms_identified", "rms_model_moving", "rms_identified_moving")


@dataclass(frozen=True)
class Track:
    """One tracking run: error desired − measured over the trajectory's window."""

    label: str
    joints: list[str]
    t: np.ndarray  # (N,) s from the trajectory's start
    error: np.ndarray  # (N, n) deg

    @classmethod
    def of(cls, label: str, rec: Recording, window: tuple[float, float]) -> Track:
        """The window of a recording; ValueError when it holds no joint_states."""
        mask = (rec.t >= window[0]) & (rec.t <= window[1])
        if not mask.any():
            raise ValueError(f"{label}: no joint_states during the trajectory")
        error = np.degrees(rec.q_des[mask] - rec.q[mask])
        return cls(label, list(rec.joints), rec.t[mask] - window[0], error)

    @property
    def rms(self) -> np.ndarray:
        return np.sqrt(np.mean(self.error**2, axis=0))

    @property
    def max(self) -> np.ndarray:
        return np.abs(self.error).max(axis=0)

    def to_dict(self) -> dict:
        return {
            "label": self.label,
            "joints": self.joints,
            "rms_deg": self.rms.tolist(),
            "max_deg": self.max.tolist(),
            "samples": int(self.t.size),
        }


def _by_name(values, names, joints: list[str]) -> np.ndarray:
    names = list(names)
    return np.array([values[names.index(j)] for j in joints], dtype=float)


@dataclass(frozen=True)
class Comparison:
    """Per joint of `joints`: what the table shows and the targets check."""

    joints: list[str]
    rms_urdf: np.ndarray  # tracking, deg
    rms_identified: np.ndarray
    torque_urdf: np.ndarray  # held-out torque RMS, N m, every sample
    torque_identified: np.ndarray
    moving_urdf: np.ndarray  # the same on the samples where the joint moves (|q̇| ≥ min speed)
    moving_identified: np.ndarray
    truth: dict[str, np.ndarray]  # damping, coulomb, armature of the plant
    identified: dict[str, np.ndarray]  # viscous, coulomb, armature
    payload_mass: float  # identified (run B), kg; nan without run B
    payload_com_error: float  # distance to the plant's com, m; nan without run B
    max_identified: np.ndarray  # the identified model's largest tracking error, deg

    @classmethod
    def of(cls, tracks: list[Track], reports: list[dict], plant: Plant) -> Comparison:
        urdf, ident = tracks
        report = reports[0]
        payload: dict = reports[1]["payload"] if len(reports) > 1 else {"mass": np.nan, "com": [np.nan] * 3}
        joints, names = urdf.joints, report["joints"]
        return cls(
            joints,
            urdf.rms,
            ident.rms,
            _by_name(report["rms_model"], names, joints),
            _by_name(report["rms_identified"], names, joints),
            _by_name(report["rms_model_moving"], names, joints),
            _by_name(report["rms_identified_moving"], names, joints),
            {k: _by_name(getattr(plant, k), plant.joints, joints) for k in TRUTH},
            {k: _by_name(report[k], names, joints) for k in IDENTIFIED},
            float(payload["mass"]),
            float(np.linalg.norm(np.subtract(payload["com"], PAYLOAD_COM))),
            ident.max,
        )

    @property
    def tracking_ratio(self) -> np.ndarray:
        return self.rms_urdf / np.maximum(self.rms_identified, 1e-300)

    @property
    def torque_ratio(self) -> np.ndarray:
        """Held-out torque RMS, identified over URDF model, every sample."""
        return self.torque_identified / np.maximum(self.torque_urdf, 1e-300)

    @property
    def moving_ratio(self) -> np.ndarray:
        """The same on the samples where the joint moves (the target: dry friction that sticks
        takes any value within ±F_c, which no model of q, q̇, q̈ predicts)."""
        return self.moving_identified / np.maximum(self.moving_urdf, 1e-300)

    def friction_error(self, which: str) -> np.ndarray:
        """Relative error of the identified viscous or coulomb coefficient (nan where the plant
        has none)."""
        truth = self.truth["damping" if which == "viscous" else "coulomb"]
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(truth > 0, (self.identified[which] - truth) / truth, np.nan)


def table(tracks: list[Track], reports: list[dict], plant: Plant) -> str:
    c = Comparison.of(tracks, reports, plant)
    report = reports[0]
    w = max(12, *map(len, c.joints))
    head = (
        f"{'':<{w}} | {'tracking RMS, deg':^26} | {'run A held-out torque RMS, N m':^34} | "
        f"{'viscous N m s/rad':^20} | {'Coulomb N m':^20} | {'armature kg m2':^13}\n"
        f"{'joint':<{w}} | {'URDF':>8} {'ident':>8} {'ratio':>7} | {'URDF':>7} {'ident':>7} {'ratio':>6} "
        f"{'moving':>10} | " + f"{'plant':>6} {'ident':>6} {'err':>6} | " * 2 + f"{'plant':>6} {'ident':>6}"
    )
    ev, ec = c.friction_error("viscous"), c.friction_error("coulomb")
    rows = [
        f"{j:<{w}} | {c.rms_urdf[k]:>8.4f} {c.rms_identified[k]:>8.4f} {c.tracking_ratio[k]:>6.1f}x | "
        f"{c.torque_urdf[k]:>7.3f} {c.torque_identified[k]:>7.3f} {c.torque_ratio[k]:>6.3f} "
        f"{c.moving_ratio[k]:>10.3f} | "
        f"{c.truth['damping'][k]:>6.3f} {c.identified['viscous'][k]:>6.3f} {100 * ev[k]:>+5.1f}% | "
        f"{c.truth['coulomb'][k]:>6.3f} {c.identified['coulomb'][k]:>6.3f} {100 * ec[k]:>+5.1f}% | "
        f"{c.truth['armature'][k]:>6.3f} {c.identified['armature'][k]:>6.3f}"
        for k, j in enumerate(c.joints)
    ]
    rule = "-" * len(rows[0])
    total = np.sqrt(np.mean(c.rms_urdf**2)) / np.sqrt(np.mean(c.rms_identified**2))
    load = "" if plant.mjcf else " with the tool on"
    foot = (
        f"tracking{load}, all joints: RMS ratio {total:.1f}x ({tracks[0].t.size} / "
        f"{tracks[1].t.size} samples); the identified model's max error "
        f"{float(c.max_identified.max()):.3f} deg\n"
        f"held-out torque: run A{'' if plant.mjcf else ', no load'} (moving: the samples where the joint is "
        f"faster than identify's --min-speed); base regressor condition number "
        f"{report['condition_number']:.3g}, {report['train_samples']} + {report['validation_samples']} "
        "samples (fit + held out)"
    )
    if len(reports) > 1:
        b = reports[1]
        ratio_b = np.array(b["rms_identified"]) / np.maximum(np.array(b["rms_model"]), 1e-300)
        foot += (
            f"\npayload (run B, run A's model held): {c.payload_mass:.4f} kg (plant {PAYLOAD_MASS:g} kg, "
            f"{100 * (c.payload_mass / PAYLOAD_MASS - 1):+.2f} %), com "
            f"{np.round(b['payload']['com'], 4).tolist()} m (plant {PAYLOAD_COM.tolist()}, off by "
            f"{1000 * c.payload_com_error:.2f} mm); run B held-out torque RMS ratio to run A's model "
            + " ".join(f"{x:.3f}" for x in ratio_b)
        )
    return "\n".join([head, rule, *rows, rule, foot])


def check_targets(tracks: list[Track], reports: list[dict], plant: Plant) -> list[str]:
    """The targets of `targets(plant)` that are missed (empty: all met)."""
    c = Comparison.of(tracks, reports, plant)
    foreign = bool(plant.mjcf)
    failed = []
    if not foreign and not abs(c.payload_mass / PAYLOAD_MASS - 1) <= PAYLOAD_MASS_ERROR:
        failed.append(f"payload mass {c.payload_mass:.4g} kg, plant {PAYLOAD_MASS:g} kg")
    if not foreign and not c.payload_com_error <= PAYLOAD_COM_ERROR:
        failed.append(f"payload com off by {1000 * c.payload_com_error:.3g} mm")
    held_out = len(c.joints) if foreign else HELD_OUT_JOINTS
    for k, j in enumerate(c.joints):
        if not c.tracking_ratio[k] >= TRACKING_RATIO:
            failed.append(f"{j}: tracking RMS ratio {c.tracking_ratio[k]:.3g}x < {TRACKING_RATIO:g}x")
        if k < held_out and not c.moving_ratio[k] <= HELD_OUT_RATIO:
            failed.append(
                f"{j}: held-out torque RMS ratio (moving) {c.moving_ratio[k]:.3g} > {HELD_OUT_RATIO:g}"
            )
        if foreign:
            if not c.max_identified[k] < MAX_ERROR:
                failed.append(
                    f"{j}: identified model's max error {c.max_identified[k]:.3g} deg >= {MAX_ERROR:g}"
                )
            continue
        for which in ("viscous", "coulomb"):
            err = c.friction_error(which)[k]
            if not abs(err) <= FRICTION_ERROR:
                failed.append(f"{j}: {which} off by {100 * err:+.1f} %")
    return failed


def plot(tracks: list[Track], path: Path, title: str = "") -> Path:
    """Tracking error per joint over the test trajectory, both models (deg, log); PNG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    joints = tracks[0].joints
    size = (10, 1.6 * len(joints) + 1.2)
    fig, axes = plt.subplots(len(joints), 1, figsize=size, sharex=True, squeeze=False)
    for j, name in enumerate(joints):
        ax = axes[j, 0]
        for k, track in enumerate(tracks):
            error = np.maximum(np.abs(track.error[:, j]), 1e-6)
            ax.semilogy(track.t, error, f"C{k}", lw=0.8, label=track.label)
        rms = ", ".join(f"{track.label} {track.rms[j]:.3g}" for track in tracks)
        ax.set_title(f"RMS {rms} deg", fontsize=7, loc="right")  # above the panel, not over the data
        ax.set_ylabel(f"{name}\n|error| deg", fontsize=8)
        ax.tick_params(labelsize=7)
        ax.grid(alpha=0.3)
    axes[-1, 0].set_xlabel("s from the start of the test trajectory")
    fig.suptitle(title or "tracking error: URDF model vs identified model, same PD gains")
    handles, labels = axes[0, 0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=len(tracks), fontsize=8)
    return save_figure(fig, path, rect=(0, 0.03, 1, 1))
