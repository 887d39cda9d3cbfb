"""Optional numba compilation: `njit` and `cfunc` compile where numba is installed (`njit` returns
the function itself without it), every one of them cached on disk under one stamp.

Set RNEA_ROS_NO_NUMBA=1 to force the pure-Python path (the same source runs either way). Nothing
here compiles: numba compiles a kernel on its first call, or when `rnea_ros.compile_kernels()`
asks for it (see `rnea_ros.compiled.entry_points`).

**One stamp.** numba stamps a cache entry with the file that defines the function, so a caller
cached in one file does not see an edit to a kernel it calls in another: its cached machine code
has the old callee (and the old layout constants) compiled in. Every compiled function of this
package is therefore cached with `PackageCache`, whose stamp (`stamp()`) is a digest of
every source file under `rnea_ros/compiled/` (the kernels, the layout constants, the pointer
wrappers, the C source). An edit of any of them makes every cache entry stale: each kernel
compiles again on its next use. Nothing else does: the digest is of the contents, so a checkout
or a copy that leaves them as they are keeps the cache. Where the cache lives is numba's choice
as before: $NUMBA_CACHE_DIR when set, else next to the sources when writable, else the user's
cache directory. test/unit/compiled/test_stale_cache.py edits a copy of the package and checks
every public path.

**The sources as loaded.** The stamp is the digest of the sources when this process began loading
them (computed as this module is imported, before any kernel module), not when it first saves:
a process that loaded the old kernels and compiled them after a `git pull` or a merge had changed
the files would otherwise store its old machine code under the new sources' stamp, for every
later process to load (it happened: a node ran a stale effort law and the arm drifted 200°). Each
module that defines compiled functions is checked as it does: when the files no longer match the
digest taken at import, the process's stamp becomes one of its own (`stamp()`), so that nothing it
compiles is loaded by another process and it loads nothing either.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any, TypeVar, cast

F = TypeVar("F", bound=Callable[..., Any])

PACKAGE_DIR = Path(__file__).resolve().parent  # rnea_ros/compiled, the sources the stamp covers
SOURCE_SUFFIXES = (".py", ".pyi", ".c")

numba: Any
try:
    if os.environ.get("RNEA_ROS_NO_NUMBA", "") not in ("", "0"):
        raise ImportError("disabled by RNEA_ROS_NO_NUMBA")
    import numba

    HAVE_NUMBA = True
except ImportError:  # pragma: no cover - exercised with RNEA_ROS_NO_NUMBA=1
    numba = None
    HAVE_NUMBA = False


def source_files(root: Path = PACKAGE_DIR) -> list[Path]:
    """The source files under `root` the stamp covers (not the caches, not the built extension),
    in a fixed order."""
    return sorted(
        path
        for path in root.rglob("*")
        if path.suffix in SOURCE_SUFFIXES and "__pycache__" not in path.relative_to(root).parts
    )


@cache
def source_digest(root: Path = PACKAGE_DIR) -> str:
    """SHA-256 over the relative path and the bytes of each of `source_files(root)` (computed
    once per process; the cache's stamp is `stamp()`)."""
    return _digest_now(root)


def _digest_now(root: Path = PACKAGE_DIR) -> str:
    digest = hashlib.sha256()
    for path in source_files(root):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()


class _Loaded:
    """The digest of the sources as this process loaded them, and whether they changed since."""

    digest = _digest_now()
    checked: set[str] = set()  # the modules whose compiled functions were checked against it
    changed = False


def check_unchanged(module: str) -> None:
    """As `module` defines its compiled functions (once per module): whether the sources still
    match the digest taken when this process began loading them (else `stamp()` is its own)."""
    if module in _Loaded.checked:
        return
    _Loaded.checked.add(module)
    if not _Loaded.changed and _digest_now() != _Loaded.digest:
        _Loaded.changed = True


def stamp() -> str:
    """The stamp of this process's cache entries: the digest of the sources as it loaded them, or,
    when they changed while it loaded them, a stamp no other process has (see the module doc)."""
    if _Loaded.changed:
        return f"{_Loaded.digest}+changed-while-loading:{os.getpid()}:{id(_Loaded)}"
    return _Loaded.digest


PackageCache: Any = None
if HAVE_NUMBA:
    from numba.core import caching as _caching
    from numba.core import sigutils as _sigutils
    from numba.core.ccallback import CFunc as _CFunc

    class _PackageStamp:
        """A numba cache locator's stamp replaced by the package's (`stamp`)."""

        def get_source_stamp(self) -> str:
            return stamp()

    class _UserProvidedLocator(_PackageStamp, _caching.UserProvidedCacheLocator):
        pass

    class _InTreeLocator(_PackageStamp, _caching.InTreeCacheLocator):
        pass

    class _UserWideLocator(_PackageStamp, _caching.UserWideCacheLocator):
        pass

    class _PackageCacheImpl(_caching.CompileResultCacheImpl):
        # numba's own locators in numba's order ($NUMBA_CACHE_DIR, next to the sources, the
        # user's cache), each with the package's stamp
        _locator_classes = [_UserProvidedLocator, _InTreeLocator, _UserWideLocator]

    class _PackageCache(_caching.FunctionCache):
        """numba's per-function disk cache (the one `cache=True` makes), with the package's stamp."""

        _impl_class = _PackageCacheImpl

        def is_fresh(self) -> bool:
            """Whether the index holds entries of the current sources (a stale index is empty)."""
            return bool(self._cache_file._load_index())

    PackageCache = _PackageCache


def _cached(compiled: Any, fn: Callable[..., Any]) -> Any:
    """`compiled` (a dispatcher or a cfunc, not compiled yet) caching with `PackageCache`: what
    numba's `cache=True` does (`enable_caching`), with the package's stamp."""
    check_unchanged(fn.__module__)
    compiled._cache = PackageCache(fn)
    return compiled


def njit(fn: F) -> F:
    """Compile `fn` with numba (cached on disk with the package's stamp, no Python objects) when
    available."""
    if HAVE_NUMBA:
        return cast(F, _cached(numba.njit(fastmath=False, boundscheck=False)(fn), fn))
    return fn


def njit_inline(fn: F) -> F:
    """`njit`, and inlined into the kernels that call it (numba IR inlining: no call, and no
    reference counting of the arrays passed); for the small steps the passes are made of."""
    if HAVE_NUMBA:
        return cast(F, _cached(numba.njit(fastmath=False, boundscheck=False, inline="always")(fn), fn))
    return fn


def cfunc(signature: Any, fn: Callable[..., Any]) -> Any:
    """`fn` compiled now as a C callback of `signature` (numba's `cfunc(signature, cache=True)`,
    with the package's stamp: loaded from the cache when it holds it). numba is required."""
    compiled = _cached(_CFunc(fn, _sigutils.normalize_signature(signature), {}, {}), fn)
    compiled.compile()
    return compiled


def cache_is_fresh(fn: Callable[..., Any]) -> bool:
    """Whether the package's cache holds compiled code of the current sources for `fn` (a Python
    function; False without numba)."""
    if not HAVE_NUMBA:
        return False
    return bool(PackageCache(fn).is_fresh())


def cache_path(fn: Callable[..., Any]) -> str:
    """The directory where the package's cache keeps `fn` (a Python function; "" without numba)."""
    if not HAVE_NUMBA:
        return ""
    return str(PackageCache(fn).cache_path)
