"""test/support/domains.py: pytest processes side by side on one machine get distinct ROS domains
(claimed blocks), whatever their process ids."""

from __future__ import annotations

import subprocess
import sys

from domains import SUPPORT_DIR, domain

from rnea_ros.ros.processes import die_with_parent

CHILD = """
import sys
sys.path.insert(0, sys.argv[1])
import domains
print(domains.domain(), flush=True)
sys.stdin.readline()  # hold the block until told
"""


def test_processes_side_by_side_get_blocks_of_their_own() -> None:
    children = [
        subprocess.Popen(
            [sys.executable, "-c", CHILD, str(SUPPORT_DIR)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            preexec_fn=die_with_parent,
        )  # fmt: skip
        for _ in range(4)
    ]
    try:
        ids = [int(c.stdout.readline()) for c in children]  # type: ignore[union-attr]
    finally:
        for c in children:
            c.communicate("\n", timeout=30)
    mine = domain()
    blocks = {(d - 100) // 5 for d in [*ids, mine]}
    assert len(blocks) == 5, (ids, mine)  # five processes, five blocks
    assert all(100 <= d < 230 and (d - 100) % 5 == 0 for d in [*ids, mine])
