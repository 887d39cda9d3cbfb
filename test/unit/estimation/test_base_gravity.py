"""Effective gravity from an IMU (rnea_ros.estimation.base_gravity) against closed forms and MuJoCo's
own accelerometer, gyro and frame-orientation sensors on a free-flying base."""

from __future__ import annotations

import math

import mujoco
import numpy as np
import pytest

from rnea_ros.errors import ImuLinkError, RneaError
from rnea_ros.estimation.base_gravity import (
    BaseGravity,
    ImuMount,
    gravity_from_orientation,
    gravity_from_specific_force,
    imu_mount,
    low_pass_weight,
    quaternion_matrix,
)
from rnea_ros.model.robot_model import RobotModel

G = 9.81
IMU_XYZ, IMU_RPY = (0.2, -0.1, 0.05), (0.3, -0.5, 1.1)
INERTIA = '<inertia ixx=".1" iyy=".1" izz=".1" ixy="0" ixz="0" iyz="0"/>'
URDF = f"""<robot name="deck">
  <link name="base"><inertial><mass value="5"/>{INERTIA}</inertial></link>
  <link name="imu_link"/>
  <link name="arm"><inertial><origin xyz="0 0 0.3"/><mass value="2"/>{INERTIA}</inertial></link>
  <joint name="imu_mount" type="fixed"><parent link="base"/><child link="imu_link"/>
    <origin xyz="{" ".join(map(str, IMU_XYZ))}" rpy="{" ".join(map(str, IMU_RPY))}"/></joint>
  <joint name="shoulder" type="revolute"><parent link="base"/><child link="arm"/><axis xyz="0 1 0"/>
    <limit lower="-3" upper="3" effort="100" velocity="2"/></joint>
</robot>"""
MODEL = RobotModel.from_urdf(URDF)
MOUNT = imu_mount(MODEL, "imu_link")


def rot_x(a: float) -> np.ndarray:
    c, s = math.cos(a), math.sin(a)
    return np.array([[1, 0, 0], [0, c, -s], [0, s, c]])


def rot_y(a: float) -> np.ndarray:
    c, s = math.cos(a), math.sin(a)
    return np.array([[c, 0, s], [0, 1, 0], [-s, 0, c]])


def rot_z(a: float) -> np.ndarray:
    c, s = math.cos(a), math.sin(a)
    return np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]])


def quat_xyzw(rot: np.ndarray) -> np.ndarray:
    wxyz = np.zeros(4)
    mujoco.mju_mat2Quat(wxyz, rot.reshape(9))
    return np.array([*wxyz[1:], wxyz[0]])


def test_the_mount_is_the_urdf_pose_and_links_off_the_base_are_refused() -> None:
    roll, pitch, yaw = IMU_RPY
    assert np.allclose(MOUNT.rotation, rot_z(yaw) @ rot_y(pitch) @ rot_x(roll), atol=1e-12)
    assert np.allclose(MOUNT.position, IMU_XYZ, atol=1e-12)
    assert np.allclose(imu_mount(MODEL, "base").rotation, np.eye(3))
    with pytest.raises(ImuLinkError, match="'arm' moves with joint 'shoulder'"):
        imu_mount(MODEL, "arm")
    with pytest.raises(ImuLinkError, match="'imu' is not a link .*base, imu_link"):
        imu_mount(MODEL, "imu")


def test_quaternion_matrix_is_the_axis_angle_rotation() -> None:
    a = 0.7
    assert np.allclose(quaternion_matrix(math.sin(a / 2), 0, 0, math.cos(a / 2)), rot_x(a), atol=1e-15)
    assert np.allclose(quaternion_matrix(0, 2 * math.sin(a / 2), 0, 2 * math.cos(a / 2)), rot_y(a))  # scaled
    with pytest.raises(RneaError, match="not a rotation"):
        quaternion_matrix(0, 0, 0, 0)


