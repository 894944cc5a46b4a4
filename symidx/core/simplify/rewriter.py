"""The expression driver: bottom-up rewriting to a fixpoint, with a hard step bound.

Children are simplified before their parent; at each node the rules of its kind
(:data:`symidx.core.simplify.table.RULES`) are tried in order and the first that applies
rewrites the node, which is then simplified again. Results are memoised per expression,
so shared sub-expressions are done once. Every application counts against ``max_steps``;
when the budget runs out the driver stops rewriting (the expression stays correct, merely
less simple) and says so (:attr:`Rewriter.exhausted`) — so it terminates on every input.
With a :class:`~symidx.core.simplify.stats.SimplifyStats`, it counts every rule it tries and
every rule that fires.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from sympy import Add, Mul, Symbol

from symidx.core.expr import ONE, Expr, Terms, bounds, constrained_bounds, rebuild, terms
from symidx.core.interval import Interval
from symidx.core.simplify.context import Context, Rule
from symidx.core.simplify.rules import (
    has_operation_term,
    is_plain,
    operation_terms,
    recombine_as_written,
    sum_of_terms,
    sum_recombine_div_mod,
)
from symidx.core.simplify.stats import DEFAULT_BUDGET, SimplifyStats
from symidx.core.simplify.table import ONE_OPERATION_SUM_RULES, RULES

DEFAULT_MAX_STEPS = DEFAULT_BUDGET.steps


@dataclass(frozen=True, slots=True)
class Step:
    """One rewrite: the rule's name, the sub-expression before and after, and the variable
    intervals under which the rewrite holds (those of the round that made it). A step on a
    constraint also has the intervals: ``before in before_interval`` holds exactly where
    ``after in after_interval`` does."""

    rule: str
    before: Expr
    after: Expr
    env: tuple[tuple[Symbol, Interval], ...] = ()
    before_interval: Interval | None = None
    after_interval: Interval | None = None
    #: constraints the rewrite also relies on (``expr in interval``; a result's rewrite
    #: may use the map's constraints, as the result is only evaluated where they hold)
    facts: tuple[tuple[Expr, Interval], ...] = ()


class Rewriter:
    """Simplifies expressions under fixed variable intervals."""

    __slots__ = ("env", "trace", "stats", "_rules", "_env_items", "max_steps", "steps_left",
                 "_starved", "_memo", "_bounds", "_prober", "facts", "_known", "_signature")

    def __init__(self, env: Mapping[Symbol, Interval], trace: list[Step] | None = None,
                 max_steps: int = DEFAULT_MAX_STEPS, stats: SimplifyStats | None = None):
        self.env = env
        self.trace = trace
        self.stats = stats
        # with counters, every rule is wrapped in one that counts (the plain table costs
        # nothing when nobody asked)
        self._rules = RULES if stats is None else _counted_table(stats)
        self._env_items = tuple(env.items()) if trace is not None else ()
        self.max_steps = max_steps
        self.steps_left = max_steps
        self._starved = False  # a node went unrewritten for want of steps
        self._memo: dict[Expr, Expr] = {}
        self._bounds: dict[Expr, Interval] = {}
        self._prober: Rewriter | None = None
        #: constraints the expressions may assume (those of the map, for its results)
        self.facts: dict[Expr, Interval] = {}
        self._known: dict[Expr, Interval] = {}
        self._signature: tuple[str | int, ...] | None = None

    @property
    def signature(self) -> tuple[str | int, ...]:
        """The variable intervals as plain values (each variable's name, its least and its
        greatest value): a key under which what this rewriter makes of an expression
        (without facts) is found again by another rewriter under the same intervals."""
        got = self._signature
        if got is None:
            parts: list[str | int] = []
            for v, b in self.env.items():
                parts += (v.name, b.lo, b.hi)
            got = self._signature = tuple(parts)
        return got

    def bounds(self, e: Expr) -> Interval:
        return bounds(e, self.env, self._bounds)

    def known_bounds(self, e: Expr) -> Interval:
        """The interval of ``e`` where the variables lie in their intervals and every
        fact holds (:func:`~symidx.core.expr.constrained_bounds`); :meth:`bounds` without
        facts."""
        if not self.facts:
            return self.bounds(e)
        got = self._known.get(e)
        if got is None:
            got = self._known[e] = constrained_bounds(e, self.env, self.facts)
        return got

    def assume(self, facts: dict[Expr, Interval]) -> None:
        """From now on, rewrite assuming ``facts`` (a map's constraints, for its results).
        Rewrites remembered so far hold without them and stay."""
        self.facts = dict(facts)
        self._known = {}
        if self._prober is not None:
            self._prober.assume(facts)

    def probe(self, e: Expr) -> Expr:
        """Simplify on the side, recording nothing (for rules that look for a partner
        term): a separate memo, so the steps are still recorded if the main pass meets the
        same expression."""
        if self._prober is None:
            self._prober = Rewriter(self.env, None, self.max_steps)
            self._prober._bounds = self._bounds
            if self.facts:
                self._prober.assume(self.facts)
        return self._prober.simplify(e)

    def simplify(self, e: Expr) -> Expr:
        if e.is_Atom:
            return e
        if is_plain(e):  # a sum of multiples of variables: no rule applies anywhere in it
            return e
        done = self._memo.get(e)
        if done is not None:
            return done
        node = self._rewrite(self._with_simplified_args(e))
        self._memo[e] = node
        if node is not e and not node.is_Atom and not is_plain(node):
            self._memo[node] = node  # (atoms and plain sums are never looked up)
        return node

    def simplify_result(self, e: Expr) -> Expr:
        """As :meth:`simplify`, for an expression that is a whole result (met once): its
        own node is neither looked up nor remembered (its sub-expressions are)."""
        if e.is_Atom or is_plain(e):
            return e
        return self._rewrite(self._with_simplified_args(e))

    @property
    def exhausted(self) -> bool:
        """Did the step budget run out (here or in a look-ahead) before a node was done?"""
        return self._starved or (self._prober is not None and self._prober.exhausted)

    def _rewrite(self, node: Expr) -> Expr:
        table = self._rules
        while not node.is_Atom:
            if type(node) is Add:
                count = operation_terms(node)
                if not count:
                    return node  # the sum rules pair up divisions, mins and maxes
                # one such term: the rules that pair two cannot apply (with counters,
                # every rule is tried, so that they count every try)
                rules = table[Add] if count > 1 or self.stats is not None \
                    else ONE_OPERATION_SUM_RULES
            else:
                rules = table.get(type(node), ())
            if self.steps_left <= 0:
                self._starved = bool(rules) or self._starved
                return node
            for rule in rules:
                new = rule(node, self)
                if new is None or new is node or (type(new) is type(node) and new == node):
                    continue
                self.steps_left -= 1
                if self.trace is not None:
                    self.trace.append(Step(rule.__name__, node, new, self._env_items,
                                           facts=tuple(self.facts.items())))
                if new.is_Atom or is_plain(new):  # no rule applies inside it
                    node = new
                else:
                    node = self._memo.get(new) or self._with_simplified_args(new)
                break
            else:
                return node
        return node

    def _with_simplified_args(self, e: Expr) -> Expr:
        """``e`` with its arguments simplified. A sum is rebuilt as one flat sum: a term
        ``k*t`` whose ``t`` simplifies to a sum contributes that sum's terms times ``k``
        (what rebuilding ``k*t`` and then the sum would give, without the intermediate
        sum)."""
        if e.is_Atom:
            return e
        args = e._args
        if type(e) is not Add:
            new_args = tuple([self.simplify(a) for a in args])
            return rebuild(e, new_args) if new_args != args else e
        if self.steps_left > 0 and has_operation_term(e):
            joined = self._recombined(e)
            if joined is not e:
                return self._with_simplified_args(joined)
        changed = False
        parts: Terms = []
        for t in args:  # the terms (coefficient, monomial), as terms() splits them
            if t.is_Atom:
                parts.append((int(t), ONE) if t.is_Integer else (1, t))
                continue
            k, u = 1, t
            if type(t) is Mul:
                targs = t._args
                if len(targs) == 2 and targs[0].is_Integer:
                    k, u = int(targs[0]), targs[1]
            new = self.simplify(u)
            if new is u:
                parts.append((k, u))
                continue
            changed = True
            if new.is_Integer:
                parts.append((k * int(new), ONE))
            else:
                parts.extend([(k * c, m) for c, m in terms(new)])
        return sum_of_terms(parts) if changed else e


    def _recombined(self, e: Expr) -> Expr:
        """``e`` with every pair ``k*c*F(x, c) + k*M(x, c)`` written alike replaced by
        ``k*x`` (:func:`~symidx.core.simplify.rules.recombine_as_written`), each a step of
        ``sum_recombine_div_mod`` (the same identity, found before the terms are
        simplified); ``e`` itself when there is none."""
        name = sum_recombine_div_mod.__name__
        while self.steps_left > 0 and type(e) is Add:
            joined = recombine_as_written(e)
            if self.stats is not None:
                count = self.stats.rule(name)
                count.tried += 1
                if joined is not None:
                    count.fired += 1
                    self.stats.steps += 1
            if joined is None:
                break
            self.steps_left -= 1
            if self.trace is not None:
                self.trace.append(Step(name, e, joined, self._env_items,
                                       facts=tuple(self.facts.items())))
            e = joined
        return e


def _counted_table(stats: SimplifyStats) -> dict[type, tuple[Rule, ...]]:
    """:data:`~symidx.core.simplify.table.RULES` with every rule counting into ``stats``."""
    return {kind: tuple(_counted(rule, stats) for rule in rules) for kind, rules in RULES.items()}


def _counted(rule: Rule, stats: SimplifyStats) -> Rule:
    """``rule``, counting each try and each firing (a rewrite to another expression) into
    ``stats``; it keeps the rule's name, which the trace records."""
    name = rule.__name__

    def counted(node: Expr, ctx: Context) -> Expr | None:
        new = rule(node, ctx)
        count = stats.rule(name)
        count.tried += 1
        if new is not None and new != node:
            count.fired += 1
            stats.steps += 1
        return new

    counted.__name__ = name
    return counted
