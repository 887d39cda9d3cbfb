"""The contacts of a floating (or planar) base for the inverse_dynamics node: the contacts.*
parameters as `Contact`s, the contact state while walking, and the contact wrenches out.

Inputs:
  contacts.links, .types, .friction, .half_extents, .normal, .min_normal_force (parameters,
      changeable at run time): the contacts, in this order;
  ~/contact_state  std_msgs/UInt8MultiArray: one value per link of contacts.links, in that order,
      non-zero = in contact (a foot in stance), 0 = not (in swing). Its length must be that of
      contacts.links (else dropped, reason bad_contact_state). Until the first message, and
      again after contacts.links changes, every contact is active.
Outputs, once per command cycle:
  ~/contact_wrenches/<link>  geometry_msgs/WrenchStamped per contact of contacts.links (zero
      while it is masked out): the wrench the link exerts on its environment (the package's
      convention for wrenches: the negative of the contact force of
      rnea_ros.algorithms.contact_dynamics, which is the environment's on the robot), in the
      link's axes, moment about its origin (zero for a point contact), frame_id = the link,
      stamped as the joint_states that triggered the cycle;
  ~/contact_markers  visualization_msgs/MarkerArray: one arrow per contact (namespace
      "contact_forces", id = its index, frame_id = the link) from the link origin along the force
      the environment exerts on the robot (the ground reaction, pointing out of the ground),
      contacts.marker_scale m per N; a masked contact's arrow is deleted.
and a "<node>: contacts" status on /diagnostics: OK while an admissible contact force exists,
WARN when the last cycle had none (the message of contact_dynamics: centre of mass outside the
support, a single point contact asked for a moment, ...) with the least-violating forces in use.
A planar root without active contacts (a mobile base on wheels) is OK: its drive carries the base
rows (x, y, yaw), which no contact could; base_residual_max is the largest of them.
"""

from __future__ import annotations

import numpy as np
from diagnostic_msgs.msg import DiagnosticStatus
from geometry_msgs.msg import Point, WrenchStamped
from rclpy.node import Node
from rclpy.publisher import Publisher
from std_msgs.msg import Header, UInt8MultiArray
from visualization_msgs.msg import Marker, MarkerArray

from rnea_ros.algorithms.contact_dynamics import Contact, ContactSolution, ContactStatus
from rnea_ros.algorithms.dynamics import link_pose
from rnea_ros.model.robot_model import RobotModel
from rnea_ros.ros.diagnostics import status


