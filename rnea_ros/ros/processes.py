"""Child processes that end with their parent (Linux): `preexec_fn=die_with_parent` gives a child
SIGTERM (or `signal`) when the process that started it dies, even by SIGKILL, so that a killed
demo, launch or test run leaves no node behind. Elsewhere it does nothing."""

from __future__ import annotations

import contextlib
import ctypes
import signal
import sys
from collections.abc import Callable

PR_SET_PDEATHSIG = 1


def parent_death_signal(sig: int = signal.SIGTERM) -> Callable[[], None] | None:
    """A `preexec_fn` that asks the kernel for `sig` when the parent dies (None off Linux)."""
    if not sys.platform.startswith("linux"):
        return None

    def preexec() -> None:
        with contextlib.suppress(OSError):
            ctypes.CDLL("libc.so.6", use_errno=True).prctl(PR_SET_PDEATHSIG, sig)

    return preexec


die_with_parent = parent_death_signal()

__all__ = ["die_with_parent", "parent_death_signal"]
