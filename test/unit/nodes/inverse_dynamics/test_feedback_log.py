"""The feedback bound's log (rnea_ros.nodes.inverse_dynamics.feedback_log): a line when the gains
start being lowered, when the lowered joints change (at most one per CHANGE_S) and when they are
as given again, a summary every SUMMARY_S while lowered; nothing else, however many cycles."""

from __future__ import annotations

import re

import numpy as np

from rnea_ros import RobotModel
from rnea_ros.model.example_robots import example_urdf_path
from rnea_ros.nodes.inverse_dynamics.cycle_model import build_cycle_model
from rnea_ros.nodes.inverse_dynamics.feedback_log import CHANGE_S, SUMMARY_S, FeedbackScaleLog
from rnea_ros.nodes.inverse_dynamics.params import INVERSE_DYNAMICS
from rnea_ros.ros.schema import defaults

PANDA = RobotModel.from_urdf(example_urdf_path("panda").read_text(), tip_link="panda_hand")


class Logger:
    def __init__(self) -> None:
        self.lines: list[tuple[str, str]] = []

    def warn(self, text: str) -> None:
        self.lines.append(("warn", text))

    def info(self, text: str) -> None:
        self.lines.append(("info", text))


def test_said_on_change_and_summed_up_not_every_few_seconds() -> None:
    cycle = build_cycle_model(PANDA, defaults(INVERSE_DYNAMICS), None)
    scale = cycle.efforts.feedback_scale
    logger = Logger()
    log = FeedbackScaleLog(logger)  # type: ignore[arg-type]
    t = 0.0

    def run(seconds: float, values: list[float], rate: float = 100.0) -> None:
        nonlocal t
        scale[:] = values
        for _ in range(int(seconds * rate)):
            log.cycle(cycle, min(values) < 0.999, t)
            t += 1.0 / rate

    run(5.0, [1.0] * 7)
    assert logger.lines == []  # gains as given: nothing
    run(150.0, [0.5, 0.4, 1.0, 1.0, 1.0, 1.0, 1.0])  # 2.5 min lowered on two joints
    warns = [text for kind, text in logger.lines if kind == "warn"]
    assert len(warns) == 1 + int(150.0 // SUMMARY_S)  # the start, then a summary per SUMMARY_S
    assert "panda_joint1 x0.50, panda_joint2 x0.40" in warns[0] and "said again when" in warns[0]
    lowered, cycles = map(int, re.search(r"lowered in (\d+) of (\d+) cycles", warns[1]).groups())
    assert lowered == cycles and abs(cycles - SUMMARY_S * 100) <= 2, warns[1]  # every cycle of 60 s
    assert "lowest x0.40 on panda_joint2" in warns[1]
    logger.lines.clear()
    # a third joint flickers in and out every cycle: one line per CHANGE_S at most
    for _ in range(int(30.0 * 100)):
        scale[:] = [0.5, 0.4, 0.9 if int(t * 100) % 2 else 1.0, 1.0, 1.0, 1.0, 1.0]
        log.cycle(cycle, True, t)
        t += 0.01
    assert 1 <= len(logger.lines) <= 30.0 / CHANGE_S + 1, logger.lines
    logger.lines.clear()
    run(CHANGE_S + 1.0, [1.0] * 7)  # as given again: said once (info; a summary may come first), then nothing
    assert logger.lines[-1][0] == "info" and "as given again" in logger.lines[-1][1], logger.lines
    assert len(logger.lines) <= 2
    said = len(logger.lines)
    run(SUMMARY_S * 2, [1.0] * 7)
    assert len(logger.lines) == said
    assert np.all(scale == 1.0)
