"""Index expressions as other compilers write them, read into indexing maps, and the maps
printed back in two of those syntaxes. One hand-written grammar; nothing is evaluated.

Syntaxes (:data:`SYNTAXES`; :func:`detect_syntax` picks one where the text says which):

``xla``
    symidx's own text, what XLA prints (:mod:`symidx.core.syntax.parser`).
``mlir``
    ``affine_map<(d0)[s0] -> (...)>``, also as an alias definition
    ``#map = affine_map<...>``, with or without a ``domain:``.
``inductor``
    PyTorch Inductor's index expressions: ``//`` and ``%`` (Python's floor division and
    modulus), ``FloorDiv(a, b)``, ``ModularIndexing(x, div, mod)`` (``(x // div) % mod``),
    ``CleanDiv(a, b)`` (a division known to be exact: read as ``a // b``), ``CeilDiv``,
    ``PythonMod``/``Mod``, ``Min``/``Max`` of any number of arguments.
``tvm``
    TVM's: ``floordiv(a, b)``, ``floormod(a, b)`` (also ``T.``/``tir.`` prefixed),
    ``min``/``max``, and TVMScript's ``//`` and ``%`` (which are its floordiv and
    floormod). TVM's ``/`` and ``truncdiv``/``truncmod`` round toward zero and are refused.
``isl``
    an isl map ``{ [i, j] -> [i + j, floor(i / 4)] : 0 <= i < 16 and 0 <= j <= 3 }``:
    outputs given as expressions, or named and defined by an equality (``[o] : o = i mod
    4``); ``exists (e : ...)`` variables become range variables; bounds on the input
    variables become their intervals and other comparisons constraints.

An Inductor or TVM text is the results, an expression or a parenthesised list, followed
by an optional domain: ``ModularIndexing(x, 4, 8) + 8*FloorDiv(x, 32), domain: x in [0,
255]``. The domain lists ``NAME in [lo, hi]`` entries (or Inductor's ``{x0: 16, x1: 8}``,
sizes: ``[0, size - 1]``) and constraints ``EXPR in [lo, hi]``; the dimensions are the
variables in the order the domain names them, then the others in the order they appear.

**A variable without a range** (not in the domain, or an ``affine_map`` without a
``domain:``) ranges over the 64-bit integers, the values of an ``index`` (:data:`INDEX`):
the map is then true for every index value, and a narrower domain makes simplification
and verification stronger.

Divisors must be nonzero integer constants here. Errors are
:class:`~symidx.errors.ParseError` with the line and column.
"""

from __future__ import annotations

import re
from typing import Any

from sympy import Integer, Symbol

from symidx._text import lazy_pattern
from symidx.core.expr import CeilDiv, Expr, FloorDiv, Mod, dim, max_of, min_of, sym
from symidx.core.expr import bounds as bounds_of
from symidx.core.indexing_map import IndexingMap
from symidx.core.interval import Interval
from symidx.core.syntax.parser import EMPTY_INTERVAL, MAX_DEPTH
from symidx.core.syntax.parser import parse_map as parse_xla
from symidx.core.syntax.tokens import Token, TokenCursor, describe
from symidx.errors import MapError, ParseError

__all__ = ["INDEX", "SYNTAXES", "detect_syntax", "parse_foreign"]

#: The values of a variable given no range: those of a 64-bit ``index``.
INDEX = Interval(-(2**63), 2**63 - 1)
#: The syntaxes :func:`parse_foreign` reads (``auto``: :func:`detect_syntax`).
SYNTAXES = ("xla", "mlir", "inductor", "tvm", "isl")

_TOKEN = lazy_pattern(r"""
    (?P<ws>\s+)
  | (?P<int>[0-9]+)
  | (?P<ident>[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)
  | (?P<punct>//|->|<=|>=|==|[-+*/%(),\[\]{}:;<>=])
""", re.VERBOSE)

_INDUCTOR_CALLS = lazy_pattern(
    r"\b(?:FloorDiv|ModularIndexing|CleanDiv|CeilDiv|PythonMod|IndexingDiv|Min|Max)\s*\(")
_TVM_CALLS = lazy_pattern(r"(?:\b(?:T|tir)\.\w+|\b(?:floordiv|floormod|truncdiv|truncmod))\s*\(")


