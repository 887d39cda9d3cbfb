"""The real TIAGo recording of ../shared/real-data/tiago/ as a rosbag2 of JointState, and its drive
constants as the inverse_dynamics node's effort_unit / gearing parameters.

Data: PAL Robotics TIAGo arm, 2021-07-01, from the FIGAROH examples (thanhndv212/figaroh-examples,
Apache-2.0); Thanh Nguyen / CNRS / Toward SAS. Keep this attribution wherever the data or results
from it are shown. Nothing of it is copied into this repository: the bag is written where asked.

    python bench/tiago_recording.py OUT_BAG [--params OUT.yaml]

The efforts stay in drive units (what the robot logged); `effort_params` writes the conversion
tau = ratio x kmotor x raw of drives.yaml as `effort_unit: current`, `gearing.ratio`,
`gearing.torque_constant` (the torso: joint_torque; its +9.81 x subtree mass offset is not a
unit conversion, and its effort is not fitted).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import yaml

REPO = Path(__file__).resolve().parent.parent
DATA = REPO.parent / "shared" / "real-data" / "tiago"
ATTRIBUTION = (
    "TIAGo data: PAL Robotics TIAGo, 2021-07-01, FIGAROH examples (Apache-2.0), "
    "Thanh Nguyen / CNRS / Toward SAS"
)
JOINTS = ("torso_lift_joint", *(f"arm_{i}_joint" for i in range(1, 8)))
SCORED = tuple(f"arm_{i}_joint" for i in range(1, 5))  # the joints whose effort is trusted
EXCITATION = (921, 6791)  # rows of the excitation (the data's README)
EPOCH = 1_625_097_600.0  # 2021-07-01 00:00 UTC: header stamps like a real recording's


def load(folder: Path = DATA) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """t (N,) s, positions, logged velocities and raw drive efforts (N, 8) in JOINTS order."""
    arrays = []
    for kind in ("position", "velocity", "effort"):
        path = folder / f"dynamic_tiago_{kind}.csv"
        header = path.read_text().splitlines()[0].split(",")
        names = [h.strip().lstrip("-").strip().removesuffix(f"_{kind}") for h in header[1:]]
        if tuple(names) != JOINTS:
            raise ValueError(f"{path}: columns {names}, expected {JOINTS}")
        arrays.append(np.loadtxt(path, delimiter=",", skiprows=1))
    t = arrays[0][:, 0]
    for a in arrays[1:]:
        if not np.array_equal(a[:, 0], t):
            raise ValueError("the three files do not share one clock")
    return t, arrays[0][:, 1:], arrays[1][:, 1:], arrays[2][:, 1:]


def write_bag(path: Path, folder: Path = DATA, stamped: bool = True, storage: str = "mcap") -> Path:
    """The recording as JointState messages on /joint_states (efforts in drive units)."""
    from rnea_ros.identification.bag import write_joint_states

    t, q, qd, raw = load(folder)
    return write_joint_states(path, t + EPOCH, JOINTS, q, qd, raw, storage=storage, stamped=stamped)


def drives(folder: Path = DATA) -> dict:
    return yaml.safe_load((folder / "drives.yaml").read_text())


def effort_params(path: Path, folder: Path = DATA) -> Path:
    """A node parameter file with drives.yaml's conversion: current x ratio x kmotor = joint torque."""
    table = drives(folder)["joints"]
    units = ["joint_torque" if j == "torso_lift_joint" else "current" for j in JOINTS]
    params = {
        "joints": list(JOINTS),
        "effort_unit": units,
        "gearing": {
            "ratio": [float(table[j]["reduction_ratio"]) for j in JOINTS],
            "torque_constant": [float(table[j]["kmotor"]) for j in JOINTS],
        },
    }
    text = f"# {ATTRIBUTION}; constants from drives.yaml (several unverified)\n"
    path.write_text(text + yaml.safe_dump({"inverse_dynamics": {"ros__parameters": params}}, sort_keys=False))
    return path


def torques(raw: np.ndarray, folder: Path = DATA) -> np.ndarray:
    """Raw drive efforts (N, 8) in joint torque (N m) as drives.yaml says, the torso left raw."""
    table = drives(folder)["joints"]
    gain = np.array([table[j]["reduction_ratio"] * table[j]["kmotor"] for j in JOINTS], dtype=float)
    gain[0] = 1.0
    return raw * gain


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("bag", type=Path)
    ap.add_argument("--params", type=Path, help="also write the effort conversion parameter file")
    ap.add_argument("--unstamped", action="store_true", help="header stamps 0 (bag times only)")
    args = ap.parse_args(argv)
    write_bag(args.bag, stamped=not args.unstamped)
    if args.params:
        effort_params(args.params)
    print(f"wrote {args.bag}{' and ' + str(args.params) if args.params else ''} ({ATTRIBUTION})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
