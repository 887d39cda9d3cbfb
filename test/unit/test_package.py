"""The package root follows the one rule its docstring states: `from rnea_ros import …` offers the
model, every name in the `__all__` of a module of rnea_ros.algorithms, the friction model, every
error and compile_kernels, nothing else; and the docstring names only modules that exist."""

from __future__ import annotations

import ast
import importlib
import inspect
import re
from pathlib import Path

import rnea_ros
from rnea_ros import errors

PACKAGE = Path(rnea_ros.__file__).parent
ALGORITHMS = sorted(p.stem for p in (PACKAGE / "algorithms").glob("*.py") if p.stem != "__init__")


def module_all(name: str) -> list[str]:
    module = importlib.import_module(name)
    assert hasattr(module, "__all__"), f"{name} lists no __all__"
    return list(module.__all__)


def expected_names() -> dict[str, object]:
    """name -> object, as the rule says."""
    names: dict[str, object] = {}
    sources = [f"rnea_ros.algorithms.{m}" for m in ALGORITHMS] + ["rnea_ros.model.robot_model"]
    for source in sources:
        module = importlib.import_module(source)
        for name in module_all(source):
            names[name] = getattr(module, name)
    from rnea_ros.compiled.entry_points import Compilation, compile_kernels
    from rnea_ros.friction.model import Friction, friction_torques
    from rnea_ros.model.data import Data

    names.update(Friction=Friction, friction_torques=friction_torques, Data=Data)
    names.update(Compilation=Compilation, compile_kernels=compile_kernels)
    for name, value in vars(errors).items():
        if inspect.isclass(value) and issubclass(value, Exception) and value.__module__ == errors.__name__:
            names[name] = value
    return names


def test_the_root_offers_exactly_what_the_rule_says() -> None:
    expected = expected_names()
    assert {"rnea", "contact_inverse_dynamics", "christoffel", "Gearing", "ContactError"} <= set(expected)
    assert set(rnea_ros.__all__) == set(expected)
    assert len(rnea_ros.__all__) == len(set(rnea_ros.__all__))
    for name, value in expected.items():
        assert getattr(rnea_ros, name) is value, name


def test_the_packages_above_the_algorithms_stay_in_their_modules() -> None:
    from rnea_ros.control.effort_law import EffortLaw
    from rnea_ros.estimation.observer import MomentumObserver
    from rnea_ros.identification.fit import identify

    for value in (MomentumObserver, EffortLaw, identify):
        assert value.__name__ not in rnea_ros.__all__


def test_the_docstring_names_modules_that_exist() -> None:
    doc = rnea_ros.__doc__ or ""
    named = set(re.findall(r"`(rnea_ros(?:\.\w+)+)`", doc))
    assert "rnea_ros.model.robot_model" in named and "rnea_ros.estimation" in named
    for dotted in named:
        path = PACKAGE.parent.joinpath(*dotted.split("."))
        assert path.with_suffix(".py").is_file() or (path / "__init__.py").is_file(), dotted
    for path in re.findall(r"test/unit/\w+\.py", doc):
        assert (PACKAGE.parent / path).is_file(), path


def test_every_algorithm_module_says_what_it_offers() -> None:
    """An __all__ of names the module defines or imports, so that the rule has something to read."""
    for stem in ALGORITHMS:
        tree = ast.parse((PACKAGE / "algorithms" / f"{stem}.py").read_text())
        bound = {
            t.id
            for node in tree.body
            if isinstance(node, (ast.Assign, ast.AnnAssign))
            for t in (node.targets if isinstance(node, ast.Assign) else [node.target])
            if isinstance(t, ast.Name)
        }
        bound |= {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
        bound |= {a.asname or a.name for n in tree.body if isinstance(n, ast.ImportFrom) for a in n.names}
        missing = [name for name in module_all(f"rnea_ros.algorithms.{stem}") if name not in bound]
        assert missing == [], stem
