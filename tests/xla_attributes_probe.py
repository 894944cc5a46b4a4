"""Asks XLA's HLO parser (jaxlib's) which attributes each opcode allows: it parses one
instruction per case with an attribute no opcode takes, and reads the list of allowed ones
from the error XLA gives. Run by tests/test_hlo_attributes.py in a child process (a check
failure inside XLA ends this process, not the test run): argv[1] is a JSON list of
[opcode, operand shapes, output shape]; prints a JSON object, one answer per case (the
sorted allowed attributes, or XLA's error when it stopped elsewhere)."""

from __future__ import annotations

import json
import re
import sys

from jax._src.lib import hlo

BOGUS = "zzz_not_an_attribute"
ALLOWED = re.compile(rf'unexpected attribute "{BOGUS}"\. (?:Allowed attributes: ([^\n]*)|'
                     r"No attributes are allowed here\.)")
CALLED = "called {\n  p = f32[4] parameter(0)\n  ROOT n = f32[4] negate(p)\n}\n"


def probe(opcode: str, operands: list[str], shape: str) -> object:
    lines = [f"  p{k} = {ty} parameter({k})" for k, ty in enumerate(operands)]
    names = ", ".join(f"p{k}" for k in range(len(operands)))
    if opcode == "parameter":
        lines.append(f"  ROOT x = {shape} parameter(0), {BOGUS}=1")
    elif opcode == "constant":
        lines.append(f"  ROOT x = f32[] constant(1), {BOGUS}=1")
    elif opcode in ("async-update", "async-done"):  # of an async-start, as XLA requires
        state = "((f32[4]), f32[4], s32[])"
        lines.append(f"  s = {state} async-start(p0), calls=called")
        lines.append(f"  ROOT x = {state if opcode == 'async-update' else 'f32[4]'} "
                     f"{opcode}(s), {BOGUS}=1")
    else:
        lines.append(f"  ROOT x = {shape} {opcode}({names}), {BOGUS}=1")
    text = "HloModule m\n" + CALLED + "ENTRY e {\n" + "\n".join(lines) + "\n}\n"
    try:
        hlo.hlo_module_from_text(text)
    except Exception as e:  # noqa: BLE001 -- XLA's parser says why, in its message
        found = ALLOWED.search(str(e))
        if found:
            return sorted(a.strip() for a in (found.group(1) or "").split(",") if a.strip())
        return "error: " + " ".join(str(e).split())[:300]
    return "accepted"


def main() -> None:
    cases = json.loads(sys.argv[1])
    answers = {f"{k}:{opcode}": probe(opcode, operands, shape)
               for k, (opcode, operands, shape) in enumerate(cases)}
    print(json.dumps(answers))


if __name__ == "__main__":
    main()
