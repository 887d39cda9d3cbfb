"""A topic somebody must hear: the commands of inverse_dynamics (~/effort_commands) and the
trajectories of trajectory_feedforward (~/trajectory_out). When it has had no subscriber for
SILENT s since its first message, the node says so: one WARN in the log and a WARN status on
/diagnostics (`text`), naming the topic and the remap to check, with the `~` quoted (bash turns an
unquoted `~/effort_commands:=...` into your home folder, and the remap then matches nothing). A
remap rule on the command line that starts with the home folder is named as the likely cause.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Sequence

from rclpy.node import Node
from rclpy.publisher import Publisher

SILENT = 2.0  # s without a subscriber after the first message


def home_remaps(argv: Sequence[str]) -> list[str]:
    """The remap rules (`-r`/`--remap` after `--ros-args`) whose topic starts with the home folder:
    an unquoted `~/topic:=...` that the shell expanded."""
    home = os.path.expanduser("~").rstrip("/")
    if not home:
        return []
    rules, ros = [], False
    for k, arg in enumerate(argv):
        if arg == "--ros-args":
            ros = True
        elif arg == "--":
            ros = False
        elif ros and arg in ("-r", "--remap") and k + 1 < len(argv):
            source = argv[k + 1].split(":=", 1)[0].rsplit(":", 1)[-1]  # `node:from` → `from`
            if source.startswith(home + "/"):
                rules.append(argv[k + 1])
    return rules


class UnheardTopic:
    """Watches one publisher: `check(sent)` on a timer; `text` is the warning while nobody listens
    (empty otherwise)."""

    def __init__(self, node: Node, publisher: Publisher, remap: str, after: float = SILENT) -> None:
        """remap: the remap a user gives this topic, e.g. `~/effort_commands:=/effort_controller/commands`."""
        self._node = node
        self._publisher = publisher
        self.topic = publisher.topic_name
        self._remap = remap
        self._after = after
        self._since: float | None = None  # when it was last seen without a subscriber (monotonic s)
        self.text = ""
        self.subscribers = 0

    def check(self, sent: bool, now: float | None = None) -> None:
        """sent: whether a message has gone out on the topic yet."""
        self.subscribers = self._publisher.get_subscription_count()
        if not sent or self.subscribers > 0:
            if self.text:
                self._node.get_logger().info(f"{self.topic} has a subscriber again")
            self._since, self.text = None, ""
            return
        now = time.monotonic() if now is None else now
        if self._since is None:
            self._since = now
        if not self.text and now - self._since >= self._after:
            self.text = self._warning()
            self._node.get_logger().warn(self.text)

    def _warning(self) -> str:
        text = (
            f"nobody subscribes to {self.topic} ({self._after:g} s since the first message): what this "
            f"node sends goes nowhere. Check the remap; in bash quote it, -r '{self._remap}' "
            "(an unquoted ~ becomes your home folder)"
        )
        home = home_remaps(sys.argv)
        if home:
            text += f"; this remap starts with the home folder: {', '.join(home)}"
        return text


__all__ = ["SILENT", "UnheardTopic", "home_remaps"]
