"""One exception base: every error the core raises on bad input is an RneaError (a ValueError), and
an unknown link raises UnknownLinkError (also a KeyError) from every function that takes a link."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest

import rnea_ros
from rnea_ros import (
    RneaError,
    RobotModel,
    UnknownJointError,
    UnknownLinkError,
    URDFError,
    apparent_mass,
    jacobian,
    link_constraint,
    link_pose,
    rnea,
    task_space_inertia,
)
from rnea_ros.errors import ParameterError
from rnea_ros.model.example_robots import example_urdf_path

PACKAGE = Path(rnea_ros.__file__).parent
# The core: every module but the ROS side (node/, sim/) and the demo's command line.
CORE_PACKAGES = (
    "compiled", "model", "algorithms", "friction", "control", "estimation", "trajectory", "identification"
)
CORE = sorted(p for name in CORE_PACKAGES for p in (PACKAGE / name).glob("*.py")) + [PACKAGE / "errors.py"]
MODELS = {name: RobotModel.from_urdf(example_urdf_path(name).read_text()) for name in ("panda", "ur5")}


def _raised_builtins(path: Path) -> list[str]:
    """`raise ValueError(...)` / `raise KeyError(...)` statements of a module, as 'file:line'."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call):
            func = node.exc.func
            if isinstance(func, ast.Name) and func.id in ("ValueError", "KeyError", "TypeError"):
                found.append(f"{path.name}:{node.lineno} {func.id}")
    return found


def test_the_core_raises_only_package_errors() -> None:
    assert len(CORE) > 15
    raised = [hit for path in CORE for hit in _raised_builtins(path)]
    assert raised == []


def test_hierarchy() -> None:
    for cls in (URDFError, UnknownLinkError, UnknownJointError, ParameterError):
        assert issubclass(cls, RneaError)
    assert issubclass(RneaError, ValueError)
    assert issubclass(UnknownLinkError, KeyError) and issubclass(UnknownJointError, KeyError)
    assert str(UnknownLinkError("link 'x' is not part of the model")) == "link 'x' is not part of the model"


@pytest.mark.parametrize("name", sorted(MODELS))
def test_an_unknown_link_raises_the_same_error_everywhere(name: str) -> None:
    model = MODELS[name]
    q = np.zeros(model.nv)
    calls = {
        "rnea wrenches": lambda: rnea(model, q, q, q, wrenches={"ghost": [0.0] * 6}),
        "jacobian": lambda: jacobian(model, q, "ghost"),
        "link_pose": lambda: link_pose(model, q, "ghost"),
        "with_payload": lambda: model.with_payload("ghost", 1.0),
        "link_frame": lambda: model.link_frame("ghost"),
        "task_space_inertia": lambda: task_space_inertia(model, q, "ghost"),
        "apparent_mass": lambda: apparent_mass(model, q, "ghost", [0.0, 0.0, 1.0]),
        "link_constraint": lambda: link_constraint(model, q, q, "ghost", np.eye(3)),
    }
    for what, call in calls.items():
        with pytest.raises(UnknownLinkError, match="link 'ghost'") as info:
            call()
        assert isinstance(info.value, KeyError) and isinstance(info.value, ValueError), what


def test_an_unknown_joint_raises_unknown_joint_error() -> None:
    with pytest.raises(UnknownJointError, match="joint 'ghost'"):
        MODELS["ur5"].joint_index("ghost")
