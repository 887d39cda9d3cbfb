"""What a real recording needs before it is fitted: a time window, the efforts in joint torque,
which velocity to trust, quantised efforts, and which chain of the URDF the bag moves.

- `window`: the messages between two times (s since the first message).
- `effort_factors`: per joint, the factor that turns a recorded effort into joint torque, from the
  inverse_dynamics node's own `effort_unit` and `gearing.ratio` / `gearing.torque_constant`
  parameters (a parameter file), by `algorithms.gearing.effort_unit_factors`: current × G K_t,
  motor torque × G. A negative ratio or constant (a drive that counts its current the other way
  round, as TIAGo's arm_3/arm_4 and wrist constants are published) flips the sign here; the node
  itself bounds both to ≥ 0.
- `velocity_lag`: per joint, by how many samples the recorded velocity lags the derivative of
  the recorded positions (the peak of their cross-correlation). A driver that logs a filtered
  velocity (TIAGo: v[n] = 0.95 v[n-1] + 0.05 dq/dt, about 0.2 s) puts the velocity columns of the
  regressor behind the efforts; the command then takes velocities from the positions.
- `quantised`: joints whose efforts take few distinct values (a coarse current reading: TIAGo's
  wrist efforts are exactly 0 on 88-90 % of the samples).
- `chain_tip`: the link whose root→tip chain moves exactly the joints a bag has (the hint
  when the URDF has joints the bag lacks: wheels, head, fingers).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from rnea_ros.algorithms.gearing import EFFORT_UNITS, effort_unit_factors
from rnea_ros.errors import RneaError
from rnea_ros.identification.bag import JointStates
from rnea_ros.model.urdf import parse_urdf

LAG_MAX_S = 1.0  # longest velocity lag looked for, s
LAG_LIMIT = 1  # samples: a longer lag makes `--velocity auto` differentiate the positions
LAG_MIN_SPEED = 0.05  # rad/s (m/s): joints whose position derivative has a lower RMS are not checked
QUANTISED_DISTINCT = 64  # an effort with at most this many distinct values (but not constant) ...
QUANTISED_SHARE = 0.5  # ... or whose most frequent value holds this share of the samples is quantised


def window(states: JointStates, t0: float, t1: float) -> JointStates:
    """The messages with t0 ≤ t ≤ t1 (s since the first message), times unchanged; RneaError when
    the window is empty or reversed."""
    if not (np.isfinite(t0) and np.isfinite(t1) and t0 < t1):
        raise RneaError(f"--window {t0:g} {t1:g}: needs T0 < T1 (s since the first message)")
    keep = (states.t >= t0) & (states.t <= t1)
    if keep.sum() < 2:
        raise RneaError(
            f"--window {t0:g} {t1:g} holds {int(keep.sum())} messages (the recording spans "
            f"0..{states.t[-1]:.6g} s since its first message)"
        )

    def cut(a: np.ndarray | None) -> np.ndarray | None:
        return None if a is None else a[keep]

    return replace(
        states,
        t=states.t[keep],
        position=states.position[keep],
        velocity=cut(states.velocity),
        effort=cut(states.effort),
    )


@dataclass(frozen=True)
class EffortUnits:
    """Per model joint: the unit of its recorded effort and the factor to joint torque."""

    units: tuple[str, ...]
    to_joint: np.ndarray  # joint torque = recorded effort × to_joint
    reversed: tuple[str, ...]  # joints with a negative ratio or torque constant (sign flipped)

    def text(self, names: Sequence[str]) -> str:
        return ", ".join(
            f"{n}: {u} × {f:.6g}"
            for n, u, f in zip(names, self.units, self.to_joint, strict=True)
            if u != "joint_torque"
        )


def effort_factors(path: Path, joint_names: Sequence[str]) -> EffortUnits:
    """The recorded efforts' units of a node parameter file (`effort_unit`, `gearing.ratio`,
    `gearing.torque_constant`, one value or one per joint of its `joints`; nested `gearing:` keys
    or dotted ones), mapped to `joint_names` (joints it does not list: joint torque)."""
    import yaml

    try:
        doc = yaml.safe_load(Path(path).read_text())
        params = next(v["ros__parameters"] for v in doc.values() if "ros__parameters" in v)
    except (OSError, yaml.YAMLError, AttributeError, KeyError, StopIteration, TypeError) as exc:
        raise RneaError(
            f"--effort-params '{path}': not a node parameter file ({type(exc).__name__})"
        ) from None
    gearing = params.get("gearing", {}) if isinstance(params.get("gearing"), dict) else {}

    def value(name: str, default: object) -> object:
        return params.get(f"gearing.{name}", gearing.get(name, default))

    joints = list(params.get("joints", joint_names))
    units = params.get("effort_unit", ["joint_torque"])
    units = [units] if isinstance(units, str) else list(units)
    n = len(joints)
    try:
        arrays = {
            name: np.broadcast_to(np.asarray(value(name, [0.0]), dtype=float), (n,))
            for name in ("ratio", "torque_constant")
        }
        units = list(np.broadcast_to(np.asarray(units, dtype=object), (n,)))
    except ValueError:
        raise RneaError(
            f"--effort-params '{path}': effort_unit and gearing.* need 1 or {n} values (one per joint "
            "of its 'joints')"
        ) from None
    bad = [u for u in units if u not in EFFORT_UNITS]
    if bad:
        raise RneaError(
            f"--effort-params '{path}': effort_unit '{bad[0]}' is not one of {', '.join(EFFORT_UNITS)}"
        )
    need = {"ratio": ("motor_torque", "current"), "torque_constant": ("current",)}
    for name, arr in arrays.items():
        for joint, unit, x in zip(joints, units, arr, strict=True):
            if unit in need[name] and not (np.isfinite(x) and x != 0):
                raise RneaError(
                    f"--effort-params '{path}': joint '{joint}' has effort_unit '{unit}', which needs "
                    f"gearing.{name}"
                )
    sign = np.sign(arrays["ratio"]) * np.sign(arrays["torque_constant"])
    flips = np.where(
        [u == "current" for u in units],
        sign,
        np.where([u == "motor_torque" for u in units], np.sign(arrays["ratio"]), 1.0),
    )
    factor = effort_unit_factors(units, np.abs(arrays["ratio"]), np.abs(arrays["torque_constant"]))
    to_joint_listed = flips / factor
    to_joint = np.ones(len(joint_names))
    out_units = ["joint_torque"] * len(joint_names)
    for i, name in enumerate(joint_names):
        if name in joints:
            k = joints.index(name)
            to_joint[i], out_units[i] = to_joint_listed[k], units[k]
    reversed_ = tuple(n for n in joint_names if n in joints and to_joint[list(joint_names).index(n)] < 0)
    return EffortUnits(tuple(out_units), to_joint, reversed_)


def velocity_lag(
    t: np.ndarray, q: np.ndarray, qd: np.ndarray, min_speed: float = LAG_MIN_SPEED
) -> np.ndarray:
    """Per joint, the lag (samples, ≥ 0 behind; negative ahead) of the recorded velocity `qd`
    behind the central-difference derivative of `q` on the times `t`: the shift that maximises
    their correlation coefficient, within LAG_MAX_S. NaN for a joint whose derivative's RMS is below
    `min_speed` (nothing to compare)."""
    d = np.gradient(q, t, axis=0)
    dt = float(np.median(np.diff(t)))
    most = max(1, min(int(round(LAG_MAX_S / dt)), len(t) // 4))
    out = np.full(q.shape[1], np.nan)
    for j in range(q.shape[1]):
        x, y = d[:, j] - d[:, j].mean(), qd[:, j] - qd[:, j].mean()
        if np.sqrt(np.mean(d[:, j] ** 2)) < min_speed or not y.any():
            continue
        # the correlation coefficient of y[i] and x[i - k] over their overlap: y behind x by k samples
        scores = []
        for k in range(-most, most + 1):
            a, b = (y[k:], x[: len(x) - k]) if k >= 0 else (y[:k], x[-k:])
            scores.append(float(np.dot(a, b) / max(np.sqrt(np.dot(a, a) * np.dot(b, b)), 1e-300)))
        out[j] = float(np.argmax(scores) - most)
    return out


@dataclass(frozen=True)
class Quantised:
    joint: str
    distinct: int  # distinct values
    value: float  # the most frequent value
    share: float  # its share of the samples


def quantised(names: Sequence[str], effort: np.ndarray) -> list[Quantised]:
    """Joints whose recorded efforts take few distinct values (at most QUANTISED_DISTINCT, or one
    value on QUANTISED_SHARE of the samples), constant ones excepted (another finding)."""
    out = []
    for j, name in enumerate(names):
        values, counts = np.unique(effort[:, j], return_counts=True)
        share = float(counts.max() / counts.sum())
        if values.size > 1 and (values.size <= QUANTISED_DISTINCT or share >= QUANTISED_SHARE):
            out.append(Quantised(name, int(values.size), float(values[counts.argmax()]), share))
    return out


def chain_tip(urdf: str, present: Sequence[str], root_link: str | None = None) -> str | None:
    """The link whose chain from the root (`root_link`, default the URDF's) has only joints in
    `present` among its movable ones, and the most of them (ties: the shortest chain); None
    when no chain has any."""
    robot = parse_urdf(urdf)
    parent_joint = {j.child: j for j in robot.joints}
    have = set(present)
    best: tuple[int, int, str] | None = None
    for link in robot.links:
        movable, length, at = 0, 0, link
        ok = True
        while at in parent_joint and at != root_link:
            joint = parent_joint[at]
            length += 1
            if joint.type != "fixed":
                if joint.name not in have:
                    ok = False
                    break
                movable += 1
            at = joint.parent
        if root_link is not None and at != root_link:
            ok = False
        if ok and movable and (best is None or (movable, -length) > (best[0], best[1])):
            best = (movable, -length, link)
    return None if best is None else best[2]
