"""Turn TVM's arith test files into symidx's data table ``tests/data/tvm_arith_cases.json``.

TVM (apache/tvm) tests its integer simplifier in ``tests/python/arith/``. Their checks are
facts about TVM: an input expression, the ranges or predicates its variables are known
under, and what TVM answers. This script reads those files with :mod:`ast` (nothing is
imported or evaluated; a small interpreter follows the assignments a test makes) and
writes each check it can express as an indexing map, in TVM's own syntax as symidx's TVM
reader takes it (``parse_map(text, syntax="tvm")``):

* ``expr`` checks -- ``rewrite_simplify`` (``test_arith_rewrite_simplify.py``),
  ``canonical_simplify`` (``test_arith_canonical_simplify.py``) and ``simplify``
  (``test_arith_simplify.py``): ``before`` and TVM's ``expected`` expression over the same
  domain;
* ``range`` checks -- ``const_int_bound`` (``test_arith_const_int_bound.py``) and
  ``int_set`` (``test_arith_intset.py``): an expression, its domain, and TVM's bounds
  (``lo``/``hi``; ``null`` where the test checks one side only).

A variable's domain is its TVM type's range (``int32``: ``[-2**31, 2**31 - 1]``), narrowed
by the bounds the test binds and the preconditions it assumes; a precondition that is not
a bound on one variable becomes a constraint ``EXPR in [lo, hi]``. Checks that an
indexing map cannot state are left out, and the script prints how many for each reason:
truncated division (``truncdiv``/``truncmod``), vectors (``Ramp``/``Broadcast``),
booleans and comparisons, ``Select``/``if_then_else``, casts, unsigned arithmetic (which
wraps), divisors that are variables (symidx's TVM reader divides by constants), infinite
bounds, bounds that are expressions.

    python benchmarks/tvm_arith_convert.py TVM_CHECKOUT [--commit SHA] [--out FILE]

``TVM_CHECKOUT`` is a checkout of apache/tvm (or a folder holding the five test files).
"""

from __future__ import annotations

import argparse
import ast
import json
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

FILES = {
    "rewrite": "test_arith_rewrite_simplify.py",
    "canonical": "test_arith_canonical_simplify.py",
    "simplify": "test_arith_simplify.py",
    "const_int_bound": "test_arith_const_int_bound.py",
    "intset": "test_arith_intset.py",
}
TYPES = {"int8": 8, "int16": 16, "int32": 32, "int64": 64}
INT64 = (-(2**63), 2**63 - 1)


class Unsupported(Exception):
    """A check an indexing map cannot state; the message is the reason, as counted."""


LEFT_OUT: list[tuple[str, str]] = []  # (check, reason), for --verbose


@dataclass(frozen=True)
class Var:
    name: str
    dtype: str


@dataclass(frozen=True)
class Fn:
    """A TVM function the tests call by some name: floordiv, min, Var, const, ..."""
    kind: str


# Expression trees: ("int", v) | ("var", Var) | (op, a, b) with op in + - * floordiv
# floormod min max | ("neg", a); predicates: ("cmp", op, a, b) | ("and", [p, ...]).
Node = tuple[Any, ...]

DOTTED = {
    "floordiv": "floordiv", "floormod": "floormod", "min": "min", "max": "max",
    "truncdiv": "truncdiv", "truncmod": "truncmod", "div": "truncdiv", "Div": "truncdiv",
    "Mod": "truncmod", "Var": "Var", "var": "Var", "const": "const", "IntImm": "IntImm",
    "int32": "int32", "int64": "int64", "int8": "int8", "uint32": "uint", "uint8": "uint",
    "float32": "float", "float16": "float", "all": "all", "And": "and", "Or": "or",
    "Not": "not", "LE": "<=", "LT": "<", "GE": ">=", "GT": ">", "EQ": "==", "NE": "!=",
    "Ramp": "vector", "Broadcast": "vector", "Select": "select", "if_then_else": "select",
    "Cast": "cast", "Let": "let", "vscale": "vscale", "min_value": "min_value",
    "IntervalSet": "IntervalSet", "ConstIntBound": "ConstIntBound", "Range": "Range",
    "from_min_extent": "from_min_extent", "call_intrin": "intrinsic",
    "decl_buffer": "buffer", "BufferLoad": "buffer", "placeholder": "tensor",
    "reduce_axis": "tensor", "comm_reducer": "tensor", "sum": "tensor",
}


def dotted(node: ast.AST) -> str | None:
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


