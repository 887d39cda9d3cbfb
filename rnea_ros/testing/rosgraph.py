"""Test harness: the inverse_dynamics node as a real subprocess, driven by a real rclpy node
(the ros tests in test/ and bench/soak.py).

The node is started exactly as a launch file would start it (`--ros-args --params-file ... -r
...`). Every wait is bounded. Importing this module gives the process its own ROS_DOMAIN_ID
(unless one is set), so pytest processes running side by side do not see each other.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import yaml

from rnea_ros.ros.processes import die_with_parent

os.environ.setdefault("ROS_DOMAIN_ID", str(100 + os.getpid() % 100))
os.environ.setdefault("ROS_LOCALHOST_ONLY", "1")

import rclpy  # noqa: E402
from diagnostic_msgs.msg import DiagnosticArray  # noqa: E402
from rcl_interfaces.srv import GetParameters, SetParameters  # noqa: E402
from rclpy.node import Node  # noqa: E402
from rclpy.parameter import Parameter, parameter_value_to_python  # noqa: E402
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from std_msgs.msg import Float64MultiArray, String  # noqa: E402

NODE = "/inverse_dynamics"
# How long a node may take to start answering: a ceiling, not an expectation (about 2 s on a quiet
# machine, over 20 s with three other heavy jobs on its two cores)
START_TIMEOUT = 120.0
# How long a node may take to end on SIGINT: a ceiling (well under a second when quiet; seconds when
# busy: 5 s was once not enough with three other jobs on the machine)
STOP_TIMEOUT = 60.0
# Parameters that make the node's friction term zero whatever the URDF says: for tests whose
# expectations are the rigid-body terms. The friction rules (feedforward along a trajectory,
# bounded feedback at the measured loop period without one, runaway guard) are tested in
# test_friction_node.py, test_compensation.py and test_runaway_guard.py.
FRICTION_OFF = {"friction.scale": 0.0, "friction.feedforward_scale": 0.0}


def ros_distro() -> str:
    """The ROS 2 distribution of the rclpy in use: from its wheel (ros-<distro>-rclpy), else the
    ROS_DISTRO of a sourced install."""
    import importlib.metadata
    import re

    for dist in importlib.metadata.distributions():
        match = re.fullmatch(r"ros-([a-z]+)-rclpy", dist.metadata["Name"] or "")
        if match:
            return match.group(1)
    return os.environ.get("ROS_DISTRO", "unknown")


# joint_states_timeout of a node started here unless the test sets it: a state that a busy machine
# delivered late still gets its command (the default 0.1 s refused a state 0.115 s old when the
# machine ran three other jobs: "no command"); tests of the age check set their own.
LATE_STATE_TIMEOUT = 10.0


def start_node(
    tmp: Path, params: dict, *remaps: str, module: str = "rnea_ros.nodes.inverse_dynamics"
) -> subprocess.Popen:
    """Start the node with a params file built from `params` and `-r` remaps (`module`:
    rnea_ros.nodes.inverse_dynamics.lifecycle for the managed variant); joint_states_timeout is
    LATE_STATE_TIMEOUT unless `params` sets it."""
    path = tmp / f"params_{time.monotonic_ns()}.yaml"
    params = {"joint_states_timeout": LATE_STATE_TIMEOUT, **params}
    path.write_text(yaml.safe_dump({"inverse_dynamics": {"ros__parameters": params}}))
    args = [sys.executable, "-m", module, "--ros-args", "--params-file", str(path)]
    for remap in remaps:
        args += ["-r", remap]
    # Into a file, not a pipe: a long test would fill a pipe nobody reads and block the node.
    log = path.with_suffix(".log").open("w+")
    proc = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, text=True, preexec_fn=die_with_parent)
    proc.log = log  # type: ignore[attr-defined]
    return proc


def stop(proc: subprocess.Popen) -> str:
    """Stop a process (SIGINT, then kill) and return what it printed. A process still running
    when stopped must end on that SIGINT with exit code 0 (not a crash, not a kill), as a node
    started by `ros2 launch` must when the launch is stopped. Called while an exception
    propagates (a test's `finally:`), it adds the process's output to that exception."""
    interrupted = proc.poll() is None
    killed = False
    if interrupted:
        proc.send_signal(2)
        try:
            proc.wait(STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)
            killed = True
    log = getattr(proc, "log", None)
    if log is not None:
        log.seek(0)
        output = log.read()
    else:
        output = proc.stdout.read() if proc.stdout else ""
    failing = sys.exc_info()[1]  # called from a `finally:` under a failing test: say what the node said
    if failing is not None:
        failing.add_note(f"output of {proc.args!r}:\n{output[-4000:]}")
    if interrupted and (killed or proc.returncode != 0):
        how = f"did not stop within {STOP_TIMEOUT} s" if killed else f"exited with {proc.returncode}"
        raise AssertionError(f"{proc.args!r} {how} on SIGINT:\n{output[-4000:]}")
    # a log line after the context was shut down (rnea_ros.ros.throttled_log.say is the way)
    assert "Failed to publish log message to rosout" not in output, output[-4000:]
    return output


def output_of(proc: subprocess.Popen) -> str:
    """What a node started by `start_node` has printed so far."""
    proc.log.flush()  # type: ignore[attr-defined]
    return Path(proc.log.name).read_text(errors="replace")  # type: ignore[attr-defined]


def wait_for_output(proc: subprocess.Popen, text: str, timeout: float = START_TIMEOUT) -> str:
    """The node's output once it holds `text`; AssertionError with the output when the node
    ends first or after `timeout` s."""
    end = time.monotonic() + timeout
    while text not in (out := output_of(proc)):
        ended = proc.poll()
        assert ended is None and time.monotonic() < end, f"no {text!r}, exit {ended}:\n{out[-3000:]}"
        time.sleep(0.05)  # the pace of the look
    return out


class Driver:
    """A test node that feeds the inverse_dynamics node and records what it publishes."""

    def __init__(self, name: str = "driver", effort_bounds: dict[str, float] | None = None) -> None:
        """effort_bounds: joint name → largest |effort| the node may ever publish for it
        (effort limit × the largest effort_limit_scale the test uses); checked on close()."""
        self.effort_bounds = effort_bounds or {}
        if not rclpy.ok():
            rclpy.init()
        self.node = Node(name)
        self.commands: list[tuple[float, list[float]]] = []
        self.joint_efforts: list[JointState] = []
        self.unanswered: set[tuple[int, int]] = set()  # stamps of states command_for gave up on
        self.terms: dict[str, list[JointState]] = {}
        self.diagnostics: list[DiagnosticArray] = []
        n = self.node
        n.create_subscription(Float64MultiArray, f"{NODE}/effort_commands", self._on_command, 100)
        self.joint_efforts_times: list[float] = []  # arrival (time.monotonic) of each joint_efforts
        n.create_subscription(JointState, f"{NODE}/joint_efforts", self._on_joint_efforts, 100)
        for term in ("gravity", "coriolis", "inertia", "friction", "wrench", "feedback"):
            self.terms[term] = []
            n.create_subscription(JointState, f"{NODE}/terms/{term}", self.terms[term].append, 100)
        n.create_subscription(DiagnosticArray, "/diagnostics", self.diagnostics.append, 10)
        self.joint_states = n.create_publisher(JointState, "joint_states", 10)
        latched = QoSProfile(
            depth=1, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL
        )
        self.description = n.create_publisher(String, "robot_description", latched)
        self.set_client = n.create_client(SetParameters, f"{NODE}/set_parameters")
        self.get_client = n.create_client(GetParameters, f"{NODE}/get_parameters")

    def _on_joint_efforts(self, msg: JointState) -> None:
        self.joint_efforts.append(msg)
        self.joint_efforts_times.append(time.monotonic())

    def _on_command(self, msg: Float64MultiArray) -> None:
        self.commands.append((time.monotonic(), list(msg.data)))

    def spin(self, seconds: float) -> None:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            rclpy.spin_once(self.node, timeout_sec=0.01)

    def state(self, names, q, qd=None, stamp_offset: float = 0.0, stamp: bool = True) -> JointState:
        msg = JointState(name=list(names), position=[float(x) for x in q])
        if qd is not None:
            msg.velocity = [float(x) for x in qd]
        if stamp:
            now = self.node.get_clock().now().nanoseconds + int(stamp_offset * 1e9)
            msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(now, 1_000_000_000)
        return msg

    def command_for(self, msg: JointState, timeout: float = 10.0, age: float = 0.0) -> np.ndarray | None:
        """Publish `msg` with a fresh stamp (`age` s before now) and return the efforts answering
        it, or None after `timeout` s (a ceiling: an answer comes in well under a second, also
        when busy; a state that is refused gets none).

        The answer is matched by stamp on ~/joint_efforts, which carries the input's stamp and
        the same values as ~/effort_commands. A state given up on is remembered: `settle()`.
        """
        now = self.node.get_clock().now().nanoseconds - round(age * 1e9)
        msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(now, 1_000_000_000)
        stamp = (msg.header.stamp.sec, msg.header.stamp.nanosec)
        self.joint_states.publish(msg)
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            rclpy.spin_once(self.node, timeout_sec=0.01)
            for js in reversed(self.joint_efforts[-20:]):
                if (js.header.stamp.sec, js.header.stamp.nanosec) == stamp:
                    return np.array(js.effort)
        self.unanswered.add(stamp)
        return None

    def command_after(
        self,
        send: Callable[[], None],
        msg: JointState,
        earlier: Sequence[np.ndarray] = (),
        timeout: float = 120.0,
    ) -> np.ndarray:
        """The command for `msg` once the node has taken what `send()` publishes (an IMU sample, an
        odometry) on another topic. Nothing orders two topics: a loaded machine may deliver the
        state first, and the node answers it with the input before. So: `send()`, then `msg`,
        again until the answer is none of `earlier` (the commands the inputs sent before give,
        exactly); that answer is returned, right or wrong (the caller compares it). AssertionError
        after `timeout` s."""
        last = None
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            send()
            self.spin(0.05)
            last = self.command_for(msg, timeout=2.0)
            if last is not None and not any(np.abs(last - old).max() < 1e-9 for old in earlier):
                return last
        seen = self.latest_diagnostics()
        raise AssertionError(f"no command for a new input within {timeout} s (last {last}): {seen}")

    def settle(self, most: float = 10.0) -> None:
        """Spin until the states `command_for` gave up on are answered (at most `most` s: a refused
        one never is), so that no late answer counts as a command of the test's next step."""
        end = time.monotonic() + most
        while self.unanswered and time.monotonic() < end:
            rclpy.spin_once(self.node, timeout_sec=0.01)
            recent = self.joint_efforts[-50:]
            self.unanswered -= {(js.header.stamp.sec, js.header.stamp.nanosec) for js in recent}
        self.unanswered.clear()

    def no_command_for(self, msg: JointState, wait: float = 0.4) -> bool:
        """Publish `msg` as is and check that no command follows within `wait` seconds."""
        before = len(self.commands)
        self.joint_states.publish(msg)
        self.spin(wait)
        return len(self.commands) == before

    def wait_for_commands(self, make_msg, timeout: float = START_TIMEOUT) -> np.ndarray:
        """Publish make_msg() (freshly stamped) every 50 ms until one of them is answered (the node
        is starting): the answer; TimeoutError after `timeout` s saying what came meanwhile."""
        sent: set[tuple[int, int]] = set()
        seen = len(self.joint_efforts)
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            msg = make_msg()
            now = self.node.get_clock().now().nanoseconds
            msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(now, 1_000_000_000)
            sent.add((msg.header.stamp.sec, msg.header.stamp.nanosec))
            self.joint_states.publish(msg)
            pace = time.monotonic() + 0.05
            while time.monotonic() < pace:
                rclpy.spin_once(self.node, timeout_sec=0.01)
                for js in self.joint_efforts[seen:]:
                    stamp = (js.header.stamp.sec, js.header.stamp.nanosec)
                    if stamp in sent:
                        self._drain({s for s in sent if s > stamp}, seen)
                        return np.array(js.effort)
        status = self.status(self.diagnostics[-1]) if self.diagnostics else "none"
        raise TimeoutError(
            f"no effort command for {len(sent)} joint_states within {timeout} s; meanwhile "
            f"{len(self.joint_efforts) - seen} answers to other states, last /diagnostics: {status}"
        )

    def _drain(self, later: set[tuple[int, int]], seen: int, most: float = 5.0) -> None:
        """Spin until the answers to the states sent after the answered one came (answers come in
        the order of their states; at most `most` s), so that none arrives during the next step."""
        end = time.monotonic() + most
        while time.monotonic() < end:
            answered = {(js.header.stamp.sec, js.header.stamp.nanosec) for js in self.joint_efforts[seen:]}
            if later <= answered:
                return
            rclpy.spin_once(self.node, timeout_sec=0.01)

    def flood(self, msg: JointState, seconds: float, rate: float, every_second=None) -> int:
        """Publish `msg`, freshly stamped, at `rate` Hz for `seconds`; call every_second() once a
        second; return how many were sent. Answers are not read meanwhile."""
        sent, start, next_call = 0, time.monotonic(), 0.0
        while (elapsed := time.monotonic() - start) < seconds:
            if sent < elapsed * rate:
                now = self.node.get_clock().now().nanoseconds
                msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(now, 1_000_000_000)
                self.joint_states.publish(msg)
                sent += 1
            else:
                time.sleep(0.00005)
            if every_second and elapsed >= next_call:
                every_second()
                next_call += 1.0
        return sent

    def set_parameters(self, values: dict) -> list:
        """Set parameters through the node's set_parameters service (as rqt_reconfigure does)."""
        request = SetParameters.Request()
        request.parameters = [
            Parameter(name, value=value).to_parameter_msg() for name, value in values.items()
        ]
        return self._call(self.set_client, request).results

    def get_parameters(self, names: list[str]) -> dict:
        """name → the value the node stores (as `ros2 param get` reads it; None when not set)."""
        response = self._call(self.get_client, GetParameters.Request(names=names))
        values = [parameter_value_to_python(v) for v in response.values]
        return dict(zip(names, values, strict=True))

    def _call(self, client, request):
        """`request`'s response from `client`, a service of the node under test. A first call
        right after discovery can lose its response (the service's reply path is matched after its
        request path), and a node answers once its kernels are loaded (tens of seconds on a busy
        machine with a cold cache); getting and setting parameters are idempotent, so ask again."""
        assert client.wait_for_service(30.0), f"{client.srv_name} not available"
        deadline = time.monotonic() + 60.0
        while time.monotonic() < deadline:
            future = client.call_async(request)
            end = time.monotonic() + 3.0
            while not future.done() and time.monotonic() < end:
                rclpy.spin_once(self.node, timeout_sec=0.01)
            if future.done():
                return future.result()
            client.remove_pending_request(future)
        raise AssertionError(f"{client.srv_name} did not answer")

    def latest_diagnostics(self, timeout: float = 30.0) -> dict[str, str]:
        self.diagnostics.clear()
        end = time.monotonic() + timeout
        while not self.diagnostics and time.monotonic() < end:
            rclpy.spin_once(self.node, timeout_sec=0.05)
        assert self.diagnostics, "no /diagnostics"
        return self.status(self.diagnostics[-1])

    def diagnostics_while_publishing(self, make_msg, timeout: float = 30.0) -> dict[str, str]:
        """The next /diagnostics status while make_msg() is published at about 50 Hz."""
        self.diagnostics.clear()
        end = time.monotonic() + timeout
        while not self.diagnostics and time.monotonic() < end:
            self.joint_states.publish(make_msg())
            self.spin(0.02)
        assert self.diagnostics, "no /diagnostics"
        return self.status(self.diagnostics[-1])

    def diagnostics_until(
        self, check: Callable[[dict[str, str]], object], timeout: float = 30.0
    ) -> dict[str, str]:
        """The first /diagnostics status from now on for which check(status) holds, spinning
        meanwhile: what the node did with an input sent just before, whenever it gets to it (a
        fixed wait before reading one status failed on a busy machine); AssertionError with the
        last status after `timeout` s."""
        self.diagnostics.clear()
        end = time.monotonic() + timeout
        status: dict[str, str] = {}
        while time.monotonic() < end:
            rclpy.spin_once(self.node, timeout_sec=0.05)
            while self.diagnostics:
                status = self.status(self.diagnostics.pop(0))
                if check(status):
                    return status
        raise AssertionError(f"no /diagnostics as expected within {timeout} s; the last: {status or 'none'}")

    def until(self, check: Callable[[], object], timeout: float = 30.0, what: object = "") -> None:
        """Spin until check() holds; AssertionError naming `what` (or what `what()` says then:
        what was seen) after `timeout` s."""
        end = time.monotonic() + timeout
        while not check():
            if time.monotonic() > end:
                raise AssertionError(f"not within {timeout} s: {what() if callable(what) else what or check}")
            rclpy.spin_once(self.node, timeout_sec=0.02)

    @staticmethod
    def status(msg: DiagnosticArray) -> dict[str, str]:
        """The node's status in a DiagnosticArray as {"level": int, "message": ..., key: value}."""
        status = msg.status[0]
        return {
            "level": int.from_bytes(status.level, "little")
            if isinstance(status.level, bytes)
            else status.level,
            "message": status.message,
            **{kv.key: kv.value for kv in status.values},
        }

    def check_published_efforts(self) -> int:
        """The invariant of the whole suite: every published effort finite and within bounds."""
        for _, data in self.commands:
            assert np.all(np.isfinite(data)), f"non-finite effort command {data}"
        for js in self.joint_efforts:
            for name, effort in zip(js.name, js.effort, strict=True):
                assert np.isfinite(effort), f"non-finite effort for {name}"
                assert abs(effort) <= self.effort_bounds.get(name, np.inf) + 1e-9, f"{name}: {effort}"
        return len(self.joint_efforts)

    def close(self) -> None:
        self.check_published_efforts()
        self.node.destroy_node()


__all__ = [
    "FRICTION_OFF",
    "LATE_STATE_TIMEOUT",
    "START_TIMEOUT",
    "Driver",
    "ros_distro",
    "output_of",
    "start_node",
    "stop",
    "wait_for_output",
]
