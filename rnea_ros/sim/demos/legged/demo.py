"""`python -m rnea_ros.demo --quadruped | --humanoid`: legged robots standing in MuJoCo, in one
process (no ROS), joint PD alone against PD + the package's contact-consistent inverse dynamics.

Robots (example-robot-data, scenes from `rnea_ros.sim.demos.legged.scene`):
  - quadruped: solo12 on four point feet (spheres of 1 cm at the FOOT links), μ = 0.8, SRDF
    "standing" posture. Runs: stand (a = 0: gravity compensation), then a squat: the base goes
    down by SQUAT_DEPTH and up again (cosine, SQUAT_PERIOD per squat), level, feet fixed, the
    joint trajectory from the model's kinematics (inverse kinematics of the feet with the
    package's link_pose / jacobian), a from the trajectory as feedforward.
  - humanoid: TALOS (talos_reduced) on two 6-D sole contacts (rectangles of ±SOLE_HALF_EXTENTS,
    four spheres at the corners in MuJoCo), μ = 0.8, SRDF "half_sitting" posture; the arms,
    head, torso and grippers are held by the same joint PD as the legs.

Control, every 1 ms time step, state read from the simulator (q, v in Pinocchio's free-flyer
layout, base twist in the base frame):
  - PD alone:     τ = Kp (q_d − q) + Kd (q̇_d − q̇)   (joints only);
  - PD + law:     τ = τ_id + Kp (q_d − q) + Kd (q̇_d − q̇), with τ_id the actuated efforts of
    contact_inverse_dynamics(model, q, v, a_d, contacts): M a_d + h = Sᵀ τ_id + J_cᵀ f, the
    forces f in friction pyramids (μ = 0.8) with a minimum normal force, chosen by the QP of
    rnea_ros.algorithms.contact_dynamics.
Both runs start from the same state: the posture, zero velocity, the lowest foot sphere touching
the floor.

Figures per run: base height drift (max |z − z_d|, m), base orientation drift (max angle of
R_dᵀ R, rad), joint tracking RMS (over time and joints, rad), and whether the robot fell (base
below half its start height or tilted beyond FALL_TILT). Target: with the law, each figure at most
TARGET_RATIO × PD alone's, and no fall.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from rnea_ros.algorithms.contact_dynamics import (
    Contact,
    ContactSolution,
    ContactStatus,
    contact_inverse_dynamics,
)
from rnea_ros.algorithms.dynamics import jacobian, link_pose
from rnea_ros.model.example_robots import example_urdf_path
from rnea_ros.model.robot_model import RobotModel
from rnea_ros.sim.cli import MISSED, OK, add_output_options, demo_parser, save_figure, write_json
from rnea_ros.sim.demos.legged.scene import Foot, LeggedScene

MU = 0.8
TARGET_RATIO = 0.1
FALL_TILT = 0.5  # rad
SQUAT_DEPTH = 0.05  # m
SQUAT_PERIOD = 2.0  # s
SOLE_HALF_EXTENTS = (0.1, 0.06)  # m, TALOS sole rectangle along the sole's x and y axes
KD_STEP = 0.2  # bound of Kd dt / I
KP_STEP = 0.02  # bound of Kp dt² / I
FIGURES = ("height_drift", "tilt_drift", "joint_rms")


@dataclass(frozen=True)
class Robot:
    """A legged robot of the demo: its URDF below example-robot-data's robots/, feet, posture
    (joint → rad; unnamed joints 0) and joint PD gains (one value or per joint by name prefix)."""

    name: str
    urdf_path: str
    feet: tuple[Foot, ...]
    posture: dict[str, float]
    kp: float
    kd: float
    gains: dict[str, tuple[float, float]] = field(default_factory=dict)  # joint name prefix → (kp, kd)

    def urdf(self) -> str:
        return example_urdf_path(self.urdf_path).read_text()

    def contacts(self) -> list[Contact]:
        return [
            Contact(f.link, "point", mu=MU)
            if f.half_extents is None
            else Contact(f.link, "6d", mu=MU, half_extents=f.half_extents)
            for f in self.feet
        ]

    def gain_arrays(
        self, joint_names: Sequence[str], inertia: np.ndarray, dt: float
    ) -> tuple[np.ndarray, np.ndarray]:
        """Kp, Kd per joint, bounded for a loop closed once per time step `dt` with explicit
        efforts: Kd ≤ KD_STEP I / dt and Kp ≤ KP_STEP I / dt², I the joint's diagonal of M."""
        kp, kd = np.full(len(joint_names), self.kp), np.full(len(joint_names), self.kd)
        for i, name in enumerate(joint_names):
            for prefix, (p, d) in self.gains.items():
                if name.startswith(prefix):
                    kp[i], kd[i] = p, d
        return np.minimum(kp, KP_STEP * inertia / dt**2), np.minimum(kd, KD_STEP * inertia / dt)


