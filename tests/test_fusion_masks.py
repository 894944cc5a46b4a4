"""A select whose predicate the output index decides (causal masks, bands, ``jnp.tril``)
reads each branch only where the predicate picks it: brute-force twins.

hypothesis draws masks built from iotas and constants -- broadcast, reshaped, converted,
added, scaled, divided, clamped, their signs and low bits taken, compared in every
direction, and combined with ``and``, ``or``, ``xor``, ``not``, ``select`` and compares of
predicates -- and the reference interpreter
(:mod:`reference_interpreter`) runs the fusion: it computes the predicate's values and reads
the branch each element picks. The maps must give exactly those reads, and input-to-output
the inverse relation (see ``check_exact``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from reference_interpreter import execute, map_relation
from test_fusion_exact import check_exact, module, shape

from symidx.fusion import called_computation, parameter_maps
from symidx.hlo import parse_hlo

DIRECTIONS = ("EQ", "NE", "LT", "LE", "GT", "GE")


@st.composite
def masked_select(draw: Any) -> str:
    """A fusion ``select(mask, q0, q1)`` whose mask is computed from iotas and constants."""
    rank = draw(st.integers(1, 3))
    dims = tuple(draw(st.integers(1, 5)) for _ in range(rank))
    lines: list[str] = []

    def emit(text: str, element: str = "s32", dims_: tuple[int, ...] = dims) -> str:
        name = f"v{len(lines)}"
        lines.append(f"{name} = {shape(dims_, element)} {text}")
        return name

    def leaf(element: str) -> str:
        how = draw(st.sampled_from(["iota", "broadcast", "reshape", "constant"]))
        j = draw(st.integers(0, rank - 1))
        if how == "constant":
            scalar = emit(f"constant({draw(st.integers(-3, 6))})", element, ())
            return emit(f"broadcast({scalar}), dimensions={{}}", element)
        if how == "broadcast":
            flat = emit("iota(), iota_dimension=0", element, (dims[j],))
            return emit(f"broadcast({flat}), dimensions={{{j}}}", element)
        if how == "reshape" and rank > 1:
            flat = emit(f"iota(), iota_dimension={j}", element, dims + (1,))
            return emit(f"reshape({flat})", element)
        return emit(f"iota(), iota_dimension={j}", element)

    def value(element: str, depth: int) -> str:
        if depth == 0 or draw(st.booleans()):
            return leaf(element)
        how = draw(st.sampled_from(["add", "subtract", "scale", "maximum", "minimum",
                                    "divide", "remainder", "convert", "clamp", "negate",
                                    "abs", "sign", "low bits"]))
        if how == "convert":
            return emit(f"convert({value('s16', depth - 1)})", element)
        if how in ("negate", "abs", "sign"):
            return emit(f"{how}({value(element, depth - 1)})", element)
        if how == "low bits" and element == "s32":
            scalar = emit(f"constant({draw(st.sampled_from([1, 3, 7]))})", element, ())
            mask = emit(f"broadcast({scalar}), dimensions={{}}", element)
            iota = emit(f"iota(), iota_dimension={draw(st.integers(0, rank - 1))}", element)
            return emit(f"and({iota}, {mask})", element)
        if how in ("divide", "remainder") and element == "s32":
            scalar = emit(f"constant({draw(st.integers(1, 3))})", element, ())
            divisor = emit(f"broadcast({scalar}), dimensions={{}}", element)
            iota = emit(f"iota(), iota_dimension={draw(st.integers(0, rank - 1))}", element)
            return emit(f"{how}({iota}, {divisor})", element)
        if how == "scale":
            scalar = emit(f"constant({draw(st.integers(-2, 3))})", element, ())
            factor = emit(f"broadcast({scalar}), dimensions={{}}", element)
            return emit(f"multiply({value(element, depth - 1)}, {factor})", element)
        if how == "clamp":
            lo = emit(f"constant({draw(st.integers(-1, 2))})", element, ())
            hi = emit(f"constant({draw(st.integers(2, 5))})", element, ())
            return emit(f"clamp({lo}, {value(element, depth - 1)}, {hi})", element)
        if how in ("divide", "remainder", "low bits"):
            how = "add"
        return emit(f"{how}({value(element, depth - 1)}, {value(element, depth - 1)})", element)

    def predicate(depth: int) -> str:
        how = draw(st.sampled_from(["compare"] * 3 + ["and", "or", "xor", "not", "select",
                                                     "constant", "agree"]))
        if how == "constant" or (depth == 0 and how != "compare"):
            scalar = emit(f"constant({str(draw(st.booleans())).lower()})", "pred", ())
            return emit(f"broadcast({scalar}), dimensions={{}}", "pred")
        if how == "compare":
            element = draw(st.sampled_from(["s32", "f32"]))
            a, b = value(element, 2), value(element, 2)
            return emit(f"compare({a}, {b}), direction={draw(st.sampled_from(DIRECTIONS))}",
                        "pred")
        if how == "not":
            return emit(f"not({predicate(depth - 1)})", "pred")
        if how == "agree":  # a compare of two predicates
            p, q = predicate(depth - 1), predicate(depth - 1)
            return emit(f"compare({p}, {q}), direction={draw(st.sampled_from(['EQ', 'NE']))}",
                        "pred")
        if how == "select":
            parts = [predicate(depth - 1) for _ in range(3)]
            return emit(f"select({', '.join(parts)})", "pred")
        return emit(f"{how}({predicate(depth - 1)}, {predicate(depth - 1)})", "pred")

    mask = predicate(1)
    lines.append(f"r = {shape(dims)} select({mask}, q0, q1)")
    return module([shape(dims), shape(dims)], lines, shape(dims))


@settings(max_examples=120)
@given(masked_select())
def test_select_on_a_mask_the_index_decides_is_exact(text: str) -> None:
    check_exact(text, None, [])


def maps_of(text: str) -> list[list[str]]:
    comp = called_computation(parse_hlo(text).entry.root)
    assert comp is not None
    return [sorted(str(m) for m in reached.maps) for reached in parameter_maps(comp)]


CAUSAL = ["i = s32[4,4] iota(), iota_dimension=0", "j = s32[4,4] iota(), iota_dimension=1",
          "m = pred[4,4] compare(i, j), direction=GE",
          "r = f32[4,4] select(m, q0, q1)"]


def test_a_causal_mask_keeps_each_branch_to_its_triangle() -> None:
    scores, masked = maps_of(module(["f32[4,4]", "f32[4,4]"], CAUSAL, "f32[4,4]"))
    assert scores == ["(d0, d1) -> (d0, d1),\ndomain:\nd0 in [0, 3],\nd1 in [0, 3],\n"
                      "d0 - d1 in [0, 3]"]
    assert masked == ["(d0, d1) -> (d0, d1),\ndomain:\nd0 in [0, 3],\nd1 in [0, 3],\n"
                      "d0 - d1 in [-3, -1]"]


def test_a_sliding_window_is_a_band_and_its_complement_two_maps() -> None:
    """Gemma-style local attention: ``0 <= q - k < 2``."""
    lines = ["i = s32[5,5] iota(), iota_dimension=0", "j = s32[5,5] iota(), iota_dimension=1",
             "diff = s32[5,5] subtract(i, j)", "w = s32[] constant(2)",
             "wb = s32[5,5] broadcast(w), dimensions={}",
             "near = pred[5,5] compare(diff, wb), direction=LT",
             "causal = pred[5,5] compare(i, j), direction=GE",
             "m = pred[5,5] and(causal, near)", "r = f32[5,5] select(m, q0, q1)"]
    scores, masked = maps_of(module(["f32[5,5]", "f32[5,5]"], lines, "f32[5,5]"))
    assert scores == ["(d0, d1) -> (d0, d1),\ndomain:\nd0 in [0, 4],\nd1 in [0, 4],\n"
                      "d0 - d1 in [0, 1]"]
    assert [t.split("d1 in [0, 4],\n")[1] for t in masked] == [
        "d0 - d1 in [-4, -1]", "d0 - d1 in [2, 4]"]


def test_a_mask_from_a_parameter_keeps_both_branches_whole() -> None:
    text = module(["f32[3]", "f32[3]", "pred[3]"], ["r = f32[3] select(q2, q0, q1)"], "f32[3]")
    on_true, on_false, mask = maps_of(text)
    assert on_true == on_false == mask == ["(d0) -> (d0),\ndomain:\nd0 in [0, 2]"]


def test_an_iota_past_what_its_type_holds_decides_nothing() -> None:
    """An ``s8`` iota times 100 wraps around: no value, the rule's maps stay (sound)."""
    lines = ["i = s8[4] iota(), iota_dimension=0", "c = s8[] constant(100)",
             "cb = s8[4] broadcast(c), dimensions={}", "big = s8[4] multiply(i, cb)",
             "z = s8[] constant(0)", "zb = s8[4] broadcast(z), dimensions={}",
             "m = pred[4] compare(big, zb), direction=GE", "r = f32[4] select(m, q0, q1)"]
    text = module(["f32[4]", "f32[4]"], lines, "f32[4]")
    on_true, on_false = maps_of(text)
    assert on_true == on_false == ["(d0) -> (d0),\ndomain:\nd0 in [0, 3]"]
    # and the twin agrees that both branches are read (100 * 2 wraps to -56)
    comp = called_computation(parse_hlo(text).entry.root)
    assert comp is not None
    run = execute(comp, [None, None])
    for k, reached in enumerate(parameter_maps(comp)):
        assert np.isin(run.relation(k), map_relation(reached.maps, (4,), (4,))).all()


