"""What the log says about the feedback bound (rnea_ros.control.feedback_bound) lowering the PD
gains: a line when it starts, when the set of lowered joints changes (at most one per CHANGE_S,
naming the joints of that moment) and when it stops, and a summary every SUMMARY_S while it lowers
them; not a line every few seconds (a slow loop lowers the gains of every cycle, for hours).
/diagnostics shows the state of every period (`feedback_scaled_joints`, `feedback_scale_min`).
"""

from __future__ import annotations

import math

from rclpy.impl.rcutils_logger import RcutilsLogger

from rnea_ros.nodes.inverse_dynamics.cycle_model import CycleModel
from rnea_ros.nodes.inverse_dynamics.diagnostics import SCALED, feedback_scaled_text

CHANGE_S = 10.0  # s, at most one line per this when the lowered joints change
SUMMARY_S = 60.0  # s between summaries while gains are lowered


class FeedbackScaleLog:
    """`cycle()` once per command cycle; logs as the module docstring says."""

    def __init__(
        self, logger: RcutilsLogger, change_s: float = CHANGE_S, summary_s: float = SUMMARY_S
    ) -> None:
        self._logger = logger
        self._change_s, self._summary_s = change_s, summary_s
        self._said: frozenset[str] = frozenset()  # the lowered joints the log last named
        self._said_at = -math.inf  # when (s)
        self._summary_at = 0.0
        self._cycles = self._lowered = 0  # cycles since the last summary, and those with lowered gains
        self._lowest, self._lowest_joint = 1.0, ""

    def cycle(self, cycle: CycleModel, lowered: bool, now: float) -> None:
        """lowered: some output joint's gains are lowered in this cycle; now: a monotonic time, s."""
        if not lowered and not self._said:  # nearly always: nothing to say
            return
        scale = cycle.efforts.feedback_scale[cycle.output].tolist()
        joints = frozenset(n for n, s in zip(cycle.output_names, scale, strict=True) if s < SCALED)
        self._cycles += 1
        if joints:
            self._lowered += 1
            k = min(range(len(scale)), key=scale.__getitem__)
            if scale[k] < self._lowest:
                self._lowest, self._lowest_joint = scale[k], cycle.output_names[k]
        if joints != self._said and now - self._said_at >= self._change_s:
            if joints:
                self._logger.warn(
                    f"{feedback_scaled_text(cycle)} (said again when these joints change; a summary "
                    f"every {self._summary_s:g} s while it lasts)"
                )
                if not self._said:
                    self._restart(now)
            else:
                self._logger.info("feedback gains as given again: the loop is fast enough for them")
            self._said, self._said_at = joints, now
        elif self._said and now - self._summary_at >= self._summary_s:
            self._logger.warn(
                f"feedback gains lowered in {self._lowered} of {self._cycles} cycles over the last "
                f"{now - self._summary_at:.0f} s (lowest x{self._lowest:.2f} on {self._lowest_joint}); "
                f"now: {feedback_scaled_text(cycle)}"
            )
            self._restart(now)

    def _restart(self, now: float) -> None:
        self._summary_at = now
        self._cycles = self._lowered = 0
        self._lowest, self._lowest_joint = 1.0, ""


__all__ = ["CHANGE_S", "SUMMARY_S", "FeedbackScaleLog"]
