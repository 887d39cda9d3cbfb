"""numba's disk cache cannot run stale code: every compiled function of the package (the kernels,
the pointer cfuncs) is cached under one stamp, a digest of all of rnea_ros/compiled/
(`jit.source_digest`), so that an edit anywhere there reaches every public path on the next run.

In a scratch copy of the package with a warm cache (the copy's own, next to its sources), one
edit, then a new process runs every public path: `rnea`, `gravity_torques` and `mass_matrix` (the
default pointer path, a Data and a gravity, a wrench, the checked path, batches, a free-flyer
root), the pointer kernels and the entry points called directly, and the node's cycle
(`compute_efforts`, `cycle_kernel`); again with RNEA_ROS_NO_POINTER_CALL=1 (the entry points
behind the public functions). The edits:

(a) a layout constant: the body record's B_POS and B_AXIS offsets swapped. The physics is
    unchanged, so every path must give the unedited numbers (Pinocchio's); code compiled for the
    old layout reads an axis as an origin.
(b) a kernel the pointer cfuncs call (`joint_transforms`, through `rnea_packed_kernel` and the
    others): joint 1's angle offset by 0.5 rad, so every path must give the numbers of q + 0.5 e₁.
(c) a kernel only the node's cycle calls (`friction_kernel`): 0.25 added to each joint's friction
    term, so the cycle's friction row and total move by 0.25 and nothing else changes.

Before the one stamp (numba's stamp is the defining file's), (a) and (b) left the pointer cfuncs of
pointer_kernels.py on their old compiled code: `rnea` returned the unedited numbers.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest
from pinref import sym

import rnea_ros
from rnea_ros import RobotModel, gravity_torques, mass_matrix, rnea
from rnea_ros.compiled.jit import HAVE_NUMBA
from rnea_ros.control.effort_law import EffortLaw, Efforts, compute_efforts
from rnea_ros.friction.model import Friction
from rnea_ros.model.example_robots import example_urdf_path
from rnea_ros.ros.processes import die_with_parent

pytestmark = pytest.mark.skipif(not HAVE_NUMBA, reason="numba is not installed")

ROBOT = "ur5"
TIP = "tool0"
Q = [0.3, -0.9, 1.2, -0.4, 0.8, 0.2]
QD = [0.4, -0.3, 0.5, 0.2, -0.6, 0.1]
QDD = [1.0, -0.5, 0.7, -1.2, 0.4, 0.9]
Q_DES = [0.35, -0.85, 1.1, -0.45, 0.75, 0.25]
WRENCH = [3.0, -2.0, 5.0, 0.4, -0.3, 0.2]  # the tip's wrench on its environment, root axes
GRAVITY = (0.5, -0.3, -9.7)
BASE = [0.1, -0.2, 0.3, 0.0, 0.0, 0.0, 1.0]  # free-flyer position and quaternion (x y z w)
BASE_V = [0.2, -0.1, 0.3, 0.1, 0.2, -0.3]
BASE_A = [0.5, 0.2, -0.4, 0.3, -0.2, 0.1]
SHIFT = 0.5  # edit (b): rad added to joint 1
EXTRA = 0.25  # edit (c): N m added to each joint's friction term

# Every public path, one state each, as JSON (run by a new interpreter on the copy).
RUN = """
import json, os, sys
import numpy as np
import rnea_ros
from rnea_ros import RobotModel, gravity_torques, mass_matrix, rnea
from rnea_ros.compiled import entry_points, pointer_kernels
from rnea_ros.control.effort_law import EffortLaw, Efforts, compute_efforts
from rnea_ros.friction.model import Friction
from rnea_ros.model.example_robots import example_urdf_path

