"""The HLO front end: shapes and layouts, the module text parser, facts about instructions
(:mod:`symidx.hlo.facts`: outputs, dims, constants, the computation an instruction calls),
computation graphs.

>>> from symidx.hlo import parse_hlo, parse_shape
>>> module = parse_hlo('''
... HloModule m
... ENTRY e {
...   p0 = f32[10,20]{1,0} parameter(0)
...   ROOT t = f32[20,10]{1,0} transpose(p0), dimensions={1,0}
... }''')
>>> module.entry.root.opcode, module.entry.root.dimensions
('transpose', (1, 0))
>>> str(parse_shape("bf16[8,128]{1,0:T(8,128)(2,1)}"))
'bf16[8,128]{1,0:T(8,128)(2,1)}'
"""

from typing import TYPE_CHECKING

from symidx.hlo.facts import called_computation
from symidx.hlo.infer import infer_shape
from symidx.hlo.inputs import parse_module
from symidx.hlo.parser import (
    ConvolutionDimensionNumbers,
    DotDimensionNumbers,
    GatherDimensionNumbers,
    HloComputation,
    HloInstruction,
    HloModule,
    LiteralValue,
    PaddingDim,
    ScatterDimensionNumbers,
    SliceDim,
    WindowDim,
    parse_hlo,
)
from symidx.hlo.shape import (
    COMBINE_DIMENSION,
    ELEMENT_BIT_WIDTHS,
    UNBOUNDED_SIZE,
    HloLayout,
    Shape,
    ShapeLike,
    Tile,
    TupleShape,
    parse_shape,
)
from symidx.hlo.validate import validate_instruction, validate_module

__all__ = [
    "COMBINE_DIMENSION",
    "ELEMENT_BIT_WIDTHS",
    "UNBOUNDED_SIZE",
    "ConvolutionDimensionNumbers",
    "DotDimensionNumbers",
    "GatherDimensionNumbers",
    "HloComputation",
    "HloInstruction",
    "HloLayout",
    "HloModule",
    "LiteralValue",
    "PaddingDim",
    "ScatterDimensionNumbers",
    "Shape",
    "ShapeLike",
    "SliceDim",
    "Tile",
    "TupleShape",
    "WindowDim",
    "called_computation",
    "computation_graph",
    "fusion_instructions",
    "infer_shape",
    "parse_hlo",
    "parse_module",
    "parse_shape",
    "topological_order",
    "users",
    "validate_instruction",
    "validate_module",
]

if TYPE_CHECKING:
    from symidx.hlo.graph import (
        computation_graph,
        fusion_instructions,
        topological_order,
        users,
    )

#: The graph helpers load networkx, on first use only (parsing does not need it).
_GRAPH = frozenset({"computation_graph", "fusion_instructions", "topological_order", "users"})


def __getattr__(name: str) -> object:
    if name in _GRAPH:
        from symidx.hlo import graph

        value = getattr(graph, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'symidx.hlo' has no attribute {name!r}")
