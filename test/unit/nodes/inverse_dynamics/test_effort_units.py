"""effort_unit (rnea_ros.nodes.inverse_dynamics.effort_units,
rnea_ros.algorithms.gearing.effort_unit_factors): the per-joint
factors against `Gearing`'s conversions both ways, the node's runtime (commands clamped in joint
torque, then converted), and the parameter rules naming the joint."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rnea_ros import RobotModel, rnea
from rnea_ros.algorithms.gearing import EFFORT_UNITS, Gearing, effort_unit_factors
from rnea_ros.control.effort_law import compute_efforts
from rnea_ros.errors import ParameterError, RneaError
from rnea_ros.model.example_robots import example_urdf_path
from rnea_ros.nodes.inverse_dynamics.cycle_model import build_cycle_model
from rnea_ros.nodes.inverse_dynamics.effort_units import effort_units
from rnea_ros.nodes.inverse_dynamics.params import INVERSE_DYNAMICS
from rnea_ros.ros.schema import defaults

PANDA = RobotModel.from_urdf(example_urdf_path("panda").read_text())
ARM = [f"panda_joint{i}" for i in range(1, 8)]
POSITIVE = st.floats(0.01, 500.0)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from(EFFORT_UNITS), POSITIVE, POSITIVE, st.floats(-300, 300)),
        min_size=1,
        max_size=9,
    )
)
def test_factors_are_gearings_conversions_both_ways(joints) -> None:
    units = [j[0] for j in joints]
    ratio, kt, tau = (np.array([j[k] for j in joints]) for k in (1, 2, 3))
    factor = effort_unit_factors(units, ratio, kt)
    gearing = Gearing(ratio, np.zeros(len(units)), kt)
    want = {"joint_torque": tau, "motor_torque": gearing.motor_torque(tau), "current": gearing.current(tau)}
    back = {
        "joint_torque": lambda x: x,
        "motor_torque": gearing.joint_torque,
        "current": gearing.joint_torque_from_current,
    }
    for i, unit in enumerate(units):
        assert factor[i] * tau[i] == pytest.approx(want[unit][i], rel=1e-12, abs=1e-300)
        in_unit = np.full(len(units), factor[i] * tau[i])
        assert in_unit[i] / factor[i] == pytest.approx(back[unit](in_unit)[i], rel=1e-12, abs=1e-300)
    # the closed forms of the gearing module's docstring
    expected = np.select(
        [np.array(units) == "motor_torque", np.array(units) == "current"], [1 / ratio, 1 / (ratio * kt)], 1.0
    )
    assert np.allclose(factor, expected, rtol=1e-12)


def test_factors_one_value_for_all_and_unknown_units() -> None:
    assert np.allclose(effort_unit_factors(["current", "motor_torque"], 100.0, 0.5), [1 / 50.0, 1 / 100.0])
    with pytest.raises(RneaError, match="'amps' is not one of joint_torque, motor_torque, current"):
        effort_unit_factors(["current", "amps"], 1.0, 1.0)


def params(**values) -> dict:
    return {**defaults(INVERSE_DYNAMICS), "joints": ARM, **values}


def test_runtime_commands_are_the_clamped_joint_torque_divided_by_g_kt() -> None:
    """Per joint units on the Panda; the effort limit clamps the joint torque (limit × scale),
    then the unit conversion applies: current = clip(τ) / (G K_t), motor torque = clip(τ) / G."""
    units = ["current", "motor_torque", "joint_torque", "current", "current", "motor_torque", "current"]
    ratio = [100.0, 120.0, 0.0, 80.0, 50.0, 60.0, 40.0]  # the joint_torque joint needs none
    kt = [0.1, 0.0, 0.0, 0.2, 0.05, 0.0, 0.3]  # nor do the motor_torque joints
    scale = 0.2
    p = params(
        **{"effort_unit": units, "gearing.ratio": ratio, "gearing.torque_constant": kt},
        **{"effort_limit_scale": scale, "friction.scale": 0.0, "friction.feedforward_scale": 0.0},
    )
    runtime = build_cycle_model(PANDA, p, None)
    assert runtime.units is not None and runtime.units.units == tuple(units)
    rng = np.random.default_rng(24)
    out = runtime.output
    g = np.where(np.array(ratio) > 0, ratio, np.nan)  # nan where a unit must not use them
    k = np.where(np.array(kt) > 0, kt, np.nan)
    clamped = 0
    for _ in range(10):
        q, qd, qdd = rng.uniform(-2, 2, (3, PANDA.nv))
        efforts = compute_efforts(runtime.efforts, q, qd, (q, qd, qdd))
        tau = rnea(PANDA, q, qd, qdd)  # friction off
        limit = PANDA.effort_limit * scale
        clipped = np.clip(tau, -limit, limit)[out]
        clamped += int(np.sum(np.abs(tau[out]) > limit[out]))
        want = np.where(np.array(units) == "current", clipped / (g * k), clipped)
        want = np.where(np.array(units) == "motor_torque", clipped / g, want)
        assert np.allclose(runtime.units.command(efforts.total[out]), want, rtol=1e-12, atol=1e-12)
    assert clamped >= 5  # the clamp mattered in these draws
    # measured efforts in each joint's unit come back as joint torque; the fingers are untouched
    tau = rng.uniform(-50, 50, PANDA.nv)
    measured = tau.copy()
    measured[out] = runtime.units.command(tau[out])
    assert np.allclose(runtime.units.measured(measured), tau, rtol=1e-12, atol=1e-12)
    assert runtime.units.text(ARM) == " ".join(
        f"{j}:{u}" for j, u in zip(ARM, units, strict=True) if u != "joint_torque"
    )


def test_all_joint_torque_has_no_conversion() -> None:
    assert build_cycle_model(PANDA, params(), None).units is None
    assert effort_units(params(**{"effort_unit": ["joint_torque"] * 7}), ARM, np.arange(7), 9) is None


@pytest.mark.parametrize(
    ("values", "words"),
    [
        ({"effort_unit": ["current"]}, "gearing.ratio: joint 'panda_joint1' has effort_unit 'current'"),
        (
            {"effort_unit": ["joint_torque"] * 3 + ["motor_torque"] + ["joint_torque"] * 3},
            "gearing.ratio: joint 'panda_joint4' has effort_unit 'motor_torque', which needs "
            "gearing.ratio > 0",
        ),
        (
            {
                "effort_unit": ["current"],
                "gearing.ratio": [100.0],
                "gearing.torque_constant": [0.1] * 4 + [0.0, 0.1, 0.1],
            },
            "gearing.torque_constant: joint 'panda_joint5' has effort_unit 'current', which needs "
            r"gearing.torque_constant > 0 \(got 0\)",
        ),
        (
            {
                "effort_unit": ["current"],
                "gearing.ratio": [1.0] * 6 + [0.0],
                "gearing.torque_constant": [0.1],
            },
            "gearing.ratio: joint 'panda_joint7'",
        ),
        ({"effort_unit": ["current"] * 2}, "effort_unit: must have 1 or 7 values"),
        (
            {"effort_unit": ["motor_torque"], "gearing.ratio": [1.0, 2.0]},
            "gearing.ratio: must have 1 or 7 values",
        ),
    ],
)
def test_missing_or_zero_gearing_is_refused_naming_the_joint(values: dict, words: str) -> None:
    with pytest.raises(ParameterError, match=words):
        build_cycle_model(PANDA, params(**values), None)
