"""The JAX side of the Pallas check: find every ``pallas_call`` a function binds, read its grid
and block specs into plain data, and turn each ``index_map`` into an indexing map.

``jax.make_jaxpr(f)(*args)`` traces ``f`` without running it; each ``pallas_call`` equation
holds a ``grid_mapping`` (the grid, and per operand a ``BlockMapping``: the array's shape,
the block shape -- ``Blocked(b)``, ``Squeezed()`` for ``None``, ``Element(b)``,
``BoundedSlice(b)`` -- and the index map's closed jaxpr, whose inputs are the grid indices
and the scalar-prefetch refs). The kernel itself is never run.

**The map.** The index map is evaluated on the whole grid at once -- ``jax.vmap`` over the
grid's iotas of ``BlockMapping.compute_start_indices_interpret`` (the block's first element
per dimension) -- and lowered with :func:`symidx.jax_support.lowered_hlo`; the value each
output holds at grid point ``(d0, d1, ...)`` is then read off the HLO as an integer
expression of the point (:func:`symidx.fusion.values.index_value`: iotas, constants,
integer arithmetic, ``min``/``max``, ``floor_divide``...). Divided by the block size, that
is the indexing map ``grid point -> block index``. Where an output is not such an
expression (it reads a scalar-prefetch operand, or an op the value walk does not know), the
operand has no map, and its block indices are computed instead, by running the index map
alone (never the kernel) on the CPU at every grid point, with the example values of the
scalar-prefetch operands when the function receives them as arguments.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from symidx.core.expr import Expr, FloorDiv, dim
from symidx.core.indexing_map import IndexingMap
from symidx.core.interval import Interval
from symidx.errors import SymidxError, TooLargeError

__all__ = ["GRID_LIMIT", "Call", "Dim", "Spec", "pallas_calls"]

GRID_LIMIT = 1 << 20
"""Most grid points a ``pallas_call`` is checked at (``limit=`` raises it)."""

#: Equations that run a sub-jaxpr on their own operands, in order (so a value known outside
#: is known inside): the parameter holding it.
_CALLS = {"pjit": "jaxpr", "jit": "jaxpr", "closed_call": "call_jaxpr",
          "core_call": "call_jaxpr", "custom_jvp_call": "call_jaxpr",
          "custom_vjp_call": "call_jaxpr", "remat": "jaxpr", "checkpoint": "jaxpr"}


@dataclass(frozen=True)
class Dim:
    """One dimension of a block: ``kind`` is ``blocked`` (block index ``i`` covers elements
    ``[i b, i b + b)``), ``squeezed`` (``None`` in the block shape: one element, the index is
    the element), ``element`` (``pl.Element(b)``: the index is the first element) or
    ``bounded`` (``pl.BoundedSlice``: not checked)."""

    kind: str
    size: int
    padding: tuple[int, int] = (0, 0)

    def start(self, index: np.ndarray) -> np.ndarray:
        return index * self.size if self.kind == "blocked" else index

    def __str__(self) -> str:
        if self.kind == "squeezed":
            return "None"
        if self.kind == "element":
            pad = f", padding={self.padding}" if self.padding != (0, 0) else ""
            return f"Element({self.size}{pad})"
        if self.kind == "bounded":
            return f"BoundedSlice({self.size})"
        return str(self.size)


@dataclass
class Spec:
    """One operand's block spec: ``role`` (``input``/``output``) and ``position`` among
    them, the kernel's name for its ref, JAX's ``origin`` (``args[0]``, ``outputs``), the
    array's ``shape`` and ``dtype``, the block's ``dims``, the indexing map grid point ->
    block index (None, with ``map_note`` saying why), and the block indices at every grid
    point in iteration order (``indices``, ``(points, rank)``; None when not computable,
    ``unchecked`` saying why)."""

    role: str
    position: int
    name: str
    origin: str
    shape: tuple[int, ...]
    dtype: str
    itemsize: int
    dims: tuple[Dim, ...]
    map: IndexingMap | None = None
    map_note: str = ""
    indices: np.ndarray | None = None
    unchecked: str = ""

    @property
    def label(self) -> str:
        block = "(" + ", ".join(str(d) for d in self.dims) + ")"
        shape = ",".join(str(n) for n in self.shape)
        return (f"{self.role} {self.position} '{self.name}' ({self.origin}, "
                f"{self.dtype}[{shape}], block {block})")


@dataclass
class Call:
    """One ``pallas_call``: the kernel's name, where it is bound (file:line), the grid and
    its names, each grid dimension's semantics (``parallel``/``arbitrary``; None when not
    given), the operands' specs, the outputs aliased to inputs, and notes on what is not
    checked."""

    name: str
    where: str
    grid: tuple[int, ...]
    grid_names: tuple[str, ...] | None
    semantics: tuple[str, ...] | None
    specs: list[Spec] = field(default_factory=list)
    aliased_outputs: frozenset[int] = frozenset()
    notes: list[str] = field(default_factory=list)

    @property
    def label(self) -> str:
        grid = "(" + ", ".join(str(n) for n in self.grid) + (
            "," if len(self.grid) == 1 else "") + ")"
        return f"pallas_call {self.name!r} at {self.where} (grid {grid})"

    def points(self) -> np.ndarray:
        """Every grid point in iteration order (the last dimension fastest): ``(points,
        rank)``."""
        if not self.grid:
            return np.zeros((1, 0), dtype=np.int64)
        mesh = np.meshgrid(*(np.arange(n, dtype=np.int64) for n in self.grid), indexing="ij")
        return np.stack([m.reshape(-1) for m in mesh], axis=1)


def _jax() -> Any:
    try:
        import jax
    except ImportError:
        raise SymidxError("checking Pallas block specs needs JAX: pip install "
                          "'symidx[jax]'") from None
    return jax


def pallas_calls(fn: Callable[..., Any], args: Sequence[Any], kwargs: dict[str, Any],
                 limit: int = GRID_LIMIT) -> list[Call]:
    """Trace ``fn(*args, **kwargs)`` and read every ``pallas_call`` it binds."""
    jax = _jax()
    try:
        closed = jax.make_jaxpr(fn)(*args, **kwargs)
    except Exception as e:  # the user's function failed to trace
        name = getattr(fn, "__name__", None) or repr(fn)
        raise SymidxError(f"JAX could not trace {name}: {type(e).__name__}: {e}") from e
    leaves = jax.tree_util.tree_leaves((args, kwargs))
    known: dict[Any, Any] = {}
    for var, value in zip(closed.jaxpr.invars, leaves):
        if hasattr(value, "shape") and not isinstance(value, jax.ShapeDtypeStruct):
            known[var] = value
    for var, value in zip(closed.jaxpr.constvars, closed.consts):
        known[var] = value
    calls = [_call(eqn, known_here, limit) for eqn, known_here in _find(closed.jaxpr, known)]
    if not calls:
        raise SymidxError(f"{getattr(fn, '__name__', fn)} binds no pallas_call "
                          f"(jax.experimental.pallas)")
    return calls


def _find(jaxpr: Any, known: dict[Any, Any]) -> Iterator[tuple[Any, dict[Any, Any]]]:
    """The ``pallas_call`` equations of ``jaxpr`` and its sub-jaxprs, in order, each with
    the concrete values known for the variables of its jaxpr."""
    for eqn in jaxpr.eqns:
        if eqn.primitive.name == "pallas_call":
            yield eqn, known
            continue
        for pname, value in eqn.params.items():
            for inner, consts in _sub_jaxprs(value):
                inner_known: dict[Any, Any] = dict(zip(inner.constvars, consts))
                if _CALLS.get(eqn.primitive.name) == pname:
                    for outer, var in zip(eqn.invars, inner.invars):
                        value_known = _value_of(outer, known)
                        if value_known is not None:
                            inner_known[var] = value_known
                yield from _find(inner, inner_known)


def _sub_jaxprs(value: Any) -> Iterator[tuple[Any, Sequence[Any]]]:
    if hasattr(value, "eqns") and hasattr(value, "invars"):
        yield value, ()
    elif hasattr(value, "jaxpr") and hasattr(value.jaxpr, "eqns"):
        yield value.jaxpr, getattr(value, "consts", ())
    elif isinstance(value, (tuple, list)):
        for v in value:
            yield from _sub_jaxprs(v)


def _value_of(var: Any, known: dict[Any, Any]) -> Any:
    if hasattr(var, "val"):  # a literal
        return var.val
    try:
        return known.get(var)
    except TypeError:  # unhashable
        return None


def _call(eqn: Any, known: dict[Any, Any], limit: int) -> Call:
    jax = _jax()
    params = eqn.params
    gm = params["grid_mapping"]
    kernel = params.get("jaxpr")
    debug = getattr(kernel, "debug_info", None)
    src = getattr(debug, "func_src_info", None) or ""
    name = params.get("name") or (src.split(" at ")[0] if src else "kernel")
    where = _where(jax, eqn)
    arg_names = tuple(getattr(debug, "arg_names", None) or ())
    if getattr(gm, "num_dynamic_grid_bounds", 0):
        raise SymidxError(f"pallas_call {name!r} at {where}: a grid with dynamic bounds is "
                          f"not supported")
    grid = tuple(int(n) for n in gm.grid)
    points = math.prod(grid)
    if points > limit:
        raise TooLargeError(f"pallas_call {name!r} at {where}: its grid {grid} has {points} "
                            f"points; the limit is {limit} (limit=)")
    call = Call(name, where, grid, _names(gm), _semantics(params.get("compiler_params"),
                                                          len(grid)))
    aliases = params.get("input_output_aliases") or ()
    call.aliased_outputs = frozenset(int(o) for _, o in aliases)
    n_index = int(gm.num_index_operands)
    prefetch = [_value_of(v, known) for v in eqn.invars[:n_index]]
    n_in = int(gm.num_inputs)
    for k, bm in enumerate(gm.block_mappings):
        role, position = ("input", k) if k < n_in else ("output", k - n_in)
        ref_name = arg_names[n_index + k] if n_index + k < len(arg_names) else str(bm.origin)
        call.specs.append(_spec(jax, call, bm, role, position, ref_name, prefetch, n_index))
    return call


def _where(jax: Any, eqn: Any) -> str:
    try:
        from jax.extend import source_info_util

        return str(source_info_util.summarize(eqn.source_info)).split(" (")[0]
    except Exception:  # noqa: BLE001 -- a JAX without it: no location
        return "unknown location"


def _names(gm: Any) -> tuple[str, ...] | None:
    names = getattr(gm, "grid_names", None)
    return tuple(str(n) for n in names) if names else None


def _semantics(compiler_params: Any, rank: int) -> tuple[str, ...] | None:
    """Each grid dimension's semantics from the TPU compiler parameters, if given."""
    candidates = compiler_params.values() if isinstance(compiler_params, dict) else (
        [compiler_params])
    for p in candidates:
        found = getattr(p, "dimension_semantics", None)
        if found is not None and len(found) == rank:
            return tuple("parallel" if "parallel" in str(s).lower() else "arbitrary"
                         for s in found)
    return None


