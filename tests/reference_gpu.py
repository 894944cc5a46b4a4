"""Reference semantics of the GPU library custom-calls (the twins of
:mod:`symidx.ops.gpu_library`), written from the libraries' definitions, one loop per
output element, independently of :mod:`symidx.ops`:

* cuBLAS: ``D = alpha * dot(A, B) + beta * C + bias``, an activation, an optional
  pre-activation ``aux`` output, ``amax`` (the largest ``|D|``) and a workspace;
* cuDNN: the forward convolution (StableHLO's), bias and side input of the fused form, and
  the two gradients as the sums over the (output position, window position) pairs of the
  forward convolution;
* TransformerEngine's fused attention: softmax attention over the kv positions the mask
  allows, padded rows zero, the backward pass from the softmax statistics.

Each function returns ``{output index: [set of elements read, per operand]}``, or None
when the call is not one of these (the caller then says "reads everything").
"""

from __future__ import annotations

import json
import re

from reference_hlo import FINITE, Index, _dot_reads, _window_reads, box, op_dims, out_dims
from symidx.hlo import DotDimensionNumbers, HloInstruction

Deps = dict[Index, list[set[Index]]]


def library_dependencies(instr: HloInstruction, values, output: int) -> Deps | None:
    target = instr.attr_str("custom_call_target") or ""
    if target.startswith("__cublas$"):
        return _gemm(instr, target, output)
    if target.startswith("__cudnn$conv"):
        return _conv(instr, target, output)
    if target.startswith("te_fused_attn_"):
        return _attention(instr, target, values, output)
    if target.startswith("xla_builder.math.") and all(
            op_dims(instr, k) == out_dims(instr, 0) for k in range(len(instr.operands))):
        # XLA's math library: functions of one element of each operand
        return {o: [{o} for _ in instr.operands] for o in box(out_dims(instr, output))}
    return None


def _all(instr: HloInstruction) -> list[set[Index]]:
    return [set(box(op_dims(instr, k))) for k in range(len(instr.operands))]


def _none(instr: HloInstruction) -> list[set[Index]]:
    return [set() for _ in instr.operands]


# --- cuBLAS ------------------------------------------------------------------------------------


def _gemm(instr, target, output):
    raw = json.loads(instr.attr_str("backend_config"))
    cfg = raw.get("gemm_backend_config", raw)
    dn = cfg["dot_dimension_numbers"]
    g = DotDimensionNumbers(*(tuple(int(v) for v in dn.get(k, ())) for k in (
        "lhs_batch_dimensions", "rhs_batch_dimensions", "lhs_contracting_dimensions",
        "rhs_contracting_dimensions")))
    epilogue = cfg.get("epilogue", "DEFAULT")
    f8 = target.endswith("$f8")
    bias = "BIAS" in epilogue
    n = len(instr.operands)
    has_c = n - 2 - 4 * f8 - bias == 1
    c_read = has_c and float(cfg.get("beta", 0)) != 0
    roles = ["a", "b"] + ["c"] * has_c + (["scale", "scale", "c_scale", "scale"] * f8) \
        + ["bias"] * bias
    outs = ["d"] + ["aux"] * epilogue.endswith("_AUX") \
        + ["amax"] * bool(f8 and cfg.get("damax_output"))
    kind = outs[output] if output < len(outs) else "workspace"
    lhs, rhs = op_dims(instr, 0), op_dims(instr, 1)

    def d_reads(o):
        left, right = _dot_reads(lhs, rhs, g, o)
        reads = []
        for role in roles:
            reads.append({"a": left, "b": right, "c": {o} if c_read else set(),
                          "scale": {()}, "c_scale": {()} if c_read else set(),
                          "bias": {(o[-1],)}}[role])
        return reads

    if kind == "workspace":
        return {o: _all(instr) for o in box(out_dims(instr, output))}
    if kind == "amax":
        d = out_dims(instr, 0)
        union = _none(instr)
        for o in box(d):
            for k, s in enumerate(d_reads(o)):
                union[k] |= s
        return {(): union}
    return {o: d_reads(o) for o in box(out_dims(instr, output))}


# --- cuDNN ---------------------------------------------------------------------------------


