"""symidx.hlo.same_value: value numbering of one computation. Two instructions share a
representative only when they hold the same value, bit for bit, in every execution.

Unit cases are small HLO texts whose answer is read off by hand; a property test builds
random integer index chains twice (sometimes with one op changed) and checks that whenever
the numbering calls the two roots equal, a numpy evaluation written here from the ops'
definitions gives equal arrays on random and edge inputs."""

from __future__ import annotations

from typing import Any

import numpy as np
from hlo_text import scalar_computation
from hypothesis import event, given, settings
from hypothesis import strategies as st

from symidx.hlo import HloComputation, parse_hlo
from symidx.hlo.same_value import representative, value_numbering


def computation(lines: list[str], params: list[str] | None = None,
                extra: str = "") -> HloComputation:
    """The entry of a module with ``params`` (text shapes) and ``lines`` (the last one its
    root); ``extra``: computations placed before the entry."""
    body = [f"  p{k} = {t} parameter({k})" for k, t in enumerate(params or ["s32[4]"])]
    body += [f"  {line}" for line in lines[:-1]] + [f"  ROOT {lines[-1]}"]
    return parse_hlo(f"HloModule m\n{extra}ENTRY e {{\n" + "\n".join(body) + "\n}\n").entry


def rep(comp: HloComputation, name: str) -> str:
    return representative(comp.instruction(name), comp).name


ADD = scalar_computation("add", "add", "s32")
SUB = scalar_computation("sub", "subtract", "s32")
ADD_FLIPPED = scalar_computation("add2", "add", "s32", operands=("b", "a"))
FADD = scalar_computation("fadd", "add")


def test_equal_integer_chains_share_the_first_instruction() -> None:
    comp = computation([
        "c1 = s32[] constant(1)", "b1 = s32[4] broadcast(c1), dimensions={}",
        "a1 = s32[4] add(p0, b1)", "m1 = s32[4] multiply(a1, a1)",
        "c2 = s32[] constant(1)", "b2 = s32[4] broadcast(c2), dimensions={}",
        "a2 = s32[4] add(p0, b2)", "m2 = s32[4] multiply(a2, a2)",
        "t = (s32[4], s32[4]) tuple(m1, m2)"])
    assert [rep(comp, n) for n in ("c2", "b2", "a2", "m2")] == ["c1", "b1", "a1", "m1"]
    assert [rep(comp, n) for n in ("c1", "b1", "a1", "m1", "t", "p0")] == \
        ["c1", "b1", "a1", "m1", "t", "p0"]


def test_the_representative_is_the_first_in_topological_order() -> None:
    """Text order puts ``late`` first, but it uses ``x2``, so ``x1`` comes first."""
    comp = computation([
        "late = s32[4] negate(x2)", "x1 = s32[4] negate(p0)", "x2 = s32[4] negate(p0)",
        "t = (s32[4], s32[4]) tuple(late, x1)"])
    assert rep(comp, "x2") == "x1"
    assert rep(comp, "late") == "late"


def test_metadata_and_sharding_do_not_decide_the_value() -> None:
    comp = computation([
        'a = s32[4] negate(p0), metadata={op_name="one"}, sharding={replicated}',
        'b = s32[4] negate(p0), metadata={op_name="two"}, frontend_attributes={x="1"}',
        "t = (s32[4], s32[4]) tuple(a, b)"])
    assert rep(comp, "b") == "a"


def test_attributes_that_decide_the_value_keep_instructions_apart() -> None:
    comp = computation([
        "s1 = s32[2] slice(p0), slice={[0:2]}", "s2 = s32[2] slice(p0), slice={[2:4]}",
        "c1 = pred[4] compare(p0, p0), direction=LT",
        "c2 = pred[4] compare(p0, p0), direction=LE",
        "c3 = pred[4] compare(p0, p0), direction=LT",
        "t = (s32[2], s32[2], pred[4], pred[4], pred[4]) tuple(s1, s2, c1, c2, c3)"])
    assert rep(comp, "s2") == "s2"
    assert rep(comp, "c2") == "c2"
    assert rep(comp, "c3") == "c1"