def test_orientation_gives_the_tilted_gravity_whatever_the_mount() -> None:
    roll, pitch = math.radians(5), math.radians(-3)
    r_world_root = rot_y(pitch) @ rot_x(roll)
    expected = r_world_root.T @ np.array([0.0, 0.0, -G])
    # closed form of a roll then a pitch: (g sinθ, −g sinφ cosθ, −g cosφ cosθ)
    sr, cr, sp, cp = math.sin(roll), math.cos(roll), math.sin(pitch), math.cos(pitch)
    closed = G * np.array([sp, -sr * cp, -cr * cp])
    assert np.allclose(expected, closed, atol=1e-12)
    for mount in (MOUNT, imu_mount(MODEL, "base")):
        q_world_imu = quat_xyzw(r_world_root @ mount.rotation)
        assert np.allclose(gravity_from_orientation(mount, q_world_imu, G), closed, atol=1e-12)


def test_specific_force_sign_and_the_centripetal_lever_arm() -> None:
    level = ImuMount("base", np.eye(3), np.zeros(3))
    assert np.allclose(gravity_from_specific_force(level, [0, 0, G]), [0, 0, -G])  # at rest: f points up
    # heave upwards at 2 m/s²: the accelerometer reads 11.81, the arm feels 11.81 down
    assert np.allclose(gravity_from_specific_force(level, [0, 0, G + 2.0]), [0, 0, -G - 2.0])
    # a base spinning at ω about root z, the IMU at r off the axis: f = R_imu_rootᵀ (ω×(ω×r) − g);
    # the root origin (on the axis) has no acceleration, so g_eff = g exactly
    w_root = np.array([0.0, 0.0, 1.5])
    r = MOUNT.position
    a_imu = np.cross(w_root, np.cross(w_root, r))
    f_imu = MOUNT.rotation.T @ (a_imu - np.array([0, 0, -G]))
    w_imu = MOUNT.rotation.T @ w_root
    assert np.allclose(gravity_from_specific_force(MOUNT, f_imu, w_imu), [0, 0, -G], atol=1e-12)
    assert not np.allclose(gravity_from_specific_force(MOUNT, f_imu), [0, 0, -G], atol=0.1)


def mujoco_base() -> tuple[mujoco.MjModel, mujoco.MjData]:
    """The URDF's base as a free body in MuJoCo with the IMU site at the URDF's imu_link pose."""
    wxyz = np.zeros(4)
    mujoco.mju_mat2Quat(wxyz, MOUNT.rotation.reshape(9))
    xml = f"""<mujoco><option gravity="0 0 -{G}" timestep="0.001"/><worldbody>
      <body name="base" pos="0 0 1"><freejoint/><geom type="box" size=".3 .2 .1" mass="5"/>
        <site name="imu" pos="{" ".join(map(str, MOUNT.position))}" quat="{" ".join(map(str, wxyz))}"/>
      </body></worldbody>
      <sensor><accelerometer site="imu"/><gyro site="imu"/><framequat objtype="site" objname="imu"/></sensor>
    </mujoco>"""
    m = mujoco.MjModel.from_xml_string(xml)
    return m, mujoco.MjData(m)


def truth(m: mujoco.MjModel, d: mujoco.MjData) -> tuple[np.ndarray, np.ndarray]:
    """(g − a of the base origin in base axes, α in imu axes) from MuJoCo's body acceleration."""
    acc = np.zeros(6)  # [α, a − g] of the body frame origin, world axes
    mujoco.mj_objectAcceleration(m, d, mujoco.mjtObj.mjOBJ_XBODY, 1, acc, 0)
    r_world_base = d.xmat[1].reshape(3, 3)
    r_world_imu = d.site_xmat[0].reshape(3, 3)
    return -r_world_base.T @ acc[3:], r_world_imu.T @ acc[:3]


