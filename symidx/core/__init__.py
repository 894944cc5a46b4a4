"""The map core: indexing maps and everything done to them, knowing nothing of HLO.

- :mod:`symidx.core.interval`: closed integer ranges with interval arithmetic;
- :mod:`symidx.core.expr`: index expressions (sympy expressions over positional variables);
- :mod:`symidx.core.indexing_map`: the map value type, its text and composition;
- :mod:`symidx.core.syntax`: map text read and printed, in symidx's and other compilers'
  syntaxes;
- :mod:`symidx.core.simplify`: the range-aware simplifier;
- :mod:`symidx.core.verify`: are two maps the same function on the same domain?
- :mod:`symidx.core.pointsets`: sets of integer points a map reaches, exactly.

The HLO front end (:mod:`symidx.hlo`) and the core import nothing of each other; the
lowering floor (:mod:`symidx.lowering`) joins them. The names most users need are at the
top level (``symidx.parse_map``, ``symidx.simplify``, ...), loaded on first use.
"""
