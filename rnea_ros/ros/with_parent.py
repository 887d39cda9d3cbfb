"""`python -m rnea_ros.ros.with_parent PROGRAM [ARG ...]`: run PROGRAM so that it ends with
whoever started it (SIGTERM when that process dies, even by SIGKILL; Linux).

The package's own executables ask for this themselves (`processes.end_with_parent`); other
packages' programs that a launch file starts (ros2_control_node, controller_manager's spawner)
do not, and `ros2 launch` killed by SIGKILL would leave them running. The request survives
exec, so this asks for it and then becomes PROGRAM (same pid, same signals, same exit code)."""

from __future__ import annotations

import os
import sys

from rnea_ros.ros.processes import end_with_parent

MODULE = "rnea_ros.ros.with_parent"


def command(argv: list[str]) -> list[str]:
    """The command line that runs `argv` this way."""
    return [sys.executable, "-m", MODULE, *argv]


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if not argv:
        print(f"usage: python -m {MODULE} PROGRAM [ARG ...]", file=sys.stderr)
        return 2
    end_with_parent()
    try:
        os.execvp(argv[0], argv)
    except OSError as error:
        print(f"{MODULE}: cannot run {argv[0]!r}: {error.strerror}", file=sys.stderr)
        return 127
    return 0  # not reached: exec replaced this process


if __name__ == "__main__":
    sys.exit(main())
