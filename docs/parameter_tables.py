"""The parameter tables of docs/nodes.md, generated from the nodes' parameter schemas.

    .venv/bin/python docs/parameter_tables.py           # rewrite the tables of docs/nodes.md
    .venv/bin/python docs/parameter_tables.py --check   # exit 1 when a table differs from its schema

Each table sits between the lines `<!-- parameters: NODE -->` and `<!-- end parameters -->`, NODE a
key of `node_schemas()`; the text between them is `rnea_ros.ros.schema.markdown_table(schema)`
followed by the rows of the node's per-joint parameters (`rnea_ros.ros.per_joint.markdown_rows`).
test/unit/docs/test_parameter_tables.py checks that the page holds exactly these tables.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

PAGE = Path(__file__).resolve().parent / "nodes.md"
# a block: the opening line, the table's lines (each starting with "|"), the closing line
BLOCK = re.compile(
    r"(<!-- parameters: (?P<node>\w+) -->\n)(?P<table>(?:\|[^\n]*\n)*)(<!-- end parameters -->)"
)


def node_schemas() -> dict[str, Mapping[str, Any]]:
    """Node name → its parameter schema (rnea_ros.node_schemas.NODE_SCHEMAS)."""
    from rnea_ros.node_schemas import NODE_SCHEMAS

    return dict(NODE_SCHEMAS)


def tables() -> dict[str, str]:
    """Node name → its generated Markdown table: the schema's rows, then its per-joint kinds'."""
    from rnea_ros.node_schemas import NODE_JOINT_KINDS
    from rnea_ros.ros.per_joint import markdown_rows
    from rnea_ros.ros.schema import markdown_table

    return {
        node: "\n".join([markdown_table(schema), *markdown_rows(NODE_JOINT_KINDS.get(node, ()))])
        for node, schema in node_schemas().items()
    }


def page_tables(text: str) -> dict[str, str]:
    """Node name → the table the page holds for it."""
    return {m["node"]: m["table"].rstrip("\n") for m in BLOCK.finditer(text)}


def regenerate(text: str) -> str:
    """The page with every table replaced by its schema's; KeyError for a block naming no node,
    ValueError when a node's block is missing."""
    generated = tables()
    missing = sorted(set(generated) - set(page_tables(text)))
    if missing:
        raise ValueError(f"{PAGE.name} has no `<!-- parameters: NODE -->` block for {missing}")
    return BLOCK.sub(lambda m: m[1] + generated[m["node"]] + "\n" + m[4], text)


def main(argv: list[str] | None = None) -> int:
    check = "--check" in (sys.argv[1:] if argv is None else argv)
    text = PAGE.read_text()
    new = regenerate(text)
    if check:
        if new != text:
            print(f"{PAGE}: parameter tables differ from the schemas; run python docs/parameter_tables.py")
            return 1
        return 0
    if new != text:
        PAGE.write_text(new)
        print(f"{PAGE}: parameter tables regenerated")
    return 0


if __name__ == "__main__":
    sys.exit(main())
