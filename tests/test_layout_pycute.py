"""Random differential test of the layout algebra against pycute (NVIDIA cutlass's Python
CuTe, from the ``nvidia-cutlass`` package: ``pip install 'symidx[pycute]'``); skipped
cleanly without it.

For every case, pycute's answer is judged by the operation's defining property
(tests/layout_props.py, a twin written from the definitions). Then:

* where pycute is right, symidx must answer, and with the same layout (0 disagreements,
  0 refusals);
* wherever symidx answers, its answer must have the property (pycute right or not);
* where pycute is wrong or refuses, symidx may refuse or answer (rightly).

Run with ``-s`` to see the tally per operation.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import layout_props as props
import pytest

from symidx.errors import MapError, TooLargeError
from symidx.layout import cute

pycute = pytest.importorskip("pycute")
# PyPI's "pycute" is another project (causal inference on event sequences): NVIDIA's has the
# layout algebra in pycute.layout.
pytest.importorskip("pycute.layout", reason="pycute here is not NVIDIA cutlass's pycute")

CASES = 2000
"""Cases per operation (>= 2,000, as issue 28 asks)."""
SEED = 20240917


# ---------------------------------------------------------------------------------------------
# Random inputs (own generator: small shapes, strides both structured and arbitrary).
# A layout is a P; a tuple is a by-mode tiler (of P, int and None).


@dataclass(frozen=True)
class P:
    shape: Any
    stride: Any

    def __str__(self) -> str:
        return f"{self.shape}:{self.stride}"


def _random_layout(rng: random.Random, max_modes: int = 3, nested: bool = True) -> P:
    n = rng.randint(1, max_modes)
    shapes = [rng.choice([1, 2, 2, 3, 4, 4, 5, 6, 8]) for _ in range(n)]
    if rng.random() < 0.5:  # stacked modes, in a random order, with gaps
        strides = [0] * n
        reach = 1
        for k in rng.sample(range(n), n):
            strides[k] = reach * rng.choice([1, 1, 1, 2, 3])
            reach = strides[k] * shapes[k]
    else:
        strides = [rng.choice([0, 1, 1, 2, 3, 4, 5, 6, 8, 10, 12, 16]) for _ in range(n)]
    if rng.random() < 0.1:
        strides[rng.randrange(n)] = 0
    if n == 1 and rng.random() < 0.5:
        return P(shapes[0], strides[0])
    if nested and n > 1 and rng.random() < 0.35:
        cut = rng.randint(1, n - 1)
        return P((tuple(shapes[:cut]), tuple(shapes[cut:])),
                 (tuple(strides[:cut]), tuple(strides[cut:])))
    return P(tuple(shapes), tuple(strides))


def _random_tiler(rng: random.Random, a: P) -> Any:
    """A layout, an int, or a by-mode tuple of those and None."""
    roll = rng.random()
    if roll < 0.2:
        return rng.choice([1, 2, 3, 4, 6, 8])
    if roll < 0.45:
        k = rng.randint(1, props.rank(a))
        return tuple(rng.choice([None, rng.choice([2, 3, 4]), _random_layout(rng, 2, False)])
                     for _ in range(k))
    return _random_layout(rng, 2)


def _ours(x: Any) -> Any:
    if isinstance(x, P):
        return cute.Layout(x.shape, x.stride)
    return tuple(_ours(t) for t in x) if isinstance(x, tuple) else x


def _theirs(x: Any) -> Any:
    if isinstance(x, P):
        return pycute.Layout(x.shape, x.stride)
    return tuple(_theirs(t) for t in x) if isinstance(x, tuple) else x


def _pycute_complement(b: Any, cotarget: int) -> Any:
    return pycute.complement(pycute.Layout(*props.pair(b)), cotarget)


# ---------------------------------------------------------------------------------------------
# The operations: (make inputs, pycute, symidx, property of a result)

Op = tuple[Callable[[random.Random], tuple[Any, ...]], Callable[..., Any], Callable[..., Any],
           Callable[..., str | None]]


def _one(rng: random.Random) -> tuple[Any, ...]:
    return (_random_layout(rng),)


def _two(rng: random.Random) -> tuple[Any, ...]:
    a = _random_layout(rng)
    return a, _random_tiler(rng, a)


def _with_cotarget(rng: random.Random) -> tuple[Any, ...]:
    a = _random_layout(rng)
    return a, rng.randint(1, 2 * max(props.values(a)) + 2)


def _with_coordinate(rng: random.Random) -> tuple[Any, ...]:
    a = _random_layout(rng)

    def crd(s: Any) -> Any:
        if isinstance(s, tuple):
            return tuple(crd(x) for x in s)
        return None if rng.random() < 0.5 else rng.randrange(s)

    return crd(a.shape), a


def _unary(name: str, prop: Callable[..., str | None]) -> Op:
    return (_one, lambda a: getattr(pycute, name)(_theirs(a)),
            lambda a: getattr(cute, name)(_ours(a)), prop)


def _binary(name: str, make: Callable[[random.Random], tuple[Any, ...]],
            prop: Callable[..., str | None]) -> Op:
    return (make, lambda a, b: getattr(pycute, name)(_theirs(a), _theirs(b)),
            lambda a, b: getattr(cute, name)(_ours(a), _ours(b)), prop)


def _unzipped(kind: str, flavour: str) -> Op:
    """zipped/tiled divide/product: the result, un-gathered back into the logical form, must
    have the logical operation's property."""
    check = props.logical_divide_ok if kind == "divide" else props.logical_product_ok

    def prop(a: P, b: Any, r: Any) -> str | None:
        zipped = r
        if flavour == "tiled":  # pack modes 1.. back into one mode
            rest = [props.mode(r, k) for k in range(1, props.rank(r))]
            packed = isinstance(b, tuple) or len(rest) > 1 or isinstance(props.pair(b)[0], tuple)
            zipped = props.make_layout(props.mode(r, 0),
                                       props.make_layout(*rest) if packed else rest[0])
        logical = props.ungather(zipped, b, a)
        if isinstance(logical, str):
            return logical
        return check(a, b, logical, _pycute_complement)

    return _binary(f"{flavour}_{kind}", _two, prop)