Q, QD, QDD, Q_DES, WRENCH, GRAVITY, BASE, BASE_V, BASE_A, TIP = json.loads(sys.argv[1])
q, qd, qdd, q_des, w = (np.array(x) for x in (Q, QD, QDD, Q_DES, WRENCH))
text = example_urdf_path("ur5").read_text()
model = RobotModel.from_urdf(text)
free = RobotModel.from_urdf(text, root_joint="floating")
fq, fv, fa = np.array(BASE + Q), np.array(BASE_V + QD), np.array(BASE_A + QDD)
n = model.nv
packed = model.kernel_record
out = {"file": rnea_ros.__file__, "pointer": pointer_kernels.AVAILABLE}
out["rnea"] = rnea(model, q, qd, qdd)
out["rnea data gravity"] = rnea(model, q, qd, qdd, gravity=GRAVITY, data=model.create_data())
out["rnea gravity vector"] = rnea(model, q, qd, qdd, gravity=np.array(GRAVITY))
out["rnea out"] = rnea(model, q, qd, qdd, out=np.empty(n))
out["rnea wrench"] = rnea(model, q, qd, qdd, wrenches={TIP: w})
out["rnea checked"] = rnea(model, Q, QD, QDD)
out["rnea batch"] = rnea(model, q[None], qd[None], qdd[None])[0]
out["gravity"] = gravity_torques(model, q)
out["gravity data gravity"] = gravity_torques(model, q, gravity=GRAVITY, data=model.create_data())
out["gravity checked"] = gravity_torques(model, Q)
out["gravity batch"] = gravity_torques(model, q[None])[0]
out["mass matrix"] = mass_matrix(model, q)
out["mass matrix data"] = mass_matrix(model, q, data=model.create_data())
out["mass matrix checked"] = mass_matrix(model, Q)
out["mass matrix batch"] = mass_matrix(model, q[None])[0]
out["floating rnea"] = rnea(free, fq, fv, fa)
out["floating gravity"] = gravity_torques(free, fq)
out["floating mass matrix"] = mass_matrix(free, fq)
tau = np.empty(n)
assert entry_points.RNEA_PACKED.call(packed, q, qd, qdd, tau) == 0
out["entry point rnea"] = tau.copy()
assert entry_points.GRAVITY_PACKED.call(packed, q, tau) == 0
out["entry point gravity"] = tau.copy()
m = np.empty((n, n))
assert entry_points.MASS_MATRIX_PACKED.call(packed, q, m) == 0
out["entry point mass matrix"] = m
if pointer_kernels.AVAILABLE:
    out["pointer rnea"] = pointer_kernels.RNEA_PACKED.call(packed, q, qd, qdd, n)
    out["pointer gravity"] = pointer_kernels.GRAVITY_PACKED.call(packed, q, n)
    g = np.array(GRAVITY)
    out["pointer rnea gravity"] = pointer_kernels.RNEA_PACKED_GRAVITY.call(packed, q, qd, qdd, g, n)
    out["pointer gravity gravity"] = pointer_kernels.GRAVITY_PACKED_GRAVITY.call(packed, q, g, n)
    fpacked = free.floating_args[1]
    out["pointer floating rnea"] = pointer_kernels.FLOATING_RNEA_PACKED.call(fpacked, fq, fv, fa, free.nv)
    out["pointer floating gravity"] = pointer_kernels.FLOATING_GRAVITY_PACKED.call(fpacked, fq, free.nv)