@pytest.mark.parametrize("seed", range(5))
def test_specific_force_and_orientation_match_mujoco_on_a_tumbling_base(seed: int) -> None:
    m, d = mujoco_base()
    rng = np.random.default_rng(seed)
    d.qpos[3:7] = rng.normal(size=4)
    d.qpos[3:7] /= np.linalg.norm(d.qpos[3:7])
    d.qvel[:] = rng.normal(size=6) * 2
    d.xfrc_applied[1] = rng.normal(size=6) * 30
    mujoco.mj_forward(m, d)
    f, w, wxyz = d.sensordata[0:3], d.sensordata[3:6], d.sensordata[6:10]
    expected, alpha = truth(m, d)
    got = gravity_from_specific_force(MOUNT, f, w, alpha)
    assert np.allclose(got, expected, atol=1e-9 * (1 + np.abs(expected).max()))
    # gravity alone from the orientation
    r_world_base = d.xmat[1].reshape(3, 3)
    orientation = np.array([*wxyz[1:], wxyz[0]])
    tilted = r_world_base.T @ [0, 0, -G]
    assert np.allclose(gravity_from_orientation(MOUNT, orientation, G), tilted, atol=1e-9)


def test_filtered_estimate_tracks_mujoco_on_a_rocking_base_with_alpha_from_the_gyro() -> None:
    """A base driven through a smooth roll and heave: the unfiltered estimate (α from the
    differenced gyro) matches the truth to the difference's error; the filtered one lags as a
    first-order low-pass does."""
    m, d = mujoco_base()
    m.opt.gravity[:] = 0.0
    raw, filtered = BaseGravity(MOUNT, "specific_force", 0.0), BaseGravity(MOUNT, "specific_force", 5.0)
    errors, lag_errors = [], []
    for k in range(3000):
        t = k * m.opt.timestep
        # prescribed motion: heave 0.5 sin(2π 0.3 t) m, roll 0.2 sin(2π 0.2 t) rad, about world x
        wz, wr = 2 * math.pi * 0.3, 2 * math.pi * 0.2
        roll, droll = 0.2 * math.sin(wr * t), 0.2 * wr * math.cos(wr * t)
        d.qpos[:3] = [0, 0, 1 + 0.5 * math.sin(wz * t)]
        d.qpos[3:7] = [math.cos(roll / 2), math.sin(roll / 2), 0, 0]
        d.qvel[:] = [0, 0, 0.5 * wz * math.cos(wz * t), droll, 0, 0]
        d.qacc[:] = [0, 0, -0.5 * wz**2 * math.sin(wz * t), -0.2 * wr**2 * math.sin(wr * t), 0, 0]
        mujoco.mj_inverse(m, d)  # sensors and accelerations of the prescribed state
        mujoco.mj_rnePostConstraint(m, d)
        mujoco.mj_sensorAcc(m, d)
        f, w = d.sensordata[0:3].copy(), d.sensordata[3:6].copy()
        f_true = f + d.site_xmat[0].reshape(3, 3).T @ [0, 0, G]  # a − g: gravity by hand (off in MuJoCo)
        expected, _ = truth(m, d)
        expected = expected + d.xmat[1].reshape(3, 3).T @ [0, 0, -G]
        g_raw = raw.update(t, specific_force=f_true, angular_velocity=w)
        g_lp = filtered.update(t, specific_force=f_true, angular_velocity=w)
        if t > 0.5:
            errors.append(np.abs(g_raw - expected).max())
            lag_errors.append(np.abs(g_lp - expected).max())
    # α's backward difference is half a step late: its error is α̇ Δt/2 |r| ≈ 1e-4 m/s²
    assert max(errors) < 1e-3
    # a 5 Hz low-pass on ≤ 0.3 Hz motion: lag ≈ 0.3/5 rad of ≈ 1.8 m/s² of heave acceleration
    assert 0.02 < max(lag_errors) < 0.2


