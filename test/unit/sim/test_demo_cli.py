"""rnea_ros.sim.cli (test_demo_cli: identification has a test_cli.py): the demos' shared
command-line pieces parse as the demos document them, and save_figure writes a real PNG and
closes the figure."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from rnea_ros.sim import cli  # noqa: E402


def test_exit_statuses_are_the_documented_ones() -> None:
    # rnea_ros.sim.demos.forward's docstring: 1 a target missed, 2 refused, 3 real time lost
    assert (cli.OK, cli.MISSED, cli.REFUSED, cli.REAL_TIME_LOST, cli.INTERRUPTED) == (0, 1, 2, 3, 130)


def test_a_demo_parser_takes_the_shared_options() -> None:
    parser = cli.demo_parser("--payload", "First paragraph.\n\nSecond.")
    cli.add_output_options(parser, "the plot and logs")
    cli.add_ros_options(parser, 60.0)
    cli.add_plant_arguments(parser)
    assert parser.prog == "python -m rnea_ros.demo --payload" and parser.description == "First paragraph."
    args = parser.parse_args(["--no-plot", "--json", "x.json", "--domain-id", "7", "--plant", "p.xml"])
    assert (args.plot, args.out, args.json, args.domain_id, args.timeout, args.plant) == (
        False,
        "out",
        "x.json",
        7,
        60.0,
        "p.xml",
    )
    assert parser.parse_args([]).plot is True and cli.demo_parser("", None).prog == "python -m rnea_ros.demo"


def test_save_figure_writes_a_png_into_a_new_folder_and_closes_it(tmp_path: Path) -> None:
    fig, ax = plt.subplots()
    ax.plot([0, 1], [1, 0])
    path = cli.save_figure(fig, tmp_path / "new" / "plot.png", dpi=50)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and path.stat().st_size > 1000
    assert not plt.fignum_exists(fig.number)


def test_a_run_ended_early_says_why_and_gives_its_status(capsys) -> None:
    assert cli.ended(KeyboardInterrupt()) == 130 and capsys.readouterr().err == "interrupted\n"
    assert cli.ended(TimeoutError("no answer in 5 s"), "JTC demo") == 1
    assert capsys.readouterr().err == "JTC demo failed: no answer in 5 s\n"


def test_a_run_ended_early_writes_why_into_its_json(tmp_path: Path) -> None:
    """A failed run's --json says why there are no numbers (the mismatch demo left none on a busy
    machine, and its test could only report a missing file)."""
    import json

    path = tmp_path / "out" / "numbers.json"
    assert cli.ended(RuntimeError("the recorder lost joint_states"), "mismatch demo", str(path)) == 1
    message = "mismatch demo failed: the recorder lost joint_states"
    assert json.loads(path.read_text()) == {"error": message, "failed": [message]}
    assert cli.ended(KeyboardInterrupt(), json_path=str(path)) == 130
    assert json.loads(path.read_text())["error"] == "interrupted"


def test_write_json_makes_the_folder_a_run_without_a_plot_did_not(tmp_path: Path) -> None:
    """`--no-plot --out DIR --json DIR/numbers.json` (the documented lines' bounds): the collision
    demo wrote its numbers into a folder nothing had made, and failed."""
    import json

    path = cli.write_json(tmp_path / "out" / "numbers.json", {"rms": [0.5, 1.25], "met": True})
    assert json.loads(path.read_text()) == {"rms": [0.5, 1.25], "met": True}
