"""The commands of the user's pages, and who runs each.

Every command line of the bash code blocks of README.md and docs/*.md and of the comments of
config/*.yaml (`#   ros2 …`), as bash reads it (a line continued with a backslash joined to the
next; comment lines left out, a trailing comment kept), is either run as written by a named test
(RUN_BY: "file.py::test") or not run here, with the reason (NOT_RUN). A command belongs to the
longest key it starts with; a test gets the lines it runs with `owned(key)`, and runs them with
`run()` (bash, a HOME, the folder the page says). test/unit/docs/test_doc_commands.py keeps the
pages, this table and the tests in step: a command nobody owns, a key that owns nothing, a test
that does not exist or does not ask for its key, a command outside a bash block fail it.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
from dataclasses import dataclass
from pathlib import Path

from paths import REPO

# the first words of a command line (setup.py's console scripts are added below)
COMMAND_WORDS = {"make", "ros2", "colcon", "pip", "python", "python3", "cd", "source", "git", "mkdir", "cp"}
FENCES = ("bash", "sh", "shell")

# key (the start of a command line) -> the test that runs every line it owns, as written
SYSTEM = "test_documented_lines.py::"
ROS = "test_documented_ros_lines.py::"
INSTALL = "test_ros_install.py::"
LAUNCH = INSTALL + "TestInverseDynamicsLaunch::"
ID_LAUNCH = "ros2 launch rnea_ros inverse_dynamics.launch.py"
RUN_BY = {
    # the demos, bounded by RNEA_ROS_DEMO_ARGS (rnea_ros.demo: options appended to the line's)
    "make demo": SYSTEM + "test_demo_line_as_written",
    "ROBOTS=": SYSTEM + "test_demo_line_as_written",
    ".venv/bin/python -m rnea_ros.demo": SYSTEM + "test_demo_line_as_written",
    ".venv/bin/python -m rnea_ros.demo --help": SYSTEM + "test_demo_help_line",
    "ros2 launch rnea_ros demo.launch.py": INSTALL + "test_demo_launch_prints_its_table",
    # set-up and build
    "python3 -m rnea_ros.compiled.cache": SYSTEM + "test_kernel_cache_line",
    "mkdir -p ~/ros2_ws/src": SYSTEM + "test_colcon_build_as_documented",
    "cd ~/ros2_ws": SYSTEM + "test_colcon_build_as_documented",
    "source install/setup.bash": SYSTEM + "test_colcon_build_as_documented",
    # identification from bags in the folder the page works in
    "rnea_ros_identify run_a/ --urdf panda.urdf": SYSTEM + "test_identify_lines_as_written",
    "rnea_ros_identify run_b/ --urdf corrected.urdf": SYSTEM + "test_identify_lines_as_written",
    ".venv/bin/python bench/tiago_recording.py": SYSTEM + "test_tiago_lines_as_written",
    ".venv/bin/rnea_ros_identify tiago_bag": SYSTEM + "test_tiago_lines_as_written",
    ".venv/bin/python -m rnea_ros.sim.compare_models": SYSTEM + "test_compare_models_line",
    # the nodes under a ROS 2 install
    ID_LAUNCH: ROS + "test_inverse_dynamics_launch_lines",
    ID_LAUNCH + " urdf_file:=panda.urdf tip_link:=panda_hand": LAUNCH + "test_launch_with_urdf_file",
    ID_LAUNCH + " params_file:=my_": ROS + "test_parameter_file_copies",
    "cp $(ros2 pkg prefix --share rnea_ros)/config/": ROS + "test_parameter_file_copies",
    "ros2 launch rnea_ros trajectory_feedforward.launch.py params_file:=my_": ROS
    + "test_parameter_file_copies",
    "ros2 run rnea_ros inverse_dynamics_node --ros-args": ROS + "test_run_node_lines",
    "ros2 run rnea_ros inverse_dynamics_node --ros-args --params-file config/inverse_dynamics.yaml -r "
    "'~/effort_commands:=/effort_controller/commands' -p qos_": INSTALL
    + "test_qos_overrides_as_the_readme_runs_them",
    "ros2 run rnea_ros inverse_dynamics_lifecycle_node --ros-args": INSTALL
    + "test_managed_node_as_the_readme_runs_it",
    "ros2 lifecycle set /inverse_dynamics ": INSTALL + "test_managed_node_as_the_readme_runs_it",
    "ros2 param set /inverse_dynamics compensate.friction false": LAUNCH + "test_param_set_and_topic_echo",
    "ros2 topic pub --once /inverse_dynamics/ee_wrench": LAUNCH + "test_wrenches_and_payload_by_message",
    "ros2 param set /inverse_dynamics ee_wrench_frame link": LAUNCH + "test_wrenches_and_payload_by_message",
    "ros2 topic pub --once /inverse_dynamics/payload": LAUNCH + "test_wrenches_and_payload_by_message",
    "ros2 launch rnea_ros trajectory_feedforward.launch.py": ROS + "test_trajectory_feedforward_lines",
    "ros2 run rnea_ros trajectory_feedforward_node --ros-args": ROS + "test_trajectory_feedforward_lines",
    "ros2 run controller_manager spawner": INSTALL + "test_ros2_control_lines_as_the_readme_runs_them",
    "ros2 control list_controllers": INSTALL + "test_ros2_control_lines_as_the_readme_runs_them",
    "ros2 topic pub --once /inverse_dynamics/contact_state": ROS + "test_contact_state_line",
    # docs/identification.md's recipe on a robot, in the folder of its files (robot.urdf, gains.yaml)
    ID_LAUNCH + " urdf_file:=robot.urdf params_file:=gains.yaml": ROS + "test_identification_recipe",
    ID_LAUNCH + " urdf_file:=identified.urdf": ROS + "test_identification_recipe",
    "ros2 run rnea_ros rnea_ros_identify": ROS + "test_identification_recipe",
    "inverse_dynamics_node --ros-args --params-file gains.yaml": ROS + "test_identification_recipe_pip_only",
    "rnea_ros_record -o run_a": ROS + "test_identification_recipe_pip_only",
    "rnea_ros_trigger /rnea_ros_record/stop": ROS + "test_identification_recipe_pip_only",
    "rnea_ros_identify run_a/ --urdf robot.urdf": ROS + "test_identification_recipe_pip_only",
}

# key -> why no test runs it here
BENCH = "long bench (`make bench`): timings of this machine, compared side by side there, never in a test"
EXCITATION = "real robot only: your arm's joints (the node itself runs in every forward demo: test_demo.py)"
NOT_RUN = {
    "make test": "the whole suite, this test among it: CI runs it",
    "make test-unit": "the unit suite: CI's `make test` runs every test it runs",
    "make test-ros": "the ROS suite (on Kilted: a second venv, minutes): CI's `make test` and its Kilted job",
    ".venv/bin/python -m pytest": "a part of the suite: CI's `make test` runs every test it runs",
    ".venv/bin/python bench/identify_tiago.py": "long bench (FIGAROH beside rnea_ros, minutes): `make bench`",
    ".venv/bin/python bench/": BENCH,
    "ros2 run rnea_ros multisine_trajectory": EXCITATION,
    "multisine_trajectory --ros-args": EXCITATION,
    "ros2 bag record": "real robot only, no rosbag2 here (rnea_ros_record: the pip-only recipe's test)",
    "ros2 topic pub --once /multisine_trajectory/start": "real robot only: starts a real arm's excitation",
    "rnea_ros_trigger /multisine_trajectory/start": "real robot only: starts a real arm's excitation",
}


@dataclass(frozen=True)
class Command:
    """A command line as bash reads it, where it is written (`page:line`), and the variable
    assignments before it in its block (`ROBOTS=$(…)`), which a user has run first."""

    line: str
    where: str
    prelude: tuple[str, ...] = ()

    @property
    def words(self) -> tuple[str, ...]:
        """The line's words, its trailing comment left out: two lines that differ only in a
        comment or spacing are one command."""
        return tuple(shlex.split(self.line, comments=True))


def console_scripts() -> set[str]:
    """The commands setup.py installs."""
    text = (REPO / "setup.py").read_text()
    return set(re.findall(r'"(\w+) = rnea_ros[\w.]*:\w+"', text))


def is_command(text: str) -> bool:
    """Whether a line starts with a command word (or a program in .venv/bin)."""
    first = text.split(maxsplit=1)[0] if text.strip() else ""
    return first in COMMAND_WORDS | console_scripts() or first.startswith(".venv/bin/")


def pages() -> list[Path]:
    """The pages a user reads: README.md and docs/*.md."""
    return [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]


def blocks(page: Path) -> list[tuple[str, int, str]]:
    """The fenced code blocks of a page: (info string, first line number, text)."""
    text = page.read_text()
    found = []
    for m in re.finditer(r"^```([\w-]*)[^\n]*\n(.*?)^```", text, re.S | re.M):
        found.append((m.group(1), text[: m.start()].count("\n") + 2, m.group(2)))
    return found


def joined(lines: list[tuple[int, str]]) -> list[tuple[int, str]]:
    """Lines continued with a trailing backslash joined to the next, as bash reads them
    (numbered by their first line)."""
    out: list[tuple[int, str]] = []
    pending: tuple[int, str] | None = None
    for number, text in lines:
        if pending is not None:
            number, text = pending[0], pending[1] + " " + text.strip()
        if text.rstrip().endswith("\\"):
            pending = (number, text.rstrip()[:-1].rstrip())
            continue
        pending = None
        out.append((number, text))
    assert pending is None, f"line {pending[0]} continues past the end of its block"
    return out


def page_commands(page: Path) -> list[Command]:
    """The command lines of a page's bash blocks."""
    rel = page.relative_to(REPO)
    commands = []
    for info, first, text in blocks(page):
        if info not in FENCES:
            continue
        numbered = list(enumerate(text.splitlines(), start=first))
        prelude: list[str] = []
        for number, line in joined(numbered):
            if line.strip() and not line.lstrip().startswith("#"):
                commands.append(Command(line.strip(), f"{rel}:{number}", tuple(prelude)))
                if re.match(r"[A-Za-z_]\w*=", line.strip()):
                    prelude.append(line.strip())
    return commands


def yaml_commands(path: Path) -> list[Command]:
    """The commands of a YAML file's comments: a comment whose text is indented (`#   ros2 …`)
    and starts with a command word, its continuation lines joined."""
    rel = path.relative_to(REPO)
    numbered = []
    for number, line in enumerate(path.read_text().splitlines(), start=1):
        m = re.match(r"\s*#(\s{2,})(.*)$", line)
        continuing = (
            bool(numbered) and numbered[-1][1].rstrip().endswith("\\") and numbered[-1][0] == number - 1
        )
        if m and (continuing or is_command(m.group(2))):
            numbered.append((number, m.group(2)))
    # runs of consecutive lines, each joined on its own
    commands = []
    for number, text in joined(numbered):
        commands.append(Command(text.strip(), f"{rel}:{number}"))
    return commands


def documented_commands() -> list[Command]:
    """Every command line of README.md, docs/*.md and the comments of config/*.yaml."""
    found = [c for page in pages() for c in page_commands(page)]
    return found + [c for path in sorted((REPO / "config").glob("*.yaml")) for c in yaml_commands(path)]


def stray_commands() -> list[str]:
    """Command lines outside a bash block: in an indented code block or a fence of another
    kind (a user copies them all the same)."""
    stray = []
    for page in pages():
        rel = page.relative_to(REPO)
        fenced: set[int] = set()
        for info, first, text in blocks(page):
            span = range(first - 1, first + text.count("\n") + 1)
            fenced.update(span)
            if info not in FENCES and info != "python":
                stray += [
                    f"{rel}:{first + i}: {ln}" for i, ln in enumerate(text.splitlines()) if is_command(ln)
                ]
        for number, line in enumerate(page.read_text().splitlines(), start=1):
            if number not in fenced and line.startswith("    ") and is_command(line.strip()):
                stray.append(f"{rel}:{number}: {line.strip()}")
    return stray


def keys() -> list[str]:
    return [*RUN_BY, *NOT_RUN]


def owner(line: str) -> str | None:
    """The longest key the line starts with (None: nobody owns it)."""
    matching = [k for k in keys() if line.startswith(k)]
    return max(matching, key=len) if matching else None


def owned(key: str) -> list[Command]:
    """The distinct commands the key owns (one per set of words), in the order of the pages."""
    assert key in RUN_BY, f"{key!r} is not run by a test (doc_commands.RUN_BY)"
    found: dict[tuple[str, ...], Command] = {}
    for command in documented_commands():
        if owner(command.line) == key:
            found.setdefault(command.words, command)
    assert found, f"no documented command starts with {key!r}"
    return list(found.values())


def script(command: Command) -> str:
    """What bash runs for a command: the assignments before it in its block that it uses, then the
    line."""
    used = [a for a in command.prelude if f"${a.split('=', 1)[0]}" in command.line]  # $ROBOTS ...
    return "\n".join([*used, command.line])


def user_env(env: dict[str, str], home: Path | None = None) -> dict[str, str]:
    """env with a HOME: `home`, else env's, else this process's."""
    return {
        **env,
        "HOME": str(home) if home else env.get("HOME") or os.environ.get("HOME") or str(Path.home()),
    }


def run(
    command: Command,
    env: dict[str, str],
    cwd: Path,
    timeout: float = 600.0,
) -> subprocess.CompletedProcess:
    """A documented command as a user runs it: `bash -c` from `cwd`, with a HOME (`user_env`),
    output as text; never hangs beyond `timeout`."""
    from rnea_ros.ros.processes import die_with_parent

    return subprocess.run(
        ["bash", "-c", script(command)],
        env=user_env(env),
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        preexec_fn=die_with_parent,
    )
