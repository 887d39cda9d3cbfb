"""The contact-consistent inverse dynamics wrapper (contact_dynamics.contact_inverse_dynamics) on
RobotModels with a free-flyer root: its result satisfies the equations of motion written with
Pinocchio's own M, h and contact Jacobians (JointModelFreeFlyer), and equals Pinocchio's rnea minus
J_cᵀ f on the actuated rows."""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest

from rnea_ros import RobotModel
from rnea_ros.algorithms.contact_dynamics import Contact, ContactStatus, contact_inverse_dynamics
from rnea_ros.model.example_robots import example_urdf_path

FEET = {
    "solo_description/robots/solo12.urdf": ("FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT"),
    "go1_description/urdf/go1.urdf": ("FL_foot", "FR_foot", "RL_foot", "RR_foot"),
}


@pytest.mark.parametrize("robot", sorted(FEET))
def test_contact_inverse_dynamics_on_a_floating_model_matches_pinocchio(robot: str) -> None:
    path = example_urdf_path(robot)
    model = RobotModel.from_urdf(path.read_text(), root_joint="floating")
    pm = pin.buildModelFromUrdf(str(path), pin.JointModelFreeFlyer())
    pd = pm.createData()
    vidx = list(range(6)) + [pm.joints[pm.getJointId(j)].idx_v for j in model.joint_names]
    qidx = list(range(7)) + [pm.joints[pm.getJointId(j)].idx_q for j in model.joint_names]
    assert pm.nq == model.nq  # no continuous joints: one q per joint on both sides
    rng = np.random.default_rng(2)
    q = np.zeros(model.nq)
    q[2], q[6] = 0.3, 1.0  # upright, feet at the joints' zero
    q[7:] = rng.uniform(-0.2, 0.2, model.njoints)
    v, a = rng.normal(0, 0.3, (2, model.nv))
    contacts = [Contact(foot, "point", mu=0.8, normal=(0.0, 0.0, 1.0)) for foot in FEET[robot]]
    sol = contact_inverse_dynamics(model, q, v, a, contacts)
    assert sol.status == ContactStatus.OK
    pq, pv, pa = np.zeros(pm.nq), np.zeros(pm.nv), np.zeros(pm.nv)
    pq[qidx], pv[vidx], pa[vidx] = q, v, a
    m = pin.crba(pm, pd, pq)
    m = (np.triu(m) + np.triu(m, 1).T)[np.ix_(vidx, vidx)]
    h = pin.nonLinearEffects(pm, pd, pq, pv)[vidx]
    pin.computeJointJacobians(pm, pd, pq)
    pin.updateFramePlacements(pm, pd)
    jc = np.vstack(
        [
            pin.getFrameJacobian(pm, pd, pm.getFrameId(f), pin.LOCAL_WORLD_ALIGNED)[:3, vidx]
            for f in FEET[robot]
        ]
    )
    lhs = m @ a + h
    rhs = np.concatenate([np.zeros(6), sol.tau]) + jc.T @ sol.f
    assert np.max(np.abs(lhs - rhs)) <= 1e-9 * max(1.0, np.max(np.abs(lhs)))
    tau_pin = pin.rnea(pm, pd, pq, pv, pa)[vidx]
    assert np.max(np.abs(sol.tau - (tau_pin - jc.T @ sol.f)[6:])) <= 1e-9 * max(1.0, np.max(np.abs(tau_pin)))
