"""Indexing maps of what JAX compiles: :func:`from_jax` and :func:`load_function`.

::

    import jax.numpy as jnp, symidx
    analysis = symidx.from_jax(lambda x: x.T + 1, jnp.ones((4, 8)))
    for fusion in analysis.fusions:
        print(fusion.instr.name, [str(m) for g in fusion.groups for m in g.maps])

:func:`from_jax` jits the function, lowers and compiles it for the CPU, parses the optimised
HLO (``compiled.as_text()``) and computes the maps of every fusion instruction through its
fused computation (:func:`symidx.analysis.module_fusion_maps`).
:func:`symidx.cli.render.render_fusions` prints them as ``symidx maps --all`` does. JAX is
optional (``pip install 'symidx[jax]'``) and imported only here, on first use.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from symidx.analysis import FusionMaps, module_fusion_maps
from symidx.errors import SymidxError
from symidx.hlo import HloModule, parse_hlo
from symidx.ops import OUTPUT_TO_INPUT, Direction

__all__ = ["JaxAnalysis", "from_jax", "compiled_hlo", "load_function", "load_value"]


@dataclass(frozen=True)
class JaxAnalysis:
    """What :func:`from_jax` found: the optimised HLO text, the parsed module and, for every
    fusion instruction (in text order), its map groups: one
    :class:`~symidx.analysis.FusionMaps` per output (output-to-input) or per operand
    (input-to-output)."""

    hlo_text: str
    module: HloModule
    direction: Direction
    fusions: tuple[FusionMaps, ...]

    def fusion(self, name: str, index: int = 0) -> FusionMaps:
        """The maps of fusion ``name`` for its output (or operand) ``index``."""
        for f in self.fusions:
            if f.instr.name == name and f.index == index:
                return f
        names = sorted({f.instr.name for f in self.fusions})
        raise SymidxError(f"no fusion named {name!r} with index {index}; the module has "
                          f"{', '.join(names) or 'none'}")


def _jax() -> Any:
    try:
        import jax
    except ImportError:
        raise SymidxError("JAX is not installed: pip install 'symidx[jax]'") from None
    return jax


def compiled_hlo(fn: Callable[..., Any], *example_args: Any) -> str:
    """The optimised HLO text of ``jax.jit(fn)`` compiled for the CPU on ``example_args``
    (arrays, or ``jax.ShapeDtypeStruct`` for shapes only)."""
    jax = _jax()
    with jax.default_device(jax.devices("cpu")[0]):
        try:
            compiled = jax.jit(fn).lower(*example_args).compile()
        except Exception as e:  # the user's function failed to trace, lower or compile
            raise SymidxError(f"JAX could not compile {_name(fn)}: "
                              f"{type(e).__name__}: {e}") from e
    text = compiled.as_text()
    if not text:
        raise SymidxError(f"JAX returned no HLO text for {_name(fn)}")
    return str(text)


def from_jax(fn: Callable[..., Any], *example_args: Any,
             direction: Direction = OUTPUT_TO_INPUT, assume_finite: bool = False
             ) -> JaxAnalysis:
    """Compile ``fn`` with JAX on the CPU for ``example_args`` and compute the maps of every
    fusion of the optimised module, in ``direction`` (by default output-to-input: for each
    output of each fusion, one group of maps per operand), under the ``reads`` semantics
    (or ``finite`` with ``assume_finite=True``: see :class:`symidx.fusion.Analysis`)."""
    text = compiled_hlo(fn, *example_args)
    module = parse_hlo(text, source=f"<jax: {_name(fn)}>")
    return JaxAnalysis(text, module, direction, tuple(module_fusion_maps(
        module, direction, assume_finite=assume_finite)))


def _name(fn: Callable[..., Any]) -> str:
    return str(getattr(fn, "__name__", None) or repr(fn))


def load_function(spec: str) -> Callable[..., Any]:
    """The function named by ``module:function`` (``package.module:Class.method`` for an
    attribute path, ``path/to/file.py:function`` for a file). This imports, and so runs,
    the user's module."""
    target = load_value(spec)
    if not callable(target):
        raise SymidxError(f"{spec!r} is not callable")
    return target


def load_value(spec: str) -> Any:
    """The object named by ``module:attribute`` (as :func:`load_function`, any object)."""
    module_name, sep, attribute = spec.rpartition(":")
    if not sep or not module_name or not attribute:
        raise SymidxError(f"expected module:function, got {spec!r}")
    module = _import(module_name)
    target: Any = module
    for part in attribute.split("."):
        try:
            target = getattr(target, part)
        except AttributeError:
            raise SymidxError(f"{module_name!r} has no attribute {attribute!r}") from None
    return target


def _import(name: str) -> Any:
    """A module by dotted name (found on ``sys.path`` or in the working directory), or
    from a ``.py`` file path."""
    try:
        if name.endswith(".py"):
            path = Path(name)
            spec = importlib.util.spec_from_file_location(path.stem, path)
            if spec is None or spec.loader is None or not path.is_file():
                raise SymidxError(f"no Python file {name!r}")
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            return module
        if "" not in sys.path and os.getcwd() not in sys.path:
            sys.path.insert(0, os.getcwd())  # as `python -m` would: modules beside the user
        return importlib.import_module(name)
    except SymidxError:
        raise
    except Exception as e:  # anything the user's module raises while it loads
        raise SymidxError(f"cannot import {name!r}: {type(e).__name__}: {e}") from e
