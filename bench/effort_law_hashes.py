"""SHA-256 of every path that evaluates the effort law, to check a refactoring is bitwise neutral.

Runs on this checkout's package (or on the one `PYTHONPATH` puts first) and prints one hash per
path: the node's cycle (`compute_efforts` over 400 steps for Panda and UR5 with friction, root-
and link-axes wrenches, bounded PD feedback, the runaway guard, measured and desired state),
`trajectory_efforts`, `effort_terms`, `interpolation_error`, `minimal_time_scale`,
`check_limits`, `effort_trajectory` and, when toppra is installed, the time-optimal re-timing.
Works with both the keyword API (gravity=, friction=, compensate=, wrenches=, effort_limit=) and
the one-law API (law=EffortLaw(...)), so the same script runs before and after.

    python bench/effort_law_hashes.py            # hashes, one per line
"""

from __future__ import annotations

import hashlib
import inspect
import sys
from typing import Any

import numpy as np

from rnea_ros.algorithms.dynamics import GRAVITY, link_pose
from rnea_ros.control import effort_law as el
from rnea_ros.friction.compensation import CompensationRules
from rnea_ros.friction.model import Friction
from rnea_ros.model.example_robots import example_urdf_path
from rnea_ros.model.robot_model import RobotModel
from rnea_ros.trajectory import efforts as te
from rnea_ros.trajectory import jtc_points, time_scaling

ONE_LAW = "law" in inspect.signature(te.trajectory_efforts).parameters
TIPS = {"panda": "panda_hand", "ur5": "tool0"}


def digest(*arrays: Any) -> str:
    h = hashlib.sha256()
    for a in arrays:
        h.update(np.ascontiguousarray(np.asarray(a, dtype=float)).tobytes())
    return h.hexdigest()[:16]


def friction_for(model: RobotModel, rng: np.random.Generator) -> Friction:
    n = model.nv
    return Friction(rng.uniform(0.1, 1.0, n), rng.uniform(0.2, 2.0, n), 0.02, rng.uniform(2.0, 3.0, n), 0.05)


def node_law(model, friction, compensate, kp, kd, desired: bool, wrenches=None) -> tuple[Any, Any]:
    """(EffortLaw, Efforts) in whichever API this checkout has."""
    rules = CompensationRules(0.8, 0.9, 0.002)
    kw: dict[str, Any] = {
        "gravity": GRAVITY,
        "compensate": frozenset(compensate),
        "kp": kp,
        "kd": kd,
        "use_desired_state": desired,
        "effort_limit_scale": 3.0,
        "friction_rules": rules,
        "guard_window": 0.05,
        "max_phase_lag": 0.5,
    }
    if ONE_LAW:
        law = el.EffortLaw(**kw, friction=friction, wrenches=wrenches)
        return law, el.Efforts(model, law)
    law = el.EffortLaw(**kw)
    return law, el.Efforts(model, friction, law)


def cycle_hash(name: str, desired: bool, local: bool, seed: int) -> str:
    model = RobotModel.from_urdf(example_urdf_path(name).read_text())
    rng = np.random.default_rng(seed)
    n = model.nv
    friction = friction_for(model, rng)
    tip = TIPS[name]
    root_wrench = {tip: rng.normal(size=6)}
    local_wrench = rng.normal(size=6)
    _, efforts = node_law(
        model, friction, el.COMPENSABLE, rng.uniform(50, 200, n), rng.uniform(2, 10, n), desired
    )
    driven = (np.arange(n) % 2).astype(np.int64)
    out = []
    t = 3.0
    for step in range(400):
        s = 0.002 * step
        q = 0.3 * np.sin(1.1 * s + np.arange(n)) + 0.01 * rng.normal(size=n)
        qd = 1.3 * np.cos(2.3 * s + np.arange(n)) + 0.05 * rng.normal(size=n)
        q_des = q + 0.02 * rng.normal(size=n)
        qd_des = qd + 0.1 * rng.normal(size=n)
        qdd_des = rng.normal(size=n)
        if local:  # as the node's Runtime.wrenches: a link-axes wrench turned into root axes at q
            rot, _ = link_pose(model, q, tip)
            wrenches = {tip: np.concatenate([rot @ local_wrench[:3], rot @ local_wrench[3:]])}
        else:
            wrenches = root_wrench
        t += 0.001 + 0.0005 * (step % 3 == 0)
        el.compute_efforts(
            efforts, q, qd, (q_des, qd_des, qdd_des), wrenches, driven=driven if step % 50 else None,
            t=t, delay=0.0002 * (step % 7),
        )  # fmt: skip
        out += [efforts.table[:8].copy(), efforts.feedback_scale.copy(), efforts.guard.state.copy()]
    return digest(*out)