def _dims(block_shape: Sequence[Any]) -> tuple[Dim, ...]:
    dims = []
    for d in block_shape:
        kind = type(d).__name__
        if kind == "Blocked":
            dims.append(Dim("blocked", int(d.block_size)))
        elif kind == "Squeezed" or d is None:
            dims.append(Dim("squeezed", 1))
        elif kind == "Element":
            dims.append(Dim("element", int(d.block_size),
                            tuple(int(p) for p in d.padding)))  # type: ignore[arg-type]
        elif kind == "BoundedSlice":
            dims.append(Dim("bounded", int(d.block_size)))
        else:
            dims.append(Dim("blocked", int(d)))
    return tuple(dims)


def _spec(jax: Any, call: Call, bm: Any, role: str, position: int, name: str,
          prefetch: list[Any], n_index: int) -> Spec:
    aval = bm.array_aval
    spec = Spec(role, position, name, str(bm.origin), tuple(int(n) for n in aval.shape),
                str(aval.dtype), int(np.dtype(aval.dtype).itemsize), _dims(bm.block_shape))
    space = str(getattr(bm.block_aval, "memory_space", "") or "").lower()
    if space in ("any", "hbm", "semaphore") or "any" in space.split("."):
        spec.unchecked = (f"memory space {space}: the kernel gets the whole array and copies "
                          f"by hand; its block spec is not a window")
        return spec
    if any(d.kind == "bounded" for d in spec.dims):
        spec.unchecked = "a BoundedSlice dimension (the index map returns slices): not checked"
        return spec
    if any(d.padding != (0, 0) for d in spec.dims):
        spec.unchecked = "an Element dimension with padding: not checked"
        return spec
    if not math.prod(call.grid):
        spec.indices = np.zeros((0, len(spec.dims)), dtype=np.int64)
        spec.map_note = "the grid is empty"
        return spec
    spec.map, spec.map_note = _block_map(jax, call, bm, spec, n_index)
    if spec.map is not None:
        points = call.points()
        values, mask = spec.map.evaluate_arrays(list(points.T))
        if not np.asarray(mask).all():
            raise SymidxError(f"{call.label}: {spec.label}: the index map has no value at "
                              f"some grid point")
        spec.indices = np.stack([np.broadcast_to(np.asarray(v, dtype=np.int64).reshape(-1),
                                                 (len(points),)) for v in values], axis=1) \
            if values else np.zeros((len(points), 0), dtype=np.int64)
        return spec
    if n_index and any(p is None for p in prefetch):
        spec.unchecked = ("its index map reads a scalar-prefetch operand whose value is not "
                          "an argument of the function (computed inside it): not checked")
        return spec
    spec.indices = _evaluated(jax, call, bm, spec, prefetch)
    return spec


