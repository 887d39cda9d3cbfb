"""The effort law's vocabulary: the names of its terms (no imports beyond the standard library and
`rnea_ros.errors`, so that parameter code can name the terms without loading the law).

TERMS: every term of the inverse_dynamics command, in the order of the node's ~/terms/<term>
topics and of `compiled.kernels.cycle.cycle_kernel`'s output rows. COMPENSABLE: the model terms a law
may switch on or off (feedback is on whenever a gain is non-zero).
"""

from __future__ import annotations

from collections.abc import Iterable

from rnea_ros.errors import RneaError

TERMS = ("gravity", "coriolis", "inertia", "friction", "wrench", "feedback")
COMPENSABLE = TERMS[:5]


def compensable_terms(compensate: Iterable[str] | str) -> frozenset[str]:
    """The terms of `compensate` (a name or names of COMPENSABLE) as a set; RneaError naming
    any unknown term."""
    terms = frozenset([compensate]) if isinstance(compensate, str) else frozenset(compensate)
    unknown = sorted(terms - set(COMPENSABLE))
    if unknown:
        raise RneaError(f"compensate: unknown terms {unknown}, expected some of {list(COMPENSABLE)}")
    return terms
