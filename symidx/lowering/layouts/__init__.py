"""XLA layouts of HLO arrays, on the lowering floor: the integer functions (:mod:`.xla`),
the indexing maps (:mod:`.maps`) and an HLO shape's offsets, sizes, maps and bitcasts
(:mod:`.shapes`). A bitcast's op rule reads them; :mod:`symidx.layout` gives ``xla`` and
``shapes`` under its own name, and :mod:`symidx.layout.maps` the XLA maps beside CuTe's."""
