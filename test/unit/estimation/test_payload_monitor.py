"""The payload monitor (on request and auto) as the node drives it, cycle by cycle: a UR5 whose
joint_states come from Pinocchio (the load appended to the URDF when carried), the momentum
observer on the model the monitor keeps up to date (restarted with every change, as the node's),
the collision flag from its thresholds; and the whole loop against MuJoCo (the payload demo's
physics in one process: a 2 kg object welded to a Panda's hand while it tracks a multi-sine)."""

from __future__ import annotations

from dataclasses import replace

import mujoco
import numpy as np
import pinocchio as pin
from pinref import PinRef

from rnea_ros.algorithms.dynamics import mass_matrix
from rnea_ros.control.effort_law import EffortLaw, Efforts
from rnea_ros.estimation.observer import MomentumObserver
from rnea_ros.estimation.payload import PayloadLimits
from rnea_ros.estimation.payload_monitor import BLEND_PERIOD, RETRY, MonitorSettings, PayloadMonitor
from rnea_ros.estimation.payload_stream import PayloadStream
from rnea_ros.friction.model import Friction
from rnea_ros.identification.excitation import ExcitationOptions, design
from rnea_ros.model.example_robots import example_urdf_path
from rnea_ros.model.robot_model import Payload, RobotModel
from rnea_ros.sim.closed_loop import Loop
from rnea_ros.sim.demos.payload.plant import OBJECT, weld
from rnea_ros.sim.scenario import MODEL_TERMS, PANDA_ARM, home_of

REF = PinRef("ur5")
LINK = "ee_link"
HOME = np.array([0.3, -1.2, 1.5, -1.0, 1.2, 0.5])
GAIN, THRESHOLD, DT = 100.0, 3.0, 1e-3
MASS, COM = 1.5, np.array([0.06, 0.01, -0.02])
SETTINGS = MonitorSettings("auto", window=0.3, max_window=0.8, hold=0.1, blend=0.1, limits=PayloadLimits())


def _loaded() -> tuple[pin.Model, pin.Data]:
    model = REF.pin.copy()
    frame = model.frames[model.getFrameId(LINK)]
    model.appendBodyToJoint(
        frame.parentJoint, frame.placement.act(pin.Inertia(MASS, COM, np.zeros((3, 3)))), pin.SE3.Identity()
    )
    return model, model.createData()


LOADED = _loaded()


class Harness:
    """The node's part: joint_states, observer and flag, the monitor's payloads applied."""

    def __init__(self, settings: MonitorSettings = SETTINGS) -> None:
        self.model = REF.model
        self.monitor = PayloadMonitor(PayloadStream(REF.model, LINK, GAIN, 4000), settings)
        self.observer = MomentumObserver(self.model, GAIN)
        self.t, self.flag = 0.0, False
        self.applied: list[tuple[float, Payload]] = []

    def run(self, seconds: float, loaded: bool, amplitude: float = 1.0, tau_ext=None) -> None:
        for _ in range(int(round(seconds / DT))):
            self.t += DT
            a = amplitude * np.array([0.1, 0.1, 0.1, 0.4, 0.4, 0.4])
            w = np.linspace(1.0, 2.5, 6)
            q, qd, qdd = (
                HOME + a * np.sin(w * self.t),
                a * w * np.cos(w * self.t),
                -a * w * w * np.sin(w * self.t),
            )
            model, data = LOADED if loaded else (REF.pin, REF.data)
            tau = pin.rnea(model, data, REF.to_pin(q), REF.to_pin(qd), REF.to_pin(qdd))[REF.idx]
            if tau_ext is not None:
                tau = tau - tau_ext(self.t)
            r = self.observer.update(self.t, q, qd, tau)
            ratio = np.abs(r).max() / THRESHOLD
            self.flag = ratio > 0.5 if self.flag else ratio > 1.0
            step = self.monitor.cycle(self.t, q, qd, r, self.flag, self.model.payload)
            if step is not None:
                self.apply(step)

    def apply(self, payload: Payload) -> None:
        self.applied.append((self.t, payload))
        self.model = REF.model.with_payload(payload.link, payload.mass, payload.com, payload.inertia)
        self.observer = MomentumObserver(self.model, GAIN)  # the node's restarts
        self.flag = False
        self.monitor.restart()

    def request(self):
        return self.monitor.request(self.t, self.model.payload)


