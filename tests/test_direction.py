"""Direction and Style, ``str`` enums: Direction with the one conversion between the command
line's spelling (``output-to-input``) and the library's (``output_to_input``), Style with the
one check of a style's name; and an element type's integer range, written once
(``symidx.hlo.shape.integer_bounds``)."""

from __future__ import annotations

import json
import pickle

import numpy as np
import pytest

from symidx.core.indexing_map import INPUT_TO_OUTPUT, OUTPUT_TO_INPUT, Direction
from symidx.errors import MapError
from symidx.hlo.shape import integer_bounds


def test_a_direction_is_its_text() -> None:
    assert OUTPUT_TO_INPUT == "output_to_input" and INPUT_TO_OUTPUT == "input_to_output"
    assert str(OUTPUT_TO_INPUT) == f"{OUTPUT_TO_INPUT}" == "output_to_input"
    assert json.dumps({"d": INPUT_TO_OUTPUT}) == '{"d": "input_to_output"}'
    assert {"output_to_input": 1}[OUTPUT_TO_INPUT] == 1  # hashes as its text
    assert pickle.loads(pickle.dumps(INPUT_TO_OUTPUT)) is INPUT_TO_OUTPUT


def test_parse_and_text_convert_between_the_two_spellings() -> None:
    assert Direction.parse("output-to-input") is OUTPUT_TO_INPUT
    assert Direction.parse("input_to_output") is INPUT_TO_OUTPUT
    assert OUTPUT_TO_INPUT.text == "output-to-input"
    assert INPUT_TO_OUTPUT.text == "input-to-output"
    with pytest.raises(MapError, match="unknown direction 'sideways'"):
        Direction.parse("sideways")


def test_the_old_import_path_still_works() -> None:
    from symidx.core.simplify.finish import finish as moved
    from symidx.ops import INPUT_TO_OUTPUT as old_forward
    from symidx.ops import Direction as old
    from symidx.ops import finish

    assert old is Direction and old_forward is INPUT_TO_OUTPUT and finish is moved


@pytest.mark.parametrize("element_type", ["s8", "s16", "s32", "s64", "u8", "u16", "u32", "u64"])
def test_integer_bounds_agree_with_numpy(element_type: str) -> None:
    info = np.iinfo(np.dtype(element_type.replace("s", "int").replace("u", "uint")))
    assert integer_bounds(element_type) == (int(info.min), int(info.max))


def test_integer_bounds_of_narrow_and_other_types() -> None:
    assert integer_bounds("s4") == (-8, 7) and integer_bounds("u4") == (0, 15)
    assert integer_bounds("s1") == (-1, 0) and integer_bounds("u1") == (0, 1)
    assert integer_bounds("f32") is None and integer_bounds("pred") is None


def test_select_entries_the_default_of_maps_and_corpus_computation() -> None:
    from symidx.analysis import select_entries
    from symidx.hlo import parse_hlo

    module = parse_hlo("HloModule m\nENTRY e {\n  p = f32[2] parameter(0)\n"
                       "  q = f32[2] parameter(1)\n"
                       "  ROOT t = (f32[2], f32[2]) tuple(p, q)\n}\n")
    comp = module.entry
    # output-to-input: the first output, every parameter; input-to-output: the mirror
    assert tuple(select_entries(comp, OUTPUT_TO_INPUT)) == ([0], None, True)
    assert tuple(select_entries(comp, INPUT_TO_OUTPUT)) == (None, 0, True)
    assert tuple(select_entries(comp, OUTPUT_TO_INPUT, "all", "all")) == ([0, 1], None, True)
    assert tuple(select_entries(comp, INPUT_TO_OUTPUT, 1, 1)) == ([1], 1, True)
    empty = parse_hlo("HloModule m\nENTRY e {\n  ROOT c = f32[] constant(1)\n}\n").entry
    assert tuple(select_entries(empty, INPUT_TO_OUTPUT)) == (None, None, False)


def test_a_style_is_its_name_and_one_check_names_the_choices() -> None:
    from symidx.core.indexing_map import STYLES, IndexingMap, Style, print_map
    from symidx.core.syntax import FOREIGN_STYLES
    from symidx.core.syntax import print_map as print_any

    assert STYLES == ("doc", "xla", "mlir") and FOREIGN_STYLES == ("isl", "inductor")
    assert f"{Style.XLA}" == str(Style.XLA) == "xla" and json.dumps([Style.MLIR]) == '["mlir"]'
    assert Style.among("isl", FOREIGN_STYLES) is Style.ISL
    m = IndexingMap.identity([4])
    assert print_map(m, "xla") == print_map(m, Style.XLA)
    with pytest.raises(MapError, match="unknown style 'isl'; choose one of doc, xla, mlir"):
        print_map(m, "isl")
    with pytest.raises(MapError, match="unknown style 'tex'; choose one of doc, xla, mlir"):
        print_any(m, "tex")