class Interp:
    """Follows a test's assignments and turns its expressions into trees."""

    def __init__(self, env: dict[str, Any]) -> None:
        self.env = env

    def value(self, node: ast.AST) -> Any:
        if isinstance(node, ast.Constant):
            if isinstance(node.value, bool) or not isinstance(node.value, int):
                raise Unsupported("booleans, floats and strings")
            return node.value
        if isinstance(node, ast.Name):
            if node.id in self.env:
                found = self.env[node.id]
                if isinstance(found, Fn) and found.kind.startswith("!"):
                    raise Unsupported(found.kind[1:])  # assigned from what is left out
                return found
            raise Unsupported(f"unknown name {node.id}")
        if isinstance(node, ast.Attribute):
            name = dotted(node)
            if name is not None and node.attr in ("NEG_INF", "POS_INF"):
                return Fn("inf")
            if name is not None and node.attr in DOTTED:
                return Fn(DOTTED[node.attr])
            raise Unsupported(f"unknown attribute {name}")
        if isinstance(node, ast.Tuple | ast.List):
            return [self.value(e) for e in node.elts]
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            inner = self.value(node.operand)
            return -inner if isinstance(inner, int) else ("neg", expr(inner))
        if isinstance(node, ast.BinOp):
            return self.binop(node)
        if isinstance(node, ast.Compare):
            if len(node.ops) != 1:
                raise Unsupported("chained comparison")
            op = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==",
                  ast.NotEq: "!="}[type(node.ops[0])]
            return ("cmp", op, expr(self.value(node.left)), expr(self.value(node.comparators[0])))
        if isinstance(node, ast.Call):
            return self.call(node)
        raise Unsupported(f"python {type(node).__name__}")

    def binop(self, node: ast.BinOp) -> Any:
        a, b = self.value(node.left), self.value(node.right)
        if isinstance(a, int) and isinstance(b, int):
            if isinstance(node.op, ast.Add):
                return a + b
            if isinstance(node.op, ast.Sub):
                return a - b
            if isinstance(node.op, ast.Mult):
                return a * b
            if isinstance(node.op, ast.FloorDiv):
                return a // b
            if isinstance(node.op, ast.Mod):
                return a % b
            if isinstance(node.op, ast.Pow):
                return a**b
            raise Unsupported("python operator on constants")
        op = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.FloorDiv: "floordiv",
              ast.Mod: "floormod"}.get(type(node.op))
        if op is None:
            raise Unsupported("truncated division" if isinstance(node.op, ast.Div)
                              else "bitwise operator")
        return (op, expr(a), expr(b))

    def call(self, node: ast.Call) -> Any:
        if isinstance(node.func, ast.Attribute) and node.func.attr in ("equal", "asobject",
                                                                        "astype"):
            if node.func.attr == "astype":
                raise Unsupported("cast")
            inner = self.value(node.func.value)
            if node.func.attr == "asobject":
                return inner
            return ("cmp", "==", expr(inner), expr(self.value(node.args[0])))
        fn = self.value(node.func)
        if not isinstance(fn, Fn):
            raise Unsupported("call of a non-function")
        kind = fn.kind
        if kind in ("floordiv", "floormod", "min", "max"):
            a, b = (expr(self.value(x)) for x in node.args)
            return (kind, a, b)
        if kind == "Var":
            name = _string(node.args[0])
            dtype = _string(node.args[1]) if len(node.args) > 1 else "int32"
            return Var(name, dtype)
        if kind in ("int32", "int64", "int8"):
            return self.value(node.args[0])
        if kind == "const":
            dtype = _string(node.args[1]) if len(node.args) > 1 else "int32"
            v = node.args[0]
            if isinstance(v, ast.Constant) and isinstance(v.value, bool):
                raise Unsupported("booleans and comparisons")
            if dtype not in TYPES:
                raise Unsupported("unsigned" if dtype.startswith("uint") else "floats")
            return self.value(v)
        if kind == "IntImm":
            dtype = _string(node.args[0]) if node.args else _string(node.keywords[0].value)
            if dtype not in TYPES:
                raise Unsupported("booleans and comparisons")
            return self.value(node.args[1] if len(node.args) > 1 else node.keywords[-1].value)
        if kind in ("<=", "<", ">=", ">", "==", "!="):
            a, b = (expr(self.value(x)) for x in node.args)
            return ("cmp", kind, a, b)
        if kind == "all":
            return ("and", [pred(self.value(x)) for x in node.args])
        if kind == "and":
            return ("and", [pred(self.value(x)) for x in node.args])
        if kind in ("ConstIntBound", "IntervalSet", "Range", "from_min_extent"):
            return (kind, [self.value(x) for x in node.args])
        reasons = {"truncdiv": "truncated division", "truncmod": "truncated division",
                   "vector": "vectors", "select": "select and if_then_else", "cast": "cast",
                   "uint": "unsigned", "float": "floats", "or": "booleans and comparisons",
                   "not": "booleans and comparisons", "vscale": "vscale",
                   "let": "let", "min_value": "type limits", "intrinsic": "intrinsics",
                   "buffer": "buffers and tensors", "tensor": "buffers and tensors",
                   "inf": "infinite bounds"}
        raise Unsupported(reasons.get(kind, kind))