SOLO12 = Robot(
    name="solo12",
    urdf_path="solo_description/robots/solo12.urdf",
    feet=tuple(Foot(f"{leg}_FOOT") for leg in ("FL", "FR", "HL", "HR")),
    posture={
        "FL_HAA": 0.1,
        "FL_HFE": 0.8,
        "FL_KFE": -1.6,
        "FR_HAA": -0.1,
        "FR_HFE": 0.8,
        "FR_KFE": -1.6,
        "HL_HAA": 0.1,
        "HL_HFE": -0.8,
        "HL_KFE": 1.6,
        "HR_HAA": -0.1,
        "HR_HFE": -0.8,
        "HR_KFE": 1.6,
    },
    kp=3.0,
    kd=0.1,
)

TALOS = Robot(
    name="talos",
    urdf_path="talos_data/robots/talos_reduced.urdf",
    feet=(Foot("left_sole_link", SOLE_HALF_EXTENTS), Foot("right_sole_link", SOLE_HALF_EXTENTS)),
    posture={
        "arm_left_1_joint": 0.25847,
        "arm_left_2_joint": 0.173046,
        "arm_left_3_joint": -0.0002,
        "arm_left_4_joint": -0.525366,
        "arm_left_7_joint": 0.1,
        "arm_right_1_joint": -0.25847,
        "arm_right_2_joint": -0.173046,
        "arm_right_3_joint": 0.0002,
        "arm_right_4_joint": -0.525366,
        "arm_right_7_joint": 0.1,
        "leg_left_3_joint": -0.411354,
        "leg_left_4_joint": 0.859395,
        "leg_left_5_joint": -0.448041,
        "leg_left_6_joint": -0.001708,
        "leg_right_3_joint": -0.411354,
        "leg_right_4_joint": 0.859395,
        "leg_right_5_joint": -0.448041,
        "leg_right_6_joint": -0.001708,
        "torso_2_joint": 0.006761,
        "gripper_left_joint": -0.1,
        "gripper_right_joint": -0.1,  # off their limit at 0
    },
    kp=2000.0,
    kd=40.0,
    gains={"arm_": (300.0, 5.0), "head_": (100.0, 2.0), "gripper_": (50.0, 0.5)},
)


class ContactLaw:
    """τ_id(q, v, a): the actuated efforts of contact_inverse_dynamics on the package's free-flyer
    model of `urdf` (RobotModel.from_urdf(urdf, root_joint="floating")) for `contacts`. q, v, a
    and τ with the joints in `joint_names` order (the simulator's), Pinocchio's free-flyer layout;
    the model's own joint order may differ (permuted here)."""

    def __init__(self, urdf: str, contacts: Sequence[Contact], joint_names: Sequence[str]) -> None:
        self.contacts = list(contacts)
        self.model = RobotModel.from_urdf(urdf, root_joint="floating")
        model_names = list(self.model.joint_names)
        mismatch = sorted(set(joint_names) ^ set(model_names))
        if mismatch:
            raise ValueError(f"joints of the simulator and the model differ: {mismatch}")
        self.order = np.array([list(joint_names).index(j) for j in model_names])  # model i ← sim order[i]
        self.q_order = np.concatenate([np.arange(7), 7 + self.order])
        self.v_order = np.concatenate([np.arange(6), 6 + self.order])
        self.infeasible = 0  # cycles with ContactStatus.INFEASIBLE
        self.last: ContactSolution | None = None

    def __call__(self, q: np.ndarray, v: np.ndarray, a: np.ndarray) -> np.ndarray:
        """τ_id (n) in the simulator's joint order."""
        sol = contact_inverse_dynamics(
            self.model, q[self.q_order], v[self.v_order], a[self.v_order], self.contacts
        )
        self.last = sol
        if sol.status is ContactStatus.INFEASIBLE:
            self.infeasible += 1
        tau = np.empty_like(sol.tau)
        tau[self.order] = sol.tau
        return tau


