"""RobotModel: an immutable kinematic tree as flat arrays, built from URDF.

Each movable joint i moves one rigid body i whose frame is the joint's child link frame. Links
on fixed joints are merged into the body they hang from; with a `tip_link`, movable joints off
the root→tip chain are locked at q = 0 and their links merged the same way, so their mass still
counts. The root link is fixed to the world (root_joint "fixed": links rigidly attached to it
carry no dynamics), or moved by a free-flyer ("floating") or "planar" root joint, in Pinocchio's
layout: the root joint's coordinates come first in q and v (root_nq, root_nv of them), then the
joints in `joint_names` order; the root link and the links fixed to it form the base body.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any

import numpy as np
import numpy.typing as npt

from rnea_ros.compiled.jit import HAVE_NUMBA
from rnea_ros.compiled.kernels.layout import (
    B_ARMATURE,
    B_AXIS,
    B_INERTIA,
    B_MASS,
    B_MOMENT,
    B_POS,
    B_ROT,
    BODY_STRIDE,
    JTYPE,
    PARENT,
    PK_N,
    PRISMATIC,
    REVOLUTE,
    ROOT_FIXED,
    ROOT_FREE,
    ROOT_PLANAR,
    ROOT_STRIDE,
    RT_KIND,
    RT_MASS,
    RT_POS,
    RT_ROT,
    TREE_STRIDE,
    floating_packed_size,
    floating_packed_slices,
    packed_size,
    packed_slices,
)
from rnea_ros.errors import RneaError, UnknownJointError, UnknownLinkError, URDFError
from rnea_ros.model.data import Data
from rnea_ros.model.urdf import Inertial, Joint, Mimic, URDFRobot, check_inertia, parse_urdf

__all__ = ["GRAVITY", "ROOT_JOINTS", "LinkFrame", "Mimic", "Payload", "RobotModel"]

GRAVITY = (0.0, 0.0, -9.81)  # the default gravity, root frame (world with a floating root), m/s²
# root_joint → (kernel root kind, nq, nv of the root joint)
ROOT_JOINTS = {"fixed": (ROOT_FIXED, 0, 0), "floating": (ROOT_FREE, 7, 6), "planar": (ROOT_PLANAR, 4, 3)}


@dataclass(frozen=True)
class LinkFrame:
    """Where a link frame sits: on `body` (-1 = the root link's body) at `rotation`, `translation`."""

    body: int
    rotation: np.ndarray  # (3, 3) link frame in the body frame
    translation: np.ndarray  # (3,) link origin in the body frame, m


@dataclass(frozen=True)
class Payload:
    """A rigid load on `link`: mass (kg), centre of mass (m) and inertia about it (kg m²), link frame."""

    link: str
    mass: float
    com: np.ndarray
    inertia: np.ndarray


def _spatial(
    mass: float, com: np.ndarray, inertia_com: np.ndarray, rot: np.ndarray, trans: np.ndarray
) -> tuple[float, np.ndarray, np.ndarray]:
    """(mass, first moment, inertia about the origin) of a body given in a frame at rot, trans."""
    with np.errstate(over="ignore", invalid="ignore"):  # callers reject non-finite results
        c = rot @ com + trans
        i_c = rot @ inertia_com @ rot.T
        i_o = i_c + mass * (float(c @ c) * np.eye(3) - np.outer(c, c))
        return mass, mass * c, i_o


def _readonly(a: np.ndarray) -> np.ndarray:
    a = np.ascontiguousarray(a)
    a.flags.writeable = False
    return a


@dataclass(frozen=True, eq=False)
class RobotModel:
    """Dynamic model. Build with `RobotModel.from_urdf`; never mutated afterwards.

    Arrays indexed by joint follow `joint_names` (the movable joints, not the root joint): joint i
    is q[root_nq + i] and v[root_nv + i] (`joint_q_index`, `joint_v_index`); with a fixed root
    these offsets are 0 and nq = nv = the number of joints. Limits are ±inf where the URDF gives none.
    Derived data is built on first use and kept (`kernel_tree()`, `default_data`); copies made by
    `with_payload` / `with_armature` build their own.
    """

    name: str
    root_link: str
    tip_link: str | None
    joint_names: tuple[str, ...]
    joint_types: tuple[str, ...]
    link_frames: dict[str, LinkFrame]
    parent: np.ndarray  # (nv,) int64, parent body or -1
    jtype: np.ndarray  # (nv,) int64, REVOLUTE or PRISMATIC
    body: np.ndarray  # (nv * BODY_STRIDE,) float64, see kernels
    position_lower: np.ndarray
    position_upper: np.ndarray
    velocity_limit: np.ndarray
    effort_limit: np.ndarray
    damping: np.ndarray  # URDF <dynamics damping>, N m s/rad or N s/m
    coulomb: np.ndarray  # URDF <dynamics friction>, N m or N
    mimic: dict[str, Mimic]
    payload: Payload | None = None
    warnings: tuple[str, ...] = ()  # what was loaded although suspect (see from_urdf)
    _bare_body: np.ndarray | None = field(default=None, repr=False)  # body without payload (None: body)
    root_joint: str = "fixed"  # "fixed", "floating" (free flyer) or "planar"
    root_nq: int = 0  # configuration coordinates of the root joint: 0, 7 or 4
    root_nv: int = 0  # velocity coordinates of the root joint: 0, 6 or 3
    # the root record (see `kernels.layout`): root joint kind and placement, base body inertia
    root_record: np.ndarray = field(default_factory=lambda: _root_record(ROOT_FIXED), repr=False)
    _bare_root: np.ndarray | None = field(default=None, repr=False)  # root_record without payload

    @property
    def nv(self) -> int:
        """Velocity coordinates (degrees of freedom): root_nv + the movable joints."""
        return self.root_nv + len(self.joint_names)

    @property
    def nq(self) -> int:
        """Configuration coordinates: root_nq + the movable joints (nq = nv with a fixed root)."""
        return self.root_nq + len(self.joint_names)

    @property
    def njoints(self) -> int:
        """Number of movable joints (`joint_names`): the bodies of the kernels' tree."""
        return len(self.joint_names)

    @property
    def floating(self) -> bool:
        """Whether the root joint moves (a "floating" or "planar" root)."""
        return self.root_nv > 0

    def joint_q_index(self, name: str) -> int:
        """Index in q of a movable joint: root_nq + its index in `joint_names`."""
        return self.root_nq + self.joint_index(name)

    def joint_v_index(self, name: str) -> int:
        """Index in v (and τ) of a movable joint: root_nv + its index in `joint_names`."""
        return self.root_nv + self.joint_index(name)

    @property
    def link_names(self) -> tuple[str, ...]:
        """Every link of the model, including those merged into a body or into the root."""
        return tuple(self.link_frames)

    @property
    def armature(self) -> np.ndarray:
        """Reflected rotor inertia per joint, added to M's diagonal (kg m² or kg)."""
        return self.body[B_ARMATURE::BODY_STRIDE].copy()

    def joint_index(self, name: str) -> int:
        """Index of a movable joint in `joint_names`; UnknownJointError (a KeyError) naming it."""
        try:
            return self.joint_names.index(name)
        except ValueError:
            raise UnknownJointError(f"joint '{name}' is not a movable joint of the model") from None

    def link_frame(self, link: str) -> LinkFrame:
        """Placement of a link in its body; UnknownLinkError (a KeyError) naming an unknown link."""
        try:
            return self.link_frames[link]
        except KeyError:
            raise UnknownLinkError(f"link '{link}' is not part of the model") from None

    def create_data(self) -> Data:
        """A new workspace for this model (and any smaller one), to pass as `data=`; one per thread."""
        return Data(self)

    @cached_property
    def default_data(self) -> Data:
        """The workspace functions use without `data=`: created on first use, one per model, shared
        by every caller of this model (threads: pass your own `create_data()`). The calls with the
        default gravity use the model's packed record instead (see `kernels.layout`)."""
        return Data(self)

    @classmethod
    def from_urdf(
        cls,
        xml_text: str,
        root_link: str | None = None,
        tip_link: str | None = None,
        *,
        root_joint: str | None = None,
        strict: bool = False,
    ) -> RobotModel:
        """Build the model of a URDF (whole tree below `root_link`, or the root_link→tip_link chain).

        root_joint: "fixed" (the root link welded to the world), "floating" (a free flyer) or
        "planar" (x, y, θ about z); None: that of the URDF, whose root link may hang from a world
        link by one `floating` or `planar` joint (kept with its origin, as Pinocchio does), else
        fixed. Floating and planar joints elsewhere raise URDFError naming them.

        Raises URDFError naming the link or joint at fault. A finite but physically inconsistent
        inertia (a slightly negative principal moment, a broken triangle inequality, as CAD exports
        and real robot files often have) is kept as written, like Pinocchio and KDL do, and named
        in `warnings`; with strict=True it raises URDFError instead. Links rigidly attached
        to the fixed root carry no dynamics and are not checked. Compiles nothing: see
        `rnea_ros.compile_kernels`.
        """
        return _build(parse_urdf(xml_text), root_link, tip_link, strict, root_joint)

    def with_payload(
        self,
        link: str,
        mass: float,
        com: npt.ArrayLike = (0.0, 0.0, 0.0),
        inertia: npt.ArrayLike | None = None,
    ) -> RobotModel:
        """A copy carrying a payload on `link` (replacing any previous one); mass 0 removes it.

        com is in the link frame (m); inertia (3×3, kg m², link axes) is about the com.
        UnknownLinkError for an unknown link, RneaError for bad values.
        """
        frame = self.link_frame(link)
        com = np.asarray(com, dtype=float).reshape(3)
        inertia = np.zeros((3, 3)) if inertia is None else np.asarray(inertia, dtype=float)
        what = f"payload on link '{link}'"
        if not np.all(np.isfinite(com)):
            raise RneaError(f"{what}: com must be finite")
        try:
            check_inertia(float(mass), inertia, what)
        except URDFError as exc:
            raise RneaError(str(exc)) from None
        body = self._bare.copy()
        root = self._bare_root_record.copy()
        payload = None
        if mass > 0.0 and (frame.body >= 0 or self.floating):
            m, h, i_o = _spatial(float(mass), com, inertia, frame.rotation, frame.translation)
            if frame.body >= 0:
                _add_inertia(body, frame.body, m, h, i_o)
            else:
                _add_inertia(root, 0, m, h, i_o, RT_MASS)
            if not (np.all(np.isfinite(body)) and np.all(np.isfinite(root))):
                raise RneaError(f"{what}: values overflow (too large)")
        if mass > 0.0:
            payload = Payload(link, float(mass), com, inertia)
        return replace(
            self,
            body=_readonly(body),
            payload=payload,
            _bare_body=self._bare,
            root_record=_readonly(root),
            _bare_root=self._bare_root_record,
        )

    def with_armature(self, armature: npt.ArrayLike) -> RobotModel:
        """A copy with per-joint armature (reflected rotor inertia, ≥ 0, `joint_names` order)."""
        armature = np.asarray(armature, dtype=float).reshape(-1)
        n = self.njoints
        if armature.shape != (n,) or not np.all(np.isfinite(armature)) or np.any(armature < 0):
            raise RneaError(f"armature must be {n} finite values >= 0 (one per movable joint)")
        body = self.body.copy()
        bare = self._bare.copy()
        body[B_ARMATURE::BODY_STRIDE] = armature
        bare[B_ARMATURE::BODY_STRIDE] = armature
        return replace(self, body=_readonly(body), _bare_body=_readonly(bare))

    @property
    def _bare(self) -> np.ndarray:
        return self.body if self._bare_body is None else self._bare_body

    @property
    def _bare_root_record(self) -> np.ndarray:
        return self.root_record if self._bare_root is None else self._bare_root

    def kernel_tree(self) -> Any:
        """The model as the kernels take it (the tree record, see `kernels.layout`): a private C-contiguous
        float64 array with numba (a view of the packed record), a plain list without. Built on
        first use. Never modify it."""
        return self._kernel_tree

    @cached_property
    def _kernel_tree(self) -> Any:
        if HAVE_NUMBA:
            return self.kernel_record[packed_slices(self.njoints)[0]]
        tree = self._tree_records()
        return [  # integers stay integers: they are indices in the kernels
            x
            for i, row in enumerate(tree.tolist())
            for x in row[:BODY_STRIDE] + [int(self.parent[i]), int(self.jtype[i])]
        ]

    def _tree_records(self) -> np.ndarray:
        """(njoints, TREE_STRIDE): each body record followed by its parent and joint type."""
        n = self.njoints
        tree = np.zeros((n, TREE_STRIDE))
        tree[:, :BODY_STRIDE] = self.body.reshape(n, BODY_STRIDE)
        tree[:, PARENT] = self.parent
        tree[:, JTYPE] = self.jtype
        return tree

    @cached_property
    def kernel_record(self) -> np.ndarray:
        """The packed record (see `kernels.layout`): the tree, the default gravity, and the
        workspace of `default_data`; one argument for the fast paths of `dynamics`. Never modify
        it."""
        n = self.njoints
        packed = np.zeros(packed_size(n))
        tree, gravity, _, _ = packed_slices(n)
        packed[PK_N] = n
        packed[tree] = self._tree_records().reshape(-1)
        packed[gravity] = GRAVITY
        return packed

    @cached_property
    def floating_args(self) -> tuple[int, np.ndarray]:
        """(nv, floating packed record: the tree, the default gravity, a workspace for n + 1
        bodies and the root record, see `kernels.layout`): what the floating-root fast paths of
        `dynamics` pass, one array for the model, read in one attribute access."""
        n = self.njoints
        packed = np.zeros(floating_packed_size(n))
        tree, gravity, _, _, root = floating_packed_slices(n)
        packed[PK_N] = n
        packed[tree] = self._tree_records().reshape(-1)
        packed[gravity] = GRAVITY
        packed[root] = self.root_record
        return self.nv, packed

    @cached_property
    def kernel_args(self) -> tuple[int, np.ndarray]:
        """(njoints, kernel_record): what the fast paths of `dynamics` read in one attribute access."""
        return self.njoints, self.kernel_record


def _add_inertia(
    body: np.ndarray, i: int, mass: float, h: np.ndarray, i_o: np.ndarray, at: int = B_MASS
) -> None:
    """Add (mass, first moment, inertia) to body i's record, or at `at` in a root record (i = 0)."""
    b = i * BODY_STRIDE + at - B_MASS
    body[b + B_MASS] += mass
    body[b + B_MOMENT : b + B_MOMENT + 3] += h
    body[b + B_INERTIA : b + B_INERTIA + 6] += i_o[np.triu_indices(3)]  # xx, xy, xz, yy, yz, zz


def _root_record(
    kind: int, rotation: np.ndarray | None = None, translation: np.ndarray | None = None
) -> np.ndarray:
    """A root record (see `kernels.layout`) with no base inertia yet."""
    rec = np.zeros(ROOT_STRIDE)
    rec[RT_KIND] = kind
    rec[RT_ROT : RT_ROT + 9] = (np.eye(3) if rotation is None else rotation).reshape(9)
    if translation is not None:
        rec[RT_POS : RT_POS + 3] = translation
    return rec


def _tree(robot: URDFRobot) -> tuple[str, dict[str, list[Joint]]]:
    """The unique root link and the child joints of every link; URDFError on forests and cycles."""
    parent_joint: dict[str, Joint] = {}
    children: dict[str, list[Joint]] = {name: [] for name in robot.links}
    for joint in robot.joints:
        if joint.child in parent_joint:
            raise URDFError(
                f"link '{joint.child}' is the child of two joints: "
                f"'{parent_joint[joint.child].name}' and '{joint.name}'"
            )
        parent_joint[joint.child] = joint
        children[joint.parent].append(joint)
    roots = [name for name in robot.links if name not in parent_joint]
    if not roots:
        raise URDFError("the joints form a cycle: every link has a parent joint")
    if len(roots) > 1:
        raise URDFError(f"several root links (links without a parent joint): {', '.join(roots)}")
    reached = {roots[0]}
    stack = [roots[0]]
    while stack:
        for joint in children[stack.pop()]:
            reached.add(joint.child)
            stack.append(joint.child)
    unreached = [name for name in robot.links if name not in reached]
    if unreached:
        raise URDFError(f"the joints form a cycle through links: {', '.join(unreached)}")
    return roots[0], children


def _chain(children: dict[str, list[Joint]], root: str, tip: str) -> set[str]:
    """Names of the joints on the path root → tip; URDFError if tip is not below root."""
    path: dict[str, list[str]] = {root: []}
    stack = [root]
    while stack:
        link = stack.pop()
        for joint in children[link]:
            path[joint.child] = [*path[link], joint.name]
            stack.append(joint.child)
    if tip not in path:
        raise URDFError(f"tip_link '{tip}' is not below root_link '{root}'")
    return set(path[tip])


def _root(
    children: dict[str, list[Joint]], tree_root: str, root_link: str | None, root_joint: str | None
) -> tuple[str, str, np.ndarray | None, np.ndarray | None]:
    """(root link, root joint, placement rotation and translation of the root joint or None): a
    URDF root link with one `floating` or `planar` joint hands the root over to its child."""
    root = root_link or tree_root
    placement_rot = placement_trans = None
    urdf_root_joint = "fixed"
    below = children[root]
    if len(below) == 1 and below[0].type in ("floating", "planar"):
        joint = below[0]
        if joint.type == "planar" and not np.allclose(joint.axis, (0.0, 0.0, 1.0)):
            raise URDFError(f"joint '{joint.name}': a planar root joint must have axis 0 0 1 (the x-y plane)")
        urdf_root_joint = joint.type
        root = joint.child
        placement_rot, placement_trans = joint.rotation, joint.translation
    if root_joint is None:
        root_joint = urdf_root_joint
    if root_joint not in ROOT_JOINTS:
        raise URDFError(f"root_joint must be one of {', '.join(ROOT_JOINTS)}, got '{root_joint}'")
    return root, root_joint, placement_rot, placement_trans


def _build(
    robot: URDFRobot, root_link: str | None, tip_link: str | None, strict: bool, root_joint: str | None = None
) -> RobotModel:
    tree_root, children = _tree(robot)
    for arg, link in (("root_link", root_link), ("tip_link", tip_link)):
        if link is not None and link not in robot.links:
            raise URDFError(f"{arg} '{link}' is not a link of the robot")
    root, root_joint, placement_rot, placement_trans = _root(children, tree_root, root_link, root_joint)
    kind, root_nq, root_nv = ROOT_JOINTS[root_joint]
    chain = None if tip_link is None else _chain(children, root, tip_link)

    frames: dict[str, LinkFrame] = {root: LinkFrame(-1, np.eye(3), np.zeros(3))}
    records: list[np.ndarray] = []
    parents: list[int] = []
    joints: list[Joint] = []
    order = [root]
    stack = list(reversed(children[root]))
    while stack:  # depth-first preorder, children in document order: parent body < child body
        joint = stack.pop()
        if joint.type in ("floating", "planar"):
            raise URDFError(
                f"joint '{joint.name}': type '{joint.type}' is supported only as the root joint "
                f"(the one joint of the URDF's root link)"
            )
        here = frames[joint.parent]
        rot = here.rotation @ joint.rotation
        trans = here.rotation @ joint.translation + here.translation
        if joint.type != "fixed" and (chain is None or joint.name in chain):
            rec = np.zeros(BODY_STRIDE)
            rec[B_ROT : B_ROT + 9] = rot.reshape(9)
            rec[B_POS : B_POS + 3] = trans
            rec[B_AXIS : B_AXIS + 3] = joint.axis
            if not np.all(np.isfinite(rec)):
                raise URDFError(f"joint '{joint.name}': origin overflows (too large)")
            records.append(rec)
            parents.append(here.body)
            joints.append(joint)
            frames[joint.child] = LinkFrame(len(records) - 1, np.eye(3), np.zeros(3))
        else:
            frames[joint.child] = LinkFrame(here.body, rot, trans)
        order.append(joint.child)
        stack.extend(reversed(children[joint.child]))
    body = np.concatenate(records) if records else np.zeros(0)
    root_record = _root_record(kind, placement_rot, placement_trans)
    warnings: list[str] = []
    for link in order:
        inertial: Inertial | None = robot.links[link]
        frame = frames[link]
        massless = inertial is None or inertial.mass == 0.0 and not inertial.inertia.any()
        if inertial is None or massless or (frame.body < 0 and not root_nv):
            continue
        if inertial.defect is not None:
            if strict:
                raise URDFError(f"link '{link}': {inertial.defect} (strict model check)")
            warnings.append(f"link '{link}': {inertial.defect}")
        m, h, i_o = _spatial(inertial.mass, inertial.com, inertial.inertia, frame.rotation, frame.translation)
        if frame.body < 0:  # the base body of a floating root
            _add_inertia(root_record, 0, m, h, i_o, RT_MASS)
            if not np.all(np.isfinite(root_record)):
                raise URDFError(f"link '{link}': inertial values overflow (too large)")
            continue
        _add_inertia(body, frame.body, m, h, i_o)
        if not np.all(np.isfinite(body[frame.body * BODY_STRIDE : (frame.body + 1) * BODY_STRIDE])):
            raise URDFError(f"link '{link}': inertial values overflow (too large)")

    names = tuple(j.name for j in joints)
    mimic = {j.name: j.mimic for j in joints if j.mimic is not None and j.mimic.leader in names}
    warnings += [
        f"joint '{j.name}': mimics '{j.mimic.leader}', which is not a joint of the robot (kept independent)"
        for j in joints
        if j.mimic is not None and j.mimic.leader not in robot.joint_names
    ]
    body = _readonly(body)
    return RobotModel(
        name=robot.name,
        root_link=root,
        tip_link=tip_link,
        joint_names=names,
        joint_types=tuple(j.type for j in joints),
        link_frames=frames,
        parent=_readonly(np.array(parents, dtype=np.int64)),
        jtype=_readonly(
            np.array([PRISMATIC if j.type == "prismatic" else REVOLUTE for j in joints], dtype=np.int64)
        ),
        body=body,
        position_lower=_readonly(np.array([j.lower for j in joints], dtype=float)),
        position_upper=_readonly(np.array([j.upper for j in joints], dtype=float)),
        velocity_limit=_readonly(np.array([j.velocity for j in joints], dtype=float)),
        effort_limit=_readonly(np.array([j.effort for j in joints], dtype=float)),
        damping=_readonly(np.array([j.damping for j in joints], dtype=float)),
        coulomb=_readonly(np.array([j.friction for j in joints], dtype=float)),
        mimic=mimic,
        warnings=tuple(warnings),
        _bare_body=body,
        root_joint=root_joint,
        root_nq=root_nq,
        root_nv=root_nv,
        root_record=_readonly(root_record),
        _bare_root=_readonly(root_record),
    )
