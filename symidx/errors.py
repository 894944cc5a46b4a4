"""The errors symidx raises.

Everything symidx raises on purpose is a :class:`SymidxError`; the command line turns one
into a one-line message on stderr and exit code 2. Every exception class defined anywhere
under ``symidx/`` derives from it (the internal signals too, and the command line's usage
error); ``tests/test_errors.py`` walks the package and checks it. The one exception that is
not an error, ``symidx corpus``'s SIGTERM as a :class:`KeyboardInterrupt`, stays outside,
so that no ``except Exception`` swallows it.
"""

from __future__ import annotations

from symidx._text import terminal_safe


class SymidxError(Exception):
    """Base class of every error symidx raises deliberately."""


EXCERPT_WIDTH = 100
"""Characters of the offending line a :class:`ParseError`'s excerpt shows at most."""


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
        """The offending line and a caret under the column (tabs kept for alignment): at
        most about :data:`EXCERPT_WIDTH` characters of it as shown, around the column
        (``...`` where it is cut), and what a terminal would act on -- escape sequences,
        carriage returns, NULs, the rest of a binary file -- shown as ``\\xNN``
        (:func:`symidx._text.terminal_safe`), never sent to it."""
        line, at = self.line_text, self.column - 1
        lo = max(0, at - EXCERPT_WIDTH)  # each character shows as one or more
        shown = [terminal_safe(ch) for ch in line[lo:at + EXCERPT_WIDTH]]
        at -= lo
        start, end, width = at, at, 0  # the window shown[start:end], ``width`` wide

        def fits(piece: str, budget: int) -> bool:
            return width + len(piece) <= budget

        while start > 0 and fits(shown[start - 1], EXCERPT_WIDTH // 2):  # half before
            start -= 1
            width += len(shown[start])
        while end < len(shown) and fits(shown[end], EXCERPT_WIDTH):  # the rest after
            width += len(shown[end])
            end += 1
        while start > 0 and fits(shown[start - 1], EXCERPT_WIDTH):  # more before if room
            start -= 1
            width += len(shown[start])
        before = ("..." if lo + start > 0 else "") + "".join(shown[start:at])
        after = "".join(shown[at:end]) + ("..." if lo + end < len(line) else "")
        pad = "".join("\t" if ch == "\t" else " " for ch in before)
        return f"{before}{after}\n{pad}^"


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
