"""The house's checks agree with each other: `make lint` checks formatting too, the pre-commit
hook runs `make lint`, and ruff and mypy target the Python the package runs on (3.11, the ROS 2
wheels' version)."""

from __future__ import annotations

import configparser
import re
import tomllib

import yaml
from paths import REPO


def lint_recipe() -> list[str]:
    text = (REPO / "Makefile").read_text()
    recipe = re.search(r"^lint:[^\n]*\n((?:\t[^\n]*\n)+)", text, re.M)
    assert recipe, "no lint target in the Makefile"
    return [line.strip() for line in recipe.group(1).splitlines()]


def test_make_lint_checks_rules_format_types_and_layers() -> None:
    recipe = " ".join(lint_recipe())
    for command in ("ruff check", "ruff format --check", "mypy", "lint-imports"):
        assert command in recipe, command


def test_the_pre_commit_hook_runs_make_lint() -> None:
    config = yaml.safe_load((REPO / ".pre-commit-config.yaml").read_text())
    hooks = [hook for repo in config["repos"] for hook in repo["hooks"]]
    assert [hook["entry"] for hook in hooks] == ["make lint"]
    assert all(hook["pass_filenames"] is False for hook in hooks)  # the whole tree, as make lint


def test_ruff_and_mypy_target_one_python() -> None:
    ruff = tomllib.loads((REPO / "ruff.toml").read_text())["target-version"]
    mypy = configparser.ConfigParser()
    mypy.read(REPO / "setup.cfg")
    version = mypy["mypy"]["python_version"]
    assert ruff == "py" + version.replace(".", "") == "py311"
