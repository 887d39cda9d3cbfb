"""Processes that end with their parent (Linux), so that a killed demo, launch or test run leaves no
node behind, even when it was killed by SIGKILL:

- a child started with `preexec_fn=die_with_parent` gets SIGTERM (or the signal asked for) when the
  process that started it dies;
- every executable of the package calls `end_with_parent()` first thing (`rnea_ros.ros.entry`), so
  that it ends with whoever started it, however: `ros2 run` (whose console-script child the
  kernel does not tie to the test that started `ros2 run`), `ros2 launch`, a shell. The request
  does not pass to grandchildren, hence each executable makes its own. `RNEA_ROS_END_WITH_PARENT=0`
  leaves an executable running after its parent ends (a node started by hand, `nohup … &`, meant
  to outlive its shell).

The kernel sends the signal when the *thread* that started the process ends: a supervisor that
starts nodes from a short-lived thread ends them with it (launch, ros2 run and the package's own
supervisors start them from their main thread). Elsewhere than Linux all this does nothing.

A process of the package also stops when asked by SIGINT, even when it inherited SIGINT ignored:
a non-interactive shell starts `cmd &` so (POSIX), as do scripts and CI jobs that run `make test`
in the background, and Python then never raises KeyboardInterrupt. `ros2 launch`, the tests and
the demos' supervisors still ask a node to stop by SIGINT; `stop_on_sigint()` restores it."""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys
from collections.abc import Callable

PR_SET_PDEATHSIG = 1
PR_GET_PDEATHSIG = 2
END_WITH_PARENT_ENV = "RNEA_ROS_END_WITH_PARENT"


def _prctl_death_signal(sig: int) -> bool:
    try:
        return ctypes.CDLL("libc.so.6", use_errno=True).prctl(PR_SET_PDEATHSIG, sig) == 0
    except OSError:
        return False


def death_signal() -> int:
    """The signal this process gets when its parent ends (0: none, or not Linux)."""
    if not sys.platform.startswith("linux"):
        return 0
    value = ctypes.c_int(0)
    try:
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(PR_GET_PDEATHSIG, ctypes.byref(value))
    except OSError:
        return 0
    return value.value


def parent_death_signal(sig: int = signal.SIGTERM) -> Callable[[], None] | None:
    """A `preexec_fn` that asks the kernel for `sig` when the parent dies (None off Linux)."""
    if not sys.platform.startswith("linux"):
        return None

    def preexec() -> None:
        with contextlib.suppress(OSError):
            _prctl_death_signal(sig)

    return preexec


die_with_parent = parent_death_signal()


def stop_on_sigint() -> None:
    """SIGINT raises KeyboardInterrupt (Python's own handler) also when this process inherited it
    ignored (see the module doc); a handler of the process's own stays. Main thread only."""
    if signal.getsignal(signal.SIGINT) in (signal.SIG_IGN, signal.SIG_DFL):
        signal.signal(signal.SIGINT, signal.default_int_handler)


def end_with_parent(sig: int = signal.SIGTERM) -> bool:
    """Ask the kernel for `sig` when the process that started this one ends (Linux; not with
    RNEA_ROS_END_WITH_PARENT=0; a signal the parent asked for already, `die_with_parent`, stays);
    when the parent ended before the request, raise it now. Whether a signal is asked for."""
    if not sys.platform.startswith("linux") or os.environ.get(END_WITH_PARENT_ENV, "1") == "0":
        return False
    parent = os.getppid()
    sig = death_signal() or sig
    if not _prctl_death_signal(sig):
        return False
    if os.getppid() != parent:  # the parent ended before the request: nobody would send it
        signal.raise_signal(sig)
    return True


__all__ = [
    "END_WITH_PARENT_ENV",
    "death_signal",
    "die_with_parent",
    "end_with_parent",
    "parent_death_signal",
    "stop_on_sigint",
]