def test_different_constants_and_parameters_stay_apart() -> None:
    comp = computation([
        "c1 = s32[] constant(1)", "c2 = s32[] constant(2)", "c3 = s32[] constant(1)",
        "c4 = s64[] constant(1)", "e1 = s32[4] constant({...})", "e2 = s32[4] constant({...})",
        "a1 = s32[4] add(p0, p1)", "a2 = s32[4] add(p0, p2)",
        "t = (s32[], s32[], s32[], s64[], s32[4], s32[4], s32[4], s32[4]) "
        "tuple(c1, c2, c3, c4, e1, e2, a1, a2)"], params=["s32[4]"] * 3)
    assert rep(comp, "c2") == "c2"
    assert rep(comp, "c3") == "c1"
    assert rep(comp, "c4") == "c4"  # another type
    assert rep(comp, "e2") == "e2"  # an elided literal equals nothing
    assert rep(comp, "p1") == "p1" and rep(comp, "p2") == "p2"
    assert rep(comp, "a2") == "a2"


def test_iotas_and_ids_by_opcode_shape_and_attributes() -> None:
    comp = computation([
        "i1 = s32[4,2] iota(), iota_dimension=0", "i2 = s32[4,2] iota(), iota_dimension=0",
        "i3 = s32[4,2] iota(), iota_dimension=1", "r1 = u32[] replica-id()",
        "r2 = u32[] replica-id()", "q1 = u32[] partition-id()",
        "t = (s32[4,2], s32[4,2], s32[4,2], u32[], u32[], u32[]) tuple(i1, i2, i3, r1, r2, q1)"])
    assert [rep(comp, n) for n in ("i2", "i3", "r2", "q1")] == ["i1", "i3", "r1", "q1"]


def test_floating_point_arithmetic_never_merges() -> None:
    """FMA contraction and reassociation may give two equal float chains different bits."""
    comp = computation([
        "a1 = f32[4] add(p0, p1)", "a2 = f32[4] add(p0, p1)",
        "m1 = f32[4] multiply(a1, p1)", "m2 = f32[4] multiply(a1, p1)",
        "x1 = f32[4] maximum(p0, p1)", "x2 = f32[4] maximum(p0, p1)",
        "k1 = f32[4] clamp(p0, p1, p0)", "k2 = f32[4] clamp(p0, p1, p0)",
        "n1 = f32[4] negate(p0)", "n2 = f32[4] negate(p0)",
        "t = (f32[4], f32[4], f32[4], f32[4], f32[4], f32[4], f32[4], f32[4], f32[4], f32[4]) "
        "tuple(a1, a2, m1, m2, x1, x2, k1, k2, n1, n2)"], params=["f32[4]", "f32[4]"])
    assert [rep(comp, n) for n in ("a2", "m2", "x2", "k2")] == ["a2", "m2", "x2", "k2"]
    assert rep(comp, "n2") == "n1"  # negation only flips the sign bit: exact


def test_float_reductions_and_non_associative_reducers_never_merge() -> None:
    comp = computation([
        "z = s32[] constant(0)", "fz = f32[] constant(0)",
        "r1 = s32[] reduce(p0, z), dimensions={0}, to_apply=sub",
        "r2 = s32[] reduce(p0, z), dimensions={0}, to_apply=sub",
        "f1 = f32[] reduce(p1, fz), dimensions={0}, to_apply=fadd",
        "f2 = f32[] reduce(p1, fz), dimensions={0}, to_apply=fadd",
        "g1 = s32[] reduce(p0, z), dimensions={0}, to_apply=add",
        "g2 = s32[] reduce(p0, z), dimensions={0}, to_apply=add2",
        "t = (s32[], s32[], f32[], f32[], s32[], s32[]) tuple(r1, r2, f1, f2, g1, g2)"],
        params=["s32[4]", "f32[4]"], extra=ADD + SUB + ADD_FLIPPED + FADD)
    assert [rep(comp, n) for n in ("r2", "f2")] == ["r2", "f2"]
    assert rep(comp, "g2") == "g1"  # add(a, b) and add(b, a): the same reducer


