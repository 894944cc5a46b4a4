"""symidx.hlo.fold: the integer values an instruction holds whatever the run."""

from __future__ import annotations

import numpy as np

from symidx.hlo import parse_hlo
from symidx.hlo.fold import LIMIT, integer_values


def root_of(body: str):
    return parse_hlo("HloModule m\nENTRY e {\n" + body + "\n}\n").entry.root


def test_moves_of_a_constant_table() -> None:
    r = root_of("""  c = s32[2,3] constant({{1, 2, 3}, {4, 5, 6}})
  t = s32[3,2] transpose(c), dimensions={1,0}
  s = s32[2,2] slice(t), slice={[1:3], [0:2]}
  v = s32[2,2] reverse(s), dimensions={0}
  b = s32[2,2,2] broadcast(v), dimensions={1,2}
  k = s32[2,2,1] constant({{{7}, {8}}, {{9}, {0}}})
  ROOT cat = s32[2,2,3] concatenate(b, k), dimensions={2}""")
    values = integer_values(r)
    assert values is not None
    table = np.array([[1, 2, 3], [4, 5, 6]]).T[1:3][::-1]
    expected = np.concatenate([np.broadcast_to(table, (2, 2, 2)),
                               np.array([[[7], [8]], [[9], [0]]])], axis=2)
    assert values.tolist() == expected.tolist()


def test_arithmetic_wraps_at_the_element_width() -> None:
    r = root_of("""  a = s8[2] constant({100, -100})
  ROOT s = s8[2] add(a, a)""")
    assert integer_values(r).tolist() == [-56, 56]  # 200 and -200 wrapped to 8 bits
    r = root_of("""  a = u8[2] constant({3, 250})
  b = u8[2] constant({5, 10})
  ROOT s = u8[2] subtract(a, b)""")
    assert integer_values(r).tolist() == [254, 240]


def test_predicates_select_and_clamp() -> None:
    r = root_of("""  i = s32[4] iota(), iota_dimension=0
  two = s32[] constant(2)
  t = s32[4] broadcast(two), dimensions={}
  lt = pred[4] compare(i, t), direction=LT
  n = s32[4] negate(i)
  s = s32[4] select(lt, n, i)
  lo = s32[] constant(-1)
  hi = s32[] constant(2)
  ROOT c = s32[4] clamp(lo, s, hi)""")
    assert integer_values(r).tolist() == [0, -1, 2, 2]


def test_unknown_values() -> None:
    assert integer_values(root_of("""  p = s32[3] parameter(0)
  ROOT n = s32[3] negate(p)""")) is None
    assert integer_values(root_of("""  f = f32[] constant(1.5)
  ROOT c = s32[] convert(f)""")) is None
    assert integer_values(root_of("""  a = s32[2] constant({7, 2})
  ROOT d = s32[2] divide(a, a)""")) is None
    big = LIMIT + 1
    assert integer_values(root_of(f"  ROOT i = s32[{big}] iota(), iota_dimension=0")) is None
