"""One exception base: every error the core raises on bad input is an RneaError (a ValueError), and
an unknown link raises UnknownLinkError (also a KeyError) from every function that takes a link."""

from __future__ import annotations

import ast
import builtins
import importlib
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
    "compiled",
    "model",
    "algorithms",
    "friction",
    "control",
    "estimation",
    "trajectory",
    "identification",
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


def _exception_classes() -> dict[str, tuple[str, int, bool]]:
    """Every exception class defined anywhere in rnea_ros, by AST: name -> (module, line, defined at
    module level). A class is an exception when a base is a built-in exception or another exception
    class of the package (followed to a fixed point); bases are matched by their last name."""
    classes: dict[str, list[tuple[str, int, bool, list[str]]]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        module = ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts).removesuffix(".__init__")
        tree = ast.parse(path.read_text())
        top = {id(node) for node in tree.body}
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                bases = [ast.unparse(b).split(".")[-1] for b in node.bases]
                classes.setdefault(node.name, []).append((module, node.lineno, id(node) in top, bases))
    builtin = {n for n, v in vars(builtins).items() if isinstance(v, type) and issubclass(v, BaseException)}
    exceptions: dict[str, tuple[str, int, bool]] = {}
    grown = True
    while grown:
        grown = False
        for name, defs in classes.items():
            for module, line, top_level, bases in defs:
                if name not in exceptions and any(b in builtin or b in exceptions for b in bases):
                    exceptions[name] = (module, line, top_level)
                    grown = True
    return exceptions


def test_every_exception_class_of_the_package_is_an_rnea_error() -> None:
    found = _exception_classes()
    # the scan sees the core's and the tools' errors alike
    expected = {"RneaError", "ParameterError", "IllConditionedError", "BadInputError", "Refused", "NoAnswer"}
    assert expected <= set(found)
    not_rnea = []
    for name, (module, line, top_level) in sorted(found.items()):
        if not top_level:
            not_rnea.append(f"{module}:{line} {name} (defined inside a function or class)")
            continue
        cls = getattr(importlib.import_module(module), name)
        if not issubclass(cls, RneaError):
            not_rnea.append(f"{module}:{line} {name}")
    assert not_rnea == []


def test_every_exception_of_the_core_is_defined_in_errors() -> None:
    """One exceptions module for the core (the packages below rnea_ros.ros, the identify command
    included): no other module of those packages defines an exception class."""
    found = _exception_classes()
    core = tuple(f"rnea_ros.{package}." for package in CORE_PACKAGES)
    elsewhere = sorted(
        f"{module}:{line} {name}" for name, (module, line, _) in found.items() if module.startswith(core)
    )
    assert elsewhere == []
    assert {"ContactError", "ImuLinkError", "BadInputError"} <= {
        name for name, (module, _, _) in found.items() if module == "rnea_ros.errors"
    }


def test_the_tools_errors_keep_their_builtin_kinds() -> None:
    from rnea_ros.sim.report import RealTimeLost
    from rnea_ros.sim.scenario import Refused

    assert issubclass(RealTimeLost, RuntimeError) and issubclass(Refused, ValueError)
    err = rnea_ros.IllConditionedError("singular", float("inf"))
    assert isinstance(err, RneaError) and err.condition == float("inf") and str(err) == "singular"


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
