"""The node's model/parameter bundle (rnea_ros.nodes.inverse_dynamics.cycle_model):
parameters turned into the model and
effort law the cycle uses, checked against the core's public API."""

from __future__ import annotations

import numpy as np
import pytest

from rnea_ros import Friction, RobotModel, friction_torques, rnea
from rnea_ros.control.effort_law import compute_efforts
from rnea_ros.errors import ParameterError
from rnea_ros.model.example_robots import example_urdf_path
from rnea_ros.nodes.inverse_dynamics.cycle_model import build_cycle_model
from rnea_ros.nodes.inverse_dynamics.params import INVERSE_DYNAMICS
from rnea_ros.ros.schema import defaults

PANDA = RobotModel.from_urdf(example_urdf_path("panda").read_text())
ARM = [f"panda_joint{i}" for i in range(1, 8)]


def test_armature_per_output_joint_acts_through_m_qdd() -> None:
    params = {
        **defaults(INVERSE_DYNAMICS),
        "joints": ARM[::-1],
        "armature": [0.1 * (k + 1) for k in range(7)],
    }
    runtime = build_cycle_model(PANDA, params, None)
    full = np.zeros(9)
    full[[PANDA.joint_index(j) for j in ARM[::-1]]] = params["armature"]
    rng = np.random.default_rng(4)
    q, qd, qdd = rng.uniform(-1, 1, (3, 9))
    efforts = compute_efforts(runtime.efforts, q, qd, (q, qd, qdd))
    want = rnea(PANDA.with_armature(full), q, qd, qdd) + friction_torques(Friction.from_model(PANDA), qd)
    assert np.allclose(efforts.total, np.clip(want, -PANDA.effort_limit, PANDA.effort_limit), atol=1e-9)
    assert np.allclose(runtime.model.armature, full)
    one = build_cycle_model(PANDA, {**params, "armature": [0.2]}, None)
    assert np.allclose(one.model.armature, [0.2] * 7 + [0.0] * 2)
    with pytest.raises(ParameterError, match="armature: must have 1 or 7 values"):
        build_cycle_model(PANDA, {**params, "armature": [0.1, 0.2]}, None)
