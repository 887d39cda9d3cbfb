"""Optional numba compilation: `njit` compiles where numba is installed, else returns the function.

Set RNEA_ROS_NO_NUMBA=1 to force the pure-Python path (the same source runs either way).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TypeVar

F = TypeVar("F", bound=Callable)

try:
    if os.environ.get("RNEA_ROS_NO_NUMBA", "") not in ("", "0"):
        raise ImportError("disabled by RNEA_ROS_NO_NUMBA")
    import numba

    HAVE_NUMBA = True
except ImportError:  # pragma: no cover - exercised with RNEA_ROS_NO_NUMBA=1
    numba = None
    HAVE_NUMBA = False


def njit(fn: F) -> F:
    """Compile `fn` with numba (cached on disk, no Python objects) when available."""
    if HAVE_NUMBA:
        return numba.njit(cache=True, fastmath=False, boundscheck=False)(fn)
    return fn


def njit_inline(fn: F) -> F:
    """`njit`, and inlined into the kernels that call it (numba IR inlining: no call, and no
    reference counting of the arrays passed); for the passes the kernels are made of."""
    if HAVE_NUMBA:
        return numba.njit(cache=True, fastmath=False, boundscheck=False, inline="always")(fn)
    return fn
