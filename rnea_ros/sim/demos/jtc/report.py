"""Metrics, table and plot of the joint_trajectory_controller demo (`rnea_ros.sim.demos.jtc.demo`); no
ROS, matplotlib only for the plot.

A run is the simulated arm executing one trajectory under the simulated JTC. The desired state is
rebuilt from the trajectory JTC received, as JTC samples it: positions from its spline
(`TrajectorySampler`), efforts linearly interpolated between the points. Times are simulated
seconds from the trajectory start; angles rad in the data, degrees in the table and plot; efforts
N m.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from rnea_ros.sim.cli import save_figure
from rnea_ros.sim.jtc import Gains, JointTrajectoryController
from rnea_ros.trajectory.sampling import TrajectorySampler

if TYPE_CHECKING:  # matplotlib is imported where it is used (plot)
    from matplotlib.artist import Artist


@dataclass(frozen=True)
class Points:
    """A JointTrajectory's points in the arm's joint order: times (K,), positions etc. (K, n);
    velocities, accelerations, efforts None when the message had none."""

    times: np.ndarray
    positions: np.ndarray
    velocities: np.ndarray | None = None
    accelerations: np.ndarray | None = None
    efforts: np.ndarray | None = None

    def desired(self, t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(q_d, τ_d) (N, n) at times t from the start, as JTC samples them (τ_d = 0 without
        efforts; the last point held after the end)."""
        sampler = TrajectorySampler(self.times, self.positions, self.velocities, self.accelerations)
        q_d = sampler.sample(np.asarray(t, dtype=float))[0]
        if self.efforts is None:
            return q_d, np.zeros_like(q_d)
        tau = np.stack(
            [np.interp(t, self.times, self.efforts[:, j]) for j in range(self.efforts.shape[1])], axis=1
        )
        return q_d, tau


@dataclass
class Run:
    """One closed-loop run: joint_states of the arm (t from the trajectory start) and the
    trajectory the simulated JTC executed."""

    name: str
    joints: list[str]
    t: np.ndarray  # (N,) s
    q: np.ndarray  # (N, n) measured, rad
    u: np.ndarray  # (N, n) applied efforts (JTC's command), N m
    points: Points
    qd: np.ndarray | None = None  # (N, n) measured velocities, rad/s (the real JTC's runs)

    @property
    def duration(self) -> float:
        return float(self.points.times[-1])

    def tracking(self) -> tuple[np.ndarray, np.ndarray]:
        """(RMS, max) |q_d − q| per joint over the trajectory, deg."""
        inside = (self.t >= 0) & (self.t <= self.duration)
        q_d, _ = self.points.desired(self.t[inside])
        error = np.degrees(q_d - self.q[inside])
        return np.sqrt(np.mean(error**2, axis=0)), np.max(np.abs(error), axis=0)


def replay(run: Run, gains: Gains, period: float) -> np.ndarray:
    """The commands (N, n) rnea_ros.sim.jtc gives for the run's measured states at the run's
    times, the trajectory taken at t = 0 (as the real JTC took it: `run.t` counts from its
    first sample): the simulated JTC on exactly the real one's inputs. Needs `run.qd`."""
    assert run.qd is not None, "replay needs the measured velocities"
    jtc = JointTrajectoryController(len(run.joints), gains, period)
    jtc.hold(run.q[0])
    p = run.points
    jtc.receive(0.0, p.times, p.positions, p.velocities, p.accelerations, p.efforts)
    return np.array([jtc.update(t, q, qd) for t, q, qd in zip(run.t, run.q, run.qd, strict=True)])


def agreement(run: Run, gains: Gains, period: float) -> dict[str, list[float]]:
    """Per joint, RMS and max |u_real − u_sim| (N m) over the run's steps from the trajectory's
    start (`replay`)."""
    assert run.qd is not None, "agreement needs the measured velocities"
    inside = run.t >= 0
    sub = Run(run.name, run.joints, run.t[inside], run.q[inside], run.u[inside], run.points, run.qd[inside])
    diff = sub.u - replay(sub, gains, period)
    return {
        "rms": np.sqrt(np.mean(diff**2, axis=0)).tolist(),
        "max": np.max(np.abs(diff), axis=0).tolist(),
        "steps": int(diff.shape[0]),
    }


@dataclass
class Summary:
    """The demo's numbers (degrees, N m, ratios to the effort limit)."""

    joints: list[str]
    rms_pid: np.ndarray
    max_pid: np.ndarray
    rms_ff: np.ndarray
    max_ff: np.ndarray
    effort_limit: np.ndarray
    fast: dict = field(default_factory=dict)  # the too-fast trajectory: see demo.summarize

    @property
    def improvement(self) -> np.ndarray:
        return self.rms_pid / np.maximum(self.rms_ff, 1e-300)

    def to_dict(self) -> dict:
        per_joint = ("rms_pid", "max_pid", "rms_ff", "max_ff", "improvement", "effort_limit")
        return {
            "joints": list(self.joints),
            **{name: [float(x) for x in getattr(self, name)] for name in per_joint},
            "fast": self.fast,
        }