def points(model: RobotModel, seed: int, duration: float = 2.0):
    rng = np.random.default_rng(seed)
    n = model.nv
    times = np.linspace(0.0, duration, 7)
    q = np.cumsum(rng.uniform(-0.4, 0.4, (7, n)), axis=0)
    qd = rng.uniform(-1.0, 1.0, (7, n))
    qd[0] = qd[-1] = 0.0
    return times, q, qd, np.zeros_like(q)


def traj_law(model, friction, compensate, wrenches, effort_limit=None, scale=1.0) -> dict[str, Any]:
    """Keywords for the trajectory functions in whichever API this checkout has."""
    if ONE_LAW:
        law = el.EffortLaw(
            compensate=frozenset(compensate), friction=friction, wrenches=wrenches,
            effort_limit=effort_limit, effort_limit_scale=scale,
        )  # fmt: skip
        return {"law": law}
    kw: dict[str, Any] = {
        "gravity": GRAVITY,
        "friction": friction,
        "compensate": compensate,
        "wrenches": wrenches,
    }
    if effort_limit is not None or scale != 1.0:
        base = model.effort_limit if effort_limit is None else effort_limit
        kw["effort_limit"] = base * scale
    return kw


def trajectory_hashes(name: str) -> dict[str, str]:
    model = RobotModel.from_urdf(example_urdf_path(name).read_text())
    rng = np.random.default_rng(7)
    friction = friction_for(model, rng)
    wrenches = {TIPS[name]: rng.normal(size=6) * 5}
    times, q, qd, qdd = points(model, 1)
    t, qs, qds, qdds = te.resample((times, q, qd, qdd), 0.005)
    out: dict[str, list] = {"trajectory_efforts": [], "effort_terms": [], "interpolation_error": []}
    for compensate in (el.COMPENSABLE, ("gravity", "friction"), ("inertia", "wrench"), ()):
        law = traj_law(model, friction, compensate, wrenches)
        out["trajectory_efforts"].append(te.trajectory_efforts(model, qs, qds, qdds, **law))
        out["effort_terms"] += list(te.effort_terms(model, qs, qds, qdds, **law).values())
        out["interpolation_error"].append(te.interpolation_error(model, (times, q, qd, qdd), 0.01, **law))
    law = traj_law(model, friction, el.COMPENSABLE, wrenches)
    out["trajectory_efforts"].append(
        te.trajectory_efforts(model, qs, qds, qdds, **traj_law(model, None, el.COMPENSABLE, None))
    )
    result = {key: digest(*v) for key, v in out.items()}
    scales = []
    for lim_scale, fast in ((0.3, 1.0), (0.8, 4.0), (1.0, 0.5)):
        kw = traj_law(model, friction, el.COMPENSABLE, wrenches, scale=lim_scale)
        s = time_scaling.minimal_time_scale(model, times / fast, q, qd * fast, qdd, **kw)
        c = time_scaling.check_limits(model, times / fast, q, qd * fast, qdd, k=1.3, **kw)
        scales.append([s.k, s.ratio, s.time, s.duration, s.feasible, c.k, c.ratio, c.time])
        names = model.joint_names[:3]
        held = dict(zip(model.joint_names[3:], q[0, 3:], strict=True))
        r = jtc_points.effort_trajectory(
            model, names, times / fast, q[:, :3], qd[:, :3] * fast, None, held=held, with_terms=True, **kw
        )
        scales += [r.times, r.positions, r.velocities, r.efforts, [r.scale.k], *(r.terms or {}).values()]
    result["time_scaling+jtc_points"] = digest(*[np.asarray(x, dtype=float).ravel() for x in scales])
    try:
        import toppra  # noqa: F401

        from rnea_ros.trajectory.time_optimal import time_optimal_parameterisation
    except ImportError:
        result["time_optimal"] = "toppra not installed"
    else:
        coulomb_only = Friction(np.zeros(model.nv), friction.coulomb, 0.02)
        kw = traj_law(model, coulomb_only, el.COMPENSABLE, {TIPS[name]: 0.1 * wrenches[TIPS[name]]})
        try:
            res = time_optimal_parameterisation(model, times, q, qd * 3, qdd, gridpoints=200, **kw)
            result["time_optimal"] = digest(*res)
        except ValueError as exc:
            result["time_optimal"] = f"refused: {exc}"
    return result


def main() -> int:
    print(f"API: {'one law' if ONE_LAW else 'keywords'}")
    for name in ("panda", "ur5"):
        for desired in (False, True):
            for local in (False, True):
                value = cycle_hash(name, desired, local, 3)
                print(f"compute_efforts {name} desired={desired} link_wrench={local}: {value}")
        for key, value in trajectory_hashes(name).items():
            print(f"{key} {name}: {value}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
