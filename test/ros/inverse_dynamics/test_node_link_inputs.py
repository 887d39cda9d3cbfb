"""`~/ee_wrench` on any link and `~/payload` (geometry_msgs/InertiaStamped) against the core:
the node as a real process (Panda, chain to panda_hand), its efforts compared with
`rnea(..., wrenches=...)` and `model.with_payload(...)` + `rnea` on random links and states."""

from __future__ import annotations

import time

import numpy as np
import pytest
from geometry_msgs.msg import InertiaStamped, WrenchStamped

from rnea_ros import RobotModel, link_pose, rnea
from rnea_ros.model.example_robots import example_urdf_path
from rnea_ros.nodes.inverse_dynamics.overrides import moving_links
from rnea_ros.testing.rosgraph import FRICTION_OFF, Driver, start_node, stop

URDF = example_urdf_path("panda").read_text()
MODEL = RobotModel.from_urdf(URDF, tip_link="panda_hand")
NAMES = list(MODEL.joint_names)
LINKS = moving_links(MODEL)
RNG = np.random.default_rng(25)


def random_state() -> tuple[np.ndarray, np.ndarray]:
    return RNG.uniform(MODEL.position_lower, MODEL.position_upper), RNG.normal(0, 0.5, MODEL.nv)


def random_inertia() -> np.ndarray:
    """A physical rigid-body inertia about the com (principal moments obeying the triangle
    inequality, turned by a random rotation)."""
    a, b = RNG.uniform(0.001, 0.05, 2)
    c = RNG.uniform(abs(a - b) + 1e-4, a + b - 1e-4)
    rot, _ = np.linalg.qr(RNG.normal(size=(3, 3)))
    return rot @ np.diag([a, b, c]) @ rot.T


