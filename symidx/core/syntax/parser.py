"""Indexing-map text, read: one hand-written parser.

It accepts every spelling XLA has used (see ``docs/text-format.md``)::

    (d0, d1)[s0]{rt0} -> (d0 floordiv 8 + s0, 16d1 - rt0),
    domain:
    d0 in [0, 31], d1 in [0, 7], s0 in [0, 3], rt0 in [0, 4],
    d0 mod 2 in [0, 0]

It never evaluates text: a tokenizer and an operator-precedence parser with an explicit
stack build sympy objects directly. Unary minus binds tightest (as in MLIR and Python), so
``-a floordiv b`` is ``(-a) floordiv b``. Errors are :class:`~symidx.errors.ParseError`
with the line and column. The printers that write this text are on the floor below, with
the maps (:mod:`symidx.core.indexing_map.text`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, cast

from sympy import Mul, Symbol

from symidx._text import lazy_pattern
from symidx.core.expr import (
    CeilDiv,
    Expr,
    FloorDiv,
    Mod,
    add,
    dim,
    integer,
    max_of,
    min_of,
    rt,
    scale,
    sym,
)
from symidx.core.indexing_map import IndexingMap, RuntimeVar, ValueSource
from symidx.core.interval import Interval
from symidx.core.syntax.tokens import PlainToken, TokenCursor, describe
from symidx.errors import MapError, ParseError

__all__ = ["parse_map", "parse_expr", "MAX_DEPTH"]

MAX_DEPTH = 200  # deepest expression tree accepted (keeps every recursive walk safe)

# =========================================================================== tokenizer
# Whitespace separates tokens and is skipped; any other character no token starts with is
# a "bad" token, an error only when the parser reaches it (text read raw, after ``hlo:``,
# may hold such characters).
_TOKEN = lazy_pattern(r"""
    (?P<int>[0-9]+)
  | (?P<ident>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<punct>->|[()\[\]{},:;+\-*/<>])
  | (?P<bad>[^ \t\r\n])
