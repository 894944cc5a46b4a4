"""pycute's own unit-test cases (NVIDIA cutlass ``test/python/pycute/*.py``), as data, each
checked with the operation's defining property (tests/layout_props.py) -- and, where pycute's
test states a value, that value. Runs without pycute.

pycute 4.2 (``nvidia-cutlass`` 4.2.0.0) fails two of its newer cases, which symidx passes:
an int tiler of ``logical_product`` (pycute computes a divide) and the zero-shift swizzle
``Swizzle(0, 4, 0)`` (pycute recurses forever).
"""

from __future__ import annotations

import layout_props as props
import pytest

from symidx.layout import cute
from symidx.layout.cute import Layout, Swizzle

L = Layout


def col(shape: object) -> Layout:
    """pycute's ``Layout(shape)``: compact column-major strides."""
    return cute.compact_col_major(shape)  # type: ignore[arg-type]


# test_int_tuple.py


def test_product() -> None:
    assert cute.product(2) == 2
    assert cute.product((3, 2)) == 6
    assert cute.product(((2, 3), 4)) == 24


def test_inner_product() -> None:
    assert cute.inner_product(2, 3) == 6
    assert cute.inner_product((1, 2), (3, 2)) == 7
    assert cute.inner_product(((2, 3), 4), ((2, 1), 2)) == 15


@pytest.mark.parametrize(("a", "b", "want"), [
    ((3, 4), 6, (1, 2)),
    ((3, 4), 12, (1, 1)),
    ((3, 4), 36, (1, 1)),
    (((3, 4), 6), 36, ((1, 1), 2)),
    ((6, (3, 4)), 36, (1, (1, 2))),
])
def test_shape_div(a: object, b: int, want: object) -> None:
    assert cute.shape_div(a, b) == want  # type: ignore[arg-type]


@pytest.mark.parametrize(("a", "want"), [
    (2, 1),
    ((3, 2), (1, 3)),
    ((3, 2, 4), (1, 3, 6)),
    (((2, 3), 4), ((1, 2), 6)),
    (((2, 3), (2, 1, 2), (5, 2, 1)), ((1, 2), (6, 12, 12), (24, 120, 240))),
])
def test_prefix_product(a: object, want: object) -> None:
    assert cute.prefix_product(a) == want  # type: ignore[arg-type]


# test_coalesce.py

COALESCE = [L(1, 0), L(1, 1), col((2, 4)), col((2, 4, 6)), L((2, 4, 6), (1, 6, 2)),
            L((2, 1, 6), (1, 7, 2)), L((2, 1, 6), (4, 7, 8)), col((2, (4, 6))),
            L((2, 4), (4, 1)), L((2, 4, 6), (24, 6, 1)), L((2, 1, 3), (2, 4, 4)),
            L(((2, 2), (2, 2)), ((1, 4), (8, 32)))]


@pytest.mark.parametrize("layout", COALESCE, ids=str)
def test_coalesce(layout: Layout) -> None:
    assert props.coalesce_ok(layout, cute.coalesce(layout)) is None


# test_composition.py