OPS: dict[str, Op] = {
    "coalesce": _unary("coalesce", props.coalesce_ok),
    "filter": _unary("filter", props.filter_ok),
    "right_inverse": _unary("right_inverse", props.right_inverse_ok),
    "left_inverse": _unary("left_inverse", props.left_inverse_ok),
    "composition": _binary("composition", _two, props.composition_ok),
    "complement": (_with_cotarget, lambda a, m: pycute.complement(_theirs(a), m),
                   lambda a, m: cute.complement(_ours(a), m), props.complement_ok),
    "logical_divide": _binary("logical_divide", _two, lambda a, b, r: props.logical_divide_ok(
        a, b, r, _pycute_complement)),
    "logical_product": _binary("logical_product", _two, lambda a, b, r:
                               props.logical_product_ok(a, b, r, _pycute_complement)),
    "slice_and_offset": (_with_coordinate,
                         lambda c, a: pycute.slice_and_offset(c, _theirs(a)),
                         lambda c, a: cute.slice_and_offset(c, _ours(a)),
                         lambda c, a, r: props.slice_ok(a, c, r[0], r[1])),
}
for _kind in ("divide", "product"):
    for _flavour in ("zipped", "tiled"):
        OPS[f"{_flavour}_{_kind}"] = _unzipped(_kind, _flavour)


def _swizzle_args(rng: random.Random) -> tuple[Any, ...]:
    bits = rng.randint(1, 3)  # pycute 4.2 recurses forever on bits == 0 or shift == 0
    shift = rng.choice([-1, 1]) * rng.randint(bits, bits + 2)
    return bits, rng.randint(0, 3), shift, rng.randrange(1 << 12)


