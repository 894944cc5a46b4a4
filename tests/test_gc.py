"""symidx._gc: young collections made rarer for a block, and the threshold restored."""

from __future__ import annotations

import gc

import pytest

from symidx._gc import YOUNG_COLLECTION, young_collections


@pytest.fixture
def threshold():
    before = gc.get_threshold()
    yield
    gc.set_threshold(*before)


def test_young_collections_raise_the_threshold_for_the_block_only(threshold):
    gc.set_threshold(700, 10, 10)
    with young_collections():
        assert gc.get_threshold() == (YOUNG_COLLECTION, 10, 10)
        with young_collections():  # nested: as it was
            assert gc.get_threshold() == (YOUNG_COLLECTION, 10, 10)
        assert gc.get_threshold() == (YOUNG_COLLECTION, 10, 10)
    assert gc.get_threshold() == (700, 10, 10)


def test_young_collections_keep_a_higher_threshold_and_one_set_in_the_block(threshold):
    gc.set_threshold(50_000, 5, 5)
    with young_collections():
        assert gc.get_threshold() == (50_000, 5, 5)
    assert gc.get_threshold() == (50_000, 5, 5)
    gc.set_threshold(700, 10, 10)
    with young_collections():
        gc.set_threshold(1234, 10, 10)  # the block's own choice stays
    assert gc.get_threshold() == (1234, 10, 10)


def test_young_collections_restore_the_threshold_when_the_block_raises(threshold):
    gc.set_threshold(700, 10, 10)
    with pytest.raises(KeyError), young_collections():
        {}["missing"]
    assert gc.get_threshold() == (700, 10, 10)


def test_an_analysis_sweeps_with_rarer_young_collections(threshold, monkeypatch):
    import symidx.fusion.sweep as sweep
    from symidx.hlo import parse_hlo

    module = parse_hlo("HloModule m\n\nENTRY e {\n  p = f32[4] parameter(0)\n"
                       "  ROOT n = f32[4] negate(p)\n}\n")
    seen = []
    extend = sweep._extend

    def recording(*args, **kwargs):
        seen.append(gc.get_threshold()[0])
        return extend(*args, **kwargs)

    monkeypatch.setattr(sweep, "_extend", recording)
    gc.set_threshold(700, 10, 10)
    sweep.Analysis().parameters_of(module.entry, 0)
    assert seen and set(seen) == {YOUNG_COLLECTION}
    assert gc.get_threshold() == (700, 10, 10)
