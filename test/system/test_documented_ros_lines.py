"""The documented commands that start the nodes, run as written by bash with a HOME
(test/support/doc_commands.py) on a ROS 2 install (a colcon-built workspace, sourced), each from
the folder its page works in: the node's command must reach the topic the line names (a `~`
expanded by bash would leave it unheard), and equal the core's efforts. Skips without the ROS 2
wheels."""

from __future__ import annotations

import contextlib
import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
import yaml
from doc_commands import ID_LAUNCH, Command, owned, run, script, user_env
from identification_bags import joint_states, record, unlike_its_urdf
from ros_install import REPO, Background
from std_msgs.msg import Float64MultiArray, String

from rnea_ros import RobotModel, rnea
from rnea_ros.model.example_robots import example_urdf_path
from rnea_ros.testing.rosgraph import FRICTION_OFF, Driver, rclpy

START = 180.0  # s: a node loads its kernels first (a cold numba cache in the workspace compiles them)
COMMANDS = "/effort_controller/commands"
JTC_IN = "/joint_trajectory_controller/joint_trajectory"
PANDA = example_urdf_path("panda")
UR5 = example_urdf_path("ur5")


def start(command: Command, env: dict[str, str], cwd: Path, log: Path) -> Background:
    """A documented line in the background, as a user runs it in a terminal."""
    return Background(["bash", "-c", f"exec {script(command)}"], user_env(env), log, cwd=cwd)


@contextlib.contextmanager
def running(command: Command, env: dict[str, str], cwd: Path, log: Path) -> Iterator[Background]:
    proc = start(command, env, cwd, log)
    try:
        yield proc
    finally:
        code = proc.stop()
        assert code == 0, f"{command.line}: exit {code}\n{proc.output()[-4000:]}"


class Commands:
    """What arrives on a topic of Float64MultiArray (a controller's command topic)."""

    def __init__(self, driver: Driver, topic: str = COMMANDS) -> None:
        self.driver, self.got = driver, []
        driver.node.create_subscription(Float64MultiArray, topic, lambda m: self.got.append(list(m.data)), 10)

    def answer(self, names, q, qd, timeout: float = 60.0) -> np.ndarray:
        """The first command after this state is published (again every 50 ms until one comes)."""
        self.got.clear()
        end = time.monotonic() + timeout
        while not self.got:
            assert time.monotonic() < end, f"nothing on the command topic within {timeout} s"
            self.driver.joint_states.publish(self.driver.state(names, q, qd))
            self.driver.spin(0.05)
        return np.array(self.got[0])


def loaded(proc: Background, driver: Driver, urdf: Path) -> tuple[RobotModel, list[str]]:
    """Once the node has its model (publishing the URDF on robot_description when it waits for
    it): the model it commands and the joints it names."""
    end = time.monotonic() + START
    while "joints" not in proc.output() or "commands for [" not in proc.output():
        if "waiting for a URDF on topic robot_description" in proc.output():
            driver.description.publish(String(data=urdf.read_text()))
        assert proc.proc.poll() is None and time.monotonic() < end, proc.output()[-4000:]
        driver.spin(0.5)
    line = next(ln for ln in proc.output().splitlines() if "commands for [" in ln)
    names = yaml.safe_load(line.split("commands for ", 1)[1].split("]", 1)[0] + "]")
    return RobotModel.from_urdf(urdf.read_text()), names


def check_commands(proc: Background, driver: Driver, urdf: Path, reference: RobotModel | None = None) -> None:
    """The node's command on /effort_controller/commands for a state with velocity, friction
    off: the reference model's rnea (gravity + Coriolis; no trajectory yet) over its joints."""
    model, names = loaded(proc, driver, urdf)
    model = reference or model
    assert all(r.successful for r in driver.set_parameters(FRICTION_OFF))
    cols = [model.joint_names.index(j) for j in names]
    q, qd = np.zeros(model.nv), np.zeros(model.nv)  # joints it does not command: locked at 0
    lower, upper = model.position_lower[cols], model.position_upper[cols]
    q[cols] = np.clip(np.linspace(-0.6, 0.6, len(cols)), lower, upper)
    qd[cols] = np.linspace(0.2, -0.2, len(cols))
    got = Commands(driver).answer(list(model.joint_names), q, qd)
    expected = rnea(model, q, qd, np.zeros(model.nv))[cols]
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-9, err_msg=proc.output()[-2000:])