class ContactOutputs:
    """The node's contact mask, wrench and marker publishers and contact diagnostics."""

    def __init__(self, node: Node) -> None:
        self._node = node
        self._wrench_pubs: dict[str, Publisher] = {}
        self._marker_pub: Publisher | None = None
        self._links: tuple[str, ...] = ()
        self.mask = np.ones(0, dtype=bool)
        self.infeasible = 0  # cycles without an admissible force, this diagnostics period
        self.message = ""  # the last infeasible cycle's reason
        self.residual = 0.0  # largest |base residual| this period
        self.cycles = 0
        self.last_status = ""
        self.driven_base = False  # the last cycle: a planar root without contacts (module docstring)

    def active(self, contacts: tuple[Contact, ...]) -> list[Contact]:
        """The contacts the mask leaves active (all while it does not fit them)."""
        links = tuple(c.link for c in contacts)
        if links != self._links:  # contacts.links changed: every contact active again
            self._links, self.mask = links, np.ones(len(links), dtype=bool)
        return [c for c, on in zip(contacts, self.mask, strict=True) if on]

    def receive_mask(self, contacts: tuple[Contact, ...], msg: UInt8MultiArray) -> None:
        """~/contact_state; ValueError saying why it does not fit contacts.links."""
        links = tuple(c.link for c in contacts)
        data = bytes(msg.data) if not isinstance(msg.data, bytes) else msg.data
        if len(data) != len(links):
            raise ValueError(
                f"~/contact_state has {len(data)} values, contacts.links has {len(links)} "
                f"([{', '.join(links)}]): one per link, in that order"
            )
        self._links, self.mask = links, np.array([b != 0 for b in data], dtype=bool)

    def publish(
        self,
        floating: RobotModel,
        q_full: np.ndarray,
        contacts: tuple[Contact, ...],
        solution: ContactSolution,
        header: Header,
        marker_scale: float,
    ) -> bool:
        """The wrenches and markers of one cycle's solution (its forces: the active contacts');
        whether it had no admissible contact force (a planar root's drive carrying the base rows
        without contacts is no such case)."""
        self.cycles += 1
        self.last_status = solution.status.value
        self.driven_base = floating.root_joint == "planar" and not solution.forces
        infeasible = solution.status is ContactStatus.INFEASIBLE and not self.driven_base
        if infeasible:
            self.infeasible += 1
            self.message = solution.message
        self.residual = max(self.residual, float(np.max(np.abs(solution.base_residual), initial=0.0)))
        node = self._node
        if self._marker_pub is None:
            self._marker_pub = node.create_publisher(MarkerArray, "~/contact_markers", 10)
        markers = MarkerArray()
        forces = iter(solution.forces)
        for i, (contact, on) in enumerate(zip(contacts, self.mask, strict=True)):
            link = contact.link
            pub = self._wrench_pubs.get(link)
            if pub is None:
                pub = self._wrench_pubs[link] = node.create_publisher(
                    WrenchStamped, f"~/contact_wrenches/{link}", 10
                )
            f_link = np.zeros(6)  # the environment's on the robot, link axes
            if on:
                f = next(forces)
                rot = link_pose(floating, q_full, link)[0]
                f_link[:3] = rot.T @ f[:3]
                if f.shape[0] == 6:
                    f_link[3:] = rot.T @ f[3:]
            msg = WrenchStamped()
            msg.header.stamp = header.stamp
            msg.header.frame_id = link
            w = msg.wrench
            w.force.x, w.force.y, w.force.z = (float(-x) for x in f_link[:3])
            w.torque.x, w.torque.y, w.torque.z = (float(-x) for x in f_link[3:])
            pub.publish(msg)
            marker = Marker()
            marker.header.stamp = header.stamp
            marker.header.frame_id = link
            marker.ns, marker.id, marker.type = "contact_forces", i, Marker.ARROW
            marker.action = Marker.ADD if on else Marker.DELETE
            tip = marker_scale * f_link[:3]
            marker.points = [Point(), Point(x=float(tip[0]), y=float(tip[1]), z=float(tip[2]))]
            marker.scale.x, marker.scale.y, marker.scale.z = 0.01, 0.02, 0.03  # shaft, head diameter, head
            marker.color.r, marker.color.g, marker.color.b, marker.color.a = 0.1, 0.8, 0.2, 1.0
            marker.pose.orientation.w = 1.0
            markers.markers.append(marker)
        self._marker_pub.publish(markers)
        return infeasible

    def status(self, node_name: str, n_contacts: int) -> DiagnosticStatus:
        """The "contacts" status of this diagnostics period (then the period restarts)."""
        if self.cycles == 0:
            level, message = DiagnosticStatus.OK, "no contact-consistent cycle yet"
        elif self.infeasible:
            level = DiagnosticStatus.WARN
            message = (
                f"no admissible contact force in {self.infeasible} of {self.cycles} cycles: {self.message}"
            )
        elif self.driven_base:
            level = DiagnosticStatus.OK
            message = "planar base without contacts: its drive (wheels) carries the base rows x, y, yaw"
        else:
            level, message = DiagnosticStatus.OK, "admissible contact forces"
        values = {
            "contact_links": " ".join(self._links),
            "contact_mask": "".join("1" if m else "0" for m in self.mask),
            "contacts_active": str(int(self.mask.sum())) if self.mask.size else str(n_contacts),
            "contact_status": "drive carries the base" if self.driven_base else self.last_status or "none",
            "infeasible_cycles": str(self.infeasible),
            "base_residual_max": f"{self.residual:.4g}",
        }
        self.cycles = self.infeasible = 0
        self.residual = 0.0
        return status(f"{node_name}: contacts", level, message, "", values)


__all__ = ["ContactOutputs"]
