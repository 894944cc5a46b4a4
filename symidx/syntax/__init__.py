"""Indexing-map text: the parser (:mod:`symidx.syntax.parser`) and, from the floor below,
the printers (:mod:`symidx.indexing_map.text` and :func:`symidx.indexing_map.print_map`),
under one name.

Printing is canonical: terms of a sum in a fixed order, constraints sorted by their text,
so equal maps print equal text whatever order they were built in; what is printed parses
back to an equal map.
"""

from symidx.indexing_map.map import print_map
from symidx.indexing_map.text import STYLES, print_expr
from symidx.syntax.parser import MAX_DEPTH, parse_expr, parse_map

__all__ = ["parse_map", "parse_expr", "print_map", "print_expr", "STYLES", "MAX_DEPTH"]
