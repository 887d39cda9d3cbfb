"""The node's effort law in one call (`cycle_kernel`, for `rnea_ros.control.effort_law`): the model
terms from one set of joint transforms per configuration, the feedback and the clamped total,
with the friction compensation, the feedback bound and the runaway guard of `friction_guard` and
`gain_bound`.
"""

from __future__ import annotations

from rnea_ros.compiled.jit import njit, njit_inline
from rnea_ros.compiled.kernels.friction_guard import (
    FC_ROWS,
    G_WEIGHT,
    MID_ROWS,
    SAMPLE_FRICTION,
    SAMPLE_Q,
    SAMPLE_QD,
    SAMPLE_TOTAL,
    friction_kernel,
    guard_step_kernel,
)
from rnea_ros.compiled.kernels.gain_bound import bound_gains_kernel, inverse_inertia_kernel
from rnea_ros.compiled.kernels.layout import (
    BAD_SIZE,
    COMP_STRIDE,
    LAW_KD_NOW,
    LAW_KP_NOW,
    LAW_LIMIT,
    LAW_ROWS,
    NOT_FINITE,
    OK,
    PK_N,
    PK_TREE,
    TREE_STRIDE,
    WS_STRIDE,
    packed_size,
    unpack,
)
from rnea_ros.compiled.kernels.passes import (
    add_armature,
    add_link_wrenches,
    all_finite,
    backward_force_pass,
    composite_inertia_pass,
    forward_kinematic_pass,
    gravity_kinematic_pass,
    joint_transforms,
    mass_matrix_columns,
    root_rotations,
    sizes_ok,
)

# The cycle record (`rnea_ros.control.effort_law.Efforts.record`), built once per model and law:
# the model's packed record (layout: the tree, the law's gravity, the workspace and composite
# scratch; `unpack`), then the tables of the cycle (`cycle_slices` in Python, `cycle_tables` in
# the kernels), n the number of joints:
#   options  OPT_SIZE         the law's switches and this call's numbers (OPT_*)
#   law      LAW_ROWS × n     per joint: the law's gains and limit, the gains of this cycle (LAW_*)
#   coef     FC_ROWS × n      the friction compensation's coefficients (friction_guard FC_*)
#   work     WORK_ROWS × n    scratch: the runaway guard's period midpoint (friction_guard MID_*)
#                             from WORK_MID, the feedback bound's row sums from WORK_BOUND
#   mass     n × n            M(q) of this cycle, row-major
#   minv     n × n            M(q)⁻¹ of the feedback bound (refreshed by the caller's clock)
#   out      OUT_ROWS × n     the result: the terms gravity, coriolis, inertia, friction, wrench,
#                             feedback (rows 0..5), the total, 1.0 where it was clamped, scratch
OPT_TERMS = 0  # [0:5] 1.0 where the law compensates gravity, coriolis, inertia, friction, wrench
OPT_DESIRED = 5  # 1.0: the model terms at the desired state (else at the measured one)
OPT_FRICTION = 6  # 1.0: friction compensation (its row and the runaway guard)
OPT_BOUND = 7  # 1.0: the feedback gains bounded by the loop (kernels.gain_bound), this call
OPT_REFRESH = 8  # 1.0: M(q)⁻¹ of the bound recomputed this call
OPT_RUN_GUARD = 9  # 1.0: the runaway guard integrates the period since the last sample
OPT_PERIOD = 10  # the loop period estimate, s (≤ 0: no feedback friction compensation)
OPT_DT = 11  # s since the last sample (the runaway guard's period)
OPT_LAG = 12  # the loop's lag, s: half a period plus the state's age
OPT_MAX_LAG = 13  # the largest phase lag the bound allows, rad
OPT_NO_GRAVITY = 14  # [14:17] zeros: the gravity of the passes without gravity
OPT_SIZE = 17
WORK_MID = 0  # MID_ROWS rows
WORK_BOUND = MID_ROWS  # 2 rows
WORK_ROWS = MID_ROWS + 2
OUT_TOTAL, OUT_CLAMPED, OUT_SCRATCH = 6, 7, 8
OUT_ROWS = 9


def cycle_slices(n):
    """{table: (slice, shape)} of the cycle record of n joints after its packed record, in the
    order of the layout above (plain Python; the record's length: the last slice's stop)."""
    tables = {}
    start = packed_size(n)
    for name, shape in (
        ("options", (OPT_SIZE,)), ("law", (LAW_ROWS, n)), ("coef", (FC_ROWS, n)), ("work", (WORK_ROWS, n)),
        ("mass", (n * n,)), ("minv", (n, n)), ("out", (OUT_ROWS, n)),
    ):  # fmt: skip
        size = shape[0] * (shape[1] if len(shape) == 2 else 1)
        tables[name] = (slice(start, start + size), shape)
        start += size
    return tables