""", re.VERBOSE)
#: A character that makes a "bad" token (none: every token is read without a check).
_BAD = lazy_pattern(r"[^ \t\r\n0-9A-Za-z_()\[\]{},:;+\-*/<>]")

_DIV_KEYWORDS = {"floordiv": "floordiv", "floorDiv": "floordiv", "ceildiv": "ceildiv",
                 "ceilDiv": "ceildiv", "mod": "mod"}
_RESERVED = set(_DIV_KEYWORDS) | {"in", "min", "max", "domain"}
_SPECIAL = lazy_pattern(r"\s*(KNOWN\s+EMPTY|UNDEFINED)\s*\Z")
_DEFAULT_NAME = lazy_pattern(r"(d|s|rt)[0-9]+")


class _Lexer(TokenCursor[PlainToken]):
    """The text's tokens, read in one pass, as plain tuples ``(kind, value, offset)``
    (made faster than named ones); the parser can also take raw text (``hlo:`` lines,
    :meth:`raw_until`)."""

    def __init__(self, text: str, source: str = "", end: int | None = None):
        """``end``: tokens of the text up to there only (at a token boundary), the end of
        text there."""
        self.text = text
        self.source = source
        end = len(text) if end is None else end
        # every match is of one named group: ``lastgroup`` is never None
        self.tokens = cast("list[PlainToken]", [(m.lastgroup, m[0], m.start())
                                                for m in _TOKEN.finditer(text, 0, end)])
        self.tokens.append(("eof", "", end))
        self.last = len(self.tokens) - 1
        self.index = 0
        self._clear_to = self.last if _BAD.search(text, 0, end) is None \
            else self._clear_from(0)

    def _clear_from(self, i: int) -> int:
        """The index of the first bad token (or the end) at or after ``i``: the tokens
        before it are read without a check."""
        tokens, last = self.tokens, self.last
        while i < last and tokens[i][0] != "bad":
            i += 1
        return i

    def error(self, message: str, offset: int) -> ParseError:
        return ParseError(message, self.text, offset, source=self.source)

    def peek(self, k: int = 0) -> PlainToken:
        i = self.index + k
        if i < self._clear_to:
            return self.tokens[i]
        for j in range(self.index, min(i, self.last) + 1):
            tok = self.tokens[j]
            if tok[0] == "bad":
                raise self.error(f"unexpected character {tok[1]!r}", tok[2])
        return tok

    def next(self) -> PlainToken:
        i = self.index
        if i < self._clear_to:
            self.index = i + 1
            return self.tokens[i]
        tok = self.peek()
        if i < self.last:
            self.index = i + 1
        return tok

    def raw_until(self, stops: str) -> tuple[str, int]:
        """The raw text from the end of the last token read up to (not including) a stop
        character (stripped), and where it starts; the tokens resume after it."""
        prev = self.tokens[self.index - 1] if self.index else None
        start = prev[2] + len(prev[1]) if prev is not None else 0
        end = start
        text = self.text
        while end < len(text) and text[end] not in stops:
            end += 1
        i = self.index
        while self.tokens[i][2] < end:
            i += 1
        self.index = i
        self._clear_to = self._clear_from(i)
        return text[start:end].strip(), start


# =========================================================================== expressions
# A parsed expression is first a small tree of tuples (so sums of any length are built in
# one sympy call), then converted. Node: (kind, offset, depth, payload, children).
# Precedences: unary signs 9, then * floordiv ceildiv mod (and a juxtaposed coefficient) 2,
# then + and - 1.


def _negated(node: tuple[Any, ...], offset: int) -> tuple[Any, ...]:
    """``-node``, written at ``offset``: a negated integer is an integer (as the sympy
    expression is), at the depth and offset of its negation."""
    if node[0] == "int":
        return ("int", offset, node[2] + 1, -node[3], ())
    return ("neg", offset, node[2] + 1, None, (node,))


class _ExprParser:
    """Operator-precedence parsing with explicit stacks: no recursion on nesting."""

    def __init__(self, lexer: _Lexer):
        self.lx = lexer

    def parse(self) -> tuple[Any, ...]:
        lx = self.lx
        tokens = lx.tokens
        clear_to = lx._clear_to  # tokens before it are read directly (else: peek, checked)
        operands: list[tuple[Any, ...]] = []
        # operator stack entries: (op, prec, offset, payload); "(" and calls are barriers,
        # the only entries of precedence 0 (so no operator is applied across one)
        ops: list[tuple[str, int, int, Any]] = []
        barriers: list[str] = []  # the barriers' kinds on ``ops``, innermost last
        apply = self._apply
        expect_operand = True
        while True:
            i = lx.index
            kind, value, offset = tokens[i] if i < clear_to else lx.peek()
            if expect_operand:
                if kind == "punct":
                    if value == "-" or value == "+":
                        lx.index = i + 1
                        ops.append(("neg" if value == "-" else "pos", 9, offset, None))
                        continue
                    if value == "(":
                        lx.index = i + 1
                        ops.append(("(", 0, offset, None))
                        barriers.append("(")
                        continue
                elif kind == "int":
                    lx.index = i + 1
                    number = int(value) if len(value) <= 4000 else lx.int_value(tokens[i])
                    operands.append(("int", offset, 1, number, ()))
                    nkind, nvalue, noffset = tokens[i + 1] if i + 1 < clear_to else lx.peek()
                    if (nkind == "ident" and (nvalue not in _RESERVED or nvalue == "min"
                                              or nvalue == "max")) \
                            or (nkind == "punct" and nvalue == "("):
                        # juxtaposed coefficient: "16d0", "2(d0 + 1)"
                        while ops and ops[-1][1] >= 2:
                            apply(ops.pop(), operands)
                        ops.append(("*", 2, noffset, None))
                        continue
                    expect_operand = False
                    continue
                elif kind == "ident":
                    if (value == "min" or value == "max") and lx.at("(", 1):
                        lx.index = i + 2
                        ops.append(("call", 0, offset, [value, len(operands)]))
                        barriers.append("call")
                        continue
                    if value not in _RESERVED:
                        lx.index = i + 1
                        operands.append(("var", offset, 1, value, ()))
                        expect_operand = False
                        continue
                raise lx.error(f"expected an expression, found {describe(lx.peek())}", offset)
            # expecting an operator
            if kind == "punct":
                if value == "+" or value == "-":
                    op, prec = value, 1
                elif value == "*":
                    op, prec = value, 2
                elif value == "/":
                    op, prec = "floordiv", 2
                elif value == ")" and barriers:
                    lx.index = i + 1
                    while ops[-1][1]:
                        apply(ops.pop(), operands)
                    barriers.pop()
                    barrier = ops.pop()
                    if barrier[0] == "call":
                        self._finish_call(barrier, operands, offset)
                    continue
                elif value == "," and barriers and barriers[-1] == "call":
                    lx.index = i + 1
                    while ops[-1][1]:
                        apply(ops.pop(), operands)
                    expect_operand = True
                    continue
                else:
                    break
            elif kind == "ident" and value in _DIV_KEYWORDS:
                op, prec = _DIV_KEYWORDS[value], 2
            else:
                break
            lx.index = i + 1
            while ops and ops[-1][1] >= prec:
                apply(ops.pop(), operands)
            ops.append((op, prec, offset, None))
            expect_operand = True
        while ops and ops[-1][1]:
            apply(ops.pop(), operands)
        if ops:
            raise lx.error("unbalanced '(': missing ')'", ops[-1][2])
        if len(operands) != 1:
            raise lx.error("malformed expression", lx.peek()[2])
        return operands[0]

    def _finish_call(self, barrier: Any, operands: list[Any], offset: int) -> None:
        name, base = barrier[3]
        args = operands[base:]
        del operands[base:]
        if len(args) < 2:
            raise self.lx.error(f"{name}() takes at least two arguments", barrier[2])
        depth = 1 + max(a[2] for a in args)
        operands.append(self._checked((name, barrier[2], depth, None, tuple(args))))

    def _apply(self, op: tuple[str, int, int, Any], operands: list[Any]) -> None:
        kind, _, offset, _ = op
        if kind == "neg" or kind == "pos":
            if not operands:
                raise self.lx.error("expected an expression", offset)
            if kind == "neg":
                operands.append(self._checked(_negated(operands.pop(), offset)))
            return
        if len(operands) < 2:
            raise self.lx.error("expected an expression", offset)
        b = operands.pop()
        a = operands.pop()
        if kind == "+" or kind == "-":
            term = b if kind == "+" else _negated(b, b[1])
            # a sum node owns its list of terms and is used once: extend it in place
            terms = a[4] if a[0] == "sum" else [a]
            terms.append(term)
            depth = max(a[2], term[2] + 1)
            operands.append(self._checked(("sum", a[1], depth, None, terms)))
            return
        depth = 1 + (a[2] if a[2] > b[2] else b[2])
        operands.append(self._checked((kind, offset, depth, None, (a, b))))

    def _checked(self, node: tuple[Any, ...]) -> tuple[Any, ...]:
        if node[2] > MAX_DEPTH:
            raise self.lx.error(f"expression nested more than {MAX_DEPTH} deep", node[1])
        return node


_DIVISIONS = {"floordiv": FloorDiv, "ceildiv": CeilDiv, "mod": Mod}


class _Builder:
    """Parsed expression trees made sympy expressions, with sums and integer multiples
    built directly (in the form sympy's Add and Mul give). Equal sub-expressions come out
    as one object (as sympy's cache would make them): the memos downstream, which go by
    identity, then see them as one."""

    def __init__(self, names: dict[str, Symbol], lexer: _Lexer):
        self.names = names
        self.lexer = lexer
        self.made: dict[tuple[Any, ...], Expr] = {}
        self.kept: list[list[Expr]] = []  # the arguments whose ids are keys, kept alive
        #: every division made so far is by a constant (False: one may not be)
        self.constant_divisors = True

    def expr(self, node: tuple[Any, ...]) -> Expr:
        kind, offset, _, payload, children = node
        if kind == "int":
            return integer(payload)
        if kind == "var":
            try:
                return self.names[payload]
            except KeyError:
                raise self.lexer.error(f"unknown variable {payload!r}", offset) from None
        names = self.names
        args = []
        for c in children:  # integers and known variables here: no call for them
            if c[0] == "int":
                args.append(integer(c[3]))
            elif c[0] == "var" and c[3] in names:
                args.append(names[c[3]])
            else:
                args.append(self.expr(c))
        # by the arguments' identities: equal arguments are one object already (integers
        # and variables are, and every compound one is made here once), and each stays
        # alive in ``made`` while its id is a key
        key = (kind, *map(id, args))
        found = self.made.get(key)
        if found is None:
            found = self._make(kind, args, node)
            self.made[key] = found
            self.kept.append(args)
        return found

    def _make(self, kind: str, args: list[Expr], node: tuple[Any, ...]) -> Expr:
        if kind == "sum":
            return add(args)
        if kind == "neg":
            return scale(-1, args[0])
        if kind == "*":
            a, b = args
            if a.is_Integer:
                return scale(int(a), b)
            if b.is_Integer:
                return scale(int(b), a)
            return Mul(a, b)
        if kind in ("floordiv", "ceildiv", "mod"):
            if args[1] == 0:
                raise self.lexer.error(f"{kind} by zero", node[4][1][1])
            made = _DIVISIONS[kind].of(args[0], args[1])
            if isinstance(made, (FloorDiv, CeilDiv, Mod)) and not made.args[1].is_Integer:
                self.constant_divisors = False  # (a division folded away leaves none)
            return made
        if kind == "min":
            return min_of(*args)
        if kind == "max":
            return max_of(*args)
        raise self.lexer.error(f"unexpected {kind}", node[1])  # pragma: no cover - invariant


# =========================================================================== maps
@dataclass
class _Header:
    dims: list[tuple[str, int]]
    symbols: list[tuple[str, int]]
    runtime: list[tuple[str, int]]
    results: list[tuple[Any, ...]]
    affine: bool = False


class _MapParser:
    def __init__(self, text: str, source: str = "", allow_empty: bool = True,
                 end: int | None = None):
        self.lx = _Lexer(text, source, end)
        self.allow_empty = allow_empty

    # -- header ------------------------------------------------------------------------
    def header(self) -> _Header:
        lx = self.lx
        affine = False
        if lx.at("affine_map"):
            lx.next()
            lx.expect("<")
            affine = True
        lx.expect("(", "'(' starting the dimension list")
        dims = self._names(")")
        symbols: list[tuple[str, int]] = []
        runtime: list[tuple[str, int]] = []
        if lx.accept("["):
            symbols = self._names("]")
        if lx.accept("{"):
            runtime = self._names("}")
        lx.expect("->", "'->'")
        lx.expect("(", "'(' starting the results")
        results: list[tuple[Any, ...]] = []
        if not lx.accept(")"):
            while True:
                results.append(_ExprParser(lx).parse())
                if lx.accept(")"):
                    break
                lx.expect(",", "',' or ')' in the results")
        if affine:
            lx.expect(">", "'>' closing affine_map<")
        return _Header(dims, symbols, runtime, results, affine)

    def _names(self, close: str) -> list[tuple[str, int]]:
        lx = self.lx
        names: list[tuple[str, int]] = []
        if lx.accept(close):
            return names
        while True:
            tok = lx.next()
            kind, value, offset = tok
            if kind != "ident" or value in _RESERVED:
                raise lx.error(f"expected a variable name, found {describe(tok)}", offset)
            names.append((value, offset))
            if lx.accept(close):
                return names
            lx.expect(",", f"',' or '{close}'")

    # -- domain ------------------------------------------------------------------------
    def domain(self) -> tuple[list[tuple[Any, int, int, int]], dict[str, tuple[str, Any]]]:
        """Entries ``(expr node, lo, hi, offset)`` and provenance by variable name."""
        lx = self.lx
        tokens = lx.tokens
        entries: list[tuple[Any, int, int, int]] = []
        provenance: dict[str, tuple[str, Any]] = {}
        while True:
            while lx.accept(","):
                pass
            kind, value, offset = lx.peek()
            i = lx.index
            if kind == "ident" and i + 6 < lx._clear_to and value not in _RESERVED:
                # the common entry, a variable's interval ``d0 in [0, 31]``, read at once
                # (as the steps below read it)
                (_, word, _), (_, bracket_value, bracket), (lo_kind, lo_digits, _), \
                    (_, comma, _), (hi_kind, hi_digits, _), (_, close, _) = tokens[i + 1:i + 7]
                if word == "in" and bracket_value == "[" and lo_kind == "int" \
                        and comma == "," and hi_kind == "int" and close == "]" \
                        and len(lo_digits) <= 4000 and len(hi_digits) <= 4000:
                    lx.index = i + 7
                    lo, hi = int(lo_digits), int(hi_digits)
                    if lo > hi and not self.allow_empty:
                        raise lx.error(EMPTY_INTERVAL, bracket)
                    entries.append((("var", offset, 1, value, ()), lo, hi, offset))
                    continue
            if kind == "eof" or self._at_section_end():
                return entries, provenance
            if kind == "ident" and value == "is_simplified" and lx.at(":", 1):
                lx.next()
                lx.next()
                flag = lx.next()
                if flag[1] not in ("true", "false"):
                    raise lx.error("expected true or false after is_simplified:", flag[2])
                continue
            if kind == "ident" and value == "hlo" and lx.at(":", 1):
                lx.next()
                lx.next()
                hlo, at = lx.raw_until("\n")
                if not entries or entries[-1][0][0] != "var":
                    raise lx.error("'hlo:' must follow a variable's interval", at)
                provenance[entries[-1][0][3]] = (hlo, self.header())
                continue
            expr = _ExprParser(lx).parse()
            lx.expect("in", "'in' after a domain expression")
            bracket = lx.peek()[2]
            lx.expect("[", "'['")
            lo = self.lx.signed_int()
            lx.expect(",", "','")
            hi = self.lx.signed_int()
            lx.expect("]", "']'")
            if lo > hi and not self.allow_empty:
                raise lx.error(EMPTY_INTERVAL, bracket)
            entries.append((expr, lo, hi, offset))

    def _at_section_end(self) -> bool:
        lx = self.lx
        kind, value, _ = lx.peek()
        if kind != "ident":
            return False
        if (value, lx.peek(1)[1]) in (("runtime", "variables"), ("replica", "id")):
            return True
        return lx.at(":", 1) and value not in ("hlo", "is_simplified")

    # -- sections after the domain -----------------------------------------------------------
    def sections(self, runtime_names: set[str]) -> dict[str, tuple[str, IndexingMap]]:
        lx = self.lx
        provenance: dict[str, tuple[str, IndexingMap]] = {}
        while lx.peek()[0] != "eof":
            tok = lx.peek()
            if lx.at("runtime") and lx.at("variables", 1):
                lx.next()
                lx.next()
                lx.expect(":")
                while lx.peek()[0] == "ident" and lx.at(":", 1) \
                        and lx.peek()[1] not in ("replica", "runtime"):
                    _, name, name_at = lx.next()
                    lx.next()
                    if name not in runtime_names:
                        raise lx.error(f"{name!r} is not a runtime variable of the map",
                                       name_at)
                    hlo, _ = lx.raw_until(";")
                    lx.expect(";")
                    if lx.accept("UNDEFINED"):  # the source is known, its map is not
                        provenance[name] = (hlo, None)  # type: ignore[assignment]
                        continue
                    provenance[name] = (hlo, self.full_map())
                continue
            if lx.at("replica") and lx.at("id", 1):
                lx.next()
                lx.next()
                lx.expect(":")
                self.full_map()  # read and checked; symidx does not model replica ids
                continue
            raise lx.error(f"unexpected {describe(tok)} after the map", tok[2])
        return provenance

    # -- a whole map -------------------------------------------------------------------------
    def full_map(self) -> IndexingMap:
        lx = self.lx
        header = self.header()
        entries: list[tuple[Any, int, int, int]] = []
        hlo_lines: dict[str, tuple[str, Any]] = {}
        lx.accept(",")
        if lx.at("domain"):
            lx.next()
            lx.expect(":", "':' after 'domain'")
            entries, hlo_lines = self.domain()
        return self.build(header, entries, hlo_lines, {})

    def build(self, header: _Header, entries: list[tuple[Any, int, int, int]],
              hlo_lines: dict[str, tuple[str, Any]],
              sections: dict[str, tuple[str, IndexingMap]]) -> IndexingMap:
        lx = self.lx
        dims = header.dims
        # Runtime variables: the {..} list, plus (seed style) symbols with an hlo: line, plus
        # (affine_map form) symbols named rtN.
        symbols: list[tuple[str, int]] = []
        runtime = list(header.runtime)
        for entry in header.symbols:
            is_rt = entry[0] in hlo_lines or (header.affine and re.fullmatch(r"rt\d+", entry[0]))
            (runtime if is_rt else symbols).append(entry)
        all_names = dims + symbols + runtime
        seen: dict[str, int] = {}
        for name, offset in all_names:
            if name in seen:
                raise lx.error(f"variable {name!r} is declared twice", offset)
            seen[name] = offset
        table = {name: v for (name, _), v in zip(
            all_names,
            [dim(i) for i in range(len(dims))] + [sym(i) for i in range(len(symbols))]
            + [rt(i) for i in range(len(runtime))])}
        intervals: dict[str, Interval] = {}
        constraints: list[tuple[Expr, Interval]] = []
        builder = _Builder(table, lx)
        for node, lo, hi, _ in entries:
            expr = builder.expr(node)
            if node[0] == "var":
                var_name: str = node[3]
                got = Interval(lo, hi)
                intervals[var_name] = (intervals[var_name].intersect(got)
                                       if var_name in intervals else got)
            else:
                constraints.append((expr, Interval(lo, hi)))
        results = [builder.expr(n) for n in header.results]
        for name, where in all_names:
            if name not in intervals:
                raise lx.error(f"variable {name!r} has no interval in the domain", where)
        rt_vars = []
        for rt_name, _ in runtime:
            hlo, prov = "", None
            if rt_name in sections:
                hlo, prov = sections[rt_name]
            elif rt_name in hlo_lines:
                hlo, prov_header = hlo_lines[rt_name]
                prov = self._provenance_map(prov_header, dims, intervals)
            source = ValueSource(hlo) if hlo else None
            rt_vars.append(RuntimeVar(intervals[rt_name], source, prov))
        # Names spelled like our own variables (d3, s0, rt1) are positional, not custom.
        names = [None if _DEFAULT_NAME.fullmatch(n) else n for n, _ in all_names]
        try:  # every name was resolved against the declared variables: nothing to check
            return IndexingMap.create(
                [intervals[n] for n, _ in dims], results, [intervals[n] for n, _ in symbols],
                rt_vars, constraints, names, check=False,
                constant_divisors=True if builder.constant_divisors else None)
        except MapError as e:
            raise lx.error(str(e), 0) from None

    def _provenance_map(self, header: _Header, dims: list[tuple[str, int]],
                        intervals: dict[str, Interval]) -> IndexingMap:
        """Seed style: ``hlo: ...`` then a bare ``(d0, d1) -> (...)`` over the map's dims."""
        if len(header.dims) != len(dims) or header.symbols or header.runtime:
            raise self.lx.error("a runtime variable's map must take the map's dimensions",
                                self.lx.peek()[2])
        table = {name: dim(i) for i, (name, _) in enumerate(header.dims)}
        builder = _Builder(table, self.lx)
        results = [builder.expr(n) for n in header.results]
        return IndexingMap.create([intervals[n] for n, _ in dims], results)


EMPTY_INTERVAL = ("empty interval: its low end is above its high end (a map that reads "
                  "nothing is written KNOWN EMPTY)")
"""Why an interval written ``[lo, hi]`` with ``lo > hi`` is refused."""


def parse_map(text: str, source: str = "", *, allow_empty: bool = True) -> IndexingMap:
    """Parse one indexing map in any supported spelling (see the module docstring).
    ``allow_empty``: an interval written empty (``d0 in [5, 3]``) makes the map KNOWN
    EMPTY, as XLA's parser reads it; False refuses it, a :class:`ParseError` at the
    interval (the command line reads what a user wrote so)."""
    if not isinstance(text, str):
        raise TypeError("parse_map takes a str")
    special = _SPECIAL.match(text)
    if special:
        word = special.group(1)
        return (IndexingMap.undefined() if word == "UNDEFINED"
                else IndexingMap.known_empty())
    tail = _PLAIN_DOMAIN.search(text)
    if tail is not None:
        quick = _with_plain_domain(text, source, allow_empty, tail)
        if quick is not None:
            return quick
    p = _MapParser(text, source, allow_empty)
    header = p.header()
    entries: list[tuple[Any, int, int, int]] = []
    hlo_lines: dict[str, tuple[str, Any]] = {}
    p.lx.accept(",")
    if p.lx.at("domain"):
        p.lx.next()
        p.lx.expect(":", "':' after 'domain'")
        entries, hlo_lines = p.domain()
    runtime_names = {n for n, _ in header.runtime} | {n for n, _ in header.symbols}
    sections = p.sections(runtime_names)
    return p.build(header, entries, hlo_lines, sections)


# The common domain, "[,] domain: d0 in [0, 31], d1 in [0, 7]" to the end of the text (each
# variable's interval, bounds without signs), read without tokens; "_WS" is what the
# tokenizer skips.
_WS = r"[ \t\r\n]*"
_PLAIN_ENTRY = (rf"([A-Za-z_][A-Za-z0-9_]*)[ \t\r\n]+in{_WS}(\[){_WS}([0-9]+){_WS},{_WS}"
                rf"([0-9]+){_WS}\]")
_PLAIN_DOMAIN = lazy_pattern(rf"(?:,{_WS})?domain{_WS}:((?:{_WS}(?:,|{_PLAIN_ENTRY}))*){_WS}\Z")
_PLAIN_ENTRIES = lazy_pattern(_PLAIN_ENTRY)


def _with_plain_domain(text: str, source: str, allow_empty: bool,
                       tail: re.Match[str]) -> IndexingMap | None:
    """The map whose text ends with a plain domain (``tail``), read as the general steps
    read it: the header from the tokens before the domain, each interval from the text.
    None when the header does not end right before the domain or an entry is not plainly
    a variable's interval (the general steps then read the text, and say what is wrong)."""
    p = _MapParser(text, source, allow_empty, end=tail.start())
    try:
        header = p.header()
    except ParseError:
        return None
    if p.lx.index != p.lx.last:
        return None
    entries: list[tuple[Any, int, int, int]] = []
    for m in _PLAIN_ENTRIES.finditer(text, tail.start(1), tail.end(1)):
        name, lo_digits, hi_digits = m.group(1, 3, 4)
        if name in _RESERVED or len(lo_digits) > 4000 or len(hi_digits) > 4000:
            return None
        lo, hi = int(lo_digits), int(hi_digits)
        if lo > hi and not allow_empty:
            raise p.lx.error(EMPTY_INTERVAL, m.start(2))
        at = m.start(1)
        entries.append((("var", at, 1, name, ()), lo, hi, at))
    return p.build(header, entries, {}, {})


def parse_expr(text: str, names: dict[str, Symbol] | None = None) -> Expr:
    """Parse one expression. Without ``names``, ``dN``/``sN``/``rtN`` are our variables."""
    lx = _Lexer(text)
    node = _ExprParser(lx).parse()
    if lx.peek()[0] != "eof":
        raise lx.error(f"unexpected {describe(lx.peek())} after the expression",
                       lx.peek()[2])
    table = dict(names or {})
    if names is None:
        for name in _var_names(node):
            m = re.fullmatch(r"(d|s|rt)(\d+)", name)
            if m:
                table[name] = {"d": dim, "s": sym, "rt": rt}[m.group(1)](int(m.group(2)))
    return _Builder(table, lx).expr(node)


def _var_names(node: tuple[Any, ...]) -> set[str]:
    out, stack = set(), [node]
    while stack:
        n = stack.pop()
        if n[0] == "var":
            out.add(n[3])
        stack.extend(n[4])
    return out
