"""The maps of instructions, fusions and whole computations of a module, as groups per
operand (or output): what ``symidx maps`` prints.

A façade over :mod:`symidx.fusion`; the work is done in

* :mod:`symidx.analysis.groups` -- :func:`instruction_maps`, :func:`module_fusion_maps`,
  :func:`computation_maps` and the records they return (:class:`FusionMaps`,
  :class:`ComputationMaps`; a group of maps is a :class:`symidx.fusion.Reached` placed at
  an operand or output);
* :mod:`symidx.analysis.physical` -- the same maps between physical (layout-ordered)
  indices (``physical=True``);
* :mod:`symidx.analysis.documents` -- the JSON documents of the versioned schema
  ``symidx.maps/1``.
* :mod:`symidx.analysis.coalescing` -- are a fusion's reads coalesced? XLA's answer, per
  operand: its maps against the operands' layouts (``symidx maps --coalescing``).

>>> from symidx.hlo import parse_hlo
>>> module = parse_hlo('''
... HloModule m
... ENTRY e {
...   p0 = f32[10,20]{1,0} parameter(0)
...   ROOT t = f32[20,10]{1,0} transpose(p0), dimensions={1,0}
... }''')
>>> (group,) = instruction_maps(find_instruction(module, "t"), "output_to_input")
>>> group.maps[0]
IndexingMap('(d0, d1) -> (d1, d0), domain: d0 in [0, 19], d1 in [0, 9]')
"""

from typing import Any

from symidx.analysis.groups import (
    computation_maps,
    find_computation,
    find_instruction,
    instruction_maps,
    iter_computation_maps,
    module_fusion_maps,
    output_leaves,
    select_entries,
    semantics_name,
)
from symidx.analysis.records import ComputationMaps, FusionMaps, deprecated_name

__all__ = [
    "FusionMaps",
    "ComputationMaps",
    "semantics_name",
    "find_instruction",
    "find_computation",
    "computation_maps",
    "iter_computation_maps",
    "output_leaves",
    "select_entries",
    "instruction_maps",
    "module_fusion_maps",
]


def __getattr__(name: str) -> Any:
    """The old name ``MapGroup`` (deprecated): :class:`symidx.fusion.Reached`."""
    return deprecated_name(__name__, name)
