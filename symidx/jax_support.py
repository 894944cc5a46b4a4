"""Indexing maps of what JAX compiles: :func:`from_jax`, :func:`capture` and
:func:`load_function`.

::

    import jax.numpy as jnp, symidx
    analysis = symidx.from_jax(lambda x: x.T + 1, jnp.ones((4, 8)))
    for fusion in analysis.fusions:
        print(fusion.instr.name, [str(m) for g in fusion.groups for m in g.maps])

:func:`from_jax` jits the function, lowers and compiles it for the CPU, parses the optimised
HLO (``compiled.as_text()``) and computes the maps of every fusion instruction through its
fused computation (:func:`symidx.analysis.module_fusion_maps`); with ``stage="lowered"`` it
reads the module as lowered instead (StableHLO, converted by jaxlib: no fusions yet, so
analyse it whole with :func:`symidx.analysis.computation_maps`).

:func:`capture` collects, in process, every module JAX compiles while it is open (through
JAX's public compiler hook ``jax.extend.xla.register_hlo_module_transformation``, or for
the modules as lowered its ``jax_dump_ir_to`` option)::

    with symidx.capture() as modules:
        f(x)
    for fusion in modules[-1].analyse().fusions: ...

:func:`symidx.cli.render.render_fusions` prints them as ``symidx maps --all`` does. JAX is
optional (``pip install 'symidx[jax]'``) and imported only here, on first use.
"""

from __future__ import annotations

import html
import importlib
import importlib.util
import itertools
import os
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from symidx._display import Rich, Shown
from symidx.analysis import FusionMaps, module_fusion_maps
from symidx.core.indexing_map.direction import OUTPUT_TO_INPUT, Direction
from symidx.errors import SymidxError
from symidx.hlo import HloModule, parse_hlo
from symidx.hlo.mlir import mlir_to_hlo

__all__ = ["STAGES", "CapturedModule", "JaxAnalysis", "capture", "from_jax", "compiled_hlo",
           "example_args", "lowered_hlo", "load_function", "load_value"]

#: The stages a module can be taken at: as lowered (StableHLO, before XLA optimises it),
#: optimised (before scheduling) and scheduled (the module XLA compiles to code).
Stage = Literal["lowered", "optimized", "scheduled"]
STAGES: tuple[str, ...] = ("lowered", "optimized", "scheduled")


@dataclass(frozen=True)
class JaxAnalysis(Rich):
    """What :func:`from_jax` found: the optimised HLO text, the parsed module and, for every
    fusion instruction (in text order), its map groups: one
    :class:`~symidx.analysis.FusionMaps` per output (output-to-input) or per operand
    (input-to-output)."""

    hlo_text: str = field(repr=False)
    module: HloModule = field(repr=False)
    direction: Direction
    fusions: tuple[FusionMaps, ...]

    def to_dict(self) -> dict[str, Any]:
        """The maps as JSON-able data: the ``symidx.maps/1`` document of ``symidx maps
        --all`` (``docs/json.md``)."""
        from symidx.analysis.documents import fusions_document

        return fusions_document(self.module, self.direction, self.fusions)

    def _shown_(self) -> Shown:
        """A table of the fusions' map groups (what a notebook shows)."""
        from symidx.analysis.display import groups_table_html

        title = (f"module {self.module.name}: {len(self.fusions)} fusion groups, "
                 f"{Direction(self.direction).text}")
        text = "\n".join([title] + [f"  {f.instr.name} {f.index}: {len(f.groups)} groups"
                                     for f in self.fusions])
        return Shown(text, f"<p>{html.escape(title)}</p>\n"
                     + groups_table_html(self.fusions, self.direction))

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


def lowered_hlo(fn: Callable[..., Any], *example_args: Any) -> str:
    """The HLO text of ``jax.jit(fn)`` as lowered for the CPU on ``example_args``, before
    XLA optimises it: JAX's StableHLO with its debug locations, converted by jaxlib (so the
    instructions carry the argument names, ``op_name`` and source lines)."""
    jax = _jax()
    with jax.default_device(jax.devices("cpu")[0]):
        try:
            lowered = jax.jit(fn).lower(*example_args)
        except Exception as e:  # the user's function failed to trace or lower
            raise SymidxError(f"JAX could not lower {_name(fn)}: "
                              f"{type(e).__name__}: {e}") from e
    try:
        mlir = lowered.as_text(debug_info=True)
    except TypeError:  # a JAX without debug_info
        mlir = lowered.as_text()
    return mlir_to_hlo(str(mlir), f"<jax: {_name(fn)}>")


def from_jax(fn: Callable[..., Any], *example_args: Any,
             direction: Direction = OUTPUT_TO_INPUT,
             stage: Literal["compiled", "lowered"] = "compiled",
             assume_finite: bool = False) -> JaxAnalysis:
    """Compile ``fn`` with JAX on the CPU for ``example_args`` and compute the maps of every
    fusion of the optimised module, in ``direction`` (by default output-to-input: for each
    output of each fusion, one group of maps per operand), under the ``reads`` semantics
    (or ``finite`` with ``assume_finite=True``: see :class:`symidx.fusion.Analysis`).
    ``stage="lowered"`` takes the module as lowered instead (:func:`lowered_hlo`), which has
    no fusions yet: its ``module`` is for :func:`symidx.analysis.computation_maps`."""
    if stage not in ("compiled", "lowered"):
        raise SymidxError(f"stage must be 'compiled' or 'lowered', not {stage!r}")
    text = compiled_hlo(fn, *example_args) if stage == "compiled" \
        else lowered_hlo(fn, *example_args)
    module = parse_hlo(text, source=f"<jax: {_name(fn)}>")
    return JaxAnalysis(text, module, direction, tuple(module_fusion_maps(
        module, direction, assume_finite=assume_finite)))


