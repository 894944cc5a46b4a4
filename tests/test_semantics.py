"""The two semantics of a map: ``reads`` (the default: any IEEE value, NaN and infinities
included) and ``finite`` (``assume_finite=True``: every value that depends on an input
finite), through the API, the fusion sweep, the CLI and the JSON documents.

The brute-force twin of the ``finite`` products: hypothesis builds a factor from constants
(tables with zero, NaN and -inf entries), iotas, masks, pads, selects, converts, negations,
products, quotients, and exponentials of sums, differences, maxima and minima (a masked
softmax's ``exp(where(mask, s, -inf) - max) / sum``), computing its values with numpy from
the ops' definitions as it writes the HLO, and multiplies a parameter by it (elementwise,
or as a dot). Under ``finite`` the parameter must be read exactly where the factor is
neither zero nor NaN (a finite value times zero is zero, anything times NaN is NaN). The
values stay in the classes the analysis follows: no ``+inf`` (a difference subtracts a
finite value, as a softmax subtracts the row's max; a quotient divides by one), NaN only
from constants. Under ``reads`` the parameter is read everywhere.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from reference_interpreter import map_relation
from test_fusion_exact import module, shape

from symidx import output_to_input, parse_hlo
from symidx.analysis import computation_maps, instruction_maps, semantics_name
from symidx.errors import SymidxError
from symidx.fusion import Analysis, called_computation, output_maps, parameter_maps

DIRECTIONS = {"EQ": np.equal, "NE": np.not_equal, "LT": np.less, "LE": np.less_equal,
              "GT": np.greater, "GE": np.greater_equal}


def literal(values: np.ndarray) -> str:
    if values.ndim == 0:
        return repr(float(values))
    return "{" + ", ".join(literal(v) for v in values) + "}"


@st.composite
def zero_factor(draw: Any, product: str) -> tuple[str, np.ndarray]:
    """A fusion ``product(factor, q0)`` (``multiply``, or ``dot`` of a matrix ``q0`` with a
    matrix factor); the factor's values (``q1``, a parameter, is 1.5 everywhere: a value
    that is not zero)."""
    dims = tuple(draw(st.integers(1, 3)) for _ in range(2))
    lines: list[str] = []

    def emit(text: str, dims_: tuple[int, ...], element: str = "f32") -> str:
        name = f"v{len(lines)}"
        lines.append(f"{name} = {shape(dims_, element)} {text}")
        return name

    def mask(d: tuple[int, ...]) -> tuple[str, np.ndarray]:
        j = draw(st.integers(0, len(d) - 1))
        iota = emit(f"iota(), iota_dimension={j}", d, "s32")
        c = draw(st.integers(0, 2))
        scalar = emit(f"constant({c})", (), "s32")
        bound = emit(f"broadcast({scalar}), dimensions={{}}", d, "s32")
        direction = draw(st.sampled_from(sorted(DIRECTIONS)))
        name = emit(f"compare({iota}, {bound}), direction={direction}", d, "pred")
        index = np.indices(d)[j]
        return name, DIRECTIONS[direction](index, c)

    def table(d: tuple[int, ...], choices: list[float]) -> tuple[str, np.ndarray]:
        values = np.array(draw(st.lists(st.sampled_from(choices), min_size=int(np.prod(d)),
                                        max_size=int(np.prod(d)))),
                          dtype=np.float32).reshape(d)
        return emit(f"constant({literal(values)})", d), values

    def pad(d: tuple[int, ...], depth: int, make: Any, values: list[float]
            ) -> tuple[str, np.ndarray]:
        """A pad of ``make(inner dims, depth - 1)`` to ``d``, its pad value one of
        ``values``: an operand of n elements per dim, edge and interior padding adding up."""
        config, inner = [], []
        for m in d:
            interior = draw(st.integers(0, 1))
            n = draw(st.integers(1, (m + interior) // (interior + 1)))
            low = draw(st.integers(0, m - n - (n - 1) * interior))
            high = m - low - n - (n - 1) * interior
            config.append((low, high, interior))
            inner.append(n)
        name, held = make(tuple(inner), depth - 1)
        v = draw(st.sampled_from(values))
        pad_value = emit(f"constant({v})", ())
        text = "x".join(f"{lo}_{hi}_{i}" for lo, hi, i in config)
        padded = np.full(d, v, np.float32)
        padded[tuple(slice(lo, lo + (n - 1) * (i + 1) + 1, i + 1)
                     for (lo, _, i), n in zip(config, inner, strict=True))] = held
        return emit(f"pad({name}, {pad_value}), padding={text}", d), padded

    def low(d: tuple[int, ...], depth: int) -> tuple[str, np.ndarray]:
        """A value that is -inf in places (exp makes those zeros)."""
        kinds = ["constant", "parameter"] + (["pad", "select", "subtract", "add", "maximum",
                                              "minimum"] if depth > 0 else [])
        kind = draw(st.sampled_from(kinds))
        if kind == "constant":
            return table(d, [-np.inf, -np.inf, 0.0, 1.0])
        if kind == "parameter":
            return emit("broadcast(q1), dimensions={}", d), np.full(d, 1.5, np.float32)
        if kind == "pad":
            return pad(d, depth, low, [-np.inf, 0.0])
        if kind == "select":
            p, where = mask(d)
            (a, va), (b, vb) = low(d, depth - 1), low(d, depth - 1)
            return emit(f"select({p}, {a}, {b})", d), np.where(where, va, vb)
        (a, va), (b, vb) = low(d, depth - 1), low(d, depth - 1)
        if kind == "subtract":  # minus a finite value, as a softmax subtracts the max
            b, vb = table(d, [0.0, 1.0, -2.0])
        fn = {"subtract": np.subtract, "add": np.add, "maximum": np.maximum,
              "minimum": np.minimum}[kind]
        return emit(f"{kind}({a}, {b})", d), fn(va, vb)

    def factor(d: tuple[int, ...], depth: int) -> tuple[str, np.ndarray]:
        kinds = ["constant", "scalar", "parameter", "convert"]
        if depth > 0:
            kinds += ["pad", "select", "multiply", "negate", "divide", "exponential"]
        kind = draw(st.sampled_from(kinds))
        if kind == "constant":
            return table(d, [0.0, 0.0, 1.0, -2.0, np.nan])
        if kind == "exponential":
            name, values = low(d, depth - 1)
            return emit(f"exponential({name})", d), np.exp(values)
        if kind == "divide":  # by a finite non-zero divisor, as a softmax divides by a sum
            (a, va), (b, vb) = factor(d, depth - 1), table(d, [1.0, -2.0, 0.5])
            return emit(f"divide({a}, {b})", d), va / vb
        if kind == "scalar":
            v = draw(st.sampled_from([0.0, 3.0]))
            scalar = emit(f"constant({v})", ())
            return emit(f"broadcast({scalar}), dimensions={{}}", d), np.full(d, v, np.float32)
        if kind == "parameter":
            return emit("broadcast(q1), dimensions={}", d), np.full(d, 1.5, np.float32)
        if kind == "convert":
            name, where = mask(d)
            return emit(f"convert({name})", d), where.astype(np.float32)
        if kind == "negate":
            name, values = factor(d, depth - 1)
            return emit(f"negate({name})", d), -values
        if kind == "multiply":
            (a, va), (b, vb) = factor(d, depth - 1), factor(d, depth - 1)
            return emit(f"multiply({a}, {b})", d), va * vb
        if kind == "select":
            p, where = mask(d)
            (a, va), (b, vb) = factor(d, depth - 1), factor(d, depth - 1)
            return emit(f"select({p}, {a}, {b})", d), np.where(where, va, vb)
        return pad(d, depth, factor, [0.0, 0.0, 2.0])

    with np.errstate(all="ignore"):
        name, values = factor(dims, 3)
    if product == "multiply":
        lines.append(f"r = {shape(dims)} multiply({name}, q0)")
        return module([shape(dims), "f32[]"], lines, shape(dims)), values
    k = draw(st.integers(1, 3))
    lines.append(f"r = {shape((k, dims[1]))} dot(q0, {name}), lhs_contracting_dims={{1}}, "
                 f"rhs_contracting_dims={{0}}")
    return module([shape((k, dims[0])), "f32[]"], lines, shape((k, dims[1]))), values


def reads_of_q0(text: str, assume_finite: bool) -> tuple[np.ndarray, np.ndarray]:
    """(output, q0) pair codes the maps relate, backward and forward (flipped)."""
    comp = called_computation(parse_hlo(text).entry.root)
    assert comp is not None
    analysis = Analysis(assume_finite=assume_finite)
    out_dims, q0_dims = comp.root.shape.dims, comp.parameters[0].shape.dims
    backward = parameter_maps(comp, analysis=analysis)[0]
    assert backward.unsupported is None
    found = map_relation(backward.maps, out_dims, q0_dims)
    (forward,) = output_maps(comp, 0, analysis=analysis)
    inverse = map_relation(forward.maps, q0_dims, out_dims)
    n_out, n_q0 = int(np.prod(out_dims)), int(np.prod(q0_dims))
    return found, np.unique((inverse % n_out) * n_q0 + inverse // n_out)


def codes(pairs: set[tuple[int, int]], n_q0: int) -> np.ndarray:
    return np.array(sorted(o * n_q0 + i for o, i in pairs), dtype=np.int64)


@given(zero_factor("multiply"))
def test_finite_multiply_reads_where_the_factor_is_not_zero(case: tuple[str, np.ndarray]
                                                             ) -> None:
    text, values = case
    n = values.size
    flat = values.reshape(-1)
    everything = codes({(e, e) for e in range(n)}, n)
    expected = codes({(e, e) for e in range(n) if flat[e] != 0 and not np.isnan(flat[e])}, n)
    found, inverse = reads_of_q0(text, assume_finite=True)
    assert np.array_equal(found, expected), text
    assert np.array_equal(inverse, expected), text
    found, inverse = reads_of_q0(text, assume_finite=False)
    assert np.array_equal(found, everything) and np.array_equal(inverse, everything), text


@given(zero_factor("dot"))
def test_finite_dot_reads_where_the_factor_is_not_zero(case: tuple[str, np.ndarray]) -> None:
    """``out[i, j] = sum_c q0[i, c] * f[c, j]``: ``q0[i, c]`` is read by ``out[i, j]``
    where ``f[c, j]`` is not zero (finite), everywhere (reads). The input-to-output maps of
    a dot keep every read (a documented over-approximation)."""
    text, values = case
    comp = called_computation(parse_hlo(text).entry.root)
    assert comp is not None
    k, c = comp.parameters[0].shape.dims
    j = values.shape[1]
    pairs = {((i * j + jj), i * c + cc) for i in range(k) for jj in range(j)
             for cc in range(c)}
    expected = codes({(o, q) for o, q in pairs
                      if values[q % c, o % j] != 0 and not np.isnan(values[q % c, o % j])},
                     k * c)
    found, inverse = reads_of_q0(text, assume_finite=True)
    assert np.array_equal(found, expected), text
    assert np.isin(found, inverse).all(), text
    found, _ = reads_of_q0(text, assume_finite=False)
    assert np.array_equal(found, codes(pairs, k * c)), text


# --- the convolution's kernel, the API and the documents ---------------------------------

CONV = """HloModule c
ENTRY e {
  x = f32[1,4,1] parameter(0)
  k = f32[3,1,1] parameter(1)
  ROOT y = f32[1,4,1] convolution(x, k), window={size=3 pad=1_1}, dim_labels=b0f_0io->b0f
}
"""


def kernel_pairs(m: Any) -> set[tuple[int, int]]:
    """(output position, kernel position) the kernel map relates."""
    return {(int(o[1]), int(i[0])) for o in np.ndindex(1, 4, 1)
            for i in _image(m, o)}


def _image(m: Any, point: tuple[int, ...]) -> list[tuple[int, ...]]:
    found = []
    for s in np.ndindex(*(b.size for b in m.ranges)):
        symbols = tuple(b.lo + v for b, v in zip(m.ranges, s, strict=True))
        if m.constraints_hold(point, symbols, ()):
            found.append(m.evaluate(point, symbols, ()))
    return found


def test_the_kernel_over_padding_is_read_by_default() -> None:
    """``y[0] = k[0] * 0 + k[1] * x[0] + k[2] * x[1]``: ``k[0] = inf`` makes it NaN."""
    instr = parse_hlo(CONV).entry.root
    every = {(o, w) for o in range(4) for w in range(3)}
    (reads,) = output_to_input(instr, 0)[1]
    assert kernel_pairs(reads) == every
    (finite,) = output_to_input(instr, 0, assume_finite=True)[1]
    assert kernel_pairs(finite) == every - {(0, 0), (3, 2)}


def test_semantics_names_and_a_mismatched_analysis() -> None:
    assert (semantics_name(False), semantics_name(True)) == ("reads", "finite")
    instr = parse_hlo(CONV).entry.root
    with pytest.raises(SymidxError, match="'reads' semantics, not 'finite'"):
        instr_groups = instruction_maps(instr, "output_to_input", analysis=Analysis(),
                                        assume_finite=True)
        del instr_groups
    comp = parse_hlo(CONV).entry
    (record,) = computation_maps(comp, "output_to_input", output=0, assume_finite=True)
    (k_map,) = record.groups[1].maps
    assert kernel_pairs(k_map) == {(o, w) for o in range(4) for w in range(3)} - {(0, 0),
                                                                                (3, 2)}


def run_cli(*argv: str) -> str:
    import contextlib
    import io

    from symidx.cli import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(list(argv)) == 0
    return out.getvalue()


def test_json_and_text_say_which_semantics(tmp_path: Any) -> None:
    path = tmp_path / "conv.hlo"
    path.write_text(CONV)
    for flags, name in (([], "reads"), (["--assume-finite"], "finite")):
        for verb in (["--computation", "ENTRY"], ["--all"], []):
            document = json.loads(run_cli("maps", str(path), *verb, *flags, "--format",
                                          "json"))
            assert document["semantics"] == name
    assert run_cli("maps", str(path), "--assume-finite").startswith("semantics: finite")
    assert not run_cli("maps", str(path)).startswith("semantics")


def test_batch_passes_the_flag_through(tmp_path: Any) -> None:
    from symidx.cli import main
    from symidx.cli.batch import answer

    path = tmp_path / "conv.hlo"
    path.write_text(CONV)
    line = json.dumps({"args": ["maps", str(path), "--assume-finite", "--format", "json"]})
    found = answer(line, main)
    assert found["exit"] == 0 and found["result"]["semantics"] == "finite"
