"""The `ros2` commands of the README and docs/*.md on a ROS 2 install: `ros2 launch` of the
launch files, `ros2 param`, `ros2 topic`, `ros2 lifecycle` and `ros2 control` against the running
nodes, in a colcon-built workspace with its environment sourced (test/support/ros_install.py), each
line as the page writes it (test/support/doc_commands.py: `owned(key)`). Skips without the ROS 2
wheels. The lines that start a node and check where its commands go: test_documented_ros_lines.py.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
import yaml
from control_stack import implementation, require_stack
from doc_commands import Command, owned, script, user_env
from rclpy.qos import ReliabilityPolicy
from ros_install import BIN, REPO, Background, bash, ros2, ros2_retry
from std_msgs.msg import String

from rnea_ros import RobotModel, rnea
from rnea_ros.algorithms.dynamics import link_pose
from rnea_ros.demo import EXTRA_ARGS
from rnea_ros.model.example_robots import example_urdf_path
from rnea_ros.sim.ros2_control import hardware_urdf, sourced
from rnea_ros.sim.scenario import PANDA_ARM, PANDA_HOME, write_parameters
from rnea_ros.testing.rosgraph import FRICTION_OFF, Driver

DEMO_TIMEOUT = 900.0  # s: the lock-step demo of 12 simulated seconds (a few minutes when loaded)
START = 180.0  # s: a node loads its kernels first (a cold numba cache in the workspace compiles them)
PANDA = example_urdf_path("panda")
MODEL = RobotModel.from_urdf(PANDA.read_text(), tip_link="panda_hand")
ARM = list(MODEL.joint_names)
COMMANDS = "/effort_controller/commands"
NODE = "/inverse_dynamics"
WRENCH_TYPE = "geometry_msgs/msg/WrenchStamped"
NO_DAEMON = "--no-daemon"  # no ros2 daemon outlives the test

# the keys of the lines these tests run (doc_commands.RUN_BY)
URDF_LAUNCH = "ros2 launch rnea_ros inverse_dynamics.launch.py urdf_file:=panda.urdf tip_link:=panda_hand"
QOS = (
    "ros2 run rnea_ros inverse_dynamics_node --ros-args --params-file config/inverse_dynamics.yaml -r "
    "'~/effort_commands:=/effort_controller/commands' -p qos_"
)
LIFECYCLE_RUN = "ros2 run rnea_ros inverse_dynamics_lifecycle_node --ros-args"
LIFECYCLE_SET = "ros2 lifecycle set /inverse_dynamics "
WRENCH = "ros2 topic pub --once /inverse_dynamics/ee_wrench"
WRENCH_FRAME = "ros2 param set /inverse_dynamics ee_wrench_frame link"
PAYLOAD = "ros2 topic pub --once /inverse_dynamics/payload"


def in_page_order(*groups: list[Command]) -> list[Command]:
    """Commands of one block, owned by several keys, in the order the page writes them."""

    def where(c: Command) -> tuple[str, int]:
        page, line = c.where.rsplit(":", 1)
        return page, int(line)

    commands = sorted((c for group in groups for c in group), key=where)
    assert len({where(c)[0] for c in commands}) == 1, [c.where for c in commands]
    return commands


def run_readme_line(env: dict[str, str], line: str | Command, cwd: Path, attempts: int = 10) -> str:
    """A documented line run by bash as written, with a HOME; its output (it must succeed). Asked
    again while it answers "Node not found" (the daemon's graph may still hold a node that
    ended, not yet the new one), as a person would."""
    text = script(line) if isinstance(line, Command) else line
    for _ in range(attempts):
        done = bash(user_env(env), text, cwd)
        if "Node not found" not in done.stdout + done.stderr:
            break
        time.sleep(2.0)
    assert done.returncode == 0, f"{text}\n{done.stdout}{done.stderr}"
    return done.stdout + done.stderr


def launch(env: dict[str, str], tmp: Path, *args: str) -> Background:
    """`ros2 launch rnea_ros ARGS` in the background."""
    log = tmp / f"launch_{time.monotonic_ns()}.log"
    return Background([str(BIN / "ros2"), "launch", "rnea_ros", *args], env, log)


def param(env: dict[str, str], verb: str, node: str, *args: str) -> str:
    """The output of `ros2 param VERB --no-daemon NODE ARGS`, retried while discovery completes."""
    done = ros2_retry(env, "param", verb, NO_DAEMON, node, *args)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def echo_once(env: dict[str, str], topic: str, driver: Driver, q: np.ndarray, qd: np.ndarray) -> list[float]:
    """`ros2 topic echo --once TOPIC` while the driver publishes the Panda arm's joint_states."""
    echo = Background(
        [str(BIN / "ros2"), "topic", "echo", "--once", NO_DAEMON, topic, "std_msgs/msg/Float64MultiArray"],
        env,
        Path(driver.log_dir) / f"echo_{time.monotonic_ns()}.log",
    )
    try:
        end = time.monotonic() + 60.0
        while echo.proc.poll() is None and time.monotonic() < end:
            driver.joint_states.publish(driver.state(ARM, q, qd))
            driver.spin(0.02)
        assert echo.proc.poll() == 0, echo.output()
        text = "\n".join(line for line in echo.output().splitlines() if not line.startswith("["))
        return list(next(yaml.safe_load_all(text))["data"])
    finally:
        echo.stop()


