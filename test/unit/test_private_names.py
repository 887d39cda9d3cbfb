"""No module of rnea_ros uses another module's private (_name) helpers or fields: an AST scan of every
source file for `from rnea_ros.x import _name`, for `module._name` where `module` is an rnea_ros
module imported by name, and for `obj._name` where `_name` is an attribute some other rnea_ros
module defines (assigns, declares in __slots__, or defines as a method or property) and this one
does not (`model._kernel_args`, `data._packed`): a field that another module needs is public.
`self._name` and `cls._name` are a class's own (and its subclasses'); names that only other
packages define (numba's, rclpy's, os._exit) are not rnea_ros's to rename. Tests (test/) are not
scanned: they may reach into a module they test."""

from __future__ import annotations

import ast
from pathlib import Path

import rnea_ros

PACKAGE = Path(rnea_ros.__file__).parent
SOURCES = sorted(PACKAGE.rglob("*.py"))


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _module_name(path: Path) -> str:
    """Dotted name of a source file of the package (a package's __init__ is the package)."""
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_module(dotted: str) -> bool:
    """Whether rnea_ros.a.b names a module or package of the source tree."""
    path = PACKAGE.parent.joinpath(*dotted.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def _absolute(node: ast.ImportFrom, here: str, is_package: bool) -> str:
    """The absolute module of a (possibly relative) `from ... import`."""
    if not node.level:
        return node.module or ""
    base = here.split(".") if is_package else here.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def cross_module_private_uses(source: str, here: str, is_package: bool = False) -> list[str]:
    """'line: what' for every private name of another rnea_ros module that `source` (the module
    `here`) imports or reads."""
    tree = ast.parse(source)
    found = []
    modules: dict[str, str] = {}  # local name -> rnea_ros module it is bound to
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            origin = _absolute(node, here, is_package)
            if origin.split(".")[0] != "rnea_ros" or origin == here:
                continue
            for alias in node.names:
                if _private(alias.name):
                    found.append(f"{node.lineno}: from {origin} import {alias.name}")
                elif _is_module(f"{origin}.{alias.name}"):
                    modules[alias.asname or alias.name] = f"{origin}.{alias.name}"
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "rnea_ros":
                    if alias.asname:
                        modules[alias.asname] = alias.name
                    else:
                        modules["rnea_ros"] = "rnea_ros"
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and _private(node.attr):
            chain = []
            value: ast.expr = node.value
            while isinstance(value, ast.Attribute):
                chain.append(value.attr)
                value = value.value
            if isinstance(value, ast.Name) and value.id in modules:
                owner = ".".join([modules[value.id], *reversed(chain)])
                if owner != here:
                    found.append(f"{node.lineno}: {owner}.{node.attr}")
    return found


def defined_attributes(source: str) -> set[str]:
    """The private attribute names a module defines: assigned to any object, named in a string
    (__slots__), or defined as a function or class (methods, properties)."""
    names = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            names.add(node.attr)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            names.add(node.value)
    return {name for name in names if _private(name)}


def foreign_private_attributes(source: str, elsewhere: set[str]) -> list[str]:
    """'line: ._name' for every `obj._name` of `source` (obj not self or cls) whose name this
    source does not define and some other module of the package does (`elsewhere`)."""
    own = defined_attributes(source)
    found = []
    for node in ast.walk(ast.parse(source)):
        if not (isinstance(node, ast.Attribute) and _private(node.attr)):
            continue
        if isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"):
            continue
        if node.attr in elsewhere and node.attr not in own:
            found.append(f"{node.lineno}: .{node.attr}")
    return found


def test_the_scan_finds_each_kind_of_use() -> None:
    source = (
        "from rnea_ros.algorithms.dynamics import _poses, rnea\n"
        "from rnea_ros.compiled import kernels as k\n"
        "import rnea_ros.trajectory.efforts as fx\n"
        "from . import _near\n"
        "x = k._hidden + fx._private(1) + k.PUBLIC + rnea_ros.__name__\n"
    )
    assert cross_module_private_uses(source, "rnea_ros.trajectory.time_scaling") == [
        "1: from rnea_ros.algorithms.dynamics import _poses",
        "4: from rnea_ros.trajectory import _near",
        "5: rnea_ros.compiled.kernels._hidden",
        "5: rnea_ros.trajectory.efforts._private",
    ]
    # a module's own private names, and public names imported under a private alias, are fine
    assert cross_module_private_uses("from rnea_ros.ros.qos import qos as _q\n", "rnea_ros.ros.guarded") == []


def test_no_module_uses_another_modules_private_names() -> None:
    assert len(SOURCES) > 80
    found = [
        f"{path.relative_to(PACKAGE.parent)}:{hit}"
        for path in SOURCES
        for hit in cross_module_private_uses(path.read_text(), _module_name(path), path.name == "__init__.py")
    ]
    assert found == []


def test_the_attribute_scan_finds_another_modules_fields() -> None:
    robot_model = "class M:\n    @property\n    def _kernel_args(self): ...\n"
    data = "class D:\n    __slots__ = ('_packed',)\n    def __init__(self):\n        self._packed = 1\n"
    elsewhere = defined_attributes(robot_model) | defined_attributes(data)
    assert elsewhere == {"_kernel_args", "_packed"}
    dynamics = (
        "def rnea(model, d):\n"
        "    n, packed = model._kernel_args\n"
        "    x = d._packed + self._packed + os._exit + d._own\n"
        "    d._own = 1\n"
    )
    assert foreign_private_attributes(dynamics, elsewhere) == ["2: ._kernel_args", "3: ._packed"]


def test_no_module_reads_another_modules_private_fields() -> None:
    own = {path: defined_attributes(path.read_text()) for path in SOURCES}
    found = []
    for path in SOURCES:
        elsewhere = set().union(*(names for other, names in own.items() if other != path))
        found += [
            f"{path.relative_to(PACKAGE.parent)}:{hit}"
            for hit in foreign_private_attributes(path.read_text(), elsewhere)
        ]
    assert found == []
