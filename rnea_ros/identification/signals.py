"""Samples for identification from a recording: time-aligned q, q̇, q̈, τ, derivatives taken and
signals low-passed where they were not recorded.

Derivatives: when q̇ or q̈ are not recorded they come from positions by zero-phase filtering
(`scipy.signal.filtfilt`, Butterworth low-pass of order 4 at `cutoff` Hz, run forward and
backward, so no phase lag; odd extension over 6 cut-off periods at both ends) and second-order
central finite differences (`numpy.gradient`, which takes the actual sample times); the efforts
get the same filter so both sides of τ = Y π see the same smoothing (the fit filters its Coulomb
column tanh(q̇ / v_ε) alike: `prediction.coulomb_sign`). One cut-off period is trimmed at both
ends (filter edge transients). Savitzky-Golay would do as well; Butterworth makes the cut-off an
explicit frequency. A recording with lost messages is cut at every gap longer than FILL cut-off
periods, and each stretch is filtered and differentiated on its own (shorter gaps are bridged by
interpolation for the filter): a filter across a gap puts a false q̈ at its edges, which both
models then miss alike (docs/identification.md: lost bursts and the held-out error).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from scipy import signal

from rnea_ros.errors import RneaError

GAP = 1.5  # median sample intervals: a longer one is a gap (a lost message or more)
FILL = 0.1  # cut-off periods: a shorter gap is filled by interpolation before filtering, a longer one cuts


@dataclass(frozen=True)
class Samples:
    """Time-aligned samples, arrays (N, n) in `model.joint_names` order: t s, q rad or m, q̇, q̈,
    τ N m or N; `cutoff` (Hz) is the zero-phase low-pass the efforts went through (None: none)."""

    t: np.ndarray
    q: np.ndarray
    qd: np.ndarray
    qdd: np.ndarray
    tau: np.ndarray
    cutoff: float | None = None

    def __len__(self) -> int:
        return len(self.t)

    def part(self, index: slice | np.ndarray) -> Samples:
        """The samples at `index`."""
        return Samples(
            self.t[index], self.q[index], self.qd[index], self.qdd[index], self.tau[index], self.cutoff
        )


def sample_rate(t: npt.ArrayLike) -> float:
    """1 / median sample interval (Hz); ValueError unless t is strictly increasing with ≥ 2 samples."""
    t = np.asarray(t, dtype=float)
    if t.ndim != 1 or t.size < 2:
        raise RneaError("t must hold at least 2 sample times")
    dt = np.diff(t)
    if not np.all(np.isfinite(t)) or np.any(dt <= 0):
        raise RneaError("t must be finite and strictly increasing")
    return 1.0 / float(np.median(dt))


def _check_cutoff(cutoff: float, fs: float) -> None:
    if not (0 < cutoff < fs / 2):
        raise RneaError(f"cutoff must be in (0, {fs / 2:g}) Hz (half the sample rate), got {cutoff}")


def _filtfilt(x: np.ndarray, cutoff: float, fs: float, order: int) -> np.ndarray:
    b, a = signal.butter(order, cutoff / (fs / 2))
    # odd extension over 6 cut-off periods: the start-up transient dies out in the padding
    return signal.filtfilt(b, a, x, axis=0, padlen=min(len(x) - 1, int(np.ceil(6 * fs / cutoff))))


def stretches(t: npt.ArrayLike, cutoff: float | None = None) -> list[slice]:
    """The runs of samples that `prepare` low-passes at `cutoff` Hz on their own: a gap (an
    interval longer than GAP median intervals: a lost message or more) longer than FILL cut-off
    periods ends one; shorter gaps are bridged for the filter. Without a filter, one run: central
    differences on the actual times need no cut (across a long gap they become one-sided)."""
    t = np.asarray(t, dtype=float)
    dt = np.diff(t)
    if cutoff is None or not dt.size:
        return [slice(0, t.size)]
    longest = max(GAP * float(np.median(dt)), FILL / cutoff)
    bounds = [0, *(np.flatnonzero(dt > longest) + 1).tolist(), t.size]
    return [slice(a, b) for a, b in zip(bounds[:-1], bounds[1:], strict=True)]


def prepare(
    t: npt.ArrayLike,
    q: npt.ArrayLike,
    tau: npt.ArrayLike,
    qd: npt.ArrayLike | None = None,
    qdd: npt.ArrayLike | None = None,
    cutoff: float | None = None,
    order: int = 4,
) -> Samples:
    """Samples for identification from recorded t (s), q, τ and optionally q̇, q̈ (module docstring).

    With `cutoff` (Hz) q, τ and a recorded q̇ are low-passed (zero phase) before differentiating;
    without, nothing is filtered. Missing q̇ = d q / dt, missing q̈ = d q̇ / dt (central
    differences on the actual times). With a filter, each stretch between long gaps
    (`stretches`: lost messages) is filtered and differentiated on its own and loses a cut-off
    period at both ends (a filter across a gap puts a false q̈ at its edges); short gaps are
    bridged for the filter. Stretches too short for that are left out.
    """
    t = np.asarray(t, dtype=float)
    fs = sample_rate(t)
    shape = np.shape(q)
    if len(shape) != 2 or shape[0] != t.size:
        raise RneaError(f"q must have shape ({t.size}, n), got {shape}")

    def checked(name: str, value: npt.ArrayLike) -> np.ndarray:
        a = np.asarray(value, dtype=float)
        if a.shape != shape:
            raise RneaError(f"{name} must have shape {shape}, got {a.shape}")
        if not np.all(np.isfinite(a)):
            raise RneaError(f"{name} contains NaN or Inf")
        return a

    if cutoff is not None:
        _check_cutoff(cutoff, fs)
    given = {"q": checked("q", q), "tau": checked("tau", tau)}
    for name, value in (("qd", qd), ("qdd", qdd)):
        if value is not None:
            given[name] = checked(name, value)
    trim = 0 if cutoff is None else max(1, int(np.ceil(fs / cutoff)))
    parts = stretches(t, cutoff)
    pieces = (
        _prepare_stretch(t[s], {k: v[s] for k, v in given.items()}, fs, cutoff, order, trim) for s in parts
    )
    kept = [p for p in pieces if p is not None]
    if not kept:
        raise RneaError(
            f"too few samples ({t.size}, {len(parts)} stretch(es) between gaps) for cutoff {cutoff} Hz"
            f" at {fs:g} Hz"
        )
    t_k, q_k, qd_k, qdd_k, tau_k = (np.concatenate(column) for column in zip(*kept, strict=True))
    return Samples(t_k, q_k, qd_k, qdd_k, tau_k, cutoff)


def _prepare_stretch(
    t: np.ndarray, given: dict[str, np.ndarray], fs: float, cutoff: float | None, order: int, trim: int
) -> tuple[np.ndarray, ...] | None:
    """(t, q, q̇, q̈, τ) of one stretch, `trim` samples off both ends; None when it is too short to
    filter (at the recording's rate `fs`), to differentiate or to keep a sample. With `cutoff` its
    short gaps are filled by linear interpolation for the filter, and the filled samples are
    dropped again."""
    real = np.ones(t.size, dtype=bool)
    if cutoff is not None:
        t, given, real = _filled(t, given, fs)
    if t.size <= max(2 * trim, 1) or (cutoff is not None and t.size <= 3 * (order + 1)):
        return None
    if cutoff is not None:
        given = {k: _filtfilt(v, cutoff, fs, order) for k, v in given.items()}
    q_a, tau_a = given["q"], given["tau"]
    qd_a = given["qd"] if "qd" in given else np.gradient(q_a, t, axis=0)
    qdd_a = given["qdd"] if "qdd" in given else np.gradient(qd_a, t, axis=0)
    keep = np.zeros(t.size, dtype=bool)
    keep[trim : t.size - trim] = True
    keep &= real
    if not keep.any():
        return None
    return t[keep], q_a[keep], qd_a[keep], qdd_a[keep], tau_a[keep]


def _filled(
    t: np.ndarray, given: dict[str, np.ndarray], fs: float
) -> tuple[np.ndarray, dict[str, np.ndarray], np.ndarray]:
    """The stretch with every gap filled at the sample rate `fs` by linear interpolation, and the
    mask of its real samples."""
    missing = np.maximum(np.rint(np.diff(t) * fs).astype(int) - 1, 0)
    if not missing.any():
        return t, given, np.ones(t.size, dtype=bool)
    at = np.flatnonzero(missing)
    extra = np.concatenate(
        [
            t[i] + (t[i + 1] - t[i]) * np.arange(1, m + 1) / (m + 1)
            for i, m in zip(at, missing[at], strict=True)
        ]
    )
    t_all = np.concatenate([t, extra])
    order = np.argsort(t_all, kind="stable")
    real = order < t.size
    t_out = t_all[order]
    filled = {k: np.column_stack([np.interp(t_out, t, column) for column in v.T]) for k, v in given.items()}
    return t_out, filled, real


def lowpass(t: npt.ArrayLike, x: npt.ArrayLike, cutoff: float, order: int = 4) -> np.ndarray:
    """x (N, ...) low-passed along time at `cutoff` Hz as `prepare` filters: zero-phase
    Butterworth, each stretch on its own, short gaps bridged; a stretch too short to filter is left
    as it is."""
    t, x = np.asarray(t, dtype=float), np.asarray(x, dtype=float)
    fs = sample_rate(t)
    _check_cutoff(cutoff, fs)
    out = x.reshape(len(x), -1).copy()
    for part in stretches(t, cutoff):
        t_f, filled, real = _filled(t[part], {"x": out[part]}, fs)
        if t_f.size > 3 * (order + 1):
            out[part] = _filtfilt(filled["x"], cutoff, fs, order)[real]
    return out.reshape(x.shape)
