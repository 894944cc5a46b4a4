"""Analysis results in a notebook: a table of map groups, one row per group.

>>> from symidx.hlo import parse_hlo
>>> from symidx.analysis import module_fusion_maps
>>> module = parse_hlo('''
... HloModule m
... f { p = f32[4,8] parameter(0)
...     ROOT t = f32[8,4] transpose(p), dimensions={1,0} }
... ENTRY e { x = f32[4,8] parameter(0)
...     ROOT r = f32[8,4] fusion(x), kind=kLoop, calls=f }''')
>>> row = groups_table_html(module_fusion_maps(module, "output_to_input"),
...                         "output_to_input").splitlines()[1]
>>> row.split("</td><td>")[:3]
['<tr><td>r', '0', '0 (x)']
"""

from __future__ import annotations

from collections.abc import Sequence

from symidx._display import html_table
from symidx.analysis.records import FusionMaps, group_rows
from symidx.ops import OUTPUT_TO_INPUT, Direction

__all__ = ["groups_table_html"]


def groups_table_html(found: Sequence[FusionMaps], direction: Direction) -> str:
    """An HTML table: fusion, its output (input, input-to-output), the operand (output)
    and its instruction, the maps (XLA's one-line form) and what is unknown or
    over-approximated."""
    selector, label = ("output", "operand") if direction == OUTPUT_TO_INPUT \
        else ("input", "output")
    rows = [row for f in found for row in group_rows(f.instr.name, f.index, f.groups)]
    return html_table(["fusion", selector, label, "maps", "note"], rows, raw=(3,))
