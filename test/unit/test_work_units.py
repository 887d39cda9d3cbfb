"""test/support/work_units.py, the suite's pytest-xdist scheduler, after a worker crashes: the
test it died on fails once and the rest of its unit runs, and the run ends with its summary
(xdist's own LoadScopeScheduling re-ran the crashing test on every replacement: 9 failed, the
test after it never ran). A real pytest -n 2 in a scratch folder."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

# launch_testing's plugins do not load under pytest 9 (setup.cfg)
PLUGINS_OFF = ("-p", "no:cacheprovider", "-p", "no:launch_testing", "-p", "no:launch_ros")
SUPPORT = Path(__file__).resolve().parents[1] / "support"
CONFTEST = """
from work_units import make_scheduler

def pytest_xdist_make_scheduler(config, log):
    return make_scheduler(config, log, lambda nodeid: nodeid.split("::")[0])  # a module per unit
"""
QUICK = "import time\n" + "".join(f"def test_a{i}():\n    time.sleep(0.3)\n" for i in range(3))
CRASHING = """import os

def test_before():
    pass

def test_crash():
    os._exit(1)

def test_after():
    pass
"""


def test_a_crashed_worker_costs_one_test(tmp_path: Path) -> None:
    (tmp_path / "conftest.py").write_text(CONFTEST)
    (tmp_path / "test_quick.py").write_text(QUICK)
    (tmp_path / "test_crashing.py").write_text(CRASHING)
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-n", "2", "-rA", *PLUGINS_OFF, "."],
        cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(SUPPORT)},
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    out = done.stdout + done.stderr
    assert done.returncode == 1 and "INTERNALERROR" not in out, out[-3000:]
    assert "1 failed, 5 passed" in out, out[-3000:]
    assert "PASSED test_crashing.py::test_after" in out and "FAILED test_crashing.py::test_crash" in out
