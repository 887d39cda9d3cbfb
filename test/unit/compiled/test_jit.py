"""The pure-Python fallback (RNEA_ROS_NO_NUMBA=1) agrees with the compiled kernels; nothing compiles
before a kernel is used, and after `compile_kernels()` no call compiles anything (nothing here is
timed); arguments of any type give the same results as on the fast path."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from rnea_ros import (
    Data,
    Friction,
    RobotModel,
    compile_kernels,
    forward_dynamics,
    gravity_torques,
    jacobian,
    link_pose,
    mass_matrix,
    nonlinear_effects,
    rnea,
)
from rnea_ros.compiled import entry_points as compiled
from rnea_ros.compiled import pointer_kernels
from rnea_ros.compiled.jit import HAVE_NUMBA
from rnea_ros.control.effort_law import EffortLaw, Efforts, compute_efforts
from rnea_ros.model.example_robots import example_urdf_path

needs_numba = pytest.mark.skipif(not HAVE_NUMBA, reason="numba is not installed or is disabled")
PANDA = example_urdf_path("panda").read_text()
LINK = "panda_hand"
WRENCH = [1.0, -2.0, 3.0, 0.1, -0.2, 0.3]

# Runs in a subprocess without numba: the results for the states given on stdin, as JSON.
CHILD = """
import json, sys
import numpy as np
from rnea_ros import RobotModel, gravity_torques, jacobian, mass_matrix, rnea
from rnea_ros.compiled.jit import HAVE_NUMBA
from rnea_ros.model.example_robots import example_urdf_path

assert not HAVE_NUMBA
q, qd, qdd, gravity, wrench = (np.array(x) for x in json.load(sys.stdin))
model = RobotModel.from_urdf(example_urdf_path("panda").read_text())
out = {
    "rnea": [rnea(model, *s).tolist() for s in zip(q, qd, qdd)],
    "rnea_batch": rnea(model, q, qd, qdd, gravity=gravity).tolist(),
    "rnea_wrench": rnea(model, q, qd, qdd, wrenches={"panda_hand": wrench}).tolist(),
    "gravity": [gravity_torques(model, x, gravity=tuple(gravity)).tolist() for x in q],
    "mass": mass_matrix(model, q).tolist(),
    "jacobian": jacobian(model, q[0], "panda_hand").tolist(),
}
print(json.dumps(out))
"""


def _states(model: RobotModel, count: int = 5):
    rng = np.random.default_rng(11)
    q = rng.uniform(-2.0, 2.0, (count, model.nv))
    return q, rng.normal(0, 1.5, (count, model.nv)), rng.normal(0, 3.0, (count, model.nv))


@needs_numba
def test_fallback_matches_compiled_kernels() -> None:
    model = RobotModel.from_urdf(PANDA)
    q, qd, qdd = _states(model)
    gravity = np.array([0.3, -0.2, -9.7])
    env = {**os.environ, "RNEA_ROS_NO_NUMBA": "1"}
    stdin = json.dumps([q.tolist(), qd.tolist(), qdd.tolist(), gravity.tolist(), WRENCH])
    proc = subprocess.run(
        [sys.executable, "-c", CHILD], input=stdin, env=env, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    py = {name: np.array(v) for name, v in json.loads(proc.stdout.splitlines()[-1]).items()}
    compiled = {
        "rnea": np.array([rnea(model, *s) for s in zip(q, qd, qdd, strict=True)]),
        "rnea_batch": rnea(model, q, qd, qdd, gravity=gravity),
        "rnea_wrench": rnea(model, q, qd, qdd, wrenches={LINK: WRENCH}),
        "gravity": np.array([gravity_torques(model, x, gravity=tuple(gravity)) for x in q]),
        "mass": mass_matrix(model, q),
        "jacobian": jacobian(model, q[0], LINK),
    }
    for name, expected in compiled.items():
        assert py[name].shape == expected.shape, name
        assert np.max(np.abs(py[name] - expected)) < 1e-12, name


# Runs in a fresh interpreter: what is compiled after import, model build and a first rnea.
LAZY = """
import json
import numpy as np
from rnea_ros import RobotModel, rnea
from rnea_ros.compiled import entry_points as compiled
from rnea_ros.compiled import pointer_kernels
from rnea_ros.model.example_robots import example_urdf_path