@njit_inline
def cycle_size(n):
    """Length of the cycle record of n joints (the end of cycle_slices' last table)."""
    packed = PK_TREE + n * TREE_STRIDE + 3 + n * (WS_STRIDE + COMP_STRIDE)  # packed_size(n)
    return packed + OPT_SIZE + (LAW_ROWS + FC_ROWS + WORK_ROWS + OUT_ROWS) * n + 2 * n * n


@njit_inline
def cycle_tables(record):
    """(options, law, coef, work, mass, minv, out) views of a cycle record (as cycle_slices);
    mass flat (n × n), the others of their shapes."""
    n = int(record[PK_N])
    a = PK_TREE + n * TREE_STRIDE + 3 + n * (WS_STRIDE + COMP_STRIDE)  # packed_size(n)
    b = a + OPT_SIZE
    c = b + LAW_ROWS * n
    d = c + FC_ROWS * n
    e = d + WORK_ROWS * n
    f = e + n * n
    g = f + n * n
    options = record[a:b]
    law = record[b:c].reshape((LAW_ROWS, n))
    coef = record[c:d].reshape((FC_ROWS, n))
    work = record[d:e].reshape((WORK_ROWS, n))
    minv = record[f:g].reshape((n, n))
    out = record[g : g + OUT_ROWS * n].reshape((OUT_ROWS, n))
    return options, law, coef, work, record[e:f], minv, out


@njit
def model_terms(tree, qdx, qdd_des, gravity, options, wrench_body, wrench_data, ws, out):
    """The effort law's model terms into rows of `out` (OUT_ROWS, n): gravity g(q), coriolis
    c(q, q̇), inertia M(q) q̈_des, wrench Σ Jᵀ F (each zero unless options[OPT_TERMS + row]; row 3,
    friction, is an input), from the joint transforms already in `ws` (joint_transforms at the q
    the terms are evaluated at), each term its own forward and backward pass as gravity_kernel,
    rnea_kernel and rnea_wrench_kernel compute it: the same numbers, without repeating the
    transforms. gravity: the root-frame gravity (m/s², 3 values)."""
    n = len(qdd_des)
    zero = out[OUT_SCRATCH]
    for i in range(n):
        zero[i] = 0.0
    no_gravity = options[OPT_NO_GRAVITY : OPT_NO_GRAVITY + 3]
    on = options[OPT_TERMS : OPT_TERMS + 5]
    for row in range(5):
        if on[row] == 0.0:
            for i in range(n):
                out[row, i] = 0.0
    if on[0] != 0.0:
        gravity_kinematic_pass(tree, gravity, ws)
        backward_force_pass(tree, ws, out[0], True)
    if on[1] != 0.0:
        forward_kinematic_pass(tree, qdx, zero, no_gravity, ws)
        backward_force_pass(tree, ws, out[1], False)
        add_armature(tree, zero, out[1])
    if on[2] != 0.0:
        forward_kinematic_pass(tree, zero, qdd_des, no_gravity, ws)
        backward_force_pass(tree, ws, out[2], False)
        add_armature(tree, qdd_des, out[2])
    # friction: out[3] is an input, filled by friction_kernel before the call
    if on[4] != 0.0 and len(wrench_body) > 0:
        forward_kinematic_pass(tree, zero, zero, no_gravity, ws)
        root_rotations(tree, ws)
        add_link_wrenches(wrench_body, wrench_data, ws)
        backward_force_pass(tree, ws, out[4], False)
        add_armature(tree, zero, out[4])
    elif on[4] != 0.0:
        for i in range(n):
            out[4, i] = 0.0


@njit
def law_total(q, qd, q_des, qd_des, law, out):
    """The feedback row Kp (q_des − q) + Kd (q̇_des − q̇) of `out`, with the gains of this cycle
    (law rows LAW_KP_NOW, LAW_KD_NOW), then the total clamped to ±law[LAW_LIMIT] into OUT_TOTAL
    and 1.0 where it was clamped into OUT_CLAMPED. A status (NOT_FINITE when the total is not
    finite)."""
    check = 0.0  # total - total: 0 for finite totals, NaN otherwise (before clamping hides an Inf)
    for i in range(len(q)):
        out[5, i] = law[LAW_KP_NOW, i] * (q_des[i] - q[i]) + law[LAW_KD_NOW, i] * (qd_des[i] - qd[i])
        total = out[0, i] + out[1, i] + out[2, i] + out[3, i] + out[4, i] + out[5, i]
        check += total - total
        limit = law[LAW_LIMIT, i]
        out[OUT_CLAMPED, i] = 1.0 if abs(total) > limit else 0.0
        out[OUT_TOTAL, i] = min(max(total, -limit), limit)
    return OK if check == 0.0 else NOT_FINITE


