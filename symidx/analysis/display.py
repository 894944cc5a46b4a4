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

import html
from collections.abc import Sequence

from symidx.analysis.records import FusionMaps
from symidx.ops import OUTPUT_TO_INPUT, Direction
from symidx.syntax import print_map

__all__ = ["groups_table_html"]


def groups_table_html(found: Sequence[FusionMaps], direction: Direction) -> str:
    """An HTML table: fusion, its output (input, input-to-output), the operand (output)
    and its instruction, the maps (XLA's one-line form) and what is unknown or
    over-approximated."""
    selector, label = ("output", "operand") if direction == OUTPUT_TO_INPUT \
        else ("input", "output")
    rows = [f"<table><tr><th>fusion</th><th>{selector}</th><th>{label}</th><th>maps</th>"
            f"<th>note</th></tr>"]
    for f in found:
        for g in f.groups:
            leaf = "" if g.leaf is None else f", leaf {g.leaf}"
            maps = "<br>".join(html.escape(print_map(m, "xla")) for m in g.maps)
            note = (f"unsupported op: {g.unsupported}" if g.unsupported is not None
                    else f"over-approximation ({g.opaque})" if g.opaque is not None
                    else "" if g.maps else "not read")
            rows.append(f"<tr><td>{html.escape(f.instr.name)}</td><td>{f.index}</td>"
                        f"<td>{g.index}{leaf} ({html.escape(g.name)})</td><td>{maps}</td>"
                        f"<td>{html.escape(note)}</td></tr>")
    rows.append("</table>")
    return "\n".join(rows)
