"""The node's effort law (one compiled kernel) against the same law assembled from the public API."""

from __future__ import annotations

import itertools
from dataclasses import replace

import numpy as np
import pytest

from rnea_ros import Friction, RobotModel, friction_torques, gravity_torques, jacobian, rnea
from rnea_ros.control.effort_law import COMPENSABLE, EffortLaw, Efforts, compute_efforts
from rnea_ros.model.example_robots import example_urdf_path

MODEL = RobotModel.from_urdf(example_urdf_path("panda").read_text(), tip_link="panda_hand")
N = MODEL.nv
FRICTION = Friction(np.linspace(0.1, 0.7, N), np.linspace(0.2, 0.8, N), 0.05, static=np.full(N, 1.0))
GRAVITY = (0.3, -0.2, -9.7)


def reference(law: EffortLaw, q, qd, desired, wrench) -> dict[str, np.ndarray]:
    """Each term from rnea, gravity_torques, friction_torques and the Jacobian; friction at the
    desired velocity (every joint driven: compute_efforts without `driven`; the feedback rule
    for undriven joints is tested in test_compensation.py)."""
    q_des, qd_des, qdd_des = desired
    qx, qdx = (q_des, qd_des) if law.use_desired_state else (q, qd)
    zero = np.zeros(N)
    terms = {
        "gravity": gravity_torques(MODEL, qx, gravity=law.gravity),
        "coriolis": rnea(MODEL, qx, qdx, zero, gravity=(0, 0, 0)),
        "inertia": rnea(MODEL, qx, zero, qdd_des, gravity=(0, 0, 0)),
        "friction": friction_torques(FRICTION, qd_des),
        "wrench": jacobian(MODEL, qx, "panda_hand").T @ wrench,
    }
    terms = {t: v if t in law.compensate else zero for t, v in terms.items()}
    terms["feedback"] = law.kp * (q_des - q) + law.kd * (qd_des - qd)
    return terms


@pytest.mark.parametrize("use_desired", [False, True])
def test_every_term_and_switch_matches_the_public_api(use_desired: bool) -> None:
    rng = np.random.default_rng(3)
    for on in itertools.chain.from_iterable(
        itertools.combinations(COMPENSABLE, r) for r in range(len(COMPENSABLE) + 1)
    ):
        law = EffortLaw(GRAVITY, frozenset(on), rng.uniform(0, 50, N), rng.uniform(0, 5, N), use_desired, 1e6)
        efforts = Efforts(MODEL, replace(law, friction=FRICTION))
        q, qd = rng.uniform(-1, 1, N), rng.normal(0, 1, N)
        desired = (q + rng.normal(0, 0.1, N), qd + rng.normal(0, 0.1, N), rng.normal(0, 2, N))
        wrench = rng.normal(0, 10, 6)
        compute_efforts(efforts, q, qd, desired, {"panda_hand": wrench})
        want = reference(law, q, qd, desired, wrench)
        for term, value in efforts.terms.items():
            np.testing.assert_allclose(value, want[term], rtol=1e-12, atol=1e-12, err_msg=f"{on} {term}")
        np.testing.assert_allclose(efforts.total, sum(want.values()), rtol=1e-12, atol=1e-12)
        assert not efforts.clamped.any()


def test_total_is_clamped_to_limit_times_scale_and_flagged() -> None:
    law = EffortLaw(kp=1000.0, effort_limit_scale=0.5)
    efforts = Efforts(MODEL, replace(law, friction=FRICTION))
    q = np.zeros(N)
    q_des = np.where(np.arange(N) % 2 == 0, 1.0, 0.0)  # 1000 N m asked on even joints
    compute_efforts(efforts, q, np.zeros(N), (q_des, np.zeros(N), np.zeros(N)))
    raw = sum(efforts.terms.values())
    limit = 0.5 * MODEL.effort_limit
    np.testing.assert_array_equal(efforts.clamped, np.abs(raw) > limit)
    assert efforts.clamped[::2].all() and not efforts.clamped[1::2].any()
    np.testing.assert_allclose(efforts.total, np.clip(raw, -limit, limit), rtol=0, atol=0)
    # the node's per-cycle form: names of the clamped joints, for any output order
    names = MODEL.joint_names
    order = list(range(N))[::-1]
    flagged = [n for n, c in zip(names, efforts.clamped, strict=True) if c]
    assert efforts.clamped_joints(names, range(N)) == flagged
    assert efforts.clamped_joints([names[j] for j in order], order) == [names[j] for j in order if j % 2 == 0]
    compute_efforts(efforts, q, np.zeros(N), (q, np.zeros(N), np.zeros(N)))  # at rest: nothing clamped
    assert efforts.clamped_joints(names, range(N)) == []


@pytest.mark.parametrize("where", ["q", "qd", "desired qdd"])
def test_non_finite_input_raises_naming_it_instead_of_a_clamped_command(where: str) -> None:
    efforts = Efforts(MODEL, EffortLaw(friction=FRICTION))
    state = {"q": np.zeros(N), "qd": np.zeros(N), "desired qdd": np.zeros(N)}
    state[where][2] = np.inf
    with pytest.raises(ValueError, match=where):
        compute_efforts(efforts, state["q"], state["qd"], (np.zeros(N), np.zeros(N), state["desired qdd"]))


def test_wrong_sizes_raise() -> None:
    efforts = Efforts(MODEL, EffortLaw(friction=FRICTION))
    with pytest.raises(ValueError, match="7 values"):
        compute_efforts(efforts, np.zeros(N - 1), np.zeros(N), (np.zeros(N),) * 3)
    with pytest.raises(ValueError, match="friction"):
        Efforts(MODEL, EffortLaw(friction=Friction(np.zeros(N + 1), np.zeros(N + 1))))
