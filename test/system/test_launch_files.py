"""Every launch_testing file of test/ (test_*_launch.py: a generate_test_description) under
launch_testing's own runner, `python -m launch_testing.launch_test FILE`, in the colcon-built
workspace's environment: launch_testing's pytest plugin does not load under pytest 9 (the ROS 2
wheels' README). Each must run its tests and pass every one, none skipped. Skips without the
ROS 2 wheels (test/support/ros_install.py)."""

from __future__ import annotations

import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from ros_install import launch_testing_files

TIMEOUT = 300.0  # s: the node loads its kernels (a cold numba cache in the workspace compiles them)


def test_there_are_launch_testing_files() -> None:
    names = [p.name for p in launch_testing_files()]
    assert "test_inverse_dynamics_launch.py" in names and "test_trajectory_feedforward_launch.py" in names


@pytest.mark.parametrize("path", launch_testing_files(), ids=lambda p: p.name)
def test_launch_testing_file_passes(path: Path, ros_env: dict[str, str], tmp_path: Path) -> None:
    report = tmp_path / "report.xml"
    proc = subprocess.run(
        [sys.executable, "-m", "launch_testing.launch_test", str(path), "--junit-xml", str(report)],
        env=ros_env,
        cwd=tmp_path,  # not the repo root, whose launch/ folder would import as the launch package
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, output[-6000:]
    cases = ET.parse(report).getroot().iter("testcase")
    outcome = {case.get("name"): [child.tag for child in case] for case in cases}
    assert len(outcome) >= 3, f"too few tests ran: {outcome}\n{output[-3000:]}"
    bad = {name: tags for name, tags in outcome.items() if tags}  # failure, error or skipped
    assert not bad, f"{bad}\n{output[-6000:]}"
