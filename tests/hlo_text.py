"""HLO text several test files share: the scalar computations that ``reduce``,
``reduce-window``, ``scatter``, ``all-reduce`` and ``select-and-scatter`` call.

Written once here, so that a test module says which reducer it needs (``ADD``, ``MAX``, or
``scalar_computation("min", "minimum", "s32")``) rather than pasting its text.
"""

from __future__ import annotations


def scalar_computation(name: str, op: str, dtype: str = "f32",
                       operands: tuple[str, str] = ("a", "b")) -> str:
    """The computation ``name`` of two scalar parameters ``a`` and ``b`` of type ``dtype``
    whose root applies the binary opcode ``op`` to ``operands`` (``("b", "a")``: flipped)."""
    return (f"{name} {{\n  a = {dtype}[] parameter(0)\n  b = {dtype}[] parameter(1)\n"
            f"  ROOT r = {dtype}[] {op}({operands[0]}, {operands[1]})\n}}\n")


#: The f32 reducers most modules call: ``add`` and ``max``.
ADD = scalar_computation("add", "add")
MAX = scalar_computation("max", "maximum")
