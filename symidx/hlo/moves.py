"""The one table of opcodes that move values unchanged.

Four walks need it: :mod:`symidx.hlo.leaves` (which operand leaf a tuple leaf is),
:mod:`symidx.hlo.fold` (the values known before the run), :mod:`symidx.lowering.values` (what an
index operand holds, followed back to where it is held) and :mod:`symidx.fusion.values`
(values an output index decides). Each op of the table moves values in one or both of two
ways:

* ``ELEMENTS``: each output element holds one element of operand 0, the one the op's
  output-to-input map reads (``bitcast``, ``broadcast``, ``copy``, ``reshape``, ``reverse``,
  ``slice``, ``transpose``);
* ``WHOLE``: the output is operand 0's value, whatever its shape, a tuple too (``copy``,
  ``opt-barrier``, ``domain``).

A ``convert`` moves an integer unchanged only when it widens (or keeps) the integer type:
that depends on the types, not on the opcode, so it is not in the table
(:func:`symidx.lowering.values.preserves_integers`).

>>> sorted(MOVES_ELEMENTS)
['bitcast', 'broadcast', 'copy', 'reshape', 'reverse', 'slice', 'transpose']
>>> sorted(PASSES_WHOLE)
['copy', 'domain', 'opt-barrier']
"""

from __future__ import annotations

from collections.abc import Mapping

__all__ = ["ELEMENTS", "WHOLE", "MOVES_VALUES", "MOVES_ELEMENTS", "PASSES_WHOLE"]

ELEMENTS, WHOLE = "elements", "whole"

#: Opcode -> how it moves its operand's values unchanged (see the module docstring).
MOVES_VALUES: Mapping[str, frozenset[str]] = {
    "bitcast": frozenset({ELEMENTS}),
    "broadcast": frozenset({ELEMENTS}),
    "copy": frozenset({ELEMENTS, WHOLE}),
    "domain": frozenset({WHOLE}),
    "opt-barrier": frozenset({WHOLE}),
    "reshape": frozenset({ELEMENTS}),
    "reverse": frozenset({ELEMENTS}),
    "slice": frozenset({ELEMENTS}),
    "transpose": frozenset({ELEMENTS}),
}
#: The ops each of whose output elements is one element of operand 0.
MOVES_ELEMENTS = frozenset(op for op, how in MOVES_VALUES.items() if ELEMENTS in how)
#: The ops whose output is operand 0's whole value.
PASSES_WHOLE = frozenset(op for op, how in MOVES_VALUES.items() if WHOLE in how)
