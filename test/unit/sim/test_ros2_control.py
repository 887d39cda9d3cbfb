"""rnea_ros.sim.ros2_control without running the stack: the `<ros2_control>` block it adds (read
back as the XML it is, and the URDF still the same robot for rnea_ros and MuJoCo), the controller
parameters it writes against the repository's config/ files, and where it finds the stack.
Plus rnea_ros.sim.answer_pairing.TickAnswers and rnea_ros.sim.loop_timing on made-up data."""

from __future__ import annotations

import os
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest
import yaml

from rnea_ros.model.example_robots import example_urdf_path
from rnea_ros.model.robot_model import RobotModel
from rnea_ros.sim import ros2_control
from rnea_ros.sim.answer_pairing import TickAnswers
from rnea_ros.sim.demos.jtc.demo import KD, KP, controller_parameters
from rnea_ros.sim.loop_timing import loop_timing
from rnea_ros.sim.mujoco_arm import MujocoArm
from rnea_ros.sim.ros2_control import forward_parameters, hardware_urdf
from rnea_ros.sim.scenario import PANDA_ARM, PANDA_HOME

REPO = Path(__file__).resolve().parents[3]
PANDA = example_urdf_path("panda").read_text()
FINGERS = ["panda_finger_joint1", "panda_finger_joint2"]


def test_the_block_names_the_simulator_topics_and_every_interface_in_command_order() -> None:
    urdf = hardware_urdf(PANDA, PANDA_ARM[::-1], FINGERS, PANDA_HOME)
    (block,) = ET.fromstring(urdf).findall("ros2_control")
    hardware = block.find("hardware")
    assert hardware.find("plugin").text == "topic_based_ros2_control/TopicBasedSystem"
    params = {p.get("name"): p.text for p in hardware.findall("param")}
    assert params == {
        "joint_commands_topic": "/mujoco_sim/joint_commands",
        "joint_states_topic": "/mujoco_sim/joint_states",
        "trigger_joint_command_threshold": "-1",
    }
    joints = block.findall("joint")
    assert [j.get("name") for j in joints] == [*PANDA_ARM[::-1], *FINGERS]  # commanded first
    for joint in joints:
        commands = [c.get("name") for c in joint.findall("command_interface")]
        assert commands == (["effort"] if joint.get("name") in PANDA_ARM else [])
        states = joint.findall("state_interface")
        assert [s.get("name") for s in states] == ["position", "velocity", "effort"]
        (initial,) = states[0].findall("param")
        assert float(initial.text) == PANDA_HOME[joint.get("name")]


def test_the_described_robot_is_unchanged_and_an_old_block_is_replaced() -> None:
    urdf = hardware_urdf(PANDA, PANDA_ARM, FINGERS, PANDA_HOME)
    a, b = RobotModel.from_urdf(PANDA), RobotModel.from_urdf(urdf)
    assert a.joint_names == b.joint_names
    np.testing.assert_array_equal(a.effort_limit, b.effort_limit)
    assert MujocoArm(urdf).joint_names == MujocoArm(PANDA).joint_names
    again = hardware_urdf(urdf, PANDA_ARM[:3], (), {})  # a URDF with its own block (xArm7's)
    (block,) = ET.fromstring(again).findall("ros2_control")
    assert [j.get("name") for j in block.findall("joint")] == PANDA_ARM[:3]
    with pytest.raises(ValueError, match="no_such_joint"):
        hardware_urdf(PANDA, ["no_such_joint"])


def _sections(path: Path) -> dict:
    return {k: v["ros__parameters"] for k, v in yaml.safe_load(path.read_text()).items()}


def test_the_forward_demo_loads_what_config_controllers_yaml_says() -> None:
    """The demo's controller parameters for the Panda are config/controllers.yaml's, plus the
    clock it runs on (use_sim_time: lock-step)."""
    config = _sections(REPO / "config" / "controllers.yaml")
    for lockstep in (False, True):
        ours = forward_parameters(PANDA_ARM, lockstep)
        assert ours["controller_manager"].pop("use_sim_time") is lockstep
        assert ours == config


def test_the_jtc_demo_loads_what_config_controllers_jtc_yaml_says() -> None:
    """Same joints, interfaces and gains as config/controllers_jtc.yaml (the demo calls its JTC
    `jtc` and sets i and ff_velocity_scale explicitly to their defaults, 0)."""
    config = _sections(REPO / "config" / "controllers_jtc.yaml")
    ours = controller_parameters(lockstep=True)
    assert ours["controller_manager"]["update_rate"] == config["controller_manager"]["update_rate"]
    jtc, theirs = ours["jtc"], config["joint_trajectory_controller"]
    for key in ("joints", "command_interfaces", "state_interfaces"):
        assert jtc[key] == theirs[key]
    for joint, p, d in zip(PANDA_ARM, KP, KD, strict=True):
        assert jtc["gains"][joint] == {"p": p, "i": 0.0, "d": d, "ff_velocity_scale": 0.0}
        assert theirs["gains"][joint] == {"p": p, "i": 0.0, "d": d}