def diagnostics_until(driver: Driver, key: str, done, timeout: float = 60.0) -> str:
    """The node's /diagnostics value of `key` once done(value) holds (bounded wait)."""
    end, value = time.monotonic() + timeout, None
    while time.monotonic() < end:
        value = driver.latest_diagnostics(timeout=10.0).get(key)
        if value is not None and done(value):
            return value
    raise AssertionError(f"/diagnostics {key}: {value!r} after {timeout} s")


def publish_until(
    env: dict[str, str], line: str, cwd: Path, driver: Driver, key: str, done, node_log
) -> None:
    """A `ros2 topic pub --once` line run until the node's /diagnostics `key` shows it took the
    message (done(value)), as a person would run it again: the command exits right after its one
    publish, and on a loaded machine that message is now and then never delivered. node_log():
    the node's output, for the message of a failure."""
    outs = []
    for _ in range(4):
        outs.append(run_readme_line(env, line, cwd))
        with contextlib.suppress(AssertionError):
            diagnostics_until(driver, key, done, timeout=20.0)
            return
    raise AssertionError(f"{line}: not taken after 4 runs\n{outs}\nnode:\n{node_log()[-3000:]}")


@pytest.fixture(scope="module")
def ros2_daemon(ros_env: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """The ros2 daemon of this test's ROS domain, which the README's lines use (they run without
    --no-daemon): started here, so that it dies with the test process and ends with the module
    instead of being spawned, detached, by the first of those lines."""
    import rclpy
    from ros2cli.daemon import get_address

    assert ros_env["ROS_DOMAIN_ID"] == os.environ["ROS_DOMAIN_ID"]  # get_address reads os.environ

    def listening() -> bool:
        with socket.socket() as s:
            return s.connect_ex(get_address()) == 0

    if listening():  # one of this domain is already running: the lines use it
        yield
        return
    args = ["--rmw-implementation", rclpy.get_rmw_implementation_identifier()]
    args += ["--ros-domain-id", ros_env["ROS_DOMAIN_ID"], "--timeout", "3600"]
    log = tmp_path_factory.mktemp("ros2_daemon") / "daemon.log"
    daemon = Background([str(BIN / "_ros2_daemon"), *args], ros_env, log)
    try:
        end = time.monotonic() + 60.0
        while not listening():
            assert daemon.proc.poll() is None and time.monotonic() < end, daemon.output()
            time.sleep(0.2)
        yield
    finally:
        daemon.stop(grace=5.0)


def wait_until_listed(env: dict[str, str], node: str, timeout: float = 60.0) -> None:
    """Until `ros2 node list` (the daemon's graph) shows `node` (the README's `ros2 param set`
    and `ros2 lifecycle set` answer "Node not found" before; a node of the same name that just
    ended may still be listed)."""
    end, out = time.monotonic() + timeout, ""
    while time.monotonic() < end:
        done = ros2(env, "node", "list")
        out = done.stdout + done.stderr
        if node in done.stdout.split():
            return
        time.sleep(0.5)
    raise AssertionError(f"{node} not in `ros2 node list` after {timeout} s: {out}")


def inertia_matrix(inertia: dict) -> np.ndarray:
    """geometry_msgs/Inertia's six moments given as YAML (absent ones are 0) as a 3×3 matrix."""
    return np.array([[float(inertia.get("i" + min(a, b) + max(a, b), 0.0)) for b in "xyz"] for a in "xyz"])


def xyz(values: dict | None) -> np.ndarray:
    """A geometry_msgs Vector3/Point given as YAML (absent fields are 0)."""
    return np.array([float((values or {}).get(axis, 0.0)) for axis in "xyz"])


@pytest.fixture(scope="class")  # one node for the class
def panda_launch(ros_env: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> Iterator[Background]:
    """The README's launch line with a URDF file, as written, from a folder holding panda.urdf."""
    tmp = tmp_path_factory.mktemp("inverse_dynamics_launch")
    shutil.copy(PANDA, tmp / "panda.urdf")
    (command,) = owned(URDF_LAUNCH)
    line = ["bash", "-c", f"exec {script(command)}"]
    proc = Background(line, user_env(ros_env), tmp / "launch.log", cwd=tmp)
    proc.command = command  # type: ignore[attr-defined]
    try:
        proc.wait_for("from parameter robot_description: 7 joints", START)
        yield proc
    finally:
        code = proc.stop()
    assert code == 0, proc.output()[-4000:]


@pytest.fixture(scope="class")
def driver(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Driver]:
    d = Driver("ros_install_driver")
    d.log_dir = str(tmp_path_factory.mktemp("echo"))  # type: ignore[attr-defined]
    yield d
    d.close()


class TestInverseDynamicsLaunch:
    """The README's `ros2 launch rnea_ros inverse_dynamics.launch.py urdf_file:=panda.urdf
    tip_link:=panda_hand`, one node for the class."""

    def test_launch_with_urdf_file(self, panda_launch: Background) -> None:
        assert panda_launch.command == owned(URDF_LAUNCH)[0]  # type: ignore[attr-defined]
        assert f"commands for {ARM}" in panda_launch.output()

    def test_param_set_and_topic_echo(
        self,
        panda_launch: Background,
        ros_env: dict[str, str],
        driver: Driver,
        ros2_daemon: None,
        tmp_path: Path,
    ) -> None:
        q, qd = np.linspace(-0.5, 0.5, 7), np.full(7, 0.2)
        rigid = rnea(MODEL, q, qd, np.zeros(7))  # no trajectory: gravity + Coriolis
        # the README's line as written; the friction term is then exactly zero (with it on, its
        # measured-velocity share depends on the measured loop period)
        (line,) = owned("ros2 param set /inverse_dynamics compensate.friction false")
        wait_until_listed(ros_env, NODE)
        assert "Set parameter successful" in run_readme_line(ros_env, line, tmp_path)
        assert "Boolean value is: False" in param(ros_env, "get", NODE, "compensate.friction")
        np.testing.assert_allclose(echo_once(ros_env, COMMANDS, driver, q, qd), rigid, rtol=0, atol=1e-9)
        # and a term that is never zero here, to see the running node follow `ros2 param set`
        assert "Set parameter successful" in param(ros_env, "set", NODE, "compensate.gravity", "false")
        coriolis = rigid - rnea(MODEL, q, np.zeros(7), np.zeros(7))
        np.testing.assert_allclose(echo_once(ros_env, COMMANDS, driver, q, qd), coriolis, rtol=0, atol=1e-9)
        assert "Set parameter successful" in param(ros_env, "set", NODE, "compensate.gravity", "true")

    def test_param_set_integer_stays_double(self, panda_launch: Background, ros_env: dict[str, str]) -> None:
        assert "Set parameter successful" in param(ros_env, "set", NODE, "effort_limit_scale", "1")
        assert "Type: double" in param(ros_env, "describe", NODE, "effort_limit_scale")
        assert "Double value is: 1.0" in param(ros_env, "get", NODE, "effort_limit_scale")

    def test_wrenches_and_payload_by_message(
        self,
        panda_launch: Background,
        ros_env: dict[str, str],
        driver: Driver,
        ros2_daemon: None,
        tmp_path: Path,
    ) -> None:
        """The README's "Wrenches and payload by message" block, line by line as written; after
        each, `ros2 topic echo --once` of the command against the core: rnea with the link
        wrenches in force (root axes; a message in link axes rotated by the link's pose) on the
        model with the payload in force. The expected state follows the messages' YAML."""
        q, qd = np.linspace(-0.5, 0.5, 7), np.full(7, 0.2)
        assert "Set parameter successful" in param(ros_env, "set", NODE, "compensate.friction", "false")
        wait_until_listed(ros_env, NODE)
        frame, wrenches, payload = "root", {}, None
        lines = in_page_order(owned(WRENCH), owned(WRENCH_FRAME), owned(PAYLOAD))
        assert len(lines) >= 4, lines
        try:
            for command in lines:
                line, args = command.line, list(command.words)
                if args[:5] == ["ros2", "param", "set", NODE, "ee_wrench_frame"]:
                    out = run_readme_line(ros_env, line, tmp_path)
                    assert "Set parameter successful" in out, out
                    frame = args[5]
                else:
                    assert args[:4] == ["ros2", "topic", "pub", "--once"], line
                    topic, msg = args[4], yaml.safe_load(args[6]) or {}
                    link = (msg.get("header") or {}).get("frame_id") or MODEL.tip_link
                    if topic == f"{NODE}/ee_wrench":
                        w = msg.get("wrench") or {}
                        rot = np.eye(3) if frame == "root" else link_pose(MODEL, q, link)[0]
                        wrench = np.concatenate([rot @ xyz(w.get("force")), rot @ xyz(w.get("torque"))])
                        if wrench.any():
                            wrenches[link] = wrench
                        else:
                            wrenches.pop(link, None)
                        links = set(wrenches)
                        publish_until(
                            ros_env, line, tmp_path, driver, "wrench_links",
                            lambda v, s=links: set(v.split()) == s, panda_launch.output,
                        )  # fmt: skip
                    else:
                        assert topic == f"{NODE}/payload", line
                        i = msg.get("inertia") or {}
                        mass = float(i.get("m", 0.0))
                        if mass == 0:
                            payload = None
                            done = "~/payload cleared it"
                            publish_until(
                                ros_env, line, tmp_path, driver, "payload",
                                lambda v, d=done: d in v, panda_launch.output,
                            )  # fmt: skip
                        else:
                            payload = (link, mass, xyz(i.get("com")), inertia_matrix(i))
                            done = f"{mass:.4g} kg on {link}"
                            publish_until(
                                ros_env, line, tmp_path, driver, "payload",
                                lambda v, d=done: v.startswith(d), panda_launch.output,
                            )  # fmt: skip
                model = MODEL if payload is None else MODEL.with_payload(*payload)
                expected = rnea(model, q, qd, np.zeros(7), wrenches=dict(wrenches))
                assert np.all(np.abs(expected) < MODEL.effort_limit), expected  # not clamped
                got = echo_once(ros_env, COMMANDS, driver, q, qd)
                np.testing.assert_allclose(got, expected, rtol=0, atol=1e-9, err_msg=line)
            assert wrenches and payload is None  # the block's wrenches acted together, its payload went
        finally:  # the node as the other tests of the class expect it: no wrench, root axes
            for link in list(wrenches):  # a zero wrench clears the link's
                zero = f"'{{header: {{frame_id: {link}}}}}'"
                wrenches.pop(link)
                links = set(wrenches)
                publish_until(
                    ros_env,
                    f"ros2 topic pub --once {NODE}/ee_wrench {WRENCH_TYPE} {zero}",
                    tmp_path,
                    driver,
                    "wrench_links",
                    lambda v, s=links: set(v.split()) == s,
                    panda_launch.output,
                )
            param(ros_env, "set", NODE, "ee_wrench_frame", "root")


@contextlib.contextmanager
def panda_on_ros2_control(env: dict[str, str], tmp: Path, controllers: Path) -> Iterator[Background]:
    """The Panda as a robot for ros2_control: mujoco_sim (real time) behind topic_based_ros2_control,
    its URDF on /robot_description, and `ros2 run controller_manager ros2_control_node` with the
    parameter file `controllers` (one of config/), as a bring-up starts them."""
    urdf = hardware_urdf(
        PANDA.read_text(), PANDA_ARM, ["panda_finger_joint1", "panda_finger_joint2"], PANDA_HOME
    )
    sim = {
        "robot_description": urdf,
        "controller_type": "ros2_control",
        "joints": PANDA_ARM,
        "initial_joints": list(PANDA_HOME),
        "initial_positions": list(PANDA_HOME.values()),
        "wall_clock": True,
        "publish_clock": False,
    }
    params = write_parameters({"mujoco_sim": sim}, tmp / "sim.yaml")
    plant = Background(
        [str(BIN / "python"), "-m", "rnea_ros.sim.sim_node", "--ros-args", "--params-file", str(params)],
        env,
        tmp / "sim.log",
    )
    manager = Background(
        [
            str(BIN / "ros2"),
            "run",
            "controller_manager",
            "ros2_control_node",
            "--ros-args",
            "--params-file",
            str(controllers),
        ],
        env,
        tmp / "ros2_control_node.log",
    )
    try:
        yield manager
    finally:
        manager.stop()
        plant.stop()


def test_ros2_control_lines_as_the_readme_runs_them(
    ros_env: dict[str, str], ros2_daemon: None, tmp_path: Path
) -> None:
    """config/controllers.yaml and config/controllers_jtc.yaml loaded by the real controller
    manager (the simulated Panda as its robot), and the README's and docs' `ros2 run
    controller_manager spawner ...` and `ros2 control list_controllers` lines as written: every
    controller they name is loaded with its type and active, and the README's effort controller
    carries a command to the robot unchanged. Skips without ros2_control."""
    stack = require_stack()
    env = sourced(stack.setup, ros_env) if stack.setup is not None else dict(ros_env)
    (listing,) = owned("ros2 control list_controllers")
    spawners = owned("ros2 run controller_manager spawner")
    assert len(spawners) == 2
    for config, controller, type_ in (
        ("controllers.yaml", "effort_controller", "forward_command_controller/ForwardCommandController"),
        (
            "controllers_jtc.yaml",
            "joint_trajectory_controller",
            "joint_trajectory_controller/JointTrajectoryController",
        ),
    ):
        (spawn,) = (c for c in spawners if c.words[-2:] == ("joint_state_broadcaster", controller))
        folder = tmp_path / controller
        folder.mkdir()
        with panda_on_ros2_control(env, folder, REPO / "config" / config) as manager:
            out = run_readme_line(env, spawn, REPO)
            assert f"Configured and activated {controller}" in out, out + manager.output()[-3000:]
            out = run_readme_line(env, listing, REPO)
            assert re.search(rf"{controller}\s+{type_}\s+active", out), out
            broadcaster = r"joint_state_broadcaster\s+joint_state_broadcaster/JointStateBroadcaster\s+active"
            assert re.search(broadcaster, out), out
            if controller == "effort_controller":
                assert_commands_reach_the_robot(f"/{controller}/commands")
            else:
                got = param(env, "get", f"/{controller}", "gains.panda_joint4.p")
                assert "Double value is: 100.0" in got, got  # the file's gains, loaded


def assert_commands_reach_the_robot(topic: str) -> None:
    """Efforts published on the forward controller's topic come back, unchanged, as the effort
    the simulator applies (its ~/joint_states), within 60 s."""
    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.node import Node
    from sensor_msgs.msg import JointState
    from std_msgs.msg import Float64MultiArray

    context = rclpy.Context()
    rclpy.init(context=context)
    node = Node("readme_effort_probe", context=context)
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(node)
    command = [0.5, -0.25, 0.125, 1.0, -0.5, 0.25, -0.125]  # N m, panda_joint1..7
    applied: list[list[float]] = []

    def on_state(msg: JointState) -> None:
        applied.append([msg.effort[list(msg.name).index(j)] for j in PANDA_ARM])

    node.create_subscription(JointState, "/mujoco_sim/joint_states", on_state, 10)
    publisher = node.create_publisher(Float64MultiArray, topic, 10)
    try:
        end = time.monotonic() + 60.0
        while not (applied and applied[-1] == command):
            assert time.monotonic() < end, f"the robot applies {applied[-1:]}, not {command}"
            publisher.publish(Float64MultiArray(data=command))
            executor.spin_once(timeout_sec=0.05)
    finally:
        executor.shutdown()
        node.destroy_node()
        rclpy.try_shutdown(context=context)


def test_managed_node_as_the_readme_runs_it(
    ros_env: dict[str, str], ros2_daemon: None, tmp_path: Path
) -> None:
    """The README's "Managed node (lifecycle)" block as written, from the repo root (its relative
    config/inverse_dynamics.yaml), the URDF (UR5) from the robot_description topic: nothing is
    commanded after `configure` (joint_states subscribed, merged), the core's efforts after
    `activate`."""
    (command,) = owned(LIFECYCLE_RUN)
    transitions = owned(LIFECYCLE_SET)
    run = command.line
    sets = [list(c.words) for c in transitions]
    assert [a[:4] for a in sets] == [["ros2", "lifecycle", "set", NODE]] * 2, transitions
    assert [a[4] for a in sets] == ["configure", "activate"], transitions
    model = RobotModel.from_urdf(example_urdf_path("ur5").read_text())
    names = list(model.joint_names)
    q, qd = np.linspace(-1.0, 1.0, model.nv), np.linspace(0.3, -0.3, model.nv)
    proc = Background(["bash", "-c", f"exec {run}"], user_env(ros_env), tmp_path / "lifecycle.log", cwd=REPO)
    driver = Driver("readme_lifecycle_driver", dict(zip(names, model.effort_limit, strict=True)))
    try:
        wait_until_listed(ros_env, NODE, START)
        driver.description.publish(String(data=example_urdf_path("ur5").read_text()))
        assert driver.no_command_for(driver.state(names, q, qd))  # unconfigured: no subscription

        assert "Transitioning successful" in run_readme_line(ros_env, transitions[0], REPO)
        proc.wait_for(f"from topic robot_description: {model.nv} joints", 60.0)
        end = time.monotonic() + 30.0  # configured: joint_states subscribed (merged, not commanded)
        while driver.joint_states.get_subscription_count() == 0 and time.monotonic() < end:
            driver.spin(0.05)
        assert driver.joint_states.get_subscription_count() > 0
        assert all(r.successful for r in driver.set_parameters(FRICTION_OFF))  # rigid-body efforts
        assert driver.no_command_for(driver.state(names, q, qd), wait=1.0)  # inactive

        assert "Transitioning successful" in run_readme_line(ros_env, transitions[1], REPO)
        got = driver.wait_for_commands(lambda: driver.state(names, q, qd), timeout=60.0)
        np.testing.assert_allclose(got, rnea(model, q, qd, np.zeros(model.nv)), rtol=0, atol=1e-9)
    finally:
        driver.close()
        code = proc.stop()
    assert code == 0, proc.output()[-4000:]


def test_qos_overrides_as_the_readme_runs_them(ros_env: dict[str, str], tmp_path: Path) -> None:
    """The README's "QoS overrides" line as written, from the repo root: each overridden
    reliability is what the graph shows for the node's publisher or subscription."""
    (command,) = owned(QOS)
    run = command.line
    overrides = re.findall(r"-p qos_overrides\.(/[^\s.]+)\.(publisher|subscription)\.reliability:=(\w+)", run)
    assert len(overrides) >= 2, run
    proc = Background(["bash", "-c", f"exec {run}"], user_env(ros_env), tmp_path / "qos.log", cwd=REPO)
    driver = Driver("readme_qos_driver")
    try:
        proc.wait_for("waiting for a URDF on topic robot_description", START)
        for topic, kind, value in overrides:
            info = driver.node.get_publishers_info_by_topic
            if kind == "subscription":
                info = driver.node.get_subscriptions_info_by_topic
            end, found = time.monotonic() + 30.0, []
            while not found and time.monotonic() < end:
                driver.spin(0.1)
                found = [e for e in info(topic) if e.node_name == NODE.lstrip("/")]
            assert len(found) == 1, (topic, kind, found)
            assert found[0].qos_profile.reliability == ReliabilityPolicy[value.upper()], (topic, kind)
    finally:
        driver.close()
        code = proc.stop()
    assert code == 0, proc.output()[-4000:]


def test_trajectory_feedforward_launch(ros_env: dict[str, str], tmp_path: Path) -> None:
    """`ros2 launch rnea_ros trajectory_feedforward.launch.py tip_link:=panda_hand`, the URDF from
    the robot_description topic; `ros2 param set` of an integer keeps the double type."""
    proc = launch(ros_env, tmp_path, "trajectory_feedforward.launch.py", "tip_link:=panda_hand")
    driver = Driver("feedforward_launch_driver")
    try:
        proc.wait_for("waiting for a URDF on topic robot_description", START)
        driver.description.publish(String(data=PANDA.read_text()))
        out = proc.wait_for("from topic robot_description: 7 joints", 60.0)
        assert f"trajectories for {ARM}" in out
        node = "/trajectory_feedforward"
        assert "Set parameter successful" in param(ros_env, "set", node, "effort_limit_scale", "2")
        assert "Type: double" in param(ros_env, "describe", node, "effort_limit_scale")
        assert "Double value is: 2.0" in param(ros_env, "get", node, "effort_limit_scale")
    finally:
        driver.close()
        code = proc.stop()
    assert code == 0, proc.output()[-4000:]


# URDFs whose comments hold ": " (rcl's YAML parsing of `-p robot_description:=...` stops there)
YAML_LIKE_COMMENTS = (
    "ur_description/urdf/ur5_robot.urdf",
    "solo_description/robots/solo12.urdf",
    "tiago_description/robots/tiago.urdf",
)


@pytest.mark.parametrize("name", YAML_LIKE_COMMENTS)
def test_launch_urdf_file_passes_any_urdf_as_text(ros_env: dict[str, str], tmp_path: Path, name: str) -> None:
    """The README's user path for a URDF file, `urdf_file:=`, loads files `-p` cannot pass."""
    path = example_urdf_path(name)
    text = path.read_text()
    assert any(": " in c.split("-->")[0] for c in text.split("<!--")[1:]), "no ': ' in a comment"
    nv = RobotModel.from_urdf(text).nv
    extra = tmp_path / "identified.yaml"  # as `identify --out-params` writes it
    extra.write_text(yaml.safe_dump({"inverse_dynamics": {"ros__parameters": {"effort_limit_scale": 0.5}}}))
    args = (f"urdf_file:={path}", f"extra_params_file:={extra}")
    proc = launch(ros_env, tmp_path, "inverse_dynamics.launch.py", *args)
    try:
        proc.wait_for(f"from parameter robot_description: {nv} joints", START)
        assert "Double value is: 0.5" in param(ros_env, "get", NODE, "effort_limit_scale")
        described = param(ros_env, "get", NODE, "robot_description")
        assert described.startswith("String value is: "), described[:200]
        assert described.removeprefix("String value is: ").rstrip("\n") == text.rstrip("\n")
    finally:
        code = proc.stop()
    assert code == 0, proc.output()[-4000:]


def test_demo_launch_prints_its_table(ros_env: dict[str, str], tmp_path: Path) -> None:
    """docs/demos.md's `ros2 launch rnea_ros demo.launch.py` as written, bounded by
    RNEA_ROS_DEMO_ARGS (the launch file passes it on, after its own arguments): in lock-step
    (every physics step waits for its command: deterministic whatever the load) for 12 simulated
    seconds, on the real controllers when ros2_control is installed: it prints its table and
    meets its targets, and the launch ends when the demo does."""
    (command,) = owned("ros2 launch rnea_ros demo.launch.py")
    extra = f"--lockstep --duration 12 --no-plot --out {tmp_path}"
    proc = Background(
        ["bash", "-c", f"exec {script(command)}"],
        user_env({**ros_env, EXTRA_ARGS: extra}),
        tmp_path / "demo_launch.log",
        cwd=tmp_path,
    )
    try:
        code = proc.wait(DEMO_TIMEOUT)
    finally:
        proc.stop()
    out = proc.output()
    assert "PD + RNEA" in out and "hold drift" in out, out[-4000:]
    assert "ran 12 s simulated" in out and "(lock-step" in out, out[-4000:]
    assert "all met" in out, out[-4000:]
    assert f"controllers: {implementation()}" in out, out[-4000:]  # the real ones when installed
    assert code == 0, out[-4000:]
