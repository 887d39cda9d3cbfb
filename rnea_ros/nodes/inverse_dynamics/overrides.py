"""What the `~/ee_wrench` and `~/payload` messages set (no ROS here: plain values).

Rules (README, "Wrenches and payload by message"):
- A wrench message names the link that exerts it (`header.frame_id`, empty: tip_link); its axes
  are root or that link's (the `ee_wrench_frame` parameter when the message arrives). Wrenches on
  several links are kept together, each until a message for the same link replaces it; a zero
  wrench clears its link. On the tip link a message overrides the `ee_wrench` parameter (a zero
  one too) until `ee_wrench` is set again.
- A payload message replaces the payload (the one of the payload.* parameters too): mass 0
  means no payload. Setting payload.mass, .com, .inertia or .link replaces it in turn. An
  estimate (payload_estimation.py) is put in the same way, with source "estimate".
- Both are kept across parameter changes and model swaps; whatever names a link the new model
  lacks is dropped, with a warning.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType

import numpy as np

from rnea_ros.errors import ParameterError, RneaError
from rnea_ros.model.robot_model import Payload, RobotModel
from rnea_ros.nodes.inverse_dynamics.params import INVERSE_DYNAMICS
from rnea_ros.ros.schema import Param, validate_value

AXES = ("root", "link")
PAYLOAD_PARAMS = ("payload.mass", "payload.com", "payload.inertia", "payload.link")  # the payload itself
LISTED = 40  # valid links named in a rejection at most


@dataclass(frozen=True)
class LinkWrench:
    """A wrench a link exerts on its environment: [fx fy fz tx ty tz], N and N m, moment about
    the link origin; `axes` 'root' (root-frame axes) or 'link' (the link's own axes)."""

    axes: str
    values: np.ndarray

    @property
    def is_zero(self) -> bool:
        return not np.any(self.values != 0)


@dataclass(frozen=True)
class Overrides:
    """The message inputs in force; replaced whole, never edited."""

    wrenches: Mapping[str, LinkWrench] = field(default_factory=lambda: MappingProxyType({}))
    payload: Payload | None = None  # None: the payload.* parameters apply; mass 0: no payload
    payload_source: str = "topic"  # where `payload` comes from: "topic" (~/payload) or "estimate"

    def with_wrench(self, link: str, wrench: LinkWrench) -> Overrides:
        return replace(self, wrenches=MappingProxyType({**self.wrenches, link: wrench}))

    def with_payload(self, payload: Payload, source: str = "topic") -> Overrides:
        return replace(self, payload=payload, payload_source=source)

    def after_parameters(self, names: Iterable[str], tip: str | None) -> Overrides:
        """What stays when parameters `names` are set: `ee_wrench` replaces the tip's message
        wrench, any of the payload's parameters (PAYLOAD_PARAMS) the message payload."""
        names = set(names)
        out = self
        if "ee_wrench" in names and tip in self.wrenches:
            out = replace(
                out, wrenches=MappingProxyType({k: v for k, v in self.wrenches.items() if k != tip})
            )
        if any(n in PAYLOAD_PARAMS for n in names):
            out = replace(out, payload=None, payload_source=NONE.payload_source)
        return out

    def fitting(self, base: RobotModel) -> tuple[Overrides, list[str]]:
        """The overrides a new model can keep, and a sentence for each one it cannot."""
        dropped = [f"~/ee_wrench on '{link}'" for link in self.wrenches if link not in base.link_frames]
        wrenches = {k: v for k, v in self.wrenches.items() if k in base.link_frames}
        payload = self.payload
        if payload is not None and payload.mass > 0 and payload.link not in base.link_frames:
            dropped.append(f"~/payload on '{payload.link}'")
            payload = None
        source = self.payload_source if payload is not None else NONE.payload_source
        return Overrides(MappingProxyType(wrenches), payload, source), [
            f"{d}: the new model has no such link" for d in dropped
        ]

    @property
    def wrench_links(self) -> list[str]:
        """Links whose message wrench is not zero."""
        return [link for link, w in self.wrenches.items() if not w.is_zero]


NONE = Overrides()


def moving_links(base: RobotModel) -> list[str]:
    """Links that move with a joint (a wrench or payload elsewhere moves nothing)."""
    return [name for name, frame in base.link_frames.items() if frame.body >= 0]


def _listed(links: list[str]) -> str:
    shown = ", ".join(links[:LISTED])
    return shown + (f", ... ({len(links)} in all)" if len(links) > LISTED else "")


def message_link(base: RobotModel, frame_id: str, tip: str | None, topic: str) -> str:
    """The link a message names in header.frame_id (empty: `tip`); RneaError naming the link and
    listing the valid ones otherwise."""
    link = frame_id or tip
    valid = moving_links(base)
    if link is None:
        raise RneaError(
            f"{topic}: header.frame_id is empty and tip_link is not set: name the link in frame_id "
            f"(one of {_listed(valid)})"
        )
    if link not in base.link_frames:
        raise RneaError(
            f"{topic}: link '{link}' is not part of the model (links that move: {_listed(valid)})"
        )
    if link not in valid:
        raise RneaError(
            f"{topic}: link '{link}' is fixed to the root, so nothing there moves a joint (frame_id names "
            f"the link that exerts the wrench or carries the payload; links that move: {_listed(valid)})"
        )
    return link


def wrench_of(values: Iterable[float], axes: str) -> LinkWrench:
    """A LinkWrench from six numbers; RneaError when one is NaN or Inf, or beyond the bounds of
    the ee_wrench parameter (a message is as plausible as the parameter must be)."""
    array = np.array([float(v) for v in values], dtype=float)
    if array.shape != (6,) or not np.all(np.isfinite(array)):
        raise RneaError("~/ee_wrench: the wrench must be 6 finite numbers")
    try:
        validate_value(INVERSE_DYNAMICS["ee_wrench"], array.tolist())
    except ParameterError as exc:
        raise RneaError(
            f"~/ee_wrench: wrench [fx fy fz tx ty tz] {exc.reason} (the ee_wrench parameter's bounds)"
        ) from None
    if axes not in AXES:
        raise RneaError(f"~/ee_wrench: axes must be one of {', '.join(AXES)}, got '{axes}'")
    array.flags.writeable = False
    return LinkWrench(axes, array)


# The message's fields checked by the payload.* parameters' rules (bounds, finiteness).
_PAYLOAD_FIELDS: tuple[tuple[str, Param], ...] = (
    ("inertia.m", INVERSE_DYNAMICS["payload.mass"]),
    ("inertia.com", INVERSE_DYNAMICS["payload.com"]),
    ("inertia.ixx..izz", INVERSE_DYNAMICS["payload.inertia"]),
)


def payload_of(
    base: RobotModel, link: str, mass: float, com: Iterable[float], inertia: Iterable[float]
) -> Payload:
    """A payload from a message's values (inertia [ixx ixy ixz iyy iyz izz] about the com, link
    axes), validated like the payload.* parameters and as a rigid body: RneaError naming the
    message field or the link. Mass 0: no payload (the rest is not looked at)."""
    values = [mass, list(com), list(inertia)]
    checked = []
    for (name, param), value in zip(_PAYLOAD_FIELDS, values, strict=True):
        try:
            checked.append(validate_value(param, value))
        except ParameterError as exc:
            raise RneaError(f"~/payload: {name} {exc.reason}") from None
    mass_kg, com3, (ixx, ixy, ixz, iyy, iyz, izz) = checked
    if mass_kg == 0:
        return Payload(link, 0.0, np.zeros(3), np.zeros((3, 3)))
    tensor = np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]])
    try:
        base.with_payload(link, mass_kg, com3, tensor)  # the core's checks: a physical rigid body
    except RneaError as exc:
        raise RneaError(f"~/payload: {exc}") from None
    return Payload(link, float(mass_kg), np.array(com3), tensor)


def describe_payload(model: RobotModel, source: str) -> str:
    """The payload in force, for diagnostics."""
    p = model.payload
    if p is None:
        return "none" + {"topic": " (~/payload cleared it)", "estimate": " (estimated)"}.get(source, "")
    com = ", ".join(f"{x:.4g}" for x in p.com)
    where = {"topic": "~/payload", "estimate": "estimated"}.get(source, "payload.* parameters")
    return f"{p.mass:.4g} kg on {p.link}, com [{com}] m ({where})"


__all__ = [
    "AXES",
    "PAYLOAD_PARAMS",
    "NONE",
    "LinkWrench",
    "Overrides",
    "describe_payload",
    "message_link",
    "moving_links",
    "payload_of",
    "wrench_of",
]