def _prefix(root: Path, packages: list[str], node: bool) -> Path:
    for package in packages:
        (root / "share" / package).mkdir(parents=True)
        (root / "share" / package / "package.xml").write_text(
            f"<package><version>1.2.{len(package)}</version></package>"
        )
    if node:
        (root / ros2_control.NODE).parent.mkdir(parents=True)
        (root / ros2_control.NODE).write_text("")
    return root


def test_a_ros_install_on_ament_prefix_path_is_found_only_complete(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(ros2_control.sys, "prefix", str(tmp_path / "venv"))  # no prebuilt here
    a = _prefix(tmp_path / "a", ["controller_manager", *ros2_control.PLUGINS[:2]], True)
    b = _prefix(tmp_path / "b", list(ros2_control.PLUGINS[2:]), False)
    stack = ros2_control.find({"AMENT_PREFIX_PATH": f"{a}{os.pathsep}{b}"})
    assert stack is not None and stack.prefix == a and not stack.prebuilt
    assert stack.versions["controller_manager"] == "1.2.18"
    assert stack.versions["joint_trajectory_controller"] == "1.2.27"  # from the other prefix
    assert ros2_control.find({"AMENT_PREFIX_PATH": str(a)}) is None  # plugins missing
    assert ros2_control.find({"AMENT_PREFIX_PATH": str(b)}) is None  # no ros2_control_node
    assert ros2_control.find({}) is None
    assert ros2_control.choose("simulated") is None
    with pytest.raises(RuntimeError, match="ros2_control is not installed"):
        ros2_control.choose("ros2_control")
    with pytest.raises(ValueError, match="--controllers"):
        ros2_control.choose("real")


def test_the_prebuilt_setup_sh_is_applied_for_the_stack_programs(tmp_path: Path, monkeypatch) -> None:
    venv = _prefix(tmp_path / "venv", ["controller_manager", *ros2_control.PLUGINS], True)
    setup = venv / ros2_control.PREBUILT_SETUP
    setup.parent.mkdir(parents=True, exist_ok=True)
    setup.write_text(f'export LD_LIBRARY_PATH="{venv}/lib${{LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}}"\n')
    monkeypatch.setattr(ros2_control.sys, "prefix", str(venv))
    monkeypatch.setenv("LD_LIBRARY_PATH", "/somewhere")
    stack = ros2_control.find()
    assert stack is not None and stack.prebuilt and stack.setup == setup
    env = stack.env()
    assert env["LD_LIBRARY_PATH"] == f"{venv}/lib:/somewhere"  # sourced for the children only
    assert os.environ["LD_LIBRARY_PATH"] == "/somewhere"


def test_tick_answers_time_lock_step_answers_from_the_publication_and_others_from_the_wall() -> None:
    answers = TickAnswers(keep=3)
    answers.published(1_000_000, 10.0)
    answers.published(1_000_000, 11.0)  # published again: the latency counts from the first time
    assert not answers.seen and not answers.answered(1_000_000)
    answers.answer(1_000_000, [1.0, 2.0], 10.004, 0)
    answers.answer(1_000_000, [9.0, 9.0], 10.5, 0)  # a second answer to the same state: ignored
    answers.answer(5_000_000_000, [3.0], 0.0, 5_002_000_000)  # a wall-clock stamp, 2 ms ago
    assert answers.values(1_000_000) == (1.0, 2.0) and answers.answered(5_000_000_000)
    np.testing.assert_allclose(answers.latencies, [0.004, 0.002], atol=1e-12)
    for stamp in range(3):
        answers.answer(stamp, [0.0], 0.0, 0)
    assert answers.values(1_000_000) is None  # only the newest `keep` are kept


def test_loop_timing_on_a_made_up_run() -> None:
    """Steps every 1 ms, each sent 0.1 ms after it holds; the controller manager cycles every
    1 ms, 0.5 ms after a step, misses the cycles at 5.5 and 6.5 ms and reads the newest state
    except at 8.5 ms (step 6, queued: 7 and 8 were sent), 9.5 ms (step 8: 9 was sent) and 10.5 ms
    (step 8 again: 9 and 10 were sent)."""
    ms = 1_000_000
    stamps = np.arange(12) * ms
    velocities = np.arange(1.0, 13.0)[:, None] * [1.0, -1.0]  # unique per step
    sent_wall = stamps + ms // 10
    cycle = np.array([0, 1, 2, 3, 4, 7, 8, 9, 10]) * ms + ms // 2
    read = np.array([0, 1, 2, 3, 4, 7, 6, 8, 8])  # the step each cycle read
    timing = loop_timing(cycle, velocities[read], stamps, velocities, stamps, sent_wall)
    assert timing.cycles == 9 and timing.missed == 2
    np.testing.assert_allclose(timing.period, (1e-3, np.percentile(np.diff(cycle) * 1e-9, 99), 3e-3))
    assert timing.matched == 9
    ages = (cycle - stamps[read]) * 1e-9
    np.testing.assert_allclose(timing.age, (np.median(ages), np.percentile(ages, 99), ages.max()))
    assert timing.queued == 3
    assert timing.repeated == 1
