"""Every URDF of example-robot-data that Pinocchio loads (as a fixed base) loads here and agrees
with Pinocchio to 1e-9 relative on τ (random states, gravity) and M; one Pinocchio refuses is
refused here too (URDFError).

The files are found by walking the package, so a new robot in a new release is tested too.
"""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest

from rnea_ros import RobotModel, URDFError, mass_matrix, rnea
from rnea_ros.model.example_robots import example_robots_dir

ROOT = example_robots_dir()
FILES = sorted(p for p in ROOT.rglob("*.urdf"))
RTOL = 1e-9


def _pinocchio(path) -> pin.Model | None:
    try:
        return pin.buildModelFromUrdf(str(path))
    except Exception:  # noqa: BLE001 - what Pinocchio refuses is out of scope
        return None


def test_the_walk_finds_the_whole_package() -> None:
    assert len(FILES) >= 60
    loaded = [p for p in FILES if _pinocchio(p) is not None]
    assert len(loaded) >= 60


def _to_pin_q(pm: pin.Model, joints: list, q: np.ndarray) -> np.ndarray:
    """Our q as Pinocchio's configuration (continuous joints are (cos, sin) there)."""
    out = np.zeros(pm.nq)
    for jm, value in zip(joints, q, strict=True):
        if jm.nq == 2:
            out[jm.idx_q], out[jm.idx_q + 1] = np.cos(value), np.sin(value)
        else:
            out[jm.idx_q] = value
    return out


@pytest.mark.parametrize("path", FILES, ids=[str(p.relative_to(ROOT)) for p in FILES])
def test_every_robot_pinocchio_loads_loads_and_agrees(path) -> None:
    pm = _pinocchio(path)
    if pm is None:  # ur3.urdf (no robot name, no <link>): refused here too, with a URDFError
        with pytest.raises(URDFError, match="link"):
            RobotModel.from_urdf(path.read_text())
        return
    model = RobotModel.from_urdf(path.read_text())
    assert model.nv == pm.nv
    if model.nv == 0:
        return
    joints = [pm.joints[pm.getJointId(j)] for j in model.joint_names]
    idx = [jm.idx_v for jm in joints]
    data = pm.createData()
    rng = np.random.default_rng(len(model.joint_names))
    for _ in range(3):
        q, qd, qdd = rng.uniform(-2, 2, model.nv), rng.normal(0, 1, model.nv), rng.normal(0, 2, model.nv)
        gravity = rng.normal(0, 6, 3)
        pm.gravity.linear = gravity
        v = np.zeros(pm.nv)
        a = np.zeros(pm.nv)
        v[idx], a[idx] = qd, qdd
        pq = _to_pin_q(pm, joints, q)
        expected = pin.rnea(pm, data, pq, v, a)[idx]
        tau = rnea(model, q, qd, qdd, gravity=gravity)
        assert np.max(np.abs(tau - expected)) <= RTOL * max(1.0, np.max(np.abs(expected)))
        m_pin = pin.crba(pm, data, pq)
        m_pin = (np.triu(m_pin) + np.triu(m_pin, 1).T)[np.ix_(idx, idx)]
        assert np.max(np.abs(mass_matrix(model, q) - m_pin)) <= RTOL * max(1.0, np.max(np.abs(m_pin)))


def test_a_urdf_is_found_by_path_name_or_stem(tmp_path) -> None:
    """find_urdf, as the demos' --urdf takes it: every file whose stem is unique in the package
    by that stem (`xarm7`), EXAMPLE_ROBOTS' names, paths below robots/, and files that exist."""
    from rnea_ros.model.example_robots import EXAMPLE_ROBOTS, example_urdf_path, find_urdf

    stems = [p.stem for p in FILES]
    unique = [p for p in FILES if stems.count(p.stem) == 1]
    assert len(unique) >= 40
    for path in unique:
        assert find_urdf(path.stem) == path and find_urdf(path.stem + ".urdf") == path
        assert find_urdf(str(path.relative_to(ROOT))) == path
    for name in EXAMPLE_ROBOTS:
        assert find_urdf(name) == example_urdf_path(name)
    own = tmp_path / "xarm7"  # a file of that name wins over the package's
    own.write_text("<robot/>")
    assert find_urdf(str(own)) == own
    with pytest.raises(FileNotFoundError, match=r"no file 'xarm' .* under .*robots \(close names: xarm7"):
        find_urdf("xarm")
