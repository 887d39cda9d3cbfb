"""Shared fixtures, the test kinds, and the import path of the test helpers.

The tree mirrors the package: test/unit/<package>/test_<module>.py (no ROS processes, seconds),
test/ros/<node>/test_*.py (real rclpy processes) and test/system/test_*.py (the closed-loop demos,
colcon and pip builds). A test's kind (mark unit, ros or system) comes from its folder; `make
test-unit` runs `pytest -m unit`. A test outside those folders fails the collection.

test/ is not a package (a test/__init__.py would shadow the standard library's `test`): the
helpers of test/support/ (robot_files, pinref, ros_install …) and test modules other tests reuse
import as top-level modules, so test/support and every test folder go on sys.path whatever
pytest's import mode; hence test file names are unique across the tree.

Each pytest process (each pytest-xdist worker) gets a ROS_DOMAIN_ID of its own, set here before
anything loads rclpy (test/support/domains.py: a block of domains claimed for the process's
lifetime, so that runs side by side on one machine do not meet). Under `pytest -n N` (make
test) the scheduler below hands out the tests of one test/ros module as one unit, so that its
module-scoped node process starts once on one worker (so do the system modules of MODULE_UNITS);
the tests that keep real time (REALTIME) run on one worker one after the other; every other test
is a unit of its own. The
colcon-built workspace is built once per run, under a file lock, and shared by the workers
(fixture colcon_workspace). The real-time tests also carry the mark `realtime`: `make test` runs
them after the parallel run, alone (`-m realtime`), so that no other test's load delays their
wall clock.
(pytest 9.2 ignores the nodeid suffix by which xdist's `--dist loadgroup` groups
xdist_group marks, pytest-xdist issue 1386; hence a scheduler of our own.)
"""

from __future__ import annotations

import fcntl
import importlib.util
import os
import shutil
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
SUPPORT = HERE / "support"
TEST_FILES = sorted(HERE.glob("*/**/test_*.py"))
for folder in [SUPPORT, *sorted({p.parent for p in TEST_FILES})]:
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))
_SHARED_NAMES = sorted({p.name for p in TEST_FILES if sum(q.name == p.name for q in TEST_FILES) > 1})
if _SHARED_NAMES:  # one would import as the other: refuse the whole run, not one module later
    raise pytest.UsageError(f"test file names must be unique across test/: {_SHARED_NAMES}")

from domains import domain  # noqa: E402

if os.environ.get("PYTEST_XDIST_WORKER"):  # not the controller's domain, which workers inherit
    os.environ["ROS_DOMAIN_ID"] = str(domain())
else:
    os.environ.setdefault("ROS_DOMAIN_ID", str(domain()))
os.environ.setdefault("ROS_LOCALHOST_ONLY", "1")

# `make test &` (a script, a CI job in the background) starts pytest with SIGINT ignored, which
# every process a test starts would inherit: a node the test stops by SIGINT before the node's own
# code runs would never see it. The tests start their processes as a terminal does;
# test_stop_on_signal.py checks the nodes started with SIGINT ignored on purpose.
from rnea_ros.ros.processes import stop_on_sigint  # noqa: E402

stop_on_sigint()

import ros_install  # noqa: E402
from robot_files import urdf_text  # noqa: E402

KINDS = ("unit", "ros", "system")

# Tests (nodeid prefixes below test/) that keep real time: one worker runs them one after the other
REALTIME = (
    "system/test_demo.py::test_real_time_run",
    "ros/inverse_dynamics/test_node.py::test_a_slow_loop",  # measures the loop period
    "ros/mujoco_sim/test_sim_node.py::test_real_time_sim",
)
# System test modules one worker runs whole (a module-scoped ros2 daemon and launch)
MODULE_UNITS = ("system/test_ros_install.py",)

# launch_testing files (a generate_test_description) run under launch_testing's own runner, from
# system/test_launch_files.py; pytest does not collect them itself (launch_testing's pytest plugin
# does not load under pytest 9, see setup.cfg)
collect_ignore = [str(p.relative_to(HERE)) for p in ros_install.launch_testing_files()]


def kind_of(path: Path) -> str | None:
    """unit, ros or system: the first folder of the test file below test/ (None elsewhere)."""
    try:
        top = path.resolve().relative_to(HERE).parts[0]
    except ValueError:
        return None
    return top if top in KINDS else None


@pytest.hookimpl(tryfirst=True)  # before -m selects by mark
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark every test with the kind of its folder; refuse tests outside test/{unit,ros,system}."""
    outside = set()
    for item in items:
        kind = kind_of(item.path)
        if kind is None:
            outside.add(item.nodeid.split("::")[0])
            continue
        item.add_marker(kind)
        if item.nodeid.split("test/", 1)[-1].startswith(REALTIME):
            item.add_marker("realtime")
    if outside:
        raise pytest.UsageError(f"tests outside test/unit, test/ros and test/system: {sorted(outside)}")
    # the longest kinds first (system: demos and builds, then ros: node processes), so that under
    # pytest-xdist the many short unit tests fill the gaps at the end instead of a demo starting last
    items.sort(key=lambda item: KINDS[::-1].index(kind_of(item.path) or "unit"))


def work_unit(nodeid: str) -> str:
    """The unit of work a pytest-xdist worker takes whole: "realtime", the module of a test/ros
    test or of a system test module whose fixtures serve the whole module (MODULE_UNITS), or else
    the test itself."""
    below = nodeid.split("test/", 1)[-1]  # nodeids are relative to the repository
    if below.startswith(REALTIME):
        return "realtime"
    module = below.split("::", 1)[0]
    return module if module.startswith("ros/") or module in MODULE_UNITS else nodeid


if importlib.util.find_spec("xdist") is not None:  # requirements-dev.txt

    def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object:
        from work_units import make_scheduler  # test/support/work_units.py

        return make_scheduler(config, log, work_unit)


@pytest.fixture(scope="session")
def panda_urdf() -> str:
    return urdf_text("panda")


@pytest.fixture(scope="session")
def colcon_workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """install/ of one `colcon build` of the package in a fresh workspace, shared by the session:
    the first pytest-xdist worker to need it builds it under a file lock in the run's temporary
    folder, the others wait for that build and use it. ros_install.COLCON_INSTALL_ENV names one built
    (the pytest runs inside test/system/test_no_orphans.py reuse their parent run's)."""
    if os.environ.get(ros_install.COLCON_INSTALL_ENV):
        return Path(os.environ[ros_install.COLCON_INSTALL_ENV])
    run_tmp = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        run_tmp = run_tmp.parent  # shared by this run's workers
    ws, built = run_tmp / "colcon_ws", run_tmp / "colcon_ws.built"
    with (run_tmp / "colcon_ws.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not built.exists():
            shutil.rmtree(ws, ignore_errors=True)  # a build that failed before
            ws.mkdir()
            ros_install.colcon_build(ws)
            built.touch()
    return ws / "install"


@pytest.fixture(scope="session")
def ros_env(request: pytest.FixtureRequest) -> dict[str, str]:
    """The environment of a sourced workspace on a ROS 2 install (skips without the wheels)."""
    ros_install.require_ros_install()  # before the build: skip at once
    return ros_install.sourced_env(request.getfixturevalue("colcon_workspace"))
