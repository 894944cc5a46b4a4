"""The errors symidx raises.

Everything symidx raises on purpose is a :class:`SymidxError`; the command line turns one
into a one-line message on stderr and exit code 2. Every exception class defined anywhere
under ``symidx/`` derives from it (the internal signals too, and the command line's usage
error); ``tests/test_errors.py`` walks the package and checks it. The one exception that is
not an error, ``symidx corpus``'s SIGTERM as a :class:`KeyboardInterrupt`, stays outside,
so that no ``except Exception`` swallows it.
"""

from __future__ import annotations


class SymidxError(Exception):
    """Base class of every error symidx raises deliberately."""


class ParseError(SymidxError, ValueError):
    """Text that does not parse. Carries the 1-based line and column of the spot.

    ``str(err)`` is one line: ``line L, column C: message``; :meth:`excerpt` adds the
    offending line with a caret under the column.
    """

    def __init__(self, message: str, text: str = "", offset: int = 0, *, source: str = ""):
        offset = max(0, min(offset, len(text)))
        self.message = message
        self.text = text
        self.offset = offset
        self.source = source
        self.line = text.count("\n", 0, offset) + 1
        line_start = text.rfind("\n", 0, offset) + 1
        self.column = offset - line_start + 1
        line_end = text.find("\n", offset)
        self.line_text = text[line_start: len(text) if line_end < 0 else line_end]
        where = f"{source}:" if source else ""
        super().__init__(f"{where}line {self.line}, column {self.column}: {message}")

    def excerpt(self) -> str:
        """The offending line and a caret under the column (tabs kept for alignment)."""
        shown = self.line_text[:200]
        pad = "".join("\t" if ch == "\t" else " " for ch in self.line_text[: self.column - 1])
        return f"{shown}\n{pad[:200]}^"


class UnsupportedOpError(SymidxError):
    """An HLO op with no indexing rule. ``opcode`` names it."""

    def __init__(self, opcode: str, detail: str = ""):
        self.opcode = opcode
        super().__init__(f"unsupported op: {opcode}" + (f" ({detail})" if detail else ""))


class HloShapeError(SymidxError, ValueError):
    """An HLO instruction whose shapes or attributes do not fit its opcode."""


class HloValidationError(ParseError, HloShapeError):
    """A parsed HLO instruction that XLA's verifier would reject (wrong operand count, a
    declared shape that is not the inferred one, an attribute out of range). Located at the
    instruction, or at the attribute at fault, like any :class:`ParseError`."""


class NotFoundError(SymidxError, KeyError):
    """A name that is not there: an instruction of a computation, a computation of a module.
    A :class:`KeyError` too, for callers that catch that."""

    def __str__(self) -> str:  # KeyError quotes its argument; the message reads better bare
        return str(self.args[0]) if self.args else ""


class MapError(SymidxError, ValueError):
    """An operation on maps that does not fit them (rank mismatch, unbound variable, ...)."""


class TooLargeError(SymidxError):
    """A request whose work would exceed a stated bound (e.g. exhaustive enumeration)."""


class Undecided(SymidxError):
    """A question (are two maps equal? is this set empty?) that could not be decided: the
    maps leave Presburger arithmetic and are too large to enumerate, the time ran out, or
    no tool that could decide it is installed. ``reason`` says which."""

    def __init__(self, reason: str):
        self.reason = reason
        super().__init__(f"undecided: {reason}")


class LimitReached(SymidxError):
    """Work stopped at a limit it was given (seconds, or distinct maps held), before it
    could answer. ``limit`` names the limit, ``done`` says what was done by then; the
    command line reports it with exit code 3, like an undecided question. ``budget``: the
    limit is a number of things held (memory), not time: work done another way, holding
    less at once, may still finish."""

    def __init__(self, limit: str, done: str = "", budget: bool = False):
        self.limit = limit
        self.done = done
        self.budget = budget
        super().__init__(f"ran out of {limit}" + (f" after {done}" if done else ""))


class ArgumentTypeError(SymidxError, TypeError):
    """A public function called with an argument of the wrong type (a string where a
    module is wanted, ...): named with what was expected, rather than failing deep inside."""


def expect_type(value: object, expected: type | tuple[type, ...], name: str,
                function: str) -> None:
    """Raise :class:`ArgumentTypeError` unless ``value`` is an instance of ``expected``:
    ``function``'s argument ``name`` is named, with the type it wants and the one given."""
    if not isinstance(value, expected):
        wanted = " or ".join(t.__name__ for t in (expected if isinstance(expected, tuple)
                                                  else (expected,)))
        raise ArgumentTypeError(f"{function}: {name} must be of type {wanted}, "
                                f"not {type(value).__name__}")