def detect_syntax(text: str) -> str:
    """The syntax ``text`` is written in, by what only that syntax writes: an isl map
    starts with ``{`` (or a parameter list ``[N] -> {``), MLIR with ``#name =`` or
    ``affine_map``, symidx's own text with its ``(d0, ...) ->`` header; an expression with
    TVM's call forms is TVM, one with Inductor's, ``//``, ``%`` or a ``domain:`` Inductor
    (their ``//`` and ``%`` mean the same); anything else symidx's own text."""
    stripped = text.lstrip()
    if stripped.startswith("{") or re.match(r"\[[^\]]*\]\s*->\s*\{", stripped):
        return "isl"
    if stripped.startswith("#") or stripped.startswith("affine_map"):
        return "mlir"
    if re.match(r"\([^()]*\)\s*(?:\[[^\]]*\]\s*)?(?:\{[^}]*\}\s*)?->", stripped) or \
            re.fullmatch(r"\s*(?:KNOWN\s+EMPTY|UNDEFINED)\s*", text):
        return "xla"
    if _TVM_CALLS.search(text) and not _INDUCTOR_CALLS.search(text):
        return "tvm"
    if _INDUCTOR_CALLS.search(text) or re.search(r"//|%|\bdomain\s*:", text):
        return "inductor"
    return "xla"  # nothing says otherwise: read as symidx's text, and its errors


def parse_foreign(text: str, syntax: str = "auto", source: str = "", *,
                  allow_empty: bool = True) -> IndexingMap:
    """The map ``text`` writes in ``syntax`` (one of :data:`SYNTAXES`, or ``auto``).
    ``allow_empty``: as :func:`symidx.core.syntax.parse_map` (an interval written ``[5, 3]``
    is refused when False)."""
    if syntax == "auto":
        syntax = detect_syntax(text)
    if syntax == "xla":
        return parse_xla(text, source, allow_empty=allow_empty)
    if syntax == "mlir":
        return _parse_mlir(text, source, allow_empty)
    if syntax in ("inductor", "tvm"):
        return _Reader(text, source, syntax, allow_empty).expression_map()
    if syntax == "isl":
        return _Reader(text, source, syntax, allow_empty).isl_map()
    raise MapError(f"unknown syntax {syntax!r}; choose one of auto, {', '.join(SYNTAXES)}")


# --------------------------------------------------------------------------- MLIR

_ALIAS_RE = lazy_pattern(r"#[A-Za-z_][\w$.]*\s*=\s*")
_AFFINE_HEAD_RE = lazy_pattern(r"affine_map\s*<\s*\(([^)]*)\)\s*(?:\[([^\]]*)\])?")


def _parse_mlir(text: str, source: str, allow_empty: bool = True) -> IndexingMap:
    """``affine_map<...>`` (``#map = `` before it is dropped); without a ``domain:``, each
    variable gets :data:`INDEX`."""
    aliases = list(_ALIAS_RE.finditer(text))
    if len(aliases) > 1:
        raise ParseError(f"{len(aliases)} map definitions; give one map", text,
                         aliases[1].start(), source=source)
    if aliases:
        start = aliases[0].start()
        if text[:start].strip():
            raise ParseError("expected the map definition first", text, 0, source=source)
        # keep the offsets of the text: blank out the alias, so errors point where they are
        text = " " * aliases[0].end() + text[aliases[0].end():]
    head = _AFFINE_HEAD_RE.search(text)
    if head is None:
        first = len(text) - len(text.lstrip())
        raise ParseError("expected 'affine_map<'", text, first, source=source)
    if not re.search(r"\bdomain\s*:", text):
        names = [n.strip() for group in head.groups() if group for n in group.split(",")
                 if n.strip()]
        text = text.rstrip() + "\ndomain: " + ", ".join(f"{n} in {INDEX}" for n in names) \
            if names else text
    return parse_xla(text, source, allow_empty=allow_empty)


# --------------------------------------------------------------------------- tokens


