"""Every output of a Keras MobileNetV2 training step, both directions, in CPU seconds.

    python benchmarks/bench_mobilenetv2.py [--size 64] [--batch 8] [--keep FILE.hlo]
        [--timeout 600]

Builds ``keras.applications.MobileNetV2`` (no weights, ``--size`` square RGB images, ten
classes) with the JAX backend, writes one SGD-with-momentum training step as a function of
its trainable, non-trainable and optimizer variables, compiles it with XLA for the CPU and
takes the compiled module's text (fusions and all: 423 outputs, the loss and every updated
variable). Then, each in a process of its own, with the default flags and ``--timeout``:

* ``symidx maps FILE --computation ENTRY --output all`` (output-to-input: every output
  swept together);
* ``symidx maps FILE --computation ENTRY --direction input-to-output --operand all``.

Each row gives the process's CPU seconds (user and system, from ``wait4``), its peak
memory, its exit code (3: a limit stopped it, with the line it printed) and the bytes of
JSON Lines it wrote. Issue 36's target: both below 300 s of CPU. Needs ``keras`` (3.x) and
``jax``, which the project does not depend on: ``pip install keras jax``. Figures, never
assertions.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path


def mobilenetv2_train_step(size: int = 64, batch: int = 8) -> str:
    """The compiled HLO text of one MobileNetV2 training step (see the module docstring)."""
    os.environ["KERAS_BACKEND"] = "jax"
    import jax
    import keras
    import numpy as np

    model = keras.applications.MobileNetV2(weights=None, input_shape=(size, size, 3),
                                           classes=10)
    optimizer = keras.optimizers.SGD(0.01, momentum=0.9)
    optimizer.build(model.trainable_variables)

    def train_step(trainable, non_trainable, slots, x, y):  # type: ignore[no-untyped-def]
        def loss_of(trainable):  # type: ignore[no-untyped-def]
            predicted, updated = model.stateless_call(trainable, non_trainable, x,
                                                      training=True)
            loss = keras.losses.sparse_categorical_crossentropy(y, predicted)
            return keras.ops.mean(loss), updated

        (loss, updated), grads = jax.value_and_grad(loss_of, has_aux=True)(trainable)
        trainable, slots = optimizer.stateless_apply(slots, grads, trainable)
        return loss, trainable, updated, slots

    args = ([v.value for v in model.trainable_variables],
            [v.value for v in model.non_trainable_variables],
            [v.value for v in optimizer.variables],
            np.zeros((batch, size, size, 3), np.float32), np.zeros((batch,), np.int32))
    return str(jax.jit(train_step).lower(*args).compile().as_text())


def run(path: Path, words: list[str]) -> tuple[float, int, int, str, int]:
    """(CPU seconds, peak KiB, exit code, last stderr line, bytes written) of
    ``symidx maps PATH WORDS``."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        proc = subprocess.Popen([sys.executable, "-m", "symidx", "maps", str(path), *words],
                                stdout=out, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        code = os.waitstatus_to_exitcode(status)
        err.seek(0)
        lines = err.read().decode(errors="replace").strip().splitlines()
        return (usage.ru_utime + usage.ru_stime, usage.ru_maxrss, code,
                lines[-1] if lines else "", out.seek(0, 2))


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--size", type=int, default=64)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--keep", type=Path, help="write the module's text here")
    ap.add_argument("--timeout", default="600")
    args = ap.parse_args(argv)
    text = mobilenetv2_train_step(args.size, args.batch)
    with tempfile.TemporaryDirectory() as tmp:
        path = args.keep or Path(tmp) / "mobilenetv2_train_step.hlo"
        path.write_text(text)
        print(f"MobileNetV2 {args.size}x{args.size}, batch {args.batch}: "
              f"{len(text) / 1e6:.2f} MB of compiled HLO")
        print(f"{'direction':16s} {'CPU s':>8s} {'peak MB':>8s} {'exit':>4s} {'MB out':>8s}")
        for name, words in (
                ("output-to-input", ["--output", "all"]),
                ("input-to-output", ["--direction", "input-to-output", "--operand", "all"])):
            cpu, peak, code, last, written = run(path, [
                "--computation", "ENTRY", *words, "--format", "jsonl",
                "--timeout", args.timeout])
            print(f"{name:16s} {cpu:8.1f} {peak / 1024:8.0f} {code:4d} {written / 1e6:8.1f}"
                  + (f"  {last}" if code else ""), flush=True)


if __name__ == "__main__":
    main()
