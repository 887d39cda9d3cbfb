"""Scalar-loop dynamics kernels over a model's flat arrays (compiled by numba when available), one
module per concern:

- `layout`: the flat memory layout (named offsets of the body, tree, workspace, composite-inertia,
  wrench, packed and root records), statuses, the effort law's per-joint table;
- `passes`: the recursive passes (joint transforms, kinematics, backward forces, composite
  inertia, mass-matrix columns);
- `fixed_root`, `floating_root`: RNEA, gravity and mass matrix of a fixed root and of a
  free-flyer or planar one, one state, batches, packed records;
- `cycle`: the node's effort law in one call;
- `friction_guard`: friction compensation and the runaway guard;
- `gain_bound`: the feedback bound;
- `momentum_observer`: momentum, link Jacobian, the observer's step;
- `contact_terms`: the terms of contact-consistent inverse dynamics.

The same source runs as plain Python on lists (`rnea_ros.compiled.jit`), so every kernel reads and
writes flat 1-D sequences with explicit strides and spells out its 3-vector arithmetic. Which
kernels Python calls, with which argument types, and when they compile:
`rnea_ros.compiled.entry_points`. numba caches every one of them under one stamp over all of
`rnea_ros/compiled/` (`rnea_ros.compiled.jit`): an edit in any module here reaches every cached
kernel and pointer cfunc (test/unit/compiled/test_stale_cache.py).

Each module is imported by name (`from rnea_ros.compiled.kernels.layout import B_POS`); this
package's own namespace holds nothing.
"""