def _tokens(text: str, source: str) -> list[Token]:
    out: list[Token] = []
    pos = 0
    while pos < len(text):
        found = _TOKEN.match(text, pos)
        if found is None:
            raise ParseError(f"unexpected character {text[pos]!r}", text, pos, source=source)
        if found.lastgroup != "ws":
            out.append(Token(found.lastgroup or "", found.group(), pos))
        pos = found.end()
    out.append(Token("eof", "", len(text)))
    return out


# Expression trees before the variables are known: ("int", n) | ("var", name, offset) |
# (op, offset, child, ...) with op in + * neg floordiv ceildiv mod min max.
_Node = tuple[Any, ...]


class _Reader(TokenCursor[Token]):
    """Recursive descent over the tokens (depth bounded by :data:`MAX_DEPTH`)."""

    def __init__(self, text: str, source: str, syntax: str, allow_empty: bool = True) -> None:
        self.text = text
        self.source = source
        self.syntax = syntax
        self.allow_empty = allow_empty
        self.tokens = _tokens(text, source)
        self.pos = 0
        self.depth = 0
        self.floor_depth = 0
        self.order: dict[str, int] = {}  # variables in order of appearance, first offset

    # -- tokens
    def peek(self, k: int = 0) -> Token:
        return self.tokens[min(self.pos + k, len(self.tokens) - 1)]

    def next(self) -> Token:
        tok = self.peek()
        self.pos += 1
        return tok

    def describe(self, tok: Token | None = None) -> str:
        return describe(tok or self.peek())

    def error(self, message: str, offset: int | None = None) -> ParseError:
        where = self.peek().offset if offset is None else offset
        return ParseError(message, self.text, where, source=self.source)

    # -- expressions
    def expr(self) -> _Node:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise self.error(f"expression nested more than {MAX_DEPTH} deep")
        try:
            terms = [self.term()]
            while self.peek().kind == "punct" and self.peek().value in "+-":
                op = self.next()
                term = self.term()
                terms.append(term if op.value == "+" else ("neg", op.offset, term))
            return terms[0] if len(terms) == 1 else ("+", 0, *terms)
        finally:
            self.depth -= 1

    def term(self) -> _Node:
        node = self.unary()
        while True:
            tok = self.peek()
            op = {"*": "*", "//": "floordiv", "%": "mod"}.get(tok.value) \
                if tok.kind == "punct" else ("mod" if self.syntax == "isl" and
                                             tok.value == "mod" else None)
            if tok.kind == "punct" and tok.value == "/":
                if self.floor_depth:  # the '/' of isl's floor(a / c)
                    return node
                raise self.error(self._slash_advice(), tok.offset)
            if op is None:
                return node
            self.next()
            node = (op, tok.offset, node, self.unary())

    def _slash_advice(self) -> str:
        if self.syntax == "tvm":
            return ("TVM's '/' divides rounding toward zero (truncdiv), which indexing maps "
                    "do not have; write floordiv(a, b), or a // b")
        if self.syntax == "isl":
            return "in isl, division is floor(a / c) or ceil(a / c)"
        return "'/' is true division in Inductor; index division is a // b or FloorDiv(a, b)"

    def unary(self) -> _Node:
        tok = self.peek()
        if tok.kind == "punct" and tok.value in "+-":
            self.next()
            self.depth += 1
            if self.depth > MAX_DEPTH:
                raise self.error(f"expression nested more than {MAX_DEPTH} deep")
            try:
                inner = self.unary()
            finally:
                self.depth -= 1
            if tok.value == "+":
                return inner
            return ("int", -inner[1]) if inner[0] == "int" else ("neg", tok.offset, inner)
        return self.atom()

    def atom(self) -> _Node:
        tok = self.next()
        if tok.kind == "int":
            value: _Node = ("int", self.int_value(tok))
            # isl and affine text write coefficients juxtaposed: 2i
            if self.syntax == "isl" and self.peek().kind == "ident" and \
                    self.peek().offset == tok.offset + len(tok.value):
                return ("*", tok.offset, value, self.atom())
            return value
        if tok.kind == "punct" and tok.value == "(":
            inner = self.expr()
            self.expect(")", "')'")
            return inner
        if tok.kind == "ident":
            if self.at("("):
                return self.call(tok)
            if tok.value in ("and", "or", "exists", "mod", "floor", "ceil"):
                raise self.error(f"expected an expression, found {tok.value!r}", tok.offset)
            self.order.setdefault(tok.value, tok.offset)
            return ("var", tok.value, tok.offset)
        raise self.error(f"expected an expression, found {self.describe(tok)}", tok.offset)

    def call(self, name: Token) -> _Node:
        self.expect("(")
        if self.syntax == "isl" and name.value in ("floor", "ceil"):
            self.floor_depth += 1
            try:
                numerator = self.expr()
            finally:
                self.floor_depth -= 1
            slash = self.expect("/", "'/' in floor(a / c)")
            divisor = self.unary()
            self.expect(")", "')'")
            return ("floordiv" if name.value == "floor" else "ceildiv", slash.offset,
                    numerator, divisor)
        args = [self.expr()]
        while self.accept(","):
            args.append(self.expr())
        self.expect(")", "')' or ','")
        short = name.value.rsplit(".", 1)[-1]
        table = _FUNCTIONS[self.syntax]
        if short not in table:
            known = ", ".join(sorted(table))
            hint = ""
            if short in ("truncdiv", "truncmod", "Div", "TruncToInt", "IntTrueDiv"):
                hint = " (it rounds toward zero or is true division, which indexing maps " \
                       "do not have)"
            raise self.error(f"unknown function {name.value!r} in {self.syntax} syntax"
                             f"{hint}; known: {known}", name.offset)
        op, arity = table[short]
        if arity is not None and len(args) != arity:
            raise self.error(f"{name.value} takes {arity} arguments, not {len(args)}",
                             name.offset)
        if arity is None and len(args) < 2:
            raise self.error(f"{name.value} takes at least two arguments", name.offset)
        if op == "modular":  # ModularIndexing(x, div, mod) = (x // div) % mod
            return ("mod", name.offset, ("floordiv", name.offset, args[0], args[1]), args[2])
        return (op, name.offset, *args)

    # -- a domain: NAME in [lo, hi], EXPR in [lo, hi], or {NAME: size, ...}
    def domain(self) -> tuple[list[tuple[str, Interval, int]], list[tuple[_Node, Interval]]]:
        bounds: list[tuple[str, Interval, int]] = []
        constraints: list[tuple[_Node, Interval]] = []
        if self.accept("{"):
            if not self.accept("}"):
                while True:
                    name = self.next()
                    if name.kind != "ident":
                        raise self.error(f"expected a variable name, found "
                                         f"{self.describe(name)}", name.offset)
                    self.expect(":", "':' after a variable name")
                    size = self.signed_int()
                    if size < 1:
                        raise self.error(f"a size must be positive, found {size}")
                    bounds.append((name.value, Interval(0, size - 1), name.offset))
                    if self.accept("}"):
                        break
                    self.expect(",", "',' or '}'")
            return bounds, constraints
        while self.peek().kind != "eof":
            while self.accept(",") or self.accept(";"):
                pass
            if self.peek().kind == "eof":
                break
            start = self.peek()
            node = self.expr()
            self.expect("in", "'in' after a domain expression")
            bracket = self.peek().offset
            self.expect("[", "'['")
            lo = self.signed_int()
            self.expect(",", "','")
            hi = self.signed_int()
            self.expect("]", "']'")
            if lo > hi and not self.allow_empty:
                raise self.error(EMPTY_INTERVAL, bracket)
            if node[0] == "var":
                bounds.append((node[1], Interval(lo, hi), start.offset))
            else:
                constraints.append((node, Interval(lo, hi)))
        return bounds, constraints

    # -- Inductor and TVM: results, then a domain
    def expression_map(self) -> IndexingMap:
        results = self.results()
        bounds: list[tuple[str, Interval, int]] = []
        constraints: list[tuple[_Node, Interval]] = []
        while self.accept(",") or self.accept(";"):
            pass
        if self.accept("domain"):
            self.expect(":", "':' after 'domain'")
            bounds, constraints = self.domain()
        if self.peek().kind != "eof":
            raise self.error(f"unexpected {self.describe()} after the map")
        return self.build(results, bounds, constraints, [])

    def results(self) -> list[_Node]:
        close = {"(": ")", "[": "]"}.get(self.peek().value)
        if close is not None and self._is_tuple(close):
            self.next()
            out: list[_Node] = []
            if not self.accept(close):
                out.append(self.expr())
                while self.accept(","):
                    if self.at(close):
                        break
                    out.append(self.expr())
                self.expect(close, f"',' or {close!r}")
            return out
        out = [self.expr()]
        while self.at(",") and not self.at("domain", 1) and self.peek(1).kind != "eof":
            self.next()
            out.append(self.expr())
        return out

    def _is_tuple(self, close: str) -> bool:
        """Whether the bracket at the current token holds a list (a comma at its own
        nesting level, or nothing) rather than a parenthesised expression."""
        depth = 0
        for tok in self.tokens[self.pos:]:
            if tok.kind == "punct" and tok.value in "([{":
                depth += 1
            elif tok.kind == "punct" and tok.value in ")]}":
                depth -= 1
                if depth == 0:
                    return tok.value == close and (close == "]" or self._empty_or_comma(tok))
            elif tok.kind == "punct" and tok.value == "," and depth == 1:
                return True
        return False

    def _empty_or_comma(self, closing: Token) -> bool:
        return self.tokens[self.pos + 1] is closing

    # -- isl
    def isl_map(self) -> IndexingMap:
        if self.at("["):
            raise self.error("isl parameters ('[N] -> { ... }') are not supported: give "
                             "them values, or bound them as input variables")
        self.expect("{", "'{' starting an isl map")
        inputs = self.isl_tuple()
        for name, offset in inputs:
            self.order.setdefault(name, offset)
        self.expect("->", "'->'")
        self.expect("[", "'[' starting the output tuple")
        outputs: list[_Node] = []
        if not self.accept("]"):
            outputs.append(self.expr())
            while self.accept(","):
                outputs.append(self.expr())
            self.expect("]", "',' or ']'")
        comparisons: list[tuple[_Node, str, _Node, int]] = []
        exists: list[tuple[str, int]] = []
        if self.accept(":"):
            self.isl_condition(comparisons, exists)
        self.expect("}", "'}' closing the isl map")
        if self.peek().kind != "eof":
            raise self.error(f"unexpected {self.describe()} after the map")
        return self.isl_build(inputs, outputs, comparisons, exists)

    def isl_tuple(self) -> list[tuple[str, int]]:
        self.expect("[", "'['")
        names: list[tuple[str, int]] = []
        if self.accept("]"):
            return names
        while True:
            tok = self.next()
            if tok.kind != "ident":
                raise self.error("isl input tuples hold variable names here, found "
                                 f"{self.describe(tok)}", tok.offset)
            names.append((tok.value, tok.offset))
            if self.accept("]"):
                return names
            self.expect(",", "',' or ']'")

    def isl_condition(self, out: list[tuple[_Node, str, _Node, int]],
                      exists: list[tuple[str, int]]) -> None:
        while True:
            if self.accept("exists"):
                self.expect("(", "'(' after exists")
                while True:
                    tok = self.next()
                    if tok.kind != "ident":
                        raise self.error(f"expected a variable name, found "
                                         f"{self.describe(tok)}", tok.offset)
                    exists.append((tok.value, tok.offset))
                    if self.accept(":"):
                        break
                    self.expect(",", "',' or ':'")
                self.isl_condition(out, exists)
                self.expect(")", "')' closing exists")
            else:
                self.isl_chain(out)
            if self.at("or"):
                raise self.error("isl disjunctions ('or') are not supported: a map's domain "
                                 "is one conjunction of constraints")
            if not self.accept("and"):
                return

    def isl_chain(self, out: list[tuple[_Node, str, _Node, int]]) -> None:
        """``a op b op c ...``; ``lo <= e <= hi`` (constants at both ends) as one entry
        ``(e, "in", (lo, hi))``."""
        operands = [self.expr()]
        ops: list[Token] = []
        while self.peek().kind == "punct" and self.peek().value in ("<", "<=", ">", ">=",
                                                                        "=", "=="):
            ops.append(self.next())
            operands.append(self.expr())
        if not ops:
            raise self.error(f"expected a comparison, found {self.describe()}")
        values = [o.value for o in ops]
        if len(ops) == 2 and operands[0][0] == "int" and operands[2][0] == "int" and (
                set(values) <= {"<", "<="} or set(values) <= {">", ">="}):
            lo, hi = operands[0][1], operands[2][1]
            if values[0] in (">", ">="):
                lo, hi, values = hi, lo, values[::-1]
            lo += values[0] in ("<", ">")
            hi -= values[1] in ("<", ">")
            out.append((operands[1], "in", ("bounds", lo, hi), ops[0].offset))
            return
        for i, op in enumerate(ops):
            out.append((operands[i], "=" if op.value == "==" else op.value, operands[i + 1],
                        op.offset))

    def isl_build(self, inputs: list[tuple[str, int]], outputs: list[_Node],
                  comparisons: list[tuple[_Node, str, _Node, int]],
                  exists: list[tuple[str, int]]) -> IndexingMap:
        in_names = {n for n, _ in inputs}
        # Outputs named by a bare variable that is neither input nor existential are
        # defined by an equality "o = expr".
        defined: dict[str, _Node] = {}
        remaining: list[tuple[_Node, str, _Node, int]] = []
        exists_names = {n for n, _ in exists}
        named = {o[1] for o in outputs if o[0] == "var" and o[1] not in in_names
                 and o[1] not in exists_names}
        for left, op, right, offset in comparisons:
            if op == "=" and left[0] == "var" and left[1] in named and left[1] not in defined:
                defined[left[1]] = right
            elif op == "=" and right[0] == "var" and right[1] in named \
                    and right[1] not in defined:
                defined[right[1]] = left
            else:
                remaining.append((left, op, right, offset))
        for name in named - set(defined):
            raise self.error(f"output {name!r} is not defined by an equality "
                             f"('{name} = ...')")
        results = [defined.get(o[1], o) if o[0] == "var" else o for o in outputs]
        # Bounds on one variable become its interval; the rest, constraints.
        bounds: list[tuple[str, Interval, int]] = []
        constraints: list[tuple[_Node, str, _Node, int]] = []
        for left, op, right, offset in remaining:
            bound = _variable_bound(left, op, right)
            if bound is not None:
                bounds.append((bound[0], bound[1], offset))
            else:
                constraints.append((left, op, right, offset))
        known = in_names | exists_names
        for name, offset in self.order.items():
            if name not in known and name not in named:
                raise self.error(f"{name!r} is neither an input nor an existential "
                                 f"variable (isl parameters are not supported)", offset)
        for name, _, offset in bounds:
            if name not in known:
                raise self.error(f"{name!r} is neither an input nor an existential "
                                 f"variable", offset)
        return self.build(results, bounds, [], constraints, exists,
                          dim_order=[n for n, _ in inputs])

    # -- the map
    def build(self, results: list[_Node], bounds: list[tuple[str, Interval, int]],
              constraints: list[tuple[_Node, Interval]],
              comparisons: list[tuple[_Node, str, _Node, int]],
              exists: list[tuple[str, int]] | None = None,
              dim_order: list[str] | None = None) -> IndexingMap:
        exists = exists or []
        exists_names = [n for n, _ in exists]
        intervals: dict[str, Interval] = {}
        declared: list[str] = []
        for name, interval, _ in bounds:
            if name not in intervals:
                declared.append(name)
                intervals[name] = interval
            else:
                intervals[name] = intervals[name].intersect(interval)
        if dim_order is not None:
            dims = list(dim_order)
        else:
            dims = [n for n in declared if n not in exists_names]
            dims += [n for n in self.order if n not in intervals and n not in exists_names]
        table: dict[str, Symbol] = {n: dim(i) for i, n in enumerate(dims)}
        table.update({n: sym(i) for i, n in enumerate(exists_names)})
        unbounded = [n for n in exists_names if n not in intervals]
        if unbounded:
            raise self.error(f"existential variable {unbounded[0]!r} needs bounds (a "
                             f"range variable has an interval)")
        built: list[tuple[Expr, Interval]] = [(self.sympy(n, table), iv)
                                              for n, iv in constraints]
        env = {table[n]: intervals.get(n, INDEX) for n in table}
        for left, op, right, offset in comparisons:
            built.append(self._comparison(left, op, right, offset, table, env))
        try:
            return IndexingMap.create(
                [intervals.get(n, INDEX) for n in dims],
                [self.sympy(r, table) for r in results],
                [intervals[n] for n in exists_names], (), built,
                dims + exists_names)
        except MapError as e:
            raise self.error(str(e), 0) from None

    def _comparison(self, left: _Node, op: str, right: _Node, offset: int,
                    table: dict[str, Symbol], env: dict[Symbol, Interval]
                    ) -> tuple[Expr, Interval]:
        """``left op right`` as ``left - right in [lo, hi]`` (``left in [lo, hi]`` when
        ``right`` is a constant), the open side closed with the bounds it can take."""
        if op == "in":
            return self.sympy(left, table), Interval(right[1], right[2])
        if left[0] == "int" and right[0] != "int":
            left, right = right, left
            op = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "=": "="}[op]
        if right[0] == "int":
            difference = self.sympy(left, table)
            span = bounds_of(difference, env)
            c = right[1]
            lo, hi = {"<": (span.lo, c - 1), "<=": (span.lo, c), ">": (c + 1, span.hi),
                      ">=": (c, span.hi), "=": (c, c)}[op]
            return difference, Interval(lo, hi)
        difference = self.sympy(left, table) - self.sympy(right, table)
        span = bounds_of(difference, env)
        lo, hi = {"<": (span.lo, -1), "<=": (span.lo, 0), ">": (1, span.hi),
                  ">=": (0, span.hi), "=": (0, 0)}[op]
        return difference, Interval(lo, hi)  # empty when it cannot hold: known empty

    def sympy(self, node: _Node, table: dict[str, Symbol]) -> Expr:
        kind = node[0]
        if kind == "int":
            return Integer(node[1])
        if kind == "var":
            return table[node[1]]
        args = [self.sympy(c, table) for c in node[2:]]
        if kind == "+":
            out = args[0]
            for a in args[1:]:
                out = out + a
            return out
        if kind == "neg":
            return -args[0]
        if kind == "*":
            return args[0] * args[1]
        if kind in ("floordiv", "ceildiv", "mod"):
            divisor = args[1]
            if not divisor.is_Integer:
                raise self.error(f"the divisor of this {kind} is not a constant; "
                                 f"{self.syntax} maps divide by nonzero constants here",
                                 node[1])
            if divisor == 0:
                raise self.error(f"{kind} by zero", node[1])
            return {"floordiv": FloorDiv, "ceildiv": CeilDiv, "mod": Mod}[kind](*args)
        if kind == "min":
            return min_of(*args)
        if kind == "max":
            return max_of(*args)
        raise self.error(f"unexpected {kind}", node[1])  # pragma: no cover - invariant


