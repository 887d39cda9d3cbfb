"""Data: the preallocated workspace the kernels write into, Pinocchio-style.

`data = model.create_data()` (or `Data(model)`) makes one; every function of `dynamics` takes it
as `data=`. Without `data=` a function uses `model.default_data`: one per model, created on its
first use and kept for the model's lifetime. A Data holds no results: it serves any model of at
most `nv` joints, keeping a copy of the tree and gravity of the last one it served (and a
reference to that model's packed record) so that the next call with them passes one array. It is
scratch memory, so one thread at a time: threads that share a model should each pass their own
Data (the default one is shared by all users of the model).
"""

from __future__ import annotations

from typing import Any, Protocol

import numpy as np

from rnea_ros.compiled.jit import HAVE_NUMBA
from rnea_ros.compiled.kernels.layout import (
    COMP_STRIDE,
    PK_TREE,
    TREE_STRIDE,
    WS_STRIDE,
    packed_size,
    packed_slices,
)


class SizedModel(Protocol):
    """What a Data needs of its model (a `RobotModel`): the number of joints, nv."""

    @property
    def nv(self) -> int: ...


_NO_GRAVITY = object()


class Data:
    """Workspace of the kernels for models of up to `nv` joints; not shared between threads.

    With numba it is one packed record, `record` (see `kernels.layout`), holding besides the
    workspace the tree and the gravity of the last model and gravity it served (`packed_for`):
    `source` is that model's `kernel_record`, `gravity_key` that gravity tuple; a call with `data=`
    then passes the compiled kernel one array, as the default path does. Fields for
    `rnea_ros.algorithms.dynamics`: read them, never write them."""

    __slots__ = ("_gravity_slot", "comp", "gravity_key", "nv", "record", "source", "wrench_layout", "ws")

    def __init__(self, model: SizedModel) -> None:
        n = model.nv
        self.nv: int = n
        self.source: np.ndarray | None = None  # the packed record of the model whose tree is copied in
        # the gravity tuple the record holds; _NO_GRAVITY (no argument is that object) until one is
        # set, so that `gravity is data.gravity_key` never takes an unset slot (gravity=None)
        self.gravity_key: Any = _NO_GRAVITY
        self._gravity_slot = slice(0, 0)
        self.record: np.ndarray | None = None
        # (model's packed record, link names, kernel wrench arrays, (link, slot) to fill): `dynamics`
        self.wrench_layout: tuple | None = None
        if HAVE_NUMBA:  # float64 arrays for the compiled kernels: views of the packed record
            self.record = np.zeros(packed_size(n))
            _, _, ws, comp = packed_slices(n)
            self.ws: Any = self.record[ws]
            self.comp: Any = self.record[comp]
        else:  # plain lists for the pure-Python ones
            self.ws = [0.0] * (n * WS_STRIDE)
            self.comp = [0.0] * (n * COMP_STRIDE)

    def packed_for(self, source: np.ndarray, n: int, gravity: Any) -> np.ndarray | None:
        """This Data's packed record holding the tree of the model whose packed record is `source`
        (`model.kernel_args`: n = its nv <= self.nv, not checked) and, when `gravity` is a tuple
        (the default one too), that gravity; None when the tuple is not 3 numbers (the caller's
        checked path names it) or without numba. The tree is copied when the model changes, a
        tuple converted when it differs from the last one; finiteness is the kernels' check.
        Any other gravity is left as it is (the caller passes it to the kernel itself)."""
        packed = self.record
        if self.source is not source:
            if packed is None:
                return None
            end = PK_TREE + n * TREE_STRIDE  # the count, then the tree records
            packed[:end] = source[:end]
            self.source, self.gravity_key = source, _NO_GRAVITY
            self._gravity_slot = slice(end, end + 3)
        if gravity is self.gravity_key or type(gravity) is not tuple:  # same object: the default
            return packed
        if gravity == self.gravity_key:
            self.gravity_key = gravity  # an equal tuple: the next call with it is an identity check
            return packed
        try:
            g = np.array(gravity, dtype=np.float64)
        except (TypeError, ValueError):
            return None
        if g.shape != (3,):
            return None
        packed[self._gravity_slot] = g  # type: ignore[index]
        self.gravity_key = gravity
        return packed
