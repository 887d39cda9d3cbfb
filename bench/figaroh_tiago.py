"""FIGAROH's identification pipeline on the TIAGo recording (../shared/real-data/tiago/), on given
training rows, predicting given held-out rows.

FIGAROH (pinned in requirements-bench.txt, which `make bench` installs) runs as its TIAGo example
does: a `BaseIdentification` subclass that loads the CSV columns and converts the drive efforts with
the per-joint reduction ratio x motor constant (the torso: + 9.81 x its subtree mass), its
unified configuration (written here): torso and arm_1-arm_7 active, friction, actuator inertia
and joint offsets in the model, `torque_fit_joints` arm_1-arm_4, velocities and accelerations from
the median- and 2 Hz Butterworth-filtered positions (its example's filter: 100 Hz cut-off at a
stated 5000 Hz rate, i.e. 2 Hz at the recording's 100 Hz), decimation by 10, base parameters by
double QR and least squares. The held-out rows are its `validation_data_file`, processed by the
same pipeline. The model is the URDF with every joint but the torso and the arm locked at 0
(Pinocchio's buildReducedModel; rnea_ros's --tip-link does the same), so that FIGAROH's regressor
is not built over the 50 joints of the base, head and hand.

Data: PAL Robotics TIAGo, 2021-07-01, FIGAROH examples (Apache-2.0), Thanh Nguyen / CNRS / Toward SAS.
"""

from __future__ import annotations

import logging
import tempfile
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import yaml
from tiago_recording import DATA, JOINTS, SCORED, drives, load

FILTER_HZ = 2.0  # FIGAROH's TIAGo example: cutoff 100 Hz at a stated 5000 Hz, applied to 100 Hz data
DECIMATION = 10


def robot(urdf: Path):
    """The URDF as FIGAROH's robot: torso and arm moving, everything else locked at 0."""
    import pinocchio as pin

    full = pin.buildModelFromUrdf(str(urdf))
    locked = [full.getJointId(n) for n in full.names[1:] if n not in JOINTS]
    model = pin.buildReducedModel(full, locked, pin.neutral(full))
    if tuple(model.names[1:]) != JOINTS:
        raise RuntimeError(f"reduced model joints {list(model.names[1:])}, expected {JOINTS}")
    return SimpleNamespace(model=model, data=model.createData(), q0=pin.neutral(model), v0=np.zeros(model.nv))


def config(path: Path) -> Path:
    doc = {
        "_metadata": {"schema_version": "2.0", "config_type": "robot_configuration"},
        "robot": {
            "name": "tiago",
            "properties": {
                "joints": {"active_joints": list(JOINTS)},
                "coupling": {"has_coupled_wrist": False},
            },
        },
        "tasks": {
            "identification": {
                "enabled": True,
                "problem": {
                    "use_joint_torques": True,
                    "include_external_forces": False,
                    "model_components": {"friction": True, "actuator_inertia": True, "joint_offset": True},
                    "torque_fit_joints": list(SCORED),
                },
                "signal_processing": {"sampling_frequency": 100.0, "cutoff_frequency": FILTER_HZ},
                "data": {"validation_data_file": "held-out"},
            }
        },
    }
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path


def run(train: np.ndarray, held_out: np.ndarray, urdf: Path = DATA / "tiago_48_hey5.urdf") -> dict:
    """FIGAROH trained on CSV rows `train`, predicting rows `held_out` (index arrays). Returns its
    held-out predictions and nominal-model predictions (N, 4) for SCORED, its measured held-out
    efforts, its fit RMSE on the training rows (pooled over SCORED, its own definition) and
    the number of base parameters."""
    from figaroh.identification.base_identification import BaseIdentification

    logging.getLogger("figaroh").setLevel(logging.ERROR)
    t, q, _, raw = load()
    table = drives()["joints"]
    gain = np.array([table[j]["reduction_ratio"] * table[j]["kmotor"] for j in JOINTS], dtype=float)

    class Tiago(BaseIdentification):
        def load_trajectory_data(self, data_source=None):
            rows = held_out if data_source else train
            self.raw_data = {
                "timestamps": t[rows, None] - t[rows[0]],
                "positions": q[rows],
                "velocities": None,  # from the filtered positions, FIGAROH's TIAGo default
                "accelerations": None,
                "torques": raw[rows],
            }
            return self.raw_data

        def process_torque_data(self, **kwargs):
            import pinocchio as pin

            pin.computeSubtreeMasses(self.robot.model, self.robot.data)
            tau = self.raw_data["torques"] * gain
            torso = self.robot.model.getJointId("torso_lift_joint")
            tau[:, 0] += 9.81 * self.robot.data.mass[torso]
            return tau

    with tempfile.TemporaryDirectory() as tmp:
        rb = robot(urdf)
        ident = Tiago(rb, str(config(Path(tmp) / "tiago.yaml")))
        ps = ident.identif_config
        ps["act_Jid"] = [rb.model.getJointId(j) for j in JOINTS]
        ps["act_J"] = [rb.model.joints[i] for i in ps["act_Jid"]]
        ps["act_idxq"] = [j.idx_q for j in ps["act_J"]]
        ps["act_idxv"] = [j.idx_v for j in ps["act_J"]]
        ident.initialize()
        ident.solve(decimate=True, decimation_factor=DECIMATION, plotting=False, save_results=False)
    metrics = ident.result["validation_metrics"]
    names = metrics["joint_names"]
    if names != list(SCORED):
        raise RuntimeError(f"FIGAROH scored {names}, expected {list(SCORED)}")

    def table_of(key: str) -> np.ndarray:
        return np.column_stack([metrics[key][j] for j in SCORED])

    return {
        "predicted": table_of("tau_identified_per_joint"),
        "nominal": table_of("tau_nominal_per_joint"),
        "measured": table_of("tau_measured_per_joint"),
        "fit_rmse": float(ident.rms_error),
        "base_parameters": len(ident.phi_base),
        "ident": ident,
    }
