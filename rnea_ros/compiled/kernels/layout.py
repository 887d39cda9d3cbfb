"""The flat memory layout every kernel reads, as module-level integers (numba folds them into the
compiled code, so naming an offset costs nothing), the effort law's per-joint table (LAW_*) and
the packed records: their sizes, slices (plain Python) and views (compiled).

Body record (`RobotModel.body`): BODY_STRIDE floats per movable joint / body, in model order;
body i's frame is the child link frame of joint i.
  B_ROT      [0:9]   rotation of the joint frame in the parent body frame at q = 0, row-major
  B_POS      [9:12]  joint frame origin in the parent body frame, m
  B_AXIS     [12:15] unit joint axis in the body frame
  B_MASS     [15]    mass, kg
  B_MOMENT   [16:19] first moment h = mass * centre of mass, body frame, kg m
  B_INERTIA  [19:25] inertia about the body origin, body axes (xx, xy, xz, yy, yz, zz), kg m^2
  B_ARMATURE [25]    armature (reflected rotor inertia), kg m^2 or kg
Tree record (`RobotModel.kernel_tree()`, the whole model as one argument: each argument costs a
little to pass): TREE_STRIDE floats per body, the body record followed by
  PARENT     [26]    parent body, -1 for the fixed root (parent < body)
  JTYPE      [27]    REVOLUTE or PRISMATIC
Workspace record (`Data.ws`): WS_STRIDE floats per body, all in the body frame unless said:
  W_ROT      [0:9]   rotation of the body in its parent, row-major
  W_POS      [9:12]  body origin in the parent frame, m
  W_OMEGA    [12:15] angular velocity, rad/s
  W_ALPHA    [15:18] angular acceleration, rad/s^2
  W_ACC      [18:21] linear acceleration of the body origin, including -gravity, m/s^2
  W_FORCE    [21:24] force the parent transmits to the body, N
  W_MOMENT   [24:27] moment the parent transmits to the body, about the body origin, N m
  W_ROT_ROOT [27:36] rotation of the body in the root frame (root_rotations only)
Composite-inertia record (`Data.comp`, mass matrix): COMP_STRIDE floats per body, the body
record's [B_MASS:B_ARMATURE] (mass, first moment, inertia about the origin) of the body and
everything below it, in the body frame.
Wrench record: `wrench_body[k]` is the body of the k-th wrench, `wrench_data[WRENCH_STRIDE k:]`
holds WR_ORIGIN the link origin in that body's frame (3), then the wrench the link exerts on its
environment, root-frame axes: WR_FORCE (3) and WR_MOMENT about the link origin (3), then 3 unused.
Packed record (a model's default workspace, `RobotModel.kernel_record`): one array holding everything
but the state, so that the most common calls pass three to five arrays instead of five to seven
(each array passed costs a call): PK_N the number of bodies n, then from PK_TREE the tree record
(n TREE_STRIDE), the default gravity (3, root frame), the workspace (n WS_STRIDE) and the
composite-inertia scratch (n COMP_STRIDE); `packed_slices` / `unpack` cut it.
"""

from __future__ import annotations

from rnea_ros.compiled.jit import njit_inline

# Body record
B_ROT = 0
B_POS = 9
B_AXIS = 12
B_MASS = 15
B_MOMENT = 16
B_INERTIA = 19
B_ARMATURE = 25
BODY_STRIDE = 26
# Tree record: the body record, then
PARENT = 26
JTYPE = 27
TREE_STRIDE = 28
# Workspace record
W_ROT = 0
W_POS = 9
W_OMEGA = 12
W_ALPHA = 15
W_ACC = 18
W_FORCE = 21
W_MOMENT = 24
W_ROT_ROOT = 27
WS_STRIDE = 36
# Composite-inertia record: the body record's mass, first moment and inertia, in that order
C_MASS = 0
C_MOMENT = C_MASS + B_MOMENT - B_MASS
C_INERTIA = C_MASS + B_INERTIA - B_MASS
COMP_STRIDE = B_ARMATURE - B_MASS
# Packed record
PK_N = 0
PK_TREE = 1
# Wrench record
WR_ORIGIN = 0
WR_FORCE = 3
WR_MOMENT = 6
WRENCH_STRIDE = 12
# Joint types (tree[JTYPE])
REVOLUTE = 0
PRISMATIC = 1
# Status returned by the public kernels; on BAD_SIZE nothing has been written.
OK = 0
BAD_SIZE = 1
NOT_FINITE = 2


