"""rnea_ros_record and rnea_ros_trigger as processes: a real joint_states publisher process ->
the recorder process -> the bag read back with rnea_ros.identification.bag, every number compared exactly."""

from __future__ import annotations

import contextlib
import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import yaml
from joint_state_source import NAMES, values
from paths import SUPPORT
from rosbags.rosbag2 import Reader

from rnea_ros.identification.bag import read_joint_states
from rnea_ros.ros.processes import die_with_parent

SOURCE = SUPPORT / "joint_state_source.py"
ENV = {**os.environ, "ROS_DOMAIN_ID": os.environ["ROS_DOMAIN_ID"], "ROS_LOCALHOST_ONLY": "1"}


def start(args: list[str], log: Path | None = None) -> subprocess.Popen:
    out = subprocess.PIPE if log is None else log.open("w")
    return subprocess.Popen(
        [sys.executable, *args], stdout=out, stderr=subprocess.STDOUT, env=ENV,
        preexec_fn=die_with_parent,
    )  # fmt: skip


def wait_line(proc: subprocess.Popen, want: str, timeout: float = 30.0) -> None:
    """Read the process's output until a line equals `want` (bounded)."""
    assert proc.stdout is not None
    fd = proc.stdout.fileno()
    deadline = time.monotonic() + timeout
    text = getattr(proc, "text_so_far", "")
    while time.monotonic() < deadline:
        lines = text.split("\n")
        if want in lines[:-1]:
            proc.text_so_far = "\n".join(lines[lines.index(want) + 1 :])  # type: ignore[attr-defined]
            return
        ready, _, _ = select.select([fd], [], [], 0.1)
        if ready:
            chunk = os.read(fd, 65536).decode()
            assert chunk, f"process ended before printing {want!r}: {text}"
            text += chunk
    raise AssertionError(f"no {want!r} within {timeout} s: {text}")


def finish(proc: subprocess.Popen, timeout: float = 20.0) -> int:
    try:
        return proc.wait(timeout)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(5)


def assert_exact(bag: Path) -> np.ndarray:
    """Every message of the bag equals what the source published for its index; the indexes."""
    states = read_joint_states(bag)
    assert states.names == tuple(NAMES) and states.time_source == "header" and states.skipped == 0
    index = np.rint(states.t).astype(int) + round(states.start) - 1000
    assert np.max(np.abs(states.t - (index - index[0]))) < 1e-9  # stamps 1000 + k s
    expected = np.array([values(k) for k in index])  # (N, 3, n)
    assert np.array_equal(states.position, expected[:, 0])
    assert states.velocity is not None and np.array_equal(states.velocity, expected[:, 1])
    assert states.effort is not None and np.array_equal(states.effort, expected[:, 2])
    return index


def storage_of(bag: Path) -> str:
    info = yaml.safe_load((bag / "metadata.yaml").read_text())["rosbag2_bagfile_information"]
    assert info["version"] == 9  # rosbag2's metadata version in Jazzy
    return info["storage_identifier"]


def stop_source(source: subprocess.Popen) -> None:
    """Stop the test's publisher (not the subject under test): SIGINT, then SIGKILL after 10 s. On a
    loaded machine it twice outlived the 10 s, which failed a recording that was fine."""
    source.send_signal(signal.SIGINT)
    with contextlib.suppress(subprocess.TimeoutExpired):  # finish() has killed it then
        finish(source, 10.0)


def test_record_until_stop_topic_every_message_exact(tmp_path) -> None:
    bag = tmp_path / "run"
    log = tmp_path / "record.log"
    recorder = start(["-m", "rnea_ros.tools.record", "-o", str(bag), "--stop-topic", "/rec_stop"], log)
    source = start([str(SOURCE), "reliable", "200", "200"])
    try:
        wait_line(source, "done")
        trigger = subprocess.run(
            [sys.executable, "-m", "rnea_ros.tools.trigger", "/rec_stop"],
            capture_output=True, text=True, env=ENV, timeout=60, check=False,
        )  # fmt: skip
        assert trigger.returncode == 0, trigger.stderr
        assert finish(recorder) == 0, log.read_text()
    finally:
        stop_source(source)
        finish(recorder, 5.0)
    assert "recording /joint_states (reliable)" in log.read_text()
    assert "stopped (/rec_stop); wrote 200 on /joint_states" in log.read_text()
    assert list(assert_exact(bag)) == list(range(200))  # all of them, in order
    with Reader(bag) as reader:
        assert reader.message_count == 200
    assert storage_of(bag) == "mcap"


@pytest.mark.parametrize(
    ("sig", "storage", "reliability"),
    [(signal.SIGINT, "mcap", "best_effort"), (signal.SIGTERM, "sqlite3", "reliable")],
)
def test_signal_mid_recording_leaves_a_readable_bag(tmp_path, sig, storage, reliability) -> None:
    bag = tmp_path / "run"
    log = tmp_path / "record.log"
    recorder = start(["-m", "rnea_ros.tools.record", "-o", str(bag), "--storage", storage], log)
    source = start([str(SOURCE), reliability, "0", "100"])
    try:
        wait_line(source, "published 30")
        recorder.send_signal(sig)
        assert finish(recorder) == 0, log.read_text()
    finally:
        stop_source(source)
        finish(recorder, 5.0)
    kind = "reliable" if reliability == "reliable" else "best effort"
    assert f"recording /joint_states ({kind})" in log.read_text()
    assert f"stopped ({signal.Signals(sig).name})" in log.read_text()
    index = assert_exact(bag)
    assert index.size >= 1
    if reliability == "reliable":  # nothing lost in between
        assert np.array_equal(index, np.arange(index[0], index[0] + index.size))
    assert storage_of(bag) == storage


def test_duration_and_bad_arguments(tmp_path) -> None:
    bag = tmp_path / "run"
    done = subprocess.run(
        [sys.executable, "-m", "rnea_ros.tools.record", "-o", str(bag), "--duration", "0.5"],
        capture_output=True, text=True, env=ENV, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 1 and "stopped (--duration 0.5)" in done.stderr  # nothing published
    assert "nothing recorded" in done.stderr
    with Reader(bag) as reader:  # an empty but valid bag
        assert reader.message_count == 0
    again = subprocess.run(
        [sys.executable, "-m", "rnea_ros.tools.record", "-o", str(bag)],
        capture_output=True, text=True, env=ENV, timeout=60, check=False,
    )  # fmt: skip
    assert again.returncode == 2 and "exists" in again.stderr
    lonely = subprocess.run(
        [sys.executable, "-m", "rnea_ros.tools.trigger", "/nobody_listens", "--timeout", "0.5"],
        capture_output=True, text=True, env=ENV, timeout=60, check=False,
    )  # fmt: skip
    assert lonely.returncode == 1 and "no subscriber on /nobody_listens" in lonely.stderr
