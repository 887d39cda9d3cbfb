"""The real rqt_reconfigure (../shared/rqt-wheels) tunes trajectory_feedforward through its own
widgets: one joint's viscous friction typed into its slider's line edit, the compensate.gravity
check box clicked; after each, the efforts on the next output trajectory are the core's effort law
(rnea_ros.trajectory.efforts.trajectory_efforts) with the new values at every output point, and
only that joint's friction (or the gravity term) changed."""

from __future__ import annotations

import time

import numpy as np
import pytest
from rqt_session import RqtSession, require_rqt
from test_trajectory_feedforward import NODE, Driver, Points, panda_urdf, start, trajectory

from rnea_ros import Friction, RobotModel, gravity_torques
from rnea_ros.control.effort_law import EffortLaw
from rnea_ros.control.terms import COMPENSABLE
from rnea_ros.testing.rosgraph import stop
from rnea_ros.trajectory.efforts import trajectory_efforts

pytestmark = pytest.mark.jazzy_tools  # ../shared/rqt-wheels: built for Jazzy

MODEL = RobotModel.from_urdf(panda_urdf(), tip_link="panda_hand")
NAMES = list(MODEL.joint_names)
JOINT, VISCOUS = 3, 2.5  # friction.panda_joint4.viscous: the URDF's 0.003 -> 2.5 N m s/rad
HOME = np.array([0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785])
MOVE = trajectory(NAMES, [0.0, 1.0], [HOME, HOME + 0.2], [np.zeros(7), np.zeros(7)])


def law_efforts(points: Points, viscous: np.ndarray, terms: frozenset[str]) -> np.ndarray:
    """The core's effort law at every output point (friction.feedforward_scale 1)."""
    friction = Friction(viscous.copy(), MODEL.coulomb, 0.01)  # Friction makes its arrays read-only
    law = EffortLaw(gravity=(0.0, 0.0, -9.81), compensate=terms, friction=friction)
    return trajectory_efforts(MODEL, points.q, points.qd, points.qdd, law)


def output_becomes(d: Driver, want, ceiling: float = 60.0) -> Points:
    """The next output trajectory once its efforts are `want(points)` (the GUI's Return sends the
    parameter asynchronously); fails with the largest difference seen."""
    end, worst = time.monotonic() + ceiling, np.inf
    while time.monotonic() < end:
        points = d.send(MOVE)
        assert points is not None, d.status()
        worst = float(np.max(np.abs(points.effort - want(points))))
        if worst < 1e-9:
            return points
        d.spin_until(lambda: False, 0.2)
    raise AssertionError(f"the output efforts never became the law's: {worst:.3g} N m apart")


def test_rqt_reconfigure_tunes_one_joints_friction_and_a_compensate_switch(tmp_path) -> None:
    require_rqt()
    params = {"robot_description": panda_urdf(), "tip_link": "panda_hand", "diagnostics_period": 0.2}
    proc = start(tmp_path, params)
    d = Driver("rqt_ff_driver")
    gui = None
    png = tmp_path / "rqt_reconfigure_feedforward.png"
    terms = frozenset(COMPENSABLE)
    try:
        d.wait_ready()
        viscous = np.array(MODEL.damping, dtype=float)
        before = output_becomes(d, lambda p: law_efforts(p, viscous, terms))
        steps = [
            {"double": f"friction.{NAMES[JOINT]}.viscous", "value": f"{VISCOUS:g}"},
            {"bool": "compensate.gravity", "checked": False},
        ]
        gui = RqtSession(tmp_path, NODE, steps, png, filter_key=NAMES[JOINT])
        gui.step_done(0)
        viscous[JOINT] = VISCOUS
        after = output_becomes(d, lambda p: law_efforts(p, viscous, terms))
        change = np.zeros_like(after.effort)
        change[:, JOINT] = (VISCOUS - MODEL.damping[JOINT]) * after.qd[:, JOINT]  # that joint's friction only
        assert after.t.size == before.t.size and np.allclose(after.q, before.q, rtol=0, atol=1e-12)
        assert np.allclose(after.effort - before.effort, change, rtol=0, atol=1e-9)
        assert d.get_parameters(["friction.viscous"])["friction.viscous"] == viscous.tolist()
        gui.ack(0)

        gui.step_done(1)
        no_gravity = output_becomes(d, lambda p: law_efforts(p, viscous, terms - {"gravity"}))
        gravity = np.array([gravity_torques(MODEL, q) for q in no_gravity.q])
        assert np.allclose(after.effort - no_gravity.effort, gravity, rtol=0, atol=1e-9)
        gui.ack(1)
        out = gui.finish()
    finally:
        if gui is not None:
            gui.close()
        d.close()
        output = stop(proc)
    assert "typed 2.5 into friction.panda_joint4.viscous (range 0.0..87.0, slider shown)" in out, out
    assert png.stat().st_size > 10_000
    assert "Traceback" not in output and "parameters rejected" not in output, output[-4000:]
