"""The payload demo's supervisor (thin ROS adapter, rnea_ros.sim.demos.payload.demo): the closed-loop
demo's Supervisor, which also records the node's ~/payload estimates and its payload estimation
and contact statuses on /diagnostics, and runs a grasp run or a free run of several multi-sines."""

from __future__ import annotations

import time

import numpy as np
from diagnostic_msgs.msg import DiagnosticArray
from geometry_msgs.msg import InertiaStamped
from rcl_interfaces.srv import SetParameters
from rclpy.parameter import Parameter

from rnea_ros.ros.stamps import stamp_ns
from rnea_ros.sim.demos.payload.scenario import START, Run
from rnea_ros.sim.processes import Processes
from rnea_ros.sim.scenario import NODE, TAIL, Config
from rnea_ros.sim.supervisor import Supervisor

MULTISINE = "/multisine_trajectory"
STATUS_WAIT = 5.0  # s


class PayloadSupervisor(Supervisor):
    """One payload demo run; every wait bounded as the Supervisor's."""

    def __init__(self, config: Config, processes: Processes | None, timeout: float, estimation: bool) -> None:
        super().__init__(config, processes, timeout, record_terms=False)
        self.estimation = estimation
        self.estimates: list[tuple[float, float, np.ndarray]] = []  # (plant s, kg, com m)
        self.status: dict[str, str] = {}
        self.peak_ratio = 0.0
        self.peak_at: tuple[float, list[float]] = (float("nan"), [])  # (plant s, per joint)
        self.free_start = 0.0  # plant time the free run's first multi-sine was asked for
        self.node.create_subscription(InertiaStamped, f"{NODE}/payload", self._on_payload, 10)
        self.seed_client = self.node.create_client(SetParameters, f"{MULTISINE}/set_parameters")

    def _on_payload(self, msg: InertiaStamped) -> None:
        i = msg.inertia
        com = np.array([i.com.x, i.com.y, i.com.z])
        self.estimates.append((self.plant_time(stamp_ns(msg.header.stamp)), float(i.m), com))

    def _on_diagnostics(self, msg: DiagnosticArray) -> None:
        super()._on_diagnostics(msg)
        for status in msg.status:
            values = {kv.key: kv.value for kv in status.values}
            if status.name.endswith(": payload estimation"):
                self.status = values
            elif status.name.endswith(": contact") and values.get("peak_ratio_to_threshold"):
                peaks = [float(x) for x in values["peak_ratio_to_threshold"].split(",")]
                if max(peaks) > self.peak_ratio:  # where: the diagnostics period ending then
                    self.peak_ratio = max(peaks)
                    self.peak_at = (self.plant_time(stamp_ns(msg.header.stamp)), peaks)

    def _result(self, recording, seconds: float) -> Run:
        """The run's Run; with estimation on, after its status has come (at most STATUS_WAIT s:
        the node publishes /diagnostics every second)."""
        if self.estimation:
            end = time.monotonic() + STATUS_WAIT
            self._spin_until(lambda: bool(self.status) or time.monotonic() > end, "a status", stall=False)
        return Run(recording, list(self.estimates), dict(self.status), self.peak_ratio, seconds, self.peak_at)

    def grasp_run(self, end: float) -> Run:
        """One multi-sine from START over the schedule, until plant time `end`."""
        self.wait_for_loop()
        print("  loop running")
        self.wait_until(START)
        start = self.request_trajectory()
        print(f"  trajectory from {start:.2f} s")
        self.wait_until(end)
        recording = self.recording((0.0, 0.0), (start, end), (np.inf, np.inf))
        return self._result(recording, end)

    def free_run(self, seconds: float, trajectory: float) -> Run:
        """Multi-sines of `trajectory` s, each from the pose at rest with a new seed, until
        `seconds` of them have run."""
        self.wait_for_loop()
        self.wait_until(START)
        self.free_start = self.now
        done, k = 0.0, 0
        while done < seconds - 1e-9:
            self.set_seed(k + 1)
            start = self.request_trajectory()
            self.wait_until(start + trajectory + TAIL)
            done += trajectory
            k += 1
            print(f"  {done:.0f} s of multi-sines, {len(self.estimates)} estimate(s)")
        return self._result(None, done)

    def stopped(self, exc: Exception) -> Run:
        """The free run until real time was lost (`exc`): what it had seen."""
        run = self._result(None, max(self.now - self.free_start, 0.0))
        run.stopped = str(exc)
        return run

    def set_seed(self, seed: int) -> None:
        """multisine_trajectory's seed, through its set_parameters service."""
        end = time.monotonic() + 10.0
        self._spin_until(lambda: self.seed_client.service_is_ready() or time.monotonic() > end, "a service")
        request = SetParameters.Request(parameters=[Parameter("seed", value=seed).to_parameter_msg()])
        future = self.seed_client.call_async(request)
        end = time.monotonic() + 10.0
        self._spin_until(lambda: future.done() or time.monotonic() > end, "set_parameters answer")
        if not future.done() or not future.result().results[0].successful:
            raise TimeoutError(f"{MULTISINE} did not take seed {seed}")
