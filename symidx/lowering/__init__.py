"""HLO read as maps: the floor between the HLO front end (:mod:`symidx.hlo`, which knows
nothing of maps) and the map core's users (:mod:`symidx.ops`, :mod:`symidx.fusion`,
:mod:`symidx.layout`). It holds what turns facts about an HLO module into the map core's
terms: the resolver of runtime values (:mod:`~symidx.lowering.values`: what an index
operand holds, as a ``ValueSource``, a known value or a table) and XLA's layouts of HLO
arrays (:mod:`~symidx.lowering.layouts`: the integer functions, their indexing maps, an HLO
shape's offsets, sizes and bitcasts).
"""