def test_low_pass_step_response_is_the_exact_exponential() -> None:
    level = ImuMount("base", np.eye(3), np.zeros(3))
    est = BaseGravity(level, "specific_force", cutoff=2.0)
    est.update(0.0, specific_force=[0, 0, G])
    dt = 0.004
    for k in range(1, 200):
        g = est.update(k * dt, specific_force=[0, 0, G + 1.0])
        assert g[2] == pytest.approx(-G - (1 - math.exp(-2 * math.pi * 2.0 * k * dt)), abs=1e-12)
    assert low_pass_weight(0.0, dt) == 1.0
    # a repeated stamp is ignored; a gap over a second restarts at the raw value
    assert est.update(199 * dt, specific_force=[0, 0, 100.0])[2] == pytest.approx(g[2])
    assert est.update(199 * dt + 1.5, specific_force=[0, 0, 3.0])[2] == pytest.approx(-3.0)


def test_missing_or_bad_input_is_refused_and_keeps_the_state() -> None:
    est = BaseGravity(MOUNT, "specific_force", 1.0)
    with pytest.raises(RneaError, match="specific force"):
        est.update(0.0, orientation=[0, 0, 0, 1])
    with pytest.raises(RneaError, match="NaN"):
        est.update(0.0, specific_force=[0, math.nan, G])
    assert est.gravity is None
    with pytest.raises(RneaError, match="gravity source"):
        BaseGravity(MOUNT, "gps")
    with pytest.raises(RneaError, match="not a rotation"):
        BaseGravity(MOUNT, "orientation").update(0.0, orientation=[0, 0, 0, 0])


def test_one_implausible_sample_never_reaches_the_filter() -> None:
    """100 Hz samples of a constant specific force through the 5 Hz low-pass: the filtered
    gravity is that force's, exactly; a sample beyond 16 g (1e3 or 1e308 m/s²), an angular
    velocity beyond 2000 °/s or one whose lever-arm terms give an effective gravity beyond 16 g
    is refused naming the value, and the next good sample gives the same gravity as if it had
    never come (a 1e308 sample once held the filter off for 23 s)."""
    mount = ImuMount("imu", np.eye(3), np.array([0.5, 0.0, 0.0]))
    est = BaseGravity(mount, "specific_force", 5.0)
    f, omega = np.array([0.3, -0.2, G]), np.array([0.0, 0.0, 0.2])
    want = gravity_from_specific_force(mount, f, omega)  # constant ω: no α, the centripetal term
    t = 0.0
    for _ in range(10):
        t += 0.01
        assert np.array_equal(est.update(t, specific_force=f, angular_velocity=omega), want)
    force = "specific force .* beyond the plausible 157"
    rate = "angular velocity .* beyond the plausible 34.9"
    bad = [
        ({"specific_force": [0.0, 0.0, 1e308], "angular_velocity": omega}, force),
        ({"specific_force": [1e3, 0.0, G], "angular_velocity": omega}, force),
        ({"specific_force": f, "angular_velocity": [0.0, 0.0, 1e308]}, rate),
        # 30 rad/s is plausible, but from 0.2 rad/s within 10 ms: α × r = 1490 m/s² at 0.5 m
        ({"specific_force": f, "angular_velocity": [0.0, 0.0, 30.0]}, "effective gravity of the sample"),
    ]  # fmt: skip
    for sample, said in bad:
        t += 0.01
        with pytest.raises(RneaError, match=said):
            est.update(t, **sample)
        t += 0.01
        assert np.array_equal(est.update(t, specific_force=f, angular_velocity=omega), want)


def test_orientations_must_be_unit_quaternions() -> None:
    est = BaseGravity(MOUNT, "orientation")
    level = est.update(0.0, orientation=[0, 0, 0, 1]).copy()
    for quat in ([0, 1e-8, 0, 0], [0, 0, 0, 2], [0, 0, 0, 1.0011], [0, 0, 0, 1e308]):
        with pytest.raises(RneaError, match="not 1 within 0.001"):
            est.update(1.0, orientation=quat)
        assert np.array_equal(est.gravity, level)  # kept
    assert np.allclose(
        est.update(2.0, orientation=[0, 0, 0, 1.0009]), level, atol=1e-15
    )  # within: normalised