@dataclass
class Trajectory:
    """Desired q (N, nq), v and a (N, nv) on the simulator's time grid, Pinocchio's layout."""

    t: np.ndarray
    q: np.ndarray
    v: np.ndarray
    a: np.ndarray


def standing(q0: np.ndarray, steps: int, dt: float) -> Trajectory:
    """Hold q0 for `steps` steps."""
    nv = q0.shape[0] - 1
    return Trajectory(
        np.arange(steps + 1) * dt,
        np.tile(q0, (steps + 1, 1)),
        np.zeros((steps + 1, nv)),
        np.zeros((steps + 1, nv)),
    )


def squat(
    robot: Robot,
    joint_names: Sequence[str],
    q0: np.ndarray,
    steps: int,
    dt: float,
    depth: float,
    period: float,
) -> Trajectory:
    """The base (level, x and y fixed) at height z0 − depth (1 − cos 2πt/period) / 2, the feet
    where they are at q0: the joints by Newton's method on the feet positions in the base frame
    (package's link_pose and jacobian on the fixed-base model rooted at the base link), q̇ and q̈
    by central differences of that solution on the time grid (the base's ż, z̈ in closed form)."""
    fixed = RobotModel.from_urdf(robot.urdf())
    index = [fixed.joint_names.index(j) for j in joint_names]
    feet = [f.link for f in robot.feet]
    joints0 = np.zeros(fixed.nv)
    joints0[index] = q0[7:]
    z0 = float(q0[2])
    target0 = [link_pose(fixed, joints0, foot)[1] for foot in feet]  # base frame at q0
    t = np.arange(steps + 1) * dt
    w = 2.0 * math.pi / period
    z = z0 - depth * 0.5 * (1.0 - np.cos(w * t))
    zd = -depth * 0.5 * w * np.sin(w * t)
    zdd = -depth * 0.5 * w * w * np.cos(w * t)
    joints = np.zeros((steps + 1, fixed.nv))
    x = joints0.copy()
    for k in range(steps + 1):
        lift = np.array([0.0, 0.0, z0 - z[k]])  # the feet rise in the base frame as the base goes down
        for _ in range(20):
            err = np.concatenate(
                [target0[i] + lift - link_pose(fixed, x, foot)[1] for i, foot in enumerate(feet)]
            )
            if float(np.max(np.abs(err))) < 1e-12:
                break
            jac = np.concatenate([jacobian(fixed, x, foot)[:3] for foot in feet])
            x = x + np.linalg.lstsq(jac, err, rcond=None)[0]
        joints[k] = x
    qj = joints[:, index]
    vj = np.gradient(qj, dt, axis=0, edge_order=2)
    aj = np.gradient(vj, dt, axis=0, edge_order=2)
    n = steps + 1
    q = np.tile(q0, (n, 1))
    q[:, 2], q[:, 7:] = z, qj
    v, a = np.zeros((n, q0.shape[0] - 1)), np.zeros((n, q0.shape[0] - 1))
    v[:, 2], v[:, 6:] = zd, vj
    a[:, 2], a[:, 6:] = zdd, aj
    return Trajectory(t, q, v, a)


@dataclass
class Run:
    """A simulated run: time (N), base height z and desired z_d (m), tilt (rad), joint errors
    q_d − q (N, n) and the figures."""

    t: np.ndarray
    z: np.ndarray
    z_d: np.ndarray
    tilt: np.ndarray
    error: np.ndarray
    infeasible: int = 0
    normal_sim: np.ndarray | None = None  # per foot, MuJoCo's floor normal force at the end (N)
    normal_law: np.ndarray | None = None  # per foot, the law's f·n at the last cycle (N)

    @property
    def height_drift(self) -> float:
        return float(np.max(np.abs(self.z - self.z_d)))

    @property
    def tilt_drift(self) -> float:
        return float(np.max(self.tilt))

    @property
    def joint_rms(self) -> float:
        return float(np.sqrt(np.mean(self.error**2)))

    @property
    def fell(self) -> bool:
        return bool(np.min(self.z) < 0.5 * self.z_d[0] or np.max(self.tilt) > FALL_TILT)