def _string(node: ast.AST) -> str:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    raise Unsupported("a name that is not a string")


def expr(v: Any) -> Node:
    """An integer expression tree, or Unsupported."""
    if isinstance(v, bool):
        raise Unsupported("booleans and comparisons")
    if isinstance(v, int):
        return ("int", v)
    if isinstance(v, Var):
        if v.dtype not in TYPES:
            raise Unsupported("unsigned" if v.dtype.startswith("uint") else "floats")
        return ("var", v)
    if isinstance(v, tuple) and v and v[0] in ("int", "var", "+", "-", "*", "floordiv",
                                               "floormod", "min", "max", "neg"):
        return v
    if isinstance(v, tuple) and v and v[0] in ("cmp", "and"):
        raise Unsupported("booleans and comparisons")
    if isinstance(v, Fn) and v.kind == "inf":
        raise Unsupported("infinite bounds")
    raise Unsupported("not an integer expression")


def pred(v: Any) -> Node:
    if isinstance(v, tuple) and v and v[0] in ("cmp", "and"):
        return v
    raise Unsupported("a precondition that is not a comparison")


# ------------------------------------------------------------------ text in TVM syntax

def text(n: Node, prec: int = 0) -> str:
    kind = n[0]
    if kind == "int":
        s = str(n[1])
        return f"({s})" if n[1] < 0 and prec > 1 else s
    if kind == "var":
        return n[1].name
    if kind in ("floordiv", "floormod", "min", "max"):
        return f"{kind}({text(n[1])}, {text(n[2])})"
    if kind == "neg":
        return f"-{text(n[1], 3)}"
    if kind in ("+", "-"):
        s = f"{text(n[1], 1)} {kind} {text(n[2], 2)}"
        return f"({s})" if prec > 1 else s
    if kind == "*":
        s = f"{text(n[1], 2)} * {text(n[2], 3)}"
        return f"({s})" if prec > 2 else s
    raise AssertionError(kind)


def variables(n: Node, out: dict[str, Var]) -> dict[str, Var]:
    if n[0] == "var":
        out.setdefault(n[1].name, n[1])
    elif n[0] == "and":
        for p in n[1]:
            variables(p, out)
    elif n[0] not in ("int",):
        for c in n[1:]:
            if isinstance(c, tuple):
                variables(c, out)
    return out


def divisors_constant(n: Node) -> None:
    if n[0] in ("floordiv", "floormod") and n[2][0] != "int":
        raise Unsupported("variable divisor")
    if n[0] in ("floordiv", "floormod") and n[2][1] == 0:
        raise Unsupported("division by zero")
    for c in n[1:]:
        if isinstance(c, tuple) and c and isinstance(c[0], str):
            divisors_constant(c)


@dataclass
class Domain:
    """Variables' intervals and the constraints of one check."""
    bounds: dict[str, tuple[int, int]] = field(default_factory=dict)
    constraints: list[tuple[Node, tuple[int, int]]] = field(default_factory=list)

    def copy(self) -> Domain:
        return Domain(dict(self.bounds), list(self.constraints))

    def narrow(self, name: str, lo: int, hi: int) -> None:
        old = self.bounds.get(name, INT64)
        self.bounds[name] = (max(old[0], lo), min(old[1], hi))

    def assume(self, p: Node) -> None:
        """A precondition: a bound on one variable, else a constraint."""
        if p[0] == "and":
            for q in p[1]:
                self.assume(q)
            return
        _, op, a, b = p
        if op == "!=":
            raise Unsupported("a precondition that is not a conjunction of bounds")
        if b[0] != "int" and a[0] == "int":
            a, b = b, a
            op = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "==": "=="}[op]
        if b[0] != "int":
            a, b = ("-", a, b), ("int", 0)
        c = b[1]
        lo, hi = {"<": (INT64[0], c - 1), "<=": (INT64[0], c), ">": (c + 1, INT64[1]),
                  ">=": (c, INT64[1]), "==": (c, c)}[op]
        if a[0] == "var":
            self.narrow(a[1].name, lo, hi)
        else:
            divisors_constant(a)
            self.constraints.append((a, (lo, hi)))


