"""The contact-force QP of rnea_ros.algorithms.contact_qp on four solvers: quadprog (the one
the package uses), daqp, proxsuite (ProxQP dense) and OSQP. Problems from Pinocchio free-flyer
models: solo12 standing on 4 point feet (12 variables, 6 equalities, 20 inequalities) and TALOS
on 2 sole rectangles (32 corner-force variables, 6 equalities, 34 inequalities), at rest and in
motion. Per solver and case: median solve time (µs, one-shot call from Python, set-up included),
the equality residual ‖A x − b‖∞ relative to ‖b‖∞, the largest inequality violation (N) and the
objective's excess over quadprog's. Also: the harness's own cost (timing an empty call) and the
whole solve_contact_forces (checks, QP build, rank reduction, solve, τ).

    nice -n 10 .venv/bin/python bench/contact_qp.py

The other solvers are optional (pip install daqp proxsuite osqp); a missing one is listed as such.
"""

from __future__ import annotations

import importlib.util
import timeit
from collections.abc import Callable

import numpy as np
import pinocchio as pin

from rnea_ros.algorithms.contact_qp import ContactQP, contact_qp, solve_contact_forces, solve_qp
from rnea_ros.algorithms.contacts import Contact
from rnea_ros.model.example_robots import example_robots_dir

NUMBER, REPEAT = 200, 7


def median_us(fn: Callable[[], object]) -> float:
    return float(np.median(timeit.repeat(fn, number=NUMBER, repeat=REPEAT)) / NUMBER * 1e6)


def robot(urdf: str, srdf: str, key: str) -> tuple[pin.Model, np.ndarray]:
    root = example_robots_dir()
    model = pin.buildModelFromUrdf(str(root / urdf), pin.JointModelFreeFlyer())
    pin.loadReferenceConfigurations(model, str(root / srdf), False)
    return model, model.referenceConfigurations[key].copy()


def problem(model: pin.Model, q: np.ndarray, v: np.ndarray, a: np.ndarray, frames, kind: str):
    data = model.createData()
    mm = pin.crba(model, data, q)
    mm = np.triu(mm) + np.triu(mm, 1).T
    h = pin.nonLinearEffects(model, data, q, v).copy()
    pin.computeJointJacobians(model, data, q)
    pin.updateFramePlacements(model, data)
    contacts, jacs = [], []
    for name in frames:
        fid = model.getFrameId(name)
        jac = pin.getFrameJacobian(model, data, fid, pin.LOCAL_WORLD_ALIGNED)
        if kind == "point":
            contacts.append(Contact(name, "point", mu=0.8, min_normal_force=1.0))
            jacs.append(jac[:3].copy())
        else:
            x = data.oMf[fid].rotation[:, 0]
            contacts.append(
                Contact(name, "6d", mu=0.8, tangent=tuple(x), half_extents=(0.1, 0.065), min_normal_force=5.0)
            )
            jacs.append(jac.copy())
    return mm, h, contacts, jacs


def cases() -> list[tuple[str, tuple]]:
    out = []
    rng = np.random.default_rng(0)
    solo, q_solo = robot("solo_description/robots/solo12.urdf", "solo_description/srdf/solo.srdf", "standing")
    talos, q_talos = robot(
        "talos_data/robots/talos_reduced.urdf", "talos_data/srdf/talos.srdf", "half_sitting"
    )
    feet = ("FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT")
    soles = ("left_sole_link", "right_sole_link")
    for label, model, q, frames, kind, sv, sa in (
        ("solo12 4 points, rest", solo, q_solo, feet, "point", 0.0, 0.0),
        ("solo12 4 points, moving", solo, q_solo, feet, "point", 0.5, 1.0),
        ("TALOS 2 soles, rest", talos, q_talos, soles, "6d", 0.0, 0.0),
        ("TALOS 2 soles, moving", talos, q_talos, soles, "6d", 0.1, 0.3),
    ):
        v = rng.normal(0.0, sv, model.nv) if sv else np.zeros(model.nv)
        a = rng.normal(0.0, sa, model.nv) if sa else np.zeros(model.nv)
        out.append((label, (*problem(model, q, v, a, frames, kind), a)))
    return out


