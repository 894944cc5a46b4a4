"""How every object a user holds shows in a notebook: one helper for all of them.

A class mixes in :class:`Rich` and says what it shows in :meth:`Rich._shown_`: a
:class:`Shown` -- its plain text (what ``print``-like displays and ``text/plain`` give), an
HTML table or other HTML (``text/html``), and, for a picture, a function drawing it. A
picture shows as an image (``image/png`` and ``image/svg+xml``); its text, in ``<pre>``, is
the HTML only when no image can be drawn (no matplotlib, or too large), so a notebook never
prefers the text to the picture. :class:`Drawing` is a matplotlib ``Figure`` that shows as
an image; its ``figure`` is the ``Figure`` (and attributes not its own are the figure's).
:func:`html_table` writes the tables.

matplotlib is never imported here: a drawing function imports it.
"""

from __future__ import annotations

import importlib.util
import io
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from symidx.errors import SymidxError

__all__ = ["Drawing", "Rich", "Shown", "html_table", "pre"]


class Drawing:
    """A matplotlib ``Figure`` that a notebook shows as an image: ``_repr_png_``,
    ``_repr_svg_``. ``figure`` is the ``Figure`` itself; any other attribute is the
    figure's (``drawing.axes``, ``drawing.savefig(...)``)."""

    __slots__ = ("figure",)

    def __init__(self, figure: Any) -> None:
        object.__setattr__(self, "figure", figure)

    def __getattr__(self, name: str) -> Any:
        return getattr(object.__getattribute__(self, "figure"), name)

    def image(self, fmt: str = "png") -> bytes:
        """The picture as ``png`` or ``svg`` bytes."""
        out = io.BytesIO()
        self.figure.savefig(out, format=fmt, dpi=100, bbox_inches="tight")
        return out.getvalue()

    def save(self, path: str) -> None:
        """Write the picture: SVG for a ``.svg`` path, else PNG; a failed write is an
        error naming the file."""
        data = self.image("svg" if str(path).lower().endswith(".svg") else "png")
        try:
            with open(path, "wb") as f:
                f.write(data)
        except OSError as e:
            raise SymidxError(f"cannot write {path}: {e.strerror or e}") from None

    def _repr_png_(self) -> bytes:
        return self.image("png")

    def _repr_svg_(self) -> str:
        return self.image("svg").decode("utf-8")

    def title(self) -> str:
        found = self.figure.get_suptitle() if hasattr(self.figure, "get_suptitle") else ""
        return str(found).split("\n", 1)[0]

    def __repr__(self) -> str:
        return f"<Drawing: {self.title() or 'a figure'}>"

    def _repr_pretty_(self, p: Any, cycle: bool) -> None:
        p.text(repr(self))


@dataclass(frozen=True)
class Shown:
    """What an object shows: ``text`` (plain), ``html`` (None: the text in ``<pre>``),
    ``draw`` (None, or a function returning a :class:`Drawing` or a ``Figure``, raising
    :class:`~symidx.errors.SymidxError` when it cannot), ``drawable`` (False when the
    picture would be too large to draw: the text shows), ``fallback``."""

    text: str
    html: str | None = None
    draw: Callable[[], Any] | None = None
    drawable: bool = True
    #: A longer text shown (in ``<pre>``) instead of a picture that cannot be drawn, such
    #: as a grid of offsets; None: ``text``.
    fallback: str | None = None


def pre(text: str) -> str:
    """``text`` as HTML, kept as it is laid out."""
    import html  # notebooks only: not at the command line's start

    return f"<pre>{html.escape(text)}</pre>"


def html_table(header: Sequence[str], rows: Sequence[Sequence[object]], caption: str = "",
               raw: Sequence[int] = ()) -> str:
    """An HTML table: ``caption`` above it, the cells escaped (except the columns listed in
    ``raw``, which hold HTML already)."""
    import html

    lines = [f"<p>{html.escape(caption)}</p>"] if caption else []
    lines.append("<table><tr>" + "".join(f"<th>{html.escape(h)}</th>" for h in header)
                 + "</tr>")
    for row in rows:
        lines.append("<tr>" + "".join(
            f"<td>{cell if k in raw else html.escape(str(cell))}</td>"
            for k, cell in enumerate(row)) + "</tr>")
    lines.append("</table>")
    return "\n".join(lines)


def _image(shown: Shown, fmt: str) -> bytes | None:
    if shown.draw is None or not shown.drawable:
        return None
    try:
        found = shown.draw()
    except SymidxError:  # no matplotlib, or too large to draw: the text shows instead
        return None
    drawing = found if isinstance(found, Drawing) else Drawing(found)
    return drawing.image(fmt)


def _can_draw() -> bool:
    """Whether matplotlib can be imported (without importing it)."""
    if "matplotlib" in sys.modules:
        return sys.modules["matplotlib"] is not None
    try:
        return importlib.util.find_spec("matplotlib") is not None
    except (ImportError, ValueError):
        return False


class Rich:
    """The notebook displays of an object, from its :meth:`_shown_`."""

    __slots__ = ()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        # IPython's plain-text printer takes a class's own __repr__ (a dataclass's) before
        # a _repr_pretty_ it inherits: each class holds its own.
        cls._repr_pretty_ = Rich._repr_pretty_  # type: ignore[method-assign]

    def _shown_(self) -> Shown:
        raise NotImplementedError

    def _repr_html_(self) -> str | None:
        shown = self._shown_()
        if shown.html is not None:
            return shown.html
        if shown.draw is not None and shown.drawable and _can_draw():
            return None  # the picture shows
        return pre(shown.text if shown.fallback is None else shown.fallback)

    def _repr_png_(self) -> bytes | None:
        return _image(self._shown_(), "png")

    def _repr_svg_(self) -> str | None:
        found = _image(self._shown_(), "svg")
        return None if found is None else found.decode("utf-8")

    def _repr_pretty_(self, p: Any, cycle: bool) -> None:
        p.text(self._shown_().text)