def test_a_reduction_whose_init_is_not_the_identity_never_merges() -> None:
    """XLA may apply the init value any number of times unless it is the identity."""
    comp = computation([
        "one = s32[] constant(1)",
        "r1 = s32[] reduce(p0, one), dimensions={0}, to_apply=add",
        "r2 = s32[] reduce(p0, one), dimensions={0}, to_apply=add",
        "z = s32[] constant(0)",
        "w1 = s32[4] reduce-window(p0, z), window={size=2 pad=1_0}, to_apply=add",
        "w2 = s32[4] reduce-window(p0, z), window={size=2 pad=1_0}, to_apply=add",
        "w3 = s32[3] reduce-window(p0, z), window={size=2}, to_apply=add",
        "t = (s32[], s32[], s32[4], s32[4], s32[3]) tuple(r1, r2, w1, w2, w3)"],
        extra=ADD)
    assert rep(comp, "r2") == "r2"
    assert rep(comp, "w2") == "w1"
    assert rep(comp, "w3") == "w3"


def test_custom_calls_rng_collectives_and_calls_equal_only_themselves() -> None:
    comp = computation([
        'c1 = s32[4] custom-call(p0), custom_call_target="f"',
        'c2 = s32[4] custom-call(p0), custom_call_target="f"',
        "lo = s32[] constant(0)", "hi = s32[] constant(9)",
        "r1 = s32[4] rng(lo, hi), distribution=rng_uniform",
        "r2 = s32[4] rng(lo, hi), distribution=rng_uniform",
        "s1 = s32[4] all-reduce(p0), replica_groups={}, to_apply=add",
        "s2 = s32[4] all-reduce(p0), replica_groups={}, to_apply=add",
        "k1 = s32[4] call(p0), to_apply=neg", "k2 = s32[4] call(p0), to_apply=neg",
        "t = (s32[4], s32[4], s32[4], s32[4], s32[4], s32[4], s32[4], s32[4]) "
        "tuple(c1, c2, r1, r2, s1, s2, k1, k2)"],
        extra=ADD + "neg {\n  x = s32[4] parameter(0)\n  ROOT n = s32[4] negate(x)\n}\n")
    assert [rep(comp, n) for n in ("c2", "r2", "s2", "k2")] == ["c2", "r2", "s2", "k2"]


def test_see_through_copy_opt_barrier_add_dependency_and_tuples() -> None:
    comp = computation([
        "n = s32[4] negate(p0)", "cp = s32[4] copy(n)",
        "tok = token[] after-all()", "dep = s32[4] add-dependency(n, tok)",
        "t = (s32[4], s32[4]) tuple(p0, n)", "ob = (s32[4], s32[4]) opt-barrier(t)",
        "ob2 = (s32[4], s32[4]) opt-barrier(ob)",
        "g0 = s32[4] get-tuple-element(ob2), index=0",
        "g1 = s32[4] get-tuple-element(ob2), index=1",
        "m1 = s32[4] multiply(g1, g0)", "m2 = s32[4] multiply(n, p0)",
        "out = (s32[4], s32[4], s32[4], s32[4]) tuple(cp, dep, m1, m2)"])
    assert [rep(comp, n) for n in ("cp", "dep", "ob", "ob2", "g0", "g1", "m2")] == \
        ["n", "n", "t", "t", "p0", "n", "m1"]


def test_a_copy_that_changes_the_layout_is_not_its_operand() -> None:
    """A bitcast reads the layout: through a transposing copy it reads other elements."""
    comp = computation([
        "cp = s32[2,2]{0,1} copy(p0)", "b1 = s32[4]{0} bitcast(cp)",
        "b2 = s32[4]{0} bitcast(p0)", "cp2 = s32[2,2]{0,1} copy(p0)",
        "t = (s32[4], s32[4], s32[2,2]) tuple(b1, b2, cp2)"], params=["s32[2,2]{1,0}"])
    assert rep(comp, "cp") == "cp"
    assert rep(comp, "b2") == "b2"
    assert rep(comp, "cp2") == "cp"


def test_integer_arithmetic_only_on_integers() -> None:
    comp = computation([
        "v1 = s32[4] convert(p1)", "v2 = s32[4] convert(p1)",
        "d1 = s32[4] divide(v1, p0)", "d2 = s32[4] divide(v2, p0)",
        "s1 = s32[4] shift-right-logical(d1, p0)", "s2 = s32[4] shift-right-logical(d2, p0)",
        "k1 = s32[4] clamp(p0, s1, p0)", "k2 = s32[4] clamp(p0, s2, p0)",
        "t = (s32[4], s32[4]) tuple(k1, k2)"], params=["s32[4]", "f32[4]"])
    assert rep(comp, "k2") == "k1"


