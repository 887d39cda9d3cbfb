"""The pure-Python fallback (RNEA_ROS_NO_NUMBA=1) of the floating and planar roots agrees with the
compiled kernels, which agree with Pinocchio (test_floating_base)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np

from rnea_ros import RobotModel, gravity_torques, jacobian, mass_matrix, nonlinear_effects, rnea
from rnea_ros.compiled.jit import HAVE_NUMBA
from rnea_ros.model.example_robots import example_urdf_path

ROBOT = "solo_description/robots/solo12.urdf"
LINK = "FL_FOOT"

CHILD = """
import json, sys
import numpy as np
from rnea_ros import RobotModel, gravity_torques, jacobian, mass_matrix, nonlinear_effects, rnea
from rnea_ros.compiled.jit import HAVE_NUMBA
from rnea_ros.model.example_robots import example_urdf_path

assert not HAVE_NUMBA
args = json.load(sys.stdin)
out = {}
for root_joint, (q, v, a, gravity, wrench) in args.items():
    q, v, a, gravity, wrench = (np.array(x) for x in (q, v, a, gravity, wrench))
    model = RobotModel.from_urdf(example_urdf_path(ROBOT).read_text(), root_joint=root_joint)
    wrenches = {LINK: wrench, model.root_link: -wrench}
    out[root_joint] = {
        "rnea": rnea(model, q, v, a, gravity=gravity, wrenches=wrenches).tolist(),
        "nle": nonlinear_effects(model, q[0], v[0]).tolist(),
        "gravity": gravity_torques(model, q, gravity=gravity).tolist(),
        "mass": mass_matrix(model, q).tolist(),
        "jacobian": jacobian(model, q[0], LINK).tolist(),
    }
print(json.dumps(out))
""".replace("ROBOT", repr(ROBOT)).replace("LINK", repr(LINK))


def _state(model: RobotModel, rng: np.random.Generator, count: int = 3) -> tuple:
    q = np.zeros((count, model.nq))
    if model.root_joint == "floating":
        quat = rng.normal(size=(count, 4))
        q[:, :3], q[:, 3:7] = rng.normal(size=(count, 3)), quat / np.linalg.norm(quat, axis=1, keepdims=True)
    else:
        theta = rng.uniform(-3, 3, count)
        q[:, :2], q[:, 2], q[:, 3] = rng.normal(size=(count, 2)), np.cos(theta), np.sin(theta)
    q[:, model.root_nq :] = rng.uniform(-2, 2, (count, model.njoints))
    return (
        q,
        rng.normal(size=(count, model.nv)),
        rng.normal(size=(count, model.nv)),
        rng.normal(0, 6, 3),
        rng.normal(0, 4, 6),
    )


def test_fallback_matches_compiled_kernels_with_moving_roots() -> None:
    assert HAVE_NUMBA  # numba is a requirement: this compares the fallback with the compiled kernels
    rng = np.random.default_rng(3)
    text = example_urdf_path(ROBOT).read_text()
    models = {rj: RobotModel.from_urdf(text, root_joint=rj) for rj in ("floating", "planar")}
    states = {rj: _state(m, rng) for rj, m in models.items()}
    stdin = json.dumps({rj: [x.tolist() for x in s] for rj, s in states.items()})
    env = {**os.environ, "RNEA_ROS_NO_NUMBA": "1"}
    proc = subprocess.run(
        [sys.executable, "-c", CHILD], input=stdin, env=env, capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stderr
    py = json.loads(proc.stdout.splitlines()[-1])
    for rj, model in models.items():
        q, v, a, gravity, wrench = states[rj]
        compiled = {
            "rnea": rnea(model, q, v, a, gravity=gravity, wrenches={LINK: wrench, model.root_link: -wrench}),
            "nle": nonlinear_effects(model, q[0], v[0]),
            "gravity": gravity_torques(model, q, gravity=gravity),
            "mass": mass_matrix(model, q),
            "jacobian": jacobian(model, q[0], LINK),
        }
        for name, expected in compiled.items():
            got = np.array(py[rj][name])
            assert got.shape == expected.shape, (rj, name)
            assert np.max(np.abs(got - expected)) <= 1e-12 * max(1.0, np.max(np.abs(expected))), (rj, name)
