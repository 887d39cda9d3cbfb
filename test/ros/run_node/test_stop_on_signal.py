"""Every node process ends with exit code 0 on SIGINT or SIGTERM, whenever the signal comes.

rclpy's signal thread shuts the context down while the main thread tears the node down; until
run_node waited for that thread (rnea_ros/ros/signals.py), 31 of 60 trajectory_feedforward stops
one second after start ended in SIGSEGV (exit -11), and CI failed on one. The stops here come
during start-up, while serving and later, for both nodes a launch file starts.

The stops before the package's code runs are Python's own (on a loaded machine the first delays
can land there): a SIGINT while the interpreter starts or imports ends the process with
KeyboardInterrupt (-2, or 1 inside the interpreter's site set-up), a SIGTERM before rclpy.init
kills it (-15), as for any Python program. Every later stop must give 0."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from rnea_ros.model.example_robots import example_urdf_path
from rnea_ros.ros.processes import die_with_parent

URDF = example_urdf_path("panda").read_text()
NODES = ("rnea_ros.nodes.trajectory_feedforward", "rnea_ros.nodes.inverse_dynamics")
# when the signal comes after start (s): imports, kernels from cache, model, spinning
DELAYS = (0.6, 1.0, 1.5, 2.5, 4.0)


def stopped_while_python_starts(code: object, output: str, node: str) -> bool:
    """A stop before the package's code runs, as it ends any Python program: SIGINT during the
    imports (KeyboardInterrupt, no frame of run_node) or during the interpreter's own start-up
    (exit 1, init_import_site), or SIGTERM before rclpy.init installed its handler (killed, and
    the node never logged)."""
    if code == -signal.SIGINT:
        return "KeyboardInterrupt" in output and ", in run_node" not in output
    if code == 1:
        return "init_import_site" in output and ", in run_node" not in output
    return code == -signal.SIGTERM and f"[{node}]" not in output


@pytest.mark.parametrize("module", NODES)
def test_every_stop_exits_cleanly(module: str, tmp_path: Path) -> None:
    params = tmp_path / "params.yaml"
    params.write_text(yaml.safe_dump({"/**": {"ros__parameters": {"robot_description": URDF}}}))
    outcomes = []
    for i, delay in enumerate(DELAYS):
        sig = signal.SIGTERM if i % 2 else signal.SIGINT
        log = (tmp_path / f"run{i}.log").open("w+")
        proc = subprocess.Popen(
            [sys.executable, "-m", module, "--ros-args", "--params-file", str(params)],
            stdout=log, stderr=subprocess.STDOUT, preexec_fn=die_with_parent,
        )
        time.sleep(delay)
        proc.send_signal(sig)
        try:
            code = proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
            code = f"still running 15 s after {sig.name}"
        log.seek(0)
        outcomes.append((delay, sig.name, code, log.read()[-3000:]))
    node = module.rsplit(".", 1)[-1]
    bad = [o for o in outcomes if o[2] != 0 and not stopped_while_python_starts(o[2], o[3], node)]
    served = sum(o[2] == 0 for o in outcomes)
    assert served >= 1, f"none of the {len(DELAYS)} stops came after Python had started: {outcomes}"
    assert not bad, "\n".join(f"{sig} after {delay} s: exit {code}\n{out}" for delay, sig, code, out in bad)
