"""The latency bench's bookkeeping: the publisher's patched CDR messages and the receiver's raw decoding
against rclpy's own (de)serializer, and the delivered/latency statistics against a count by hand.
No timing is asserted."""

from __future__ import annotations

import importlib.util
import sys

import numpy as np
import pytest
from paths import REPO

pytest.importorskip("rclpy")
from rclpy.serialization import deserialize_message  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402

BENCH = REPO / "bench"


def load(name: str):
    spec = importlib.util.spec_from_file_location(name, BENCH / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


roles = load("latency_roles")
bench = load("bench_latency")

STAMPS = [1, 999_999_999, 1_000_000_000, 1_754_000_000_123_456_789, 2**31 * 1_000_000_000 - 1]
SEQS = [0, 7, 123_456, 9_999_999_999]


@pytest.mark.parametrize("stamp", STAMPS)
@pytest.mark.parametrize("seq", SEQS)
def test_patched_message_is_a_panda_state_with_that_stamp_and_number(stamp: int, seq: int) -> None:
    raw = roles.patch(roles.template(), stamp, seq)
    msg = deserialize_message(raw, JointState)
    assert msg.header.stamp.sec * 1_000_000_000 + msg.header.stamp.nanosec == stamp
    assert int(msg.header.frame_id) == seq
    assert list(msg.name) == [f"panda_joint{i}" for i in range(1, 8)]
    assert list(msg.position) == roles.Q0 and len(msg.velocity) == 7
    assert roles.decode(raw) == (stamp, seq)


def test_decode_reads_any_joint_state_header() -> None:
    """The receiver decodes the subjects' answers too (other names and arrays, any frame_id)."""
    from rclpy.serialization import serialize_message

    for frame, seq in (("", -1), ("base", -1), ("42", 42), ("0000000003", 3)):
        msg = JointState(name=["a", "bb"], effort=[1.0, 2.0])
        msg.header.stamp.sec, msg.header.stamp.nanosec = 12, 345
        msg.header.frame_id = frame
        assert roles.decode(serialize_message(msg)) == (12_000_000_345, seq)


def test_analyse_counts_each_measured_input_once() -> None:
    rng = np.random.default_rng(3)
    n, warmup = 50, 10
    sched = 1_000_000 * np.arange(n, dtype=np.int64) + 10**18
    stamp = sched + rng.integers(0, 5_000, n)
    tx = np.stack([np.arange(n), sched, stamp], axis=1)
    latency = rng.integers(50_000, 3_000_000, n)  # ns
    answered = np.sort(rng.choice(n, 35, replace=False))
    rows = [(stamp[k] + latency[k] + 7_000, stamp[k] + latency[k], stamp[k], k) for k in answered]
    rows.append(rows[-1])  # a duplicate answer
    rows.append((stamp[0] + 10**9, stamp[0] + 10**9, 5, 0))  # an answer to nothing that was sent
    rx = np.array(rows, dtype=np.int64)
    out = bench.analyse(tx, rx, warmup, cpu=0.36)
    measured = answered[answered >= warmup]
    assert out["sent"] == n - warmup
    assert out["answered"] == len(measured)
    assert out["delivered"] == pytest.approx(len(measured) / (n - warmup))
    assert out["p50"] == pytest.approx(np.percentile(latency[measured] * 1e-6, 50))
    assert out["p99"] == pytest.approx(np.percentile(latency[measured] * 1e-6, 99))
    assert out["max"] == pytest.approx(latency[measured].max() * 1e-6)
    assert out["cpu_us"] == pytest.approx(0.36 / len(answered) * 1e6)
    assert out["receiver_lag_p99"] == pytest.approx(7_000 * 1e-6)
    late = (stamp - sched)[warmup:] * 1e-6
    assert out["publisher_late_p99"] == pytest.approx(np.percentile(late, 99))


def test_late_answers_are_told_apart_by_the_harness_stalls_around_them() -> None:
    """A skipped slot, a send 3 ms late and a take 4 ms after its reception are the harness's
    stalls; of the three answers later than 2 ms, the two with a stall between 5 ms before their
    input and their arrival count as in a stall, the one far from any does not."""
    n, ms = 400, 1_000_000
    seq = np.array([k for k in range(n) if k != 100])  # slot 100 skipped
    sched = ms * seq + 10**18
    stamp = sched + 20_000
    stamp[seq == 200] += 3 * ms  # sent 3 ms late
    tx = np.stack([seq, sched, stamp], axis=1)
    latency = {k: 100_000 for k in seq.tolist()}
    latency |= {102: 2_500_000, 201: 2_200_000, 300: 2_900_000, 350: 150_000}
    rows = []
    for k, s in zip(seq.tolist(), stamp.tolist(), strict=True):
        arrival = s + latency[k]
        rows.append((arrival + (4 * ms if k == 350 else 7_000), arrival, s, k))  # 350: taken 4 ms late
    out = bench.analyse(tx, np.array(rows, dtype=np.int64), warmup=10, cpu=0.1)
    assert out["harness_stalls"] == 3
    assert out["over_2ms"] == 3
    assert out["over_2ms_in_stall"] == 2  # 102 (after the skip) and 201 (after the late send), not 300
    stalls = bench.stall_times(tx, np.array(rows, dtype=np.int64))
    assert stalls.tolist() == sorted([sched[seq == 200][0], 10**18 + 100 * ms, rows[349][1]])
