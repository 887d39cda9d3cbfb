"""Closed-loop demo: the inverse_dynamics node drives a MuJoCo-simulated arm (`make demo`).

    python -m rnea_ros.demo [--urdf FILE] [--duration 30] [--lockstep] [--no-plot] [--out out]

Three separate processes talk over real DDS (ROS_LOCALHOST_ONLY=1, a ROS_DOMAIN_ID of the demo's
own): `mujoco_sim` (rnea_ros.sim.sim_node, physics at 1 kHz, an effort forward_command_controller
on /effort_controller/commands), `inverse_dynamics` (rnea_ros.nodes.inverse_dynamics, on simulated time) and
`multisine_trajectory` (rnea_ros.nodes.multisine_trajectory). This process supervises and records. With
the same PD gains (feedback.kp/kd, rnea_ros.sim.scenario's rule) throughout:

1. hold: from rest, no trajectory, every model term compensated from the measured state
   (gravity, Coriolis, friction with its deadband and bound): drift of every joint;
2. PD alone: compensate.* switched off through the node's set_parameters service (as rqt
   would), then a multi-sine trajectory is tracked;
3. PD + RNEA: compensate.* switched on again, the arm settles, the same kind of trajectory.

It prints the drift, RMS and max tracking errors, the improvement and the command latency,
writes a PNG plot and exits with 1 when a target is missed, 3 when a real-time run stopped early
because the machine did not keep real time (the node answered too few states, or too late: the
message says by how much), 2 when the robot is refused up front
(not an arm of rnea_ros.sim.scenario, or one it cannot run; the reason is printed). With
--attach it only supervises nodes started by someone else (launch/demo.launch.py). Every child
process is stopped on exit, Ctrl-C or error; every wait is bounded. ROS is imported only once a
run starts (after the environment is set).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, cast

from rnea_ros.sim.cli import (
    MISSED,
    OK,
    REAL_TIME_LOST,
    REFUSED,
    add_output_options,
    add_plant_arguments,
    add_ros_options,
    check_plant,
    controllers_json,
    demo_parser,
    ended,
    write_json,
)
from rnea_ros.sim.processes import Processes, start_nodes
from rnea_ros.sim.report import RealTimeLost
from rnea_ros.sim.ros2_control import CHOICES, Stack, choose, why_not
from rnea_ros.sim.scenario import Config, make_config, write_parameters

if TYPE_CHECKING:
    from rnea_ros.sim.report import Recording
    from rnea_ros.sim.supervisor import Supervisor


@contextlib.contextmanager
def supervised(
    config: Config, processes: Processes | None, timeout: float, record_terms: bool, **options: bool
) -> Iterator[Supervisor]:
    """A Supervisor of one run (ROS is imported here, after the environment is set), closed on
    exit; rclpy's own shut-down on SIGINT/SIGTERM comes out as KeyboardInterrupt. `options`:
    the Supervisor's `keep_messages` and `hold`."""
    from rclpy.executors import ExternalShutdownException

    from rnea_ros.sim.supervisor import Supervisor

    supervisor = Supervisor(config, processes, timeout, record_terms, **options)
    try:
        yield supervisor
    except ExternalShutdownException:  # rclpy's SIGINT/SIGTERM handler shut the context down
        raise KeyboardInterrupt from None
    except Exception:
        import rclpy

        if not rclpy.ok():  # an rclpy call failed because that handler shut the context down
            raise KeyboardInterrupt from None
        raise
    finally:
        supervisor.close()


def run(config: Config, processes: Processes | None, timeout: float, record_terms: bool) -> Recording:
    """Supervise the three phases of one run and return its Recording."""
    with supervised(config, processes, timeout, record_terms) as supervisor:
        return supervisor.run()


def _round(values: list[float]) -> str:
    return "[" + ", ".join(f"{v:.3g}" for v in values) + "]"


def argument_parser() -> argparse.ArgumentParser:
    """The demo's options (launch/demo.launch.py passes the same ones to the nodes and to
    `--attach`)."""
    parser = demo_parser("", __doc__)
    parser.add_argument(
        "--urdf", help="robot description (default: example-robot-data's Panda, or the --plant's robot)"
    )
    add_plant_arguments(parser)
    parser.add_argument("--joints", nargs="+", help="joints the node commands (default: the arm's chain)")
    parser.add_argument("--kp", type=float, nargs="+", help="feedback.kp, one or per joint, N m/rad")
    parser.add_argument("--kd", type=float, nargs="+", help="feedback.kd, one or per joint, N m s/rad")
    parser.add_argument("--duration", type=float, default=30.0, help="simulated seconds (default 30)")
    parser.add_argument("--hold", type=float, default=5.0, help="phase 1 length, s (default 5)")
    parser.add_argument("--lockstep", action="store_true", help="each physics step waits for its command")
    add_output_options(parser, "the plot and logs")
    parser.add_argument("--seed", type=int, default=0, help="seed of the multi-sine trajectories")
    add_ros_options(parser, 600.0)
    parser.add_argument(
        "--state-delay", type=float, default=0.0, help="real time: joint_states arrive this late, s"
    )
    parser.add_argument(
        "--max-phase-lag", type=float, default=0.5, help="the node's feedback.max_phase_lag, rad (0: off)"
    )
    parser.add_argument("--attach", action="store_true", help="supervise nodes started elsewhere")
    parser.add_argument(
        "--controllers",
        choices=CHOICES,
        default="auto",
        help="ros2_control: the real controller manager between simulator and node; simulated: the "
        "simulator's own forward command controller; auto (default): ros2_control when installed",
    )
    return parser


