"""bench/identify_mismatch.py, bounded: a MuJoCo Panda unlike its URDF, identified from two 60 s runs
(seed 0); the brief's targets are asserted from the script's own JSON against the plant's truth."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
from paths import REPO

SCRIPT = REPO / "bench" / "identify_mismatch.py"


def test_identified_model_payload_and_friction_meet_the_targets(tmp_path) -> None:
    out = tmp_path / "numbers.json"
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--seed", "0", "--json", str(out)],
        capture_output=True,
        text=True,
        check=False,
        cwd=SCRIPT.parents[1],
    )
    assert done.returncode in (0, 1), done.stderr[-2000:]
    numbers = json.loads(out.read_text())
    truth, errors = numbers["truth"], numbers["errors"]
    run_a, run_b = numbers["run_a"], numbers["run_b"]
    # held-out torque RMS ≤ 10 % of the URDF model's on joints 1-6, both runs
    assert np.all(np.array(run_a["ratio"][:6]) <= 0.10)
    assert np.all(np.array(run_b["ratio"][:6]) <= 0.10)
    # payload (run B, run A's model held)
    assert abs(run_b["payload"]["mass"] - truth["payload_mass"]) <= 0.05 * truth["payload_mass"]
    assert np.linalg.norm(np.subtract(run_b["payload"]["com"], truth["payload_com"])) <= 0.01
    # friction against MuJoCo's damping and frictionloss
    assert np.all(
        np.abs(np.subtract(run_a["viscous"], truth["damping"])) <= 0.10 * np.array(truth["damping"])
    )
    assert np.all(
        np.abs(np.subtract(run_a["coulomb"], truth["coulomb"])) <= 0.10 * np.array(truth["coulomb"])
    )
    assert abs(errors["payload_mass_rel"]) <= 0.05 and errors["payload_com_m"] <= 0.01
    assert all(c["ok"] for c in run_a["consistency"])
    assert done.returncode == 0 and all(numbers["checks"].values())