def type_range(v: Var) -> tuple[int, int]:
    bits = TYPES[v.dtype]
    return (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1)


def domain_text(names: list[Var], dom: Domain) -> str:
    parts = []
    for v in names:
        lo, hi = type_range(v)
        blo, bhi = dom.bounds.get(v.name, INT64)
        lo, hi = max(lo, blo), min(hi, bhi)
        if lo > hi:
            raise Unsupported("an empty domain")
        parts.append(f"{v.name} in [{lo}, {hi}]")
    parts += [f"{text(e)} in [{lo}, {hi}]" for e, (lo, hi) in dom.constraints]
    return ", ".join(parts)


def ordered_vars(*nodes: Node, dom: Domain) -> list[Var]:
    found: dict[str, Var] = {}
    for n in nodes:
        variables(n, found)
    for e, _ in dom.constraints:
        variables(e, found)
    return sorted(found.values(), key=lambda v: v.name)


# ------------------------------------------------------------------ the test files

def module_env(tree: ast.Module) -> dict[str, Any]:
    env: dict[str, Any] = {}
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module in ("tvm.tirx", "tvm.tir"):
            for alias in node.names:
                if alias.name in DOTTED:
                    env[alias.asname or alias.name] = Fn(DOTTED[alias.name])
        if isinstance(node, ast.Assign):
            bind(env, node, Interp(env))
    env.update({"NEG_INF": Fn("inf"), "POS_INF": Fn("inf")})
    return env


def bind(env: dict[str, Any], node: ast.Assign, interp: Interp) -> None:
    target = node.targets[0]
    if isinstance(target, ast.Tuple) and isinstance(node.value, ast.Tuple):
        for t, v in zip(target.elts, node.value.elts):
            if isinstance(t, ast.Name):
                try:
                    env[t.id] = interp.value(v)
                except Unsupported as e:
                    env[t.id] = Fn("!" + str(e))
        return
    if isinstance(target, ast.Name):
        try:
            env[target.id] = interp.value(node.value)
        except Unsupported as e:
            env[target.id] = Fn("!" + str(e))


@dataclass
class Case:
    id: str
    kind: str
    text: str
    expected: str | None = None
    lo: int | None = None
    hi: int | None = None

    def row(self, source: str) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id, "source": source, "kind": self.kind,
                               "map": self.text}
        if self.kind == "expr":
            out["expected"] = self.expected
        else:
            out["lo"], out["hi"] = self.lo, self.hi
        return out


def expr_case(cid: str, before: Any, expected: Any, dom: Domain) -> Case:
    b, e = expr(before), expr(expected)
    divisors_constant(b)
    divisors_constant(e)
    names = ordered_vars(b, e, dom=dom)
    d = f", domain: {domain_text(names, dom)}" if names else ""
    return Case(cid, "expr", f"{text(b)}{d}", f"{text(e)}{d}")


def range_case(cid: str, e: Any, lo: Any, hi: Any, dom: Domain) -> Case:
    n = expr(e)
    divisors_constant(n)
    for b in (lo, hi):
        if b is not None and not isinstance(b, int):
            raise Unsupported("infinite bounds" if isinstance(b, Fn) else
                              "bounds that are expressions")
    names = ordered_vars(n, dom=dom)
    return Case(cid, "range", f"{text(n)}, domain: {domain_text(names, dom)}", lo=lo, hi=hi)