COMPOSITION = [
    (L(1, 0), L(1, 0)), (L(1, 0), L(1, 1)), (L(1, 1), L(1, 0)), (L(1, 1), L(1, 1)),
    (col(4), col(4)), (L(4, 2), col(4)), (col(4), L(4, 2)), (L(4, 0), col(4)),
    (col(4), L(4, 0)), (L(1, 0), col(4)), (col(4), L(1, 0)), (col(4), col(2)),
    (L(4, 2), col(2)), (col(4), L(2, 2)), (L(4, 2), L(2, 2)), (col(12), col((4, 3))),
    (L(12, 2), col((4, 3))), (col(12), L((4, 3), (3, 1))), (L(12, 2), L((4, 3), (3, 1))),
    (col(12), L((2, 3), (2, 4))), (col((4, 3)), col((4, 3))), (col((4, 3)), col(12)),
    (col((4, 3)), L(6, 2)), (col((4, 3)), L((6, 2), (2, 1))), (L((4, 3), (3, 1)), col((4, 3))),
    (L((4, 3), (3, 1)), col(12)), (L((4, 3), (3, 1)), L(6, 2)),
    (L((4, 3), (3, 1)), L((6, 2), (2, 1))),
    (col((8, 8)), L(((2, 2, 2), (2, 2, 2)), ((1, 16, 4), (8, 2, 32)))),
    (L((8, 8), (8, 1)), L(((2, 2, 2), (2, 2, 2)), ((1, 16, 4), (8, 2, 32)))),
    (L(((2, 2, 2), (2, 2, 2)), ((1, 16, 4), (8, 2, 32))), L(8, 4)),
    (L((4, 2), (1, 16)), L((4, 2), (2, 1))),
    (L((2, 2), (2, 1)), L((2, 2), (2, 1))),
    (col((4, 8, 2)), L((2, 2, 2), (2, 8, 1))),
    (L((4, 8, 2), (2, 8, 1)), L((2, 2, 2), (1, 8, 2))),
    (L((4, 8, 2), (2, 8, 1)), L((4, 2, 2), (2, 8, 1))),
    (L((4, 6, 8), (1, 4, 7)), L(6, 1)),                 # pre-coalesced left side
    (L((4, 6, 8, 10), (2, 3, 5, 7)), L(6, 12)),         # mid-layout truncation
]

@pytest.mark.parametrize(("a", "b"), COMPOSITION, ids=lambda x: str(x))
def test_composition(a: Layout, b: Layout) -> None:
    assert props.composition_ok(a, b, cute.composition(a, b)) is None


# test_complement.py

COMPLEMENT = [L(1, 0), L(1, 1), L(4, 0), L((2, 4), (1, 2)), L((2, 3), (1, 2)),
              L((2, 4), (1, 4)), L((2, 4, 8), (8, 1, 64)), L(((2, 2), (2, 2)), ((1, 4), (8, 32))),
              L((2, (3, 4)), (3, (1, 6))), L((4, 6), (1, 6)), L((4, 10), (1, 10))]


@pytest.mark.parametrize("layout", COMPLEMENT, ids=str)
def test_complement(layout: Layout) -> None:
    r = cute.complement(layout)
    assert props.complement_ok(layout, 1, r) is None


def test_complement_of_non_divisible_strides_is_cutes() -> None:
    assert str(cute.complement(L((4, 6), (1, 6)))) == "1:0"
    assert str(cute.complement(L((4, 10), (1, 10)))) == "2:4"


# test_left_inverse.py, test_right_inverse.py

LEFT = [L(1, 0), L((1, 1), (0, 0)), L(1, 1), L(4, 1), L(4, 2), L((8, 4), (1, 8)),
        L((8, 4), (4, 1)), L((2, 4, 6), (1, 2, 8)), L((2, 4, 6), (4, 1, 8)), L((4, 2), (1, 16))]
RIGHT = [L(1, 0), L((1, 1), (0, 0)), L((3, 7), (0, 0)), L(1, 1), L(4, 0), L(4, 1), L(4, 2),
         L((2, 4), (0, 2)), L((8, 4), (1, 8)), L((8, 4), (4, 1)), L((2, 4, 6), (1, 2, 8)),
         L((2, 4, 6), (4, 1, 8)), L((4, 2), (1, 16))]


@pytest.mark.parametrize("layout", LEFT, ids=str)
def test_left_inverse(layout: Layout) -> None:
    assert props.left_inverse_ok(layout, cute.left_inverse(layout)) is None


@pytest.mark.parametrize("layout", RIGHT, ids=str)
def test_right_inverse(layout: Layout) -> None:
    assert props.right_inverse_ok(layout, cute.right_inverse(layout)) is None


# test_logical_product.py, test_product.py


def _product_ok(a: Layout, b: object, r: Layout) -> None:
    assert cute.rank(r) == 2 and r[0] == a
    assert cute.size(r[1]) == cute.size(b if isinstance(b, int) else b)  # type: ignore[arg-type]
    assert props.logical_product_ok(a, b, r, cute.complement) is None


