"""StableHLO and MHLO text (MLIR), as JAX prints it: recognised, and converted to HLO text
with jaxlib.

``jax.jit(f).lower(x).as_text()`` is StableHLO, a dialect of MLIR, not HLO text. symidx does
not parse MLIR itself: :func:`mlir_to_hlo` hands the text to jaxlib's converter (the one
``jax`` uses to compile, ``mlir_module_to_xla_computation``) and prints the HLO module it
builds with its metadata, so that the instructions keep the names MLIR's locations give them
(``%arg0 loc("x")`` becomes the parameter ``x.1``) and each keeps its ``op_name`` and source
file and line (:mod:`symidx.hlo.locations`). jaxlib is the ``jax`` extra
(``pip install 'symidx[jax]'``), imported only here, on first use.

:func:`looks_like_mlir` tells the two kinds of text apart by their first tokens, so that
:func:`symidx.hlo.parse_module` can take either, and :func:`symidx.hlo.parse_hlo` can say what
it was given when it is MLIR.
"""

from __future__ import annotations

from symidx._text import lazy_pattern
from symidx.errors import ParseError, SymidxError

__all__ = ["INSTALL_HINT", "looks_like_mlir", "mlir_to_hlo", "mlir_hint"]

#: What to do without jaxlib.
INSTALL_HINT = ("converting it needs jaxlib: pip install 'symidx[jax]', or print HLO text "
                "instead with jax.jit(f).lower(x).as_text(dialect='hlo')")

# Blank space and comments before the first token.
_LEAD_RE = lazy_pattern(r"(?:\s+|//[^\n]*)*")
# The first token of MLIR text: an attribute or location alias (#loc = ..., #map = ...), a
# module with a symbol name or attributes (or holding MLIR), a function, or a generic-form
# module or function.
_MLIR_START_RE = lazy_pattern(
    r"#[A-Za-z_][\w$.]*\s*="
    r"|module\s*(?:@|attributes\b|\{\s*(?://[^\n]*\s*)*(?:func\.func|\"|#|\}))"
    r"|func\.func\s+(?:(?:public|private|nested)\s+)?@|\"(?:builtin\.module|func\.func)\"")
# jaxlib's diagnostics: "-:LINE:COLUMN: error: MESSAGE" (the text is read as "-").
_DIAGNOSTIC_RE = lazy_pattern(r"(?:^|\s)(?:-|<stdin>):(\d+):(\d+): error: ([^\n]*)")


def looks_like_mlir(text: str) -> bool:
    """Whether ``text`` starts as MLIR (StableHLO, MHLO) text does, rather than HLO text."""
    start = _LEAD_RE.match(text)
    return bool(_MLIR_START_RE.match(text, start.end() if start else 0))


def mlir_hint(source: str = "") -> str:
    """What a reader of HLO text says when it is given MLIR text."""
    where = f"{source}: " if source else ""
    return (f"{where}this is MLIR text (StableHLO or MHLO, as jax.jit(f).lower(x).as_text() "
            f"prints it), not HLO text: read it with symidx.parse_module or `symidx maps`, "
            f"which convert it with jaxlib (pip install 'symidx[jax]'), or print HLO text "
            f"with .as_text(dialect='hlo')")


def mlir_to_hlo(text: str, source: str = "") -> str:
    """The HLO text of a StableHLO or MHLO module, converted by jaxlib, with metadata
    (``op_name``, source file and line: where the MLIR has no debug locations, the line of
    the op in ``source`` itself) and every constant in full.

    Raises :class:`~symidx.errors.SymidxError` with the install hint when jaxlib is missing,
    and :class:`~symidx.errors.ParseError` at the line and column jaxlib reports when the
    text is not a module it can convert.
    """
    try:
        from jax._src.lib import xla_client
        from jaxlib import _hlo  # type: ignore[attr-defined]
    except ImportError:
        where = f"{source}: " if source else ""
        raise SymidxError(f"{where}this is MLIR text (StableHLO or MHLO); "
                          f"{INSTALL_HINT}") from None
    try:
        computation = xla_client._xla.mlir.mlir_module_to_xla_computation(
            text, use_tuple_args=False, return_tuple=False)
    except Exception as e:  # noqa: BLE001 - jaxlib raises its own runtime errors
        raise _conversion_error(str(e), text, source) from None
    options = _hlo.HloPrintOptions()
    options.print_metadata = True
    options.print_large_constants = True
    hlo = str(computation.get_hlo_module().to_string(options))
    # Without debug locations, jaxlib locates each op in the MLIR text itself, which it read
    # as "-": name the file instead.
    label = source.replace("\\", "\\\\").replace('"', '\\"') if source else "<mlir>"
    return hlo.replace('source_file="-"', f'source_file="{label}"')


def _conversion_error(message: str, text: str, source: str) -> SymidxError:
    """jaxlib's complaint, located in ``text`` when it names a line and column."""
    found = _DIAGNOSTIC_RE.search(message)
    if found is None:
        first = message.strip().splitlines()[0] if message.strip() else "no reason given"
        where = f"{source}: " if source else ""
        return SymidxError(f"{where}jaxlib could not convert this MLIR module: {first}")
    line, column = int(found.group(1)), int(found.group(2))
    lines = text.split("\n")
    offset = sum(len(x) + 1 for x in lines[: line - 1]) + column - 1 if line <= len(lines) \
        else len(text)
    return ParseError(f"{found.group(3)} (MLIR, read by jaxlib)", text, offset, source=source)
