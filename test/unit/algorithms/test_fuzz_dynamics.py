"""Fuzzing the dynamics API with arbitrary numbers: a finite result or a ValueError, nothing else;
and where the arguments make sense, the result Pinocchio gives.

Most examples share one length for q, q̇, q̈ (usually the model's), so that the kernels run on
them: independent lengths would make nearly every example a shape error.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from pinref import PinRef

from rnea_ros import RneaError, gravity_torques, mass_matrix, rnea

REF = PinRef("ur5")
MODEL = REF.model
ANY = st.floats(allow_nan=True, allow_infinity=True, width=64)
MODERATE = st.floats(-20.0, 20.0)
DTYPES = st.sampled_from([np.float64, np.float64, np.float64, np.float32, np.int64, ">f8"])


@st.composite
def states(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(q, qd, qdd, gravity): 9 in 10 times one shared shape, the model's 4 in 5 of those, with a
    batch axis 1 in 5; values moderate or anything; dtypes and layouts mostly float64 vectors."""
    n = MODEL.nv
    if draw(st.integers(0, 9)) < 9:
        length = n if draw(st.integers(0, 4)) else draw(st.integers(0, 8))
        shape: tuple[int, ...] = (length,) if draw(st.integers(0, 4)) else (draw(st.integers(0, 3)), length)
        shapes = [shape] * 3
    else:
        shapes = [(draw(st.integers(0, 8)),) for _ in range(3)]
    elements = draw(st.sampled_from([MODERATE, MODERATE, ANY]))
    arrays = []
    for s in shapes:
        a = draw(hnp.arrays(np.float64, s, elements=elements))
        a = a.astype(draw(DTYPES)) if np.all(np.isfinite(a)) and np.all(np.abs(a) < 2**53) else a
        arrays.append(a[::-1] if a.ndim == 1 and draw(st.booleans()) else a)  # a strided view
    g_len = 3 if draw(st.integers(0, 4)) else draw(st.integers(2, 4))
    gravity = draw(hnp.arrays(np.float64, g_len, elements=elements))
    return arrays[0], arrays[1], arrays[2], gravity


def finite_or_value_error(fn, *args, **kwargs) -> np.ndarray | None:
    try:
        result = fn(*args, **kwargs)
    except ValueError as exc:
        assert isinstance(exc, RneaError), exc
        assert str(exc)
        return None
    assert np.all(np.isfinite(result))
    return result


def _sensible(*arrays: np.ndarray) -> bool:
    """Arguments of the model's shape, finite and moderate: the result must be Pinocchio's."""
    return all(a.shape == (MODEL.nv,) and np.all(np.abs(a) <= 20.0) for a in arrays[:3]) and (
        arrays[3].shape == (3,) and np.all(np.abs(arrays[3]) <= 20.0)
    )


@settings(max_examples=300, deadline=None)
@given(states())
def test_rnea_arbitrary_arrays(state) -> None:
    q, qd, qdd, gravity = state
    tau = finite_or_value_error(rnea, MODEL, q, qd, qdd, gravity=gravity)
    g = finite_or_value_error(gravity_torques, MODEL, q, gravity=gravity)
    m = finite_or_value_error(mass_matrix, MODEL, q)
    event("rnea returned" if tau is not None else "rnea raised")
    if _sensible(q, qd, qdd, gravity):
        event("compared with Pinocchio")
        x, xd, xdd = (np.asarray(a, dtype=float) for a in (q, qd, qdd))
        assert tau is not None and g is not None and m is not None
        REF.pin.gravity.linear = np.asarray(gravity, dtype=float)
        try:
            expected_tau = REF.rnea(x, xd, xdd)
            expected_g = REF.rnea(x, 0 * x, 0 * x)
        finally:
            REF.pin.gravity.linear = np.array([0.0, 0.0, -9.81])
        scale = 1.0 + np.max(np.abs(expected_tau))
        assert np.max(np.abs(tau - expected_tau)) < 1e-9 * scale
        assert np.max(np.abs(g - expected_g)) < 1e-9 * (1.0 + np.max(np.abs(expected_g)))
        assert np.max(np.abs(m - REF.mass(x))) < 1e-9


def test_overflowing_result_raises_value_error() -> None:
    zeros = np.zeros(MODEL.nv)
    huge = np.full(MODEL.nv, 1e200)
    for kwargs in ({}, {"wrenches": {"ee_link": [0.0] * 6}}):
        with pytest.raises(RneaError, match="result is not finite"):
            rnea(MODEL, zeros, huge, zeros, **kwargs)


@settings(max_examples=200, deadline=None)
@given(st.lists(ANY, min_size=0, max_size=8), st.sampled_from(["ee_link", "wrist_3_link", "nope", "world"]))
def test_rnea_arbitrary_wrenches(wrench, link) -> None:
    zeros = np.zeros(MODEL.nv)
    finite_or_value_error(rnea, MODEL, zeros, zeros, zeros, wrenches={link: wrench})