# --- the solvers, each on the same program: min ½xᵀHx + gᵀx, A x = b, C x ≤ d ------------------


def with_quadprog(qp: ContactQP) -> np.ndarray | None:
    return solve_qp(qp)


def with_daqp(qp: ContactQP) -> np.ndarray | None:
    import daqp

    a = np.vstack([qp.A, qp.C])
    upper = np.concatenate([qp.b, qp.d])
    lower = np.concatenate([qp.b, np.full(qp.d.shape, -1e30)])
    sense = np.concatenate([np.full(qp.b.shape, 5), np.zeros(qp.d.shape)]).astype(np.int32)
    x, _, flag, _ = daqp.solve(qp.H, qp.g, a, upper, lower, sense)
    return np.asarray(x) if flag == 1 else None


def with_proxsuite(qp: ContactQP) -> np.ndarray | None:
    import proxsuite

    res = proxsuite.proxqp.dense.solve(
        qp.H, qp.g, qp.A, qp.b, qp.C, np.full(qp.d.shape, -1e20), qp.d, eps_abs=1e-9, eps_rel=0.0
    )
    solved = res.info.status == proxsuite.proxqp.QPSolverOutput.PROXQP_SOLVED
    return np.asarray(res.x) if solved else None


def with_osqp(qp: ContactQP) -> np.ndarray | None:
    import osqp
    from scipy import sparse

    a = sparse.csc_matrix(np.vstack([qp.A, qp.C]))
    upper = np.concatenate([qp.b, qp.d])
    lower = np.concatenate([qp.b, np.full(qp.d.shape, -np.inf)])
    solver = osqp.OSQP()
    solver.setup(
        sparse.csc_matrix(np.triu(qp.H)), qp.g, a, lower, upper, verbose=False,
        eps_abs=1e-9, eps_rel=0.0, max_iter=20000, polishing=True,
    )  # fmt: skip
    res = solver.solve()
    return np.asarray(res.x) if res.info.status_val in (1, 2) else None  # solved (inaccurate)


SOLVERS = {
    "quadprog": ("quadprog", with_quadprog),
    "daqp": ("daqp", with_daqp),
    "proxsuite": ("proxsuite", with_proxsuite),
    "osqp": ("osqp", with_osqp),
}


def quality(qp: ContactQP, x: np.ndarray, best: float) -> tuple[float, float, float]:
    eq = float(np.max(np.abs(qp.A @ x - qp.b)) / max(1.0, np.max(np.abs(qp.b))))
    ineq = float(max(0.0, np.max(qp.C @ x - qp.d)))
    obj = 0.5 * x @ qp.H @ x + qp.g @ x
    return eq, ineq, float((obj - best) / max(1.0, abs(best)))


def main() -> None:
    print(f"harness: an empty call costs {median_us(lambda: None):.2f} µs (included in every time below)")
    print(f"{'case':26s} {'solver':10s} {'µs':>9s} {'eq resid':>9s} {'ineq viol':>9s} {'obj excess':>10s}")
    for label, (mm, h, contacts, jacs, a) in cases():
        b_base = (mm @ a + h)[:6]
        qp = contact_qp(b_base, [j[:, :6] for j in jacs], contacts, relax=False)
        ref = solve_qp(qp)
        assert ref is not None, label
        best = float(0.5 * ref @ qp.H @ ref + qp.g @ ref)
        for name, (module, fn) in SOLVERS.items():
            if importlib.util.find_spec(module) is None:
                print(f"{label:26s} {name:10s} {'not installed':>9s}")
                continue
            x = fn(qp)
            if x is None:
                print(f"{label:26s} {name:10s} {'failed':>9s}")
                continue
            eq, ineq, obj = quality(qp, x, best)
            t = median_us(lambda fn=fn, qp=qp: fn(qp))
            print(f"{label:26s} {name:10s} {t:9.1f} {eq:9.1e} {ineq:9.1e} {obj:10.1e}")
        t = median_us(lambda mm=mm, h=h, a=a, c=contacts, j=jacs: solve_contact_forces(mm, h, a, c, j))
        print(f"{label:26s} {'(whole)':10s} {t:9.1f}  solve_contact_forces: checks, QP build, solve, τ")


if __name__ == "__main__":
    main()
