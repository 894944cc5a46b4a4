"""One reader for module text as users have it: HLO text, or StableHLO/MHLO (MLIR) text.

>>> from symidx.hlo import parse_module
>>> parse_module('''
... HloModule m
... ENTRY e {
...   ROOT p = f32[4] parameter(0)
... }''').entry.root.opcode
'parameter'

MLIR text (``jax.jit(f).lower(x).as_text()``) is converted to HLO text by jaxlib first
(:mod:`symidx.hlo.mlir`); the module then records it: :attr:`HloModule.source` says
``(StableHLO/MHLO, converted by jaxlib)``.
"""

from __future__ import annotations

from symidx.hlo.ir import HloModule
from symidx.hlo.mlir import looks_like_mlir, mlir_to_hlo
from symidx.hlo.parser import parse_hlo

__all__ = ["CONVERTED", "parse_module"]

#: What the source label of a module converted from MLIR ends with.
CONVERTED = " (StableHLO/MHLO, converted by jaxlib)"


def parse_module(text: str, source: str = "", *, validate: bool = True) -> HloModule:
    """The module of HLO text or of StableHLO/MHLO text (converted with jaxlib, keeping the
    names and locations MLIR gives), as :func:`~symidx.hlo.parse_hlo` reads HLO text.
    ``source`` (a file name) prefixes error messages."""
    if looks_like_mlir(text):
        return parse_hlo(mlir_to_hlo(text, source), source=source + CONVERTED,
                         validate=validate)
    return parse_hlo(text, source=source, validate=validate)
