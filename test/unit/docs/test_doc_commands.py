"""Every command of the user's pages (README.md, docs/*.md, the comments of config/*.yaml) is run
as written by a named test or marked, with the reason, as not run here (test/support/
doc_commands.py), and bash reads each as the page means it: no `~` of a ROS remap expanded into
the home folder."""

from __future__ import annotations

import ast
import contextlib
import re
import subprocess
from functools import cache
from pathlib import Path

import doc_commands
import pytest
from doc_commands import (
    NOT_RUN,
    RUN_BY,
    Command,
    console_scripts,
    documented_commands,
    owned,
    owner,
    stray_commands,
    yaml_commands,
)
from paths import REPO, TESTS

HOME = "/home/doc-reader"  # bash's ~ while the lines are expanded below


def test_every_documented_command_is_run_by_a_test_or_marked_with_the_reason() -> None:
    commands = documented_commands()
    assert len(commands) >= 60, len(commands)  # README, docs and config comments all read
    assert {c.where.split(":")[0] for c in commands} >= {
        "README.md",
        "docs/nodes.md",
        "config/excitation.yaml",
    }
    unowned = [f"{c.where}: {c.line}" for c in commands if owner(c.line) is None]
    assert not unowned, (
        "documented commands neither run by a test nor marked (doc_commands.py):\n" + "\n".join(unowned)
    )
    assert not set(RUN_BY) & set(NOT_RUN)
    assert all(len(reason) > 20 for reason in NOT_RUN.values())  # a reason, not a word


def test_every_key_owns_a_documented_command() -> None:
    owners = {owner(c.line) for c in documented_commands()}
    stale = sorted((set(RUN_BY) | set(NOT_RUN)) - owners)
    assert not stale, f"keys of doc_commands.py that own no documented command: {stale}"


@cache
def defined_tests() -> dict[str, tuple[Path, ast.FunctionDef]]:
    """`file.py::[Class::]test` -> (file, its function) for every test module below test/."""
    found = {}
    for path in TESTS.rglob("test_*.py"):
        tree = ast.parse(path.read_text())
        for node in tree.body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                found[f"{path.name}::{node.name}"] = (path, node)
            elif isinstance(node, ast.ClassDef):
                for item in node.body:
                    if isinstance(item, ast.FunctionDef):
                        found[f"{path.name}::{node.name}::{item.name}"] = (path, item)
    return found


def asked_keys(path: Path, function: ast.AST) -> set[str]:
    """The keys a test function asks `owned()` for: string expressions of literals and of the
    string constants of its module and of doc_commands (`ID_LAUNCH + " params_file:=my_"`)."""
    names = {k: v for k, v in vars(doc_commands).items() if isinstance(v, str)}
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            with contextlib.suppress(Exception):
                value = eval(compile(ast.Expression(node.value), str(path), "eval"), {}, dict(names))
                if isinstance(value, str):
                    names[node.targets[0].id] = value
    keys = set()
    for node in ast.walk(function):
        if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", "")) == "owned":
            with contextlib.suppress(Exception):
                keys.add(eval(compile(ast.Expression(node.args[0]), str(path), "eval"), {}, dict(names)))
    return keys


def test_every_named_test_exists_and_asks_for_its_lines() -> None:
    """RUN_BY names a test that exists, and that test (its body or decorators) gets its lines
    from the pages with `owned(key)`: no test runs a copy of a documented line."""
    functions = defined_tests()
    missing = sorted({t for t in RUN_BY.values() if t not in functions})
    assert not missing, f"RUN_BY names tests that do not exist: {missing}"
    not_asked = []
    for key, name in RUN_BY.items():
        path, function = functions[name]
        if key not in asked_keys(path, function):
            not_asked.append(f"{name} does not ask owned({key!r})")
    assert not not_asked, "\n".join(not_asked)


