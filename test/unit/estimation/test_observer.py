"""The momentum observer on data simulated with the core (RK4 forward dynamics, known external
torques): closed-form first-order responses, the tip wrench, streaming = batch."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

from rnea_ros import (
    Friction,
    RobotModel,
    forward_dynamics,
    friction_torques,
    gravity_torques,
    jacobian,
    link_pose,
    mass_matrix,
)
from rnea_ros.errors import RneaError
from rnea_ros.estimation.observer import MomentumObserver, TipWrench, observe, tip_wrench
from rnea_ros.model.example_robots import example_urdf_path

ROBOTS = {"ur5": "ee_link", "panda": "panda_link8"}
HOMES = {  # away from singularities: the tip wrench needs a well-conditioned Jacobian
    "ur5": [0.3, -1.2, 1.5, -1.0, 1.2, 0.5],
    "panda": [0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785, 0.02, 0.02],
}
GAIN = 40.0  # rad/s


def load(name: str) -> RobotModel:
    return RobotModel.from_urdf(example_urdf_path(name).read_text())


def simulate(
    model: RobotModel,
    duration: float,
    tau_ext: Callable[[float, np.ndarray], np.ndarray],
    *,
    friction: Friction | None = None,
    wrench: Callable[[float], np.ndarray] | None = None,
    link: str = "",
    jitter: float = 0.0,
    seed: int = 0,
    hold: bool = False,
    amplitude: float = 1.0,
    home: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(t, q, qd, tau_measured, tau_ext_true) sampled at ~1 kHz (RK4, 2 sub-steps per sample):
    a computed-torque PD + gravity controller (no fast closed-loop mode) tracking a multi-sine,
    τ_ext(t, q) on the joints and/or `wrench(t)`
    exerted by `link` (true τ_ext = −Jᵀ F); `hold`: τ_ext(t) held from each sub-step's start."""
    rng = np.random.default_rng(seed)
    n = model.nv
    q0 = np.where(np.isfinite(model.position_lower), 0.5 * (model.position_lower + model.position_upper), 0.3)
    if home is not None:
        q0 = home
    amp, freq, phase = (
        amplitude * rng.uniform(0.1, 0.3, n),
        rng.uniform(0.3, 1.2, n),
        rng.uniform(0, 2 * np.pi, n),
    )
    kp, kd = (2 * np.pi * 5.0) ** 2, 2 * (2 * np.pi * 5.0)  # computed torque: 5 Hz, critically damped

    def command(t: float, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
        ref = q0 + amp * np.sin(2 * np.pi * freq * t + phase)
        vref = amp * 2 * np.pi * freq * np.cos(2 * np.pi * freq * t + phase)
        return gravity_torques(model, q) + mass_matrix(model, q) @ (kp * (ref - q) + kd * (vref - qd))

    def true_ext(t: float, q: np.ndarray) -> np.ndarray:
        ext = tau_ext(t, q)
        if wrench is not None:
            ext = ext - jacobian(model, q, link).T @ wrench(t)
        return ext

    def accel(t: float, q: np.ndarray, qd: np.ndarray, start: float) -> np.ndarray:
        tau = command(t, q, qd) + true_ext(start if hold else t, q)
        if friction is not None:
            tau = tau - friction_torques(friction, qd)
        return forward_dynamics(model, q, qd, tau)

    steps = int(duration * 1000)
    dts = 1e-3 * (1.0 + jitter * rng.uniform(-1, 1, steps))
    t = np.concatenate([[0.0], np.cumsum(dts)])
    q = np.empty((steps + 1, n))
    qd = np.empty((steps + 1, n))
    q[0], qd[0] = q0 + amp * np.sin(phase), amp * 2 * np.pi * freq * np.cos(phase)
    for i in range(steps):
        x, v, h = q[i], qd[i], dts[i] / 2
        ti = t[i]
        for _ in range(2):
            k1v, k1a = v, accel(ti, x, v, ti)
            k2v, k2a = v + h / 2 * k1a, accel(ti + h / 2, x + h / 2 * k1v, v + h / 2 * k1a, ti)
            k3v, k3a = v + h / 2 * k2a, accel(ti + h / 2, x + h / 2 * k2v, v + h / 2 * k2a, ti)
            k4v, k4a = v + h * k3a, accel(ti + h, x + h * k3v, v + h * k3a, ti)
            x = x + h / 6 * (k1v + 2 * k2v + 2 * k3v + k4v)
            v = v + h / 6 * (k1a + 2 * k2a + 2 * k3a + k4a)
            ti += h
        q[i + 1], qd[i + 1] = x, v
    tau_m = np.array([command(ti, qi, vi) for ti, qi, vi in zip(t, q, qd, strict=True)])
    ext = np.array([true_ext(ti, qi) for ti, qi in zip(t, q, strict=True)])
    return t, q, qd, tau_m, ext


@pytest.mark.parametrize("name", list(ROBOTS))
def test_step_follows_the_closed_form_first_order_response(name: str) -> None:
    model = load(name)
    step = np.linspace(2.0, -1.5, model.nv)  # N m, on from t = 0.1 s (a sample time)
    t0 = 0.1
    t, q, qd, tau, ext = simulate(model, 0.4, lambda t, q: step * (t >= t0 - 1e-9), hold=True)
    r = observe(model, t, q, qd, tau, GAIN)
    expected = step * (1 - np.exp(-GAIN * np.clip(t - t0, 0, None)))[:, None]
    assert np.max(np.abs(r - expected)) < 1e-3 * np.max(np.abs(step))
    assert np.max(np.abs(r[t < t0 - 1e-9])) < 2e-4 * np.max(np.abs(tau))  # no τ_ext: r ≈ 0 while moving


@pytest.mark.parametrize("jitter", [0.0, 0.5])
def test_sine_with_variable_period_and_friction_follows_the_closed_form(jitter: float) -> None:
    """τ_ext = A sin(ωt) from t = 0: r = A K/(K²+ω²) (K sin ωt − ω cos ωt + ω e^{−Kt})."""
    model = load("ur5")
    friction = Friction(np.full(model.nv, 0.8), np.full(model.nv, 1.5), smoothing_velocity=0.05)
    amp, w = np.linspace(1.0, 3.0, model.nv), 2 * np.pi * 2.0
    t, q, qd, tau, _ = simulate(
        model, 1.0, lambda t, q: amp * np.sin(w * t), friction=friction, jitter=jitter, seed=3
    )
    r = observe(model, t, q, qd, tau, GAIN, friction=friction)
    k = GAIN
    closed = (amp * k / (k * k + w * w))[None, :] * (
        k * np.sin(w * t) - w * np.cos(w * t) + w * np.exp(-k * t)
    )[:, None]
    # ẏ held over a step is the mean of τ_ext over it: a half-period lag, error ≲ A ω Δt / 2
    assert np.max(np.abs(r - closed)) < 0.5 * np.max(amp) * w * 1.5e-3 * 1.1
    without = observe(model, t, q, qd, tau, GAIN)  # friction left out: r carries −τ_f
    assert np.max(np.abs(without - closed)) > 0.5


def test_streaming_equals_batch_and_gravity_switch() -> None:
    model = load("panda")
    t, q, qd, tau, _ = simulate(
        model, 0.2, lambda t, q: np.sin(5 * t) * np.ones(model.nv), jitter=0.3, seed=5
    )
    gains = np.linspace(20.0, 60.0, model.nv)
    batch = observe(model, t, q, qd, tau, gains)
    obs = MomentumObserver(model, gains)
    stream = np.array(
        [obs.update(ti, qi, vi, ui).copy() for ti, qi, vi, ui in zip(t, q, qd, tau, strict=True)]
    )
    assert np.max(np.abs(stream - batch)) < 1e-12
    compensated = MomentumObserver(model, gains, effort_includes_gravity=False)
    out = [
        compensated.update(ti, qi, vi, ui - gravity_torques(model, qi)).copy()
        for ti, qi, vi, ui in zip(t, q, qd, tau, strict=True)
    ]
    assert np.max(np.abs(np.array(out) - batch)) < 1e-9
    before = obs.residual.copy()
    assert np.array_equal(obs.update(t[-1], q[-1], qd[-1], tau[-1]), before)  # time did not advance


def lag(t: np.ndarray, u: np.ndarray, gain: float) -> np.ndarray:
    """ṙ = K (u − r), r(0) = 0, solved exactly for u linear between samples."""
    r = np.zeros_like(u)
    for i in range(1, t.size):
        dt = t[i] - t[i - 1]
        a = np.exp(-gain * dt)
        slope = (u[i] - u[i - 1]) / dt
        r[i] = a * (r[i - 1] - u[i - 1] + slope / gain) + u[i] - slope / gain
    return r


@pytest.mark.parametrize("name", list(ROBOTS))
def test_tip_wrench_from_the_residual(name: str) -> None:
    """A constant wrench exerted by the tip link (through rnea's wrench path in the plant) comes
    back from r through the damped pseudo-inverse of Jᵀ, once the lag has settled."""
    model = load(name)
    link = ROBOTS[name]
    wrench = np.array([8.0, -5.0, 12.0, 0.6, -0.4, 0.3])
    t, q, qd, tau, ext = simulate(
        model,
        0.5,
        lambda t, q: np.zeros(model.nv),
        wrench=lambda t: wrench,
        link=link,
        amplitude=0.05,
        home=np.array(HOMES[name]),
    )
    r = observe(model, t, q, qd, tau, 100.0)
    settled = t > 0.3  # > 10 time constants: r is the true τ_ext through the first-order lag
    assert np.max(np.abs(r[settled] - lag(t, ext, 100.0)[settled])) < 1e-3 * np.max(np.abs(ext))
    jac_rank = np.linalg.matrix_rank(jacobian(model, q[-1], link))
    assert jac_rank == 6
    exact = tip_wrench(model, q[-1], ext[-1], link, damping=1e-9)
    assert np.max(np.abs(exact - wrench)) < 1e-6 * np.max(np.abs(wrench))
    est = tip_wrench(model, q[-1], r[-1], link, damping=1e-6)  # slow motion: the lag is small
    assert np.max(np.abs(est - wrench)) < 1e-2 * np.max(np.abs(wrench))
    compiled, rot = TipWrench(model, link, damping=1e-6)(q[-1], r[-1])  # the node's form
    assert np.allclose(compiled, est, rtol=0, atol=1e-9 * np.max(np.abs(est)))
    assert np.allclose(rot, link_pose(model, q[-1], link)[0], rtol=0, atol=1e-12)
    # below rank 6 (the first three joints' link), the smallest wrench explaining the residual
    link3 = next(name for name in model.link_names if model.link_frame(name).body == 2)
    jac3 = jacobian(model, q[-1], link3)
    short = tip_wrench(model, q[-1], ext[-1], link3, damping=1e-9)
    assert np.allclose(jac3 @ jac3.T @ short, -jac3 @ ext[-1], atol=1e-6)
    undamped, _ = TipWrench(model, link3, damping=0.0)(q[-1], ext[-1])  # Cholesky fails: lstsq
    assert np.allclose(undamped, -np.linalg.lstsq(jac3.T, ext[-1], rcond=None)[0], atol=1e-9)


def test_bad_gain_is_refused_naming_the_count() -> None:
    model = load("ur5")
    with pytest.raises(RneaError, match="6 values"):
        MomentumObserver(model, [1.0, 2.0])
    with pytest.raises(RneaError, match="> 0"):
        MomentumObserver(model, -1.0)
