"""Every ```python block of README.md and docs/*.md runs as written: each block on its own, in a
fresh namespace (what a reader pastes into a new interpreter), or, on a page that says
`<!-- python blocks run in sequence -->`, the page's blocks one after the other in one namespace.
A block passes when it raises nothing; blocks check their own results with `assert`."""

from __future__ import annotations

import contextlib
import io
import os
import re
from pathlib import Path

import pytest
from paths import REPO

IN_SEQUENCE = "<!-- python blocks run in sequence -->"
FENCE = re.compile(r"^```python[ \t]*\n(.*?)^```[ \t]*$", re.S | re.M)


def pages() -> list[Path]:
    return [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]


def python_blocks(text: str) -> list[tuple[int, str]]:
    """(line of the opening fence, code) of every ```python block."""
    return [(text.count("\n", 0, m.start()) + 1, m.group(1)) for m in FENCE.finditer(text)]


def runs() -> list[tuple[str, list[tuple[int, str]]]]:
    """What runs as one unit: (id, [(line, code), ...]): a block, or a page's blocks in sequence."""
    out = []
    for page in pages():
        text = page.read_text()
        blocks = python_blocks(text)
        name = page.relative_to(REPO).as_posix()
        if IN_SEQUENCE in text and blocks:
            out.append((name, blocks))
        else:
            out.extend((f"{name}:{line}", [(line, code)]) for line, code in blocks)
    return out


RUNS = runs()


def execute(blocks: list[tuple[int, str]], filename: str, cwd: Path) -> str:
    """Run the blocks in one fresh namespace in `cwd`; what they print."""
    namespace: dict[str, object] = {"__name__": "__main__"}
    out = io.StringIO()
    here = Path.cwd()
    os.chdir(cwd)
    try:
        with contextlib.redirect_stdout(out):
            for line, code in blocks:
                # the line numbers of a traceback are the page's
                exec(compile("\n" * line + code, filename, "exec"), namespace)
    finally:
        os.chdir(here)
    return out.getvalue()


def test_the_pages_have_blocks_to_run() -> None:
    names = {run_id.split(":")[0] for run_id, _ in RUNS}
    assert {"docs/python_api.md", "docs/contact_dynamics.md", "docs/trajectories.md"} <= names
    assert sum(len(blocks) for _, blocks in RUNS) >= 8


def test_a_block_that_uses_what_it_does_not_define_fails(tmp_path: Path) -> None:
    with pytest.raises(NameError, match="tau_measured"):
        execute([(1, "import numpy as np\nr = np.zeros(3) + tau_measured\n")], "page.md", tmp_path)
    text = "a\n```python\nx = 1\n```\ntext\n```python\nassert x == 1\n```\n"
    blocks = python_blocks(text)
    assert [line for line, _ in blocks] == [2, 6]
    assert execute(blocks, "page.md", tmp_path) == ""  # in sequence, the second sees the first's x
    with pytest.raises(NameError):
        execute(blocks[1:], "page.md", tmp_path)


@pytest.mark.parametrize(("run_id", "blocks"), RUNS, ids=[run_id for run_id, _ in RUNS])
def test_the_block_runs_as_written(run_id: str, blocks: list[tuple[int, str]], tmp_path: Path) -> None:
    execute(blocks, str(REPO / run_id.split(":")[0]), tmp_path)