def quaternion_matrix(xyzw: np.ndarray) -> np.ndarray:
    x, y, z, w = (float(c) for c in xyzw)
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
            [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
            [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
        ]
    )


def simulate(scene: LeggedScene, robot: Robot, traj: Trajectory, law: ContactLaw | None) -> Run:
    """Follow `traj` from its first state with the joint PD, plus τ_id when `law` is given."""
    scene.reset(traj.q[0, 7:])
    kp, kd = robot.gain_arrays(scene.joint_names, scene.joint_inertia(), scene.timestep)
    steps = traj.t.shape[0] - 1
    n = scene.n
    z, tilt, err = np.zeros(steps + 1), np.zeros(steps + 1), np.zeros((steps + 1, n))
    infeasible_before = law.infeasible if law is not None else 0
    for k in range(steps + 1):
        q, v = scene.q, scene.v
        rd = quaternion_matrix(traj.q[k, 3:7])
        cos = 0.5 * (float(np.trace(rd.T @ scene.base_rotation)) - 1.0)
        z[k], tilt[k], err[k] = q[2], math.acos(max(-1.0, min(1.0, cos))), traj.q[k, 7:] - q[7:]
        if k == steps:
            break
        tau = kp * err[k] + kd * (traj.v[k, 6:] - v[6:])
        if law is not None:
            tau = tau + law(q, v, traj.a[k])
        scene.step(tau)
    run = Run(traj.t, z, traj.q[:, 2].copy(), tilt, err, normal_sim=scene.contact_normal_forces())
    if law is not None and law.last is not None:
        run.infeasible = law.infeasible - infeasible_before
        run.normal_law = np.array([f[2] for f in law.last.forces])  # world z: the floor's normal
    return run


def run_demo(robot: Robot, stand: float, squat_time: float = 0.0) -> dict[str, tuple[Run, Run]]:
    """{"stand": (PD, PD + law), "squat": ...}: the runs of the module docstring."""
    urdf = robot.urdf()
    scene = LeggedScene(urdf, robot.feet, mu=MU)
    joints = np.array([robot.posture.get(j, 0.0) for j in scene.joint_names])
    q0 = scene.reset(joints)
    law = ContactLaw(urdf, robot.contacts(), scene.joint_names)
    dt = scene.timestep
    out = {}
    traj = standing(q0, int(round(stand / dt)), dt)
    out["stand"] = (simulate(scene, robot, traj, None), simulate(scene, robot, traj, law))
    if squat_time > 0:
        traj = squat(robot, scene.joint_names, q0, int(round(squat_time / dt)), dt, SQUAT_DEPTH, SQUAT_PERIOD)
        out["squat"] = (simulate(scene, robot, traj, None), simulate(scene, robot, traj, law))
    return out


def met(pd: Run, law: Run) -> bool:
    """The target: every figure with the law at most TARGET_RATIO × PD alone's, and no fall."""
    return not law.fell and all(getattr(law, f) <= TARGET_RATIO * getattr(pd, f) for f in FIGURES)


def table(runs: dict[str, tuple[Run, Run]]) -> str:
    """Per run and controller: the figures, the law/PD ratios and whether the target is met."""
    rows: list[tuple[str, ...]] = [
        ("run", "controller", "height drift (mm)", "tilt drift (mrad)", "joint RMS (mrad)", "fell")
    ]
    for name, (pd, law) in runs.items():
        for label, r in (("PD alone", pd), ("PD + contact ID", law)):
            rows.append(
                (
                    name,
                    label,
                    f"{r.height_drift * 1e3:.3f}",
                    f"{r.tilt_drift * 1e3:.3f}",
                    f"{r.joint_rms * 1e3:.3f}",
                    "yes" if r.fell else "no",
                )
            )
        ratios = [getattr(law, f) / max(getattr(pd, f), 1e-300) for f in FIGURES]
        rows.append(
            (
                name,
                f"ratio (target <= {TARGET_RATIO:g})",
                *(f"{x:.4f}" for x in ratios),
                "met" if met(pd, law) else "NOT MET",
            )
        )
    width = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(r, width, strict=True)) for r in rows)


