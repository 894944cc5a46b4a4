"""Regular expressions compiled on first use (``symidx._text.lazy_pattern``): they answer as
compiled patterns do, compile only when used, and every one symidx defines compiles."""

from __future__ import annotations

import copy
import importlib
import pkgutil
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

import symidx
from symidx._text import _LazyPattern, lazy_pattern

#: The extras a module may need to be imported (the test passes over such a module).
EXTRAS = frozenset({"jax", "jaxlib", "matplotlib", "islpy", "z3", "ray", "dask", "tqdm"})


def test_nothing_is_compiled_until_the_pattern_is_used(monkeypatch) -> None:
    compiled: list[str] = []
    real = re.compile
    monkeypatch.setattr(re, "compile", lambda p, f=0: compiled.append(p) or real(p, f))
    pattern = lazy_pattern(r"(\d+)-(\d+)")
    assert compiled == []
    assert pattern.fullmatch("12-34").groups() == ("12", "34")
    assert compiled == [r"(\d+)-(\d+)"]
    pattern.fullmatch("5-6")
    assert compiled == [r"(\d+)-(\d+)"]  # kept: not compiled again


def test_a_bad_pattern_fails_when_first_used() -> None:
    pattern = lazy_pattern(r"(unclosed")
    with pytest.raises(re.error):
        pattern.match("x")


@given(st.text(alphabet="ab1 \n_-", max_size=30))
def test_it_answers_as_the_compiled_pattern(text: str) -> None:
    for source, flags in ((r"a+(b|1)?", 0), (r"^\w+$", re.M), (r"A.", re.I | re.S)):
        lazy, real = lazy_pattern(source, flags), re.compile(source, flags)
        assert lazy.pattern == real.pattern and lazy.flags == real.flags
        assert lazy.groups == real.groups
        assert [m.span() for m in lazy.finditer(text)] == [m.span() for m in real.finditer(text)]
        assert lazy.sub("<\\g<0>>", text) == real.sub("<\\g<0>>", text)
        assert lazy.split(text) == real.split(text)
        assert _span(lazy.match(text, 1)) == _span(real.match(text, 1))
        assert _span(lazy.search(text)) == _span(real.search(text))


def _span(m: re.Match[str] | None) -> tuple[int, int] | None:
    return None if m is None else m.span()


def test_a_copy_is_a_pattern_too() -> None:
    pattern = lazy_pattern(r"x(y)")
    assert copy.copy(pattern).match("xy").group(1) == "y"
    assert copy.deepcopy(pattern).match("xy").group(1) == "y"
    with pytest.raises(AttributeError):
        _ = pattern.no_such_attribute


def _lazy_patterns() -> list[tuple[str, str, _LazyPattern]]:
    """Every lazy pattern of every symidx module, at its top level or in a dict there."""
    found = []
    for info in pkgutil.walk_packages(symidx.__path__, "symidx."):
        try:
            module = importlib.import_module(info.name)
        except ModuleNotFoundError as e:  # a module of an extra not installed here
            assert e.name is not None and e.name.split(".")[0] in EXTRAS, e
            continue
        for name, value in vars(module).items():
            values = value.values() if isinstance(value, dict) else (value,)
            found += [(info.name, name, v) for v in values if isinstance(v, _LazyPattern)]
    return found


def test_every_pattern_symidx_defines_compiles() -> None:
    """A pattern no test happens to use would otherwise hide its error until a user hits it."""
    patterns = _lazy_patterns()
    assert len(patterns) > 80  # the parsers' patterns are found
    for module, name, pattern in patterns:
        assert isinstance(re.compile(*pattern._source), re.Pattern), (module, name)