@pytest.fixture()
def folder(tmp_path: Path) -> Path:
    """The user's folder: the Panda's URDF as panda.urdf and as robot.urdf."""
    work = tmp_path / "work"
    work.mkdir()
    for name in ("panda.urdf", "robot.urdf"):
        shutil.copy(PANDA, work / name)
    return work


@pytest.fixture()
def driver() -> Iterator[Driver]:
    d = Driver(f"doc_driver_{time.monotonic_ns()}")
    yield d
    d.close()


def test_inverse_dynamics_launch_lines(ros_env: dict[str, str], folder: Path, driver: Driver) -> None:
    """Every `ros2 launch rnea_ros inverse_dynamics.launch.py` line of the pages (URDF from the
    topic or from a file of the current folder): its commands reach /effort_controller/commands
    and are the core's."""
    for command in owned(ID_LAUNCH):
        with running(command, ros_env, folder, folder / f"launch_{time.monotonic_ns()}.log") as proc:
            check_commands(proc, driver, PANDA)


def test_run_node_lines(ros_env: dict[str, str], tmp_path: Path, driver: Driver) -> None:
    """Every `ros2 run rnea_ros inverse_dynamics_node` line, from the repository root (the pages'
    config/…), the URDF from the robot_description topic: the remap of `~/effort_commands` holds
    (with `~` unquoted, bash sends /home/…/effort_commands and nothing reaches the controller)."""
    for command in owned("ros2 run rnea_ros inverse_dynamics_node --ros-args"):
        with running(command, ros_env, REPO, tmp_path / f"run_{time.monotonic_ns()}.log") as proc:
            check_commands(proc, driver, PANDA)


def test_parameter_file_copies(ros_env: dict[str, str], folder: Path, driver: Driver) -> None:
    """The config files' recipe: copy the package's file into the current folder, launch with
    the copy (the node waits for the URDF on the topic)."""
    for command in owned("cp $(ros2 pkg prefix --share rnea_ros)/config/"):
        done = run(command, ros_env, folder)
        assert done.returncode == 0, done.stdout + done.stderr
    assert {p.name for p in folder.glob("my_*.yaml")} == {
        "my_inverse_dynamics.yaml",
        "my_trajectory_feedforward.yaml",
    }
    (launch,) = owned(ID_LAUNCH + " params_file:=my_")
    with running(launch, ros_env, folder, folder / "launch.log") as proc:
        check_commands(proc, driver, PANDA)
    (feedforward,) = owned("ros2 launch rnea_ros trajectory_feedforward.launch.py params_file:=my_")
    with running(feedforward, ros_env, folder, folder / "feedforward.log") as proc:
        check_trajectory_out(proc, feedforward)


def check_trajectory_out(proc: Background, command: Command) -> None:
    """trajectory_feedforward started by `command`: a two-point trajectory of the arm sent to
    ~/trajectory_in comes out on /joint_trajectory_controller/joint_trajectory, each point's
    effort Pinocchio's rnea + the friction law there (the fingers at their joint_states)."""
    from pinref import PinRef
    from test_trajectory_feedforward import Driver as FeedforwardDriver
    from test_trajectory_feedforward import Points, reference, trajectory
    from trajectory_msgs.msg import JointTrajectory

    from rnea_ros import Friction

    panda = PinRef("panda")
    d = FeedforwardDriver(f"doc_feedforward_{time.monotonic_ns()}")
    out: list[JointTrajectory] = []
    d.node.create_subscription(JointTrajectory, JTC_IN, out.append, 10)
    try:
        end = time.monotonic() + START
        while d.status().get("model_loaded") != "True":
            if "waiting for a URDF on topic robot_description" in proc.output():
                d.node.create_publisher(String, "robot_description", qos_latched()).publish(
                    String(data=PANDA.read_text())
                )
            assert time.monotonic() < end and proc.proc.poll() is None, proc.output()[-4000:]
            d.spin_until(lambda: False, 0.5)
        d.wait_ready()  # includes a subscriber on the remapped ~/trajectory_out: ours
        held = np.zeros(panda.model.nv)  # the fingers, measured or not (tip_link: locked), at 0
        arm = [f"panda_joint{i}" for i in range(1, 8)]
        home = np.array([0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785])
        d.publish_state(arm, home)
        held[[panda.model.joint_index(j) for j in arm]] = home
        d.pub.publish(trajectory(arm, [0.0, 1.0], np.array([home, home + 0.1])))
        assert d.spin_until(lambda: bool(out), 30.0), (
            f"{command.line}: nothing on {JTC_IN}\n{proc.output()[-3000:]}"
        )
        points = Points(out[-1])
        assert points.names == arm and points.t.size >= 2
        err = np.abs(points.effort - reference(panda, points, held, Friction.from_model(panda.model)))
        assert err.max() < 1e-9, err.max()
    finally:
        d.close()