# Floating root. The bodies of the tree stay the joints' bodies; the root (base) body, which the
# root joint moves in the world, is described by the root record and computed in the kernels
# below, with its own workspace record at body index n (after the n bodies of the tree: `Data`
# holds nv >= n + 1 records). Configuration and velocity layouts are Pinocchio's: free flyer
# q = [p (3, world), quaternion x y z w (4)] + joints, v = [v (3), ω (3), base frame] + joints;
# planar q = [x, y, cos θ, sin θ] + joints, v = [v_x, v_y, ω_z] (base frame) + joints.
# Root record (`RobotModel.root_record`), ROOT_STRIDE floats:
#   RT_KIND    [0]      ROOT_FIXED, ROOT_FREE or ROOT_PLANAR
#   RT_MASS    [1]      mass of the base body (the root link and every link fixed to it), kg
#   RT_MOMENT  [2:5]    its first moment, base frame, kg m
#   RT_INERTIA [5:11]   its inertia about the base origin, base axes (xx, xy, xz, yy, yz, zz)
#   RT_ROT     [11:20]  the root joint's placement in the world (URDF origin): rotation, row-major
#   RT_POS     [20:23]  and origin, m
# The base's workspace record (body n) holds: W_ROT_ROOT the base rotation in the world, W_POS its
# origin in the world, W_OMEGA, W_ALPHA, W_ACC its motion in the base frame (W_ACC: classical
# acceleration of the origin minus gravity), W_FORCE, W_MOMENT the link wrenches on the base.
RT_KIND = 0
RT_MASS = 1
RT_MOMENT = 2
RT_INERTIA = 5
RT_ROT = 11
RT_POS = 20
ROOT_STRIDE = 23
ROOT_FIXED = 0
ROOT_FREE = 1
ROOT_PLANAR = 2
# status (a bit of its own, as statuses are OR-ed): the base orientation (quaternion, or cos θ,
# sin θ) is not of unit norm
NOT_UNIT = 4
UNIT_TOL = 1e-6  # on |norm² - 1| of the base orientation


def floating_packed_size(n):
    """Length of the floating packed record of n bodies: PK_N, the tree, the default gravity
    (world), the workspace and composite scratch of n + 1 bodies (the base last), the root record."""
    return PK_TREE + n * TREE_STRIDE + 3 + (n + 1) * (WS_STRIDE + COMP_STRIDE) + ROOT_STRIDE


def floating_packed_slices(n):
    """(tree, gravity, workspace, comp, root) slices of a floating packed record (plain Python)."""
    t = PK_TREE + n * TREE_STRIDE
    w = t + 3
    c = w + (n + 1) * WS_STRIDE
    r = c + (n + 1) * COMP_STRIDE
    return slice(PK_TREE, t), slice(t, w), slice(w, c), slice(c, r), slice(r, r + ROOT_STRIDE)


@njit_inline
def floating_unpack(packed):
    """(tree, gravity, workspace, comp, root) views of a floating packed record."""
    n = int(packed[PK_N])
    t = PK_TREE + n * TREE_STRIDE
    w = t + 3
    c = w + (n + 1) * WS_STRIDE
    r = c + (n + 1) * COMP_STRIDE
    return packed[PK_TREE:t], packed[t:w], packed[w:c], packed[c:r], packed[r : r + ROOT_STRIDE]


def packed_size(n):
    """Length of the packed record of n bodies."""
    return PK_TREE + n * TREE_STRIDE + 3 + n * WS_STRIDE + n * COMP_STRIDE


def packed_slices(n):
    """(tree, gravity, workspace, comp) slices of the packed record of n bodies (plain Python)."""
    t = PK_TREE + n * TREE_STRIDE
    w = t + 3
    c = w + n * WS_STRIDE
    return slice(PK_TREE, t), slice(t, w), slice(w, c), slice(c, c + n * COMP_STRIDE)


@njit_inline
def unpack(packed):
    """(tree, gravity, workspace, comp) views of a packed record (as packed_slices)."""
    n = int(packed[PK_N])
    t = PK_TREE + n * TREE_STRIDE
    w = t + 3
    c = w + n * WS_STRIDE
    return packed[PK_TREE:t], packed[t:w], packed[w:c], packed[c : c + n * COMP_STRIDE]


# Rows of the effort law's per-joint table (`law` of the cycle record, rnea_ros.compiled.kernels.cycle):
# the law's gains (N m/rad or N/m, N m s/rad or N s/m) and effort limit (N m or N), then the gains
# of this cycle (the law's, bounded by the loop: kernels.gain_bound) and their scale s (kp s², kd s).
LAW_KP, LAW_KD, LAW_LIMIT, LAW_KP_NOW, LAW_KD_NOW, LAW_SCALE = range(6)
LAW_ROWS = 6
