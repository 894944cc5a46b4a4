"""XLA layouts of HLO arrays, on the hlo floor: the integer functions (:mod:`.xla`), the
indexing maps (:mod:`.maps`) and an HLO shape's offsets, sizes, maps and bitcasts
(:mod:`.shapes`). A bitcast's op rule reads them; :mod:`symidx.layout` re-exports them
under their old names (``symidx.layout.xla``, ``.maps``, ``.shapes``) beside CuTe's
layouts."""