def test_owned_gives_each_key_its_lines_only() -> None:
    demos = owned("make demo")
    lines = [c.line for c in demos]
    assert 'make demo DEMO_ARGS="--mismatch"' in " ".join(lines)
    assert all(line.startswith("make demo") for line in lines)
    # the same command on two pages (README, install, demos; another comment) runs once
    assert len({c.words for c in demos}) == len(demos) and ("make", "demo") in {c.words for c in demos}
    assert sum(c.words == ("make", "demo") for c in documented_commands()) >= 3
    # an assignment of its block comes first
    (xarm,) = [c for c in demos if "xarm7" in c.line]
    assert xarm.prelude and xarm.prelude[0].startswith("ROBOTS=")
    # the longest key wins: the QoS line is not the plain `ros2 run` test's
    qos = [c.line for c in documented_commands() if "qos_overrides" in c.line]
    assert qos and all(owner(line) != "ros2 run rnea_ros inverse_dynamics_node --ros-args" for line in qos)


def test_no_command_outside_a_bash_block() -> None:
    """A command in an indented block or another kind of fence escapes the tests (and the
    reader's copy button): every command lives in a ```bash block."""
    assert not stray_commands(), "\n".join(stray_commands())


def test_yaml_comment_commands_are_read_with_their_continuations(tmp_path: Path) -> None:
    path = REPO / "config" / "sample.yaml"
    try:
        path.write_text(
            "# Run it:\n#   ros2 run rnea_ros inverse_dynamics_node --ros-args \\\n"
            "#     -r '~/a:=/b'\n# prose about ros2 run\nkey: 1  # ros2 run x\n"
        )
        got = yaml_commands(path)
    finally:
        path.unlink()
    assert got == [
        Command("ros2 run rnea_ros inverse_dynamics_node --ros-args -r '~/a:=/b'", "config/sample.yaml:2")
    ]


def expanded_arguments(line: str) -> list[list[str]]:
    """The arguments bash gives each command of a documented line (the commands themselves
    replaced by functions that print what they get; `$(…)` runs them too), with HOME set."""
    words = sorted(
        {"ros2", "make", "colcon", "git", "cd", "source", "mkdir", "cp", "python3", "pip", "exec"}
        | console_scripts()
    )
    stub = "; ".join(f"{w}() {{ printf '\\x1e%s' {w} \"$@\"; printf '\\x1d'; }}" for w in words)
    script = f"{stub}\n{line.replace('.venv/bin/', '')}\n"
    done = subprocess.run(
        ["bash", "-c", script],
        env={"HOME": HOME, "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    calls = [c for c in done.stdout.split("\x1d") if c.strip("\n")]
    return [c.split("\x1e")[1:] for c in calls]


def test_the_stub_shell_shows_what_bash_does_to_a_tilde() -> None:
    (call,) = expanded_arguments("ros2 run p n --ros-args -r ~/a:=/b -r '~/c:=/d'")
    assert call == ["ros2", "run", "p", "n", "--ros-args", "-r", f"{HOME}/a:=/b", "-r", "~/c:=/d"]


@pytest.mark.parametrize("command", documented_commands(), ids=lambda c: c.where)
def test_bash_keeps_every_ros_remap_and_parameter_as_written(command: Command) -> None:
    """An unquoted `~/effort_commands:=…` reaches the node as `/home/you/effort_commands:=…`: a
    remap that matches nothing, and the node publishes where no controller listens (issue 34).
    No argument of a documented line may start with the home folder unless the page meant a
    path (`cd ~/ros2_ws`)."""
    for call in expanded_arguments(command.line):
        for arg in call:
            if arg.startswith(HOME) or f":={HOME}" in arg:
                assert ":=" not in arg, f"{command.where}: bash expands `~` in {arg!r}: quote it ('~/…')"


PAGES_AND_CONFIG = [
    REPO / "README.md",
    *sorted((REPO / "docs").glob("*.md")),
    *sorted((REPO / "config").glob("*")),
]


@pytest.mark.parametrize("path", PAGES_AND_CONFIG, ids=lambda p: str(p.relative_to(REPO)))
def test_no_unquoted_tilde_remap_in_prose_or_tables(path: Path) -> None:
    """Inline commands (a table's pip-only column, prose) are copied too: `-r ~/…` unquoted
    nowhere."""
    bad = [
        f"{path.name}:{n}: {line.strip()}"
        for n, line in enumerate(path.read_text().splitlines(), start=1)
        if re.search(r"(-r|--remap)\s+~/", line)
    ]
    assert not bad, "\n".join(bad)