def test_auto_grasp_blends_the_estimate_in_linearly_then_waits_for_the_flag() -> None:
    h = Harness()
    h.run(0.3, loaded=False)
    assert h.monitor.state == "idle" and h.monitor.armed and not h.applied
    h.run(0.05, loaded=True)
    assert h.monitor.state == "holding"
    h.run(SETTINGS.hold + SETTINGS.window + SETTINGS.blend + 0.05, loaded=True)
    [outcome] = h.monitor.outcomes
    assert not outcome.refused and outcome.source == "auto"
    est = outcome.estimate
    # the window starts 10 observer time constants after the load came: r has converged to ~3e-5
    assert abs(est.mass - MASS) < 1e-4 * MASS and np.max(np.abs(est.com - COM)) < 5e-4
    # the blend: a step every BLEND_PERIOD, mass linear in time from 0 to the estimate
    times = np.array([t for t, _ in h.applied])
    masses = np.array([p.mass for _, p in h.applied])
    assert np.all(np.diff(times) >= BLEND_PERIOD - 1e-9) and np.all(np.diff(times) < BLEND_PERIOD + 1.5 * DT)
    assert abs(times[-1] - times[0] - SETTINGS.blend) < DT + 1e-9
    assert np.max(np.abs(masses - est.mass * (times - times[0]) / SETTINGS.blend)) < 1e-9
    assert all(np.allclose(p.com, est.com) for _, p in h.applied[1:])
    assert h.monitor.pending_final is not None and h.monitor.pending_final.mass == est.mass
    assert h.monitor.state in ("settling", "refining") and not h.monitor.armed
    # the flag stays down (the model carries the load): the same load re-estimated from twice the
    # data, then from all max_window s of it, each blended in; then idle, re-armed
    h.monitor.outcomes.clear()
    h.run(3.0, loaded=True)
    refined = [o for o in h.monitor.outcomes if o.source == "refined"]
    samples = [o.estimate.samples for o in refined]
    assert len(samples) == 2 and 1.9 < samples[0] / 300 < 2.1 and 2.9 < samples[1] / 300 < 3.1, samples
    assert all(abs(o.estimate.mass - MASS) < 1e-4 * MASS for o in refined)
    assert h.monitor.state == "idle" and h.monitor.armed and h.monitor.estimates == 3
    # release: the same way out, no refinement of nothing
    h.run(SETTINGS.hold + SETTINGS.window + SETTINGS.blend + 0.5, loaded=False)
    assert h.monitor.estimates == 4 and h.applied[-1][1].mass == 0.0 and h.monitor.refusals == 0
    assert h.monitor.state == "idle"


def test_a_short_flag_is_a_collision_and_is_ignored() -> None:
    h = Harness()
    h.run(0.3, loaded=False)
    start = h.t + 0.05
    h.run(
        0.5, loaded=False, tau_ext=lambda t: np.array([0, 20.0, -10.0, 0, 0, 0]) * (start <= t < start + 0.03)
    )
    assert h.monitor.ignored_collisions == 1 and not h.monitor.history and not h.applied


def test_at_rest_the_collection_waits_for_rotation_until_max_window_then_refuses() -> None:
    h = Harness()
    h.run(0.3, loaded=False, amplitude=0.0)
    h.run(SETTINGS.hold + SETTINGS.window + 3 * RETRY, loaded=True, amplitude=0.0)
    assert h.monitor.state == "collecting" and not h.monitor.history  # still trying
    h.run(SETTINGS.max_window, loaded=True, amplitude=0.0)
    [outcome] = h.monitor.history
    assert outcome.refused and outcome.reason == "rotation" and f"the mass alone: {MASS:.3f}" in outcome.text
    assert h.monitor.state == "idle" and not h.monitor.armed and h.monitor.refusals == 1
    h.run(0.5, loaded=True, amplitude=0.0)  # the flag stays up: no second attempt
    assert h.monitor.refusals == 1


def test_a_wrench_that_goes_away_during_the_window_is_refused() -> None:
    h = Harness()
    h.run(0.3, loaded=False)
    end = h.t + SETTINGS.hold + 0.15
    press = -REF.jacobian(HOME, LINK).T @ np.array([0.0, 0.0, -15.0, 0, 0, 0])
    h.run(SETTINGS.hold + SETTINGS.window + 0.3, loaded=False, tau_ext=lambda t: press * (t < end))
    [outcome] = h.monitor.history
    assert outcome.refused and outcome.reason == "changing" and "went away" in outcome.text


