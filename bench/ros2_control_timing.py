"""The real controller manager at 1 kHz in real time on this machine: its loop (cycle period,
missed cycles) and topic_based_ros2_control's state topic (how old the state each cycle reads is),
with the MuJoCo Panda as the robot.

    python bench/ros2_control_timing.py [--seconds 10] [--runs 3] [--busy 0]

Per run: `mujoco_sim` (`controller_type: ros2_control`, real time, wall-clock stamps) behind
ros2_control_node (update_rate 1000, wall clock, SCHED_FIFO when root), joint_state_broadcaster
and a joint_trajectory_controller on the effort interface following an effort-annotated
multi-sine of `--seconds` (the JTC demo's gains, no node in the loop). This process records
joint_state_broadcaster's /joint_states (one message per cycle, stamped with the cycle's time) and
reads the simulator's step log (rnea_ros.sim.loop_timing matches each cycle's state by its
velocities). `--busy N` starts N processes spinning on a core each. Prints one block per run and
the medians over the runs, with the load average. Needs ros2_control (`make` installs it).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from rnea_ros.model.example_robots import example_urdf_path
from rnea_ros.model.robot_model import RobotModel
from rnea_ros.sim.demos.jtc.demo import (
    ARM,
    CONTROLLER,
    FINGER_HOME,
    FINGERS,
    controller_parameters,
    hardware_parameters,
    multisine_points,
)
from rnea_ros.sim.loop_timing import loop_timing
from rnea_ros.sim.processes import Processes, start_robot
from rnea_ros.sim.ros2_control import BROADCASTER, find, why_not
from rnea_ros.sim.step_log import load
from rnea_ros.trajectory.jtc_points import effort_trajectory


def _spin(stop) -> None:
    while not stop.is_set():
        pass


def one_run(stack, urdf: str, model: RobotModel, seconds: float, out: Path, k: int) -> dict:
    import rclpy
    from builtin_interfaces.msg import Duration
    from control_msgs.msg import JointTrajectoryControllerState
    from rclpy.node import Node
    from rclpy.qos import QoSProfile, ReliabilityPolicy
    from sensor_msgs.msg import JointState
    from std_msgs.msg import String
    from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

    sim = hardware_parameters(urdf, lockstep=False)
    controllers = controller_parameters(lockstep=False)
    points = multisine_points(model, seconds, k)
    held = {j: FINGER_HOME for j in FINGERS}
    annotated = effort_trajectory(
        model, ARM, points.times, points.positions, points.velocities, points.accelerations, held=held
    )
    children = Processes(out / f"run_{k}_logs")
    rclpy.init()
    node = Node("ros2_control_timing")
    cycles: list[tuple[int, list[str], np.ndarray]] = []
    saved: list[str] = []
    starts: list[float] = []

    def on_state(msg) -> None:
        cycles.append(
            (msg.header.stamp.sec * 10**9 + msg.header.stamp.nanosec, msg.name, np.array(msg.velocity))
        )

    def on_saved(msg) -> None:
        saved.append(msg.data)

    def on_controller(msg) -> None:  # the start of the trajectory JTC follows, s
        tfs = msg.reference.time_from_start
        starts.append(msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9 - tfs.sec - tfs.nanosec * 1e-9)

    node.create_subscription(
        JointState, "/joint_states", on_state, QoSProfile(depth=10000, reliability=ReliabilityPolicy.RELIABLE)
    )
    node.create_subscription(String, "/mujoco_sim/saved", on_saved, 10)
    latest = QoSProfile(depth=1, reliability=ReliabilityPolicy.BEST_EFFORT)
    node.create_subscription(
        JointTrajectoryControllerState, f"/{CONTROLLER}/controller_state", on_controller, latest
    )
    save = node.create_publisher(String, "/mujoco_sim/save", 10)
    to_jtc = node.create_publisher(JointTrajectory, f"/{CONTROLLER}/joint_trajectory", 10)
    try:
        start_robot(children, stack, out / f"run_{k}", sim, controllers, [BROADCASTER, CONTROLLER])
        end = time.monotonic() + 60
        while (to_jtc.get_subscription_count() == 0 or not cycles) and time.monotonic() < end:
            rclpy.spin_once(node, timeout_sec=0.05)
        msg = JointTrajectory(joint_names=list(ARM))
        for i, t in enumerate(annotated.times):
            sec, nanosec = divmod(round(float(t) * 1e9), 10**9)
            msg.points.append(
                JointTrajectoryPoint(
                    positions=annotated.positions[i].tolist(),
                    velocities=annotated.velocities[i].tolist(),
                    accelerations=annotated.accelerations[i].tolist(),
                    effort=annotated.efforts[i].tolist(),
                    time_from_start=Duration(sec=sec, nanosec=nanosec),
                )
            )
        while not starts and time.monotonic() < end:
            rclpy.spin_once(node, timeout_sec=0.05)
        holding = starts[-1]  # JTC's hold since activation; sent again until JTC takes it
        cycles.clear()
        while starts[-1] <= holding + 5e-4:
            assert time.monotonic() < end, "JTC did not take the trajectory"
            to_jtc.publish(msg)
            resend = time.monotonic() + 1.0
            while starts[-1] <= holding + 5e-4 and time.monotonic() < resend:
                rclpy.spin_once(node, timeout_sec=0.05)
        end = time.monotonic() + float(annotated.times[-1])
        while time.monotonic() < end:
            rclpy.spin_once(node, timeout_sec=0.05)
            children.check()
        path = out / f"run_{k}_steps.npz"
        save.publish(String(data=str(path)))
        end = time.monotonic() + 30
        while not saved and time.monotonic() < end:
            rclpy.spin_once(node, timeout_sec=0.05)
        log = children.tail("mujoco_sim", 3)
    finally:
        children.stop()
        node.destroy_node()
        rclpy.try_shutdown()
    steps = load(path)
    names = [str(n) for n in steps["names"]]
    index = [names.index(j) for j in ARM]
    order = [list(cycles[0][1]).index(j) for j in ARM]
    timing = loop_timing(
        np.array([c[0] for c in cycles]),
        np.array([c[2][order] for c in cycles]),
        steps["stamp_ns"],
        steps["qd"][:, index],
        steps["sent_stamp_ns"],
        steps["sent_wall_ns"],
    )
    overruns = log.split("overruns ")[-1].split(",")[0] if "overruns " in log else "?"
    return {**timing.to_dict(), "plant_overruns": overruns, "text": timing.lines()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=10.0, help="trajectory length per run, s")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--busy", type=int, default=0, help="processes spinning beside it")
    parser.add_argument("--json", help="write the numbers here")
    parser.add_argument("--out", help="keep the logs and step logs here (default: a temporary folder)")
    args = parser.parse_args()
    stack = find()
    if stack is None:
        print(why_not(), file=sys.stderr)
        return 2
    os.environ["ROS_DOMAIN_ID"] = str(20 + os.getpid() % 80)
    os.environ["ROS_LOCALHOST_ONLY"] = "1"
    urdf = example_urdf_path("panda").read_text()
    model = RobotModel.from_urdf(urdf)
    stop = multiprocessing.Event()
    busy = [multiprocessing.Process(target=_spin, args=(stop,), daemon=True) for _ in range(args.busy)]
    for p in busy:
        p.start()
    results = []
    try:
        with tempfile.TemporaryDirectory(prefix="rc2_timing_") as tmp:
            folder = Path(args.out or tmp)
            for k in range(args.runs):
                load_before = os.getloadavg()[0]
                r = one_run(stack, urdf, model, args.seconds, folder, k)
                r["load_average"] = [load_before, os.getloadavg()[0]]
                results.append(r)
                print(f"run {k} (load average {load_before:.1f} -> {os.getloadavg()[0]:.1f}):\n{r['text']}")
                quantiles = " ".join(f"{x * 1e3:.2f}" for x in r["age_quantiles_s"])
                print(f"  age quantiles (10 25 50 75 90 95 99 %), ms: {quantiles}")
    finally:
        stop.set()
    print(f"\n{stack.describe()}; {args.runs} runs of {args.seconds:g} s, {args.busy} busy processes")
    for key, unit in (("period_s", "ms"), ("age_s", "ms")):
        rows = np.array([r[key] for r in results]) * 1e3
        print(
            f"  {key[:-2]}: median of runs: median {statistics.median(rows[:, 0]):.3f} {unit}, "
            f"p99 {statistics.median(rows[:, 1]):.3f} {unit}, max {statistics.median(rows[:, 2]):.1f} {unit}"
        )
    for key in ("missed", "repeated", "queued", "matched", "cycles"):
        print(f"  {key}: {[r[key] for r in results]}")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