def test_instructions_of_another_computation_are_their_own_representatives() -> None:
    comp = computation(["n1 = s32[4] negate(p0)", "n2 = s32[4] negate(p0)",
                        "t = (s32[4], s32[4]) tuple(n1, n2)"])
    other = computation(["n1 = s32[4] negate(p0)", "n2 = s32[4] negate(p0)",
                         "t = (s32[4], s32[4]) tuple(n1, n2)"])
    stranger = other.instruction("n2")
    assert representative(stranger, comp) is stranger
    assert value_numbering(comp) is value_numbering(comp)  # filled once


# --- random integer index chains, twice ---------------------------------------------------------

#: Edge values of s32 besides random ones.
EDGES = [0, 1, -1, 2, 31, 32, 2**31 - 1, -2**31, -2**31 + 1]
N = 4

UNARY = ("negate", "abs", "not", "popcnt", "clz", "sign")
BINARY = ("add", "subtract", "multiply", "divide", "remainder", "maximum", "minimum", "and",
          "or", "xor", "shift-left", "shift-right-logical", "shift-right-arithmetic")
DIRECTIONS = ("EQ", "NE", "LT", "LE", "GT", "GE")


@st.composite
def chain(draw: Any) -> list[tuple[Any, ...]]:
    """Ops over s32[4] values: ``("param", k)``, ``("const", c)``, ``("unary", op, i)``,
    ``("binary", op, i, j)``, ``("select", direction, i, j, k, l)`` (a compare and a
    select), ``("reverse", i)``, ``("slice", i, start)`` (a slice of two, concatenated with
    another), ``("sum", op, i)`` (a reduce-window over two with pad 1 at the front),
    ``("narrow", i)`` (convert to s8 and back), ``("barrier", i)`` (through a tuple, an
    opt-barrier, a get-tuple-element and a copy); ``i``, ``j``... index earlier ops."""
    ops: list[tuple[Any, ...]] = [("param", 0), ("param", 1)]
    for _ in range(draw(st.integers(1, 6))):
        pick = st.integers(0, len(ops) - 1)
        kind = draw(st.sampled_from(["const", "unary", "binary", "binary", "select",
                                     "reverse", "slice", "sum", "narrow", "barrier"]))
        if kind == "const":
            ops.append(("const", draw(st.sampled_from(EDGES))))
        elif kind == "unary":
            ops.append(("unary", draw(st.sampled_from(UNARY)), draw(pick)))
        elif kind == "binary":
            ops.append(("binary", draw(st.sampled_from(BINARY)), draw(pick), draw(pick)))
        elif kind == "select":
            ops.append(("select", draw(st.sampled_from(DIRECTIONS)), draw(pick), draw(pick),
                        draw(pick), draw(pick)))
        elif kind == "slice":
            ops.append(("slice", draw(pick), draw(st.integers(0, 2)), draw(pick)))
        elif kind == "sum":
            ops.append(("sum", draw(st.sampled_from(["add", "maximum", "xor"])), draw(pick)))
        else:
            ops.append((kind, draw(pick)))
    return ops


def mutated(ops: list[tuple[Any, ...]], draw: Any) -> list[tuple[Any, ...]]:
    """``ops`` with one op after the parameters changed (maybe to an equal one): its
    opcode, constant, direction or slice start, or for a reverse or a narrowing its
    operand."""
    k = draw(st.integers(2, len(ops) - 1))
    op = list(ops[k])
    field, values = {
        "const": (1, st.sampled_from(EDGES)), "unary": (1, st.sampled_from(UNARY)),
        "binary": (1, st.sampled_from(BINARY)), "select": (1, st.sampled_from(DIRECTIONS)),
        "slice": (2, st.integers(0, 2)), "sum": (1, st.sampled_from(["add", "maximum", "xor"])),
    }.get(op[0], (1, st.integers(0, k - 1)))
    op[field] = draw(values)
    return [*ops[:k], tuple(op), *ops[k + 1:]]


