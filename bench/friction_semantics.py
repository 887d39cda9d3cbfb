"""Joint friction as the simulator applies it and as the node compensates it, against velocity
(docs/friction_semantics.png, `make bench`).

For xArm7's base joint (M_ii = 0.13 kg m²) and last joint (1e-4 kg m²), URDF friction F_c = 1 N m:
MuJoCo's frictionloss measured on the joint moving alone (rnea_ros.sim.mujoco_arm), the
simulator's default implicit Coulomb friction F_c tanh(v/1 mm/s), the node's model
F_c tanh(v/v_ε) (the feedforward along a trajectory) and the node's feedback compensation
without a trajectory (scale 0.5, deadband 0.05 rad/s, bound from M_ii and a 1 kHz loop). Coulomb
parts only (the viscous parts are the same d q̇ on both sides). Prints the numbers it plots.

    python bench/friction_semantics.py [--out docs/friction_semantics.png]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from rnea_ros import Friction, RobotModel, mass_matrix  # noqa: E402
from rnea_ros.friction.compensation import CompensationRules, feedback_friction  # noqa: E402
from rnea_ros.model.example_robots import example_urdf_path  # noqa: E402
from rnea_ros.sim.mujoco_arm import MujocoArm  # noqa: E402
from rnea_ros.sim.scenario import home_of  # noqa: E402

PERIOD = 1e-3


def curves(joint: str) -> dict[str, np.ndarray]:
    urdf = example_urdf_path("xarm_description/urdf/xarm7.urdf").read_text()
    model = RobotModel.from_urdf(urdf)
    home = home_of(model)
    arm = MujocoArm(urdf, coulomb="frictionloss")
    arm.reset(home)
    i = model.joint_index(joint)
    v = np.logspace(-4, 2, 121)
    q = np.array([home[j] for j in model.joint_names])
    m_ii = float(mass_matrix(model, q)[i, i])
    fc = float(model.coulomb[i])
    coulomb_only = Friction([0.0], [fc])
    return {
        "v": v,
        "M_ii": np.array(m_ii),
        "F_c": np.array(fc),
        "MuJoCo frictionloss (alone)": -arm.frictionloss_torque(joint, v),
        "simulator default: F_c tanh(v / 1 mm/s), implicit": fc * np.tanh(v / arm.coulomb_velocity),
        "node model = feedforward: F_c tanh(v / 0.01 rad/s)": fc * np.tanh(v / 0.01),
        "node feedback (no trajectory): scaled, deadband, bound": np.array(
            [feedback_friction(coulomb_only, CompensationRules(), [x], [m_ii], PERIOD)[0] for x in v]
        ),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    default = Path(__file__).resolve().parent.parent / "docs" / "friction_semantics.png"
    parser.add_argument("--out", default=str(default))
    args = parser.parse_args()
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(13, 4.8), sharey=True)
    styles = ["C3-", "C0--", "k:", "C2-"]
    for ax, joint in zip(axes, ("joint1", "joint7"), strict=True):
        c = curves(joint)
        v = c.pop("v")
        m_ii, fc = float(c.pop("M_ii")), float(c.pop("F_c"))
        print(f"xArm7 {joint}: M_ii {m_ii:.3g} kg m^2, F_c {fc:g} N m; Coulomb force, N m, at v =")
        for label, value in c.items():
            at = {x: float(np.interp(x, v, value)) for x in (0.01, 0.1, 1.0, 10.0)}
            print(f"  {label:56s} " + "  ".join(f"{x:g}: {y:.4g}" for x, y in at.items()))
        for (label, value), style in zip(c.items(), styles, strict=True):
            ax.semilogx(v, value, style, lw=1.6, label=label)
        ax.set_title(f"xArm7 {joint}: M_ii = {m_ii:.2g} kg m², URDF friction {fc:g} N m")
        ax.set_xlabel("joint velocity, rad/s")
        ax.grid(alpha=0.3, which="both")
    axes[0].set_ylabel("Coulomb friction force, N m")
    axes[1].legend(loc="upper left", fontsize=8)
    fig.tight_layout()
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=90)
    print(f"plot: {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