def ready():  # the kernels compiled so far: entry points, pointer kernels, any signature numba holds
    return sorted(
        {kernel.name for kernel in compiled.KERNELS if kernel.ready}
        | {f"{kernel.name} (as a callee)" for kernel in compiled.KERNELS if kernel.signatures}
        | {f"{kernel.name} (pointer)" for kernel in pointer_kernels.POINTER_KERNELS if kernel.ready}
    )

steps = {"import": ready()}
model = RobotModel.from_urdf(example_urdf_path("panda").read_text())
steps["from_urdf"] = ready()
z = np.zeros(model.nv)
steps["rnea"] = ready()
steps["tau"] = rnea(model, z, z, z).tolist()
steps["after rnea"] = ready()
print(json.dumps(steps))
"""


@needs_numba
def test_nothing_compiles_until_a_kernel_is_used() -> None:
    proc = subprocess.run([sys.executable, "-c", LAZY], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    steps = json.loads(proc.stdout.splitlines()[-1])
    assert steps["import"] == steps["from_urdf"] == steps["rnea"] == []
    # the pointer kernel where the extension is built, else the entry point
    rnea_kernel = "rnea_packed (pointer)" if pointer_kernels.AVAILABLE else "rnea_packed_kernel"
    assert rnea_kernel in steps["after rnea"]
    assert not any(name.startswith(("gravity", "mass_matrix", "effort")) for name in steps["after rnea"])
    model = RobotModel.from_urdf(PANDA)
    z = np.zeros(model.nv)
    np.testing.assert_array_equal(steps["tau"], gravity_torques(model, z))


@needs_numba
def test_compile_kernels_readies_every_kernel_and_later_calls_compile_nothing() -> None:
    report = compile_kernels()
    assert report.numba and report.seconds >= 0.0
    assert all(kernel.ready for kernel in compiled.KERNELS)
    assert compile_kernels().cold_cache is False  # idempotent: nothing left to compile
    for kernel in compiled.KERNELS:  # each kernel's declared signature is a compiled one
        assert tuple(kernel.signature) in kernel.signatures, kernel.name
    signatures = {kernel.name: kernel.signatures for kernel in compiled.KERNELS}
    model = RobotModel.from_urdf(PANDA)
    q, qd, qdd = _states(model)
    x = q[0].copy()
    frozen = x.copy()
    frozen.flags.writeable = False
    fortran = np.asfortranarray(q)
    # every way of calling the API: one state, a batch, wrenches, gravity as tuple / list / array,
    # out=, data=, read-only, strided, integer, float32, big-endian and list arguments, a payload,
    # poses, the node's effort law
    rnea(model, x, qd[0], qdd[0])
    rnea(model, q, qd, qdd)
    rnea(model, x, qd[0], qdd[0], wrenches={LINK: WRENCH})
    rnea(model, q, qd, qdd, wrenches={LINK: WRENCH})
    rnea(model, x, x, x, gravity=(0.0, 0.0, -1.0))
    rnea(model, x, x, x, gravity=[0.0, 0.0, -1.0])
    rnea(model, x, x, x, gravity=np.array([0.0, 0.0, -1.0]), out=np.empty(model.nv), data=Data(model))
    rnea(model, frozen, frozen, frozen)
    rnea(model, fortran, fortran, fortran)
    rnea(model, fortran[0], q[0, ::-1], np.zeros(model.nv, dtype=int))
    rnea(model, x.astype(np.float32), x.astype(">f8"), x)
    rnea(model, q[0].tolist(), qd[0].tolist(), qdd[0].tolist())
    gravity_torques(model, x)
    gravity_torques(model, q)
    gravity_torques(model, frozen, gravity=(0, 0, -3))
    gravity_torques(model, fortran[0], gravity=np.array([0.0, 0.0, -1.0])[::-1])
    mass_matrix(model, x)
    mass_matrix(model, q)
    mass_matrix(model, fortran)
    mass_matrix(model, fortran[1], data=model.create_data())
    nonlinear_effects(model, x, x)
    forward_dynamics(model, x, x, x)
    link_pose(model, frozen, LINK)
    jacobian(model, x, LINK)
    heavy = model.with_payload(LINK, 1.0).with_armature(np.full(model.nv, 0.1))
    rnea(heavy, x, x, x)
    mass_matrix(heavy, q)
    efforts = Efforts(model, EffortLaw(kp=1.0, kd=0.1, friction=Friction.from_model(model)))
    compute_efforts(efforts, x, qd[0], (q[1], qd[1], qdd[1]), {LINK: WRENCH})
    assert {kernel.name: kernel.signatures for kernel in compiled.KERNELS} == signatures


def test_converted_arguments_give_the_same_result_as_contiguous_arrays() -> None:
    model = RobotModel.from_urdf(PANDA)
    q, qd, qdd = _states(model)
    expected = rnea(model, q[0], qd[0], qdd[0])
    frozen = q[0].copy()
    frozen.flags.writeable = False
    strided = np.repeat(q[0], 2)[::2]
    for args in ((frozen, qd[0], qdd[0]), (strided, qd[0], qdd[0]), (q[0].tolist(), qd[0], list(qdd[0]))):
        assert np.array_equal(rnea(model, *args), expected)
    assert np.array_equal(gravity_torques(model, strided), gravity_torques(model, q[0]))
    assert np.array_equal(mass_matrix(model, frozen), mass_matrix(model, q[0]))
    assert np.array_equal(rnea(model, np.asfortranarray(q), qd, qdd), rnea(model, q, qd, qdd))
    # dtypes the compiled entry points must never see: converted, same numbers
    assert np.array_equal(rnea(model, q[0].astype(">f8"), qd[0], qdd[0]), expected)
    single = q[0].astype(np.float32)
    widened = single.astype(float)
    assert np.array_equal(rnea(model, single, qd[0], qdd[0]), rnea(model, widened, qd[0], qdd[0]))
    row = np.asfortranarray(q)[0]  # a strided view: the entry points take any stride
    assert not row.flags.c_contiguous
    assert np.array_equal(gravity_torques(model, row), gravity_torques(model, q[0]))
    assert np.array_equal(rnea(model, row, row, row), rnea(model, q[0], q[0], q[0]))
    g = np.array([0.3, -0.2, -9.7])
    reference = rnea(model, q[0], qd[0], qdd[0], gravity=g)
    for gravity in (tuple(g), list(g), np.repeat(g, 2)[::2], tuple(g), (0.0, 0.0, -9.81), tuple(g)):
        expected = reference if np.array_equal(gravity, g) else rnea(model, q[0], qd[0], qdd[0])
        assert np.array_equal(rnea(model, q[0], qd[0], qdd[0], gravity=gravity), expected), gravity
        as_array = gravity_torques(model, q[0], gravity=np.array(gravity))
        assert np.array_equal(gravity_torques(model, q[0], gravity=gravity), as_array)


def test_bad_arguments_on_the_fast_path_still_name_the_culprit() -> None:
    model = RobotModel.from_urdf(PANDA)
    x = np.zeros(model.nv)
    bad = x.copy()
    bad[3] = np.nan
    with pytest.raises(ValueError, match="qdd contains NaN"):
        rnea(model, x, x, bad)
    with pytest.raises(ValueError, match="gravity contains NaN"):
        gravity_torques(model, x, gravity=np.array([0.0, np.inf, 0.0]))
    with pytest.raises(ValueError, match="q must have shape"):
        mass_matrix(model, np.zeros(model.nv + 1))
    with pytest.raises(ValueError, match="gravity must have shape"):
        rnea(model, x, x, x, gravity=np.zeros(4))
    with pytest.raises(ValueError, match="out must be"):
        rnea(model, x, x, x, out=np.empty(model.nv - 1))
    small = Data(RobotModel.from_urdf(example_urdf_path("ur5").read_text()))
    with pytest.raises(ValueError, match="data was made for a model with 6 joints"):
        rnea(model, x, x, x, data=small)
    with pytest.raises(ValueError, match="data was made for a model with 6 joints"):
        mass_matrix(model, x, data=small)


def test_the_stamp_is_the_contents_of_every_source_of_the_compiled_package(tmp_path) -> None:
    """`source_digest`, the stamp of every cache entry: a copy of rnea_ros/compiled/ has the same
    one; an edit of any source (a layout constant, a pointer wrapper, the C source) changes it; a
    new mtime, a cache file or a rebuilt extension does not."""
    import shutil
    from pathlib import Path

    from rnea_ros.compiled import jit

    copy = tmp_path / "compiled"
    shutil.copytree(jit.PACKAGE_DIR, copy)
    first = jit.source_digest.__wrapped__(copy)
    assert first == jit.source_digest.__wrapped__(jit.PACKAGE_DIR)
    names = {path.relative_to(copy).as_posix() for path in jit.source_files(copy)}
    assert {"jit.py", "pointer_kernels.py", "entry_points.py", "_pointer_call.c"} <= names
    assert not any("__pycache__" in name or name.endswith(".so") for name in names)
    for path in (copy / "pointer_kernels.py", copy / "_pointer_call.c"):
        os.utime(path, (0, 0))
    (copy / "__pycache__").mkdir(exist_ok=True)
    (copy / "__pycache__" / "kernels.x-1.py311.nbi").write_bytes(b"index")
    (copy / "_pointer_call.cpython-311-x86_64-linux-gnu.so").write_bytes(b"rebuilt")
    assert jit.source_digest.__wrapped__(copy) == first
    layout = next(p for p in jit.source_files(copy) if "\nB_POS = 9\n" in p.read_text())
    for path, old, new in (
        (layout, "\nB_POS = 9\n", "\nB_POS = 9 \n"),  # one byte more
        (copy / "pointer_kernels.py", "    return ", "    return  "),
        (copy / "_pointer_call.c", "#include", "#include "),
    ):
        text = path.read_text()
        path.write_text(text.replace(old, new, 1))
        assert jit.source_digest.__wrapped__(copy) != first, path.name
        path.write_text(text)
        assert jit.source_digest.__wrapped__(copy) == first
    (copy / "kernels_more.py").write_text("")  # a new source file
    assert jit.source_digest.__wrapped__(copy) != first
    assert Path(jit.__file__).parent.resolve() == jit.PACKAGE_DIR


@needs_numba
def test_every_compiled_function_is_cached_with_the_package_stamp() -> None:
    """Every numba function of the package, each pointer cfunc included, caches through
    `jit.PackageCache` (one stamp); no source of the package asks numba for a cache of its own."""
    import importlib
    import inspect
    from pathlib import Path

    import numba

    import rnea_ros
    import rnea_ros.compiled.kernels
    from rnea_ros.compiled import jit

    compile_kernels()
    kernels = Path(rnea_ros.compiled.kernels.__file__).parent
    modules = [
        importlib.import_module(f"rnea_ros.compiled.kernels.{path.stem}") for path in kernels.glob("*.py")
    ]
    members = [value for module in modules for _, value in inspect.getmembers(module)]
    dispatchers = {id(d): d for d in members if isinstance(d, numba.core.dispatcher.Dispatcher)}.values()
    assert len(dispatchers) >= 60
    assert all(type(d._cache) is jit.PackageCache for d in dispatchers)
    assert all(type(kernel.dispatcher._cache) is jit.PackageCache for kernel in compiled.KERNELS)
    if pointer_kernels.AVAILABLE:
        assert all(type(p.cfunc._cache) is jit.PackageCache for p in pointer_kernels.POINTER_KERNELS)
    own = Path(jit.__file__).resolve()
    for path in Path(rnea_ros.__file__).parent.rglob("*.py"):
        text = path.read_text()
        if path.resolve() != own:
            for call in ("numba.njit(", "numba.jit(", "numba.cfunc(", "cache=True", "@cfunc", "@jit"):
                assert call not in text, f"{path}: {call}"