@njit
def friction_after(record, q, qd, qd_des, driven, state, guard_window, prev):
    """The effort law's friction path after the command: the runaway guard's period since the
    last sample `prev` (guard_step_kernel on its `state` and `guard_window`; when options[OPT_RUN_GUARD]),
    then this call's sample into `prev` (friction_guard SAMPLE_* rows) for the next one."""
    options, _, _, work, mass, _, out = cycle_tables(record)
    if options[OPT_RUN_GUARD] != 0.0:
        midpoint = work[WORK_MID : WORK_MID + MID_ROWS]
        guard_step_kernel(
            record, q, qd, qd_des, driven, options[OPT_DT], midpoint, mass, state, guard_window, prev
        )
    for i in range(len(q)):
        prev[SAMPLE_Q, i] = q[i]
        prev[SAMPLE_QD, i] = qd[i]
        prev[SAMPLE_TOTAL, i] = out[OUT_TOTAL, i]
        prev[SAMPLE_FRICTION, i] = out[3, i]


# One cycle of the effort law (rnea_ros.control.effort_law.compute_efforts) in one call and one
# kinematics pass per configuration, in the manner of Pinocchio's computeAllTerms: the joint
# transforms at the measured q feed M(q) (friction bound, feedback bound) and, unless the law
# evaluates its model terms at the desired state, every model term; the runaway guard's rnea is
# at the period's midpoint, another configuration, and makes its own.
@njit
def cycle_kernel(
    record, q, qd, q_des, qd_des, qdd_des, driven, wrench_body, wrench_data, state, guard_window, prev
):
    """The inverse_dynamics effort law for one cycle, on the cycle record `record` (its tables
    above) for the measured (q, q̇) and desired (q, q̇, q̈) state, driven[i] != 0 where a trajectory
    drives joint i, the link wrenches (layout's wrench record), the runaway guard's `state` and
    `guard_window` and the last sample `prev`. In turn: M(q) into `mass` and the friction row out[3]
    (friction_kernel; with OPT_FRICTION); M(q)⁻¹ into `minv` (with OPT_BOUND and OPT_REFRESH) and
    the gains of this cycle (bound_gains_kernel; with OPT_BOUND); the model terms (model_terms) at
    q, q̇ or, with OPT_DESIRED, at the desired state; the feedback, the total and its clamp
    (law_total); then the runaway guard's period and this call's sample (friction_after; with
    OPT_FRICTION). A status (after a failure nothing later runs)."""
    n = len(q)
    if len(record) != cycle_size(n) or int(record[PK_N]) != n:
        return BAD_SIZE
    tree, gravity, ws, comp = unpack(record)
    options, law, coef, work, mass, minv, out = cycle_tables(record)
    if not sizes_ok(n, q, qd_des, qdd_des, gravity, ws, qd) or len(q_des) != n:
        return BAD_SIZE
    friction_on = options[OPT_FRICTION] != 0.0
    bound = options[OPT_BOUND] != 0.0
    refresh = bound and options[OPT_REFRESH] != 0.0
    have_pose = False  # ws holds the joint transforms at q
    if friction_on or refresh:
        joint_transforms(tree, q, ws)
        have_pose = True
        composite_inertia_pass(tree, ws, comp)
        mass_matrix_columns(tree, ws, comp, mass)
        if not all_finite(mass):
            return NOT_FINITE
    period = options[OPT_PERIOD]
    if friction_on and friction_kernel(qd, qd_des, driven, mass, period, coef, state[G_WEIGHT], out[3]) != 0:
        return BAD_SIZE
    if refresh:
        status = inverse_inertia_kernel(tree, q, ws, comp, mass, True, minv)
        if status != OK:
            return status
    if bound:
        bound_gains_kernel(
            minv, law, options[OPT_LAG], options[OPT_MAX_LAG], work[WORK_BOUND : WORK_BOUND + 2]
        )
    desired = options[OPT_DESIRED] != 0.0
    on = options[OPT_TERMS : OPT_TERMS + 5]
    if on[0] != 0.0 or on[1] != 0.0 or on[2] != 0.0 or on[4] != 0.0:
        if desired:
            joint_transforms(tree, q_des, ws)
        elif not have_pose:
            joint_transforms(tree, q, ws)
    model_terms(tree, qd_des if desired else qd, qdd_des, gravity, options, wrench_body, wrench_data, ws, out)
    status = law_total(q, qd, q_des, qd_des, law, out)
    if status != OK:
        return status
    if friction_on:
        friction_after(record, q, qd, qd_des, driven, state, guard_window, prev)
    return OK
