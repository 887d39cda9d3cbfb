"""The flat memory layout is consistent (fields tile their records, the packed record tiles its
array), and the kernels' rotations match an independent numpy computation for joints about +x,
+y, +z (the special cases) and about tilted axes (the general Rodrigues formula)."""

from __future__ import annotations

import numpy as np
import pytest

from rnea_ros.compiled.entry_points import JOINT_TRANSFORMS
from rnea_ros.compiled.jit import HAVE_NUMBA
from rnea_ros.compiled.kernels.layout import (
    B_ARMATURE,
    B_AXIS,
    B_INERTIA,
    B_MASS,
    B_MOMENT,
    B_POS,
    B_ROT,
    BODY_STRIDE,
    C_INERTIA,
    C_MASS,
    C_MOMENT,
    COMP_STRIDE,
    JTYPE,
    PARENT,
    PK_N,
    REVOLUTE,
    TREE_STRIDE,
    W_ACC,
    W_ALPHA,
    W_FORCE,
    W_MOMENT,
    W_OMEGA,
    W_POS,
    W_ROT,
    W_ROT_ROOT,
    WR_FORCE,
    WR_MOMENT,
    WR_ORIGIN,
    WRENCH_STRIDE,
    WS_STRIDE,
    packed_size,
    packed_slices,
)


def _tiles(fields: list[tuple[int, int]], stride: int) -> bool:
    """Whether (offset, size) fields cover [0, stride) exactly once, in order."""
    end = 0
    for offset, size in sorted(fields):
        if offset != end:
            return False
        end = offset + size
    return end == stride


def test_records_are_tiled_by_their_fields() -> None:
    body = [(B_ROT, 9), (B_POS, 3), (B_AXIS, 3), (B_MASS, 1), (B_MOMENT, 3), (B_INERTIA, 6)]
    assert _tiles([*body, (B_ARMATURE, 1)], BODY_STRIDE)
    assert _tiles([(0, BODY_STRIDE), (PARENT, 1), (JTYPE, 1)], TREE_STRIDE)
    ws = [(W_ROT, 9), (W_POS, 3), (W_OMEGA, 3), (W_ALPHA, 3), (W_ACC, 3)]
    assert _tiles([*ws, (W_FORCE, 3), (W_MOMENT, 3), (W_ROT_ROOT, 9)], WS_STRIDE)
    comp = [(C_MASS, 1), (C_MOMENT, 3), (C_INERTIA, 6)]
    assert _tiles(comp, COMP_STRIDE)
    # the composite record is the body record's mass, first moment, inertia: copied as a block
    assert (C_MOMENT - C_MASS, C_INERTIA - C_MASS) == (B_MOMENT - B_MASS, B_INERTIA - B_MASS)
    assert _tiles([(WR_ORIGIN, 3), (WR_FORCE, 3), (WR_MOMENT, 3), (9, 3)], WRENCH_STRIDE)


@pytest.mark.parametrize("n", [0, 1, 9, 32])
def test_packed_record_is_tiled_by_its_slices(n: int) -> None:
    slices = packed_slices(n)
    fields = [(PK_N, 1)] + [(s.start, s.stop - s.start) for s in slices]
    assert _tiles(fields, packed_size(n))
    sizes = [s.stop - s.start for s in slices]
    assert sizes == [n * TREE_STRIDE, 3, n * WS_STRIDE, n * COMP_STRIDE]


def _rodrigues(axis: np.ndarray, angle: float) -> np.ndarray:
    a = axis / np.linalg.norm(axis)
    skew = np.array([[0.0, -a[2], a[1]], [a[2], 0.0, -a[0]], [-a[1], a[0], 0.0]])
    return np.eye(3) + np.sin(angle) * skew + (1.0 - np.cos(angle)) * skew @ skew


def _random_rotation(rng: np.random.Generator) -> np.ndarray:
    q, r = np.linalg.qr(rng.normal(size=(3, 3)))
    q = q @ np.diag(np.sign(np.diag(r)))
    return q if np.linalg.det(q) > 0 else -q


# the special cases +x, +y, +z, then through the general formula: -z and tilted axes
AXES = [(1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0), (0.0, 0.0, -1.0), (0.6, 0.0, 0.8), (1, 2, -2)]


def test_joint_rotations_match_rodrigues_for_principal_and_tilted_axes() -> None:
    rng = np.random.default_rng(17)
    axes = [np.array(a) / np.linalg.norm(a) for a in AXES]
    n = len(axes) * 4
    tree = np.zeros((n, TREE_STRIDE))
    placements, angles = [], rng.uniform(-4.0, 4.0, n)
    for i in range(n):
        rot, axis = _random_rotation(rng), axes[i % len(axes)]
        placements.append(rot)
        tree[i, B_ROT : B_ROT + 9] = rot.reshape(9)
        tree[i, B_POS : B_POS + 3] = rng.normal(size=3)
        tree[i, B_AXIS : B_AXIS + 3] = axis
        tree[i, PARENT] = i - 1
        tree[i, JTYPE] = REVOLUTE
    flat = tree.reshape(-1)
    ws = np.zeros(n * WS_STRIDE)
    if HAVE_NUMBA:
        JOINT_TRANSFORMS.call(flat, angles, ws)
    else:
        ws = [0.0] * (n * WS_STRIDE)
        JOINT_TRANSFORMS.call(flat.tolist(), angles.tolist(), ws)
    rec = np.asarray(ws).reshape(n, WS_STRIDE)
    for i in range(n):
        expected = placements[i] @ _rodrigues(axes[i % len(axes)], angles[i])
        got = rec[i, W_ROT : W_ROT + 9].reshape(3, 3)
        assert np.max(np.abs(got - expected)) < 1e-14, AXES[i % len(AXES)]
        np.testing.assert_array_equal(rec[i, W_POS : W_POS + 3], tree[i, B_POS : B_POS + 3])