def plot(runs: dict[str, tuple[Run, Run]], title: str, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(len(runs), 3, figsize=(13, 3.2 * len(runs)), squeeze=False)
    for row, (name, (pd, law)) in enumerate(runs.items()):
        ax = axes[row]
        ax[0].plot(pd.t, pd.z_d * 1e3, "k--", lw=1, label="desired")
        ax[0].plot(pd.t, pd.z * 1e3, "C0", label="PD alone")
        ax[0].plot(law.t, law.z * 1e3, "C3", label="PD + contact ID")
        ax[0].set_ylabel(f"{name}: base height (mm)")
        ax[1].plot(pd.t, pd.tilt * 1e3, "C0", label="PD alone")
        ax[1].plot(law.t, law.tilt * 1e3, "C3", label="PD + contact ID")
        ax[1].set_ylabel("base tilt (mrad)")
        ax[2].semilogy(pd.t, np.sqrt(np.mean(pd.error**2, axis=1)) + 1e-9, "C0", label="PD alone")
        ax[2].semilogy(law.t, np.sqrt(np.mean(law.error**2, axis=1)) + 1e-9, "C3", label="PD + contact ID")
        ax[2].set_ylabel("joint error RMS (rad)")
        for a in ax:
            a.set_xlabel("t (s)")
            a.legend(fontsize=8)
    fig.suptitle(title)
    save_figure(fig, path, dpi=80)


def argument_parser(kind: str) -> argparse.ArgumentParser:
    parser = demo_parser(f"--{kind}", __doc__)
    parser.add_argument("--stand", type=float, default=3.0, help="standing run, simulated s (default 3)")
    if kind == "quadruped":
        parser.add_argument(
            "--squat", type=float, default=2 * SQUAT_PERIOD, help="squat run, simulated s (default 4)"
        )
    add_output_options(parser, "the plot", "figures")
    return parser


def figures(runs: dict[str, tuple[Run, Run]]) -> dict:
    """The table's numbers as a dict: run → controller ("pd", "law") → figure, plus the final
    normal forces per foot (N) of the simulator and of the law."""
    out: dict = {}
    for name, (pd, law) in runs.items():
        out[name] = {}
        for label, r in (("pd", pd), ("law", law)):
            entry = {f: getattr(r, f) for f in FIGURES}
            entry["fell"] = r.fell
            entry["infeasible"] = r.infeasible
            entry["normal_sim"] = None if r.normal_sim is None else r.normal_sim.tolist()
            entry["normal_law"] = None if r.normal_law is None else r.normal_law.tolist()
            out[name][label] = entry
        out[name]["met"] = met(pd, law)
    return out


def main(kind: str, argv: list[str] | None = None) -> int:
    """`kind`: "quadruped" (solo12) or "humanoid" (TALOS); exit status 0 when every target is met."""
    args = argument_parser(kind).parse_args(argv)
    robot = SOLO12 if kind == "quadruped" else TALOS
    start = time.monotonic()
    runs = run_demo(robot, args.stand, getattr(args, "squat", 0.0))
    print(f"{robot.name}: joint PD alone vs PD + contact-consistent inverse dynamics (mu = {MU:g})")
    print(table(runs))
    infeasible = sum(law.infeasible for _, law in runs.values())
    print(f"cycles without admissible contact forces: {infeasible}")
    stand_law = runs["stand"][1]
    if stand_law.normal_law is not None and stand_law.normal_sim is not None:
        print(
            "standing, normal force per foot (N): law "
            + ", ".join(f"{x:.1f}" for x in stand_law.normal_law)
            + "; MuJoCo "
            + ", ".join(f"{x:.1f}" for x in stand_law.normal_sim)
        )
    if args.json:
        write_json(args.json, figures(runs))
    print(f"({time.monotonic() - start:.0f} s wall clock)")
    if args.plot:
        Path(args.out).mkdir(parents=True, exist_ok=True)
        path = Path(args.out) / f"{kind}_demo.png"
        plot(runs, f"{robot.name}: joint PD alone vs PD + contact-consistent inverse dynamics", path)
        print(f"plot: {path}")
    return OK if all(met(pd, law) for pd, law in runs.values()) else MISSED


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "quadruped", sys.argv[2:]))
