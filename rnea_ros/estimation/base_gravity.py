"""Gravity in the root frame of a fixed-base arm whose base moves or tilts, from an IMU (no ROS).

The dynamics of an arm on a base that accelerates without rotating is the fixed-base dynamics
with gravity g replaced by the effective gravity g_eff = g − a_root (a_root: the linear
acceleration of the root origin in an inertial frame). Two sources:

* orientation (gravity only): the IMU's orientation q_world_imu (a unit quaternion (x, y, z, w)
  of the IMU frame in a world frame whose z axis points up, as sensor_msgs/Imu gives it) and the
  fixed rotation R_root_imu of the IMU in the root frame give
      g_root = R_root_imu · R_world_imuᵀ · (0, 0, −|g|);
  the base's linear acceleration is not seen.
* specific force (gravity plus the base's acceleration): an accelerometer measures the specific
  force f = R_imu_world · (a_imu − g), the reaction of what holds it (at rest on a level base
  f = (0, 0, +9.81) in a z-up frame, not −9.81). Hence, for the point where the IMU sits,
  g − a_imu = −f, and for the root origin, r the IMU's origin in the root frame (root axes):
      g_eff,root = R_root_imu · (−f) + α × r + ω × (ω × r),
  with ω (rad/s) and α (rad/s²) the base's angular velocity and acceleration in root axes
  (a_imu = a_root + α × r + ω × (ω × r) on a rigid base). ω comes from the gyro when given; α is
  the backward difference of successive ω. Without ω both lever-arm terms are zero. The result is
  low-passed, first order, cut-off `cutoff` Hz (exact discretisation at the samples' spacing:
  y += (1 − exp(−2π f_c Δt)) (x − y)); 0: unfiltered.

Modelled: the root's linear acceleration (heave, surge, sway, and the part that the base's
rotation gives the root origin, through the lever arm of the IMU) and the base's tilt. Neglected:
the base's rotation acting on the arm's links beyond the root origin — the centrifugal
ω × (ω × p) and Euler α × p accelerations of a link at p, and the Coriolis 2 ω × ṗ of its motion
relative to the base — since the fixed-base RNEA has one uniform gravity field and a root at rest
in rotation. On a ship deck (ω ≈ 0.1 rad/s, α ≈ 0.1 rad/s²) they are ≈ 0.1 m/s² at 1 m, about 1 %
of g.

Plausible samples only: a sample is checked before it reaches the estimate and the filter, and
refused (RneaError saying which value is beyond which bound; the state unchanged) when an
orientation is not a unit quaternion within QUATERNION_TOLERANCE, a specific force is beyond
MAX_SPECIFIC_FORCE (±16 g, the widest range of common MEMS accelerometers: a larger reading is a
corrupt or saturated sample), an angular velocity beyond MAX_ANGULAR_VELOCITY (±2000 °/s, the
widest range of common MEMS gyroscopes), or the effective gravity the sample gives (the lever-arm
terms included, with α from two samples) beyond MAX_SPECIFIC_FORCE. One sample can thus move the
filtered gravity by at most its weight × 2 × MAX_SPECIFIC_FORCE, which the filter forgets at its
own rate (a 1e308 m/s² sample once held the low-passed gravity beyond the effort limits for 23 s).

The IMU's frame is a link rigidly fixed to the root (the root itself, or connected to it by fixed
joints only: its pose in the root frame is constant). Frames: root (the model's root link), imu
(that link), world (z up, the orientation's reference). Units: m, s, rad, m/s².
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from rnea_ros.errors import ImuLinkError, RneaError
from rnea_ros.model.robot_model import RobotModel

STANDARD_GRAVITY = 9.81  # m/s², |g| of the orientation source unless given
SOURCES = ("orientation", "specific_force")
MAX_GAP = 1.0  # s: samples further apart (either way) restart the filter and ω's difference
MAX_SPECIFIC_FORCE = 16.0 * STANDARD_GRAVITY  # m/s²: |f| and |g_eff| of a plausible sample
MAX_ANGULAR_VELOCITY = math.radians(2000.0)  # rad/s: |ω| of a plausible sample
QUATERNION_TOLERANCE = 1e-3  # |‖q‖ − 1| of a plausible orientation


@dataclass(frozen=True)
class ImuMount:
    """Where an IMU sits on the base: `link`, its rotation R_root_imu (3×3) and origin (m), root frame."""

    link: str
    rotation: np.ndarray
    position: np.ndarray


def imu_mount(model: RobotModel, link: str) -> ImuMount:
    """The fixed pose of `link` in the root frame; ImuLinkError naming it when it is not a link
    of the model or moves with a joint."""
    frame = model.link_frames.get(link)
    if frame is None:
        fixed = ", ".join(n for n, f in model.link_frames.items() if f.body < 0)
        raise ImuLinkError(
            f"IMU frame '{link}' is not a link of the model '{model.name}' (links fixed to the root "
            f"'{model.root_link}': {fixed})"
        )
    if frame.body >= 0:
        joint = model.joint_names[frame.body]
        raise ImuLinkError(
            f"IMU frame '{link}' moves with joint '{joint}': the IMU must be on a link fixed to the "
            f"root '{model.root_link}' (the base)"
        )
    return ImuMount(link, np.array(frame.rotation, dtype=float), np.array(frame.translation, dtype=float))


def quaternion_matrix(x: float, y: float, z: float, w: float) -> np.ndarray:
    """The rotation matrix of a quaternion (x, y, z, w), normalised; RneaError when it is zero or
    not finite."""
    norm = math.sqrt(x * x + y * y + z * z + w * w)
    if not (math.isfinite(norm) and norm > 1e-9):
        raise RneaError(f"orientation quaternion ({x}, {y}, {z}, {w}) is not a rotation (norm {norm:g})")
    x, y, z, w = x / norm, y / norm, z / norm, w / norm
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
            [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
            [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
        ]
    )


def unit_quaternion(x: float, y: float, z: float, w: float, what: str = "orientation") -> tuple[float, ...]:
    """(x, y, z, w) normalised; RneaError naming `what` and the norm when it is not finite or its
    norm is not 1 within QUATERNION_TOLERANCE (a quaternion of norm 1e-8 or 2 is no orientation:
    normalising it would take noise or a wrong field for a rotation)."""
    norm = math.hypot(x, y, z, w)
    if not (math.isfinite(norm) and abs(norm - 1.0) <= QUATERNION_TOLERANCE):
        raise RneaError(
            f"{what} ({x:g}, {y:g}, {z:g}, {w:g}) has norm {norm:g}, not 1 within "
            f"{QUATERNION_TOLERANCE:g}: not a rotation"
        )
    return x / norm, y / norm, z / norm, w / norm


def check_vector(values: npt.ArrayLike, bound: float, what: str, unit: str) -> np.ndarray:
    """`values` (3) as an array; RneaError naming `what` when one is not finite or its norm is
    beyond `bound`."""
    v = np.asarray(values, dtype=float).reshape(3)
    norm = math.hypot(*v.tolist())  # no overflow for finite values
    if not norm <= bound:
        shown = ", ".join(f"{x:g}" for x in v.tolist())
        if not math.isfinite(norm):
            raise RneaError(f"{what} ({shown}) {unit} is NaN or Inf")
        raise RneaError(f"{what} ({shown}) {unit} has norm {norm:g}, beyond the plausible {bound:.4g} {unit}")
    return v


def gravity_from_orientation(
    mount: ImuMount, orientation: npt.ArrayLike, magnitude: float = STANDARD_GRAVITY
) -> np.ndarray:
    """g in the root frame (m/s²) from the IMU's orientation in the world, (x, y, z, w):
    R_root_imu · R_world_imuᵀ · (0, 0, −magnitude)."""
    x, y, z, w = (float(v) for v in np.asarray(orientation, dtype=float).reshape(4))
    r_world_imu = quaternion_matrix(x, y, z, w)
    # R_world_imuᵀ (0, 0, −m) = −m × the world z axis in imu axes (third row of R_world_imu)
    g_imu = -magnitude * r_world_imu[2]
    return mount.rotation @ g_imu


def _cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.array([a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]])


def gravity_from_specific_force(
    mount: ImuMount,
    specific_force: npt.ArrayLike,
    angular_velocity: npt.ArrayLike | None = None,
    angular_acceleration: npt.ArrayLike | None = None,
) -> np.ndarray:
    """g_eff = g − a_root in the root frame (m/s²) from the accelerometer's specific force f (m/s²,
    imu axes: +9.81 up at rest) and the base's angular velocity ω (rad/s) and acceleration α
    (rad/s²), imu axes (None: zero): R_root_imu (−f) + α × r + ω × (ω × r), r the IMU's origin
    in the root frame (module docstring)."""
    rot = mount.rotation
    g = rot @ -np.asarray(specific_force, dtype=float).reshape(3)
    r = mount.position
    if angular_velocity is not None:
        w = rot @ np.asarray(angular_velocity, dtype=float).reshape(3)
        g = g + _cross(w, _cross(w, r))
    if angular_acceleration is not None:
        g = g + _cross(rot @ np.asarray(angular_acceleration, dtype=float).reshape(3), r)
    return g


def low_pass_weight(cutoff: float, dt: float) -> float:
    """The weight 1 − exp(−2π f_c Δt) of a new sample in the first-order low-pass (1: unfiltered)."""
    if cutoff <= 0.0:
        return 1.0
    return 1.0 - math.exp(-2.0 * math.pi * cutoff * max(dt, 0.0))


class BaseGravity:
    """Effective gravity in the root frame from successive IMU samples (module docstring).

    source: "orientation" or "specific_force"; cutoff: Hz of the low-pass of the specific-force
    source (0: unfiltered; the orientation source is not filtered: orientation estimates are
    filtered already); magnitude: |g| for the orientation source, m/s². `gravity` is the latest
    value (None before the first sample); `t` its time, s."""

    def __init__(
        self, mount: ImuMount, source: str, cutoff: float = 0.0, magnitude: float = STANDARD_GRAVITY
    ) -> None:
        if source not in SOURCES:
            raise RneaError(f"gravity source must be one of {SOURCES}, got '{source}'")
        if not (math.isfinite(cutoff) and cutoff >= 0.0):
            raise RneaError(f"low-pass cut-off must be >= 0 Hz, got {cutoff}")
        self.mount, self.source, self.cutoff, self.magnitude = mount, source, float(cutoff), float(magnitude)
        self.gravity: np.ndarray | None = None
        self.t = math.nan
        self._omega: np.ndarray | None = None  # last ω (imu axes), for α

    def reset(self) -> None:
        """Forget the filter state (the next sample starts it again)."""
        self.gravity, self.t, self._omega = None, math.nan, None

    def update(
        self,
        t: float,
        orientation: npt.ArrayLike | None = None,
        specific_force: npt.ArrayLike | None = None,
        angular_velocity: npt.ArrayLike | None = None,
    ) -> np.ndarray:
        """The gravity after a sample at time t (s): orientation (x, y, z, w) for the orientation
        source, specific force (m/s²) and optionally ω (rad/s), imu axes, for the other; RneaError
        when the source's input is missing, not finite or not plausible (module docstring; the
        state is then unchanged). A sample not newer than the last (by at most MAX_GAP) is
        ignored."""
        if self.source == "orientation":
            if orientation is None:
                raise RneaError("the orientation source needs an orientation")
            qx, qy, qz, qw = (float(v) for v in np.asarray(orientation, dtype=float).reshape(4))
            quat = unit_quaternion(qx, qy, qz, qw)
            self.gravity, self.t = gravity_from_orientation(self.mount, quat, self.magnitude), t
            return self.gravity
        if specific_force is None:
            raise RneaError("the specific-force source needs the accelerometer's specific force")
        f = check_vector(specific_force, MAX_SPECIFIC_FORCE, "specific force", "m/s²")
        w = None
        if angular_velocity is not None:
            w = check_vector(angular_velocity, MAX_ANGULAR_VELOCITY, "angular velocity", "rad/s")
        dt = t - self.t
        restart = self.gravity is None or not abs(dt) <= MAX_GAP  # also the first (NaN)
        if not restart and dt <= 0.0 and self.gravity is not None:
            return self.gravity  # a repeated or reordered sample: ignored
        alpha = None
        if w is not None and self._omega is not None and not restart:
            alpha = (w - self._omega) / dt
        raw = gravity_from_specific_force(self.mount, f, w, alpha)
        check_vector(raw, MAX_SPECIFIC_FORCE, "effective gravity of the sample (lever arm included)", "m/s²")
        self._omega = w
        if restart or self.gravity is None:
            self.gravity = raw
        else:
            self.gravity = self.gravity + low_pass_weight(self.cutoff, dt) * (raw - self.gravity)
        self.t = t
        return self.gravity


__all__ = [
    "MAX_ANGULAR_VELOCITY",
    "MAX_SPECIFIC_FORCE",
    "QUATERNION_TOLERANCE",
    "SOURCES",
    "STANDARD_GRAVITY",
    "BaseGravity",
    "ImuMount",
    "gravity_from_orientation",
    "gravity_from_specific_force",
    "imu_mount",
    "low_pass_weight",
    "quaternion_matrix",
    "unit_quaternion",
    "check_vector",
]
