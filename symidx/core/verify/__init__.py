"""Are two maps the same function on the same domain?

:func:`equal` answers True or False, exactly, or raises :class:`Undecided` with the reason;
:func:`decide` returns a :class:`Verdict` with the method that decided and, for different
maps, a point and both images there. Maps in Presburger arithmetic (``+``, ``*`` by
constants, ``floordiv``/``mod``/``ceildiv`` by constants, ``min``/``max``) are decided
whatever the size of their domain: by isl (islpy, the ``isl`` extra) or the z3 SMT solver
(the ``proofs`` extra); any map by enumeration with numpy while its box is small enough.
What "equal" means for range and runtime variables is in :mod:`symidx.core.verify.equality`.

The modules: :mod:`~symidx.core.verify.equality` (the shared checks and the choice of method),
:mod:`~symidx.core.verify.enumeration`, :mod:`~symidx.core.verify.smt`,
:mod:`~symidx.core.verify.isl`
(and :mod:`~symidx.core.verify.isl_worker`, the process isl runs in under a deadline),
:mod:`~symidx.core.verify.trace` (a simplifier trace, step by step and whole).
"""

from symidx.core.verify.common import non_presburger_reason
from symidx.core.verify.enumeration import EXHAUSTIVE_LIMIT, image_at, relation
from symidx.core.verify.equality import (
    DEFAULT_TIMEOUT,
    METHODS,
    SMALL_BOX,
    check_step,
    decide,
    equal,
)
from symidx.core.verify.isl import has_isl, isl_text
from symidx.core.verify.smt import has_z3
from symidx.core.verify.trace import StepCheck, TraceCheck, check_trace
from symidx.core.verify.verdict import Verdict
from symidx.errors import Undecided

__all__ = [
    "equal", "decide", "Verdict", "Undecided", "check_step", "check_trace", "TraceCheck",
    "StepCheck", "relation", "image_at",
    "non_presburger_reason", "isl_text", "has_isl", "has_z3", "METHODS", "DEFAULT_TIMEOUT",
    "SMALL_BOX", "EXHAUSTIVE_LIMIT",
]