def test_a_total_order_compare_of_floats_decides_nothing() -> None:
    """``-0.0 < +0.0`` in a total order: ``negate(iota)`` at 0 is ``-0.0``, so the mask is
    true there although the integer values are equal. No value: both branches whole."""
    lines = ["i = f32[3] iota(), iota_dimension=0", "n = f32[3] negate(i)",
             "z = f32[] constant(0)", "zb = f32[3] broadcast(z), dimensions={}",
             "m = pred[3] compare(n, zb), direction=LT, type=TOTALORDER",
             "r = f32[3] select(m, q0, q1)"]
    on_true, on_false = maps_of(module(["f32[3]", "f32[3]"], lines, "f32[3]"))
    assert on_true == on_false == ["(d0) -> (d0),\ndomain:\nd0 in [0, 2]"]


def test_a_constant_true_mask_reads_none_of_the_other_branch() -> None:
    lines = ["t = pred[] constant(true)", "tb = pred[3] broadcast(t), dimensions={}",
             "r = f32[3] select(tb, q0, q1)"]
    comp = called_computation(parse_hlo(module(["f32[3]", "f32[3]"], lines, "f32[3]")
                                        ).entry.root)
    assert comp is not None
    on_true, on_false = parameter_maps(comp)
    assert [m.is_known_empty for m in on_false.maps] == [True]
    assert [str(m) for m in on_true.maps] == ["(d0) -> (d0),\ndomain:\nd0 in [0, 2]"]


