"""No function of rnea_ros takes more than 12 parameters: an AST scan of every source file (self and
cls not counted; *args and **kwargs count one each). An input of the compiled cycle is a slot or a
row of one of its named tables (`rnea_ros.compiled.kernels.cycle`), not one more argument."""

from __future__ import annotations

import ast
from pathlib import Path

import rnea_ros

PACKAGE = Path(rnea_ros.__file__).parent
LIMIT = 12


def parameter_count(node: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    args = node.args
    names = [a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)]
    count = len(names) + (args.vararg is not None) + (args.kwarg is not None)
    return count - 1 if names and names[0] in ("self", "cls") else count


def too_long(source: str) -> list[tuple[str, int]]:
    """(name, parameters) of every function of `source` with more than LIMIT parameters."""
    return [
        (node.name, parameter_count(node))
        for node in ast.walk(ast.parse(source))
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and parameter_count(node) > LIMIT
    ]


def test_the_count_is_of_parameters() -> None:
    source = (
        "def f(a, b, c, d, e, f, g, h, i, j, k, l, m): pass\n"
        "def g(a, b, c, d, e, f, g, h, i, j, k, l): pass\n"
        "class C:\n"
        "    def m(self, a, b, c, d, e, f, g, h, i, j, k, l): pass\n"
        "    def n(self, a, b, c, d, e, f, g, h, i, j, k, *args, **kwargs): pass\n"
        "def h(a, /, b, *, c, d, e, f, g, h, i, j, k, l, m): pass\n"
    )
    assert sorted(too_long(source)) == [("f", 13), ("h", 13), ("n", 13)]


def test_no_function_takes_more_than_12_parameters() -> None:
    sources = sorted(PACKAGE.rglob("*.py"))
    assert len(sources) > 80
    found = [
        f"{path.relative_to(PACKAGE)}:{name} ({count})"
        for path in sources
        for name, count in too_long(path.read_text())
    ]
    assert found == []
