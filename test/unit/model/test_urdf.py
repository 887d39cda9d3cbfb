"""Fuzzing RobotModel.from_urdf with mutations of real robot files: a model or URDFError, nothing else."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rnea_ros import RobotModel, URDFError, gravity_torques
from rnea_ros.model.example_robots import example_urdf_path

SOURCES = {name: example_urdf_path(name).read_text() for name in ("panda", "ur5", "double_pendulum")}
NUMBERS = st.one_of(
    st.sampled_from(
        ["nan", "inf", "-inf", "1e400", "-1", "0", "", "abc", "1,5", "0.1m", "1 2", "--3", "0x10"]
    ),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
)


def mutate(text: str, data: st.DataObject) -> str:
    root = ET.fromstring(text)
    elements = list(root.iter())
    for _ in range(data.draw(st.integers(1, 4), label="mutations")):
        el = data.draw(st.sampled_from(elements), label="element")
        kind = data.draw(st.sampled_from(["drop", "duplicate", "number", "attr", "rename"]), label="kind")
        parent = next((p for p in root.iter() if el in list(p)), None)
        if kind == "drop" and parent is not None:
            parent.remove(el)
        elif kind == "duplicate" and parent is not None:
            parent.append(ET.fromstring(ET.tostring(el)))
        elif kind == "number" and el.attrib:
            key = data.draw(st.sampled_from(sorted(el.attrib)), label="attribute")
            el.set(key, data.draw(NUMBERS, label="value"))
        elif kind == "attr" and el.attrib:
            key = data.draw(st.sampled_from(sorted(el.attrib)), label="attribute")
            del el.attrib[key]
        elif kind == "rename":
            el.tag = data.draw(st.sampled_from(["link", "joint", "robot", "inertial", "origin", "junk"]))
        elements = list(root.iter())
    return ET.tostring(root, encoding="unicode")


def load_or_reject(text: str) -> None:
    """The contract: a usable model, or URDFError; any other exception fails the test."""
    try:
        model = RobotModel.from_urdf(text)
    except URDFError as exc:
        assert str(exc)
        return
    tau = gravity_torques(model, np.zeros(model.nv))
    assert np.all(np.isfinite(tau))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(sorted(SOURCES)), st.data())
def test_mutated_real_robot_files(name: str, data: st.DataObject) -> None:
    load_or_reject(mutate(SOURCES[name], data))


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(sorted(SOURCES)), st.integers(0, 10**6), st.integers(0, 200))
def test_truncated_and_spliced_documents(name: str, cut: int, junk: int) -> None:
    text = SOURCES[name]
    load_or_reject(text[: cut % (len(text) + 1)])
    load_or_reject(text[: cut % len(text)] + "<" * (junk % 7) + text[cut % len(text) :])


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=300))
def test_arbitrary_text(text: str) -> None:
    load_or_reject(text)


def test_huge_and_empty_documents() -> None:
    for text in ["", " ", "<robot/>", '<robot name="x"></robot>', "\x00", "<robot>" * 100_000]:
        load_or_reject(text)
    links = "".join(f'<link name="l{i}"/>' for i in range(5000))
    joints = "".join(
        f'<joint name="j{i}" type="revolute"><parent link="l{i}"/><child link="l{i + 1}"/>'
        '<axis xyz="0 0 1"/><limit lower="-1" upper="1" effort="1" velocity="1"/></joint>'
        for i in range(4999)
    )
    model = RobotModel.from_urdf(f'<robot name="long">{links}{joints}</robot>')
    assert model.nv == 4999


def test_overflowing_numbers_are_rejected_not_propagated() -> None:
    text = SOURCES["double_pendulum"]
    root = ET.fromstring(text)
    root.find("link[@name='link2']/inertial/mass").set("value", "1e308")
    root.find("link[@name='link2']/inertial/origin").set("xyz", "1e200 0 0")
    try:
        RobotModel.from_urdf(ET.tostring(root, encoding="unicode"))
    except URDFError as exc:
        assert "link 'link2'" in str(exc)
    else:
        raise AssertionError("an overflowing inertial loaded")