@dataclass
class CapturedModule:
    """A module JAX compiled while :func:`capture` was open: its HLO text (with metadata),
    the stage it was taken at, and, parsed on first use, the module."""

    hlo_text: str
    stage: str
    _module: HloModule | None = field(default=None, repr=False)

    @property
    def name(self) -> str:
        return self.module.name

    @property
    def module(self) -> HloModule:
        if self._module is None:
            self._module = parse_hlo(self.hlo_text, source=f"<captured {self.stage} module>",
                                     validate=False)
        return self._module

    def analyse(self, direction: Direction = OUTPUT_TO_INPUT, assume_finite: bool = False
                ) -> JaxAnalysis:
        """The maps of every fusion of the module, as :func:`from_jax` gives them."""
        return JaxAnalysis(self.hlo_text, self.module, direction, tuple(module_fusion_maps(
            self.module, direction, assume_finite=assume_finite)))

    def __repr__(self) -> str:
        first = self.hlo_text.split("\n", 1)[0]
        return f"<CapturedModule {self.stage}: {first[:80]}>"


_CAPTURES = itertools.count()


@contextmanager
def capture(stage: Stage = "optimized", platforms: str | tuple[str, ...] = "cpu"
            ) -> Iterator[list[CapturedModule]]:
    """Collect every module JAX compiles inside the ``with`` block, in order, as
    :class:`CapturedModule` values (the list fills as they are compiled)::

        with symidx.capture() as modules:
            jax.jit(f)(x)
        analysis = modules[-1].analyse()

    ``stage``: ``"optimized"`` (default), the module after XLA's optimisations, with its
    fusions, before scheduling; ``"scheduled"``, after scheduling; both through
    ``jax.extend.xla.register_hlo_module_transformation`` (JAX 0.10.2 or later), for the
    backends in ``platforms``. ``"lowered"``: the StableHLO JAX hands to XLA, before any
    optimisation (through JAX's ``jax_dump_ir_to`` option, converted by jaxlib). A function
    JAX has compiled before, with the same shapes, is not compiled again, so is not seen:
    capture around its first call."""
    if stage not in STAGES:
        raise SymidxError(f"stage must be one of {', '.join(STAGES)}, not {stage!r}")
    jax = _jax()
    modules: list[CapturedModule] = []
    if stage == "lowered":
        with _dumped_ir(jax, modules):
            yield modules
        return
    try:
        from jax.extend.xla import (
            PipelineStage,
            clear_hlo_module_transformation,
            register_hlo_module_transformation,
        )
        from jaxlib import _hlo  # type: ignore[attr-defined]
    except ImportError:
        raise SymidxError("capturing optimised modules needs JAX's compiler hook "
                          "(jax.extend.xla.register_hlo_module_transformation, JAX 0.10.2 or "
                          "later): pip install -U 'symidx[jax]'") from None
    pipeline = PipelineStage.PRE_SCHEDULER if stage == "optimized" \
        else PipelineStage.POST_SCHEDULER
    options = _hlo.HloPrintOptions()
    options.print_metadata = True
    options.print_large_constants = True
    problems: list[str] = []

    def seen(proto: bytes) -> None:
        try:
            module = _hlo.HloModule.from_serialized_hlo_module_proto(proto)
            modules.append(CapturedModule(str(module.to_string(options)), stage))
        except Exception as e:  # noqa: BLE001 - never break the user's compilation
            problems.append(f"{type(e).__name__}: {e}")
        return None  # the module is left as it is

    name = f"symidx_capture_{os.getpid()}_{next(_CAPTURES)}"
    register_hlo_module_transformation(seen, name=name, stage=pipeline, platforms=platforms)
    try:
        yield modules
    finally:
        clear_hlo_module_transformation(name, stage=pipeline, platforms=platforms)
    if problems:
        raise SymidxError(f"could not read {len(problems)} captured modules: {problems[0]}")


@contextmanager
def _dumped_ir(jax: Any, modules: list[CapturedModule]) -> Iterator[None]:
    """While open, JAX writes the StableHLO of each module it compiles to a fresh folder;
    at the end each is converted and added to ``modules``."""
    before = jax.config.values.get("jax_dump_ir_to", "")
    with tempfile.TemporaryDirectory(prefix="symidx-capture-") as folder:
        jax.config.update("jax_dump_ir_to", folder)
        try:
            yield
        finally:
            jax.config.update("jax_dump_ir_to", before)
        for path in sorted(Path(folder).glob("*.mlir")):
            text = path.read_text(encoding="utf-8")
            modules.append(CapturedModule(mlir_to_hlo(text, path.name), "lowered"))


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


def example_args(spec: str, args_spec: str | None = None) -> tuple[Any, ...]:
    """The example arguments for the function ``spec`` (``module:function``): the value
    named by ``args_spec`` (``module:name``) if given, else ``FUNCTION_example_args`` or
    ``example_args`` in the function's module; a tuple, or a callable returning one (a
    single value is one argument). This imports, and so runs, the user's module."""
    if args_spec is not None:
        example = load_value(args_spec)
    else:
        module_name, _, name = spec.rpartition(":")
        names = [f"{name}_example_args", "example_args"]
        for candidate in names:
            try:
                example = load_value(f"{module_name}:{candidate}")
                break
            except SymidxError:
                continue
        else:
            raise SymidxError(f"no example arguments for {spec}: define {' or '.join(names)} "
                              f"in {module_name}, or pass --jax-args MODULE:NAME")
    if callable(example):
        example = example()
    if not isinstance(example, (tuple, list)):
        example = (example,)
    return tuple(example)


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