def class_cases(tree: ast.Module, env: dict[str, Any], what: str, skipped: Counter
                ) -> list[Case]:
    out: list[Case] = []
    for cls in tree.body:
        if not isinstance(cls, ast.ClassDef) or not cls.name.startswith("Test"):
            continue
        if any(dotted(d.func if isinstance(d, ast.Call) else d) == "pytest.mark.xfail"
               for d in cls.decorator_list):
            continue
        # the class's own extension flags change what TVM does: leave those classes out
        if any(isinstance(s, ast.Assign) and isinstance(s.targets[0], ast.Name) and
               s.targets[0].id == "extensions" for s in cls.body):
            continue
        cenv = dict(env)
        interp = Interp(cenv)
        calls: list[ast.Call] = []
        for stmt in cls.body:
            if isinstance(stmt, ast.Assign):
                if isinstance(stmt.targets[0], ast.Name) and stmt.targets[0].id == "test_case":
                    if isinstance(stmt.value, ast.Call) and stmt.value.args and \
                            not isinstance(stmt.value.args[0], ast.Starred):
                        calls = [a for a in stmt.value.args if isinstance(a, ast.Call)]
                    else:
                        skipped["generated cases (casts)"] += 1
                else:
                    bind(cenv, stmt, interp)
        for k, call in enumerate(calls):
            cid = f"{cls.name}/{k}"
            try:
                if what == "rewrite":
                    args = list(call.args)
                    before, expected = interp.value(args[0]), interp.value(args[1])
                    dom = Domain()
                    pre = args[2] if len(args) > 2 else None
                    for kw in call.keywords:
                        if kw.arg == "preconditions":
                            pre = kw.value
                    if pre is not None:
                        p = interp.value(pre)
                        for q in (p if isinstance(p, list) else [p]):
                            dom.assume(pred(q))
                    out.append(expr_case(cid, before, expected, dom))
                else:
                    out.append(bound_case(cid, call, interp))
            except Unsupported as e:
                skipped[str(e)] += 1
                LEFT_OUT.append((cid, str(e)))
    return out


def bound_case(cid: str, call: ast.Call, interp: Interp) -> Case:
    """const_int_bound's TestCase(expr, expected_bounds, known_bounds, constraint)."""
    args = list(call.args)
    kws = {kw.arg: kw.value for kw in call.keywords}
    e = interp.value(args[0])
    bounds = interp.value(args[1])
    known = args[2] if len(args) > 2 else kws.get("known_bounds")
    constraint = args[3] if len(args) > 3 else kws.get("constraint")
    dom = Domain()
    if known is not None:
        if not isinstance(known, ast.Dict):
            raise Unsupported("known bounds that are not a literal")
        for k, v in zip(known.keys, known.values):
            var = interp.value(k) if k is not None else None
            if not isinstance(var, Var):
                raise Unsupported("known bounds that are not a literal")
            lo, hi = interp.value(v)
            if isinstance(lo, Fn) or isinstance(hi, Fn):
                raise Unsupported("infinite bounds")
            dom.narrow(var.name, lo, hi)
    if constraint is not None:
        dom.assume(pred(interp.value(constraint)))
    lo, hi = bounds
    return range_case(cid, e, lo, hi, dom)


def function_cases(tree: ast.Module, env: dict[str, Any], what: str, skipped: Counter
                   ) -> list[Case]:
    """Tests written as functions: ``ck.verify(...)`` (canonical, int_set) and
    ``assert_structural_equal(ana.simplify(E), X)``, with the analyzer's bounds as the
    function sets them (``update``, ``bind``) up to each check."""
    out: list[Case] = []
    for fn in tree.body:
        if not isinstance(fn, ast.FunctionDef) or not fn.name.startswith("test_"):
            continue
        fenv = dict(env)
        interp = Interp(fenv)
        analyzers: dict[str, Domain] = {}
        count = 0
        for stmt in fn.body:
            if isinstance(stmt, ast.Assign):
                value, target = stmt.value, stmt.targets[0]
                if isinstance(value, ast.Call) and isinstance(target, ast.Name) and dotted(
                        value.func) in ("CanonicalChecker", "IntSetChecker",
                                        "tvm.arith.Analyzer"):
                    analyzers[target.id] = Domain()
                    continue
                bind(fenv, stmt, interp)
                continue
            found = stmt.value if isinstance(stmt, ast.Expr) else \
                stmt.test if isinstance(stmt, ast.Assert) else None
            if not isinstance(found, ast.Call):
                continue
            call = found
            name = dotted(call.func) or ""
            owner = name.split(".")[0]
            dom = analyzers.get(owner)
            if name.endswith((".update", ".bind")) and dom is not None:
                var = None
                try:
                    var = interp.value(call.args[0])
                    spec = interp.value(call.args[1])
                    if not isinstance(var, Var) or not isinstance(spec, tuple):
                        raise Unsupported("a bound that is not a range")
                    lo, hi = bounds_of(spec)
                    dom.bounds.pop(var.name, None)
                    dom.narrow(var.name, lo, hi)
                except Unsupported:
                    dom.bounds.pop(getattr(var, "name", ""), None)
                continue
            if name.endswith(".verify") and dom is not None:
                cid = f"{fn.name}/{count}"
                count += 1
                try:
                    if what == "canonical":
                        out.append(expr_case(cid, interp.value(call.args[0]),
                                             interp.value(call.args[1]), dom))
                    else:
                        out.append(intset_case(cid, call, interp, dom))
                except Unsupported as e:
                    skipped[str(e)] += 1
                    LEFT_OUT.append((cid, str(e)))
                continue
            if name == "tvm.ir.assert_structural_equal" and isinstance(call.args[0], ast.Call):
                inner = call.args[0]
                iname = dotted(inner.func) or ""
                dom = analyzers.get(iname.split(".")[0])
                if dom is None or not iname.endswith(".simplify"):
                    continue
                cid = f"{fn.name}/{count}"
                count += 1
                try:
                    out.append(expr_case(cid, interp.value(inner.args[0]),
                                         interp.value(call.args[1]), dom))
                except Unsupported as e:
                    skipped[str(e)] += 1
                    LEFT_OUT.append((cid, str(e)))
    return out


