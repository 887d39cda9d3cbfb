"""ROS 2 domains of the test processes: a block of STRIDE domains per pytest process, claimed for
the process's lifetime, so that pytest runs side by side on one machine (pytest-xdist's workers of
one run, other checkouts' runs, CI jobs sharing a host) never see each other's nodes.

A process claims the first free block (an exclusive `flock` on a file per block in LOCKS, held
until the process ends, also by SIGKILL), looking from one its process id picks: its own
ROS_DOMAIN_ID is the block's first domain (`domain()`, set by test/conftest.py before rclpy
loads), the demos it starts get the others (`domain(1)` … `domain(4)`). Blocks of domains
100-229 (the ports of domain 232 are the last valid ones). Before the claim, blocks came from the
process ids alone, and two runs on one machine could share a domain: a node of the other run's
UR5 answered a test here on a shared machine.
"""

from __future__ import annotations

import fcntl
import os
import tempfile
from pathlib import Path

FIRST = 100
BLOCKS = 26  # domains FIRST … FIRST + STRIDE * BLOCKS - 1
STRIDE = 5  # domains per pytest process: its own + the demos' (offsets 1..4)
LOCKS = Path(tempfile.gettempdir()) / "rnea_ros_test_domains"
SUPPORT_DIR = Path(__file__).resolve().parent
_claimed: list[int] = []  # [block, lock file descriptor] of this process


def _block() -> int:
    """This process's block: claimed on first use, kept until the process ends."""
    if not _claimed:
        start = os.getpid() % BLOCKS
        LOCKS.mkdir(exist_ok=True)
        for k in range(BLOCKS):
            block = (start + k) % BLOCKS
            fd = os.open(LOCKS / f"block_{block}.lock", os.O_CREAT | os.O_RDWR, 0o666)  # not inherited
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:  # another process holds it
                os.close(fd)
                continue
            _claimed[:] = [block, fd]
            break
        else:  # every block taken (26 pytest processes at once): share one, as before the claims
            _claimed[:] = [start, -1]
    return _claimed[0]


def domain(offset: int = 0) -> int:
    """The ROS_DOMAIN_ID of this test process (offset 0) or of one of its demos (1..STRIDE-1)."""
    if not 0 <= offset < STRIDE:
        raise ValueError(f"domain offset {offset} outside 0..{STRIDE - 1}")
    return FIRST + STRIDE * _block() + offset