friction = Friction(np.full(n, 0.3), np.full(n, 1.5), static=np.full(n, 2.0))
law = EffortLaw(kp=40.0, kd=4.0, friction=friction, wrenches={TIP: w}, effort_limit=1e4)
efforts = compute_efforts(Efforts(model, law), q, qd, (q_des, qd, qdd), t=0.0)
out["cycle"] = efforts.table[:8]
arrays = {key: np.asarray(v).tolist() for key, v in out.items() if key not in ("file", "pointer")}
print(json.dumps({**out, **arrays}))
"""


def environment(package: Path) -> dict[str, str]:
    """The environment of a new interpreter on the copy `package` (run in `package`: the current
    directory comes first on sys.path): numba on, its cache next to the copy's sources, the
    pointer kernels on."""
    unset = ("NUMBA_CACHE_DIR", "RNEA_ROS_NO_NUMBA", "RNEA_ROS_NO_POINTER_CALL")
    return {key: value for key, value in os.environ.items() if key not in unset} | {
        "PYTHONPATH": str(package)
    }


def run(package: Path, *, entry_points: bool = False) -> dict[str, np.ndarray]:
    """Every path of RUN in a new interpreter on the copy `package` (its cache next to its
    sources; with entry_points, RNEA_ROS_NO_POINTER_CALL=1)."""
    env = environment(package)
    if entry_points:
        env["RNEA_ROS_NO_POINTER_CALL"] = "1"
    args = json.dumps([Q, QD, QDD, Q_DES, WRENCH, list(GRAVITY), BASE, BASE_V, BASE_A, TIP])
    proc = subprocess.run(
        [sys.executable, "-c", RUN, args], env=env, cwd=package, capture_output=True, text=True, timeout=1800
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    out = json.loads(proc.stdout.splitlines()[-1])
    assert Path(out.pop("file")).is_relative_to(package), "the copy is not the package imported"
    assert out.pop("pointer") is not entry_points  # the pointer kernels are built, and switched off
    return {key: np.array(value) for key, value in out.items()}


def reference(q: list[float], *, extra_friction: float = 0.0) -> dict[str, np.ndarray]:
    """What each path of RUN must return at joint positions q (the cycle's desired q moved with
    them): rnea, g and M from Pinocchio, the floating root and the cycle from this (unedited)
    package, the cycle's friction row and total plus `extra_friction`."""
    path = example_urdf_path(ROBOT)
    model = RobotModel.from_urdf(path.read_text())
    ref = pin.buildModelFromUrdf(str(path))
    data = ref.createData()
    order = [ref.joints[ref.getJointId(j)].idx_v for j in model.joint_names]

    def to_pin(x: list[float]) -> np.ndarray:
        y = np.zeros(ref.nv)
        y[order] = x
        return y

    def pin_rnea(qdd: list[float], qd: list[float], gravity: tuple = (0.0, 0.0, -9.81)) -> np.ndarray:
        ref.gravity.linear = np.array(gravity)
        tau = pin.rnea(ref, data, to_pin(q), to_pin(qd), to_pin(qdd))
        ref.gravity.linear = np.array([0.0, 0.0, -9.81])
        return tau[order]

    # τ = ... + Jᵀ F: the tip's Jacobian at its origin, world (root) axes, linear rows first
    tip = ref.getFrameId(TIP)
    jac = pin.computeFrameJacobian(ref, data, to_pin(q), tip, pin.LOCAL_WORLD_ALIGNED)[:, order]
    zero = [0.0] * len(q)
    tau = pin_rnea(QDD, QD)
    g = pin_rnea(zero, zero)
    m = sym(pin.crba(ref, data, to_pin(q)))[np.ix_(order, order)]
    tau_g, g_g = pin_rnea(QDD, QD, GRAVITY), pin_rnea(zero, zero, GRAVITY)  # another gravity
    expected = {
        **dict.fromkeys(
            ("rnea", "rnea out", "rnea checked", "rnea batch", "entry point rnea", "pointer rnea"), tau
        ),
        **dict.fromkeys(("rnea data gravity", "rnea gravity vector", "pointer rnea gravity"), tau_g),
        "rnea wrench": tau + jac.T @ np.array(WRENCH),
        **dict.fromkeys(
            ("gravity", "gravity checked", "gravity batch", "entry point gravity", "pointer gravity"), g
        ),
        **dict.fromkeys(("gravity data gravity", "pointer gravity gravity"), g_g),
        **dict.fromkeys(("mass matrix", "mass matrix data", "mass matrix checked", "mass matrix batch"), m),
        "entry point mass matrix": m,
    }
    free = RobotModel.from_urdf(path.read_text(), root_joint="floating")
    fq = BASE + q
    expected["floating rnea"] = expected["pointer floating rnea"] = rnea(free, fq, BASE_V + QD, BASE_A + QDD)
    expected["floating gravity"] = expected["pointer floating gravity"] = gravity_torques(free, fq)
    expected["floating mass matrix"] = mass_matrix(free, fq)
    n = model.nv
    friction = Friction(np.full(n, 0.3), np.full(n, 1.5), static=np.full(n, 2.0))  # as RUN's
    law = EffortLaw(kp=40.0, kd=4.0, friction=friction, wrenches={TIP: np.array(WRENCH)}, effort_limit=1e4)
    q_des = np.array(Q_DES) + (np.array(q) - np.array(Q))  # the feedback term as with the edited q
    desired = (q_des, np.array(QD), np.array(QDD))
    cycle = compute_efforts(Efforts(model, law), np.array(q), np.array(QD), desired, t=0.0).table[:8].copy()
    cycle[3] += extra_friction
    cycle[6] += extra_friction
    expected["cycle"] = cycle
    return expected


