"""Constructing layouts the ways kernel authors spell them: the CuTe DSL's
``make_layout(shape, stride=...)``, pycute objects (read by attribute, so a stand-in object
checks it without pycute; the real pycute when installed), and basis strides ``E(i)``
(CuTe's identity layouts), each checked against a definition written here."""

from __future__ import annotations

import itertools
import math

import pytest

from symidx.errors import MapError
from symidx.layout import cute
from symidx.layout.cute import E, Layout
from symidx.layout.maps import cute_map


def colex(shape: tuple[int, ...], i: int) -> tuple[int, ...]:
    out = []
    for s in shape:
        out.append(i % s)
        i //= s
    return tuple(out)


def test_make_layout_dsl_spelling() -> None:
    a = cute.make_layout((4, 2), stride=(1, 4))
    assert (a.shape, a.stride) == ((4, 2), (1, 4))
    assert [a(i) for i in range(8)] == list(range(8))
    b = cute.make_layout((4, 2), stride=(2, 1))
    assert [b(r, c) for r in range(4) for c in range(2)] == list(range(8))
    assert cute.make_layout((3, 5)) == Layout((3, 5), (1, 3))
    with pytest.raises(MapError, match="stride= goes with a shape"):
        cute.make_layout(Layout(4), stride=2)
    with pytest.raises(MapError, match="one shape"):
        cute.make_layout((4, 2), (1, 4))  # CuTe DSL takes stride only as a keyword


class FakePycuteLayout:
    """Has what pycute's Layout has: .shape, .stride (lists are accepted too)."""

    def __init__(self, shape: object, stride: object) -> None:
        self.shape, self.stride = shape, stride


class FakeSwizzle:
    def __init__(self, bits: int, base: int, shift: int) -> None:
        self.bits, self.base, self.shift = bits, base, shift


class FakeComposed:
    def __init__(self, b: object, offset: int, a: object) -> None:
        self.layoutB, self.offset, self.layoutA = b, offset, a


def test_map_from_a_foreign_layout_object() -> None:
    m = cute_map(FakePycuteLayout((4, [2, 3]), (3, [1, 12])))
    for r, c in itertools.product(range(4), range(6)):
        c0, c1 = c % 2, c // 2
        assert m.evaluate((r, c)) == (3 * r + c0 + 12 * c1,)


def test_map_from_a_foreign_swizzled_layout() -> None:
    m = cute_map(FakeComposed(FakeSwizzle(2, 0, 2), 0, FakePycuteLayout((4, 4), (4, 1))))
    for r, c in itertools.product(range(4), range(4)):
        want = r * 4 + (c ^ r)  # Sw<2,0,2>: bits 2-3 (the row) XOR-ed into bits 0-1
        assert m.evaluate((r, c)) == (want,)


def test_foreign_objects_that_are_not_layouts() -> None:
    with pytest.raises(MapError, match="cannot read a layout"):
        cute.as_layout(object())
    with pytest.raises(MapError, match="not a static int"):
        cute.as_layout(FakePycuteLayout((4, "n"), (1, 4)))
    with pytest.raises(MapError, match="is a swizzle"):
        cute_map(FakeSwizzle(1, 0, 1))


def test_map_from_real_pycute() -> None:
    pycute = pytest.importorskip("pycute")
    a = pycute.Layout(((2, 2), (4, 2)), ((1, 16), (2, 32)))
    m = cute_map(a)
    for r, c in itertools.product(range(4), range(8)):
        assert m.evaluate((r, c)) == (a((r, c)),)
    sw = pycute.ComposedLayout(pycute.Swizzle(3, 4, 3), 0, pycute.Layout((8, 64), (64, 1)))
    ms = cute_map(sw)
    assert all(ms.evaluate((r, c)) == (sw((r, c)),) for r in range(8) for c in range(0, 64, 7))


# ---------------------------------------------------------------------------------------------
# Basis strides


@pytest.mark.parametrize("shape", [(4, 2), (3, 5), (2, 3, 4)])
def test_identity_layout_maps_every_coordinate_to_itself(shape: tuple[int, ...]) -> None:
    ident = cute.make_identity_layout(shape)
    for i in range(math.prod(shape)):
        assert tuple(ident(i)) == colex(shape, i)


def test_basis_strides_scale_and_sum() -> None:
    a = Layout((4, 2, 3), (2 * E(0), E(1), 3 * E(1)))
    for i, j, k in itertools.product(range(4), range(2), range(3)):
        assert tuple(a(i, j, k)) == (2 * i, j + 3 * k)
    assert str(a) == "(4,2,3):(2@0,1@1,3@1)"
    assert str(cute.make_identity_layout((2, (3, 4)))) == "(2,(3,4)):(1@0,(1@0@1,1@1@1))"


@pytest.mark.parametrize("b", [Layout((4, 2), (1, 8)), Layout((4, 2), (2, 1)),
                               Layout((2, 2, 2), (8, 1, 2)), Layout(8, 4)])
def test_identity_composed_with_a_layout_gives_its_coordinates(b: Layout) -> None:
    """CuTe's way to get the coordinates a partition touches: identity o B."""
    shape = (8, 4)
    r = cute.composition(cute.make_identity_layout(shape), b)
    for i in range(cute.size(b)):
        got = tuple(r(i)) + (0,) * (2 - len(r(i)))
        assert got == colex(shape, b(i))


def test_basis_layout_as_a_map_has_one_result_per_mode() -> None:
    m = cute_map(Layout((4, 6), (E(1), 2 * E(0))))
    for i, j in itertools.product(range(4), range(6)):
        assert m.evaluate((i, j)) == (2 * j, i)


def test_basis_strides_refused_where_offsets_are_needed() -> None:
    ident = cute.make_identity_layout((4, 2))
    for op in (cute.complement, cute.right_inverse, cute.left_inverse, cute.cosize):
        with pytest.raises(MapError, match="basis strides"):
            op(ident)
    with pytest.raises(MapError, match="may also have stride 0"):
        Layout((4, 2), (E(0), 4))
