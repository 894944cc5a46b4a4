"""**cuBLAS** (``__cublas$gemm``, ``__cublas$lt$matmul``, ``__cublas$lt$matmul$f8``; facts from
XLA's ``GemmBackendConfig``): ``D = alpha * dot(A, B) + beta * C (+ bias)``, then an
elementwise activation (``epilogue``). Operands ``A, B[, C][, a_scale, b_scale, c_scale,
d_scale][, bias]`` (scales for ``$f8``, bias when the epilogue names one: a vector along the
output's last dimension). ``dot_dimension_numbers`` give the dot's maps (the ``dot`` rule's
functions). ``C`` is read at the output's index only when ``beta != 0`` (BLAS does not read
``C`` when ``beta = 0``). Outputs: ``D``, then ``aux`` for a ``*_AUX`` epilogue (the
pre-activation value, read like ``D``), ``amax`` for ``damax_output`` (a scalar reading
every element ``D`` reads), and a workspace (scratch: labelled, every element read).
"""

from __future__ import annotations

from symidx.core.expr import dim, sym
from symidx.core.indexing_map import IndexingMap
from symidx.hlo import DotDimensionNumbers, HloInstruction, Shape
from symidx.hlo.facts import require
from symidx.ops.basic import every_element, from_scalar, identity, to_scalar
from symidx.ops.gpu_library.common import (
    Groups,
    LibraryCall,
    backend_config,
    ints,
    is_workspace,
    operand_dims,
    output_leaves,
)
from symidx.ops.reduction import dot_operand_maps, dot_output_map

GEMM_TARGETS = frozenset({"__cublas$gemm", "__cublas$lt$matmul", "__cublas$lt$matmul$f8"})

_EPILOGUES = frozenset({"DEFAULT", "BIAS", "RELU", "BIAS_RELU", "GELU", "GELU_AUX",
                        "BIAS_GELU", "BIAS_GELU_AUX", "SILU", "BIAS_SILU"})