def stopped_early(exc: RealTimeLost, json_path: str | None) -> None:
    """What a run that lost real time did to the arm until it stopped: the largest tracking error
    (or drift from the start pose before any trajectory), printed and in the JSON."""
    from rnea_ros.sim.report import largest_errors

    worst, alone = (None, None) if exc.recording is None else largest_errors(exc.recording)
    if exc.recording is None:
        print(f"  the run until then could not be read: {exc.unrecorded}", file=sys.stderr)
    if worst is not None:
        print(f"  until then the largest error, model compensated: {worst:.3f} deg", file=sys.stderr)
    if alone is not None:
        print(f"  and with PD alone (no model terms, by design) {alone:.3f} deg", file=sys.stderr)
    if json_path:
        numbers = {"stopped": str(exc), "max_error_deg": worst, "max_error_pd_alone_deg": alone}
        if exc.recording is None:
            numbers["unrecorded"] = exc.unrecorded
        write_json(json_path, numbers)


def implementation(stack: Stack | None, choice: str) -> str:
    """Which controller implementation runs, in one line (the demos print it)."""
    if stack is not None:
        return f"{stack.describe()}: the real forward_command_controller and joint_state_broadcaster"
    reason = "--controllers simulated" if choice == "simulated" else why_not()
    return f"simulated: the simulator's own effort forward command controller ({reason})"


def main(argv: list[str] | None = None) -> int:
    args = argument_parser().parse_args(argv)
    # progress lines show up at once, also in a pipe
    cast(io.TextIOWrapper, sys.stdout).reconfigure(line_buffering=True)
    try:
        config = make_config(args)
        plant = ""
        if config.plant:
            plant, home = check_plant(config.urdf, config.plant, config.plant_joints)
            config = make_config(args, home)
        stack = choose(args.controllers)
        config.ros2_control = stack is not None
    except (OSError, ValueError, RuntimeError) as exc:  # no such file, not a URDF, refused, bad option
        print(f"demo: {exc}", file=sys.stderr)
        if args.json:
            write_json(args.json, {"refused": str(exc)})
        return REFUSED
    out = Path(args.out)
    if not args.attach:
        os.environ["ROS_DOMAIN_ID"] = str(args.domain_id)
        os.environ["ROS_LOCALHOST_ONLY"] = "1"
    mode = "lock-step" if config.lockstep else "real time"
    held = f", holding {list(config.held)}" if config.held else ""
    print(
        f"closed-loop demo: {config.urdf_path}\n  {len(config.joints)} joints{held}, {config.duration:g} s "
        f"simulated ({mode}), hold {config.hold:g} s, trajectories {config.trajectory:g} s, "
        f"PD gains (same in every phase) kp {_round(config.kp)} N m/rad, kd {_round(config.kd)} N m s/rad",
    )
    print(f"  controllers: {implementation(stack, args.controllers)}")
    if plant:
        print(f"  {plant}")
    processes = None if args.attach else Processes(out / "demo_logs")
    try:
        with tempfile.TemporaryDirectory(prefix="rnea_demo_") as tmp:
            if processes is not None:
                start_nodes(processes, write_parameters(config, Path(tmp) / "params.yaml"), stack=stack)
            started = time.monotonic()
            # the terms (the plot's breakdown) cost the node 5 messages a cycle: lock-step only
            recording = run(config, processes, args.timeout, args.plot and config.lockstep)
    except RealTimeLost as exc:
        print(f"demo stopped: {exc}", file=sys.stderr)
        stopped_early(exc, args.json)
        return REAL_TIME_LOST
    except (KeyboardInterrupt, RuntimeError, TimeoutError) as exc:
        return ended(exc, json_path=args.json)
    finally:
        if processes is not None:
            processes.stop()

    from rnea_ros.sim.report import check_targets, plot, summarize, table

    try:
        summary = summarize(recording)
    except ValueError as exc:
        print(f"demo failed: {exc}", file=sys.stderr)
        return MISSED
    wall = time.monotonic() - started
    print(f"\nran {config.duration:g} s simulated in {wall:.1f} s wall, start-up included ({mode})\n")
    print(table(summary))
    failed = check_targets(summary)
    if args.json:
        numbers = {**summary.to_dict(), "controllers": controllers_json(stack), "failed": failed}
        write_json(args.json, numbers)
    verdict = "all met" if not failed else "MISSED\n  " + "\n  ".join(failed)
    if failed and not config.lockstep:
        verdict += (
            "\n  (real time: a busy machine delays the node's answers, see the latency line above; "
            "--lockstep gives results that do not depend on the machine)"
        )
    print(
        "\ntargets (drift < 0.1 deg, RMS ratio >= 10x, max error with feedforward < 1 deg, no friction "
        f"term faded by the runaway guard): {verdict}"
    )
    if args.plot:
        path = plot(recording, out / "demo.png", f"{Path(config.urdf_path).stem}: closed loop ({mode})")
        print(f"plot: {path.resolve()}")
    return MISSED if failed else OK


if __name__ == "__main__":
    sys.exit(main())
