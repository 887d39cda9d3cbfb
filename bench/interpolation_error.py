"""How far joint_trajectory_controller's linear interpolation of the `effort` fields between
resampled points strays from the exact τ(t), against the resample period.

For each trajectory: the largest |τ_lin − τ| over joints and time (`interpolation_error`, 8
sub-samples per interval), in N m and as a fraction of the joint's effort limit, for periods of
1 to 50 ms. Trajectories: the demo's Panda multi-sines (multisine_node defaults, seeds 0-2, arm
joints moving, fingers held), and the faster ones of `compare_toppra.py` after `minimal_time_scale`
(so at their effort or velocity limits). Full effort law with the URDF's friction (Panda: viscous
0.003 N m s/rad, no Coulomb); one row with Coulomb friction of 0.5 N m per joint added to show
its tanh step.

    .venv/bin/python bench/interpolation_error.py
"""

from __future__ import annotations

import numpy as np
from compare_toppra import PANDA_HOME, UR5_HOME, model, multisine, point_to_point  # bench/

from rnea_ros import Friction
from rnea_ros.control.effort_law import EffortLaw
from rnea_ros.demo import PANDA_ARM
from rnea_ros.trajectory.efforts import interpolation_error
from rnea_ros.trajectory.time_scaling import minimal_time_scale, scale_trajectory

PERIODS = (0.001, 0.002, 0.005, 0.01, 0.02, 0.05)


def main() -> None:
    panda, ur5 = model("panda"), model("ur5")
    heavy = panda.with_payload("panda_hand", mass=3.0, com=(0.0, 0.0, 0.1))
    arm = [panda.joint_index(j) for j in PANDA_ARM]
    coulomb = Friction(panda.damping, np.full(panda.nv, 0.5))

    def scaled(m, points, friction, joints, scale=1.0):
        law = EffortLaw(friction=friction, effort_limit_scale=scale)
        k = minimal_time_scale(m, *points, law=law, joints=joints).k
        return scale_trajectory(*points, k=k), k

    urdf, urdf_ur5 = Friction.from_model(panda), Friction.from_model(ur5)
    cases = []
    for seed in range(3):
        demo = multisine(panda, False, seed)
        cases.append((f"Panda demo multi-sine, seed {seed}", panda, demo, urdf, arm, 1.0))
    fast, k = scaled(panda, multisine(panda, True, 1), urdf, PANDA_ARM, 0.45)
    cases.append((f"Panda fast multi-sine, 45 % effort, k = {k:.3f}", panda, fast, urdf, arm, 0.45))
    fast_c, k = scaled(panda, multisine(panda, True, 1), coulomb, PANDA_ARM, 0.45)
    cases.append((f"same, Coulomb 0.5 N m, k = {k:.3f}", panda, fast_c, coulomb, arm, 0.45))
    move = point_to_point(heavy, PANDA_HOME, {"panda_joint2": 0.2, "panda_joint4": -0.2}, 0.1)
    move, k = scaled(heavy, move, urdf, PANDA_ARM)
    cases.append((f"Panda + 3 kg point-to-point, k = {k:.3f}", heavy, move, urdf, arm, 1.0))
    move = point_to_point(ur5, UR5_HOME, {"shoulder_lift_joint": 0.2, "elbow_joint": -0.2}, 0.1)
    move, k = scaled(ur5, move, urdf_ur5, None)
    cases.append((f"UR5 point-to-point, k = {k:.3f}", ur5, move, urdf_ur5, list(range(6)), 1.0))

    print("| trajectory | " + " | ".join(f"{p * 1e3:g} ms" for p in PERIODS) + " |")
    print("| --- |" + " --: |" * len(PERIODS))
    for name, m, points, friction, idx, scale in cases:
        cells = []
        for p in PERIODS:
            err = interpolation_error(m, points, p, law=EffortLaw(friction=friction))[idx]
            rel = err / (m.effort_limit[idx] * scale)
            cells.append(f"{err.max():.2g} N m ({100 * rel.max():.2g} %)")
        print(f"| {name} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