def _pairs(dn, window, lhs, rhs, out, fg):
    """For each forward output index: (input index, kernel index) pairs it multiplies."""
    cg = rhs[dn.kernel_input_feature_dimension]
    n_out_f = out[dn.output_feature_dimension]
    spatial_in = [lhs[i] for i in dn.input_spatial_dimensions]
    for o in box(out):
        b, f = o[dn.output_batch_dimension], o[dn.output_feature_dimension]
        first = (f // (n_out_f // fg)) * cg
        pairs = []
        for w, si in _window_reads(tuple(o[i] for i in dn.output_spatial_dimensions),
                                   window, spatial_in):
            kw = [d.size - 1 - p if d.window_reversal else p
                  for p, d in zip(w, window, strict=True)]
            for i in range(cg):
                x = [0] * len(lhs)
                x[dn.input_batch_dimension] = b
                x[dn.input_feature_dimension] = first + i
                for t, j in enumerate(dn.input_spatial_dimensions):
                    x[j] = si[t]
                k = [0] * len(rhs)
                k[dn.kernel_input_feature_dimension] = i
                k[dn.kernel_output_feature_dimension] = f
                for t, j in enumerate(dn.kernel_spatial_dimensions):
                    k[j] = kw[t]
                pairs.append((tuple(x), tuple(k)))
        yield o, pairs


def _conv(instr, target, output):
    if output > 0:  # the scratch buffer
        return {o: _all(instr) for o in box(out_dims(instr, output))}
    dn, window, fg = instr.dim_labels, instr.window, instr.feature_group_count
    result = out_dims(instr, 0)
    if target.endswith("BackwardInput"):
        d_out, kernel = op_dims(instr, 0), op_dims(instr, 1)
        deps = {x: [set(), set()] for x in box(result)}
        for o, pairs in _pairs(dn, window, result, kernel, d_out, fg):
            for x, k in pairs:
                deps[x][0].add(o)
                deps[x][1].add(k)
        return deps
    if target.endswith("BackwardFilter"):
        lhs, d_out = op_dims(instr, 0), op_dims(instr, 1)
        deps = {k: [set(), set()] for k in box(result)}
        for o, pairs in _pairs(dn, window, lhs, result, d_out, fg):
            for x, k in pairs:
                deps[k][0].add(x)
                deps[k][1].add(o)
        return deps
    lhs, rhs = op_dims(instr, 0), op_dims(instr, 1)
    deps = {}
    for o, pairs in _pairs(dn, window, lhs, rhs, result, fg):
        # under reads a kernel element over padding or a dilation hole is read too: it
        # multiplies a zero, and 0 * inf is NaN (the forward convolution is StableHLO's)
        kernel = {k for _, k in pairs} if FINITE.get() else _kernel_of(dn, rhs, o)
        reads = [{x for x, _ in pairs}, kernel]
        if len(instr.operands) > 2:  # bias per output feature, side input
            reads.append({(o[dn.output_feature_dimension],)})
        if len(instr.operands) > 3:
            reads.append({o})
        deps[o] = reads
    return deps


def _kernel_of(dn, rhs, o):
    """Every kernel element output ``o``'s window holds: its output feature, every input
    feature of its group and every window position."""
    f = o[dn.output_feature_dimension]
    found = set()
    for k in box(rhs):
        if k[dn.kernel_output_feature_dimension] == f:
            found.add(k)
    return found


# --- TransformerEngine ----------------------------------------------------------------------

_ENTRY = re.compile(r"(\w+)\s*=\s*([-+0-9.eE]+|true|false)")


def _attention(instr, target, values, output):
    cfg = {m.group(1): m.group(2) for m in _ENTRY.finditer(instr.attributes["backend_config"])}
    layout, mask = int(cfg["qkv_layout"]), int(cfg["mask_type"])
    left, right = int(cfg["window_size_left"]), int(cfg["window_size_right"])
    forward = target.endswith("forward_ffi")
    sb = layout < 5
    group = layout % 5
    base = ["s", "b", "h", "d"] if sb else ["b", "s", "h", "d"]
    at = {0: (2, 2, 2), 1: (3, 3, 3), 2: (None, 2, 2), 3: (None, 3, 3), 4: (None,) * 3}[group]
    positions = {0: (0, 0, 0), 1: (0, 0, 0), 2: (0, 1, 1), 3: (0, 1, 1), 4: (0, 1, 2)}[group]
    packed_index = (0, 1, 2) if group < 2 else (None, 0, 1)

    def template(role):
        t = list(base)
        if at[role] is not None:
            t.insert(at[role], packed_index[role])
        return t

    def place(role, b, s, h, d):
        axes = {"b": b, "s": s, "h": h, "d": d}
        return tuple(axes[t] if isinstance(t, str) else t for t in template(role))

    def sizes(role):
        dims = op_dims(instr, positions[role])
        return {t: n for t, n in zip(template(role), dims, strict=True) if isinstance(t, str)}

    q, k, v = sizes(0), sizes(1), sizes(2)
    Sq, H, D = q["s"], q["h"], q["d"]
    Skv, G, Dv = k["s"], k["h"], v["d"]
    per = H // G
    cu_q, cu_kv = (5, 6) if forward else (8, 9)
    padding = mask in (1, 3, 5)
    n = len(instr.operands)

    def lengths(b):
        if not padding:
            return Sq, Skv
        qc, kc = values[cu_q], values[cu_kv]
        return int(qc[b + 1]) - int(qc[b]), int(kc[b + 1]) - int(kc[b])

    def allowed(b, i, j, row=True):
        lq, lk = lengths(b)
        if padding and not ((i < lq or not row) and j < lk):
            return False
        if mask in (2, 3) and j > i:
            return False
        if mask in (4, 5) and j - i > lk - lq:
            return False
        if left >= 0 and i - j > left:
            return False
        return not (right >= 0 and j - i > right)

    def row_valid(b, i):
        return not padding or i < lengths(b)[0]

    def col_valid(b, j):
        return not padding or j < lengths(b)[1]

    shape = out_dims(instr, output)
    deps = {}
    last = 3 if forward else 4
    if output == last:
        return {o: _all(instr) for o in box(shape)}
    if forward and output == 2:
        reads = _none(instr)
        reads[4] = set(box(op_dims(instr, 4)))
        return {o: reads for o in box(shape)}
    if not forward and output == 3:
        return {o: _none(instr) for o in box(shape)}

    def unpack(role, o):
        """(b, s, h, d) of output index o of gradient role, or None for another role."""
        t = template(role)
        axes = {}
        for name, x in zip(t, o, strict=True):
            if isinstance(name, str):
                axes[name] = x
            elif x != name:
                return None
        return axes

    for o in box(shape):
        reads = _none(instr)
        if forward:
            if output == 0:
                a = dict(zip(base, o, strict=True))
                b, i, h, e = a["b"], a["s"], a["h"], a["d"]
            else:
                b, h, i, e = o[0], o[1], o[2], None
            if padding:
                reads[cu_q] |= {(b,), (b + 1,)}
                if output == 1 or row_valid(b, i):
                    reads[cu_kv] |= {(b,), (b + 1,)}
            for j in range(Skv):
                # the stats of a padded row are unspecified: said to read as a valid row
                if not allowed(b, i, j, row=output == 0):
                    continue
                g = h // per
                reads[positions[0]] |= {place(0, b, i, h, t) for t in range(D)}
                reads[positions[1]] |= {place(1, b, j, g, t) for t in range(D)}
                if output == 0:
                    reads[positions[2]].add(place(2, b, j, g, e))
                if n > 3 and len(op_dims(instr, 3)) == 4 and int(cfg["bias_type"]) in (1, 2):
                    bb, bh = op_dims(instr, 3)[:2]
                    reads[3].add((b if bb > 1 else 0, h if bh > 1 else 0, i, j))
            deps[o] = reads
            continue
        for role in range(3):
            if positions[role] != output:
                continue
            a = unpack(role, o)
            if a is None:
                continue
            b = a["b"]
            if padding:
                own_valid = row_valid(b, a["s"]) if role == 0 else col_valid(b, a["s"])
                reads[cu_q if role == 0 else cu_kv] |= {(b,), (b + 1,)}
                if own_valid:
                    reads[cu_kv if role == 0 else cu_q] |= {(b,), (b + 1,)}
            if role == 0:
                i, h = a["s"], a["h"]
                pairs = [(i, h, j) for j in range(Skv)]
            else:
                j, g = a["s"], a["h"]
                pairs = [(i, g * per + x, j) for i in range(Sq) for x in range(per)]
            for i, h, j in pairs:
                if not allowed(b, i, j):
                    continue
                g = h // per
                reads[positions[0]] |= {place(0, b, i, h, t) for t in range(D)}
                reads[positions[1]] |= {place(1, b, j, g, t) for t in range(D)}
                reads[4].add((b, h, i, 0))
                o_row = [(b, i, h, t) if not sb else (i, b, h, t) for t in range(Dv)]
                if role == 2:
                    e = a["d"]
                    reads[7].add((b, i, h, e) if not sb else (i, b, h, e))
                else:
                    reads[positions[2]] |= {place(2, b, j, g, t) for t in range(Dv)}
                    reads[6] |= set(o_row)
                    reads[7] |= set(o_row)
        deps[o] = reads
    return deps
