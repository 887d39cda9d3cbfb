"""numba's disk cache of the dynamics kernels: where it is, whether it is cold, and
`python3 -m rnea_ros.compiled.cache` to fill it (what `make` set-up and a colcon build run, so that
no first start compiles).

numba caches next to the sources when that directory is writable (a source tree, a colcon
install), else in the user's cache directory (~/.cache/numba, or $NUMBA_CACHE_DIR when set): a
read-only install compiles once per user, on that user's first start or with this command.
"""

from __future__ import annotations

import os
import sys

from rnea_ros.compiled.entry_points import KERNELS, RNEA, compile_kernels
from rnea_ros.compiled.jit import HAVE_NUMBA


def cache_location() -> str:
    """The directory where numba caches the kernels of this installation ("" without numba)."""
    if not HAVE_NUMBA:
        return ""
    try:
        return str(RNEA.dispatcher._cache._cache_path)  # numba's (private) cache object
    except AttributeError:  # pragma: no cover - another numba
        return os.environ.get("NUMBA_CACHE_DIR", "numba's cache directory")


def cache_is_cold() -> bool:
    """Whether some kernel has no entry in numba's cache yet (compile_kernels then compiles, tens
    of seconds). An entry that no longer matches the sources is found out only when loading."""
    if not HAVE_NUMBA:
        return False
    try:
        return any(not os.path.exists(k.dispatcher._cache._cache_file._index_path) for k in KERNELS)
    except AttributeError:  # pragma: no cover - another numba
        return False


def main() -> int:
    """Compile every kernel into numba's cache and say where it is."""
    if not HAVE_NUMBA:
        print("numba is not installed (or RNEA_ROS_NO_NUMBA is set): nothing to compile")
        return 0
    where = cache_location()
    print(f"compiling the dynamics kernels into numba's cache {where} ...", flush=True)
    done = compile_kernels()
    how = "compiled" if done.cold_cache else "already in the cache"
    print(f"kernels ready in {done.seconds:.1f} s ({how}): {where}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
