"""Metrics, table and plot of a closed-loop run (no ROS; matplotlib only for the plot).

Times are simulated seconds, angles rad in the recording and degrees in the table and plot,
efforts N m (or N), latencies s in the recording and ms in the table.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from rnea_ros.errors import RneaError
from rnea_ros.sim.cli import save_figure
from rnea_ros.sim.scenario import SETTLE


class RealTimeLost(RneaError, RuntimeError):
    """A real-time run stopped early: the machine did not keep real time (the message says how
    far it was off); `recording` holds the run until then when it could be saved."""

    recording: Recording | None = None
    unrecorded: str = ""  # why `recording` is None


@dataclass
class Recording:
    """What a run produced, arm joints only, in `joints` order."""

    joints: list[str]
    t: np.ndarray  # (N,) joint_states stamps, s
    q: np.ndarray  # (N, n) measured positions, rad
    q_des: np.ndarray  # (N, n) desired positions (NaN while there is no trajectory), rad
    hold: tuple[float, float]  # window of phase 1 (gravity compensation, at rest), s
    pd: tuple[float, float]  # window of phase 2 (PD alone along the trajectory), s
    ff: tuple[float, float]  # window of phase 3 (PD + RNEA feedforward along the trajectory), s
    terms: dict[str, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)  # term → (t, effort)
    latencies: np.ndarray = field(default_factory=lambda: np.zeros(0))  # state → command, s
    guard_trips: int = 0  # friction runaway guard trips seen on /diagnostics
    faded: list[str] = field(default_factory=list)  # joints whose friction term the guard faded
    applied: np.ndarray | None = None  # (N, n) effort the simulator applied from each state, N m
    overruns: int = 0  # times the simulator fell so far behind real time that its plant slipped


@dataclass(frozen=True)
class Summary:
    """The numbers of a run (degrees, ms)."""

    joints: list[str]
    hold_seconds: float
    drift: np.ndarray  # (n,) max |q(t) − q(start)| during the hold, deg
    rms_pd: np.ndarray  # (n,) deg
    max_pd: np.ndarray
    rms_ff: np.ndarray
    max_ff: np.ndarray
    latency_ms: tuple[float, float, int]  # p50, p99, samples
    samples: tuple[int, int, int]  # joint_states samples in each window
    states: int = 0  # joint_states of the whole run (distinct stamps)
    guard_trips: int = 0
    faded: tuple[str, ...] = ()

    @property
    def improvement(self) -> np.ndarray:
        """RMS error of PD alone over RMS error with feedforward, per joint."""
        return self.rms_pd / np.maximum(self.rms_ff, 1e-300)

    def to_dict(self) -> dict:
        """Plain values (lists, floats) for JSON."""
        per_joint = ("drift", "rms_pd", "max_pd", "rms_ff", "max_ff", "improvement")
        return {
            "joints": list(self.joints),
            "hold_seconds": self.hold_seconds,
            **{name: [float(x) for x in getattr(self, name)] for name in per_joint},
            "latency_ms": {"p50": self.latency_ms[0], "p99": self.latency_ms[1], "count": self.latency_ms[2]},
            "samples": list(self.samples),
            "states": self.states,
            "guard_trips": self.guard_trips,
            "faded": list(self.faded),
        }


def _window(rec: Recording, window: tuple[float, float]) -> np.ndarray:
    return (rec.t >= window[0]) & (rec.t <= window[1])


def summarize(rec: Recording) -> Summary:
    """Hold drift, tracking errors and latency of a recording; ValueError if a window is empty."""
    masks = [_window(rec, w) for w in (rec.hold, rec.pd, rec.ff)]
    for name, m in zip(("hold", "PD", "feedforward"), masks, strict=True):
        if not m.any():
            raise ValueError(f"no joint_states in the {name} window")
    hold = rec.q[masks[0]]
    drift = np.degrees(np.abs(hold - hold[0]).max(axis=0))

    def errors(mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        e = np.degrees(rec.q_des[mask] - rec.q[mask])
        return np.sqrt(np.mean(e**2, axis=0)), np.abs(e).max(axis=0)

    rms_pd, max_pd = errors(masks[1])
    rms_ff, max_ff = errors(masks[2])
    lat = np.asarray(rec.latencies, dtype=float)
    latency = (
        (float(np.percentile(lat, 50) * 1e3), float(np.percentile(lat, 99) * 1e3), lat.size)
        if lat.size
        else (float("nan"), float("nan"), 0)
    )
    return Summary(
        list(rec.joints),
        float(rec.t[masks[0]][-1] - rec.t[masks[0]][0]),
        drift,
        rms_pd,
        max_pd,
        rms_ff,
        max_ff,
        latency,
        (int(masks[0].sum()), int(masks[1].sum()), int(masks[2].sum())),
        int(rec.t.size),
        int(rec.guard_trips),
        tuple(rec.faded),
    )


def largest_errors(rec: Recording) -> tuple[float | None, float | None]:
    """The largest |q_des − q| (deg) with the model terms compensated (hold, settling, PD + RNEA)
    and with PD alone, q_des being the start pose before the first trajectory; None where there
    is no sample. PD alone: from the end of the hold (the demo switches the model terms off once
    phase 2's trajectory is requested, before it starts) until SETTLE s after its trajectory,
    when the model has pulled the arm back; nothing before phase 2 was requested (`pd` inf)."""
    desired = np.where(np.isnan(rec.q_des), rec.q[:1], rec.q_des) if rec.q.size else rec.q
    error = np.degrees(np.abs(desired - rec.q)).max(axis=1) if rec.q.size else np.zeros(0)
    alone = (rec.t >= rec.hold[1]) & (rec.t < rec.pd[1] + SETTLE) & bool(np.isfinite(rec.pd[0]))

    def worst(mask: np.ndarray) -> float | None:
        return float(error[mask].max()) if mask.any() else None

    return worst(~alone), worst(alone)


def table(s: Summary) -> str:
    """A plain-text table of the summary, one row per joint."""
    w = max(14, *map(len, s.joints))
    head = (
        f"{'joint':<{w}} {'hold drift':>10} | {'PD alone':^19} | {'PD + RNEA':^19} | {'RMS':>7}\n"
        f"{'':<{w}} {'deg':>10} | {'RMS deg':>9} {'max deg':>9} | {'RMS deg':>9} {'max deg':>9} | "
        f"{'ratio':>7}"
    )
    rows = [
        f"{j:<{w}} {d:>10.2e} | {rp:>9.4f} {mp:>9.4f} | {rf:>9.4f} {mf:>9.4f} | {r:>6.0f}x"
        for j, d, rp, mp, rf, mf, r in zip(
            s.joints, s.drift, s.rms_pd, s.max_pd, s.rms_ff, s.max_ff, s.improvement, strict=True
        )
    ]
    rule = "-" * len(rows[0])
    p50, p99, count = s.latency_ms
    answered = f" for {s.states} joint_states ({100 * count / s.states:.0f}%)" if s.states else ""
    foot = (
        f"hold: {s.hold_seconds:.2f} s from rest; windows: {s.samples[0]} / {s.samples[1]} / {s.samples[2]}"
        f" joint_states\ncommand latency, joint_states published -> command received: p50 {p50:.3f} ms, "
        f"p99 {p99:.3f} ms ({count} commands{answered})\nfriction runaway guard: {s.guard_trips} trips"
        + (f", faded {' '.join(s.faded)}" if s.faded else "")
    )
    return "\n".join([head, rule, *rows, rule, foot])


def check_targets(s: Summary, drift_deg: float = 0.1, ratio: float = 10.0, max_deg: float = 1.0) -> list[str]:
    """The targets that are not met (empty: all met): drift < drift_deg on every joint, RMS ratio
    >= `ratio` on every joint, max error with feedforward < max_deg on every joint, no friction
    term faded out by the runaway guard."""
    failed = [f"{j}: friction term faded out by the runaway guard" for j in s.faded]
    for j, d, r, m in zip(s.joints, s.drift, s.improvement, s.max_ff, strict=True):
        if not d < drift_deg:
            failed.append(f"{j}: hold drift {d:.3g} deg >= {drift_deg}")
        if not r >= ratio:
            failed.append(f"{j}: RMS improvement {r:.3g}x < {ratio}x")
        if not m < max_deg:
            failed.append(f"{j}: max error with feedforward {m:.3g} deg >= {max_deg}")
    return failed


def plot(rec: Recording, path: Path, title: str = "") -> Path:
    """Per joint: desired vs measured position, tracking error (deg, log), the effort the
    simulator applied (clamped, as the arm got it) and, when recorded, the node's terms (N m);
    written as PNG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    n = len(rec.joints)
    fig, axes = plt.subplots(n, 3, figsize=(18, 2.0 * n + 1.5), sharex=True, squeeze=False)
    phases = (
        ("hold", rec.hold, "#dddddd"),
        ("PD alone", rec.pd, "#f6d5d5"),
        ("PD + RNEA", rec.ff, "#d5f0d5"),
    )
    legend: dict[str, Any] = {}  # one legend for the whole figure, label → handle
    for j, name in enumerate(rec.joints):
        ax_q, ax_e, ax_tau = axes[j]
        for label, (t0, t1), color in phases:
            for ax in (ax_q, ax_e, ax_tau):
                legend[label] = ax.axvspan(t0, t1, color=color, lw=0)
        (legend["desired"],) = ax_q.plot(rec.t, np.degrees(rec.q_des[:, j]), "k--", lw=1.0)
        (legend["measured"],) = ax_q.plot(rec.t, np.degrees(rec.q[:, j]), "C0", lw=1.0)
        ax_q.set_ylabel(f"{name}\ndeg", fontsize=8)
        with np.errstate(invalid="ignore"):
            error = np.abs(np.degrees(rec.q_des[:, j] - rec.q[:, j]))
        ax_e.semilogy(rec.t, np.maximum(error, 1e-6), "C3", lw=0.8)
        ax_e.set_ylabel("|error| deg", fontsize=8)
        for k, (term, (t, effort)) in enumerate(rec.terms.items()):
            if effort.size and np.any(effort[:, j] != 0):
                (legend[f"{term} (N m)"],) = ax_tau.plot(t, effort[:, j], color=f"C{k + 1}", lw=0.8)
        if rec.applied is not None:
            (legend["applied (N m)"],) = ax_tau.plot(rec.t, rec.applied[:, j], "k", lw=0.6)
        ax_tau.set_ylabel("N m", fontsize=8)
        for ax in (ax_q, ax_e, ax_tau):
            ax.tick_params(labelsize=7)
            ax.grid(alpha=0.3)
    axes[0, 0].set_title("position: desired vs measured")
    axes[0, 1].set_title("tracking error |desired - measured|")
    axes[0, 2].set_title(
        "applied effort (simulator)" + (" and terms (inverse_dynamics ~/terms)" if rec.terms else "")
    )
    for ax in axes[-1]:
        ax.set_xlabel("simulated time, s")
    if title:
        fig.suptitle(title)
    fig.legend(legend.values(), legend.keys(), loc="lower center", ncol=len(legend), fontsize=8)
    return save_figure(fig, path, rect=(0, 0.025, 1, 1))