# --- masks that cross computations ---------------------------------------------------------------

MASKS = Path(__file__).parent / "data" / "masks"


def check_entry_exact(text: str) -> list[list[str]]:
    """The whole entry computation's maps against a run of it (no integer parameter): exact.
    Returns the maps' texts per parameter."""
    comp = parse_hlo(text).entry
    run = execute(comp, [None] * len(comp.parameters))
    out_dims = comp.root.shape.dims
    texts = []
    for k, reached in enumerate(parameter_maps(comp)):
        assert reached.unsupported is None and reached.opaque is None, reached
        got = map_relation(reached.maps, out_dims, comp.parameters[k].shape.dims)
        assert np.array_equal(got, run.relation(k)), f"parameter {k}: not exact"
        texts.append(sorted(str(m) for m in reached.maps))
    return texts


def test_a_mask_the_caller_computes_is_followed_into_the_call() -> None:
    """JAX's unoptimised ``jnp.where(tril, x, 0)``: the mask is computed in the entry and
    passed to ``call(_where)`` as a parameter."""
    (x,) = check_entry_exact((MASKS / "iota_mask.lowered.hlo").read_text())
    assert x == ["(d0, d1) -> (d0, d1),\ndomain:\nd0 in [0, 3],\nd1 in [0, 3],\n"
                 "d0 - d1 in [0, 3]"]


def test_integer_floor_division_as_jax_compiles_it_is_followed() -> None:
    """A block-diagonal mask ``i // 2 == j // 2`` as XLA compiles JAX's ``floor_divide``:
    ``select((sign(i) != 1) & (i & 1 != 0), (i >> 1) - 1, i >> 1)``, whose predicate the
    simplifier shows never holds for ``i >= 0``."""
    x, = check_entry_exact((MASKS / "block_diag_mask.compiled.hlo").read_text())
    assert [t.split("d1 in [0, 5],\n")[1] for t in x] == [
        "-(d1 floordiv 2) + d0 floordiv 2 in [0, 0]"]


def test_a_gather_index_normalised_by_where_is_folded() -> None:
    """JAX's unoptimised ``jnp.diag``: gather at ``where(i < 0, i + 4, i)`` for an iota ``i``
    reads the diagonal, not every element."""
    (x,) = check_entry_exact((MASKS / "diag.lowered.hlo").read_text())
    assert x == ["(d0) -> (d0, d0),\ndomain:\nd0 in [0, 3]"]


