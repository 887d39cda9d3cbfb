"""docs/nodes.md holds, for every node schema, exactly the table the schema generates
(docs/parameter_tables.py), so the documented parameters, defaults and ranges are the declared ones."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from rnea_ros.nodes.inverse_dynamics.params import INVERSE_DYNAMICS, JOINT_KINDS
from rnea_ros.ros.schema import markdown_table

ROOT = Path(__file__).resolve().parents[3]


def generator():
    spec = importlib.util.spec_from_file_location("parameter_tables", ROOT / "docs" / "parameter_tables.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("parameter_tables", module)
    spec.loader.exec_module(module)
    return module


def test_every_node_table_on_the_page_is_its_schemas() -> None:
    gen = generator()
    page = gen.page_tables(gen.PAGE.read_text())
    expected = gen.tables()
    nodes = {"inverse_dynamics", "trajectory_feedforward", "multisine_trajectory", "mujoco_sim"}
    assert nodes <= set(expected)
    assert set(page) == set(expected)
    for node, table in expected.items():
        assert page[node] == table, f"the {node} table differs; run python docs/parameter_tables.py"
    assert gen.main(["--check"]) == 0


def test_the_inverse_dynamics_table_lists_every_parameter_with_its_default() -> None:
    page = generator().page_tables((ROOT / "docs" / "nodes.md").read_text())
    rows = page["inverse_dynamics"].splitlines()[2:]
    names = [row.split("`")[1] for row in rows]
    per_joint = [kind.name("<joint>") for kind in JOINT_KINDS]
    assert names == list(INVERSE_DYNAMICS) + per_joint
    assert per_joint == [
        "feedback.<joint>.kp", "feedback.<joint>.kd", "friction.<joint>.viscous", "friction.<joint>.coulomb",
        "armature.<joint>",
    ]  # fmt: skip
    effort_limit_scale = next(row for row in rows if row.startswith("| `effort_limit_scale` |"))
    assert "| `1.0` |" in effort_limit_scale and "(in [0, 2])" in effort_limit_scale
    assert markdown_table(INVERSE_DYNAMICS).splitlines()[2:] == rows[: len(INVERSE_DYNAMICS)]


def test_a_table_edited_by_hand_is_regenerated() -> None:
    gen = generator()
    text = gen.PAGE.read_text()
    edited = text.replace("| `effort_limit_scale` | `1.0` |", "| `effort_limit_scale` | `2.0` |", 1)
    assert edited != text
    assert gen.page_tables(edited)["inverse_dynamics"] != gen.tables()["inverse_dynamics"]
    assert gen.regenerate(edited) == text
    without = text.replace("<!-- parameters: mujoco_sim -->", "<!-- mujoco_sim -->")
    with pytest.raises(ValueError, match="mujoco_sim"):
        gen.regenerate(without)
