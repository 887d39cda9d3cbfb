"""Fuzzing the dynamics API with arbitrary numbers: a finite result or a ValueError, nothing else."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from rnea_ros import RobotModel, gravity_torques, mass_matrix, rnea
from rnea_ros.robots import example_urdf_path

MODEL = RobotModel.from_urdf(example_urdf_path("ur5").read_text())
ANY = st.floats(allow_nan=True, allow_infinity=True, width=64)
VECTOR = hnp.arrays(np.float64, st.integers(0, 8), elements=ANY)


def finite_or_value_error(fn, *args, **kwargs) -> None:
    try:
        result = fn(*args, **kwargs)
    except ValueError as exc:
        assert str(exc)
        return
    assert np.all(np.isfinite(result))


@settings(max_examples=300, deadline=None)
@given(VECTOR, VECTOR, VECTOR, hnp.arrays(np.float64, st.integers(2, 4), elements=ANY))
def test_rnea_arbitrary_arrays(q, qd, qdd, gravity) -> None:
    finite_or_value_error(rnea, MODEL, q, qd, qdd, gravity=gravity)
    finite_or_value_error(gravity_torques, MODEL, q, gravity=gravity)
    finite_or_value_error(mass_matrix, MODEL, q)


def test_overflowing_result_raises_value_error() -> None:
    zeros = np.zeros(MODEL.nv)
    huge = np.full(MODEL.nv, 1e200)
    for kwargs in ({}, {"wrenches": {"ee_link": [0.0] * 6}}):
        with pytest.raises(ValueError, match="result is not finite"):
            rnea(MODEL, zeros, huge, zeros, **kwargs)


@settings(max_examples=200, deadline=None)
@given(st.lists(ANY, min_size=0, max_size=8), st.sampled_from(["ee_link", "wrist_3_link", "nope", "world"]))
def test_rnea_arbitrary_wrenches(wrench, link) -> None:
    zeros = np.zeros(MODEL.nv)
    finite_or_value_error(rnea, MODEL, zeros, zeros, zeros, wrenches={link: wrench})