def test_a_request_estimates_the_last_window_and_a_second_one_waits_for_the_blend() -> None:
    h = Harness(replace(SETTINGS, mode="on_request"))
    h.run(0.1, loaded=True)
    outcome = h.request()
    assert outcome.refused and outcome.reason == "no_data" and "not enough data" in outcome.text
    h.run(SETTINGS.window, loaded=True)
    assert h.monitor.state == "idle" and not h.applied  # on_request: nothing by itself
    outcome = h.request()
    assert not outcome.refused and outcome.source == "request" and h.monitor.state == "blending"
    assert abs(outcome.estimate.mass - MASS) < 1e-4 * MASS
    busy = h.request()
    assert busy.refused and busy.reason == "busy"
    h.monitor.cancel("a payload parameter was set", h.t)
    assert h.monitor.state == "idle" and h.monitor.history[-1].reason == "cancelled"
    assert h.monitor.refusals == 2  # the no_data and busy ones, not the cancellation


def test_grasp_and_release_of_a_panda_in_mujoco() -> None:
    """The demo's physics in one process: the effort law (Franka's impedance gains, model terms)
    tracks a multi-sine on a MuJoCo Panda; at 3 s the 2 kg object is welded to the hand, at 7 s
    released; the observer and the monitor run on what the simulator reports, every estimate
    goes into the law's model."""
    urdf = example_urdf_path("panda").read_text()
    base = RobotModel.from_urdf(urdf)
    home = home_of(base)
    index = [base.joint_index(j) for j in PANDA_ARM]
    q0 = np.array([home.get(j, 0.0) for j in base.joint_names])
    kp = np.zeros(base.nv)
    kp[index] = (600, 600, 600, 600, 250, 150, 50)
    kd = 2 * np.sqrt(kp * np.diag(mass_matrix(base, q0)))
    law = EffortLaw(kp=kp, kd=kd, compensate=frozenset(MODEL_TERMS))
    loop = Loop(urdf, list(PANDA_ARM), law, home)
    arm = loop.arm
    hand = mujoco.mj_name2id(arm.model, mujoco.mjtObj.mjOBJ_BODY, "panda_hand")
    settings = MonitorSettings("auto", 0.4, 3.0, 0.15, 0.3, PayloadLimits())
    monitor = PayloadMonitor(PayloadStream(base, "panda_hand", GAIN, 8000), settings)
    friction = Friction.from_model(base)
    model, observer, flag = base, MomentumObserver(base, GAIN, friction=friction), False
    motion = design(
        arm.q[index],
        base.position_lower[index],
        base.position_upper[index],
        base.velocity_limit[index],
        3.0,
        ExcitationOptions(
            duration=10.0,
        ),
    )
    samples = motion.sample(np.arange(10_000) * 1e-3)
    applied, saved = [], None
    for k in range(10_000):
        t = arm.time
        if k == 3000:
            saved = weld(arm.model, hand, OBJECT)
        if k == 7000:
            (
                arm.model.body_mass[hand],
                arm.model.body_ipos[hand],
                arm.model.body_iquat[hand],
                arm.model.body_inertia[hand],
            ) = saved
        r = observer.update(t, arm.q, arm.qd, arm.applied)
        ratio = np.abs(r[index]).max() / 1.0
        flag = ratio > 0.5 if flag else ratio > 1.0
        step = monitor.cycle(t, arm.q, arm.qd, r, flag, model.payload)
        if step is not None:
            model = base.with_payload(step.link, step.mass, step.com, step.inertia)
            efforts = Efforts(model, replace(law, friction=loop.friction))
            efforts.adopt(loop.efforts)
            loop.efforts = efforts
            observer, flag = MomentumObserver(model, GAIN, friction=friction), False
            monitor.restart()
            if monitor.pending_final is not None:
                applied.append((t, monitor.pending_final))
                monitor.pending_final = None
        loop.step((samples[0][k], samples[1][k], samples[2][k]))
    (t_in, grasped), *refined, (t_out, released) = applied
    assert 3.0 < t_in < 4.5 and abs(grasped.mass - OBJECT.mass) < 0.03 * OBJECT.mass
    assert np.linalg.norm(grasped.com - np.array(OBJECT.com)) < 0.01
    final = refined[-1][1]  # the same load from all its windows, max_window s
    assert abs(final.mass - OBJECT.mass) < 0.003 * OBJECT.mass
    assert np.linalg.norm(final.com - np.array(OBJECT.com)) < 0.001
    assert 7.0 < t_out < 8.5 and released.mass == 0.0
    assert monitor.refusals == 0 and monitor.estimates == len(applied), [o.text for o in monitor.history]