def qos_latched():
    from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy

    return QoSProfile(
        depth=1, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL
    )


def test_trajectory_feedforward_lines(ros_env: dict[str, str], tmp_path: Path) -> None:
    """Every `trajectory_feedforward` launch and run line, from the repository root: the
    annotated trajectory reaches joint_trajectory_controller's topic."""
    commands = owned("ros2 launch rnea_ros trajectory_feedforward.launch.py")
    commands += owned("ros2 run rnea_ros trajectory_feedforward_node --ros-args")
    assert len(commands) >= 3
    for command in commands:
        with running(command, ros_env, REPO, tmp_path / f"feedforward_{time.monotonic_ns()}.log") as proc:
            check_trajectory_out(proc, command)


def test_contact_state_line(ros_env: dict[str, str], tmp_path: Path) -> None:
    """docs/floating_base_node.md's `ros2 topic pub --once …/contact_state` line against the node on
    solo12 standing on four feet: the right hind foot lifts off (mask 1110) and the command is
    contact-consistent inverse dynamics on the other three."""
    import test_floating_base_node as floating

    (command,) = owned("ros2 topic pub --once /inverse_dynamics/contact_state")
    params = {
        "robot_description": floating.XML,
        "root_joint": "floating",
        "contacts.links": floating.FEET,
        "contacts.friction": [0.7],
        **FRICTION_OFF,
    }
    from rnea_ros.testing.rosgraph import start_node, stop

    proc = start_node(tmp_path, params)
    d = Driver("doc_contact_driver")
    n = d.node
    d.odometry = n.create_publisher(floating.Odometry, "/inverse_dynamics/odometry", 10)  # type: ignore[attr-defined]
    try:
        floating.first_command(d)
        assert floating.statuses(d)["contacts"]["contact_mask"] == "1111"
        for _ in range(4):  # `--once`: a person runs it again when the node did not take it
            done = run(command, ros_env, tmp_path, timeout=120.0)
            assert done.returncode == 0, done.stdout + done.stderr
            if floating.statuses(d)["contacts"]["contact_mask"] == "1110":
                break
        assert floating.statuses(d)["contacts"]["contact_mask"] == "1110"
        got = floating.command(d)
        three = floating.expected(floating.FEET[:3])[2]
        assert got is not None and np.allclose(got, three.tau, rtol=0, atol=1e-9)
    finally:
        d.close()
        output = stop(proc)
    assert "Traceback" not in output, output


# ------------------------------------------------------- docs/identification.md's recipe
GAINS = {
    "inverse_dynamics": {
        "ros__parameters": {
            "feedback": {
                "kp": [400.0, 400.0, 200.0, 50.0, 50.0, 20.0],
                "kd": [40.0, 40.0, 20.0, 5.0, 5.0, 2.0],
            },
        }
    }
}
TOOL = ("tool0", 1.2, (0.01, -0.02, 0.07))


@pytest.fixture()
def robot_folder(tmp_path: Path) -> Path:
    """The folder of the recipe: robot.urdf (a UR5) and gains.yaml (the user's PD gains)."""
    work = tmp_path / "robot"
    work.mkdir()
    shutil.copy(UR5, work / "robot.urdf")
    (work / "gains.yaml").write_text(yaml.safe_dump(GAINS))
    return work


def ur5() -> RobotModel:
    return RobotModel.from_urdf(UR5.read_text(), tip_link="tool0")


