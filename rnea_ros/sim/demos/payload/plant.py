"""The payload demo's simulator: `mujoco_sim` (rnea_ros.sim.sim_node) with a schedule of what
happens to the arm, in plant time (s since the physics started):

    python -m rnea_ros.sim.demos.payload.plant [--grasp T] [--release T] [--pulse T] --ros-args ...

- grasp: an object (OBJECT: 2 kg, centre of mass 5 cm out along the flange axis, a cylinder's
  inertia) is welded to the hand: from that step on, MuJoCo's hand body carries the hand and
  the object as one rigid body (mass, centre of mass and inertia combined exactly). Nobody tells
  the controller.
- release: the hand is its own again.
- pulse: the collision demo's collision, a half-sine force of PUSH N on panda_link4 over PULSE s
  (rnea_ros.sim.demos.collision.scenario), in MuJoCo's xfrc_applied (world axes, at the body's centre of
  mass).

Everything else is mujoco_sim's (its parameters, topics, lock-step and real time).
"""

from __future__ import annotations

import argparse
import functools
import sys
from dataclasses import dataclass

import mujoco
import numpy as np
from rclpy.executors import SingleThreadedExecutor
from rclpy.utilities import remove_ros_args

from rnea_ros.ros.run_node import run_node
from rnea_ros.sim.demos.collision.scenario import PULSE
from rnea_ros.sim.sim_node import SimNode

HAND, ELBOW = "panda_hand", "panda_link4"
PUSH = np.array([0.0, 60.0, -40.0])  # N, world axes: the collision demo's collision


@dataclass(frozen=True)
class Load:
    """A rigid object: mass (kg), centre of mass (m) and inertia about it (kg m²), hand frame."""

    mass: float
    com: tuple[float, float, float]
    inertia: tuple[float, float, float]  # principal moments along the hand's axes


# 2 kg, a cylinder 6 cm across and 8 cm long along the flange axis, its centre 5 cm out
OBJECT = Load(2.0, (0.0, 0.0, 0.05), (2.0 * (3 * 0.03**2 + 0.08**2) / 12,) * 2 + (2.0 * 0.03**2 / 2,))


@dataclass(frozen=True)
class Schedule:
    """Plant times (s) of the events; None: never."""

    grasp: float | None = None
    release: float | None = None
    pulse: float | None = None


def _inertial(model: mujoco.MjModel, body: int) -> tuple[float, np.ndarray, np.ndarray]:
    """(mass, centre of mass, inertia about it (3, 3)) of a body, body frame."""
    flat = np.zeros(9)
    mujoco.mju_quat2Mat(flat, model.body_iquat[body])
    rot = flat.reshape(3, 3)
    return (
        float(model.body_mass[body]),
        model.body_ipos[body].copy(),
        rot @ np.diag(model.body_inertia[body]) @ rot.T,
    )


def weld(model: mujoco.MjModel, body: int, load: Load) -> tuple:
    """Give `body` the load as part of it (one rigid body); returns what `unweld` restores."""
    saved = (
        model.body_mass[body].copy(),
        model.body_ipos[body].copy(),
        model.body_iquat[body].copy(),
        model.body_inertia[body].copy(),
    )
    m0, c0, i0 = _inertial(model, body)
    m1, c1, i1 = load.mass, np.asarray(load.com, dtype=float), np.diag(load.inertia)
    mass = m0 + m1
    com = (m0 * c0 + m1 * c1) / mass

    def about_com(m: float, c: np.ndarray, inertia: np.ndarray) -> np.ndarray:
        d = c - com
        return inertia + m * (float(d @ d) * np.eye(3) - np.outer(d, d))

    moments, axes = np.linalg.eigh(about_com(m0, c0, i0) + about_com(m1, c1, i1))
    if np.linalg.det(axes) < 0:
        axes[:, 0] *= -1
    quat = np.zeros(4)
    mujoco.mju_mat2Quat(quat, axes.reshape(-1))
    model.body_mass[body] = mass
    model.body_ipos[body] = com
    model.body_iquat[body] = quat
    model.body_inertia[body] = moments
    return saved


def unweld(model: mujoco.MjModel, body: int, saved: tuple) -> None:
    model.body_mass[body], model.body_ipos[body], model.body_iquat[body], model.body_inertia[body] = saved


class PayloadPlant(SimNode):
    """mujoco_sim whose steps follow a Schedule (module docstring)."""

    def __init__(self, schedule: Schedule, load: Load = OBJECT, **kwargs) -> None:
        self.schedule, self.load = schedule, load
        self._welded: tuple | None = None
        self._done: set[str] = set()
        self._bodies: tuple[int, int] | None = None  # (hand, elbow) MuJoCo body ids
        super().__init__(**kwargs)

    def _step(self) -> None:
        arm = self.arm
        assert arm is not None  # the loop starts once the arm is built
        t, m, s = arm.time, arm.model, self.schedule
        if self._bodies is None:
            hand_id, elbow_id = (mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_BODY, b) for b in (HAND, ELBOW))
            if min(hand_id, elbow_id) < 0:
                raise ValueError(f"the simulated robot has no {HAND} or {ELBOW} (a Panda is needed)")
            self._bodies = (hand_id, elbow_id)
        hand, elbow = self._bodies
        if s.grasp is not None and t >= s.grasp - 1e-9 and "grasp" not in self._done:
            self._done.add("grasp")
            self._welded = weld(m, hand, self.load)
            self.get_logger().info(f"t = {t:.3f} s: {self.load.mass:g} kg welded to {HAND}")
        if s.release is not None and t >= s.release - 1e-9 and "release" not in self._done:
            self._done.add("release")
            if self._welded is not None:
                unweld(m, hand, self._welded)
                self._welded = None
                self.get_logger().info(f"t = {t:.3f} s: the object released")
        if s.pulse is not None:
            on = s.pulse <= t < s.pulse + PULSE
            arm.data.xfrc_applied[elbow, :3] = PUSH * np.sin(np.pi * (t - s.pulse) / PULSE) if on else 0.0
        super()._step()


def _spin(node: PayloadPlant) -> None:
    executor = SingleThreadedExecutor()
    executor.add_node(node)
    try:
        node.run(executor)
    finally:
        executor.shutdown()


def main(args: list[str] | None = None) -> int:
    """Run the simulator with the schedule of the command line (before --ros-args)."""
    argv = list(sys.argv if args is None else args)
    parser = argparse.ArgumentParser(
        prog="python -m rnea_ros.sim.demos.payload.plant", description=__doc__.split("\n\n")[0]
    )
    for name in ("grasp", "release", "pulse"):
        parser.add_argument(f"--{name}", type=float, help=f"plant time of the {name}, s")
    options = parser.parse_args(remove_ros_args(argv)[1:])
    schedule = Schedule(options.grasp, options.release, options.pulse)
    return run_node(argv, functools.partial(PayloadPlant, schedule), "mujoco_sim", _spin)


if __name__ == "__main__":
    sys.exit(main())