class Gemm(LibraryCall):
    def __init__(self, instr: HloInstruction, target: str) -> None:
        self.target = target
        cfg = backend_config(instr, "gemm_backend_config")
        dn = cfg.get("dot_dimension_numbers", {})
        self.dn = DotDimensionNumbers(
            ints(dn.get("lhs_batch_dimensions")), ints(dn.get("rhs_batch_dimensions")),
            ints(dn.get("lhs_contracting_dimensions")),
            ints(dn.get("rhs_contracting_dimensions")))
        epilogue = str(cfg.get("epilogue", "DEFAULT"))
        require(epilogue in _EPILOGUES, instr, f"epilogue {epilogue} not modelled")
        alpha = (float(cfg.get("alpha_real", 1)), float(cfg.get("alpha_imag", 0)))
        require(alpha != (0.0, 0.0), instr, "alpha = 0")
        beta = float(cfg.get("beta", 0))
        ops = [operand_dims(instr, k) for k in range(len(instr.operands))]
        require(len(ops) >= 2, instr, "expected two operands")
        self.lhs, self.rhs = ops[0], ops[1]
        pairs = [(self.dn.lhs_batch_dims, self.dn.rhs_batch_dims),
                 (self.dn.lhs_contracting_dims, self.dn.rhs_contracting_dims)]
        require(all(len(a) == len(b) and all(0 <= i < len(self.lhs) and 0 <= j < len(self.rhs)
                                             and self.lhs[i] == self.rhs[j]
                                             for i, j in zip(a, b, strict=True))
                    for a, b in pairs), instr, "batch or contracting dims do not match")
        lhs_map, rhs_map = dot_operand_maps(self.lhs, self.rhs, self.dn)
        self.lhs_map, self.rhs_map = lhs_map, rhs_map
        self.d = tuple(b.size for b in lhs_map.dims)
        f8 = target.endswith("$f8")
        has_bias = "BIAS" in epilogue
        extra = len(ops) - 2 - (4 if f8 else 0) - (1 if has_bias else 0)
        require(extra in (0, 1), instr, "unexpected operand count")
        #: per operand: "a", "b", "c", "c_scale", "scale", "bias"
        kinds = ["a", "b"] + ["c"] * extra + (["scale", "scale", "c_scale", "scale"] if f8
                                              else []) + (["bias"] if has_bias else [])
        self.kinds = kinds
        self.c_read = beta != 0.0
        for k, kind in enumerate(kinds):
            if kind == "c":
                require(ops[k] == self.d, instr, "C does not have the output's shape")
            elif kind in ("scale", "c_scale"):
                require(ops[k] == (), instr, "an f8 scale is not a scalar")
            elif kind == "bias":
                require(len(self.d) >= 1 and ops[k] == (self.d[-1],), instr,
                        "the bias is not a vector along the output's last dimension")
        self.ops = ops
        outs = output_leaves(instr)
        out_kinds = ["d"] + (["aux"] if epilogue.endswith("_AUX") else []) \
            + (["amax"] if f8 and cfg.get("damax_output") else [])
        if len(outs) == len(out_kinds) + 1 and not isinstance(instr.shape, Shape):
            out_kinds.append("workspace")
        require(len(outs) == len(out_kinds), instr, "unexpected outputs")
        for shape, kind in zip(outs, out_kinds, strict=True):
            expect = {"d": self.d, "aux": self.d, "amax": ()}.get(kind)
            require(expect is None and is_workspace(shape) or shape.dims == expect, instr,
                    f"output {kind} has an unexpected shape")
        self.outs, self.out_kinds = outs, out_kinds

    def _read_by_d(self, k: int) -> bool:
        kind = self.kinds[k]
        return (kind not in ("c", "c_scale") or self.c_read) and \
            (kind != "c_scale" or "c" in self.kinds)

    def reads(self, output: int) -> Groups:
        kind = self.out_kinds[output]
        out = self.outs[output].dims
        if kind == "workspace":
            return [[every_element(out, dims)] for dims in self.ops]
        groups: Groups = []
        for k, dims in enumerate(self.ops):
            if not self._read_by_d(k):
                groups.append([])
            elif kind == "amax":
                groups.append([every_element(out, dims)])
            else:
                groups.append([self._d_map(k)])
        return groups

    def _d_map(self, k: int) -> IndexingMap:
        kind = self.kinds[k]
        if kind == "a":
            return self.lhs_map
        if kind == "b":
            return self.rhs_map
        if kind == "c":
            return identity(self.d)
        if kind == "bias":
            return IndexingMap.create(self.d, [dim(len(self.d) - 1)])
        return to_scalar(self.d)

    def reached(self, operand: int) -> Groups:
        kind, dims = self.kinds[operand], self.ops[operand]
        groups: Groups = []
        for out_kind, shape in zip(self.out_kinds, self.outs, strict=True):
            if out_kind == "workspace":
                groups.append([every_element(dims, shape.dims)])
            elif not self._read_by_d(operand):
                groups.append([])
            elif out_kind == "amax":
                groups.append([to_scalar(dims)])
            elif kind in ("a", "b"):
                groups.append([dot_output_map(self.lhs, self.rhs, self.dn, kind == "b")])
            elif kind == "c":
                groups.append([identity(dims)])
            elif kind == "bias":
                rest = self.d[:-1]
                groups.append([IndexingMap.create(dims, [sym(i) for i in range(len(rest))]
                                                  + [dim(0)], [(0, n - 1) for n in rest])])
            else:
                groups.append([from_scalar(self.d)])
        return groups

    def reason(self, output: int | None, backward: bool = True) -> str | None:
        if output is None:
            return self.reason(len(self.outs) - 1)
        if self.out_kinds[output] == "workspace":
            return f"custom-call {self.target} workspace (scratch)"
        return None
