"""What the simplifier may spend (:class:`Budget`) and what it did (:class:`SimplifyStats`).

The counters are kept only when asked for (``simplify(m, trace=True)``): per rule, how often
it was tried and how often it fired; per pass, how often it ran and how many things it
changed; and which budget ran out, if one did. A budget that runs out leaves a correct map,
only less simplified than it could be.
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["Budget", "SimplifyStats", "Count", "DEFAULT_BUDGET"]


@dataclass(frozen=True, slots=True)
class Budget:
    """The limits that make the simplifier terminate on every input.

    ``rounds``: rounds of all passes (a round repeats while it tightens intervals);
    ``steps``: expression rewrites per rewriting pass of a round;
    ``folds``: constraint-rule applications to one constraint in a round."""

    rounds: int = 8
    steps: int = 2_000
    folds: int = 16


DEFAULT_BUDGET = Budget()


@dataclass(slots=True)
class Count:
    """How often something was tried (a rule; a pass: run) and how often it did something
    (a rule fired; a pass changed that many constraints, intervals or results)."""

    tried: int = 0
    fired: int = 0


@dataclass(slots=True)
class SimplifyStats:
    """Counters of one :func:`~symidx.core.simplify.simplify` call.

    ``rules`` by rule name (expression and constraint rules; a rule's look-ahead probes,
    which record nothing, are not counted), ``passes`` by pass name, ``rounds`` run,
    ``steps`` rewrites made, and ``exhausted``: a line per budget that ran out (empty when
    the simplifier finished)."""

    rules: dict[str, Count] = field(default_factory=dict)
    passes: dict[str, Count] = field(default_factory=dict)
    rounds: int = 0
    steps: int = 0
    exhausted: list[str] = field(default_factory=list)

    def rule(self, name: str) -> Count:
        got = self.rules.get(name)
        if got is None:
            got = self.rules[name] = Count()
        return got

    def ran(self, name: str, changes: int) -> None:
        got = self.passes.get(name)
        if got is None:
            got = self.passes[name] = Count()
        got.tried += 1
        got.fired += changes

    def ran_out(self, what: str) -> None:
        if what not in self.exhausted:
            self.exhausted.append(what)

    @property
    def complete(self) -> bool:
        """Did the simplifier finish within its budget?"""
        return not self.exhausted

    def report(self) -> list[str]:
        """The counters as text lines (what ``symidx simplify --explain`` prints)."""
        lines = [f"{self.rounds} round(s), {self.steps} rewrite step(s)", "passes (run / changed):"]
        lines += [f"  {name:28} {c.tried:>6} / {c.fired}" for name, c in self.passes.items()]
        lines.append("rules (tried / fired):")
        lines += [f"  {name:28} {c.tried:>6} / {c.fired}"
                  for name, c in sorted(self.rules.items())]
        if self.exhausted:
            lines += [f"budget exhausted: {what}" for what in self.exhausted]
            lines.append("the map is correct, but may be less simple than it could be")
        else:
            lines.append("budget: finished within it")
        return lines
