"""The pointer kernels (rnea_ros.compiled.pointer_kernels and the C extension _pointer_call): the
kernel runs only on vectors it is compiled for, gives Pinocchio's numbers, and the package without
the extension gives bitwise the same results."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest
from pinref import PinRef

from rnea_ros.compiled import pointer_kernels as pk
from rnea_ros.compiled.jit import HAVE_NUMBA
from rnea_ros.compiled.kernels.layout import BAD_SIZE, OK, WRENCH_STRIDE

pytestmark = pytest.mark.skipif(not HAVE_NUMBA, reason="numba disabled (RNEA_ROS_NO_NUMBA)")
REF = PinRef("ur5")
N = REF.model.nv


def _state(seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    q, qd, qdd = (rng.normal(size=N) for _ in range(3))
    return q, qd, qdd


def test_the_extension_is_built_and_used() -> None:
    # `make` set-up builds it (setup.py); without it every call takes the numba entry points
    assert pk.AVAILABLE, "rnea_ros.compiled._pointer_call is not built: run `make` set-up (needs gcc)"
    q, qd, qdd = _state(0)
    _, packed = REF.model.kernel_args
    tau = np.full(N, 7.0)
    assert pk.RNEA_PACKED.call(packed, q, qd, qdd, tau) == OK
    np.testing.assert_allclose(tau, REF.rnea(q, qd, qdd), rtol=1e-12, atol=1e-9)
    for kernel in pk.POINTER_KERNELS:  # every one compiles (a failure would leave the entry points)
        kernel.compile()
        assert kernel.ready and kernel.cfunc is not None and not kernel.error, kernel.name


def test_only_the_vectors_a_kernel_is_compiled_for_reach_it() -> None:
    """Anything else answers None and nothing is written: the caller's checked path converts it
    or names it."""
    q, qd, qdd = _state(1)
    _, packed = REF.model.kernel_args
    frozen_q = q.copy()
    frozen_q.flags.writeable = False
    wide = np.zeros(2 * N)
    refused = {
        "list": q.tolist(),
        "int64": np.arange(N),
        "float32": q.astype(np.float32),
        "big-endian": q.astype(">f8"),
        "2-D": q.reshape(1, N),
        "strided": wide[::2],
        "subclass": q.view(np.matrix),
        "0-d": np.float64(1.0),
        "None": None,
    }
    for what, bad in refused.items():
        tau = np.full(N, 7.0)
        assert pk.RNEA_PACKED.call(packed, bad, qd, qdd, tau) is None, what
        assert pk.RNEA_PACKED.call(packed, q, qd, bad, tau) is None, what
        np.testing.assert_array_equal(tau, 7.0, err_msg=what)
    read_only = np.empty(N)
    read_only.flags.writeable = False
    assert pk.RNEA_PACKED.call(packed, q, qd, qdd, read_only) is None  # the result must be writeable
    tau = np.empty(N)
    assert pk.RNEA_PACKED.call(packed, frozen_q, qd, qdd, tau) == OK  # read-only inputs are fine
    np.testing.assert_allclose(tau, REF.rnea(q, qd, qdd), rtol=1e-12, atol=1e-9)
    # sizes are the kernel's to check: its status, nothing written beyond the vectors
    assert pk.RNEA_PACKED.call(packed, q[:-1], qd, qdd, tau) == BAD_SIZE
    # an int64 position takes int64 only
    wrench_body = np.zeros(1, dtype=np.int64)
    wrench_data = np.zeros(WRENCH_STRIDE)
    args = (packed, q, qd, qdd)
    assert pk.RNEA_PACKED_WRENCH.call(*args, wrench_body.astype(float), wrench_data, tau) is None
    # exactly the kernel's vectors, no fewer (it would read past them), no more
    with pytest.raises(TypeError, match="5 vectors, got 0"):
        pk.RNEA_PACKED.call()
    with pytest.raises(TypeError, match="5 vectors, got 4"):
        pk.RNEA_PACKED.call(packed, q, qd, tau)
    with pytest.raises(TypeError, match="5 vectors, got 6"):
        pk.RNEA_PACKED.call(packed, q, qd, qdd, qdd, tau)


def test_given_its_length_the_kernel_returns_a_new_result_or_none() -> None:
    q, qd, qdd = _state(2)
    _, packed = REF.model.kernel_args
    first = pk.RNEA_PACKED.call(packed, q, qd, qdd, N)
    second = pk.RNEA_PACKED.call(packed, q, qd, qdd, N)
    assert isinstance(first, np.ndarray) and first.dtype == np.float64 and first.shape == (N,)
    assert first is not second
    np.testing.assert_allclose(first, REF.rnea(q, qd, qdd), rtol=1e-12, atol=1e-9)
    nan_q = q.copy()
    nan_q[3] = np.nan
    assert pk.RNEA_PACKED.call(packed, nan_q, qd, qdd, N) is None  # NOT_FINITE
    assert pk.RNEA_PACKED.call(packed, q, qd, qdd, N + 1) is None  # BAD_SIZE
    assert pk.RNEA_PACKED.call(packed, q, qd, qdd, -1) is None
    g = pk.GRAVITY_PACKED.call(packed, q, N)
    np.testing.assert_allclose(g, REF.rnea(q, 0 * q, 0 * q), rtol=1e-12, atol=1e-9)


def test_one_link_wrench_is_copied_by_the_kernel_and_checked_for_size() -> None:
    from rnea_ros import rnea

    model = REF.model
    q, qd, qdd = _state(3)
    w = np.array([1.0, -2.0, 3.0, 0.5, -0.25, 0.125])
    data = model.create_data()
    got = rnea(model, q, qd, qdd, wrenches={"ee_link": w}, data=data)
    want = rnea(model, q.tolist(), qd.tolist(), qdd.tolist(), wrenches={"ee_link": w.tolist()})
    np.testing.assert_array_equal(got, want)  # the same kernel: bitwise
    jac = REF.jacobian(q, "ee_link")
    np.testing.assert_allclose(got, REF.rnea(q, qd, qdd) + jac.T @ w, rtol=1e-9, atol=1e-9)
    with pytest.raises(ValueError, match="ee_link"):
        rnea(model, q, qd, qdd, wrenches={"ee_link": w[:5]}, data=data)


FORMS = """
import json, sys
import numpy as np
from rnea_ros import RobotModel, gravity_torques, rnea
from rnea_ros.compiled import pointer_kernels
from rnea_ros.model.example_robots import example_urdf_path
out = {"available": pointer_kernels.AVAILABLE}
robots = (("ur5", "ee_link", "fixed"), ("panda", "panda_hand", "fixed"), ("talos", None, "floating"))
for name, tip, root in robots:
    model = RobotModel.from_urdf(example_urdf_path(name).read_text(), root_joint=root)
    rng = np.random.default_rng(4)
    q = rng.normal(size=model.nq)
    if root == "floating":
        q[3:7] /= np.linalg.norm(q[3:7])
    qd, qdd = rng.normal(size=model.nv), rng.normal(size=model.nv)
    data = model.create_data()
    rows = [rnea(model, q, qd, qdd), gravity_torques(model, q)]
    if root == "fixed":
        rows += [
            rnea(model, q, qd, qdd, gravity=(0.1, 0.2, -9.0)),
            rnea(model, q, qd, qdd, gravity=np.array([0.1, 0.2, -9.0]), data=data),
            rnea(model, q, qd, qdd, data=data, out=np.empty(model.nv)),
            rnea(model, q, qd, qdd, wrenches={tip: np.arange(6.0)}, data=data),
            gravity_torques(model, q, gravity=(0.0, 1.0, -3.0), data=data),
        ]
    out[name] = [r.tolist() for r in rows]