def test_identification_recipe(ros_env: dict[str, str], robot_folder: Path, driver: Driver) -> None:
    """docs/identification.md's recipe on a robot (`ros2` lines), in the folder of robot.urdf and
    gains.yaml; the recordings (run_a/, run_b/ with a 1.2 kg tool) come from a UR5 unlike its
    URDF, the reference for what is identified. The node runs on the URDF, then on what was
    identified (its commands: the identified model's rnea)."""
    truth = unlike_its_urdf(ur5(), seed=5)
    record(robot_folder / "run_a", truth, seed=1, extra=("gripper_joint",))
    record(robot_folder / "run_b", truth.with_payload(*TOOL), seed=2, extra=("gripper_joint",))
    (first,) = owned(ID_LAUNCH + " urdf_file:=robot.urdf params_file:=gains.yaml")
    (on_identified,) = owned(ID_LAUNCH + " urdf_file:=identified.urdf")
    identify_a, identify_b = owned("ros2 run rnea_ros rnea_ros_identify")
    assert "run_a/" in identify_a.line and "run_b/" in identify_b.line

    with running(first, ros_env, robot_folder, robot_folder / "urdf.log") as proc:
        check_commands(proc, driver, robot_folder / "robot.urdf")
    done = run(identify_a, ros_env, robot_folder, timeout=900.0)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    params = yaml.safe_load((robot_folder / "identified.yaml").read_text())["inverse_dynamics"][
        "ros__parameters"
    ]
    np.testing.assert_allclose(params["friction"]["viscous"], truth.damping, rtol=0.05)
    np.testing.assert_allclose(params["friction"]["coulomb"], truth.coulomb, rtol=0.02)
    identified = RobotModel.from_urdf((robot_folder / "identified.urdf").read_text())
    q, qd = np.linspace(-0.6, 0.6, 6), np.linspace(0.2, -0.2, 6)
    differs = rnea(identified, q, qd, np.zeros(6)) - rnea(ur5(), q, qd, np.zeros(6))
    assert np.abs(differs).max() > 0.05  # the check below tells the identified model from the URDF
    with running(on_identified, ros_env, robot_folder, robot_folder / "identified.log") as proc:
        check_commands(proc, driver, robot_folder / "identified.urdf", reference=identified)
    done = run(identify_b, ros_env, robot_folder, timeout=900.0)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    tool = yaml.safe_load((robot_folder / "with_tool.yaml").read_text())["inverse_dynamics"][
        "ros__parameters"
    ]
    assert tool["payload"]["link"] == TOOL[0]
    assert tool["payload"]["mass"] == pytest.approx(TOOL[1], rel=0.02)


def test_identification_recipe_pip_only(ros_env: dict[str, str], robot_folder: Path, driver: Driver) -> None:
    """The recipe's pip-only lines in the folder of robot.urdf and gains.yaml: the node's command
    reaches /effort_controller/commands; `rnea_ros_record` records what the arm publishes until
    `rnea_ros_trigger` stops it; `rnea_ros_identify` finds the friction of the arm that moved."""
    (node,) = owned("inverse_dynamics_node --ros-args --params-file gains.yaml")
    (recorder,) = owned("rnea_ros_record -o run_a")
    (stop_line,) = owned("rnea_ros_trigger /rnea_ros_record/stop")
    (identify,) = owned("rnea_ros_identify run_a/ --urdf robot.urdf")
    with running(node, ros_env, robot_folder, robot_folder / "node.log") as proc:
        check_commands(proc, driver, robot_folder / "robot.urdf")

    truth = unlike_its_urdf(ur5(), seed=6)
    stamps, names, q, qd, tau = joint_states(truth, seed=3, duration=30.0, rate=250.0)
    rec = start(recorder, ros_env, robot_folder, robot_folder / "record.log")
    try:
        end = time.monotonic() + 60.0
        while driver.joint_states.get_subscription_count() == 0:  # the recorder subscribes
            assert time.monotonic() < end and rec.proc.poll() is None, rec.output()
            driver.spin(0.1)
        driver.spin(1.0)
        from sensor_msgs.msg import JointState

        for k in range(len(stamps)):  # the arm's joint_states, stamped with its own clock
            msg = JointState(name=names, position=list(q[k]), velocity=list(qd[k]), effort=list(tau[k]))
            msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(round(stamps[k] * 1e9), 1_000_000_000)
            driver.joint_states.publish(msg)
            if k % 20 == 0:
                rclpy.spin_once(driver.node, timeout_sec=0.01)
        driver.spin(2.0)
        done = run(stop_line, ros_env, robot_folder, timeout=120.0)
        assert done.returncode == 0, done.stdout + done.stderr
        assert rec.wait(60.0) == 0, rec.output()
    finally:
        rec.stop()
    done = run(identify, ros_env, robot_folder, timeout=900.0)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    params = yaml.safe_load((robot_folder / "identified.yaml").read_text())["inverse_dynamics"][
        "ros__parameters"
    ]
    np.testing.assert_allclose(params["friction"]["viscous"], truth.damping, rtol=0.05)
    np.testing.assert_allclose(params["friction"]["coulomb"], truth.coulomb, rtol=0.02)