REDUCERS = "".join(scalar_computation(f"r_{op}", op, "s32")
                   for op in ("add", "maximum", "xor"))
IDENTITY = {"add": 0, "maximum": -2**31, "xor": 0}


def lines(ops: list[tuple[Any, ...]], tag: str) -> list[str]:
    """The HLO lines of one copy of ``ops`` (instruction ``k`` named ``{tag}{k}``); the
    parameters are shared."""
    def name(k: int) -> str:
        return f"p{ops[k][1]}" if ops[k][0] == "param" else f"{tag}{k}"
    out, v = [], "s32[4]"
    for k, op in enumerate(ops):
        me = name(k)
        if op[0] == "const":
            out.append(f"{me}c = s32[] constant({op[1]})")
            out.append(f"{me} = {v} broadcast({me}c), dimensions={{}}")
        elif op[0] == "unary":
            out.append(f"{me} = {v} {op[1]}({name(op[2])})")
        elif op[0] == "binary":
            out.append(f"{me} = {v} {op[1]}({name(op[2])}, {name(op[3])})")
        elif op[0] == "select":
            out.append(f"{me}p = pred[4] compare({name(op[2])}, {name(op[3])}), "
                       f"direction={op[1]}")
            out.append(f"{me} = {v} select({me}p, {name(op[4])}, {name(op[5])})")
        elif op[0] == "reverse":
            out.append(f"{me} = {v} reverse({name(op[1])}), dimensions={{0}}")
        elif op[0] == "slice":
            out.append(f"{me}s = s32[2] slice({name(op[1])}), slice={{[{op[2]}:{op[2] + 2}]}}")
            out.append(f"{me}t = s32[2] slice({name(op[3])}), slice={{[0:2]}}")
            out.append(f"{me} = {v} concatenate({me}s, {me}t), dimensions={{0}}")
        elif op[0] == "sum":
            out.append(f"{me}i = s32[] constant({IDENTITY[op[1]]})")
            out.append(f"{me} = {v} reduce-window({name(op[2])}, {me}i), "
                       f"window={{size=2 pad=1_0}}, to_apply=r_{op[1]}")
        elif op[0] == "narrow":
            out.append(f"{me}n = s8[4] convert({name(op[1])})")
            out.append(f"{me} = {v} convert({me}n)")
        elif op[0] == "barrier":
            out.append(f"{me}t = ({v}, {v}) tuple(p1, {name(op[1])})")
            out.append(f"{me}b = ({v}, {v}) opt-barrier({me}t)")
            out.append(f"{me}g = {v} get-tuple-element({me}b), index=1")
            out.append(f"{me} = {v} copy({me}g)")
    return out


def evaluate(ops: list[tuple[Any, ...]], args: list[np.ndarray]) -> np.ndarray:
    """``ops`` on s32 arrays by numpy, wrapping as s32 does; XLA's definitions where C's
    differ (division by zero gives -1 and the remainder the dividend; the most negative
    number divided by -1 gives itself; shifts of 32 or more fill with zeros or signs)."""
    vals: list[np.ndarray] = []
    for op in ops:
        if op[0] == "param":
            vals.append(args[op[1]])
        elif op[0] == "const":
            vals.append(np.full(N, op[1], dtype=np.int32))
        elif op[0] == "unary":
            vals.append(_unary(op[1], vals[op[2]]))
        elif op[0] == "binary":
            vals.append(_binary(op[1], vals[op[2]], vals[op[3]]))
        elif op[0] == "select":
            a, b = vals[op[2]], vals[op[3]]
            mask = {"EQ": a == b, "NE": a != b, "LT": a < b, "LE": a <= b, "GT": a > b,
                    "GE": a >= b}[op[1]]
            vals.append(np.where(mask, vals[op[4]], vals[op[5]]))
        elif op[0] == "reverse":
            vals.append(vals[op[1]][::-1].copy())
        elif op[0] == "slice":
            vals.append(np.concatenate([vals[op[1]][op[2]:op[2] + 2], vals[op[3]][0:2]]))
        elif op[0] == "sum":
            x = np.concatenate([np.full(1, IDENTITY[op[1]], dtype=np.int32), vals[op[2]]])
            fn = {"add": np.add, "maximum": np.maximum, "xor": np.bitwise_xor}[op[1]]
            with np.errstate(over="ignore"):
                vals.append(fn(x[:-1], x[1:]).astype(np.int32))
        elif op[0] == "narrow":
            vals.append(vals[op[1]].astype(np.int8).astype(np.int32))
        elif op[0] == "barrier":
            vals.append(vals[op[1]])
    return vals[-1]


