"""XLA array layouts as plain integer functions (SPEC §3; seeds 000, 001, 004).

The functions live on the hlo floor, in :mod:`symidx.hlo.layouts.xla` (a bitcast's op rule
reads them, and ``symidx.ops`` does not import :mod:`symidx.layout`); this module keeps
their names, and its types ``Dims``, ``Index``, ``Tile`` and ``Tiles``, for the layouts'
users.
"""

from symidx.hlo.layouts.xla import *  # noqa: F403
from symidx.hlo.layouts.xla import Dims, Index, Tile, Tiles, __all__  # noqa: F401
