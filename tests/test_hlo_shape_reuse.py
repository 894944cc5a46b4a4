"""The reader reuses a shape read once for the same text later (issue 25, parse speed): the
reused shape must be the one the full reader gives in the new place."""

from __future__ import annotations

from symidx.hlo import parse_hlo
from symidx.hlo.shape import Shape, TupleShape

MODULE = """HloModule m

ENTRY %main (p: f32[2,3], q: f32[2,3]{0,1}) -> (f32[2,3], /*index=1*/s32[]) {
  %p = f32[2,3] parameter(0)
  %q = f32[2,3]{0,1} parameter(1)
  %a = f32[2,3] {1,0} add(f32[2,3] %p, %p)
  %b = f32[2,3]{0,1} copy(%a)
  %c = s32[] constant(1)
  %t = (f32[2,3], /*index=1*/s32[]) tuple(%a, %c)
  ROOT %u = (f32[2,3], s32[]) tuple(%a, %c)
}
"""


def test_a_known_shape_text_followed_by_a_layout_is_read_with_the_layout() -> None:
    comp = parse_hlo(MODULE).entry
    shapes = {i.name: i.shape for i in comp.instructions}
    assert isinstance(shapes["p"], Shape) and shapes["p"].layout is None
    a = shapes["a"]
    assert isinstance(a, Shape) and a.layout is not None and a.layout.minor_to_major == (1, 0)
    b = shapes["b"]
    assert isinstance(b, Shape) and b.layout is not None and b.layout.minor_to_major == (0, 1)
    assert shapes["q"] is b  # the same text: one shape, shared


def test_tuples_with_comments_are_read_as_without() -> None:
    comp = parse_hlo(MODULE).entry
    shapes = {i.name: i.shape for i in comp.instructions}
    for name in ("t", "u"):
        tup = shapes[name]
        assert isinstance(tup, TupleShape)
        assert [e.element_type for e in tup.elements] == ["f32", "s32"]  # type: ignore[union-attr]
        assert [e.dims for e in tup.elements] == [(2, 3), ()]  # type: ignore[union-attr]


def test_a_scalar_result_before_the_body_and_an_empty_layout() -> None:
    text = ("HloModule m\n\n%r (x: f32[], y: f32[]) -> f32[] {\n  %x = f32[] parameter(0)\n"
            "  %y = f32[] parameter(1)\n  ROOT %s = f32[]{} add(%x, %y)\n}\n\n"
            "ENTRY %e (a: f32[4]) -> f32[] {\n  %a = f32[4]{0} parameter(0)\n"
            "  %z = f32[] constant(0)\n  ROOT %r = f32[] reduce(%a, %z), dimensions={0}, "
            "to_apply=%r\n}\n")
    module = parse_hlo(text)
    s = module.computations["r"].root.shape
    assert isinstance(s, Shape) and s.dims == () and s.layout is not None
    assert s.layout.minor_to_major == ()
    plain = module.entry.root.shape
    assert isinstance(plain, Shape) and plain.dims == () and plain.layout is None
