"""Data: the preallocated workspace the kernels write into, Pinocchio-style.

`data = model.create_data()` (or `Data(model)`) makes one; every function of `dynamics` takes it
as `data=`. Without `data=` a function uses `model.default_data`: one per model, created on its
first use and kept for the model's lifetime. A Data holds no results and no model: it serves any
model of at most `nv` joints. It is scratch memory, so one thread at a time: threads that share a
model should each pass their own Data (the default one is shared by all users of the model).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from ._jit import HAVE_NUMBA
from .kernels import COMP_STRIDE, WS_STRIDE

if TYPE_CHECKING:
    from .model import RobotModel


class Data:
    """Workspace of the kernels for models of up to `nv` joints; not shared between threads."""

    __slots__ = ("_gravity", "comp", "nv", "ws")

    def __init__(self, model: RobotModel) -> None:
        n = model.nv
        self.nv: int = n
        # float64 arrays for the compiled kernels, plain lists for the pure-Python ones
        self.ws: Any = np.zeros(n * WS_STRIDE) if HAVE_NUMBA else [0.0] * (n * WS_STRIDE)
        self.comp: Any = np.zeros(n * COMP_STRIDE) if HAVE_NUMBA else [0.0] * (n * COMP_STRIDE)
        self._gravity: tuple[tuple | None, np.ndarray | None] = (None, None)

    @classmethod
    def _over(cls, nv: int, ws: Any, comp: Any) -> Data:
        """A Data over existing workspace arrays (a model's packed record: `RobotModel`)."""
        data = cls.__new__(cls)
        data.nv, data.ws, data.comp, data._gravity = nv, ws, comp, (None, None)
        return data

    def __repr__(self) -> str:
        return f"Data(nv={self.nv})"

    def gravity_array(self, gravity: tuple) -> np.ndarray | None:
        """A gravity tuple as the float64 array the kernels take (not checked: the kernels check
        size and finiteness); the last one is kept for the next call with an equal tuple. None
        when the tuple is not numbers."""
        key, array = self._gravity
        try:
            if gravity == key:
                return array
            array = np.array(gravity, dtype=np.float64)
        except (TypeError, ValueError):  # items that are not numbers, or arrays
            return None
        if array.ndim != 1:
            return None
        self._gravity = (gravity, array)  # one assignment: readers see the old pair or the new one
        return array
