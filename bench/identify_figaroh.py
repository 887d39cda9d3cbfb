"""Run A of bench/identify_mismatch.py identified by FIGAROH's core next to rnea_ros.identification.fit.

FIGAROH (`pip install figaroh`, not a dependency of this package) is driven by per-robot YAML
configurations and pulls in meshcat, ipython, pandas, picos/cvxopt and ndcurves; only its
estimation core is used here, loaded straight from its files (numpy, scipy and Pinocchio only):
`tools/regressor.py` (Pinocchio's joint torque regressor + viscous, sign(q̇) Coulomb and armature
columns) and `tools/qrdecomposition.py` (base parameters by double QR, ordinary least squares on
them). Both methods get the same filtered samples of the same simulated run; each is validated on
the held-out 30 % by per-joint torque RMS against the URDF model's.

    pip install --target /tmp/figaroh_site --no-deps figaroh==1.0.2
    python bench/identify_figaroh.py --figaroh /tmp/figaroh_site/figaroh [--seed 0]
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pinocchio as pin

sys.path.insert(0, str(Path(__file__).resolve().parent))
from identify_mismatch import TIP, excitation, plant_of, samples_of, simulate, validation_rms  # noqa: E402

from rnea_ros import RobotModel  # noqa: E402
from rnea_ros.identification.fit import FitOptions, identify  # noqa: E402
from rnea_ros.identification.regressor import standard_parameters  # noqa: E402
from rnea_ros.model.example_robots import example_urdf_path  # noqa: E402


def load(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(f"figaroh_{name}", path / "tools" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--figaroh", type=Path, required=True, help="the figaroh package directory")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--duration", type=float, default=60.0)
    args = ap.parse_args(argv)
    regressor_mod, qr_mod = load(args.figaroh, "regressor"), load(args.figaroh, "qrdecomposition")

    urdf_path = example_urdf_path("panda")
    model = RobotModel.from_urdf(urdf_path.read_text(), tip_link=TIP)
    full = pin.buildModelFromUrdf(str(urdf_path))
    fingers = [full.getJointId(n) for n in ("panda_finger_joint1", "panda_finger_joint2")]
    reduced = pin.buildReducedModel(full, fingers, pin.neutral(full))
    assert tuple(reduced.names[1:]) == model.joint_names
    robot = SimpleNamespace(model=reduced, data=reduced.createData())

    plant = plant_of(urdf_path.read_text(), args.seed, payload=False)
    run = simulate(plant, model, excitation(model, args.seed, args.duration), 0.002)
    samples = samples_of(run, np.random.default_rng(args.seed + 1000), 1e-5, 0.05, 15.0, False, 2)
    n_train = int(round(0.7 * len(samples)))
    train, valid = samples.part(slice(0, n_train)), samples.part(slice(n_train, len(samples)))
    n = model.nv

    clock = time.perf_counter()
    ours = identify(model, samples, ("inertial", "friction"), FitOptions(split=0.7, min_speed=0.05))
    ours_s = time.perf_counter() - clock

    clock = time.perf_counter()
    config = {"has_friction": True, "has_actuator_inertia": True, "act_idxv": list(range(n))}
    names = [
        f"{p}{j}"
        for j in range(1, n + 1)
        for p in ("m", "mx", "my", "mz", "xx", "xy", "yy", "xz", "yz", "zz")
    ]
    names += [f"{p}{j}" for p in ("fv", "fs", "ia") for j in range(1, n + 1)]

    def regressor(part):  # rows joint-major (joint j, sample i at j N + i), FIGAROH's layout
        return regressor_mod.build_regressor_basic(robot, part.q, part.qd, part.qdd, config)

    w = regressor(train)
    norms = np.linalg.norm(w, axis=0)
    keep = np.flatnonzero(norms >= 1e-6 * norms.max())
    result = qr_mod.QRDecomposer().decompose(w[:, keep], [names[i] for i in keep], train.tau.T.reshape(-1))
    w_val = regressor(valid)[:, keep][:, result.base_indices]
    predicted = (w_val @ result.phi_b).reshape(n, -1).T
    fig_s = time.perf_counter() - clock
    rms_fig = np.sqrt(np.mean((valid.tau - predicted) ** 2, axis=0))
    rms_urdf = validation_rms(model, standard_parameters(model), valid)
    base_names = [names[keep[i]] for i in result.base_indices]

    def base_value(name: str) -> float:
        return float(result.phi_b[base_names.index(name)]) if name in base_names else float("nan")

    print(f"Panda plant seed {args.seed}, run A; held-out torque RMS, N m (ratio to the URDF model's)")
    print(
        f"{'joint':<13}{'URDF':>8}{'rnea_ros':>18}{'FIGAROH core':>20}"
        "  viscous true/ours/FIGAROH   coulomb true/ours/FIGAROH"
    )
    for j in range(n):
        print(
            f"{model.joint_names[j]:<13}{rms_urdf[j]:>8.3f}"
            f"{ours.rms_identified[j]:>9.3f} ({ours.rms_identified[j] / rms_urdf[j]:.3f})"
            f"{rms_fig[j]:>11.3f} ({rms_fig[j] / rms_urdf[j]:.3f})"
            f"   {plant.damping[j]:.3f} {ours.viscous[j]:.3f} {base_value(f'fv{j + 1}'):.3f}"
            f"        {plant.coulomb[j]:.3f} {ours.coulomb[j]:.3f} {base_value(f'fs{j + 1}'):.3f}"
        )
    print(
        f"base parameters: rnea_ros {ours.rank}, FIGAROH {result.rank} (of {len(names)}; "
        f"{len(names) - keep.size} zero columns dropped first)"
    )
    print(f"time: rnea_ros {ours_s:.1f} s, FIGAROH core {fig_s:.1f} s ({len(train)} + {len(valid)} samples)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
