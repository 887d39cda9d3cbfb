"""rnea_ros.demo's table of demos: every row's module exists and has `main`, `--help` lists every
row, a flag picks its row (`--contact` too, with one deprecation line), a bad `--controller` or two
demos at once are refused naming the valid choices; the table covers every demo module."""

from __future__ import annotations

import importlib
import subprocess
import sys
from pathlib import Path

import pytest

import rnea_ros
from rnea_ros.demo import DEMOS, Refused, choose

DEMOS_DIR = Path(rnea_ros.__file__).parent / "sim" / "demos"


def test_every_row_runs_a_main_of_an_existing_module() -> None:
    assert len(DEMOS) == 8 and len({d.flag for d in DEMOS}) == len(DEMOS)
    for demo in DEMOS:
        assert callable(importlib.import_module(demo.module).main), demo.module


def test_the_table_covers_every_demo_module() -> None:
    """Each family's entry module (demos/<family>.py, demos/<family>/demo.py) is in the table."""
    entries = {f"rnea_ros.sim.demos.{p.stem}" for p in DEMOS_DIR.glob("*.py") if p.stem != "__init__"}
    entries |= {f"rnea_ros.sim.demos.{p.parent.name}.demo" for p in DEMOS_DIR.glob("*/demo.py")}
    assert entries == {d.module for d in DEMOS}


@pytest.mark.parametrize("demo", DEMOS, ids=lambda d: d.flag)
def test_a_flag_picks_its_row_and_keeps_the_other_options(demo) -> None:
    chosen, rest = choose(["--out", "x", *demo.flag.split(), "--no-plot"])
    assert chosen is demo and rest == ["--out", "x", "--no-plot"]


def test_controller_with_equals_and_no_flag() -> None:
    assert choose(["--controller=jtc"])[0] is next(d for d in DEMOS if d.flag == "--controller jtc")
    assert choose(["--controllers", "simulated"]) == (None, ["--controllers", "simulated"])


def test_the_old_contact_flag_picks_collision_with_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    chosen, rest = choose(["--contact", "--minutes", "1"])
    assert chosen is not None and chosen.flag == "--collision" and rest == ["--minutes", "1"]
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--contact is deprecated, use --collision" in err


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--controller", "foo"], "'foo': choose forward or jtc"),
        (["--controller"], "needs a value: forward or jtc"),
        (["--payload", "--mismatch"], "one demo at a time, not --payload and --mismatch"),
        (["--controller", "jtc", "--collision"], "not --controller jtc and --collision"),
    ],
)
def test_refused_naming_the_choices(args: list[str], words: str) -> None:
    with pytest.raises(Refused, match=words):
        choose(args)


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "rnea_ros.demo", *args],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_help_lists_every_demo_then_the_default_demos_options() -> None:
    done = run("--help")
    assert done.returncode == 0, done.stderr
    for demo in DEMOS:
        line = next(x for x in done.stdout.splitlines() if x.strip().startswith(demo.flag + " "))
        assert demo.what in line
    assert "--lockstep" in done.stdout  # the forward demo's own options follow


def test_a_bad_controller_exits_2_naming_the_choices() -> None:
    done = run("--controller", "foo")
    assert done.returncode == 2
    assert "--controller 'foo': choose forward or jtc" in done.stderr and "--collision" in done.stderr


@pytest.mark.parametrize("demo", DEMOS, ids=lambda d: d.flag)
def test_each_demo_answers_help_under_its_own_command(demo) -> None:
    """`python -m rnea_ros.demo FLAG --help`: the demo's own options, under the command a user types."""
    done = run(*demo.flag.split(), "--help")
    assert done.returncode == 0, done.stderr[-2000:]
    command = "python -m rnea_ros.demo" + ("" if demo is DEMOS[0] else f" {demo.flag}")
    assert command in done.stdout.split("\n\n")[-1] or done.stdout.startswith(f"usage: {command}")
    assert "--no-plot" in done.stdout or "--headless" in done.stdout
