"""Fusions where XLA's maps are loose and ours must be exact: brute-force twins.

hypothesis draws small fused computations of four kinds, and the reference interpreter
(:mod:`reference_interpreter`, written from the ops' definitions) runs each on several
values of its integer parameter, if it has one:

* a gather whose index vector is built in the fusion, ``jnp.take_along_axis``-style: the
  components of the index vector are ``iota`` s (broadcast, reshaped, widened, shifted by a
  constant) concatenated with the real indices. The iota components must fold into the
  map (``d0``, not a runtime variable), and the one left must point at the parameter;
* a dynamic-update-slice whose offsets are constants, constants the sweep has to follow
  (through a reshape or a convert), or the parameter, and an update that may cover the
  whole operand (nothing of it is read);
* a scatter of rows whose indices are built in the fusion (a constant table, a broadcast
  constant, an iota, shifted or through JAX's negative-index fix-up) or the parameter,
  with a combiner that sets or adds: the operand is not read where a set lands for sure;
* a pad with a parameter as its pad value, crops included (the pad value is read nowhere);
* a convolution with padding and lhs dilation: the input is not read where a window position
  lands on padding or on a dilation hole; the kernel element there is read under ``reads``
  (it multiplies a zero: ``0 * inf`` is NaN) and not under ``finite``.

Every run must read exactly what the maps give, runtime variables taking the values their
provenance holds; over all runs, the maps (runtime variables over their intervals) must give
exactly what is read; input-to-output maps must be the inverse relation. (Where a held
value lies outside its variable's interval, HLO clamps it into an interval the map may no
longer record, so the run's maps give a part of what it reads; the union over all runs
still decides.)
"""

from __future__ import annotations

import contextlib
from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from reference_interpreter import execute, held_outside, map_relation

from reference_hlo import finite_semantics
from symidx.fusion import Analysis, called_computation, output_maps, parameter_maps
from symidx.hlo import HloComputation, parse_hlo


def shape(dims: tuple[int, ...] | list[int], element: str = "f32") -> str:
    return f"{element}[{','.join(map(str, dims))}]"


def lst(values: Any) -> str:
    return "{" + ",".join(map(str, values)) + "}"


def module(params: list[str], lines: list[str], root: str) -> str:
    """A module whose entry calls a fusion of ``lines`` (the last one its root)."""
    body = [f"  q{k} = {t} parameter({k})" for k, t in enumerate(params)] + \
        [f"  {line}" for line in lines[:-1]] + [f"  ROOT {lines[-1]}"]
    args = ", ".join(f"a{k}" for k in range(len(params)))
    entry = "\n".join(f"  a{k} = {t} parameter({k})" for k, t in enumerate(params))
    return ("HloModule exact\nf {\n" + "\n".join(body) + "\n}\n"
            f"ENTRY e {{\n{entry}\n  ROOT fusion = {root} fusion({args}), kind=kLoop, "
            f"calls=f\n}}\n")


def size(dims: tuple[int, ...]) -> int:
    return int(np.prod(dims, dtype=np.int64)) if dims else 1


