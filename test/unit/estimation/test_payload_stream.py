"""The payload stream against the momentum observer: the observer (rnea_ros.estimation.observer)
runs on joint_states of an arm carrying a load its model lacks (efforts from Pinocchio's rnea
with the load appended), and the stream's lag-matched regressor W must give the observer's r
(W π = r), so that its estimate is the load up to the observer's own discretisation; the lag in
closed form; the ring buffer."""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest
from pinref import PinRef

from rnea_ros.errors import PayloadRefused, RneaError
from rnea_ros.estimation.observer import MomentumObserver
from rnea_ros.estimation.payload import PayloadLimits, payload_parameters
from rnea_ros.estimation.payload_stream import PayloadStream, lag, lag_increments
from rnea_ros.model.robot_model import Payload

REF = PinRef("ur5")
LINK = "ee_link"
HOME = np.array([0.3, -1.2, 1.5, -1.0, 1.2, 0.5])
GAIN = 100.0
MASS, COM, INERTIA = 1.5, np.array([0.06, 0.01, -0.02]), np.diag([2e-3, 3e-3, 2.5e-3])
FREE = PayloadLimits(min_rotation=0.0)


def motion(t: float, speed: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    w = speed * np.linspace(1.0, 2.5, 6)
    a = speed * np.array([0.1, 0.1, 0.1, 0.4, 0.4, 0.4])
    return HOME + a * np.sin(w * t), a * w * np.cos(w * t), -a * w * w * np.sin(w * t)


def loaded(mass: float, com: np.ndarray, inertia: np.ndarray) -> tuple[pin.Model, pin.Data]:
    model = REF.pin.copy()
    frame = model.frames[model.getFrameId(LINK)]
    model.appendBodyToJoint(
        frame.parentJoint, frame.placement.act(pin.Inertia(mass, com, inertia)), pin.SE3.Identity()
    )
    return model, model.createData()


def feed(
    stream: PayloadStream, load, seconds: float, speed: float = 1.0, dt: float = 1e-3, start: float = 0.0
):
    """The observer on the URDF model and the stream, over `seconds` of the motion with `load`;
    returns r per sample (N, 6)."""
    observer = MomentumObserver(REF.model, GAIN)
    model, data = load
    out = []
    for k in range(int(round(seconds / dt))):
        t = start + k * dt
        q, qd, qdd = motion(t, speed)
        tau = pin.rnea(model, data, REF.to_pin(q), REF.to_pin(qd), REF.to_pin(qdd))[REF.idx]
        r = observer.update(t, q, qd, tau)
        stream.update(t, q, qd, r)
        out.append(r.copy())
    return np.array(out)


@pytest.mark.parametrize("speed", [1.0, 3.0])
def test_the_lag_matched_regressor_gives_the_observers_external_torques(speed: float) -> None:
    """W π = r within 1e-4 of r's size: slow swings and three times as wide and fast ones (the
    load's inertial torques then ~half its weight's); an unmatched regressor is off by percent."""
    stream = PayloadStream(REF.model, LINK, GAIN, 5000)
    r = feed(stream, loaded(MASS, COM, INERTIA), 1.0, speed)
    t, w, r_held, _ = stream.samples(0.2)
    pi = payload_parameters(Payload(LINK, MASS, COM, INERTIA))
    assert np.array_equal(r_held, r[-t.size :])
    assert np.max(np.abs(w @ pi - r_held)) < 1e-4 * np.max(np.abs(r_held))


def test_the_estimate_is_the_load_up_to_the_observers_discretisation() -> None:
    stream = PayloadStream(REF.model, LINK, GAIN, 5000)
    feed(stream, loaded(MASS, COM, np.zeros((3, 3))), 1.0)  # a point mass: the estimate's model
    est = stream.estimate(0.2, limits=FREE)
    assert abs(est.mass - MASS) < 1e-5 * MASS and np.max(np.abs(est.com - COM)) < 1e-5
    assert est.mismatch < 1e-5 and 799 <= est.samples <= 801  # t >= 0.2 of a 1 kHz second
    # part of the load already in the model: the observer sees the rest, the estimate is all of it
    model_payload = Payload(LINK, 0.5, np.array([0.02, 0.0, 0.0]), np.zeros((3, 3)))
    in_model = REF.model.with_payload(LINK, 0.5, model_payload.com, model_payload.inertia)
    stream = PayloadStream(in_model, LINK, GAIN, 5000)
    observer = MomentumObserver(in_model, GAIN)
    model, data = loaded(MASS, COM, np.zeros((3, 3)))
    for k in range(1000):
        q, qd, qdd = motion(k * 1e-3, 1.0)
        tau = pin.rnea(model, data, REF.to_pin(q), REF.to_pin(qd), REF.to_pin(qdd))[REF.idx]
        stream.update(k * 1e-3, q, qd, observer.update(k * 1e-3, q, qd, tau))
    est = stream.estimate(0.2, current=model_payload, limits=FREE)
    assert abs(est.mass - MASS) < 1e-5 * MASS and np.max(np.abs(est.com - COM)) < 1e-5


def test_lag_equals_its_recursion_over_long_irregular_spans() -> None:
    rng = np.random.default_rng(2)
    t = np.cumsum(rng.uniform(0.2e-3, 3e-3, 4000))  # ~6 s: many blocks of 30 time constants
    x = rng.normal(size=(t.size, 2, 3))
    for derivative in (False, True):
        got = lag(t, x, GAIN, derivative)
        s = np.zeros((2, 3))
        d = (x[1] - x[0]) / (t[1] - t[0]) if derivative else 0.5 * (x[1] + x[0])
        s[:] = d
        want = [s.copy()]
        for k in range(1, t.size):
            a = np.exp(-GAIN * (t[k] - t[k - 1]))
            d = (x[k] - x[k - 1]) / (t[k] - t[k - 1]) if derivative else 0.5 * (x[k] + x[k - 1])
            s = a * s + (1 - a) * d
            want.append(s.copy())
        want = np.array(want)
        assert np.max(np.abs(got - want)) < 1e-12 * np.max(np.abs(want))
    assert lag_increments(t[:1], x[:1], GAIN, np.ones((2, 3))).tolist() == np.ones((1, 2, 3)).tolist()


def test_the_ring_buffer_keeps_the_newest_samples_and_resets() -> None:
    for eager in (True, False):
        stream = PayloadStream(REF.model, LINK, GAIN, 300)
        stream.eager = eager  # processed as they come, or when asked (then the filters start again
        feed(stream, loaded(MASS, COM, INERTIA), 0.5)  # from the oldest held: 0.2 s)
        times = stream.times()
        assert len(stream) == 300 and times.size == 300
        assert np.allclose(times, 0.2 + 1e-3 * np.arange(300)) and np.all(np.diff(times) > 0)
        t, w, r, _ = stream.samples()
        first = 0.0 if eager else 0.2
        assert np.allclose(t, times[times >= first + stream.warmup - 1e-12]) and w.shape == (t.size, 6, 10)
        assert abs(stream.span() - (t[-1] - t[0])) < 1e-12 and r.shape == (t.size, 6)
        stream.update(times[-1], *motion(0.0, 1.0)[:2], np.zeros(6))  # a time that does not advance
        assert len(stream) == 300 and stream.times()[-1] == times[-1]
        stream.reset()
        assert len(stream) == 0 and stream.span() == 0.0
        with pytest.raises(PayloadRefused, match="at least 2"):
            stream.estimate(limits=FREE)


def test_bad_construction_is_an_error_naming_it() -> None:
    with pytest.raises(RneaError, match="fixed to the root"):
        PayloadStream(REF.model, "base_link", GAIN, 100)
    with pytest.raises(RneaError, match="gain"):
        PayloadStream(REF.model, LINK, 0.0, 100)
    with pytest.raises(RneaError, match="capacity"):
        PayloadStream(REF.model, LINK, GAIN, 10)
    with pytest.raises(RneaError, match="gravity"):
        PayloadStream(REF.model, LINK, GAIN, 100, gravity=(0.0, 0.0, 0.0))
