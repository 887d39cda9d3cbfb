"""The real rqt_reconfigure in the tests: ../shared/rqt-wheels (RQT_WHEELS) installed into the venv
by `make` set-up, run headless under `xvfb-run`, its own widgets driven by `rqt_driver.py` (a Qt
timer inside the GUI process, as a person would click and type) step by step.

The GUI process performs one step of its plan (type a value into a double's line edit and press
Return, click a check box), prints `[rqt] step N done: ...` and waits for the test to say the node
took it (`RqtSession.ack(N)`, after checking the node's next output), so each step is checked on
its own. Every wait is on an event with a generous ceiling (a loaded 2-core machine starts Qt and
rqt in 5-30 s). Tests call `require_rqt()`: they skip only when the wheels folder does not exist,
and fail when it exists but rqt is not installed.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from rnea_ros.ros.processes import die_with_parent

REPO = Path(__file__).resolve().parents[2]
WHEELS = Path(os.environ.get("RQT_WHEELS") or REPO.parent / "shared" / "rqt-wheels")
DRIVER = Path(__file__).resolve().parent / "rqt_driver.py"
START = 180.0  # s: Qt, rqt and the node list on a loaded machine
STEP = 120.0  # s: one step, typed and answered by the node


def require_rqt() -> None:
    """Skip without the wheels folder; fail when it exists but rqt is not installed in the venv."""
    if not WHEELS.is_dir():
        pytest.skip(f"needs rqt_reconfigure: {WHEELS} does not exist (set RQT_WHEELS to use another)")
    import importlib.util

    missing = [m for m in ("rqt_reconfigure", "rqt_gui", "PyQt5") if importlib.util.find_spec(m) is None]
    if missing or shutil.which("xvfb-run") is None:
        what = missing or "xvfb-run"
        pytest.fail(f"{WHEELS} exists but {what} is not installed: run `make .venv/.installed`")


class RqtSession:
    """rqt_reconfigure under xvfb-run, executing `steps` on `node` (see rqt_driver.py)."""

    def __init__(self, tmp: Path, node: str, steps: list[dict], png: Path, filter_key: str = "") -> None:
        self.dir = tmp / "rqt"
        (self.dir / "runtime").mkdir(parents=True, exist_ok=True)
        (self.dir / "runtime").chmod(0o700)
        self.log_path = self.dir / "gui.log"
        plan = {"node": node, "steps": steps, "png": str(png), "filter": filter_key, "acks": str(self.dir)}
        env = {
            **os.environ,
            "AMENT_PREFIX_PATH": sys.prefix,  # rqt finds its plugins in the venv's ament index
            "XDG_CONFIG_HOME": str(self.dir / "config"),  # not the user's rqt settings
            "XDG_RUNTIME_DIR": str(self.dir / "runtime"),
            "ROS_LOG_DIR": str(self.dir / "ros_log"),
            "QT_QPA_PLATFORM": "xcb",
            "PYTHONUNBUFFERED": "1",
        }
        # a display of its own: -a searches up from a number this process picks (parallel workers)
        display = ["-a", "-n", str(200 + os.getpid() % 700)]
        screen = ["-s", "-screen 0 1280x1024x24"]
        args = ["xvfb-run", *display, *screen, sys.executable, str(DRIVER), json.dumps(plan)]
        self._log = self.log_path.open("w")

        def preexec() -> None:  # its own process group (Xvfb with it), gone with this process
            os.setsid()
            if die_with_parent is not None:
                die_with_parent()

        self.proc = subprocess.Popen(
            args, stdout=self._log, stderr=subprocess.STDOUT, env=env, preexec_fn=preexec
        )

    def output(self) -> str:
        return self.log_path.read_text()

    def wait_for(self, text: str, timeout: float) -> str:
        """Wait until the GUI prints `text` (a line of its log); fail with the log on a GUI failure
        or after `timeout` s."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            out = self.output()
            if text in out:
                return out
            if "[rqt] FAIL" in out or self.proc.poll() is not None:
                break
            time.sleep(0.1)
        raise AssertionError(f"rqt_reconfigure did not print {text!r}:\n{self.output()[-6000:]}")

    def step_done(self, k: int, timeout: float = STEP) -> None:
        self.wait_for(f"[rqt] step {k} done", START if k == 0 else timeout)

    def ack(self, k: int) -> None:
        """The node took step k: the GUI goes on."""
        (self.dir / f"ack_{k}").touch()

    def finish(self, timeout: float = STEP) -> str:
        """Wait for the screenshot and the GUI's exit (0); its log."""
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout)
        out = self.close()
        assert "[rqt] screenshot" in out and self.proc.returncode == 0, out[-6000:]
        return out

    def close(self) -> str:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(10)
        self._log.close()
        return self.output()


def save_for_docs(png: Path, name: str) -> None:
    """Copy a screenshot into docs/ when RNEA_DOCS_SCREENSHOTS=1 (how docs/nodes.md's are made)."""
    if os.environ.get("RNEA_DOCS_SCREENSHOTS") == "1":
        shutil.copy(png, REPO / "docs" / name)


__all__ = ["RqtSession", "require_rqt", "save_for_docs"]