@pytest.fixture(scope="module")
def node(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("link_inputs")
    params = {
        "robot_description": URDF,
        "tip_link": "panda_hand",
        "joint_states_timeout": 0.5,
        "diagnostics_period": 0.2,
        **FRICTION_OFF,
    }
    proc = start_node(tmp, params)
    driver = Driver("link_inputs_driver", dict(zip(NAMES, MODEL.effort_limit, strict=True)))
    driver.wrench_pub = driver.node.create_publisher(WrenchStamped, "/inverse_dynamics/ee_wrench", 10)
    driver.payload_pub = driver.node.create_publisher(InertiaStamped, "/inverse_dynamics/payload", 10)
    q, qd = random_state()
    try:
        driver.wait_for_commands(lambda: driver.state(NAMES, q, qd))
        end = time.monotonic() + 10
        while time.monotonic() < end and (
            driver.wrench_pub.get_subscription_count() == 0
            or driver.payload_pub.get_subscription_count() == 0
        ):
            driver.spin(0.05)
        yield driver
    finally:
        driver.close()
        output = stop(proc)
        assert "Traceback" not in output, output


def send_wrench(node: Driver, frame_id: str, values) -> None:
    msg = WrenchStamped()
    msg.header.frame_id = frame_id
    f, t = msg.wrench.force, msg.wrench.torque
    f.x, f.y, f.z, t.x, t.y, t.z = (float(v) for v in values)
    node.wrench_pub.publish(msg)


def send_payload(node: Driver, frame_id: str, mass: float, com=(0.0, 0.0, 0.0), inertia=None) -> None:
    msg = InertiaStamped()
    msg.header.frame_id = frame_id
    i = msg.inertia
    i.m = float(mass)
    i.com.x, i.com.y, i.com.z = (float(x) for x in com)
    inertia = np.zeros((3, 3)) if inertia is None else inertia
    i.ixx, i.ixy, i.ixz, i.iyy, i.iyz, i.izz = (
        float(inertia[r, c]) for r, c in ((0, 0), (0, 1), (0, 2), (1, 1), (1, 2), (2, 2))
    )
    node.payload_pub.publish(msg)


def settles_to(node: Driver, want_of, timeout: float = 5.0) -> tuple[np.ndarray, np.ndarray]:
    """Command random states until the node's answer equals want_of(q, qd) (the input travels on
    another topic than joint_states, so it may arrive a little later); the last answer. States
    whose expected effort reaches a joint's limit are drawn again, up to 20 in a row: the node
    clamps those. When the wrenches alone pass a limit (several links loaded), every state does:
    then the answer is compared with the clamped expectation (the node's documented clamp), for
    states that leave at least three joints unclamped (whose efforts tell the wrenches apart)."""
    end, got, beyond = time.monotonic() + timeout, None, 0
    while True:
        q, qd = random_state()
        want = want_of(q, qd)
        inside = np.abs(want) < MODEL.effort_limit
        if inside.all() or (beyond >= 20 and inside.sum() >= 3):
            want = np.clip(want, -MODEL.effort_limit, MODEL.effort_limit)
            got = node.command_for(node.state(NAMES, q, qd), timeout=1.0)
            if got is not None and np.allclose(got, want, rtol=0, atol=1e-9):
                return got, want
        else:
            beyond += 1
        if time.monotonic() > end:
            assert got is not None, "no command was answered"
            return got, want


def root_axes(q: np.ndarray, link: str, wrench: np.ndarray, axes: str) -> np.ndarray:
    if axes == "root":
        return wrench
    rot, _ = link_pose(MODEL, q, link)
    return np.concatenate([rot @ wrench[:3], rot @ wrench[3:]])


def expected(q, qd, wrenches: dict[str, np.ndarray], axes: str, model: RobotModel = MODEL) -> np.ndarray:
    given = {link: root_axes(q, link, w, axes) for link, w in wrenches.items()}
    return rnea(model, q, qd, np.zeros(MODEL.nv), wrenches=given or None)


@pytest.mark.parametrize("axes", ["root", "link"])
def test_wrenches_on_random_links_equal_the_core(node: Driver, axes: str) -> None:
    assert node.set_parameters({"ee_wrench_frame": axes})[0].successful
    active: dict[str, np.ndarray] = {}
    try:
        for _ in range(4):  # add or replace wrenches on 1-3 random links (the tip among them at times)
            for link in RNG.choice(LINKS, size=RNG.integers(1, 4), replace=False):
                active[str(link)] = RNG.normal(0, 5, 6)
                send_wrench(node, str(link), active[str(link)])
            got, want = settles_to(node, lambda q, qd: expected(q, qd, active, axes))
            assert np.allclose(got, want, rtol=0, atol=1e-9), (sorted(active), got, want)
            assert set(node.latest_diagnostics()["wrench_links"].split()) == set(active)
        cleared = sorted(active)[0]  # a zero wrench clears its link; the others stay
        send_wrench(node, cleared, np.zeros(6))
        del active[cleared]
        got, want = settles_to(node, lambda q, qd: expected(q, qd, active, axes))
        assert np.allclose(got, want, rtol=0, atol=1e-9)
        assert set(node.latest_diagnostics()["wrench_links"].split()) == set(active)
    finally:
        for link in list(active):
            send_wrench(node, link, np.zeros(6))
        assert node.set_parameters({"ee_wrench": [0.0] * 6, "ee_wrench_frame": "root"})[0].successful
    got, want = settles_to(node, lambda q, qd: expected(q, qd, {}, "root"))
    assert np.allclose(got, want, rtol=0, atol=1e-9)


def test_an_empty_frame_id_is_the_tip_and_a_tip_message_overrides_the_parameter(node: Driver) -> None:
    param = RNG.normal(0, 5, 6)
    assert node.set_parameters({"ee_wrench": param.tolist()})[0].successful
    try:
        got, want = settles_to(node, lambda q, qd: expected(q, qd, {"panda_hand": param}, "root"))
        assert np.allclose(got, want, rtol=0, atol=1e-9)
        message = RNG.normal(0, 5, 6)
        send_wrench(node, "", message)  # empty frame_id: tip_link
        got, want = settles_to(node, lambda q, qd: expected(q, qd, {"panda_hand": message}, "root"))
        assert np.allclose(got, want, rtol=0, atol=1e-9)
        send_wrench(node, "panda_hand", np.zeros(6))  # a zero message on the tip overrides too
        got, want = settles_to(node, lambda q, qd: expected(q, qd, {}, "root"))
        assert np.allclose(got, want, rtol=0, atol=1e-9)
        param = RNG.normal(0, 5, 6)  # setting ee_wrench again replaces the tip's message
        assert node.set_parameters({"ee_wrench": param.tolist()})[0].successful
        got, want = settles_to(node, lambda q, qd: expected(q, qd, {"panda_hand": param}, "root"))
        assert np.allclose(got, want, rtol=0, atol=1e-9)
    finally:
        assert node.set_parameters({"ee_wrench": [0.0] * 6})[0].successful


@pytest.mark.parametrize(
    ("frame_id", "reason"),
    [
        ("nowhere", "link 'nowhere' is not part of the model (links that move: panda_link1, "),
        ("root", "link 'root' is not part of the model"),
        ("panda_link0", "link 'panda_link0' is fixed to the root"),
    ],
)
def test_a_wrench_on_an_unknown_or_fixed_link_is_rejected_listing_the_valid_links(
    node: Driver, frame_id: str, reason: str
) -> None:
    before = int(node.latest_diagnostics().get("rejected.bad_wrench", 0))
    send_wrench(node, "panda_link4", [1.0, 2.0, 3.0, 0.1, 0.2, 0.3])
    send_wrench(node, frame_id, [10.0, 0.0, 0.0, 0.0, 0.0, 0.0])
    kept = {"panda_link4": np.array([1.0, 2.0, 3.0, 0.1, 0.2, 0.3])}
    try:
        got, want = settles_to(node, lambda q, qd: expected(q, qd, kept, "root"))
        assert np.allclose(got, want, rtol=0, atol=1e-9)  # the bad message changed nothing
        diag = node.latest_diagnostics()
        assert int(diag["rejected.bad_wrench"]) == before + 1
        assert reason in diag["last_drop"] and "panda_hand" in diag["last_drop"]
    finally:
        send_wrench(node, "panda_link4", np.zeros(6))
    settles_to(node, lambda q, qd: expected(q, qd, {}, "root"))


def test_payload_messages_on_random_links_equal_the_core(node: Driver) -> None:
    try:
        for link in RNG.choice(LINKS, size=4, replace=False):
            mass, com, inertia = RNG.uniform(0.2, 3.0), RNG.normal(0, 0.05, 3), random_inertia()
            send_payload(node, str(link), mass, com, inertia)
            loaded = MODEL.with_payload(str(link), mass, com, inertia)
            got, want = settles_to(node, lambda q, qd, m=loaded: expected(q, qd, {}, "root", m))
            assert np.allclose(got, want, rtol=0, atol=1e-9), link
            diag = node.latest_diagnostics()
            assert diag["payload"].startswith(f"{mass:.4g} kg on {link}") and "(~/payload)" in diag["payload"]
        send_payload(node, "", 0.0)  # an empty message removes it
        got, want = settles_to(node, lambda q, qd: expected(q, qd, {}, "root"))
        assert np.allclose(got, want, rtol=0, atol=1e-9)
        assert node.latest_diagnostics()["payload"] == "none (~/payload cleared it)"
    finally:
        send_payload(node, "", 0.0)


def test_payload_message_and_parameters_latest_wins(node: Driver) -> None:
    by_params = MODEL.with_payload("panda_hand", 2.0, (0, 0, 0.1))
    assert node.set_parameters({"payload.mass": 2.0, "payload.com": [0.0, 0.0, 0.1]})[0].successful
    try:
        got, want = settles_to(node, lambda q, qd: expected(q, qd, {}, "root", by_params))
        assert np.allclose(got, want, rtol=0, atol=1e-9)
        inertia = random_inertia()
        by_message = MODEL.with_payload("panda_link6", 1.0, (0.01, 0, 0), inertia)
        send_payload(node, "panda_link6", 1.0, (0.01, 0, 0), inertia)  # replaces the parameters' payload
        got, want = settles_to(node, lambda q, qd: expected(q, qd, {}, "root", by_message))
        assert np.allclose(got, want, rtol=0, atol=1e-9)
        send_payload(node, "", 0.0)  # no payload at all, whatever the parameters say
        got, want = settles_to(node, lambda q, qd: expected(q, qd, {}, "root"))
        assert np.allclose(got, want, rtol=0, atol=1e-9)
        assert node.set_parameters({"payload.mass": 2.0})[0].successful  # a parameter set: they apply again
        got, want = settles_to(node, lambda q, qd: expected(q, qd, {}, "root", by_params))
        assert np.allclose(got, want, rtol=0, atol=1e-9)
        assert "(payload.* parameters)" in node.latest_diagnostics()["payload"]
    finally:
        assert node.set_parameters({"payload.mass": 0.0, "payload.com": [0.0] * 3})[0].successful


@pytest.mark.parametrize(
    ("frame_id", "mass", "inertia", "reason"),
    [
        ("panda_link5", 1.0, np.diag([0.01, 0.01, 0.05]), "payload on link 'panda_link5': "),  # triangle
        ("panda_link5", 1.0, np.diag([-0.01, 0.01, 0.01]), "payload on link 'panda_link5': "),
        ("panda_link5", -1.0, np.zeros((3, 3)), "inertia.m must be in [0, 1000]"),
        ("panda_link5", float("nan"), np.zeros((3, 3)), "inertia.m must be finite"),
        ("panda_link5", 1.0, np.full((3, 3), np.inf), "inertia.ixx..izz must be finite"),
        ("gripper", 1.0, np.zeros((3, 3)), "link 'gripper' is not part of the model (links that move: "),
    ],
)
def test_a_bad_payload_is_rejected_naming_the_link_or_field_and_the_old_one_stays(
    node: Driver, frame_id: str, mass: float, inertia: np.ndarray, reason: str
) -> None:
    good = MODEL.with_payload("panda_link7", 0.5, (0, 0, 0.02))
    send_payload(node, "panda_link7", 0.5, (0, 0, 0.02))
    try:
        settles_to(node, lambda q, qd: expected(q, qd, {}, "root", good))
        before = int(node.latest_diagnostics().get("rejected.bad_payload", 0))
        send_payload(node, frame_id, mass, (0, 0, 0), inertia)
        end = time.monotonic() + 5
        while (diag := node.latest_diagnostics()) and int(diag.get("rejected.bad_payload", 0)) == before:
            assert time.monotonic() < end, "the bad payload was not rejected"
        assert reason in diag["last_drop"], diag["last_drop"]
        got, want = settles_to(node, lambda q, qd: expected(q, qd, {}, "root", good))
        assert np.allclose(got, want, rtol=0, atol=1e-9)
    finally:
        send_payload(node, "", 0.0)
