"""Which way a map points: :class:`Direction`, a ``str`` enum, so that a direction compares
equal to (and prints, and is written to JSON, as) its plain text ``output_to_input`` or
``input_to_output``. The command line and the JSON documents spell it with hyphens
(``output-to-input``); :meth:`Direction.parse` and :attr:`Direction.text` are the one
conversion between the two spellings.
"""

from __future__ import annotations

from enum import Enum

from symidx.errors import MapError

__all__ = ["Direction", "OUTPUT_TO_INPUT", "INPUT_TO_OUTPUT"]


class Direction(str, Enum):
    """Output-to-input: from an output element to the operand elements it reads;
    input-to-output: from an operand element to the output elements that read it."""

    # printed as its value, as ``enum.StrEnum`` (Python 3.11) does
    __str__ = str.__str__
    __format__ = str.__format__  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Direction.{self.name}"

    OUTPUT_TO_INPUT = "output_to_input"
    INPUT_TO_OUTPUT = "input_to_output"

    @classmethod
    def parse(cls, text: str) -> Direction:
        """The direction spelled ``text``, with hyphens (``output-to-input``, as the command
        line and the JSON documents write it) or underscores."""
        try:
            return cls(text.replace("-", "_"))
        except (ValueError, AttributeError):
            raise MapError(f"unknown direction {text!r}; choose output-to-input or "
                           "input-to-output") from None

    @property
    def text(self) -> str:
        """The direction as the command line and the JSON documents spell it
        (``output-to-input``)."""
        return self.value.replace("_", "-")


OUTPUT_TO_INPUT = Direction.OUTPUT_TO_INPUT
INPUT_TO_OUTPUT = Direction.INPUT_TO_OUTPUT