def bounds_of(spec: tuple[str, list[Any]]) -> tuple[int, int]:
    kind, args = spec
    if any(not isinstance(a, int) for a in args):
        raise Unsupported("bounds that are expressions")
    if kind in ("ConstIntBound", "IntervalSet"):
        return args[0], args[1]
    if kind == "Range":  # Range(begin, end) or Range(end): [begin, end)
        return (0, args[0] - 1) if len(args) == 1 else (args[0], args[1] - 1)
    if kind == "from_min_extent":
        return args[0], args[0] + args[1] - 1
    raise Unsupported("a bound that is not a range")


def intset_case(cid: str, call: ast.Call, interp: Interp, dom: Domain) -> Case:
    """int_set's verify(expr, {var: IntervalSet(lo, hi)}, (lo, hi))."""
    dom = dom.copy()
    dmap = call.args[1]
    if not isinstance(dmap, ast.Dict):
        raise Unsupported("a domain that is not a literal")
    for k, v in zip(dmap.keys, dmap.values):
        var = interp.value(k) if k is not None else None
        if not isinstance(var, Var):
            raise Unsupported("a domain that is not a literal")
        lo, hi = bounds_of(interp.value(v))
        dom.bounds.pop(var.name, None)
        dom.narrow(var.name, lo, hi)
    lo, hi = interp.value(call.args[2])
    return range_case(cid, interp.value(call.args[0]), lo, hi, dom)


def convert(folder: Path, commit: str) -> tuple[list[dict[str, Any]], Counter]:
    rows: list[dict[str, Any]] = []
    skipped: Counter = Counter()
    for what, name in FILES.items():
        path = folder / name
        if not path.exists():
            path = folder / "tests" / "python" / "arith" / name
        tree = ast.parse(path.read_text(), filename=str(path))
        env = module_env(tree)
        cases = class_cases(tree, env, "rewrite" if what == "rewrite" else "bound", skipped) \
            if what in ("rewrite", "const_int_bound") else function_cases(tree, env, what,
                                                                           skipped)
        source = f"apache/tvm tests/python/arith/{name}" + (f" @ {commit}" if commit else "")
        for c in cases:
            c.id = f"{name.removeprefix('test_arith_').removesuffix('.py')}/{c.id}"
            rows.append(c.row(source))
    return rows, skipped


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("tvm", type=Path, help="a checkout of apache/tvm, or the test folder")
    ap.add_argument("--commit", default="", help="the checkout's commit, for the record")
    ap.add_argument("--out", type=Path,
                    default=Path(__file__).resolve().parent.parent / "tests" / "data" /
                    "tvm_arith_cases.json")
    ap.add_argument("--verbose", action="store_true", help="list each check left out")
    args = ap.parse_args(argv)
    rows, skipped = convert(args.tvm, args.commit)
    args.out.write_text(json.dumps(rows, indent=1) + "\n")
    kinds = Counter(r["kind"] for r in rows)
    print(f"{len(rows)} checks written to {args.out} ({dict(kinds)})")
    print(f"{sum(skipped.values())} left out:")
    for reason, n in skipped.most_common():
        print(f"  {n:4d}  {reason}")
    if args.verbose:
        for cid, reason in LEFT_OUT:
            print(f"{cid}: {reason}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
