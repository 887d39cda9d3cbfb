"""The message inputs of the node (rnea_ros.nodes.inverse_dynamics.overrides)
and how the runtime combines them with
the parameters: wrenches on any link in root or link axes, payloads, which input wins, model
swaps; checked against the core's rnea(..., wrenches=...) and with_payload (no ROS processes)."""

from __future__ import annotations

import numpy as np
import pytest

from rnea_ros import RobotModel, link_pose, rnea
from rnea_ros.control.effort_law import compute_efforts
from rnea_ros.errors import RneaError
from rnea_ros.model.example_robots import example_urdf_path
from rnea_ros.nodes.inverse_dynamics.cycle_model import build_cycle_model
from rnea_ros.nodes.inverse_dynamics.overrides import NONE, moving_links, payload_of, wrench_of
from rnea_ros.nodes.inverse_dynamics.overrides import message_link as link_of
from rnea_ros.nodes.inverse_dynamics.params import INVERSE_DYNAMICS
from rnea_ros.ros.schema import defaults

PANDA = RobotModel.from_urdf(example_urdf_path("panda").read_text(), tip_link="panda_hand")
UR5 = RobotModel.from_urdf(example_urdf_path("ur5").read_text())
FRICTION_OFF = {"friction.scale": 0.0, "friction.feedforward_scale": 0.0}  # rigid-body terms only
PARAMS = {**defaults(INVERSE_DYNAMICS), "tip_link": "panda_hand", **FRICTION_OFF}
RNG = np.random.default_rng(7)


def efforts(runtime, q, qd) -> np.ndarray:
    out = compute_efforts(runtime.efforts, q, qd, (q, qd, np.zeros_like(q)), runtime.wrenches(q))
    return out.total


def unclamped(model: RobotModel, q, qd, wrenches=None) -> np.ndarray:
    return np.clip(
        rnea(model, q, qd, np.zeros(model.nv), wrenches=wrenches), -model.effort_limit, model.effort_limit
    )


def test_moving_links_are_those_on_a_joint() -> None:
    links = moving_links(PANDA)
    assert "panda_link0" not in links and {"panda_link1", "panda_hand", "panda_leftfinger"} <= set(links)
    assert set(links) == {n for n, f in PANDA.link_frames.items() if f.body >= 0}


@pytest.mark.parametrize("axes", ["root", "link"])
def test_wrenches_on_every_link_equal_the_core(axes: str) -> None:
    q, qd = RNG.uniform(-1, 1, PANDA.nv), RNG.normal(0, 0.3, PANDA.nv)
    overrides, given = NONE, {}
    for link in moving_links(PANDA):
        given[link] = RNG.normal(0, 3, 6) * 0.1
        overrides = overrides.with_wrench(link, wrench_of(given[link], axes))
    runtime = build_cycle_model(PANDA, PARAMS, overrides)
    root = {}
    for link, w in given.items():
        rot = np.eye(3) if axes == "root" else link_pose(PANDA, q, link)[0]
        root[link] = np.concatenate([rot @ w[:3], rot @ w[3:]])
    assert np.allclose(efforts(runtime, q, qd), unclamped(PANDA, q, qd, root), atol=1e-9)
    assert runtime.wrench_links == sorted(given)


def test_tip_message_overrides_the_parameter_until_it_is_set_again() -> None:
    q, qd = RNG.uniform(-1, 1, PANDA.nv), np.zeros(PANDA.nv)
    param = [0.0, 0.0, -5.0, 0.0, 0.0, 0.0]
    params = {**PARAMS, "ee_wrench": param}
    assert np.allclose(
        efforts(build_cycle_model(PANDA, params, NONE), q, qd), unclamped(PANDA, q, qd, {"panda_hand": param})
    )
    zero = NONE.with_wrench("panda_hand", wrench_of(np.zeros(6), "root"))
    assert build_cycle_model(PANDA, params, zero).wrenches(q) is None  # a zero message clears, overriding
    assert zero.after_parameters(["ee_wrench"], "panda_hand") == NONE
    other = NONE.with_wrench("panda_link3", wrench_of(np.ones(6), "root"))
    assert other.after_parameters(["ee_wrench", "gravity"], "panda_hand") is other


