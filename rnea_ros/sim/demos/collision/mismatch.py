"""Contact-free fast motion on a Panda that is not its URDF (`rnea_ros.sim.plant`, the mismatch
demo's robot: masses and inertias ±20 %, friction and armature the URDF lacks), in one process:
how large the observer's residual gets with the URDF model, and with a model identified from an
excitation recorded on that plant (`rnea_ros.identification.fit.identify`, inertials, friction and
armature of the chain up to panda_hand). Both observers run on the same contact-free run, so
|r| there is model error alone: the collision thresholds must exceed it.

The node's effort law with the URDF model tracks every run (gains of the mismatch demo); the
fingers are held by the simulator and locked in the models (tip_link panda_hand).
"""

from __future__ import annotations

from dataclasses import replace

import mujoco
import numpy as np

from rnea_ros.control.effort_law import EffortLaw, Efforts, compute_efforts
from rnea_ros.estimation.observer import observe
from rnea_ros.friction.model import Friction
from rnea_ros.identification.fit import identify
from rnea_ros.identification.signals import prepare
from rnea_ros.model.example_robots import example_urdf_path
from rnea_ros.model.robot_model import RobotModel
from rnea_ros.sim.demos.collision.scenario import (
    PULSE,
    THRESHOLD_MARGIN,
    Disturbance,
    fast_motion,
    first_flag,
)
from rnea_ros.sim.mujoco_arm import MujocoArm
from rnea_ros.sim.plant import make_plant
from rnea_ros.sim.scenario import MODEL_TERMS, home_of

TIP = "panda_hand"
KP = [2000.0, 2000.0, 2000.0, 2000.0, 500.0, 500.0, 200.0]  # the mismatch demo's gains
KD = [100.0, 100.0, 60.0, 60.0, 15.0, 15.0, 6.0]


def run_on_plant(
    plant_urdf: str,
    armature: np.ndarray,
    model: RobotModel,
    duration: float,
    seed: int,
    disturbance: Disturbance | None = None,
    link: str = "",
):
    """(t, q, qd, effort) of the chain, tracking a fast multi-sine with `model`'s law;
    `disturbance(t)` (force, torque; world axes) on `link` through xfrc_applied."""
    full = RobotModel.from_urdf(plant_urdf)
    home = home_of(full)
    fingers = tuple(j for j in full.joint_names if j not in model.joint_names)
    arm = MujocoArm(plant_urdf, held=fingers)
    idx = arm.indices(model.joint_names)
    arm.model.dof_armature[idx] = armature
    arm.reset(home)
    law = EffortLaw(kp=np.array(KP), kd=np.array(KD), compensate=frozenset(MODEL_TERMS))
    efforts = Efforts(model, replace(law, friction=Friction.from_model(model)))
    motion = fast_motion(model, list(model.joint_names), home, duration, seed)
    steps = int(round(duration / arm.timestep))
    sq, sqd, sqdd = motion.sample(np.arange(steps) * arm.timestep)
    n = model.nv
    t, q, qd, effort = (
        np.zeros(steps + 1),
        np.zeros((steps + 1, n)),
        np.zeros((steps + 1, n)),
        np.zeros((steps + 1, n)),
    )
    q[0], qd[0] = arm.q[idx], arm.qd[idx]
    command = np.zeros(arm.nv)
    driven = np.ones(n, dtype=bool)
    body = mujoco.mj_name2id(arm.model, mujoco.mjtObj.mjOBJ_BODY, link) if link else -1
    for k in range(steps):
        if disturbance is not None:
            arm.data.xfrc_applied[body] = disturbance(arm.time)
        compute_efforts(efforts, arm.q[idx], arm.qd[idx], (sq[k], sqd[k], sqdd[k]), driven=driven, t=arm.time)
        command[idx] = efforts.total
        arm.step(command)
        t[k + 1], q[k + 1], qd[k + 1], effort[k + 1] = arm.time, arm.q[idx], arm.qd[idx], arm.applied[idx]
    return t, q, qd, effort


def mismatch_residuals(record: float = 40.0, free: float = 60.0, seed: int = 0, gain: float = 100.0) -> dict:
    """Peak |r| per joint (N m) on a contact-free run of the mismatched plant, with the URDF model
    and with the identified one; the identification's held-out torque RMS of both."""
    urdf = example_urdf_path("panda").read_text()
    plant = make_plant(urdf, seed)
    model = RobotModel.from_urdf(urdf, tip_link=TIP)
    armature = np.array([plant.armature[plant.joints.index(j)] for j in model.joint_names])
    t, q, qd, effort = run_on_plant(plant.urdf, armature, model, record, seed + 100)
    samples = prepare(t[50:], q[50:], effort[50:], qd=qd[50:])
    result = identify(model, samples, ("inertial", "friction"))
    identified = result.model
    friction = Friction(result.viscous, result.coulomb, result.smoothing_velocity)
    t, q, qd, effort = run_on_plant(plant.urdf, armature, model, free, seed + 200)
    keep = t > 0.05
    r_urdf = observe(model, t, q, qd, effort, gain, friction=Friction.from_model(model))
    r_ident = observe(identified, t, q, qd, effort, gain, friction=friction)
    peaks = {"urdf": np.abs(r_urdf[keep]).max(axis=0), "identified": np.abs(r_ident[keep]).max(axis=0)}
    # the collision of the demo, with thresholds THRESHOLD_MARGIN × each model's contact-free peak
    onset, push = 2.0, np.array([0.0, 60.0, -40.0, 0.0, 0.0, 0.0])

    def pulse(t: float) -> np.ndarray:
        return push * np.sin(np.pi * (t - onset) / PULSE) if onset <= t < onset + PULSE else np.zeros(6)

    t, q, qd, effort = run_on_plant(plant.urdf, armature, model, 2.5, seed + 300, pulse, "panda_link4")
    delays = {}
    for name, (m, f) in {
        "urdf": (model, Friction.from_model(model)),
        "identified": (identified, friction),
    }.items():
        r = observe(m, t, q, qd, effort, gain, friction=f)
        delays[name] = first_flag(r, THRESHOLD_MARGIN * peaks[name], t, onset) - onset
    return {
        "detection_delay_urdf": delays["urdf"],
        "detection_delay_identified": delays["identified"],
        "free_seconds": free,
        "peak_urdf": np.abs(r_urdf[keep]).max(axis=0).tolist(),
        "peak_identified": np.abs(r_ident[keep]).max(axis=0).tolist(),
        "rms_urdf": np.sqrt(np.mean(r_urdf[keep] ** 2, axis=0)).tolist(),
        "rms_identified": np.sqrt(np.mean(r_ident[keep] ** 2, axis=0)).tolist(),
        "held_out_rms_urdf": result.rms_model.tolist(),
        "held_out_rms_identified": result.rms_identified.tolist(),
    }


__all__ = ["mismatch_residuals", "run_on_plant"]
