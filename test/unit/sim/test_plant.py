"""rnea_ros.sim.plant: the seeded robot unlike its URDF, checked link by link against the URDF it
came from and, as a whole, through MuJoCo (an independent reader of the plant's URDF)."""

from __future__ import annotations

import numpy as np
import pytest

from rnea_ros.model.example_robots import example_urdf_path
from rnea_ros.model.urdf import parse_urdf
from rnea_ros.sim.mujoco_arm import MujocoArm
from rnea_ros.sim.plant import PAYLOAD_BOX, PAYLOAD_COM, PAYLOAD_MASS, box_inertia, make_plant

URDF = example_urdf_path("panda").read_text()
NOMINAL = parse_urdf(URDF)
ARM = [f"panda_joint{i}" for i in range(1, 8)]


@pytest.mark.parametrize("seed", range(5))
def test_every_link_is_scaled_within_the_spread_and_stays_physical(seed: int) -> None:
    plant = make_plant(URDF, seed)
    robot = parse_urdf(plant.urdf)
    assert set(plant.mass_factor) == {name for name, old in NOMINAL.links.items() if old is not None}
    for name, old in NOMINAL.links.items():
        if old is None:
            continue
        fm, fi = plant.mass_factor[name], plant.inertia_factor[name]
        assert 0.8 <= fm <= 1.2 and 0.8 <= fi <= 1.2
        new = robot.links[name]
        assert new is not None
        assert new.mass == pytest.approx(old.mass * fm, rel=1e-15)
        np.testing.assert_allclose(new.inertia, old.inertia * fi, rtol=1e-14, atol=1e-20)
        np.testing.assert_array_equal(new.com, old.com)
        assert new.defect == old.defect  # a positive scale keeps a physical inertia physical
    assert plant.joints == ARM
    joints = {j.name: j for j in robot.joints}
    for j, name in enumerate(ARM):
        assert joints[name].damping == plant.damping[j] and joints[name].friction == plant.coulomb[j]
    assert np.all((plant.damping >= 0.2) & (plant.damping <= 1.0))
    assert np.all((plant.coulomb >= 0.5) & (plant.coulomb <= 2.0))
    assert np.all((plant.armature >= 0.02) & (plant.armature <= 0.2))
    nominal = {j.name: j for j in NOMINAL.joints}
    for finger in ("panda_finger_joint1", "panda_finger_joint2"):  # untouched
        assert joints[finger].friction == nominal[finger].friction
        assert joints[finger].damping == nominal[finger].damping


def test_payload_and_seed_the_same_robot_with_or_without_it() -> None:
    bare, loaded = make_plant(URDF, 3), make_plant(URDF, 3, payload_link="panda_hand")
    assert bare.mass_factor == loaded.mass_factor and np.array_equal(bare.armature, loaded.armature)
    assert make_plant(URDF, 4).mass_factor != bare.mass_factor
    payload = parse_urdf(loaded.urdf).links["payload"]
    assert payload is not None and payload.mass == PAYLOAD_MASS
    np.testing.assert_array_equal(payload.com, PAYLOAD_COM)
    np.testing.assert_allclose(np.diag(payload.inertia), box_inertia(PAYLOAD_MASS, PAYLOAD_BOX))
    # MuJoCo reads the plant: its total mass is the scaled links plus the payload
    links = [(name, old) for name, old in NOMINAL.links.items() if old is not None]
    expected = sum(old.mass * loaded.mass_factor[name] for name, old in links)
    for plant, extra in ((bare, 0.0), (loaded, PAYLOAD_MASS)):
        arm = MujocoArm(plant.urdf)
        assert float(arm.model.body_mass.sum()) == pytest.approx(expected + extra, rel=1e-12)


def test_fix_fingers_and_unknown_payload_link() -> None:
    fixed = make_plant(URDF, 0, fix_fingers=True)
    assert MujocoArm(fixed.urdf).joint_names == tuple(ARM)
    with pytest.raises(ValueError, match="payload link 'flange' is not a link"):
        make_plant(URDF, 0, payload_link="flange")