print(json.dumps(out))
"""


def test_without_the_extension_every_form_gives_bitwise_the_same_numbers() -> None:
    def run(no_pointer: str) -> dict:
        env = {**os.environ, "RNEA_ROS_NO_POINTER_CALL": no_pointer}
        argv = [sys.executable, "-c", FORMS]
        proc = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=600)
        assert proc.returncode == 0, proc.stderr
        return json.loads(proc.stdout.splitlines()[-1])

    with_pointer, without = run("0"), run("1")
    assert with_pointer.pop("available") is True and without.pop("available") is False
    assert with_pointer == without


def test_a_tuple_of_numbers_is_a_vector_but_never_the_result() -> None:
    """A tuple of at most 6 floats or ints goes to the kernel as the vector of its numbers (the
    gravity of the one-state calls, with no Data to hold it): the same result as the array;
    a tuple of anything else, a longer one, one in an int64 position or as the result: None."""
    q, qd, qdd = _state(4)
    _, packed = REF.model.kernel_args
    gravity = (0.5, -1.25, -9.5)
    want = np.empty(N)
    assert pk.RNEA_PACKED_GRAVITY.call(packed, q, qd, qdd, np.array(gravity), want) == OK
    for given in (gravity, (0.5, -1.25, -9.5)):
        got = pk.RNEA_PACKED_GRAVITY.call(packed, q, qd, qdd, given, N)
        np.testing.assert_array_equal(got, want)
    g = pk.GRAVITY_PACKED_GRAVITY.call(packed, q, (0, 0, -10), N)  # ints
    np.testing.assert_allclose(g, REF.nle(q, 0 * q, gravity=(0.0, 0.0, -10.0)), rtol=1e-12, atol=1e-9)
    assert pk.RNEA_PACKED_GRAVITY.call(packed, q, qd, qdd, (0.0, 0.0), N) is None  # BAD_SIZE from the kernel
    for bad in ((0.0, "x", 1.0), (0.0, None, 1.0), (0.0,) * 7, [0.0, 0.0, -9.81], (0.0, 0.0, 10**400)):
        assert pk.RNEA_PACKED_GRAVITY.call(packed, q, qd, qdd, bad, N) is None, bad
    assert pk.GRAVITY_PACKED.call(packed, tuple(q), np.empty(N)) == OK  # q as a tuple too (6 numbers)
    assert pk.GRAVITY_PACKED.call(packed, q, (0.0,) * N) is None  # never the result
    wrench_data = np.zeros(WRENCH_STRIDE)
    assert pk.RNEA_PACKED_WRENCH.call(packed, q, qd, qdd, (0,), wrench_data, N) is None  # int64 position
