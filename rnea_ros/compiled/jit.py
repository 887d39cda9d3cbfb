"""Optional numba compilation: `njit` compiles where numba is installed, else returns the function.

Set RNEA_ROS_NO_NUMBA=1 to force the pure-Python path (the same source runs either way). Nothing
here compiles: numba compiles a kernel on its first call, or when `rnea_ros.compile_kernels()`
asks for it (see `rnea_ros.compiled.entry_points`).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any, TypeVar, cast

F = TypeVar("F", bound=Callable[..., Any])

numba: Any
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
        return cast(F, numba.njit(cache=True, fastmath=False, boundscheck=False)(fn))
    return fn


def njit_inline(fn: F) -> F:
    """`njit`, and inlined into the kernels that call it (numba IR inlining: no call, and no
    reference counting of the arrays passed); for the small steps the passes are made of."""
    if HAVE_NUMBA:
        return cast(F, numba.njit(cache=True, fastmath=False, boundscheck=False, inline="always")(fn))
    return fn