def _unary(op: str, x: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore"):
        if op == "negate":
            return (-x.astype(np.int64)).astype(np.int32)
        if op == "abs":
            return np.abs(x.astype(np.int64)).astype(np.int32)
        if op == "not":
            return np.invert(x)
        if op == "sign":
            return np.sign(x).astype(np.int32)
    bits = x.astype(np.int64) & 0xFFFFFFFF
    if op == "popcnt":
        return np.array([bin(int(b)).count("1") for b in bits], dtype=np.int32)
    return np.array([32 - int(b).bit_length() for b in bits], dtype=np.int32)  # clz


def _binary(op: str, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    wide_a, wide_b = a.astype(np.int64), b.astype(np.int64)
    if op in ("add", "subtract", "multiply"):
        fn = {"add": np.add, "subtract": np.subtract, "multiply": np.multiply}[op]
        return (fn(wide_a, wide_b) & 0xFFFFFFFF).astype(np.uint32).astype(np.int32)
    if op in ("divide", "remainder"):
        out = []
        for x, y in zip(wide_a.tolist(), wide_b.tolist(), strict=True):
            if y == 0:
                out.append(-1 if op == "divide" else x)
            elif x == -2**31 and y == -1:
                out.append(x if op == "divide" else 0)
            else:
                q = abs(x) // abs(y) * (1 if (x < 0) == (y < 0) else -1)  # toward zero
                out.append(q if op == "divide" else x - q * y)
        return np.array(out, dtype=np.int64).astype(np.int32)
    if op in ("maximum", "minimum", "and", "or", "xor"):
        bitwise: dict[str, Any] = {"maximum": np.maximum, "minimum": np.minimum,
                                   "and": np.bitwise_and, "or": np.bitwise_or,
                                   "xor": np.bitwise_xor}
        return bitwise[op](a, b)
    unsigned = wide_a & 0xFFFFFFFF
    out = []
    for x, u, s in zip(wide_a.tolist(), unsigned.tolist(), wide_b.tolist(), strict=True):
        if op == "shift-left":
            out.append(0 if not 0 <= s < 32 else (u << s) & 0xFFFFFFFF)
        elif op == "shift-right-logical":
            out.append(0 if not 0 <= s < 32 else u >> s)
        else:
            out.append(x >> (s if 0 <= s < 32 else 31))
    return np.array(out, dtype=np.int64).astype(np.uint32).astype(np.int32)


@settings(max_examples=150)
@given(chain(), st.data())
def test_random_chains_called_equal_compute_equal_arrays(ops, data) -> None:
    twin = mutated(ops, data.draw) if data.draw(st.integers(0, 3)) else ops
    text = lines(ops, "a") + lines(twin, "b")
    roots = [f"a{len(ops) - 1}", f"b{len(twin) - 1}"]  # the last op is never a parameter
    comp = computation([*text, f"t = (s32[4], s32[4]) tuple({roots[0]}, {roots[1]})"],
                       params=["s32[4]", "s32[4]"], extra=REDUCERS)
    assert all(representative(i, comp).shape == i.shape for i in comp.instructions)
    t = comp.root
    same = representative(t.operands[0], comp) is representative(t.operands[1], comp)
    event("equal chains" if twin == ops else
          "one op changed, called equal" if same else "one op changed, called different")
    if twin == ops:
        assert same, "two copies of one chain hold one value"
    if not same:
        return
    rng = np.random.default_rng(len(text))
    for _ in range(20):
        args = [rng.choice(np.array(EDGES + [5, -7, 100], dtype=np.int32), N)
                if rng.random() < 0.5 else rng.integers(-2**31, 2**31, N).astype(np.int32)
                for _ in range(2)]
        assert np.array_equal(evaluate(ops, args), evaluate(twin, args)), (ops, twin, args)
