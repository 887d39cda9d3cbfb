"""The node's effort law in one call (`cycle_kernel`, for `rnea_ros.control.effort_law`): the model
terms from one set of joint transforms per configuration, the feedback and the clamped total,
with the friction compensation, the feedback bound and the runaway guard of `friction_guard` and
`gain_bound`.
"""

from __future__ import annotations

from rnea_ros.compiled.jit import njit
from rnea_ros.compiled.kernels.friction_guard import G_WEIGHT, friction_kernel, guard_step_kernel
from rnea_ros.compiled.kernels.gain_bound import bound_gains_kernel, inverse_inertia_kernel
from rnea_ros.compiled.kernels.layout import (
    BAD_SIZE,
    COMP_STRIDE,
    LAW_KD,
    LAW_KP,
    LAW_LIMIT,
    LAW_ROWS,
    NOT_FINITE,
    OK,
    TREE_STRIDE,
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

# Switches of cycle_kernel: the five model terms, then "evaluate them at the desired state".
SWITCH_DESIRED = 5
# out rows 0..5: the terms gravity, coriolis, inertia, friction, wrench, feedback; then:
OUT_TOTAL, OUT_CLAMPED, OUT_SCRATCH = 6, 7, 8
OUT_ROWS = 9


@njit
def model_terms(tree, qdx, qdd_des, gravity, switches, wrench_body, wrench_data, ws, out):
    """The effort law's model terms into rows of `out` (OUT_ROWS, n): gravity g(q), coriolis
    c(q, q̇), inertia M(q) q̈_des, wrench Σ Jᵀ F (each zero when its switch is 0; row 3, friction,
    is an input), from the joint transforms already in `ws` (joint_transforms at the q the terms
    are evaluated at), each term its own forward and backward pass as gravity_kernel, rnea_kernel
    and rnea_wrench_kernel compute it: the same numbers, without repeating the transforms.
    gravity: 6 values, the root-frame gravity (m/s²) then 3 zeros."""
    n = len(qdd_des)
    zero = out[OUT_SCRATCH]
    for i in range(n):
        zero[i] = 0.0
    no_gravity = gravity[3:6]
    for row in range(5):
        if not switches[row]:
            for i in range(n):
                out[row, i] = 0.0
    if switches[0]:
        gravity_kinematic_pass(tree, gravity[0:3], ws)
        backward_force_pass(tree, ws, out[0], True)
    if switches[1]:
        forward_kinematic_pass(tree, qdx, zero, no_gravity, ws)
        backward_force_pass(tree, ws, out[1], False)
        add_armature(tree, zero, out[1])
    if switches[2]:
        forward_kinematic_pass(tree, zero, qdd_des, no_gravity, ws)
        backward_force_pass(tree, ws, out[2], False)
        add_armature(tree, qdd_des, out[2])
    # friction: out[3] is an input, filled by rnea_ros.friction.compensation before the call
    if switches[4] and len(wrench_body) > 0:
        forward_kinematic_pass(tree, zero, zero, no_gravity, ws)
        root_rotations(tree, ws)
        add_link_wrenches(wrench_body, wrench_data, ws)
        backward_force_pass(tree, ws, out[4], False)
        add_armature(tree, zero, out[4])
    elif switches[4]:
        for i in range(n):
            out[4, i] = 0.0


@njit
def law_total(q, qd, q_des, qd_des, law, out):
    """The feedback row Kp (q_des − q) + Kd (q̇_des − q̇) of `out`, then the total clamped to
    ±limit into OUT_TOTAL and 1.0 where it was clamped into OUT_CLAMPED; law: (LAW_ROWS, n) per
    joint. A status (NOT_FINITE when the total is not finite)."""
    check = 0.0  # total - total: 0 for finite totals, NaN otherwise (before clamping hides an Inf)
    for i in range(len(q)):
        out[5, i] = law[LAW_KP, i] * (q_des[i] - q[i]) + law[LAW_KD, i] * (qd_des[i] - qd[i])
        total = out[0, i] + out[1, i] + out[2, i] + out[3, i] + out[4, i] + out[5, i]
        check += total - total
        limit = law[LAW_LIMIT, i]
        out[OUT_CLAMPED, i] = 1.0 if abs(total) > limit else 0.0
        out[OUT_TOTAL, i] = min(max(total, -limit), limit)
    return OK if check == 0.0 else NOT_FINITE


# The effort law's friction path after the command (rnea_ros.control.effort_law.compute_efforts):
# the runaway guard and the sample it keeps.
@njit
def friction_after_kernel(
    tree, g, ws, prev, q, qd, qd_des, driven, dt, run_guard, mid, need, mass, state, clock, total, row
):
    """The runaway guard's period since `prev` (when run_guard), then this call's sample into
    `prev` (rows q, q̇, applied total, friction term) for the next one."""
    if run_guard:
        guard_step_kernel(tree, g, ws, prev, q, qd, qd_des, driven, dt, mid, need, mass, state, clock)
    for i in range(len(q)):
        prev[0, i] = q[i]
        prev[1, i] = qd[i]
        prev[2, i] = total[i]
        prev[3, i] = row[i]
    return 0


# One cycle of the effort law (rnea_ros.control.effort_law.compute_efforts) in one call and one
# kinematics pass per configuration, in the manner of Pinocchio's computeAllTerms: the joint
# transforms at the measured q feed M(q) (friction bound, feedback bound) and, unless the law
# evaluates its model terms at the desired state, every model term; the runaway guard's rnea is
# at the period's midpoint, another configuration, and makes its own.
@njit
def cycle_kernel(
    tree, q, qd, q_des, qd_des, qdd_des, gravity, switches, law, law_now, wrench_body, wrench_data,
    ws, comp, mass, friction_on, coef, driven, period, bound, refresh, minv, lag, max_lag, scale,
    rows, run_guard, dt, prev, mid, need, state, clock, out,
):  # fmt: skip
    """The inverse_dynamics effort law for one cycle, in turn: M(q) into `mass` and the friction
    row out[3] (friction_kernel; when friction_on); M(q)⁻¹ into `minv` (when bound and refresh)
    and the gains of this cycle into law_now (bound_gains_kernel; when bound); the model terms
    (model_terms) at q, q̇ or, per switches[SWITCH_DESIRED], at the desired state; the feedback,
    the total and its clamp (law_total, gains of law_now); then the runaway guard's period and
    this call's sample (friction_after_kernel; when friction_on, the period when run_guard).
    out: (OUT_ROWS, n); law, law_now: (LAW_ROWS, n). A status (after a failure nothing later
    runs)."""
    nb = len(tree) // TREE_STRIDE
    n = len(q)
    if out.shape[0] != OUT_ROWS or out.shape[1] != n or law.shape[0] != LAW_ROWS or law.shape[1] != n:
        return BAD_SIZE
    if not sizes_ok(nb, q, qd_des, qdd_des, gravity[:3], ws, qd):
        return BAD_SIZE
    if len(q_des) != n or len(gravity) != 6:
        return BAD_SIZE
    if len(mass) != n * n or len(comp) < COMP_STRIDE * n:
        return BAD_SIZE
    refresh = bound and refresh
    have_pose = False  # ws holds the joint transforms at q
    if friction_on or refresh:
        joint_transforms(tree, q, ws)
        have_pose = True
        composite_inertia_pass(tree, ws, comp)
        mass_matrix_columns(tree, ws, comp, mass)
        if not all_finite(mass):
            return NOT_FINITE
    if friction_on and friction_kernel(qd, qd_des, driven, mass, period, coef, state[G_WEIGHT], out[3]) != 0:
        return BAD_SIZE
    if refresh:
        status = inverse_inertia_kernel(tree, q, ws, comp, mass, True, minv)
        if status != OK:
            return status
    if bound:
        bound_gains_kernel(minv, law, law_now, lag, max_lag, scale, rows)
    desired = switches[SWITCH_DESIRED] != 0
    if switches[0] or switches[1] or switches[2] or switches[4]:
        if desired:
            joint_transforms(tree, q_des, ws)
        elif not have_pose:
            joint_transforms(tree, q, ws)
    model_terms(
        tree, qd_des if desired else qd, qdd_des, gravity, switches, wrench_body, wrench_data, ws, out
    )
    status = law_total(q, qd, q_des, qd_des, law_now, out)
    if status != OK:
        return status
    if friction_on:
        friction_after_kernel(
            tree, gravity[0:3], ws, prev, q, qd, qd_des, driven, dt, run_guard, mid, need, mass, state,
            clock, out[OUT_TOTAL], out[3],
        )  # fmt: skip
    return OK
