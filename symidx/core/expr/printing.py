"""How sympy's code printers (lambdify for numpy and math, pycode, ccode, latex)
write symidx's integer operations: with floor semantics in every language."""

from __future__ import annotations

from typing import Any

from sympy import Expr

# Floor semantics everywhere: Python's // and %, numpy's floor_divide and mod; C's / and %
# truncate, so the C forms correct them where the signs differ.
_C_FORMS = {
    "FloorDiv": "(({a}) / ({b}) - ((({a}) % ({b}) != 0) && ((({a}) < 0) != (({b}) < 0))))",
    "Mod": "(({a}) % ({b}) + ((({a}) % ({b}) != 0) && (((({a}) % ({b})) < 0) != (({b}) < 0))"
           " ? ({b}) : 0))",
    "CeilDiv": "(({a}) / ({b}) + ((({a}) % ({b}) != 0) && ((({a}) < 0) == (({b}) < 0))))",
    "Min": "(({a}) < ({b}) ? ({a}) : ({b}))",
    "Max": "(({a}) > ({b}) ? ({a}) : ({b}))",
}
_PYTHON_FORMS = {"FloorDiv": "(({a}) // ({b}))", "Mod": "(({a}) % ({b}))",
                 "CeilDiv": "(-((-({a})) // ({b})))", "Min": "min({a}, {b})",
                 "Max": "max({a}, {b})"}
_NUMPY_FUNCTIONS = {"FloorDiv": "floor_divide", "Mod": "mod", "Min": "minimum",
                    "Max": "maximum"}
_LATEX_FORMS = {"FloorDiv": r"\left\lfloor \frac{{{a}}}{{{b}}} \right\rfloor",
                "CeilDiv": r"\left\lceil \frac{{{a}}}{{{b}}} \right\rceil",
                "Mod": r"\left({a} \bmod {b}\right)",
                "Min": r"\min\left({a}, {b}\right)", "Max": r"\max\left({a}, {b}\right)"}


def _code(e: Expr, printer: Any, kind: str) -> str:
    name = type(e).__name__
    a, b = (printer._print(x) for x in e.args)
    if kind == "numpy":
        module = getattr(printer, "_module", "numpy")
        if name == "CeilDiv":
            function = printer._module_format(f"{module}.floor_divide")
            return f"(-{function}(-({a}), {b}))"
        return f"{printer._module_format(f'{module}.{_NUMPY_FUNCTIONS[name]}')}({a}, {b})"
    forms = {"python": _PYTHON_FORMS, "c": _C_FORMS, "latex": _LATEX_FORMS}[kind]
    return forms[name].format(a=a, b=b)
