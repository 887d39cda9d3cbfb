"""rnea_ros.identification.recording against hand-made references: a velocity delayed by a known
number of samples and a first-order filter, effort units by hand, quantised signals, chain tips."""

from __future__ import annotations

import numpy as np
import pytest
import yaml
from scipy import signal

from rnea_ros import RobotModel
from rnea_ros.errors import RneaError
from rnea_ros.identification.bag import JointStates
from rnea_ros.identification.recording import chain_tip, effort_factors, quantised, velocity_lag, window
from rnea_ros.model.example_robots import example_urdf_path


def motion(count: int = 3000, rate: float = 100.0):
    t = np.arange(count) / rate + 0.001 * np.random.default_rng(0).uniform(-1, 1, count)  # jittered clock
    w = np.array([0.7, 1.3, 2.1])
    q = np.sin(np.outer(t, w)) + 0.3 * np.sin(np.outer(t, 2.7 * w))
    qd = w * np.cos(np.outer(t, w)) + 0.81 * w * np.cos(np.outer(t, 2.7 * w))
    return t, q, qd


@pytest.mark.parametrize("delay", [0, 1, 5, 20])
def test_velocity_lag_finds_a_delay(delay: int) -> None:
    t, q, qd = motion()
    late = np.vstack([np.repeat(qd[:1], delay, axis=0), qd[: len(qd) - delay]])
    np.testing.assert_array_equal(velocity_lag(t, q, late), [delay] * 3)


def test_velocity_lag_of_a_first_order_filter_is_near_its_group_delay() -> None:
    """v[n] = a v[n-1] + (1 - a) dq/dt (TIAGo's logged velocity): delay a / (1 - a) samples at low
    frequency; q still (RMS speed below the threshold): NaN."""
    t, q, _ = motion(6000)
    a = 0.95
    filtered = signal.lfilter([1 - a], [1, -a], np.gradient(q, t, axis=0), axis=0)
    lags = velocity_lag(t, q, filtered)
    assert np.all(np.abs(lags - a / (1 - a)) <= 4), lags
    still = velocity_lag(t, 1e-4 * q, filtered)
    assert np.all(np.isnan(still))


def test_effort_factors_as_by_hand(tmp_path) -> None:
    joints = ["a", "b", "c", "d"]
    params = {
        "joints": joints,
        "effort_unit": ["joint_torque", "current", "motor_torque", "current"],
        "gearing": {"ratio": [0.0, 100.0, 50.0, 336.0], "torque_constant": [0.0, 0.136, 0.0, -0.0613]},
    }
    path = tmp_path / "p.yaml"
    path.write_text(yaml.safe_dump({"node": {"ros__parameters": params}}))
    units = effort_factors(path, ["d", "a", "b", "c", "e"])
    np.testing.assert_allclose(units.to_joint, [-336 * 0.0613, 1.0, 13.6, 50.0, 1.0], rtol=1e-14)
    assert units.units == ("current", "joint_torque", "current", "motor_torque", "joint_torque")
    assert units.reversed == ("d",)
    dotted = {
        "node": {
            "ros__parameters": {
                "effort_unit": "current",
                "gearing.ratio": 10.0,
                "gearing.torque_constant": 0.5,
            }
        }
    }
    path.write_text(yaml.safe_dump(dotted))
    np.testing.assert_allclose(effort_factors(path, ["x", "y"]).to_joint, [5.0, 5.0])
    params["gearing"]["torque_constant"][1] = 0.0
    path.write_text(yaml.safe_dump({"node": {"ros__parameters": params}}))
    with pytest.raises(
        RneaError, match="joint 'b' has effort_unit 'current', which needs gearing.torque_constant"
    ):
        effort_factors(path, joints)


def test_quantised_efforts() -> None:
    rng = np.random.default_rng(1)
    smooth = rng.normal(size=5000)
    coarse = np.round(0.02 * rng.normal(size=5000), 3)  # a step of 0.001: about 100 values, most near 0
    zeros = np.where(rng.uniform(size=5000) < 0.9, 0.0, rng.choice([-0.002, 0.001, 0.003], 5000))
    constant = np.ones(5000)
    found = quantised(
        ["smooth", "coarse", "zeros", "constant"], np.column_stack([smooth, coarse, zeros, constant])
    )
    assert [q.joint for q in found] == ["zeros"] + (["coarse"] if len(np.unique(coarse)) <= 64 else [])
    zero = found[0]
    assert zero.distinct == 4 and zero.value == 0.0 and zero.share == pytest.approx(np.mean(zeros == 0.0))


def test_chain_tip_models_exactly_the_joints_given() -> None:
    urdf = example_urdf_path("panda").read_text()
    arm = [f"panda_joint{i}" for i in range(1, 8)]
    tip = chain_tip(urdf, arm)
    assert RobotModel.from_urdf(urdf, tip_link=tip).joint_names == tuple(arm)
    assert chain_tip(urdf, arm[:3]) == "panda_link3"
    assert chain_tip(urdf, ["nothing"]) is None


def test_window_keeps_the_times() -> None:
    t, q, qd = motion(100)
    states = JointStates(t - t[0], ("a", "b", "c"), q, qd, None, "header", 0.0, 0)
    cut = window(states, 0.2, 0.5)
    assert cut.t[0] >= 0.2 and cut.t[-1] <= 0.5 and cut.effort is None
    np.testing.assert_array_equal(cut.position, q[(states.t >= 0.2) & (states.t <= 0.5)])
    with pytest.raises(RneaError, match="needs T0 < T1"):
        window(states, 0.5, 0.2)
