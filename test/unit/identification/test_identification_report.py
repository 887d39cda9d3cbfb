"""What rnea_ros_identify prints: the held-out table in fixed-width columns that hold any value
(parsed back here and compared with the numbers put in), and a joint with no moving held-out
sample said in words, its count taken from the samples themselves."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from rnea_ros import Friction, RobotModel, friction_torques, rnea
from rnea_ros.identification.fit import FitOptions, identify
from rnea_ros.identification.report import table
from rnea_ros.identification.signals import Samples
from rnea_ros.model.example_robots import example_urdf_path

NO_MOVING = "no moving sample"


@pytest.fixture(scope="module")
def pendulum() -> RobotModel:
    return RobotModel.from_urdf(example_urdf_path("double_pendulum").read_text())


def still_at_the_end(model: RobotModel, still_from: float, rate: float = 200.0, duration: float = 20.0):
    """Samples of a smooth motion (with friction) where the last joint stops at `still_from` of the
    recording and stays still."""
    t = np.arange(0.0, duration, 1.0 / rate)
    n = model.nv
    w = np.linspace(0.7, 1.9, n)
    q = 0.6 * np.sin(np.outer(t, w) + np.arange(n))
    qd = 0.6 * w * np.cos(np.outer(t, w) + np.arange(n))
    qdd = -0.6 * w**2 * np.sin(np.outer(t, w) + np.arange(n))
    stop = int(still_from * t.size)
    if stop < t.size:
        q[stop:, -1], qd[stop:, -1], qdd[stop:, -1] = q[stop, -1], 0.0, 0.0
    friction = Friction(np.full(n, 0.3), np.full(n, 0.2))
    tau = rnea(model, q, qd, qdd) + friction_torques(friction, qd)
    return Samples(t, q, qd, qdd, tau)


def rows(text: str, names: tuple[str, ...]) -> dict[str, tuple[str, str]]:
    """Per joint row: (the text of the every-sample columns, that of the moving columns)."""
    out = {}
    for line in text.splitlines():
        for name in names:
            if line.startswith(name + " "):
                every, _, moving = line[len(name) :].partition(" | ")
                out[name] = (every, moving)
    return out


def numbers(columns: str) -> list[float]:
    return [float(token) for token in columns.split()]


def test_every_value_keeps_its_column(pendulum: RobotModel) -> None:
    """Values of any size (the reported 5.304e-09 1.435e-05 ratio 2706.146 ran together), a
    joint name longer than the name column's default, and huge and tiny ratios."""
    samples = still_at_the_end(pendulum, still_from=1.0)
    result = identify(pendulum, samples, ("friction",), FitOptions(min_speed=0.05))
    names = ("panda_joint3", "a_joint_name_longer_than_twenty_two_characters")
    every = {names[0]: (5.304e-09, 1.435e-05), names[1]: (1.5e300, 2.5e-300)}
    moving = {names[0]: (123456.789, 0.000123), names[1]: (1e-300, 1e300)}
    shown = replace(
        result,
        joint_names=names,
        fit_joints=names,
        rms_model=np.array([every[j][0] for j in names]),
        rms_identified=np.array([every[j][1] for j in names]),
        rms_model_moving=np.array([moving[j][0] for j in names]),
        rms_identified_moving=np.array([moving[j][1] for j in names]),
    )
    text = table(shown)
    found = rows(text, names)
    assert set(found) == set(names), text
    for name in names:
        for columns, (urdf, identified) in zip(found[name], (every[name], moving[name]), strict=True):
            got = numbers(columns)
            assert len(got) == 3, f"{name}: {columns!r}"
            ratio = identified / urdf
            np.testing.assert_allclose(got, [urdf, identified, ratio], rtol=5e-4)
    # fixed width: every row's separator and last column end where the header's do
    lines = [line for line in text.splitlines() if " | " in line and not line.startswith("pooled")]
    assert len({line.index(" | ") for line in lines}) == 1, text
    assert len({len(line) for line in lines[1:]}) == 1, text


def test_a_joint_without_moving_held_out_samples_says_so(pendulum: RobotModel) -> None:
    """The last joint stops before the held-out part: its moving columns say so (not 0 0 nan), its
    every-sample columns keep their numbers; the count of moving held-out samples per joint is the
    samples' own."""
    samples = still_at_the_end(pendulum, still_from=0.6)
    result = identify(pendulum, samples, ("friction",), FitOptions(split=0.7, min_speed=0.05))
    valid = samples.part(slice(result.train_samples, len(samples)))
    expected = (np.abs(valid.qd) >= 0.05).sum(axis=0)
    assert expected[-1] == 0 and expected[0] > 0.5 * len(valid)
    np.testing.assert_array_equal(result.validation_moving_samples, expected)
    text = table(result)
    found = rows(text, pendulum.joint_names)
    first, last = pendulum.joint_names
    assert NO_MOVING not in found[first][1] and len(numbers(found[first][1])) == 3
    assert found[last][1].strip() == NO_MOVING, text
    assert "nan" not in text
    np.testing.assert_allclose(
        numbers(found[last][0])[:2], [result.rms_model[-1], result.rms_identified[-1]], rtol=5e-4
    )
