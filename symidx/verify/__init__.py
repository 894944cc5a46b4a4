"""Are two maps the same function on the same domain?

:func:`equal` answers True or False, exactly, or raises :class:`Undecided` with the reason;
:func:`decide` returns a :class:`Verdict` with the method that decided and, for different
maps, a point and both images there. Maps in Presburger arithmetic (``+``, ``*`` by
constants, ``floordiv``/``mod``/``ceildiv`` by constants, ``min``/``max``) are decided
whatever the size of their domain: by isl (islpy, the ``isl`` extra) or the z3 SMT solver
(the ``proofs`` extra); any map by enumeration with numpy while its box is small enough.
What "equal" means for range and runtime variables is in :mod:`symidx.verify.equality`.

The modules: :mod:`~symidx.verify.equality` (the shared checks and the choice of method),
:mod:`~symidx.verify.enumeration`, :mod:`~symidx.verify.smt`, :mod:`~symidx.verify.isl`
(and :mod:`~symidx.verify.isl_worker`, the process isl runs in under a deadline),
:mod:`~symidx.verify.trace` (a simplifier trace, step by step and whole).
"""

from symidx.errors import Undecided
from symidx.verify.common import non_presburger_reason
from symidx.verify.enumeration import EXHAUSTIVE_LIMIT, image_at, relation
from symidx.verify.equality import (
    DEFAULT_TIMEOUT,
    METHODS,
    SMALL_BOX,
    check_step,
    decide,
    equal,
)
from symidx.verify.isl import has_isl, isl_text
from symidx.verify.smt import has_z3
from symidx.verify.trace import StepCheck, TraceCheck, check_trace
from symidx.verify.verdict import Verdict

__all__ = [
    "equal", "decide", "Verdict", "Undecided", "check_step", "check_trace", "TraceCheck",
    "StepCheck", "relation", "image_at",
    "non_presburger_reason", "isl_text", "has_isl", "has_z3", "METHODS", "DEFAULT_TIMEOUT",
    "SMALL_BOX", "EXHAUSTIVE_LIMIT",
]
