"""ROS 2 domains of the test processes: one per pytest process, so that pytest runs side by side
(and pytest-xdist's workers of one run) do not see each other's nodes.

A run picks a base from its controlling process's id (the xdist controller's for a worker); worker
N of that run owns the block of STRIDE domains from base + N·STRIDE: its own ROS_DOMAIN_ID
(`domain()`, set by test/conftest.py before rclpy loads) and the domains of the demos it starts
(`domain(1)`, `domain(2)` …), so no two workers of a run share one. Domains 100-199 (the ports of
domain 232 are the last valid ones).
"""

from __future__ import annotations

import os

FIRST = 100
COUNT = 100
STRIDE = 5  # domains per worker: its own + the demos' (offsets 1..4)


def worker_index() -> int:
    """0 without xdist, N for xdist's worker gwN."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")
    return int(worker[2:]) if worker.startswith("gw") else 0


def run_seed() -> int:
    """The process id of the run's controller: this process, or the xdist controller for a worker."""
    return os.getppid() if os.environ.get("PYTEST_XDIST_WORKER") else os.getpid()


def domain(offset: int = 0) -> int:
    """The ROS_DOMAIN_ID of this test process (offset 0) or of one of its demos (1..STRIDE-1)."""
    if not 0 <= offset < STRIDE:
        raise ValueError(f"domain offset {offset} outside 0..{STRIDE - 1}")
    return FIRST + (run_seed() + STRIDE * worker_index() + offset) % COUNT
