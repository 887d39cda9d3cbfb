"""rnea_ros.identification.written: an identified body merged from several links is written so
that Pinocchio, reading the corrected URDF, finds that body again, also when it is lighter than
the links fixed to its carrying link (the case of TIAGo's arm_7 + Hey5 hand); a body that is
not physical cannot be, and says by how much."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pinocchio as pin
import pytest

from rnea_ros import RobotModel
from rnea_ros.identification.fit import identify
from rnea_ros.identification.regressor import body_columns, standard_parameters
from rnea_ros.identification.signals import Samples
from rnea_ros.identification.written import corrected_urdf, physical, reload
from rnea_ros.model.example_robots import example_urdf_path
from rnea_ros.model.urdf import parse_urdf

URDF = example_urdf_path("panda")
TIP = "panda_hand"  # the fingers' joints are locked: link7, link8, hand and fingers are one body


@pytest.fixture(scope="module")
def panda():
    model = RobotModel.from_urdf(URDF.read_text(), tip_link=TIP)
    rng = np.random.default_rng(0)
    n, count = model.nv, 400
    t = np.arange(count) * 0.01
    q = 0.3 * np.sin(np.outer(t, rng.uniform(0.5, 2.0, n)))
    qd = np.gradient(q, t, axis=0)
    samples = Samples(t, q, qd, np.gradient(qd, t, axis=0), rng.normal(size=(count, n)))
    return model, identify(model, samples, ("friction",))


def pinocchio_body(urdf: str, joint: str) -> np.ndarray:
    full = pin.buildModelFromXML(urdf)
    locked = [full.getJointId(n) for n in full.names[1:] if "finger" in n]
    model = pin.buildReducedModel(full, locked, pin.neutral(full))
    return model.inertias[model.getJointId(joint)].toDynamicParameters()


def test_a_body_lighter_than_its_fixed_links_is_written_exactly(panda) -> None:
    model, result = panda
    pi = standard_parameters(model)
    last = body_columns(model, model.nv - 1)
    heavy = body_columns(model, 3)
    target = pi.copy()
    target[last] *= 0.3  # 0.3 of link7 + hand + fingers: less than the hand and fingers alone
    target[heavy] *= 1.1  # a small change: link4 takes it alone
    identified = replace(result, parameters=target, identified=("inertial", "friction"))
    text, notes, errors = corrected_urdf(URDF.read_text(), model, identified)
    assert not errors and physical(target[last])
    np.testing.assert_allclose(pinocchio_body(text, "panda_joint7"), target[last], rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(pinocchio_body(text, "panda_joint4"), target[heavy], rtol=1e-12, atol=1e-15)
    assert any("panda_link7" in note and "so that the written body is the identified one" for note in notes)
    # before: the whole difference on panda_link7 needs a negative mass
    link7 = parse_urdf(URDF.read_text()).links["panda_link7"]
    assert link7 is not None and link7.mass + (target[last] - pi[last])[0] < 0
    # every link of the written URDF is physical, and the node's model of it is the identified one
    reread, _ = reload(text, None, None, TIP)
    np.testing.assert_allclose(
        standard_parameters(reread)[: 10 * model.nv], target[: 10 * model.nv], rtol=1e-12, atol=1e-15
    )


def test_a_body_that_is_not_physical_is_named_with_the_difference(panda) -> None:
    model, result = panda
    target = standard_parameters(model)
    target[body_columns(model, model.nv - 1).start] = -0.2  # a negative mass
    identified = replace(result, parameters=target, identified=("inertial", "friction"))
    _, _, errors = corrected_urdf(URDF.read_text(), model, identified)
    assert len(errors) == 1 and "body of link 'panda_link7': the identified body is not physical" in errors[0]
    assert "mass -0.2 kg" in errors[0] and "off by up to" in errors[0]