def test_message_links_and_their_reasons() -> None:
    assert link_of(PANDA, "", "panda_hand", "~/ee_wrench") == "panda_hand"
    assert link_of(PANDA, "panda_link3", None, "~/ee_wrench") == "panda_link3"
    with pytest.raises(
        RneaError, match=r"link 'tool0' is not part of the model \(links that move: panda_link1,"
    ):
        link_of(PANDA, "tool0", "panda_hand", "~/ee_wrench")
    with pytest.raises(RneaError, match="'panda_link0' is fixed to the root"):
        link_of(PANDA, "panda_link0", "panda_hand", "~/ee_wrench")
    with pytest.raises(RneaError, match="frame_id is empty and tip_link is not set"):
        link_of(PANDA, "", None, "~/payload")
    with pytest.raises(RneaError, match="6 finite numbers"):
        wrench_of([0, 0, np.nan, 0, 0, 0], "root")


def test_payload_messages_equal_the_core_and_win_over_the_parameters() -> None:
    q, qd = RNG.uniform(-1, 1, PANDA.nv), RNG.normal(0, 0.3, PANDA.nv)
    params = {**PARAMS, "payload.mass": 2.0, "payload.com": [0.0, 0.0, 0.1]}
    by_params = PANDA.with_payload("panda_hand", 2.0, (0, 0, 0.1))
    assert np.allclose(efforts(build_cycle_model(PANDA, params, NONE), q, qd), unclamped(by_params, q, qd))
    inertia = [0.01, 0.001, 0.0, 0.012, 0.0, 0.015]
    payload = payload_of(PANDA, "panda_link5", 1.2, (0.01, 0.02, 0.03), inertia)
    runtime = build_cycle_model(PANDA, params, NONE.with_payload(payload))
    tensor = np.array([[0.01, 0.001, 0.0], [0.001, 0.012, 0.0], [0.0, 0.0, 0.015]])
    by_message = PANDA.with_payload("panda_link5", 1.2, (0.01, 0.02, 0.03), tensor)
    assert np.allclose(efforts(runtime, q, qd), unclamped(by_message, q, qd), atol=1e-9)
    assert runtime.payload_source == "topic" and runtime.model.payload.link == "panda_link5"
    empty = payload_of(PANDA, "", 0.0, (0, 0, 0), [0] * 6)
    cleared = build_cycle_model(PANDA, params, NONE.with_payload(empty))
    assert cleared.model.payload is None and np.allclose(efforts(cleared, q, qd), unclamped(PANDA, q, qd))
    assert NONE.with_payload(payload).after_parameters(["payload.com"], "panda_hand") == NONE
    # the estimation's own payload.* parameters leave the payload in force (an estimate too)
    estimated = NONE.with_payload(payload, "estimate")
    assert estimated.after_parameters(["payload.estimation", "payload.blend_time"], "panda_hand") is estimated
    assert build_cycle_model(PANDA, params, estimated).payload_source == "estimate"
    assert estimated.after_parameters(["payload.link"], "panda_hand") == NONE


@pytest.mark.parametrize(
    ("mass", "com", "inertia", "reason"),
    [
        (-1.0, (0, 0, 0), [0] * 6, "inertia.m must be in [0, 1000]"),
        (2000.0, (0, 0, 0), [0] * 6, "inertia.m must be in [0, 1000]"),
        (np.inf, (0, 0, 0), [0] * 6, "inertia.m must be finite"),
        (1.0, (0, np.nan, 0), [0] * 6, "inertia.com must be finite"),
        (1.0, (0, 0, 0), [0.01, 0, 0, 0.01, 0, 0.05], "payload on link 'panda_link5'"),
        (1.0, (0, 0, 0), [-0.01, 0, 0, 0.01, 0, 0.01], "payload on link 'panda_link5'"),
    ],
)
def test_bad_payloads_are_refused_naming_the_field_or_link(mass, com, inertia, reason) -> None:
    with pytest.raises(RneaError) as err:
        payload_of(PANDA, "panda_link5", mass, com, inertia)
    assert reason in str(err.value)


def test_a_new_model_keeps_what_fits_and_drops_the_rest() -> None:
    overrides = NONE.with_wrench("panda_link3", wrench_of(np.ones(6), "root")).with_wrench(
        "wrist_1_link", wrench_of(np.ones(6), "link")
    )
    overrides = overrides.with_payload(payload_of(PANDA, "panda_hand", 1.0, (0, 0, 0), [0] * 6))
    kept, dropped = overrides.fitting(UR5)
    assert list(kept.wrenches) == ["wrist_1_link"] and kept.payload is None
    assert dropped == [
        "~/ee_wrench on 'panda_link3': the new model has no such link",
        "~/payload on 'panda_hand': the new model has no such link",
    ]
