"""numba's disk cache cannot go stale: every compiled function and the layout constants it reads
are in rnea_ros/compiled/kernels.py, the file numba's cache index watches. In a copy of the
package, with a warm cache, swapping two rows of the friction compensation's coefficient table
(FC_VISCOUS and FC_COULOMB, rows a kernel outside kernels.py used to define) in kernels.py must
change what the cached entry point computes on the very next run, without clearing any cache."""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import rnea_ros

# A client with a fixed layout: it fills the coefficient table by row number (viscous 0, Coulomb
# 1, static 2, Stribeck velocity 3, smoothing velocity 4, scale 5, feedforward scale 6, deadband
# 7, bounds 8 and 9) and runs the effort law's friction path on one driven joint (feedforward at
# the desired velocity), through its typed entry point.
RUN = """
import json
import numpy as np
import rnea_ros.compiled.kernels as k
from rnea_ros.compiled.entry_points import FRICTION_BEFORE

compiled = FRICTION_BEFORE.compile()
tree = np.zeros(k.TREE_STRIDE)
tree[[k.B_ROT, k.B_ROT + 4, k.B_ROT + 8, k.B_AXIS + 2, k.B_MASS]] = 1.0  # revolute about z, 1 kg
tree[k.PARENT], tree[k.JTYPE] = -1, k.REVOLUTE
coef = np.array([[0.3], [2.0], [2.0], [0.1], [0.01], [0.5], [1.0], [0.05], [1.0], [1.0]])
zero, row, driven = np.zeros(1), np.zeros(1), np.ones(1, dtype=np.int64)
status = FRICTION_BEFORE.call(
    tree, zero, zero, np.array([0.5]), driven, np.zeros(k.WS_STRIDE), np.zeros(k.COMP_STRIDE),
    np.zeros(1), 1e-3, coef, np.ones(1), row,
)
print(json.dumps({"file": k.__file__, "compiled": compiled, "status": status, "tau": row[0]}))
"""
V, VS, EPS = 0.5, 0.1, 0.01  # desired velocity, Stribeck and smoothing velocities
# τ = F_v v + (F_c + (F_s − F_c) exp(−(v/v_s)²)) tanh(v/v_ε), with F_s = 2.0 at row 2
ORIGINAL = 0.3 * V + 2.0 * math.tanh(V / EPS)  # F_v = 0.3 (row 0), F_c = 2.0 (row 1)
SWAPPED = 2.0 * V + (0.3 + (2.0 - 0.3) * math.exp(-((V / VS) ** 2))) * math.tanh(V / EPS)  # rows swapped
LAYOUT = "FC_VISCOUS, FC_COULOMB, FC_STATIC"


def run(package: Path) -> dict:
    unset = ("NUMBA_CACHE_DIR", "RNEA_ROS_NO_NUMBA")  # the cache next to the copy's sources; numba on
    env = {key: value for key, value in os.environ.items() if key not in unset}
    env["PYTHONPATH"] = str(package)
    proc = subprocess.run(
        [sys.executable, "-c", RUN], env=env, cwd=package, capture_output=True, text=True, timeout=600
    )
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout.splitlines()[-1])
    assert Path(out["file"]).is_relative_to(package), "the copy is not the package imported"
    assert out["status"] == 0
    return out


def test_an_edited_layout_constant_reaches_the_cached_kernels_on_the_next_run(tmp_path: Path) -> None:
    source = Path(rnea_ros.__file__).parent
    package = tmp_path / "copy"
    shutil.copytree(source, package / "rnea_ros", ignore=shutil.ignore_patterns("__pycache__"))
    kernels = package / "rnea_ros" / "compiled" / "kernels.py"

    first = run(package)  # an empty cache: compiles, next to the copy's sources
    assert first["compiled"] is True
    assert list(kernels.parent.glob("__pycache__/kernels.friction_before_kernel*.nbi"))
    assert first["tau"] == pytest.approx(ORIGINAL, rel=1e-12)

    again = run(package)  # unchanged: loaded from the cache, same number
    assert again["compiled"] is False
    assert again["tau"] == first["tau"]

    text = kernels.read_text()
    assert text.count(LAYOUT) == 1
    kernels.write_text(text.replace(LAYOUT, "FC_COULOMB, FC_VISCOUS, FC_STATIC"))
    edited = run(package)  # the cache is not cleared: numba sees kernels.py changed and recompiles
    assert edited["compiled"] is True
    assert edited["tau"] == pytest.approx(SWAPPED, rel=1e-12)
    assert abs(edited["tau"] - first["tau"]) > 0.8  # 1.0 + 0.3 tanh(50) against 0.15 + 2.0 tanh(50)
