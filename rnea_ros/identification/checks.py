"""Checks that an identification explains the recording: the `rnea_ros_identify` warnings.

Each check returns plain sentences; the command prints them as `rnea_ros_identify: warning: ...`
on stderr and exits with EXIT_WARNINGS. The thresholds are module constants (documented in the
README's identification section):

- held-out ratio: the identified model's held-out torque RMS is ≥ the prior model's
  (RATIO_LIMIT), or ≥ the RMS of the measured efforts themselves (predicting zero does as well);
- unexcited base parameters: a rank deficiency of the data beyond the base-parameter reduction;
- condition number of the base regressor beyond a bound (`--max-condition`);
- gravity-free efforts: along the recorded positions the measured efforts do not contain the
  gravity torques the prior model predicts (a driver reporting gravity-compensated torques, or
  efforts that are not joint torques at all).

Joints that never move faster than --min-speed in the fitted part (e.g. a finger) are left out of
the ratio checks: the rank check names them.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from rnea_ros.algorithms.dynamics import gravity_torques
from rnea_ros.identification.fit import Identification
from rnea_ros.identification.prediction import predict
from rnea_ros.identification.signals import Samples
from rnea_ros.model.robot_model import RobotModel

RATIO_LIMIT = 1.0  # identified / prior held-out torque RMS at or above this: no better than the prior
GRAVITY_SHARE_MIN = 0.25  # gravity share k below this on a joint: the efforts look gravity-free
GRAVITY_RELEVANT = 0.05  # a joint is gravity-checked when its gravity torque varies by ≥ this × the largest
MAX_CONDITION = 1e5  # default bound on the base regressor's condition number (SI units)
LIST_AT_MOST = 8  # names listed in one warning


def _names(items: list[str]) -> str:
    more = len(items) - LIST_AT_MOST
    return ", ".join(items[:LIST_AT_MOST]) + (f" and {more} more" if more > 0 else "")


def ratio_warnings(result: Identification, valid: Samples) -> list[str]:
    """Joints the identified model predicts no better than the prior, or than zero, on the held-out part."""
    measured = np.sqrt(np.mean(valid.tau**2, axis=0))
    fitted = result.fit_joints or result.joint_names
    checked = [name not in result.still_joints and name in fitted for name in result.joint_names]
    out = []
    worse = [
        f"{name} ({b / a:.3g})"
        for name, a, b, ok in zip(
            result.joint_names, result.rms_model, result.rms_identified, checked, strict=True
        )
        if ok and a > 0 and b / a >= RATIO_LIMIT
    ]
    if worse:
        out.append(
            "held-out torque RMS ratio (identified / prior) >= 1 on "
            + _names(worse)
            + ": the identified parameters predict these joints no better than the prior model"
        )
    nothing = [
        f"{name} ({b:.3g} vs {m:.3g})"
        for name, b, m, ok in zip(result.joint_names, result.rms_identified, measured, checked, strict=True)
        if ok and b >= m
    ]
    if nothing:
        out.append(
            "held-out torque RMS of the identified model >= that of the measured efforts on "
            + _names(nothing)
            + ": predicting zero effort does as well"
        )
    return out


def conditioning_warnings(result: Identification, max_condition: float) -> list[str]:
    """Rank deficiency beyond the base-parameter reduction; condition number beyond `max_condition`."""
    out = []
    if result.unexcited:
        hint = ""
        if result.still_joints:
            hint = (
                f"; joints {_names(list(result.still_joints))} never move faster than --min-speed "
                "(leave them out with --tip-link, or excite them)"
            )
        out.append(
            f"the recording excites {result.rank - len(result.unexcited)} of {result.rank} base "
            f"parameters (rank deficient; the others keep the prior's values): not excited "
            f"{_names(result.unexcited)}{hint}"
        )
    if not result.condition_number <= max_condition:
        out.append(
            f"base regressor condition number {result.condition_number:.4g} > {max_condition:g} "
            "(--max-condition): the excitation is poor and the prior dominates; record a richer motion"
        )
    return out


def gravity_share(model: RobotModel, samples: Samples, pi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per joint: the share k of the prior model's gravity torques g(q) found in the measured efforts
    (least squares τ_measured ≈ k g + a (τ_model − g) + offset over every sample: k = 1 when the
    efforts hold gravity as modelled, 0 when gravity is missing from them, whatever the rest of
    the dynamics does), and whether the joint's gravity torque varies enough along the recording
    for k to mean anything (NaN k when it does not)."""
    g = gravity_torques(model, samples.q)
    rest = predict(model, samples, pi) - g
    g_c, rest_c = g - g.mean(axis=0), rest - rest.mean(axis=0)
    tau_c = samples.tau - samples.tau.mean(axis=0)
    spread = np.sqrt(np.mean(g_c**2, axis=0))
    relevant = (spread >= GRAVITY_RELEVANT * float(spread.max(initial=0.0))) & (spread > 1e-6)
    k = np.full(model.nv, np.nan)
    for j in np.flatnonzero(relevant):
        columns = np.column_stack([g_c[:, j], rest_c[:, j]])
        k[j] = np.linalg.lstsq(columns, tau_c[:, j], rcond=None)[0][0]
    return k, relevant


def gravity_warnings(
    model: RobotModel, samples: Samples, pi: np.ndarray, joints: Sequence[str] | None = None
) -> list[str]:
    """Joints (of `joints`, default all) whose measured efforts lack the gravity torques the prior
    predicts along the recording."""
    k, relevant = gravity_share(model, samples, pi)
    low = [
        f"{name} ({k[j]:.2f})"
        for j, name in enumerate(model.joint_names)
        if relevant[j] and k[j] < GRAVITY_SHARE_MIN and (joints is None or name in joints)
    ]
    if not low:
        return []
    return [
        "the recorded efforts do not follow the gravity torques the model predicts along the recorded "
        f"positions (gravity share < {GRAVITY_SHARE_MIN} on {_names(low)}; 1 = as modelled): are they "
        "gravity-compensated by the driver (e.g. libfranka's tau_J minus gravity), not joint torques, "
        "or is the URDF's gravity direction wrong?"
    ]


def check(
    model: RobotModel,
    samples: Samples,
    result: Identification,
    max_condition: float = MAX_CONDITION,
    quantised: Sequence[str] = (),
) -> list[str]:
    """Every warning about `result` identified from `samples` with the prior `model`. Only the
    fitted joints are checked, and the gravity check leaves out the `quantised` ones (they are
    named as such: their efforts are no torque to look for gravity in)."""
    start = result.train_samples if result.validation_samples < len(samples) else 0
    valid = samples.part(slice(start, len(samples)))
    fitted = result.fit_joints or result.joint_names
    return [
        *gravity_warnings(model, samples, result.model_parameters, [j for j in fitted if j not in quantised]),
        *ratio_warnings(result, valid),
        *conditioning_warnings(result, max_condition),
    ]
