"""The closed-loop demo's real-time check (rnea_ros.sim.supervisor.Supervisor) on made-up latency
batches, without nodes: it stops a run once, and once stopped, reading the run (which spins on and
takes more batches) does not stop it again; it used to, and the run could not be read."""

from __future__ import annotations

import types

import pytest
from std_msgs.msg import Float64MultiArray

from rnea_ros.sim.report import RealTimeLost
from rnea_ros.sim.supervisor import GRACE, Supervisor


def checker() -> Supervisor:
    sup = object.__new__(Supervisor)  # the check alone: no rclpy node
    sup.config = types.SimpleNamespace(lockstep=False)
    sup._window = []
    sup.now = GRACE
    sup.lost = False
    return sup


def test_real_time_is_lost_once_and_not_again_while_the_run_is_read() -> None:
    sup = checker()
    late = Float64MultiArray(data=[0.05] * 100)  # 50 ms answers, a tenth of the states
    with pytest.raises(RealTimeLost):
        for k in range(10):
            sup.now = GRACE + 0.5 * k
            sup._on_latency(late)
    sup.lost = True  # what Supervisor.run does before it reads the run
    for k in range(10, 20):
        sup.now = GRACE + 0.5 * k
        sup._on_latency(late)  # no second RealTimeLost


def test_answers_in_time_keep_the_run_going() -> None:
    sup = checker()
    for k in range(10):
        sup.now = GRACE + 0.5 * k
        sup._on_latency(Float64MultiArray(data=[0.001] * 400))  # 1 ms, 80 % of the states
