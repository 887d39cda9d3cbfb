"""The payload demo end to end (`make demo DEMO_ARGS="--payload"`), bounded and lock-step: the
simulator, the inverse_dynamics node and the trajectory source as their own processes over DDS;
a collision pulse, then a 2 kg object welded to the Panda's hand and released, then 15 s of
multi-sines without anything; the node is told nothing. Lock-step and on simulated time, so the
numbers do not depend on how loaded the machine is; every wait is bounded, nothing asserts on
durations."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
from domains import domain

DOMAIN = domain(4)  # not this pytest process's own domain (test/support/domains.py)


def test_lockstep_payload_demo_meets_its_targets(tmp_path: Path) -> None:
    numbers = tmp_path / "payload.json"
    command = [
        sys.executable, "-m", "rnea_ros.demo", "--payload", "--lockstep", "--minutes", "0.25", "--no-off",
        "--out", str(tmp_path), "--json", str(numbers), "--domain-id", str(DOMAIN),
    ]  # fmt: skip
    run = subprocess.run(command, capture_output=True, text=True, timeout=1200)
    out = run.stdout + run.stderr
    assert run.returncode == 0 and "targets: all met" in out, out
    s = json.loads(numbers.read_text())
    g = s["grasp"]
    assert s["failed"] == []
    # the object: 2 kg, centre of mass 5 cm out along the flange axis, estimated within 1.5 s
    assert g["estimate_delay"] <= 1.5 and g["mass_error"] <= 0.03 and g["com_error"] <= 0.01
    assert abs(g["mass"] - 2.0) <= 0.06 and np.linalg.norm(np.array(g["com"]) - [0, 0, 0.05]) <= 0.01
    # the arm sagged with the load unknown, then tracks as before it within 2 s
    assert g["max_error_after_grasp"] > 10 * g["pre_grasp_level"]
    assert g["recovery"] <= 2.0 and g["level_after_recovery"] < 1.5 * g["pre_grasp_level"]
    # released: removed within 1.5 s, no kick above 1 degree
    assert g["removal_delay"] <= 1.5 and g["kick"] <= 1.0
    # in, refined with more data while held, out; nothing else
    masses = [e[1] for e in s["estimates"]]
    assert masses[0] == g["mass"] and masses[-1] == 0.0 and 0.0 not in masses[:-1]
    assert len(masses) == g["refined"] + 2 and g["refined"] >= 1
    assert g["final_mass_error"] <= 0.01 and g["final_com_error"] <= 0.002
    # the collision pulse: flagged, ignored, no estimate; and none in the free run
    assert g["estimates_before_grasp"] == 0 and g["collisions_ignored"] >= 1 and g["refusals"] == 0
    assert s["free"]["seconds"] >= 15.0 and s["free"]["estimates"] == 0 and s["free"]["refusals"] == 0
    assert s["free"]["peak_ratio"] < 1.0
    # the blend: the command changes in steps far below the load's torque (~10 N m on joint 4)
    assert g["command_step"]["blend"] < 0.5
    png = (tmp_path / "payload_demo.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 30_000