def check_exact(text: str, integer: int | None, values: list[np.ndarray],
                per_run: bool = True, assume_finite: bool = False) -> HloComputation:
    """The maps of the fusion in ``text`` against runs of its computation, parameter
    ``integer`` (if any) taking each of ``values`` in turn: exact per run (without
    ``per_run``: sound per run, for maps whose reads depend on a run-time value no runtime
    variable stands for), exact over all runs, and input-to-output the inverse relation;
    under the ``finite`` semantics with ``assume_finite`` (maps and reference both)."""
    fusion = parse_hlo(text).entry.root
    comp = called_computation(fusion)
    assert comp is not None
    runs = []
    for value in values if integer is not None else [None]:
        args: list[object] = [None] * len(comp.parameters)
        if integer is not None:
            args[integer] = value
        with finite_semantics() if assume_finite else contextlib.nullcontext():
            runs.append(execute(comp, args))
    out_dims = comp.root.shape.dims
    analysis = Analysis(assume_finite=assume_finite)
    for k, reached in enumerate(parameter_maps(comp, analysis=analysis)):
        assert reached.unsupported is None and reached.opaque is None, reached
        param_dims = comp.parameters[k].shape.dims
        for run in runs:
            got, read = map_relation(reached.maps, out_dims, param_dims, run), run.relation(k)
            if not per_run:
                assert np.isin(read, got).all(), f"parameter {k}: unsound\n{text}"
            elif held_outside(reached.maps, run):  # clamped into the interval: a part of it
                assert np.isin(got, read).all(), f"parameter {k}: unsound\n{text}"
            else:
                assert np.array_equal(got, read), f"parameter {k}: not exact\n{text}"
        whole = map_relation(reached.maps, out_dims, param_dims)
        read = np.unique(np.concatenate([run.relation(k) for run in runs]))
        assert np.array_equal(whole, read), f"parameter {k}: not exact over all runs\n{text}"
        (forward,) = output_maps(comp, k, analysis=analysis)
        inverse = map_relation(forward.maps, param_dims, out_dims)
        n_out, n_param = size(out_dims), size(param_dims)
        flipped = np.unique((inverse % n_out) * n_param + inverse // n_out)
        assert np.array_equal(flipped, whole), f"parameter {k}: input-to-output\n{text}"
    return comp


# --- a gather indexed by iotas and the real indices (take_along_axis) --------------------------


@st.composite
def take_along_axis(draw: Any) -> tuple[str, tuple[int, ...], int, bool]:
    """(module text, index parameter dims, operand size along the axis, whether the axis
    component is the parameter). Output ``o`` reads operand element ``o`` with its ``axis``
    coordinate replaced by ``indices[o]`` (clamped) -- or, without the parameter, by
    ``o[axis] + c`` (an iota shifted by a constant)."""
    rank = draw(st.integers(1, 3))
    dims = tuple(draw(st.integers(1, 4)) for _ in range(rank))
    axis = draw(st.integers(0, rank - 1))
    batch = dims[:axis] + (draw(st.integers(1, 3)),) + dims[axis + 1:]
    from_parameter = draw(st.booleans())
    vector = batch + (1,)
    lines: list[str] = []

    def emit(dims_: tuple[int, ...], text: str, element: str = "s32") -> str:
        name = f"v{len(lines)}"
        lines.append(f"{name} = {shape(dims_, element)} {text}")
        return name

    def iota_along(j: int) -> str:
        """An index array holding the output index along dimension ``j``."""
        how = draw(st.sampled_from(["iota", "broadcast", "reshape", "convert"]))
        if how == "broadcast":
            flat = emit((batch[j],), "iota(), iota_dimension=0")
            return emit(vector, f"broadcast({flat}), dimensions={{{j}}}")
        if how == "reshape":
            full = emit(batch, f"iota(), iota_dimension={j}")
            return emit(vector, f"reshape({full})")
        if how == "convert":
            narrow = emit(vector, f"iota(), iota_dimension={j}", "s16")
            return emit(vector, f"convert({narrow})")
        return emit(vector, f"iota(), iota_dimension={j}")

    components = []
    for j in range(rank):
        if j != axis:
            components.append(iota_along(j))
        elif from_parameter:
            components.append(emit(vector, "reshape(q1)"))
        else:  # the output index shifted by a constant, which HLO clamps
            shift = emit((), f"constant({draw(st.integers(-2, 2))})")
            wide = emit(vector, f"broadcast({shift}), dimensions={{}}")
            components.append(emit(vector, f"add({iota_along(j)}, {wide})"))
    order = draw(st.permutations(range(rank)))
    parts = ", ".join(components[j] for j in order)
    indices = emit(batch + (rank,), f"concatenate({parts}), dimensions={{{rank}}}")
    lines.append(f"g = {shape(batch)} gather(q0, {indices}), offset_dims={{}}, "
                 f"collapsed_slice_dims={lst(range(rank))}, start_index_map={lst(order)}, "
                 f"index_vector_dim={rank}, slice_sizes={lst([1] * rank)}")
    params = [shape(dims)] + ([shape(batch, "s32")] if from_parameter else [])
    return module(params, lines, shape(batch)), batch, dims[axis], from_parameter


@settings(max_examples=80)
@given(take_along_axis(), st.data())
def test_gather_indexed_by_iotas_in_a_fusion_is_exact(case, data) -> None:
    text, batch, n, from_parameter = case
    # every index value at every position (so the runs read all the maps give), and two
    # random tables
    values = [np.full(batch, v) for v in range(-1, n + 1)] + [
        np.array(data.draw(st.lists(st.integers(-2, n + 1), min_size=size(batch),
                                    max_size=size(batch)))).reshape(batch) for _ in range(2)]
    comp = check_exact(text, 1 if from_parameter else None, values)
    (operand, *_) = parameter_maps(comp)
    # the iota components are folded: at most the parameter's component stays a variable
    variables = [v for m in operand.maps for v in m.rts]
    assert len(variables) == int(from_parameter)
    assert all(str(v.source) == "parameter(1)" for v in variables)


def test_take_along_axis_reads_the_row_of_its_index() -> None:
    """``jnp.take_along_axis(x, i, axis=1)`` as older JAX lowered it: output ``(d0, d1)``
    reads ``x[d0, i[d0, d1]]``, the batch coordinate folded from the iota."""
    text = module(["f32[4,5]", "s32[4,3]"], [
        "iota = s32[4,3,1] iota(), iota_dimension=0",
        "r = s32[4,3,1] reshape(q1)",
        "idx = s32[4,3,2] concatenate(iota, r), dimensions={2}",
        "g = f32[4,3] gather(q0, idx), offset_dims={}, collapsed_slice_dims={0,1}, "
        "start_index_map={0,1}, index_vector_dim=2, slice_sizes={1,1}"], "f32[4,3]")
    comp = called_computation(parse_hlo(text).entry.root)
    assert comp is not None
    (m,) = parameter_maps(comp)[0].maps
    assert str(m).split("\nruntime variables:")[0] == (
        "(d0, d1){rt0} -> (d0, rt0),\ndomain:\nd0 in [0, 3],\nd1 in [0, 2],\nrt0 in [0, 4]")
    assert str(m.rts[0].source) == "parameter(1)"
    assert str(m.rts[0].map).split(",\n")[0] == "(d0, d1) -> (d0, d1)"


# --- dynamic-update-slice -----------------------------------------------------------------------


@st.composite
def dynamic_update_slice(draw: Any) -> tuple[str, bool]:
    """(module text, whether the integer parameter q2 is an offset). Offsets are constants
    (possibly out of range: HLO clamps them), constants behind a reshape or a convert
    (the sweep follows them), or q2 (for one dimension at most)."""
    rank = draw(st.integers(1, 3))
    dims = tuple(draw(st.integers(1, 4)) for _ in range(rank))
    full = draw(st.booleans())
    update = dims if full else tuple(draw(st.integers(1, n)) for n in dims)
    lines, offsets, used = [], [], False
    for j in range(rank):
        how = draw(st.sampled_from(["constant", "reshape", "convert", "parameter"]))
        value = draw(st.integers(-2, dims[j] - update[j] + 2))
        name = f"o{j}"
        if how == "parameter" and not used:
            used = True
            offsets.append("q2")
            continue
        if how == "reshape":
            lines.append(f"{name}v = s32[1] constant({{{value}}})")
            lines.append(f"{name} = s32[] reshape({name}v)")
        elif how == "convert":
            lines.append(f"{name}v = s16[] constant({value})")
            lines.append(f"{name} = s32[] convert({name}v)")
        else:
            lines.append(f"{name} = s32[] constant({value})")
        offsets.append(name)
    lines.append(f"r = {shape(dims)} dynamic-update-slice(q0, q1, {', '.join(offsets)})")
    return module([shape(dims), shape(update), "s32[]"], lines, shape(dims)), used


@settings(max_examples=80)
@given(dynamic_update_slice())
def test_dynamic_update_slice_in_a_fusion_is_exact(case) -> None:
    text, used = case
    comp = check_exact(text, 2, [np.int64(v) for v in range(-2, 7)])
    operand = parameter_maps(comp)[0]
    if not used:  # every offset known: boxes, no runtime variable
        assert all(not m.rts for m in operand.maps)


def test_an_update_covering_the_operand_reads_none_of_it() -> None:
    text = module(["f32[3,4]", "f32[3,4]", "s32[]"],
                  ["r = f32[3,4] dynamic-update-slice(q0, q1, q2, q2)"], "f32[3,4]")
    comp = called_computation(parse_hlo(text).entry.root)
    assert comp is not None
    operand, update, offset = parameter_maps(comp)
    assert [m.is_known_empty for m in operand.maps] == [True]
    # the update is read at d - rt, the offsets clamped to 0 (rt0, rt1 in [0, 0], as XLA)
    assert [str(m).split(",\n")[0] for m in update.maps] == [
        "(d0, d1){rt0, rt1} -> (d0 - rt0, d1 - rt1)"]
    assert all(v.bounds.is_point for v in update.maps[0].rts)


def test_known_offsets_leave_boxes_around_the_window() -> None:
    """An update of 2 rows at row 1 (a constant the sweep follows through a reshape) of a
    5x3 operand: rows 0 and 3-4 of the operand are read."""
    text = module(["f32[5,3]", "f32[2,3]", "s32[]"], [
        "c = s32[1] constant({1})", "o = s32[] reshape(c)", "z = s32[] constant(0)",
        "r = f32[5,3] dynamic-update-slice(q0, q1, o, z)"], "f32[5,3]")
    comp = called_computation(parse_hlo(text).entry.root)
    assert comp is not None
    texts = sorted(str(m) for m in parameter_maps(comp)[0].maps)
    assert texts == ["(d0, d1) -> (0, d1),\ndomain:\nd0 in [0, 0],\nd1 in [0, 2]",
                     "(d0, d1) -> (d0, d1),\ndomain:\nd0 in [3, 4],\nd1 in [0, 2]"]


# --- scatter --------------------------------------------------------------------------------------


COMBINERS = """set {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] copy(b)
}
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] add(a, b)
}
"""


@st.composite
def scatter_rows(draw: Any) -> tuple[str, bool]:
    """(module text, whether the indices are the parameter q2). Rows of the updates are
    scattered onto rows of the operand, set or added; the row indices are a constant table,
    a broadcast constant (every update on one row), an iota (maybe shifted by a constant,
    past the last row, or through JAX's negative-index fix-up ``select(i < 0, i + n, i)``),
    or q2. Where the combiner sets and the indices are known, the operand is read only on
    the rows no update lands on."""
    rows, cols = draw(st.integers(1, 5)), draw(st.integers(1, 3))
    count = draw(st.integers(1, 4))
    combiner = draw(st.sampled_from(["set", "add"]))
    how = draw(st.sampled_from(["table", "broadcast", "iota", "shifted", "fixup",
                                "parameter"]))
    index = shape((count, 1), "s32")
    lines = []
    if how == "table":
        table = [draw(st.integers(-1, rows)) for _ in range(count)]
        lines.append(f"i = {index} constant({{{', '.join(f'{{{v}}}' for v in table)}}})")
    elif how == "broadcast":
        lines += [f"c = s32[] constant({draw(st.integers(-1, rows))})",
                  f"i = {index} broadcast(c), dimensions={{}}"]
    elif how in ("iota", "shifted", "fixup"):
        lines.append(f"v = s32[{count}] iota(), iota_dimension=0")
        if how == "shifted":
            lines += [f"k = s32[] constant({draw(st.integers(-2, 2))})",
                      f"kb = s32[{count}] broadcast(k), dimensions={{}}",
                      f"w = s32[{count}] add(v, kb)"]
        elif how == "fixup":
            lines += ["z = s32[] constant(0)", f"zb = s32[{count}] broadcast(z), dimensions={{}}",
                      f"neg = pred[{count}] compare(v, zb), direction=LT",
                      f"n = s32[] constant({rows})", f"nb = s32[{count}] broadcast(n), "
                      "dimensions={}", f"vn = s32[{count}] add(v, nb)",
                      f"w = s32[{count}] select(neg, vn, v)"]
        lines.append(f"i = {index} reshape({'v' if how == 'iota' else 'w'})")
    source = "q2" if how == "parameter" else "i"
    lines.append(f"r = {shape((rows, cols))} scatter(q0, {source}, q1), "
                 "update_window_dims={1}, inserted_window_dims={0}, "
                 f"scatter_dims_to_operand_dims={{0}}, index_vector_dim=1, to_apply={combiner}")
    text = module([shape((rows, cols)), shape((count, cols)), index], lines,
                  shape((rows, cols)))
    return text.replace("HloModule exact\n", "HloModule exact\n" + COMBINERS), \
        how == "parameter"


@settings(max_examples=80)
@given(scatter_rows())
def test_scatter_in_a_fusion_is_exact(case) -> None:
    text, from_parameter = case
    count = parse_hlo(text).entry.root.operands[2].shape.dims[0]
    rows = parse_hlo(text).entry.root.shape.dims[0]
    values = [np.full((count, 1), v, dtype=np.int64) for v in range(-1, rows + 1)]
    values.append(np.arange(count, dtype=np.int64).reshape(count, 1) % (rows + 1))
    # with the indices a parameter, whether a set overwrites an element depends on their
    # values, which no variable of the operand's (identity) map stands for
    check_exact(text, 2 if from_parameter else None, values, per_run=not from_parameter)


def test_rows_set_at_known_indices_are_not_read() -> None:
    """``x.at[jnp.array([1, 3])].set(u)``, the table behind a reshape: rows 1 and 3 of x
    are not read, each of them reads its own row of u and nothing else of it."""
    text = module(["f32[5,2]", "f32[2,2]", "s32[2,1]"], [
        "c = s32[2] constant({1, 3})", "i = s32[2,1] reshape(c)",
        "r = f32[5,2] scatter(q0, i, q1), update_window_dims={1}, inserted_window_dims={0}, "
        "scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=set"], "f32[5,2]")
    comp = called_computation(parse_hlo(text.replace("HloModule exact\n", "HloModule exact\n"
                                                      + COMBINERS)).entry.root)
    assert comp is not None
    operand, updates, _ = parameter_maps(comp)
    assert {o for m in operand.maps for o in _image_rows(m)} == {0, 2, 4}
    assert sorted(str(m).split(",\n")[0] for m in updates.maps) == [
        "(d0, d1) -> (0, d1)", "(d0, d1) -> (1, d1)"]
    assert all(not m.rts for m in updates.maps)


def _image_rows(m) -> set[int]:
    """The rows of the operand ``m`` reads (an identity map on some rows)."""
    return {int(r) for r in range(m.dims[0].lo, m.dims[0].hi + 1)} if not m.is_known_empty \
        else set()


# --- pad ------------------------------------------------------------------------------------------


@st.composite
def pad(draw: Any) -> tuple[str, bool]:
    """(module text, whether it is a crop: no edge padding > 0, no interior padding)."""
    rank = draw(st.integers(1, 3))
    dims = tuple(draw(st.integers(1, 4)) for _ in range(rank))
    crop = draw(st.booleans())
    parts, out = [], []
    for n in dims:
        if crop:  # keep at least one element
            low = draw(st.integers(1 - n, 0))
            high, interior = draw(st.integers(1 - n - low, 0)), 0
        else:
            low, high = draw(st.integers(-2, 2)), draw(st.integers(-2, 2))
            interior = draw(st.integers(0, 2))
        m = low + high + (n - 1) * (interior + 1) + 1
        if m < 1:
            high, m = high + 1 - m, 1
        parts.append(f"{low}_{high}_{interior}")
        out.append(m)
    lines = [f"r = {shape(out)} pad(q0, q1), padding={'x'.join(parts)}"]
    return module([shape(dims), "f32[]"], lines, shape(out)), crop


@settings(max_examples=80)
@given(pad())
def test_pad_value_in_a_fusion_is_exact(case) -> None:
    text, crop = case
    comp = check_exact(text, None, [])
    value = parameter_maps(comp)[1]
    if crop:
        assert all(m.is_known_empty for m in value.maps)


# --- convolution ------------------------------------------------------------------------------


@st.composite
def convolution(draw: Any) -> str:
    """One spatial dimension or two, with edge padding (negative too) and lhs dilation on
    each, window dilation and reversal, and feature or batch groups."""
    spatial = [draw(st.integers(1, 4)) for _ in range(draw(st.integers(1, 2)))]
    kernel = [draw(st.integers(1, 3)) for _ in spatial]
    fg, bg = draw(st.sampled_from([(1, 1), (2, 1), (1, 2)]))
    fields: dict[str, list[str]] = {k: [] for k in ("size", "pad", "lhs_dilate", "rhs_dilate",
                                                    "rhs_reversal")}
    out_spatial = []
    for n, k in zip(spatial, kernel, strict=True):
        base, wdil = draw(st.integers(1, 3)), draw(st.integers(1, 2))
        low, high = draw(st.integers(-1, 3)), draw(st.integers(-1, 3))
        span = (k - 1) * wdil + 1
        padded = low + high + (n - 1) * base + 1
        if padded < span:
            high += span - padded
            padded = span
        out_spatial.append(padded - span + 1)
        for key, value in (("size", k), ("pad", f"{low}_{high}"), ("lhs_dilate", base),
                           ("rhs_dilate", wdil),
                           ("rhs_reversal", int(draw(st.booleans())))):
            fields[key].append(str(value))
    window = " ".join(f"{key}={'x'.join(v)}" for key, v in fields.items())
    labels = "".join(str(i) for i in range(len(spatial)))
    features, out_features = 2 * fg, 2 * fg * bg
    lhs = [2 * bg] + spatial + [features]
    rhs = kernel + [2, out_features]
    out = [2] + out_spatial + [out_features]
    lines = [f"r = {shape(out)} convolution(q0, q1), window={{{window}}}, "
             f"dim_labels=b{labels}f_{labels}io->b{labels}f, feature_group_count={fg}, "
             f"batch_group_count={bg}"]
    return module([shape(lhs), shape(rhs)], lines, shape(out))


@settings(max_examples=60)
@given(convolution())
def test_convolution_in_a_fusion_is_exact(text: str) -> None:
    check_exact(text, None, [])
    check_exact(text, None, [], assume_finite=True)
