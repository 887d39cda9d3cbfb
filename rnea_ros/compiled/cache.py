"""numba's disk cache of the dynamics kernels: where it is, whether it is cold, and
`python3 -m rnea_ros.compiled.cache` to fill it (what `make` set-up and a colcon build run, so that
no first start compiles).

numba caches next to the sources when that directory is writable (a source tree, a colcon
install), else in the user's cache directory (~/.cache/numba, or $NUMBA_CACHE_DIR when set): a
read-only install compiles once per user, on that user's first start or with this command.
"""

from __future__ import annotations

import sys

from rnea_ros.compiled import pointer_kernels
from rnea_ros.compiled.entry_points import KERNELS, RNEA, compile_kernels
from rnea_ros.compiled.jit import HAVE_NUMBA, cache_is_fresh, cache_path


def cache_location() -> str:
    """The directory where numba caches the RNEA kernel of this installation ("" without numba);
    each kernel's entries sit in the __pycache__ beside its file under rnea_ros/compiled/."""
    if not HAVE_NUMBA:
        return ""
    return cache_path(RNEA.dispatcher.py_func)


def cache_is_cold() -> bool:
    """Whether some kernel or pointer kernel has no entry of the current sources in numba's cache
    (none yet, or only entries stamped with other sources: `jit.source_digest`); compile_kernels
    then compiles, tens of seconds."""
    if not HAVE_NUMBA:
        return False
    functions = [kernel.dispatcher.py_func for kernel in KERNELS]
    if pointer_kernels.AVAILABLE:
        functions += [pointer.python for pointer in pointer_kernels.POINTER_KERNELS]
    return not all(cache_is_fresh(fn) for fn in functions)


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
