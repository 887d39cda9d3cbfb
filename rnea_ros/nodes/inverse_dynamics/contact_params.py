"""The contacts.* parameters of the inverse_dynamics node as `Contact`s (no ROS): see
contact_forces.py for the topics and docs/floating_base_node.md."""

from __future__ import annotations

import re

from rnea_ros.algorithms.contact_dynamics import Contact, ContactError
from rnea_ros.errors import ParameterError
from rnea_ros.model.robot_model import RobotModel

TOPIC_TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")  # a link name usable in ~/contact_wrenches/<link>


def contact_links(params: dict) -> list[str]:
    return [link for link in params["contacts.links"] if link]


def _per_link(params: dict, name: str, n: int, width: int = 1) -> list:
    """One value (width numbers) for every link or one per link; ParameterError naming `name`."""
    values = list(params[name])
    if len(values) == width:
        return [values] * n if width > 1 else values * n
    if len(values) == width * n:
        return [values[i * width : (i + 1) * width] for i in range(n)] if width > 1 else values
    what = "one value" if width == 1 else f"{width} values"
    raise ParameterError(name, f"must have {what} for every contact or one per link of contacts.links ({n})")


def contacts_of(params: dict, model: RobotModel | None) -> tuple[Contact, ...]:
    """The contacts of the parameters (checked against `model`, the floating model, when given);
    ParameterError naming the parameter at fault."""
    links = contact_links(params)
    n = len(links)
    for link in links:
        if links.count(link) > 1:
            raise ParameterError("contacts.links", f"lists '{link}' twice")
        if not TOPIC_TOKEN.fullmatch(link):
            raise ParameterError(
                "contacts.links",
                f"'{link}' cannot name the topic ~/contact_wrenches/{link} (letters, digits, _)",
            )
        if model is not None and link not in model.link_frames:
            raise ParameterError("contacts.links", f"'{link}' is not a link of the model '{model.name}'")
    types = _per_link(params, "contacts.types", n)
    friction = _per_link(params, "contacts.friction", n)
    extents = _per_link(params, "contacts.half_extents", n, 2)
    nx, ny, nz = (float(x) for x in params["contacts.normal"])
    normal = (nx, ny, nz)
    out = []
    for i, link in enumerate(links):
        ext = (float(extents[i][0]), float(extents[i][1]))
        half = ext if types[i] == "6d" and ext[0] > 0 and ext[1] > 0 else None
        try:
            out.append(
                Contact(
                    link,
                    types[i],
                    float(friction[i]),
                    normal,
                    half_extents=half,
                    min_normal_force=float(params["contacts.min_normal_force"]),
                )  # fmt: skip
            )
        except ContactError as exc:
            name = "contacts.normal" if "normal" in exc.reason else "contacts.links"
            raise ParameterError(name, str(exc)) from None
    return tuple(out)


__all__ = ["TOPIC_TOKEN", "contact_links", "contacts_of"]