def _variable_bound(left: _Node, op: str, right: Any) -> tuple[str, Interval] | None:
    """``v op c``, ``c op v`` or ``v in [lo, hi]`` as ``(v, interval)``; None for anything
    else."""
    if op == "in":
        return (left[1], Interval(right[1], right[2])) if left[0] == "var" else None
    if left[0] == "var" and right[0] == "int":
        name, value, flipped = left[1], right[1], False
    elif left[0] == "int" and right[0] == "var":
        name, value, flipped = right[1], left[1], True
    else:
        return None
    if flipped:
        op = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "=": "="}[op]
    low, high = INDEX.lo, INDEX.hi
    interval = {"<": Interval(low, value - 1), "<=": Interval(low, value),
                ">": Interval(value + 1, high), ">=": Interval(value, high),
                "=": Interval(value, value)}[op]
    return name, interval


# name -> (node kind, arity: None for two or more)
_FUNCTIONS: dict[str, dict[str, tuple[str, int | None]]] = {
    "inductor": {"FloorDiv": ("floordiv", 2), "IndexingDiv": ("floordiv", 2),
                 "CleanDiv": ("floordiv", 2), "CeilDiv": ("ceildiv", 2),
                 "ModularIndexing": ("modular", 3), "PythonMod": ("mod", 2),
                 "Mod": ("mod", 2), "Min": ("min", None), "Max": ("max", None)},
    "tvm": {"floordiv": ("floordiv", 2), "floormod": ("mod", 2), "min": ("min", None),
            "max": ("max", None)},
    "isl": {"min": ("min", None), "max": ("max", None)},
}
