"""Tiles of real fusions, executed: are they load plans?

Collects real fusions -- the CPU fusions XLA makes of small JAX programs written like the
models users run (``sweep_programs.py``: embedding gathers with batch, rotary embeddings,
flips, pads, variadic reductions, pooling, scatters), of the compiled modules in
``../shared/hlo`` and ``../shared/realhlo``, and of real model modules there that XLA
compiles for the CPU here (gemma, dlrm, ...) -- one per distinct op mix. Each fusion's
computation becomes a module of its own. symidx tiles it (or refuses, with the reason) at
a few valid tilings; for a few program ids of each, the module runs on XLA:CPU twice with
random inputs: once as drawn, once with every input element the program id does not load
redrawn (all at once; a second time with NaN or extreme values, so a max or a select
cannot hide a change). The program id's output tile must not change: otherwise the load
plan is unsound. Runtime variables (gather indices, dynamic offsets) are read off the run,
at the elements their sources name.

    python benchmarks/bench_tile_sweep.py [--shared ../shared] [--cache DIR] [--limit 100]
        [--tilings 3] [--pids 4] [--cpu 60] [--only NAME] [--json OUT] [--write DIR]

Prints one row per fusion (refused with the reason, or tilings and program ids checked and
the unsound ones) and the totals. ``--write DIR`` writes the selected fusions as modules
(the test sample in tests/data/tiling/real/ was written so). CPU seconds, never wall time.
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import os
import re
import signal
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from math import prod
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
DEFAULT_SHARED = HERE.parent.parent / "shared"

# compiled modules already holding fusions, and modules XLA compiles for the CPU here
SHARED_COMPILED = ["realhlo/jax_transformer4_train_step.compiled.hlo"]
SHARED_TO_COMPILE = [
    "realhlo/xla_backends_cpu_benchmarks_hlo_gemma3_1b_flax_call.hlo",
    "realhlo/xla_backends_cpu_benchmarks_hlo_dlrm_keras_jax_f32_train_step.hlo",
    "realhlo/xla_backends_cpu_benchmarks_hlo_resnet50_keras_jax_f32.hlo",
    "realhlo/xla_backends_cpu_benchmarks_hlo_mha_block_1x12x128x64_bf16.hlo",
    "realhlo/xla_backends_cpu_benchmarks_hlo_layer_norm_1x4096x768_bf16.hlo",
    "realhlo/xla_backends_cpu_benchmarks_hlo_topk_logits_k10_1x50000_bf16.hlo",
    "realhlo/xla_backends_cpu_benchmarks_hlo_diffrax.b380012920.hlo",
]
INTERESTING = ("gather", "scatter", "concatenate", "reverse", "pad", "reduce",
               "reduce-window", "dynamic-slice", "dynamic-update-slice", "transpose", "dot",
               "slice", "iota", "select", "bitcast", "reshape", "copy", "broadcast",
               "compare", "convert")
MAX_ELEMENTS = 3_000_000       # inputs and outputs of a fusion the sweep executes


# --------------------------------------------------------------------------- HLO text
HEADER = re.compile(r"^(ENTRY\s+)?%?([\w.\-]+)\s*(\(.*)?\{\s*$")


def computations(text: str) -> tuple[dict[str, list[str]], str | None]:
    """The module's computations as their lines (header first), and the entry's name."""
    comps: dict[str, list[str]] = {}
    entry = None
    current: list[str] | None = None
    for line in text.splitlines():
        if current is None:
            m = HEADER.match(line)
            if m and not line.startswith((" ", "\t")) and not line.startswith("HloModule"):
                current = [line]
                comps[m.group(2)] = current
                if m.group(1):
                    entry = m.group(2)
            continue
        current.append(line)
        if line.strip() == "}" and not line.startswith((" ", "\t")):
            current = None
    return comps, entry


CALLS = re.compile(r"\b(?:calls|to_apply|condition|body|comparator|select|scatter)="
                   r"%?([\w.\-]+)")
BRANCHES = re.compile(r"\b(?:branch_computations|called_computations)=\{([^}]*)\}")
METADATA = re.compile(r",?\s*metadata=\{[^{}]*(\{[^{}]*\}[^{}]*)*\}")
BACKEND = re.compile(r",?\s*backend_config=(\{[^\n]*?\}|\"[^\"]*\")(?=,|\s*$)")


def _called(lines: Sequence[str]) -> list[str]:
    out = []
    for line in lines:
        out += CALLS.findall(line)
        for group in BRANCHES.findall(line):
            out += [x.strip().lstrip("%") for x in group.split(",") if x.strip()]
    return out


def fusions(comps: dict[str, list[str]]) -> list[tuple[str, str]]:
    """(fusion instruction, fused computation) of every fusion outside fused computations."""
    out = []
    for lines in comps.values():
        for line in lines[1:]:
            if " fusion(" in line and "calls=" in line:
                inst = line.strip().removeprefix("ROOT ").split(" = ")[0].lstrip("%")
                callee = CALLS.search(line)
                if callee and callee.group(1) in comps:
                    out.append((inst, callee.group(1)))
    return out


def extract(comps: dict[str, list[str]], fused: str, name: str) -> str:
    """The fused computation ``fused`` as the entry of a module of its own (with the
    computations it calls), metadata dropped."""
    order, todo, seen = [], [fused], set()
    while todo:
        c = todo.pop()
        if c in seen or c not in comps:
            continue
        seen.add(c)
        order.append(c)
        todo += _called(comps[c][1:])
    parts = [f"HloModule {name}", ""]
    for c in reversed(order[1:]):
        parts += [_clean(x) for x in comps[c]] + [""]
    body = [_clean(x) for x in comps[fused]]
    body[0] = "ENTRY " + body[0].removeprefix("ENTRY ").lstrip()
    parts += body
    return "\n".join(parts) + "\n"


def _clean(line: str) -> str:
    return BACKEND.sub("", METADATA.sub("", line))


def signature(module: str) -> str:
    """What makes two fusions alike for the sweep: the multiset of opcodes (and the
    ranks of the parameters), not the sizes."""
    ops = Counter()
    ranks = []
    for line in module.splitlines():
        m = re.search(r"=\s*[\w\[\],{}:.()\s]*?\s([a-z][\w\-]*)\(", line)
        if m and " = " in line:
            ops[m.group(1)] += 1
            if m.group(1) == "parameter":
                shape = re.search(r"\[([\d,]*)\]", line)
                ranks.append(len(shape.group(1).split(",")) if shape and shape.group(1) else 0)
    return json.dumps([sorted(ops.items()), sorted(ranks)])


RARE = ("gather", "scatter", "concatenate", "pad", "reverse", "reduce-window",
        "dynamic-update-slice", "dynamic-slice")


def interest(module: str) -> int:
    """How varied a fusion is: its distinct interesting ops, the rare ones (the classes
    tiles get wrong) counting ten times."""
    ops = {op for op in INTERESTING if f" {op}(" in module}
    return len(ops) + 10 * len({op for op in RARE if f" {op}(" in module})


# --------------------------------------------------------------------------- corpus
def jax_modules() -> list[tuple[str, str]]:
    sys.path.insert(0, str(HERE))
    import jax
    import jax.numpy as jnp
    from sweep_programs import programs  # noqa: E402  (a sibling file, not a package)

    dtypes = {"f32": jnp.float32, "bf16": jnp.bfloat16, "i32": jnp.int32, "bool": jnp.bool_}
    out = []
    for name, fn, specs in programs():
        args = [jax.ShapeDtypeStruct(shape, dtypes[d]) for shape, d in specs]
        lowered = jax.jit(fn).lower(*args)
        out.append((f"jax.{name}", lowered.compile().as_text()))
        # the program as JAX lowers it, its entry one fusion (as XLA's GPU fusions hold
        # pads, reduce-windows and scatters the CPU compiler leaves unfused)
        out.append((f"jax.lowered.{name}", "#whole\n" + lowered.as_text(dialect="hlo")))
    return out


def xla_client() -> tuple[Any, Any, Any, Any]:
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import jax
    from jax._src.lib import _jax
    from jaxlib import _hlo  # type: ignore[attr-defined]

    client = jax.devices("cpu")[0].client
    devices = _jax.DeviceList(tuple(client.devices()[:1]))
    return client, devices, _jax, _hlo


def compile_text(text: str) -> Any:
    client, devices, _jax, _hlo = xla_client()
    module = _hlo.hlo_module_from_text(text)
    stablehlo = _jax.mlir.hlo_to_stablehlo(module.as_serialized_hlo_module_proto())
    return client.compile_and_load(stablehlo, devices, _jax.CompileOptions())


def shared_modules(shared: Path, cache: Path) -> list[tuple[str, str]]:
    out = []
    for p in sorted((shared / "hlo").glob("*.compiled.hlo")):
        out.append((f"hlo.{p.name.removesuffix('.compiled.hlo')}", p.read_text()))
    for rel in SHARED_COMPILED:
        p = shared / rel
        if p.exists():
            out.append((f"realhlo.{p.stem}", p.read_text()))
    for rel in SHARED_TO_COMPILE:
        p = shared / rel
        if not p.exists():
            continue
        cached = cache / (p.stem + ".cpu.hlo")
        if not cached.exists():
            try:
                exe = compile_text(p.read_text())
                cached.write_text(exe.hlo_modules()[0].to_string())
            except Exception as e:  # XLA's errors are one class per binding
                print(f"# {p.name}: XLA does not compile it for the CPU: "
                      f"{str(e).splitlines()[0][:120]}", file=sys.stderr)
                continue
        out.append((f"realhlo.{p.stem.removeprefix('xla_backends_cpu_benchmarks_hlo_')}",
                    cached.read_text()))
    return out


def select(modules: list[tuple[str, str]], limit: int) -> list[tuple[str, str]]:
    """One fusion per distinct op mix, the most varied first, JAX programs' first among
    equals; at most ``limit``."""
    from symidx.hlo import parse_hlo

    seen: set[str] = set()
    picked: list[tuple[int, int, str, str]] = []
    for order, (source, text) in enumerate(modules):
        comps, entry = computations(text)
        found = fusions(comps)
        if text.startswith("#whole") and entry is not None:
            found = [("entry", entry)]
        for inst, fused in found:
            name = f"{source}/{inst}"
            module = extract(comps, fused, re.sub(r"[^\w]", "_", name)[:60])
            sig = signature(module)
            if sig in seen:
                continue
            try:
                parsed = parse_hlo(module)
            except Exception:  # noqa: BLE001  (a module symidx cannot read: not a fusion)
                continue
            if _elements(parsed) > MAX_ELEMENTS:
                continue
            seen.add(sig)
            picked.append((-interest(module), order, name, module))
    picked.sort(key=lambda x: (x[0], x[1], x[2]))
    return [(name, module) for _, _, name, module in picked[:limit]]


def _elements(module: Any) -> int:
    from symidx.hlo.leaves import leaves

    comp = module.entry
    total = 0
    for instr in list(comp.parameters) + [comp.root]:
        total += sum(prod(leaf.dims) for leaf in leaves(instr.shape))
    return total


# --------------------------------------------------------------------------- running
class CpuLimit(Exception):
    pass


def cpu_limited(seconds: float, fn: Callable[[], Any]) -> Any:
    """``fn()`` under a limit of CPU seconds of this process (ITIMER_PROF)."""
    def stop(signum: int, frame: Any) -> None:
        raise CpuLimit(f"over {seconds:g} CPU s")
    old = signal.signal(signal.SIGPROF, stop)
    signal.setitimer(signal.ITIMER_PROF, seconds)
    try:
        return fn()
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, old)


def numpy_dtype(element_type: str) -> Any:
    import ml_dtypes
    import numpy as np

    table = {"f32": np.float32, "f64": np.float64, "f16": np.float16,
             "bf16": ml_dtypes.bfloat16, "s32": np.int32, "s64": np.int64, "s8": np.int8,
             "s16": np.int16, "u8": np.uint8, "u32": np.uint32, "u64": np.uint64,
             "pred": np.bool_, "c64": np.complex64}
    if element_type not in table:
        raise KeyError(element_type)
    return table[element_type]


def draw(rng: Any, dims: Sequence[int], element_type: str, bound: int,
         special: bool = False) -> Any:
    import numpy as np

    dt = numpy_dtype(element_type)
    shape = tuple(dims)
    if element_type == "pred":
        return rng.random(shape) < 0.5
    if np.issubdtype(dt, np.integer):
        lo = 0 if np.issubdtype(dt, np.unsignedinteger) else -3
        if special:
            return rng.integers(lo, bound + 60, size=shape).astype(dt)
        return rng.integers(lo, bound + 3, size=shape).astype(dt)
    if special:
        vals = rng.choice(np.array([np.nan, np.inf, -np.inf, 1e30, -1e30], dtype=np.float64),
                          size=shape)
        return vals.astype(dt)
    return rng.standard_normal(shape).astype(dt)


class Runner:
    """One fusion module on XLA:CPU: runs it on a list of numpy inputs, gives the output
    leaves (and, when asked, the values of some instructions, as extra outputs). The module
    is made layout-free first (:func:`logical_text`), so XLA compiles it as it compiles a
    program, not as a post-layout module."""

    def __init__(self, text: str, extra: Sequence[Any] = ()):
        self.text = logical_text(text, extra)
        self.exe = compile_text(self.text)
        self.n_extra = len(extra)

    def run(self, inputs: Sequence[Any]) -> list[Any]:
        import jax
        import numpy as np

        bufs = [jax.device_put(x) for x in inputs]
        out = self.exe.execute_sharded(bufs).disassemble_into_single_device_arrays()
        return [np.asarray(o[0]) for o in out]


LAYOUT = re.compile(r"((?:pred|token|bf16|[sufc]\d+|f8\w*)\[[\d,]*\])\{[^{}]*\}")
INSTRUCTION = re.compile(r"^(\s*)(ROOT\s+)?%?([\w.\-]+)\s*=\s*(.*?)\s+([a-z][\w\-]*)\((.*)$")


def logical_text(text: str, extra: Sequence[Any] = ()) -> str:
    """The module with the same values and no layouts: every bitcast (a reinterpretation
    of the buffer under two layouts) becomes transpose-to-physical, reshape,
    transpose-from-physical; every shape loses its layout. With ``extra`` instructions
    (symidx instructions), the root and those as one tuple root."""
    from symidx.hlo import parse_hlo

    module = parse_hlo(text)
    by_name = {i.name: i for c in [module.entry, *module.computations.values()]
               for i in c.instructions}
    out = []
    lines = text.splitlines()
    entry = max(i for i, x in enumerate(lines) if x.startswith("ENTRY"))
    for n, line in enumerate(lines):
        m = INSTRUCTION.match(line)
        new_root = bool(extra and n > entry and m and m.group(2))
        root_word = "" if new_root or not m else (m.group(2) or "")
        if m and m.group(5) == "bitcast" and m.group(3) in by_name:
            out += _bitcast_lines(by_name[m.group(3)], m.group(1), root_word)
        else:
            out.append(line.replace("ROOT ", "", 1) if new_root else line)
        if new_root and m:
            items = [by_name[m.group(3)]] + list(extra)
            shapes = ", ".join(_plain(str(x.shape)) for x in items)
            out.append(f"  ROOT sweep.root = ({shapes}) tuple("
                       f"{', '.join(x.name for x in items)})")
    text = "\n".join(out) + "\n"
    text = re.sub(r"(ENTRY\s+%?[\w.\-]+)\s*\(.*\)\s*->.*\{", r"\1 {", text)
    return LAYOUT.sub(r"\1", text)


def _plain(shape: str) -> str:
    return LAYOUT.sub(r"\1", shape)


def _bitcast_lines(instr: Any, indent: str, root: str) -> list[str]:
    src = instr.operands[0].shape
    dst = instr.shape
    elem = dst.element_type
    src_order = list(reversed(src.layout_or_default.minor_to_major))   # major first
    dst_order = list(reversed(dst.layout_or_default.minor_to_major))
    phys_src = [src.dims[d] for d in src_order]
    phys_dst = [dst.dims[d] for d in dst_order]
    back = [dst_order.index(i) for i in range(len(dst.dims))]
    name = instr.name

    def shp(dims: Sequence[int]) -> str:
        return f"{elem}[{','.join(str(d) for d in dims)}]"
    return [
        f"{indent}{name}.phys = {shp(phys_src)} transpose({instr.operands[0].name}), "
        f"dimensions={{{','.join(map(str, src_order))}}}",
        f"{indent}{name}.flat = {shp(phys_dst)} reshape({name}.phys)",
        f"{indent}{root}{name} = {shp(dst.dims)} transpose({name}.flat), "
        f"dimensions={{{','.join(map(str, back))}}}",
    ]


def box_mark(mask: Any, offsets: Sequence[int], sizes: Sequence[int],
             strides: Sequence[int]) -> None:
    import numpy as np

    index = []
    for o, s, st, n in zip(offsets, sizes, strides, mask.shape):
        idx = o + st * np.arange(s if st != 0 else 1)
        idx = idx[(idx >= 0) & (idx < n)]
        if idx.size == 0:
            return
        index.append(idx)
    if mask.ndim == 0:
        mask[()] = True
        return
    mask[np.ix_(*index)] = True


def loaded(result: Any, pid: int, shape: Sequence[int], values: dict[str, Any],
           mask: Any) -> None:
    """Mark in ``mask`` the elements ``result``'s tile loads at ``pid``: every row, at the
    runtime values its sources name in ``values`` (every value in bounds when unnamed)."""
    import numpy as np

    m = result.offsets_map
    for ranges in itertools.product(*[range(b.lo, b.hi + 1) for b in m.ranges]):
        choices: list[Any] = []
        for v in m.rts:
            held = values.get(v.source.instruction) if v.source is not None else None
            if v.map is None or held is None:
                choices.append(range(v.bounds.lo, v.bounds.hi + 1))
                continue
            element = v.map.evaluate([pid], list(ranges)[:v.map.num_ranges])
            held = np.asarray(held)
            if any(not 0 <= e < n for e, n in zip(element, held.shape)):
                choices.append([])        # a row past the end: no tile (masked)
                continue
            value = int(held[tuple(element)] if element else held)
            if v.clamped:
                value = min(max(value, v.bounds.lo), v.bounds.hi)
            choices.append([value])
        for rts in itertools.product(*choices):
            if not m.constraints_hold([pid], list(ranges), list(rts)):
                continue
            box_mark(mask, m.evaluate([pid], list(ranges), list(rts)), result.tile_sizes,
                     result.tile_strides)


def check_fusion(name: str, text: str, args: argparse.Namespace, rng: Any) -> dict[str, Any]:

    from symidx.hlo import parse_hlo
    from symidx.hlo.facts import array_dims
    from symidx.tiling import analysis, tiled
    from symidx.tiling.valid import valid_tilings

    row: dict[str, Any] = {"name": name, "tilings": 0, "pids": 0, "unsound": [],
                           "refused": None}
    module = parse_hlo(text)
    comp = module.entry
    start = time.process_time()
    try:
        t = cpu_limited(args.cpu, lambda: analysis.analyze(comp))
        tilings = cpu_limited(args.cpu, lambda: list(itertools.islice(valid_tilings(t), 4000)))
    except Exception as e:  # noqa: BLE001  (a refusal, a limit: the row says which)
        row["refused"] = f"{type(e).__name__}: {str(e).splitlines()[0][:300]}"
        row["cpu"] = time.process_time() - start
        return row
    if not tilings:
        row["refused"] = "no valid tiling"
        return row
    picks = {tilings[0], tilings[-1], tilings[len(tilings) // 2]}
    picks |= {tilings[int(x)] for x in rng.integers(0, len(tilings), 2)}
    picks_l = sorted(picks)[: args.tilings + 2]
    params = list(comp.parameters)
    bound = max([max(array_dims(p.shape, p.name), default=1) for p in params
                 if not hasattr(p.shape, "elements")], default=8)
    try:
        base_inputs = [draw(rng, array_dims(p.shape, p.name), p.shape.element_type, bound)
                       for p in params]
    except (KeyError, Exception) as e:  # noqa: BLE001
        row["refused"] = None
        row["skipped"] = f"inputs not drawn: {e}"
        return row
    holders: dict[str, Any] = {}
    for sizes in picks_l:
        try:
            results = cpu_limited(args.cpu, lambda s=sizes: tiled.tiled_computation(t, s))
        except Exception as e:  # noqa: BLE001
            row.setdefault("tiling_refused", []).append(f"{list(sizes)}: {e}")
            continue
        for r in results:
            for v in r.offsets_map.rts:
                if v.source is not None and v.source.instruction:
                    instr = next((i for i in comp.instructions
                                  if i.name == v.source.instruction), None)
                    if instr is not None and instr.opcode != "parameter":
                        holders[instr.name] = instr
        row.setdefault("sized", []).append((list(sizes), results))
    if "sized" not in row:
        row["refused"] = "every tiling refused: " + "; ".join(row.get("tiling_refused", []))
        return row
    extra = list(holders.values())
    try:
        runner = Runner(text, extra)
        base = runner.run(base_inputs)
    except Exception as e:  # noqa: BLE001
        row["skipped"] = f"XLA does not run it: {str(e).splitlines()[0][:160]}"
        row.pop("sized")
        return row
    n_out = len(base) - len(extra)
    values = {p.name: x for p, x in zip(params, base_inputs)}
    values.update({h.name: base[n_out + k] for k, h in enumerate(extra)})
    outs = base[:n_out]
    flat = t.flat_sizes
    for sizes, results in row.pop("sized"):
        row["tilings"] += 1
        for root_i in range(len(t.roots)):
            found = [(r, ti) for r, ti in zip(results, t.tiled)
                     if ti.path == f"roots[{root_i}]"]
            if not found:
                continue
            root_r, root_ti = found[0]
            grid = tiled.grid_of(t, root_ti)
            n_pids = prod(-(-flat[p] // sizes[p]) for p in grid)
            pids = sorted({0, n_pids - 1, n_pids // 2, int(rng.integers(0, n_pids))})
            leaves = _root_leaves(comp, root_i, n_out)
            for pid in pids[: args.pids]:
                row["pids"] += 1
                bad = _perturbed_pid(t, results, sizes, grid, pid, root_r, leaves, comp,
                                     params, base_inputs, values, outs, runner, rng, bound)
                if bad:
                    row["unsound"].append(f"{list(sizes)} pid {pid}: {bad}")
    row["cpu"] = time.process_time() - start
    return row


def _root_leaves(comp: Any, root_i: int, n_out: int) -> list[int]:
    """The output leaves root ``root_i`` writes (a variadic reduce root: all of them)."""
    if comp.root.opcode == "tuple":
        return [root_i]
    return list(range(n_out))


def _perturbed_pid(t: Any, results: Any, sizes: Sequence[int], grid: list[int], pid: int,
                   root_r: Any, leaves: list[int], comp: Any, params: list[Any],
                   inputs: list[Any], values: dict[str, Any], outs: list[Any], runner: Runner,
                   rng: Any, bound: int) -> str | None:
    import numpy as np

    from symidx.hlo.facts import array_dims
    from symidx.tiling import tiled

    flat = t.flat_sizes
    masks = [np.zeros(tuple(array_dims(p.shape, p.name)), dtype=bool) for p in params]
    for r, ti in zip(results, t.tiled):
        if not any(ti.instr is q for q in params) or tiled.grid_of(t, ti) != grid:
            continue
        k = params.index(next(q for q in params if q is ti.instr))
        inner = prod(-(-flat[q] // sizes[q]) for q in ti.region)
        for sub in range(inner):
            loaded(r, pid * inner + sub, masks[k].shape, values, masks[k])
    out_mask = np.zeros(outs[leaves[0]].shape, dtype=bool)
    loaded(root_r, pid, out_mask.shape, values, out_mask)
    if not out_mask.any():
        return None
    for special in (False, True):
        changed = []
        for p, x, keep in zip(params, inputs, masks):
            y = draw(rng, x.shape, p.shape.element_type, bound, special)
            changed.append(np.where(keep, x, y))
        got = runner.run(changed)
        for leaf in leaves:
            if not _eq(outs[leaf][out_mask], got[leaf][out_mask]).all():
                where = np.argwhere(out_mask & ~_eq(outs[leaf], got[leaf]))[0].tolist()
                return (f"output {leaf} element {where} changed when inputs the tile does "
                        f"not load changed ({'special' if special else 'random'} values)")
    return None


def _eq(a: Any, b: Any) -> Any:
    """Elementwise equality, NaN equal to NaN (bf16 and the other ml_dtypes floats, whose
    numpy kind is not 'f', compared as float64)."""
    import numpy as np

    if a.dtype.kind in "iub":
        return a == b
    if a.dtype.kind == "c":
        return (a == b) | (np.isnan(a) & np.isnan(b))
    x, y = a.astype(np.float64), b.astype(np.float64)
    return (x == y) | (np.isnan(x) & np.isnan(y))


# --------------------------------------------------------------------------- main
def collect(args: argparse.Namespace) -> list[tuple[str, str]]:
    cache = Path(args.cache)
    cache.mkdir(parents=True, exist_ok=True)
    modules = jax_modules() + shared_modules(Path(args.shared), cache)
    return select(modules, args.limit)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--shared", default=str(DEFAULT_SHARED))
    parser.add_argument("--cache", default=str(Path.home() / ".cache" / "symidx-sweep"))
    parser.add_argument("--limit", type=int, default=100)
    parser.add_argument("--tilings", type=int, default=3)
    parser.add_argument("--pids", type=int, default=4)
    parser.add_argument("--cpu", type=float, default=60.0,
                        help="CPU seconds per analysis or tiling of one fusion")
    parser.add_argument("--only", help="only the fusions whose name contains this")
    parser.add_argument("--json", help="write every row to this file")
    parser.add_argument("--write", help="write the selected fusion modules to this folder")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--fault", choices=("none", "short", "first-row"), default="none",
                        help="break symidx's plans on purpose (tiles one element short, or "
                             "one row per tile), to see the sweep report them unsound")
    args = parser.parse_args(argv)
    if args.fault != "none":
        _inject(args.fault)
    picked = collect(args)
    if args.only:
        picked = [(n, m) for n, m in picked if args.only in n]
    if args.write:
        out = Path(args.write)
        out.mkdir(parents=True, exist_ok=True)
        for name, module in picked:
            (out / (re.sub(r"[^\w.]", "_", name) + ".hlo")).write_text(module)
    rows = []
    totals = Counter()
    for name, module in picked:
        rng = _rng(args.seed, name)
        row = check_fusion(name, module, args, rng)
        rows.append(row)
        status = ("REFUSED " + row["refused"]) if row["refused"] else \
            ("skipped " + row["skipped"]) if row.get("skipped") else \
            (f"UNSOUND {len(row['unsound'])}: {row['unsound'][0]}" if row["unsound"]
             else "ok")
        print(f"{name[:64]:<64} {row['tilings']:>2} tilings {row['pids']:>3} pids "
              f"{row.get('cpu', 0):6.1f}s  {status}", flush=True)
        totals["fusions"] += 1
        totals["refused"] += bool(row["refused"])
        totals["skipped"] += bool(row.get("skipped"))
        totals["tilings"] += row["tilings"]
        totals["pids"] += row["pids"]
        totals["unsound_pids"] += len(row["unsound"])
        totals["unsound_fusions"] += bool(row["unsound"])
    print(f"\n{totals['fusions']} fusions: {totals['refused']} refused, "
          f"{totals['skipped']} not executed, {totals['tilings']} tilings, "
          f"{totals['pids']} program-id tiles executed, {totals['unsound_pids']} unsound "
          f"(in {totals['unsound_fusions']} fusions)")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1, default=str))
    return 0


def _inject(fault: str) -> None:
    """Replace symidx's tiled computation by a broken one (the sweep's self-check)."""
    import dataclasses

    from symidx.core.indexing_map import IndexingMap
    from symidx.core.interval import Interval
    from symidx.tiling import tiled

    real = tiled.tiled_computation

    def broken(*a: Any, **k: Any) -> Any:
        out = []
        for r in real(*a, **k):
            if fault == "short" and "." in r.path:       # an operand's tile, not a root's
                r = dataclasses.replace(r, tile_sizes=[max(1, s - 1) for s in r.tile_sizes])
            elif r.offsets_map.num_ranges:
                m = r.offsets_map
                m = IndexingMap.create(m.dims, m.results,
                                       [Interval(b.lo, b.lo) for b in m.ranges], m.rts,
                                       m.constraints)
                r = dataclasses.replace(r, offsets_map=m)
            out.append(r)
        return out
    tiled.tiled_computation = broken


def _rng(seed: int, name: str) -> Any:
    import numpy as np

    digest = hashlib.sha256(f"{seed}:{name}".encode()).digest()
    return np.random.default_rng(int.from_bytes(digest[:8], "little"))


if __name__ == "__main__":
    sys.exit(main())
