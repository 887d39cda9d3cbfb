"""The node's effort law driving a MuJoCo arm in lock-step, in one process (no ROS).

Each step does what the lock-step demo does over DDS: the simulator's state at time t goes to the
effort law (`rnea_ros.control.effort_law.compute_efforts`, stamped t), the command is applied over the
next physics step. The model is parsed from the same URDF, so model and simulator have the same
joints in the same order (`MujocoArm.joint_names == RobotModel.joint_names`). Joints outside
`joints` are held by the simulator's servo, as the demo holds a gripper.

Units: rad, rad/s, N m, J, s (or m, m/s, N for prismatic joints).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, replace

import mujoco
import numpy as np

from rnea_ros.control.effort_law import EffortLaw, Efforts, compute_efforts
from rnea_ros.friction.model import Friction
from rnea_ros.model.robot_model import RobotModel
from rnea_ros.sim.mujoco_arm import MujocoArm
from rnea_ros.sim.report import Recording
from rnea_ros.sim.scenario import LEAD, MODEL_TERMS, SETTLE, Config, home_of, multisine, split_arm


class Loop:
    """A MujocoArm and the effort law commanding `joints` (model names), one physics step per
    command; `friction` is the node's friction model (default: the URDF's)."""

    def __init__(
        self,
        urdf: str,
        joints: list[str],
        law: EffortLaw,
        home: dict[str, float] | None = None,
        friction: Friction | None = None,
        plant_friction_scale: float = 1.0,
        timestep: float = 1e-3,
        coulomb: str = "implicit",
        state_delay: int = 0,
    ) -> None:
        """state_delay: the law sees the state this many physics steps old (stamped with its own
        time), as a node whose joint_states arrive late does."""
        self.model = RobotModel.from_urdf(urdf)
        held = tuple(j for j in self.model.joint_names if j not in joints)
        self.arm = MujocoArm(urdf, timestep, held=held, friction_scale=plant_friction_scale, coulomb=coulomb)
        self.home = dict(home or {})
        self.joints = list(joints)
        self.index = np.array([self.model.joint_index(j) for j in joints], dtype=np.int64)
        self.friction = friction if friction is not None else Friction.from_model(self.model)
        self.driven = np.zeros(self.model.nv, dtype=bool)
        self._command = np.zeros(self.model.nv)
        self._past: deque[tuple[float, np.ndarray, np.ndarray]] = deque(maxlen=state_delay + 1)
        self.reset(law)

    def reset(self, law: EffortLaw) -> None:
        """The arm at rest at home, time 0, and a fresh effort law (no friction state)."""
        self.arm.reset(self.home)
        self._past.clear()
        self.efforts = Efforts(self.model, replace(law, friction=self.friction))

    def set_law(self, law: EffortLaw) -> None:
        """Swap the law, keeping the friction state (as the node does on a parameter change that
        leaves friction alone)."""
        efforts = Efforts(self.model, replace(law, friction=self.friction))
        efforts.adopt(self.efforts)
        self.efforts = efforts

    def step(self, desired: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None) -> np.ndarray:
        """One command for the current state and one physics step; desired: q, q̇, q̈ of `joints`
        (None: no trajectory). Returns the command (model order; zero outside `joints`)."""
        arm = self.arm
        self._past.append((arm.time, arm.q, arm.qd))
        t, q, qd = self._past[0]  # the newest state, or the one state_delay steps old
        q_des, qd_des, qdd_des = q.copy(), qd.copy(), np.zeros_like(q)
        driven = self.driven
        driven[:] = False
        if desired is not None:
            q_des[self.index], qd_des[self.index], qdd_des[self.index] = desired
            driven[self.index] = True
        desired_state = (q_des, qd_des, qdd_des)
        compute_efforts(self.efforts, q, qd, desired_state, driven=driven, t=t, delay=arm.time - t)
        command = self._command
        command[:] = 0.0
        command[self.index] = self.efforts.total[self.index]
        arm.step(command)
        return command

    def kinetic_energy(self) -> float:
        """½ q̇ᵀ M q̇ of the simulated arm, J (MuJoCo's M of the last step's start, the state's
        velocity)."""
        d = self.arm.data
        out = np.zeros(self.arm.nv)
        mujoco.mj_mulM(self.arm.model, d, out, d.qvel)
        return 0.5 * float(d.qvel @ out)


@dataclass(frozen=True)
class Coast:
    """A joint set moving from rest with an initial velocity and no PD (see `coast`)."""

    joint: str
    time: np.ndarray  # (N,) s
    kinetic: np.ndarray  # (N,) J, simulated arm
    friction_work: np.ndarray  # (N,) J, work of the node's friction term so far, all joints
    plant_friction_work: np.ndarray  # (N,) J, work of the plant's damping and frictionloss so far
    tripped: bool  # the runaway guard faded the joint's friction term

    @property
    def ratio(self) -> float:
        """Kinetic energy at the end over at the start."""
        return float(self.kinetic[-1] / self.kinetic[0])

    @property
    def peak_ratio(self) -> float:
        """Largest kinetic energy over the one at the start."""
        return float(self.kinetic.max() / self.kinetic[0])


def coast(loop: Loop, joint: str, velocity: float, duration: float, naive: bool = False) -> Coast:
    """Start `joint` with `velocity` (rad/s or m/s), every other joint at rest, and let the law
    compensate (no trajectory: gravity, Coriolis and friction from the measured state, PD idle)
    for `duration` s; record the kinetic energy and the work of both frictions. naive: the
    friction compensation the node had before (the whole model friction at the measured velocity,
    no scale, deadband or bound), for comparison."""
    arm = loop.arm
    arm.data.qvel[:] = 0.0
    arm.data.qvel[arm.indices([joint])[0]] = velocity
    mujoco.mj_forward(arm.model, arm.data)
    steps = int(round(duration / arm.timestep))
    kinetic, work, plant, times = (np.zeros(steps + 1) for _ in range(4))
    kinetic[0] = loop.kinetic_energy()
    for k in range(steps):
        qd0 = arm.qd
        if naive:  # "desired" = measured: the full model friction at the measured velocity
            zero = np.zeros(len(loop.index))
            loop.step((arm.q[loop.index], qd0[loop.index], zero))
        else:
            loop.step()
        friction = loop.efforts.table[3][loop.index]
        plant_force = arm.friction_forces()
        qd1 = arm.qd
        mean = 0.5 * (qd0 + qd1)
        work[k + 1] = work[k] + float(friction @ mean[loop.index]) * arm.timestep
        plant[k + 1] = plant[k] + float(plant_force @ mean) * arm.timestep
        kinetic[k + 1] = loop.kinetic_energy()
        times[k + 1] = arm.time
    tripped = bool(loop.efforts.guard.tripped[loop.model.joint_index(joint)])
    return Coast(joint, times, kinetic, work, plant, tripped)


def passivity(
    urdf: str,
    plant_friction_scale: float = 1.0,
    velocity: float = 0.5,
    duration: float = 0.3,
    naive: bool = False,
    coulomb: str = "implicit",
) -> list[Coast]:
    """`coast` every joint of the arm's chain in turn (rnea_ros.sim.scenario: the gripper held)
    from its demo home, PD gains zero, no trajectory, gravity + Coriolis + friction compensated;
    the plant's friction `plant_friction_scale` × the URDF's (the node's model is the URDF's).
    Joints start `velocity` rad/s (or m/s) and coast `duration` s; naive: see `coast`; coulomb:
    how the simulator applies dry friction (MujocoArm)."""
    model = RobotModel.from_urdf(urdf)
    chain = split_arm(model).chain
    law = EffortLaw(compensate=frozenset(("gravity", "coriolis", "friction")))
    loop = Loop(urdf, chain, law, home_of(model), None, plant_friction_scale, coulomb=coulomb)
    out = []
    for joint in chain:
        loop.reset(law)
        out.append(coast(loop, joint, velocity, duration, naive))
    return out


def delayed_hold(
    config: Config, offset: float, state_delay: float, max_phase_lag: float, duration: float = 2.0
) -> np.ndarray:
    """The largest |q − home| (rad) of each commanded joint over each 0.1 s of a hold at home,
    from rest `offset` rad away on every joint, with the model terms and the PD of `config`
    computed from states `state_delay` s old (shape (duration / 0.1, joints)). A stable loop
    decays; one its delay destabilises grows until the effort limits."""
    model = RobotModel.from_urdf(config.urdf)
    law = replace(_law(config, model, True), max_phase_lag=max_phase_lag)
    steps = int(round(state_delay / 1e-3))
    start = {j: v + (offset if j in config.joints else 0.0) for j, v in config.home.items()}
    loop = Loop(config.urdf, config.joints, law, start, state_delay=steps)
    home = np.array([config.home.get(j, 0.0) for j in config.joints])
    hold = (home, np.zeros_like(home), np.zeros_like(home))
    per_window = int(round(0.1 / loop.arm.timestep))
    out = np.zeros((int(round(duration / 0.1)), len(config.joints)))
    for w in range(out.shape[0]):
        for _ in range(per_window):
            loop.step(hold)
            out[w] = np.maximum(out[w], np.abs(loop.arm.q[loop.index] - home))
    return out


def _law(config: Config, model: RobotModel, on: bool) -> EffortLaw:
    index = [model.joint_index(j) for j in config.joints]
    kp, kd = np.zeros(model.nv), np.zeros(model.nv)
    kp[index], kd[index] = config.kp, config.kd
    return EffortLaw(kp=kp, kd=kd, compensate=frozenset(MODEL_TERMS if on else ()))


def run_phases(config: Config, plant_friction_scale: float = 1.0) -> Recording:
    """The demo's three phases (rnea_ros.sim.demos.forward) in one process, lock-step, on the same timeline:
    hold `config.hold` s compensating the model terms without a trajectory; a multi-sine designed
    from the pose at `hold` (as multisine_trajectory does, default parameters), starting LEAD s
    later, tracked with PD alone; compensation on again, SETTLE s, the second multi-sine, TAIL s."""
    model = RobotModel.from_urdf(config.urdf)
    law = _law(config, model, True)
    loop = Loop(config.urdf, config.joints, law, config.home, None, plant_friction_scale)
    arm, index = loop.arm, loop.index
    count = int(round(config.duration / arm.timestep)) + 1
    t, q, q_des = np.zeros(count), np.zeros((count, len(index))), np.full((count, len(index)), np.nan)
    plan: list[tuple[int, tuple[np.ndarray, ...]]] = []  # (first step, sampled q, q̇, q̈), newest last
    step = arm.timestep

    def request(k: int) -> float:
        motion = multisine(model, index, arm.q[index], 3.0, config.trajectory, config.ramp, config.seed)
        first = k + int(round(LEAD / step))
        samples = motion.sample(np.arange(count - first) * step)  # rests at the end after `duration`
        plan.append((first, samples))
        return first * step

    pd = ff = np.inf
    held = compensating = True
    for k in range(count):
        now = k * step
        t[k], q[k] = now, arm.q[index]
        if held and now >= config.hold - 1e-9:
            held = False
            pd = request(k)
            compensating = False
            loop.set_law(_law(config, model, False))
        elif not compensating and now >= pd + config.trajectory - 1e-9:
            compensating = True
            loop.set_law(_law(config, model, True))
        elif compensating and not np.isfinite(ff) and now >= pd + config.trajectory + SETTLE - 1e-9:
            ff = request(k)
        desired = None
        if plan:
            first, (sq, sqd, sqdd) = plan[-1]
            i = max(k - first, 0)  # before its start: its first point, at rest
            desired = (sq[i], sqd[i], sqdd[i])
            q_des[k] = desired[0]
        if k + 1 < count:
            loop.step(desired)
    guard = loop.efforts.guard
    faded = [j for j, i in zip(config.joints, index, strict=True) if guard.tripped[i]]
    return Recording(
        list(config.joints),
        t,
        q,
        q_des,
        (0.0, config.hold),
        (pd, pd + config.trajectory),
        (ff, ff + config.trajectory),
        guard_trips=guard.trips,
        faded=faded,
    )


__all__ = ["Coast", "Loop", "coast", "delayed_hold", "passivity", "run_phases"]