def summarize(pid: Run, ff: Run, effort_limit: np.ndarray, fast: dict) -> Summary:
    rms_pid, max_pid = pid.tracking()
    rms_ff, max_ff = ff.tracking()
    return Summary(list(pid.joints), rms_pid, max_pid, rms_ff, max_ff, np.asarray(effort_limit), fast)


def table(s: Summary) -> str:
    lines = [
        "joint          |   JTC PID alone     | PID + annotated eff.|     RMS",
        "               |   RMS deg   max deg |   RMS deg   max deg |   ratio",
        "-" * 71,
    ]
    for j, name in enumerate(s.joints):
        lines.append(
            f"{name:<14} | {s.rms_pid[j]:9.4f} {s.max_pid[j]:9.4f} | {s.rms_ff[j]:9.4f} {s.max_ff[j]:9.4f} "
            f"| {s.improvement[j]:6.0f}x"
        )
    lines.append("-" * 71)
    f = s.fast
    if f:
        lines += [
            f"too-fast trajectory, on_limit reject: {f['reject']}",
            f"on_limit slow_down: {f['slow_down']}",
            "  max |effort| / limit per joint: unscaled "
            + _ratios(f["unscaled_ratio"])
            + "\n                                   annotated "
            + _ratios(f["annotated_ratio"])
            + "\n                                   applied   "
            + _ratios(f["applied_ratio"]),
        ]
    return "\n".join(lines)


def _ratios(values) -> str:
    return "[" + " ".join(f"{v:.3f}" for v in values) + "]"


def plot(pid: Run, ff: Run, fast: Run | None, unscaled: tuple | None, limit: np.ndarray, path: Path) -> Path:
    """Left: tracking error per joint, PID alone vs PID + annotated efforts (deg, log). Right: the
    too-fast trajectory's efforts / effort limit per joint: unscaled (what it would need), the
    annotated τ_d after slowing down and JTC's applied command. PNG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    n = len(pid.joints)
    fig, axes = plt.subplots(n, 2, figsize=(15, 1.9 * n + 1.5), squeeze=False)
    legend: dict[str, Artist] = {}  # one legend for the whole figure, label → handle
    for j, name in enumerate(pid.joints):
        ax = axes[j, 0]
        for run, color, label in ((pid, "C3", "JTC PID alone"), (ff, "C2", "JTC PID + annotated efforts")):
            inside = (run.t >= 0) & (run.t <= run.duration)
            q_d, _ = run.points.desired(run.t[inside])
            error = np.abs(np.degrees(q_d[:, j] - run.q[inside, j]))
            (legend[label],) = ax.semilogy(run.t[inside], np.maximum(error, 1e-6), color, lw=0.8)
        ax.set_ylabel(f"{name}\n|error| deg", fontsize=8)
        ax.grid(alpha=0.3)
        ax.tick_params(labelsize=7)
        ax = axes[j, 1]
        if fast is not None:
            if unscaled is not None:
                t0, tau0 = unscaled
                (legend["unscaled: needed effort / limit"],) = ax.plot(
                    t0, tau0[:, j] / limit[j], "0.6", lw=1.0, ls="--"
                )
            inside = (fast.t >= 0) & (fast.t <= fast.duration + 0.2)
            _, tau_d = fast.points.desired(fast.t[inside])
            # the annotated effort as a wide pale band, JTC's command a thin dark line on it: where
            # they agree (everywhere but the PID's small share) the line runs inside the band
            (legend["slowed down: annotated effort / limit"],) = ax.plot(
                fast.t[inside], tau_d[:, j] / limit[j], color="C0", lw=4.0, alpha=0.35, solid_capstyle="butt"
            )
            (legend["slowed down: applied (JTC u) / limit"],) = ax.plot(
                fast.t[inside], fast.u[inside, j] / limit[j], color="k", lw=0.8
            )
            for y in (-1, 1):
                ax.axhline(y, color="k", lw=0.8)
            ax.set_ylabel("effort / limit", fontsize=8)
        ax.grid(alpha=0.3)
        ax.tick_params(labelsize=7)
    axes[0, 0].set_title("multi-sine: tracking error (same PID gains)")
    axes[0, 1].set_title("too-fast trajectory: efforts within the limits after slowing down")
    axes[-1, 0].set_xlabel("time from trajectory start, s (simulated)")
    axes[-1, 1].set_xlabel("time from trajectory start, s (simulated)")
    fig.legend(legend.values(), legend.keys(), loc="lower center", ncol=len(legend), fontsize=8)
    return save_figure(fig, path, rect=(0, 0.03, 1, 1))
