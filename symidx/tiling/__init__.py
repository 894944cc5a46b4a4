"""Symbolic tiling: the tile of an operand that a tile of the output reads
(:mod:`~symidx.tiling.symbolic_tile`), constraints on tile sizes kept factored
(:mod:`~symidx.tiling.constraints`), a fusion's tiling (:mod:`~symidx.tiling.analysis`) and
its tiles at concrete tile sizes (:mod:`~symidx.tiling.tiled`).
"""

from symidx.tiling.constraints import Constraints
from symidx.tiling.symbolic_tile import SymbolicTile, TileRefusal, symbolic_tile

__all__ = ["Constraints", "SymbolicTile", "TileRefusal", "symbolic_tile"]
