"""rnea_ros.ros.entry: a SIGINT or SIGTERM during an executable's imports ends it with one line and
exit 0, whatever the imported code makes of the KeyboardInterrupt. Real processes, real signals;
the imported module stands for a library that swallows the interrupt (a bare `except`) or turns it
into another error (numpy's C initialisation raised "ImportError: PyCapsule_Import could not
import module datetime" in a CI run)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

# the module a test starts through entry.run: it signals itself in the middle of its import, and
# `main` prints "served" (reached only when the stop was lost)
MODULE = """
import os, signal, time
try:
    os.kill(os.getpid(), signal.{sig})
    time.sleep(5)  # the handler runs here
{handling}
def main(args):
    print("served")
    return 7
"""
RUN = "import sys; from rnea_ros.ros.entry import run; sys.exit(run('demo', sys.argv[1]))"
HANDLING = {
    "swallowed": "except BaseException:\n    pass\n",
    "turned into ImportError": "except BaseException as e:\n    raise ImportError('PyCapsule') from e\n",
    "raised": "finally:\n    pass\n",
}


@pytest.mark.parametrize("sig", ["SIGINT", "SIGTERM"])
@pytest.mark.parametrize("handling", HANDLING)
def test_a_stop_during_the_imports_ends_with_one_line(sig: str, handling: str, tmp_path: Path) -> None:
    (tmp_path / "stopped_module.py").write_text(MODULE.format(sig=sig, handling=HANDLING[handling]))
    done = subprocess.run(
        [sys.executable, "-c", RUN, "stopped_module:main"],
        env={**os.environ, "PYTHONPATH": str(tmp_path)}, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "[INFO] [demo]: stopped while starting\n")


def test_an_import_error_without_a_stop_is_raised(tmp_path: Path) -> None:
    (tmp_path / "broken_module.py").write_text("raise ImportError('no such thing')\n")
    done = subprocess.run(
        [sys.executable, "-c", RUN, "broken_module:main"],
        env={**os.environ, "PYTHONPATH": str(tmp_path)}, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 1 and "ImportError: no such thing" in done.stderr, done.stderr


def ignore_sigint() -> None:
    """What a non-interactive shell does for `cmd &` (POSIX): the child inherits SIGINT ignored."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def test_a_stop_during_the_imports_of_a_background_job_ends_with_one_line(tmp_path: Path) -> None:
    (tmp_path / "stopped_module.py").write_text(MODULE.format(sig="SIGINT", handling=HANDLING["raised"]))
    done = subprocess.run(
        [sys.executable, "-c", RUN, "stopped_module:main"], preexec_fn=ignore_sigint,
        env={**os.environ, "PYTHONPATH": str(tmp_path)}, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "[INFO] [demo]: stopped while starting\n")


def test_sigint_after_the_imports_of_a_background_job_interrupts_main(tmp_path: Path) -> None:
    """main runs with SIGINT raising KeyboardInterrupt (run_node then stops the node), not ignored."""
    (tmp_path / "waiting_module.py").write_text(
        "import os, signal, time\n"
        "def main(args):\n"
        "    try:\n"
        "        os.kill(os.getpid(), signal.SIGINT)\n"
        "        time.sleep(30)\n"
        "    except KeyboardInterrupt:\n"
        "        print('interrupted')\n"
        "    return 3\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", RUN, "waiting_module:main"], preexec_fn=ignore_sigint,
        env={**os.environ, "PYTHONPATH": str(tmp_path)}, capture_output=True, text=True, timeout=20,
    )  # fmt: skip
    assert (done.returncode, done.stdout) == (3, "interrupted\n"), done.stderr