def _swizzle_ok(bits: int, base: int, shift: int, x: int, r: int) -> str | None:
    """Sw<B,M,S>: bits [M + max(0,S), +B) XOR-ed into bits [M - min(0,S), +B)."""
    yyy = ((1 << bits) - 1) << (base + max(0, shift))
    moved = (x & yyy) >> shift if shift >= 0 else (x & yyy) << -shift
    return None if r == x ^ moved else f"{r} != {x ^ moved}"


def _map_of_pycute(a: P) -> Any:
    """symidx's indexing map of the pycute object itself, at every point (as pycute's
    ``layout(i)`` numbers them: colexicographic over the top-level modes)."""
    from symidx.layout.maps import cute_map

    theirs = pycute.Layout(a.shape, a.stride)
    m = cute_map(theirs)
    sizes = [props.size(props.mode(a, k)) for k in range(props.rank(a))]
    out = []
    for i in range(props.size(a)):
        point, rest = [], i
        for n in sizes:
            point.append(rest % n)
            rest //= n
        out.append(m.evaluate(tuple(point))[0])
    return tuple(out)


OPS["swizzle"] = (_swizzle_args, lambda b, m, s, x: pycute.Swizzle(b, m, s)(x),
                  lambda b, m, s, x: cute.Swizzle(b, m, s)(x), _swizzle_ok)
OPS["cute_map(pycute.Layout)"] = (
    lambda rng: (_random_layout(rng),),
    lambda a: tuple(pycute.Layout(a.shape, a.stride)(i) for i in range(props.size(a))),
    _map_of_pycute,
    lambda a, r: None if list(r) == props.values(a) else "values differ")


def _run(op: Op, rng: random.Random) -> Counter[str]:
    make, theirs, ours, prop = op
    tally: Counter[str] = Counter()
    for _ in range(CASES):
        args = make(rng)
        try:
            want = theirs(*args)
        except (AssertionError, ZeroDivisionError, RecursionError, TypeError, IndexError,
                ValueError):
            want = None
        pycute_right = want is not None and _safe(prop, *args, want) is None
        try:
            got = ours(*args)
        except (MapError, TooLargeError):
            got = None
        if got is not None:
            why = _safe(prop, *args, got)
            if why is not None:
                tally["symidx wrong"] += 1
                tally.setdefault("first symidx wrong", (args, str(got), why))  # type: ignore
                continue
        if not pycute_right:
            tally["pycute refuses" if want is None else "pycute wrong"] += 1
            if got is not None:
                tally["symidx right where pycute is not"] += 1
            continue
        if got is None:
            tally["refused where pycute is right"] += 1
            tally.setdefault("first refusal", (args, str(want)))  # type: ignore
        elif _key(got) != _key(want):
            tally["disagree"] += 1
            tally.setdefault("first disagreement", (args, str(got), str(want)))  # type: ignore
        else:
            tally["agree"] += 1
    return tally


def _key(result: Any) -> Any:
    """What is compared: shape and stride; pycute's empty slice ``():()`` is CuTe's empty
    layout, which symidx spells ``1:0`` (a layout has at least one mode)."""
    if isinstance(result, tuple):
        return tuple(_key(r) for r in result)
    if isinstance(result, int):
        return result
    return (1, 0) if props.pair(result) == ((), ()) else props.pair(result)


def _safe(prop: Callable[..., str | None], *args: Any) -> str | None:
    try:
        return prop(*args)
    except (TypeError, IndexError, ValueError, ZeroDivisionError, AttributeError,
            RecursionError, AssertionError) as e:
        return f"malformed result ({type(e).__name__})"


@pytest.mark.parametrize("name", sorted(OPS))
def test_differential_against_pycute(name: str) -> None:
    tally = _run(OPS[name], random.Random(f"{SEED}-{name}"))
    print(f"\n{name}: " + ", ".join(f"{k}: {v}" for k, v in sorted(tally.items())
                                    if not k.startswith("first")))
    assert tally["symidx wrong"] == 0, tally.get("first symidx wrong")
    assert tally["refused where pycute is right"] == 0, tally.get("first refusal")
    assert tally["disagree"] == 0, tally.get("first disagreement")
    assert tally["agree"] > CASES // 4
