"""Contact-consistent inverse dynamics of a model (rnea_ros.algorithms.contact_dynamics): the
checks of the wrapper; its results against Pinocchio are in test_floating_contacts.py, its
compiled path against the checked one in test_contact_fast_path.py."""

from __future__ import annotations

import numpy as np
import pytest

from rnea_ros import RobotModel
from rnea_ros.algorithms.contact_dynamics import Contact, contact_inverse_dynamics
from rnea_ros.errors import RneaError
from rnea_ros.model.example_robots import example_urdf_path


def test_wrapper_refuses_a_fixed_root() -> None:
    """The wrapper needs a floating or planar root (RobotModel.root_joint); a fixed-base arm has
    no unactuated rows, so its contact forces are not determined."""
    model = RobotModel.from_urdf(example_urdf_path("panda").read_text())
    q = np.zeros(model.nv)
    with pytest.raises(RneaError, match="floating or planar root joint, the model's is 'fixed'"):
        contact_inverse_dynamics(model, q, q, q, [Contact("panda_link7", "point")])
