"""Index expressions: sympy expressions over positional integer variables.

Results and constraints of an :class:`~symidx.core.indexing_map.IndexingMap` are sympy
expressions built from integers, the variables below, ``+`` and ``*``, and our own
integer-valued functions :class:`FloorDiv`, :class:`Mod` and :class:`CeilDiv` (floor
semantics; the sign of ``Mod`` follows the divisor, as in Python), and binary
:class:`Min` and :class:`Max`. We do not use sympy's ``floor``/``Mod``: they are slow and
have open wrong-answer bugs on exactly these expressions. ``eval`` of our functions folds
only what holds for *all* integer inputs; range-dependent rewrites live in
:mod:`symidx.core.simplify`.

Variables are positional: dimension ``i`` of any map is the symbol ``d{i}``, range variable
``j`` is ``s{j}``, runtime variable ``k`` is ``rt{k}``. Display names are kept apart, on the
map, so two maps that differ only in names are equal.

The package is split by what the code does with an expression: ``nodes`` (the operations,
with ``printing`` for sympy's code printers), ``variables``, ``sums`` (building sums and
linear forms, with their caches), ``walks``, ``ranges`` (intervals) and ``evaluate``. Every
name is importable from ``symidx.core.expr``.
"""

from __future__ import annotations

from sympy import Expr

from symidx.core.expr.evaluate import INT64_SAFE, compile_expr, evaluate_exact
from symidx.core.expr.nodes import CeilDiv, FloorDiv, Max, Min, Mod, as_expr
from symidx.core.expr.nodes import integer as integer
from symidx.core.expr.nodes import max_of as max_of
from symidx.core.expr.nodes import min_of as min_of
from symidx.core.expr.ranges import _combine as _combine
from symidx.core.expr.ranges import bounds, constrained_bounds
from symidx.core.expr.ranges import scaled_sum as scaled_sum
from symidx.core.expr.sums import ONE, Terms, from_terms, terms
from symidx.core.expr.sums import add as add
from symidx.core.expr.sums import canonical_order as canonical_order
from symidx.core.expr.sums import clear_caches as clear_caches
from symidx.core.expr.sums import compare as compare
from symidx.core.expr.sums import on_clear_caches as on_clear_caches
from symidx.core.expr.sums import rebuild as rebuild
from symidx.core.expr.sums import renamed as renamed
from symidx.core.expr.sums import scale as scale
from symidx.core.expr.sums import shifted as shifted
from symidx.core.expr.sums import substitute as substitute
from symidx.core.expr.variables import IndexVar, dim, rt, sym, var_index, var_kind
from symidx.core.expr.variables import _variable as _variable
from symidx.core.expr.walks import depth, free_vars, scan, variable_divisions, variables

# Names outside __all__ are imported as themselves (``x as x``): the builders (``add``,
# ``integer``, ``scale``, ``rebuild``, ``substitute``, ``shifted``, ``renamed``, ``min_of``,
# ``max_of``), the order of a sum's terms (``canonical_order``, ``compare``), ``clear_caches``
# and ``on_clear_caches``,
# ``_variable`` (which unpickles a variable) and ``_combine`` (symidx.core.simplify.ranges uses it).

__all__ = [
    "Expr", "FloorDiv", "Mod", "CeilDiv", "Min", "Max", "IndexVar", "dim", "sym", "rt",
    "var_kind",
    "var_index", "as_expr", "bounds", "constrained_bounds", "variable_divisions", "scan",
    "free_vars", "variables", "terms", "from_terms", "ONE", "Terms", "compile_expr", "depth",
    "evaluate_exact", "INT64_SAFE",
]
