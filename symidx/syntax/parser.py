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
the maps (:mod:`symidx.indexing_map.text`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from sympy import Add, Integer, Mul, Symbol

from symidx.errors import MapError, ParseError
from symidx.expr import (
    CeilDiv,
    Expr,
    FloorDiv,
    Mod,
    dim,
    max_of,
    min_of,
    rt,
    sym,
)
from symidx.indexing_map import IndexingMap, RuntimeVar, ValueSource
from symidx.interval import Interval
from symidx.syntax.tokens import Token, TokenCursor, describe

__all__ = ["parse_map", "parse_expr", "MAX_DEPTH"]

MAX_DEPTH = 200  # deepest expression tree accepted (keeps every recursive walk safe)

# =========================================================================== tokenizer
_TOKEN = re.compile(r"""
    (?P<ws>[ \t\r\n]+)
  | (?P<int>[0-9]+)
  | (?P<ident>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<punct>->|[()\[\]{},:;+\-*/<>])
""", re.VERBOSE)

_DIV_KEYWORDS = {"floordiv": "floordiv", "floorDiv": "floordiv", "ceildiv": "ceildiv",
                 "ceilDiv": "ceildiv", "mod": "mod"}
_RESERVED = set(_DIV_KEYWORDS) | {"in", "min", "max", "domain"}
_SPECIAL = re.compile(r"\s*(KNOWN\s+EMPTY|UNDEFINED)\s*\Z")
_DEFAULT_NAME = re.compile(r"(d|s|rt)[0-9]+")


class _Lexer(TokenCursor):
    """Tokens on demand, so the parser can also take raw text (``hlo:`` lines)."""

    def __init__(self, text: str, source: str = ""):
        self.text = text
        self.source = source
        self.pos = 0
        self.buffer: list[Token] = []

    def error(self, message: str, offset: int) -> ParseError:
        return ParseError(message, self.text, offset, source=self.source)

    def _scan(self) -> Token:
        text, n = self.text, len(self.text)
        while True:
            if self.pos >= n:
                return Token("eof", "", n)
            m = _TOKEN.match(text, self.pos)
            if not m:
                ch = text[self.pos]
                raise self.error(f"unexpected character {ch!r}", self.pos)
            start, self.pos = self.pos, m.end()
            kind = m.lastgroup or ""
            if kind != "ws":
                return Token(kind, m.group(), start)

    def peek(self, k: int = 0) -> Token:
        while len(self.buffer) <= k:
            self.buffer.append(self._scan())
        return self.buffer[k]

    def next(self) -> Token:
        tok = self.peek()
        self.buffer.pop(0)
        return tok

    def raw_until(self, stops: str) -> tuple[str, int]:
        """The raw text from the next token up to (not including) a stop character."""
        start = self.buffer[0].offset if self.buffer else self.pos
        self.buffer.clear()
        end = start
        while end < len(self.text) and self.text[end] not in stops:
            end += 1
        self.pos = end
        return self.text[start:end].strip(), start


# =========================================================================== expressions
# A parsed expression is first a small tree of tuples (so sums of any length are built in
# one sympy call), then converted. Node: (kind, offset, depth, payload...).
_BINARY_PREC = {"+": 1, "-": 1, "*": 2, "floordiv": 2, "ceildiv": 2, "mod": 2}


def _node(kind: str, offset: int, *children: Any, payload: Any = None) -> tuple[Any, ...]:
    depth = 1 + max((c[2] for c in children), default=0)
    return (kind, offset, depth, payload, children)


class _ExprParser:
    """Operator-precedence parsing with explicit stacks: no recursion on nesting."""

    def __init__(self, lexer: _Lexer):
        self.lx = lexer

    def parse(self) -> tuple[Any, ...]:
        lx = self.lx
        operands: list[tuple[Any, ...]] = []
        # operator stack entries: (op, prec, offset); "(" and calls are barriers.
        ops: list[tuple[str, int, int, Any]] = []
        expect_operand = True
        while True:
            tok = lx.peek()
            if expect_operand:
                if tok.kind == "punct" and tok.value in "-+":
                    lx.next()
                    ops.append(("neg" if tok.value == "-" else "pos", 9, tok.offset, None))
                    continue
                if tok.kind == "punct" and tok.value == "(":
                    lx.next()
                    ops.append(("(", 0, tok.offset, None))
                    continue
                if tok.kind == "int":
                    lx.next()
                    operands.append(_node("int", tok.offset, payload=lx.int_value(tok)))
                    nxt = lx.peek()
                    if (nxt.kind == "ident" and nxt.value not in _RESERVED) or \
                            (nxt.kind == "ident" and nxt.value in ("min", "max")) or \
                            (nxt.kind == "punct" and nxt.value == "("):
                        # juxtaposed coefficient: "16d0", "2(d0 + 1)"
                        self._push_binary(ops, operands, "*", 2, nxt.offset)
                        continue
                    expect_operand = False
                    continue
                if tok.kind == "ident" and tok.value in ("min", "max") and lx.at("(", 1):
                    lx.next()
                    lx.next()
                    ops.append(("call", 0, tok.offset, [tok.value, len(operands)]))
                    continue
                if tok.kind == "ident" and tok.value not in _RESERVED:
                    lx.next()
                    operands.append(_node("var", tok.offset, payload=tok.value))
                    expect_operand = False
                    continue
                raise lx.error(f"expected an expression, found {describe(tok)}", tok.offset)
            # expecting an operator
            if tok.kind == "punct" and tok.value in ("+", "-", "*", "/"):
                op = "floordiv" if tok.value == "/" else tok.value
            elif tok.kind == "ident" and tok.value in _DIV_KEYWORDS:
                op = _DIV_KEYWORDS[tok.value]
            else:
                op = ""
            if op:
                lx.next()
                self._push_binary(ops, operands, op, _BINARY_PREC[op], tok.offset)
                expect_operand = True
                continue
            if tok.kind == "punct" and tok.value == ")" and self._open_barrier(ops):
                lx.next()
                self._reduce_to_barrier(ops, operands)
                barrier = ops.pop()
                if barrier[0] == "call":
                    self._finish_call(barrier, operands, tok.offset)
                continue
            if tok.kind == "punct" and tok.value == "," and ops and self._innermost_is_call(ops):
                lx.next()
                self._reduce_to_barrier(ops, operands)
                expect_operand = True
                continue
            break
        self._reduce_to_barrier(ops, operands)
        if ops:
            raise lx.error("unbalanced '(': missing ')'", ops[-1][2])
        if len(operands) != 1:
            raise lx.error("malformed expression", lx.peek().offset)
        return operands[0]

    def _push_binary(self, ops: list[Any], operands: list[Any], op: str, prec: int,
                     offset: int) -> None:
        while ops and ops[-1][0] not in ("(", "call") and ops[-1][1] >= prec:
            self._apply(ops.pop(), operands)
        ops.append((op, prec, offset, None))

    @staticmethod
    def _open_barrier(ops: list[Any]) -> bool:
        return any(o[0] in ("(", "call") for o in ops)

    @staticmethod
    def _innermost_is_call(ops: list[Any]) -> bool:
        for o in reversed(ops):
            if o[0] in ("(", "call"):
                innermost: bool = o[0] == "call"
                return innermost
        return False

    def _reduce_to_barrier(self, ops: list[Any], operands: list[Any]) -> None:
        while ops and ops[-1][0] not in ("(", "call"):
            self._apply(ops.pop(), operands)

    def _finish_call(self, barrier: Any, operands: list[Any], offset: int) -> None:
        name, base = barrier[3]
        args = operands[base:]
        del operands[base:]
        if len(args) < 2:
            raise self.lx.error(f"{name}() takes at least two arguments", barrier[2])
        operands.append(self._checked(_node(name, barrier[2], *args)))

    def _apply(self, op: tuple[str, int, int, Any], operands: list[Any]) -> None:
        kind, _, offset, _ = op
        if kind in ("neg", "pos"):
            if not operands:
                raise self.lx.error("expected an expression", offset)
            if kind == "neg":
                operands.append(self._checked(_node("neg", offset, operands.pop())))
            return
        if len(operands) < 2:
            raise self.lx.error("expected an expression", offset)
        b, a = operands.pop(), operands.pop()
        if kind in ("+", "-"):
            term = b if kind == "+" else _node("neg", b[1], b)
            # a sum node owns its list of terms and is used once: extend it in place
            terms = a[4] if a[0] == "sum" else [a]
            terms.append(term)
            depth = max(a[2], term[2] + 1)
            operands.append(self._checked(("sum", a[1], depth, None, terms)))
            return
        operands.append(self._checked(_node(kind, offset, a, b)))

    def _checked(self, node: tuple[Any, ...]) -> tuple[Any, ...]:
        if node[2] > MAX_DEPTH:
            raise self.lx.error(f"expression nested more than {MAX_DEPTH} deep", node[1])
        return node


def _to_sympy(node: tuple[Any, ...], names: dict[str, Symbol], lexer: _Lexer) -> Expr:
    kind, offset, _, payload, children = node
    if kind == "int":
        return Integer(payload)
    if kind == "var":
        try:
            return names[payload]
        except KeyError:
            raise lexer.error(f"unknown variable {payload!r}", offset) from None
    args = [_to_sympy(c, names, lexer) for c in children]
    if kind == "sum":
        return Add(*args)
    if kind == "neg":
        return -args[0]
    if kind == "*":
        return Mul(*args)
    if kind in ("floordiv", "ceildiv", "mod"):
        if args[1] == 0:
            raise lexer.error(f"{kind} by zero", children[1][1])
        return {"floordiv": FloorDiv, "ceildiv": CeilDiv, "mod": Mod}[kind](*args)
    if kind == "min":
        return min_of(*args)
    if kind == "max":
        return max_of(*args)
    raise lexer.error(f"unexpected {kind}", offset)  # pragma: no cover - parser invariant


# =========================================================================== maps
@dataclass
class _Header:
    dims: list[tuple[str, int]]
    symbols: list[tuple[str, int]]
    runtime: list[tuple[str, int]]
    results: list[tuple[Any, ...]]
    affine: bool = False


class _MapParser:
    def __init__(self, text: str, source: str = "", allow_empty: bool = True):
        self.lx = _Lexer(text, source)
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
            if tok.kind != "ident" or tok.value in _RESERVED:
                raise lx.error(f"expected a variable name, found {describe(tok)}", tok.offset)
            names.append((tok.value, tok.offset))
            if lx.accept(close):
                return names
            lx.expect(",", f"',' or '{close}'")

    # -- domain ------------------------------------------------------------------------
    def domain(self) -> tuple[list[tuple[Any, int, int, int]], dict[str, tuple[str, Any]]]:
        """Entries ``(expr node, lo, hi, offset)`` and provenance by variable name."""
        lx = self.lx
        entries: list[tuple[Any, int, int, int]] = []
        provenance: dict[str, tuple[str, Any]] = {}
        while True:
            while lx.accept(","):
                pass
            tok = lx.peek()
            if tok.kind == "eof" or self._at_section_end():
                return entries, provenance
            if tok.kind == "ident" and tok.value == "is_simplified" and lx.at(":", 1):
                lx.next()
                lx.next()
                flag = lx.next()
                if flag.value not in ("true", "false"):
                    raise lx.error("expected true or false after is_simplified:", flag.offset)
                continue
            if tok.kind == "ident" and tok.value == "hlo" and lx.at(":", 1):
                lx.next()
                lx.next()
                hlo, at = lx.raw_until("\n")
                if not entries or entries[-1][0][0] != "var":
                    raise lx.error("'hlo:' must follow a variable's interval", at)
                provenance[entries[-1][0][3]] = (hlo, self.header())
                continue
            expr = _ExprParser(lx).parse()
            lx.expect("in", "'in' after a domain expression")
            bracket = lx.peek().offset
            lx.expect("[", "'['")
            lo = self.lx.signed_int()
            lx.expect(",", "','")
            hi = self.lx.signed_int()
            lx.expect("]", "']'")
            if lo > hi and not self.allow_empty:
                raise lx.error(EMPTY_INTERVAL, bracket)
            entries.append((expr, lo, hi, tok.offset))

    def _at_section_end(self) -> bool:
        lx = self.lx
        tok = lx.peek()
        if tok.kind != "ident":
            return False
        if (tok.value, lx.peek(1).value) in (("runtime", "variables"), ("replica", "id")):
            return True
        return lx.at(":", 1) and tok.value not in ("hlo", "is_simplified")

    # -- sections after the domain -----------------------------------------------------------
    def sections(self, runtime_names: set[str]) -> dict[str, tuple[str, IndexingMap]]:
        lx = self.lx
        provenance: dict[str, tuple[str, IndexingMap]] = {}
        while lx.peek().kind != "eof":
            tok = lx.peek()
            if lx.at("runtime") and lx.at("variables", 1):
                lx.next()
                lx.next()
                lx.expect(":")
                while lx.peek().kind == "ident" and lx.at(":", 1) \
                        and lx.peek().value not in ("replica", "runtime"):
                    name = lx.next()
                    lx.next()
                    if name.value not in runtime_names:
                        raise lx.error(f"{name.value!r} is not a runtime variable of the map",
                                       name.offset)
                    hlo, _ = lx.raw_until(";")
                    lx.expect(";")
                    if lx.accept("UNDEFINED"):  # the source is known, its map is not
                        provenance[name.value] = (hlo, None)  # type: ignore[assignment]
                        continue
                    provenance[name.value] = (hlo, self.full_map())
                continue
            if lx.at("replica") and lx.at("id", 1):
                lx.next()
                lx.next()
                lx.expect(":")
                self.full_map()  # read and checked; symidx does not model replica ids
                continue
            raise lx.error(f"unexpected {describe(tok)} after the map", tok.offset)
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
        for node, lo, hi, _ in entries:
            expr = _to_sympy(node, table, lx)
            if node[0] == "var":
                var_name: str = node[3]
                got = Interval(lo, hi)
                intervals[var_name] = (intervals[var_name].intersect(got)
                                       if var_name in intervals else got)
            else:
                constraints.append((expr, Interval(lo, hi)))
        results = [_to_sympy(n, table, lx) for n in header.results]
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
        try:
            return IndexingMap.create(
                [intervals[n] for n, _ in dims], results, [intervals[n] for n, _ in symbols],
                rt_vars, constraints, names)
        except MapError as e:
            raise lx.error(str(e), 0) from None

    def _provenance_map(self, header: _Header, dims: list[tuple[str, int]],
                        intervals: dict[str, Interval]) -> IndexingMap:
        """Seed style: ``hlo: ...`` then a bare ``(d0, d1) -> (...)`` over the map's dims."""
        if len(header.dims) != len(dims) or header.symbols or header.runtime:
            raise self.lx.error("a runtime variable's map must take the map's dimensions",
                                self.lx.peek().offset)
        table = {name: dim(i) for i, (name, _) in enumerate(header.dims)}
        results = [_to_sympy(n, table, self.lx) for n in header.results]
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


def parse_expr(text: str, names: dict[str, Symbol] | None = None) -> Expr:
    """Parse one expression. Without ``names``, ``dN``/``sN``/``rtN`` are our variables."""
    lx = _Lexer(text)
    node = _ExprParser(lx).parse()
    if lx.peek().kind != "eof":
        raise lx.error(f"unexpected {describe(lx.peek())} after the expression",
                       lx.peek().offset)
    table = dict(names or {})
    if names is None:
        for name in _var_names(node):
            m = re.fullmatch(r"(d|s|rt)(\d+)", name)
            if m:
                table[name] = {"d": dim, "s": sym, "rt": rt}[m.group(1)](int(m.group(2)))
    return _to_sympy(node, table, lx)


def _var_names(node: tuple[Any, ...]) -> set[str]:
    out, stack = set(), [node]
    while stack:
        n = stack.pop()
        if n[0] == "var":
            out.add(n[3])
        stack.extend(n[4])
    return out