def assert_paths(got: dict[str, np.ndarray], expected: dict[str, np.ndarray], edit: str) -> None:
    assert set(got) <= set(expected)
    wrong = [
        f"{path}: {np.round(got[path], 4).tolist()} instead of {np.round(expected[path], 4).tolist()}"
        for path in got
        if not np.allclose(got[path], expected[path], rtol=1e-9, atol=1e-9)
    ]
    assert not wrong, f"after {edit}, stale compiled code on:\n" + "\n".join(wrong)


def edit(package: Path, old: str, new: str) -> Path:
    """Replace the one occurrence of `old` in the sources of the copy's rnea_ros/compiled/."""
    hits = [
        path
        for path in (package / "rnea_ros" / "compiled").rglob("*.py")
        if "__pycache__" not in path.parts and old in path.read_text()
    ]
    assert len(hits) == 1 and hits[0].read_text().count(old) == 1, (old, hits)
    hits[0].write_text(hits[0].read_text().replace(old, new))
    return hits[0]


def cache_is_cold(package: Path) -> bool:
    """`rnea_ros.compiled.cache.cache_is_cold()` of the copy, in a new interpreter (compiles nothing)."""
    code = "from rnea_ros.compiled.cache import cache_is_cold; print(cache_is_cold())"
    proc = subprocess.run(
        [sys.executable, "-c", code], env=environment(package), cwd=package, capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    return {"True": True, "False": False}[proc.stdout.split()[-1]]


@pytest.fixture(scope="module")
def warm_copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the package whose own cache holds every path of RUN, each checked first (the
    installation's cache comes along: with the same sources its entries are good for the copy)."""
    package = tmp_path_factory.mktemp("warm")
    source = Path(rnea_ros.__file__).parent
    shutil.copytree(source, package / "rnea_ros", ignore=shutil.ignore_patterns("*.pyc"))
    command = [sys.executable, "-m", "rnea_ros.compiled.cache"]  # every kernel, as `make` set-up does
    fill = subprocess.run(command, env=environment(package), cwd=package, capture_output=True, text=True)
    assert fill.returncode == 0, fill.stderr[-4000:]
    assert cache_is_cold(package) is False
    got = run(package)
    assert_paths(got, reference(Q), "no edit")
    assert "pointer rnea" in got  # the pointer kernels are built (else half of this module tests nothing)
    caches = package / "rnea_ros" / "compiled"
    assert any(caches.rglob("__pycache__/*_rnea_packed*.nbi")), "the pointer cfuncs are not cached"
    return package


def edited(warm_copy: Path, tmp_path: Path, old: str, new: str) -> Path:
    package = tmp_path / "copy"
    shutil.copytree(warm_copy, package)  # with its warm cache
    edit(package, old, new)
    return package


def test_a_changed_layout_constant_reaches_every_path(warm_copy: Path, tmp_path: Path) -> None:
    package = edited(warm_copy, tmp_path, "B_POS = 9\nB_AXIS = 12\n", "B_POS = 12\nB_AXIS = 9\n")
    assert cache_is_cold(package) is True  # every entry is of other sources now: start-up says so
    expected = reference(Q)
    assert_paths(run(package), expected, "the layout edit")
    assert_paths(run(package, entry_points=True), expected, "the layout edit (entry points)")


def test_an_edited_kernel_the_pointer_cfuncs_call_reaches_every_path(warm_copy: Path, tmp_path: Path) -> None:
    package = edited(warm_copy, tmp_path, "qi = q[i]\n", f"qi = q[i] + ({SHIFT} if i == 1 else 0.0)\n")
    shifted = list(Q)
    shifted[1] += SHIFT
    expected = reference(shifted)
    assert not np.allclose(expected["rnea"], reference(Q)["rnea"], atol=0.1)  # the edit shows
    assert_paths(run(package), expected, "the joint_transforms edit")
    assert_paths(run(package, entry_points=True), expected, "the joint_transforms edit (entry points)")


def test_an_edited_kernel_only_the_cycle_calls_reaches_it(warm_copy: Path, tmp_path: Path) -> None:
    old = "out[i] = weight[i] * tau\n"
    package = edited(warm_copy, tmp_path, old, f"out[i] = weight[i] * tau + {EXTRA}\n")
    expected = reference(Q, extra_friction=EXTRA)
    assert_paths(run(package), expected, "the friction_kernel edit")
    assert_paths(run(package, entry_points=True), expected, "the friction_kernel edit (entry points)")


# (d) Files that change while a process loads the package (a `git pull`, a merge or a checkout
# while a node or a test starts): the process loads a first compiled module, the friction kernel
# is edited, then it imports and compiles the rest, the edited kernel among them. Whatever it
# compiled must not be stored under the stamp of the sources it began with: back on those sources
# (the edit undone), a new process ran the edited kernel, stored so by the old stamp.
LOADING = """
import sys
import rnea_ros.compiled.kernels.passes  # the first compiled module: the sources as they began
print("loaded", flush=True)
sys.stdin.readline()  # the test edits the files now
import numpy as np
from rnea_ros import RobotModel
from rnea_ros.control.effort_law import EffortLaw, Efforts, compute_efforts
from rnea_ros.friction.model import Friction
from rnea_ros.model.example_robots import example_urdf_path
model = RobotModel.from_urdf(example_urdf_path("ur5").read_text())
n = model.nv
law = EffortLaw(kp=40.0, kd=4.0, friction=Friction(np.full(n, 0.3), np.full(n, 1.5)), effort_limit=1e4)
zero = np.zeros(n)
compute_efforts(Efforts(model, law), zero, np.full(n, 0.1), (zero, zero, zero), t=0.0)
print("computed", flush=True)
"""


def test_files_changed_while_loading_leave_no_stale_entry(warm_copy: Path, tmp_path: Path) -> None:
    package = tmp_path / "copy"
    shutil.copytree(warm_copy, package)
    for entry in (package / "rnea_ros" / "compiled").rglob("__pycache__/*.nb[ic]"):
        if entry.name.startswith(("friction_guard.", "cycle.")):
            entry.unlink()  # the loading process compiles the cycle and the friction kernels
    old, new = "out[i] = weight[i] * tau\n", f"out[i] = weight[i] * tau + {EXTRA}\n"
    loading = subprocess.Popen(
        [sys.executable, "-c", LOADING], env=environment(package), cwd=package,
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        preexec_fn=die_with_parent,
    )  # fmt: skip
    try:
        assert loading.stdout is not None
        assert loading.stdout.readline().strip() == "loaded", loading.communicate(timeout=60)[1][-4000:]
        edited_file = edit(package, old, new)
        out, err = loading.communicate("go\n", timeout=1800)
    finally:
        loading.kill()
    assert out.split()[-1:] == ["computed"], err[-4000:]
    edited_file.write_text(edited_file.read_text().replace(new, old))  # the first sources again
    assert_paths(run(package), reference(Q), "an edit undone after a process loaded it")
