"""What only `make bench` needs stays out of `make test`'s venv: FIGAROH is pinned in
requirements-bench.txt alone, imported by no module of the package or the tests, and installed by
the bench target's own stamp (make's dry run, -B so that every stamp counts as out of date), which
the test set-up does not run."""

from __future__ import annotations

import ast
import os
import subprocess
from pathlib import Path

from paths import REPO

BENCH_ONLY = "figaroh"


def pinned(path: Path) -> dict[str, str]:
    """name -> the requirement line, of one requirements file (not the files it includes)."""
    out = {}
    for line in path.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line and not line.startswith("-"):
            out[line.split("==")[0].split("[")[0].strip().lower()] = line
    return out


def dry_run(target: str) -> list[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MAKE")}
    done = subprocess.run(
        ["make", "-n", "-B", target], cwd=REPO, capture_output=True, text=True, timeout=120, env=env
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


def imported_modules(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module.split(".")[0])
    return names


def test_figaroh_is_pinned_for_the_bench_only() -> None:
    bench = pinned(REPO / "requirements-bench.txt")
    assert bench.get(BENCH_ONLY) == "figaroh==1.0.2"
    for name in ("requirements.txt", "requirements-dev.txt", "requirements-kilted.txt"):
        assert BENCH_ONLY not in pinned(REPO / name), name


def test_only_the_bench_imports_it() -> None:
    sources = sorted((REPO / "rnea_ros").rglob("*.py")) + sorted((REPO / "test").rglob("*.py"))
    assert len(sources) > 100
    assert [p for p in sources if BENCH_ONLY in imported_modules(p)] == []
    users = [p.name for p in sorted((REPO / "bench").glob("*.py")) if BENCH_ONLY in imported_modules(p)]
    assert users == ["figaroh_tiago.py"]


def test_make_bench_installs_it_and_the_test_set_up_does_not() -> None:
    bench = dry_run("bench")
    install = [
        i for i, line in enumerate(bench) if "pip install" in line and "requirements-bench.txt" in line
    ]
    tiago = [i for i, line in enumerate(bench) if "bench/identify_tiago.py" in line]
    assert len(install) == 1 and tiago and install[0] < tiago[0], "\n".join(bench)
    for target in ("test", "demo"):
        assert not [line for line in dry_run(target) if "requirements-bench" in line], target
