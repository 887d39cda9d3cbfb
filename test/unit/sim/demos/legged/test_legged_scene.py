"""The MuJoCo legged scene (rnea_ros.sim.demos.legged.scene) against Pinocchio's free-flyer model of the
same URDF: its q and v in Pinocchio's layout (quaternion x, y, z, w; base twist in the base frame)
give Pinocchio the feet positions and velocities MuJoCo has, for solo12 and TALOS (whose joint
orders differ between the two: matched by name); reset puts the lowest foot sphere on the floor;
one sphere per point foot, four per sole, a motor per joint."""

from __future__ import annotations

import mujoco
import numpy as np
import pinocchio as pin
import pytest

from rnea_ros.sim.demos.legged.demo import SOLO12, TALOS, Robot
from rnea_ros.sim.demos.legged.scene import LeggedScene


@pytest.mark.parametrize("robot", [SOLO12, TALOS], ids=lambda r: r.name)
def test_state_layout_gives_pinocchio_the_feet_mujoco_has(robot: Robot) -> None:
    urdf = robot.urdf()
    scene = LeggedScene(urdf, robot.feet)
    model = pin.buildModelFromXML(urdf, pin.JointModelFreeFlyer())
    data = model.createData()
    pin_names = [model.names[j] for j in range(2, model.njoints)]
    order = np.array([scene.joint_names.index(j) for j in pin_names])
    rng = np.random.default_rng(3)
    m, d = scene.model, scene.data
    for _ in range(3):
        d.qpos[:3] = rng.normal(size=3)
        quat = rng.normal(size=4)
        d.qpos[3:7] = quat / np.linalg.norm(quat)
        d.qpos[7:] = rng.uniform(-0.5, 0.5, scene.n)
        d.qvel[:] = rng.normal(size=scene.nv)
        mujoco.mj_forward(m, d)
        q, v = scene.q, scene.v
        assert q.shape == (scene.nq,) and v.shape == (scene.nv,)
        q_pin = np.concatenate([q[:7], q[7:][order]])
        v_pin = np.concatenate([v[:6], v[6:][order]])
        pin.forwardKinematics(model, data, q_pin, v_pin)
        pin.updateFramePlacements(model, data)
        res = np.zeros(6)
        for foot in robot.feet:
            frame = model.getFrameId(foot.link)
            body = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_BODY, foot.link)
            np.testing.assert_allclose(data.oMf[frame].translation, d.xpos[body], atol=1e-12)
            np.testing.assert_allclose(data.oMf[frame].rotation, d.xmat[body].reshape(3, 3), atol=1e-12)
            twist = pin.getFrameVelocity(model, data, frame, pin.LOCAL_WORLD_ALIGNED)
            # MuJoCo: [ω; v] of the body frame origin (XBODY), world axes
            mujoco.mj_objectVelocity(m, d, mujoco.mjtObj.mjOBJ_XBODY, body, res, 0)
            np.testing.assert_allclose(twist.linear, res[3:], atol=1e-10)
            np.testing.assert_allclose(twist.angular, res[:3], atol=1e-10)
        np.testing.assert_allclose(scene.base_rotation, data.oMi[1].rotation, atol=1e-12)


@pytest.mark.parametrize("robot", [SOLO12, TALOS], ids=lambda r: r.name)
def test_reset_puts_the_lowest_foot_sphere_on_the_floor(robot: Robot) -> None:
    scene = LeggedScene(robot.urdf(), robot.feet, radius=0.01)
    joints = np.array([robot.posture.get(j, 0.0) for j in scene.joint_names])
    q = scene.reset(joints)
    d = scene.data
    assert np.min(d.geom_xpos[scene.foot_geoms, 2]) - 0.01 == pytest.approx(0.0, abs=1e-12)
    np.testing.assert_array_equal(q[3:7], [0.0, 0.0, 0.0, 1.0])
    np.testing.assert_array_equal(q[7:], joints)
    per_foot = 1 if robot.feet[0].half_extents is None else 4
    assert len(scene.foot_geoms) == per_foot * len(robot.feet)
    assert scene.model.nu == scene.n == len(scene.joint_names)