def test_a_gather_index_the_caller_computes_is_followed_into_the_call() -> None:
    """JAX's unoptimised ``take_along_axis(x, i + j)`` for iotas ``i``, ``j``: the index
    is computed in the entry and normalised (``where(k < 0, k + 6, k)``) in the called
    computation, where the gather reads it."""
    (x,) = check_entry_exact((MASKS / "take_along_iotas.lowered.hlo").read_text())
    assert x == ["(d0, d1) -> (d0, d0 + d1),\ndomain:\nd0 in [0, 2],\nd1 in [0, 1]"]


def test_a_causal_mask_in_attention_is_followed_through_fusions_and_calls() -> None:
    """Causal attention as JAX compiles it (the mask in the fusions that take the row max and
    the exponent) and as it lowers it (``call(_where)``): the twin runs the whole entry."""
    for name in ("attention_like.compiled.hlo", "attention_like.lowered.hlo"):
        check_entry_exact((MASKS / name).read_text())


FILLED = """HloModule filled
mask {
  i = s32[4,4] iota(), iota_dimension=0
  j = s32[4,4] iota(), iota_dimension=1
  ROOT m = pred[4,4] compare(i, j), direction=LT
}
pick {
  p = pred[4,4] parameter(0)
  a = f32[4,4] parameter(1)
  b = f32[4,4] parameter(2)
  ROOT s = f32[4,4] select(p, a, b)
}
ENTRY e {
  x = f32[4,4] parameter(0)
  y = f32[4,4] parameter(1)
  m = pred[4,4] fusion(), kind=kLoop, calls=mask
  ROOT r = f32[4,4] fusion(m, x, y), kind=kLoop, calls=pick
}
"""


def test_a_mask_computed_by_another_fusion_is_followed() -> None:
    x, y = check_entry_exact(FILLED)
    assert [t.split("d1 in [0, 3],\n")[1] for t in x + y] == [
        "d0 - d1 in [-3, -1]", "d0 - d1 in [0, 3]"]


def test_a_computation_called_twice_is_analysed_per_call() -> None:
    """``pick`` called with the causal mask and with an all-true one (JAX's unoptimised
    ``_where`` is one computation called wherever ``jnp.where`` is): each call takes its
    own mask, so ``y`` is read only where the first call picks it."""
    text = FILLED.replace(
        "  ROOT r = f32[4,4] fusion(m, x, y), kind=kLoop, calls=pick",
        "  t = pred[] constant(true)\n  all = pred[4,4] broadcast(t), dimensions={}\n"
        "  r1 = f32[4,4] fusion(m, x, y), kind=kLoop, calls=pick\n"
        "  r2 = f32[4,4] fusion(all, x, y), kind=kLoop, calls=pick\n"
        "  ROOT r = f32[4,4] add(r1, r2)")
    _, y = check_entry_exact(text)
    assert y == ["(d0, d1) -> (d0, d1),\ndomain:\nd0 in [0, 3],\nd1 in [0, 3],\n"
                 "d0 - d1 in [0, 3]"]


@st.composite
def table_mask(draw: Any) -> str:
    """``select(compare(broadcast(table), iota), q0, q1)``: a one-hot mask
    (``jax.nn.one_hot`` compares a constant table of classes with an iota). Tables of up to
    3 entries: the on-false branch's predicate is the complement, which must stay within
    :data:`symidx.fusion.values.MAX_TERMS` conjunctions to be written (past it the branch
    stays whole: sound, not exact)."""
    n, m = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    axis = draw(st.integers(0, 1))
    size = (n, m)[axis]
    table = [draw(st.integers(-1, 4)) for _ in range(size)]
    direction = draw(st.sampled_from(DIRECTIONS))
    first = draw(st.booleans())
    lines = [f"t = {shape((size,), 's32')} constant({{{','.join(map(str, table))}}})",
             f"b = {shape((n, m), 's32')} broadcast(t), dimensions={{{axis}}}",
             f"i = {shape((n, m), 's32')} iota(), iota_dimension={1 - axis}",
             f"p = {shape((n, m), 'pred')} compare({'b, i' if first else 'i, b'}), "
             f"direction={direction}",
             f"r = {shape((n, m))} select(p, q0, q1)"]
    return module([shape((n, m)), shape((n, m))], lines, shape((n, m)))


@given(table_mask())
def test_one_hot_masks_are_exact(text: str) -> None:
    check_exact(text, None, [])