@pytest.mark.parametrize(("a", "b"), [
    (L(1, 0), L(1, 0)), (L(1, 1), L(1, 0)), (L(1, 0), L(1, 1)), (L(1, 1), L(1, 1)),
    (L(3, 1), L(4, 0)), (L(3, 0), L(4, 1)), (L(3, 0), L(4, 0)), (L(3, 2), L(4, 1)),
    (col(3), col((2, 4))), (L((2, 5), (5, 1)), 4), (L(3, 2), 4), (col(4), 3),
    (col((4, 8)), 16), (L(((2, 2), (2, 2)), ((1, 4), (8, 32))), 4),
])
def test_logical_product(a: Layout, b: object) -> None:
    _product_ok(a, b, cute.logical_product(a, b))  # type: ignore[arg-type]


def test_logical_product_stated_values() -> None:
    a = L((2, 5), (5, 1))
    # pycute 4.2 (nvidia-cutlass 4.2.0.0) computes logical_divide for an int tiler; its
    # newer test states the product, and an int n must mean n:1, as in CuTe's C++.
    assert cute.logical_product(a, 4) == L(((2, 5), 4), ((5, 1), 10))
    assert cute.logical_product(a, 4) == cute.logical_product(a, col(4))
    assert cute.logical_product(a, (4, 2)) == cute.make_layout(
        cute.logical_product(a[0], col(4)), cute.logical_product(a[1], col(2)))
    assert cute.logical_product(a, None) is a
    assert cute.zipped_product(a, 4) == cute.zipped_product(a, col(4))
    assert cute.tiled_product(a, 4) == cute.tiled_product(a, col(4))
    assert cute.size(cute.zipped_product(a, 4)) == cute.size(cute.tiled_product(a, 4)) == 40


# test_swizzle.py (the expected tables were cross-checked against C++ cute::Swizzle)

PROBE = [0, 1, 2, 7, 8, 9, 15, 16, 63, 64, 255, 256]


@pytest.mark.parametrize(("sw", "want"), [
    (Swizzle(2, 3, -3), [0, 1, 2, 7, 72, 73, 79, 144, 255, 64, 63, 256]),
    (Swizzle(1, 0, 1), [0, 1, 3, 6, 8, 9, 14, 16, 62, 64, 254, 256]),
    (Swizzle(3, 2, 3), [0, 1, 2, 7, 8, 9, 15, 16, 59, 72, 227, 256]),
    (Swizzle(2, 1, -2), [0, 1, 10, 31, 8, 9, 23, 16, 39, 64, 231, 256]),
])
def test_swizzle_tables(sw: Swizzle, want: list[int]) -> None:
    assert [sw(x) for x in PROBE] == want


@pytest.mark.parametrize("sw", [Swizzle(0, 4, 0), Swizzle(2, 3, -3), Swizzle(1, 0, 1),
                                Swizzle(3, 2, 3), Swizzle(2, 1, -2)], ids=str)
def test_swizzle_is_an_involution(sw: Swizzle) -> None:
    # Swizzle(0, 4, 0) is legal C++; pycute 4.2 recurses forever on a zero shift.
    assert all(sw(sw(x)) == x for x in range(sw.size()))
    assert sorted(sw(x) for x in range(sw.size())) == list(range(sw.size()))


# test_typing.py: pycute's Integer is int and its subclasses, bool excluded


@pytest.mark.parametrize(("cls", "obj", "want"), [
    (int, 1, True), (float, 1.0, False), (str, "hi", False), (bool, False, False),
])
def test_integer_typing(cls: type, obj: object, want: bool) -> None:
    assert issubclass(cls, cute.Integer) is want
    assert isinstance(obj, cute.Integer) is want


# pycute's spellings: Layout(shape) is compact column-major; make_layout of layouts


def test_pycute_spellings() -> None:
    assert L(4) == L(4, 1) and L((4, 3)) == L((4, 3), (1, 4))
    assert L(((2, 3), 4)).stride == ((1, 2), 6)
    assert cute.logical_product(L((2, 5), (5, 1)), 4) == cute.logical_product(
        L((2, 5), (5, 1)), L(4))
    r = cute.make_layout(L(4), L(2, 8))
    assert r == L((4, 2), (1, 8)) and len(r) == 2
