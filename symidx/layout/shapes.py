"""XLA layouts of HLO array shapes: offsets, sizes, memory spaces and indexing maps.

The functions live on the hlo floor, in :mod:`symidx.hlo.layouts.shapes` (a bitcast's op
rule reads :func:`reinterpret_map`, and ``symidx.ops`` does not import
:mod:`symidx.layout`); this module keeps their names for the layouts' users.
"""

from symidx.hlo.layouts.shapes import *  # noqa: F403
from symidx.hlo.layouts.shapes import __all__  # noqa: F401
