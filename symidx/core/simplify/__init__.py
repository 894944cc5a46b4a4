"""The range-aware simplifier.

sympy cannot simplify ``floordiv``/``mod`` without knowing ranges. :func:`simplify` uses
the interval of every variable and sub-expression:

* expression rules (:mod:`symidx.core.simplify.rules`) rewrite results and constraints;
* constraint rules (:mod:`symidx.core.simplify.constraints`) fold ``lo <= e op c <= hi`` into
  bounds on ``e``, move single-variable constraints into the variable's interval, merge
  ``x mod c`` constraints, drop constraints that always hold and detect an empty domain;
* dimensions with a single value are replaced by that value in the results.

The driver (:mod:`symidx.core.simplify.driver`) runs these as named passes, round after round,
until nothing changes, within a :class:`Budget`, so it terminates on every input. It never
changes the map's meaning; ``simplify(m, trace=True)`` records every rewrite step, counts
how often each rule and pass was tried and fired, and says which budget ran out, if one did.

Also here: :func:`compose` (composition, its runtime variables' source maps simplified),
the map transforms :func:`remove_unused_symbols`, :func:`remove_unused_vars`,
:func:`convert_range_vars_to_dims`, :func:`rescale_symbols`, and :func:`result_ranges`
(XLA's ``ComputeResultRanges``).
"""

from symidx.core.simplify.composition import compose
from symidx.core.simplify.driver import (
    MAX_ROUNDS,
    Budget,
    SimplifyResult,
    SimplifyStats,
    Step,
    result_ranges,
    simplify,
    simplify_expr,
)
from symidx.core.simplify.transforms import (
    FeasibilityMemo,
    convert_range_vars_to_dims,
    feasibility_memo,
    remove_unused_symbols,
    remove_unused_vars,
    rescale_symbols,
)

__all__ = [
    "simplify", "simplify_expr", "SimplifyResult", "Step", "compose", "remove_unused_symbols",
    "remove_unused_vars", "convert_range_vars_to_dims", "rescale_symbols", "result_ranges",
    "MAX_ROUNDS", "Budget", "SimplifyStats", "feasibility_memo", "FeasibilityMemo",
]
