"""The docs as a reference: every page reachable from docs/index.md, every relative link and
anchor resolving, the README's table of pages the index's, the module map of
docs/architecture.md the tree's, and every cited commit one of the repository's."""

from __future__ import annotations

import re
import subprocess
from functools import cache
from pathlib import Path

import pytest
from paths import REPO

DOCS = REPO / "docs"
PAGES = [REPO / "README.md", *sorted(DOCS.glob("*.md"))]


def prose(page: Path) -> str:
    """A page without its fenced code blocks (a link or heading in code is none)."""
    return re.sub(r"^```.*?^```", "", page.read_text(), flags=re.S | re.M)


def links(page: Path) -> list[str]:
    """The targets of a page's markdown links and images, in order."""
    return re.findall(r"\]\(([^)\s]+)\)", prose(page))


@cache
def anchors(page: Path) -> set[str]:
    """The anchors GitHub gives a page's headings: lower case, punctuation but `-` and `_`
    dropped, spaces as `-`, a repeated one suffixed -1, -2 …"""
    found: set[str] = set()
    seen: dict[str, int] = {}
    for heading in re.findall(r"^#+\s+(.*)$", prose(page), flags=re.M):
        slug = re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
        found.add(slug if slug not in seen else f"{slug}-{seen[slug]}")
        seen[slug] = seen.get(slug, 0) + 1
    return found


def test_the_anchor_rule_is_githubs() -> None:
    page = DOCS / "demos.md"
    assert "the-real-ros2_control-in-the-loop" in anchors(page)
    assert "the-closed-loop-demo-the-node-drives-a-mujoco-simulated-arm" in anchors(page)


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_relative_link_and_anchor_resolves(page: Path) -> None:
    broken = []
    for target in links(page):
        if re.match(r"[a-z]+:", target):  # https:, mailto:
            continue
        path, _, anchor = target.partition("#")
        file = (page.parent / path).resolve() if path else page
        if not file.exists():
            broken.append(f"{target}: no such file")
        elif anchor and file.suffix == ".md" and anchor not in anchors(file):
            broken.append(f"{target}: no heading of {file.name} has that anchor")
    assert not broken, f"{page.name}: " + "; ".join(broken)


def test_every_page_is_reachable_from_the_index() -> None:
    """From docs/index.md, following the pages' links, every page of docs/ and the README."""
    reached, todo = set(), [DOCS / "index.md"]
    while todo:
        page = todo.pop()
        if page in reached:
            continue
        reached.add(page)
        for target in links(page):
            path = target.partition("#")[0]
            if path.endswith(".md") and not re.match(r"[a-z]+:", path):
                file = (page.parent / path).resolve()
                if file.exists():
                    todo.append(file)
    unreached = sorted(p.name for p in PAGES if p.resolve() not in reached)
    assert not unreached, f"not reachable from docs/index.md: {unreached}"


def test_the_index_lists_every_page() -> None:
    listed = {t.partition("#")[0] for t in links(DOCS / "index.md")}
    missing = sorted(p.name for p in DOCS.glob("*.md") if p.name != "index.md" and p.name not in listed)
    assert not missing, f"docs/index.md does not list {missing}"


def table(text: str) -> list[tuple[str, str]]:
    """The rows (page file, what) of the first `| page | what |` table of a text."""
    block = text.split("| page | what |", 1)[1].split("\n\n", 1)[0]
    rows = []
    for line in block.strip().splitlines()[1:]:  # after the separator
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        (target,) = re.findall(r"\]\(([^)]+)\)", cells[0])
        rows.append((Path(target).name, cells[1]))
    return rows


def test_the_readme_table_of_pages_is_the_index() -> None:
    """One list of pages, written twice (README for the first look, docs/index.md for the docs
    folder): the same pages, order and words."""
    readme, index = table((REPO / "README.md").read_text()), table((DOCS / "index.md").read_text())
    assert len(index) >= 15
    assert readme == index


# ------------------------------------------------------------------------------ module map
def module_map() -> list[str]:
    """The files docs/architecture.md's module map names, as paths from the repository root:
    `a/b/c.py`, `d.py` in one cell is a/b/c.py and a/b/d.py; a folder row (`a/b/`) names its
    modules in its second cell (`node.py` …)."""
    text = (DOCS / "architecture.md").read_text()
    block = text.split("## Module map", 1)[1].split("\n## ", 1)[0]
    named = []
    for line in block.splitlines():
        if not line.startswith("| `"):
            continue
        where, what = (c.strip() for c in line.strip().strip("|").split("|", 1))
        items = re.findall(r"`([^`]+)`", where)
        first = items[0]
        folder = first if first.endswith("/") else first.rsplit("/", 1)[0] + "/"
        named.append(first)
        named += [folder + item for item in items[1:]]
        if first.endswith("/"):
            named += [folder + m for m in re.findall(r"`([\w]+\.py)`", what)]
    return named


def test_the_module_map_names_only_what_exists() -> None:
    named = module_map()
    assert len(named) >= 60
    missing = sorted(p for p in named if not (REPO / p).exists())
    assert not missing, f"docs/architecture.md names what does not exist: {missing}"


def test_the_module_map_names_every_module() -> None:
    named = set(module_map())
    modules = sorted(
        str(p.relative_to(REPO)) for p in (REPO / "rnea_ros").rglob("*.py") if p.name != "__init__.py"
    )
    assert len(modules) >= 90
    missing = [m for m in modules if m not in named]
    assert not missing, f"docs/architecture.md's module map leaves out {missing}"


# ---------------------------------------------------------------------------------- commits
def git(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True, timeout=60, check=False)


def test_every_cited_commit_is_in_the_history() -> None:
    """A figure's commit (`commit \\`abc1234\\``) must be one of the repository's: `git show` it."""
    if git("rev-parse", "--is-shallow-repository").stdout.strip() != "false":
        pytest.skip("a shallow clone lacks the history the figures cite")
    cited = {m for page in PAGES for m in re.findall(r"commits?\s+`([0-9a-f]{7,40})`", page.read_text())}
    assert len(cited) >= 5
    unknown = sorted(c for c in cited if git("cat-file", "-e", f"{c}^{{commit}}").returncode != 0)
    assert not unknown, f"cited commits not in the history: {unknown}"