def _on_grid(jax: Any, call: Call, bm: Any) -> Callable[..., Any]:
    """``(*prefetch) -> starts``: the index map's first element of the block per dimension,
    as arrays over the whole grid."""
    jnp = jax.numpy

    def point(*idx_and_prefetch: Any) -> Any:
        rank = len(call.grid)
        starts = bm.compute_start_indices_interpret(idx_and_prefetch[:rank],
                                                    *idx_and_prefetch[rank:])
        return tuple(jnp.asarray(s, dtype=jnp.int32) for s in starts)

    def on_grid(*prefetch: Any) -> Any:
        idx = [jax.lax.broadcasted_iota(jnp.int32, call.grid, k)
               for k in range(len(call.grid))]
        f = point
        for _ in call.grid:
            f = jax.vmap(f, in_axes=(0,) * len(call.grid) + (None,) * len(prefetch))
        return f(*idx, *prefetch)

    return on_grid


def _block_map(jax: Any, call: Call, bm: Any, spec: Spec, n_index: int
               ) -> tuple[IndexingMap | None, str]:
    """The indexing map grid point -> block index, read off the lowered index map; None and
    the reason when an output is not an integer expression of the grid point."""
    from symidx.core.simplify import simplify
    from symidx.fusion.values import index_value
    from symidx.hlo import parse_hlo
    from symidx.jax_support import lowered_hlo

    structs = [jax.ShapeDtypeStruct(a.shape, a.dtype) for a in bm.index_map_jaxpr.in_avals[
        len(call.grid):len(call.grid) + n_index]] if n_index else []
    try:
        text = lowered_hlo(_on_grid(jax, call, bm), *structs)
        module = parse_hlo(text, source=f"<index map of {spec.name}>", validate=False)
    except SymidxError as e:
        return None, f"the index map could not be lowered: {e}"
    root = module.entry.root
    outs = list(root.operands) if root.opcode == "tuple" else [root]
    if len(outs) != len(spec.dims):
        return None, (f"the index map returns {len(outs)} values for a block of rank "
                      f"{len(spec.dims)}")
    point = [dim(k) for k in range(len(call.grid))]
    env = {dim(k): Interval(0, n - 1) for k, n in enumerate(call.grid)}
    results: list[Expr] = []
    for k, (out, d) in enumerate(zip(outs, spec.dims)):
        value = index_value(out, point, env)
        if value is None:
            why = ("a scalar-prefetch operand's value" if n_index else
                   "an operation symidx does not follow")
            return None, (f"block index {k} is not an integer expression of the grid point "
                          f"(it depends on {why})")
        results.append(FloorDiv(value, d.size) if d.kind == "blocked" and d.size > 1
                       else value)
    names = list(call.grid_names) if call.grid_names else None
    return simplify(IndexingMap.create(list(call.grid), results, names=names)), ""


def _evaluated(jax: Any, call: Call, bm: Any, spec: Spec, prefetch: list[Any]) -> np.ndarray:
    """The block indices at every grid point, by running the index map alone on the CPU."""
    with jax.default_device(jax.devices("cpu")[0]):
        try:
            starts = jax.jit(_on_grid(jax, call, bm))(*prefetch)
        except Exception as e:  # noqa: BLE001 -- the user's index map failed
            raise SymidxError(f"{call.label}: {spec.label}: its index map failed on the "
                              f"grid: {type(e).__name__}: {e}") from e
    columns = []
    for s, d in zip(starts, spec.dims):
        a = np.asarray(s, dtype=np.int64).reshape(-1)
        columns.append(a // d.size if d.kind == "blocked" else a)
    points = math.prod(call.grid)
    return np.stack(columns, axis=1) if columns else np.zeros((points, 0), dtype=np.int64)
