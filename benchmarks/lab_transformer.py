"""Benchmarks for the Transformer lab (not a test): training steps per second against a
PyTorch eager twin, the numba cold-compile cost, and the default `lab transformer` run.

    python benchmarks/lab_transformer.py                # everything (torch part skipped if absent)
    python benchmarks/lab_transformer.py --only steps   # steps/s vs PyTorch, float64 and float32
    python benchmarks/lab_transformer.py --only cold    # compile into an empty cache, in a subprocess
    python benchmarks/lab_transformer.py --only lab     # the default experiment, timed
    python benchmarks/lab_transformer.py --only lab --seeds 0,1,2   # ... once per seed

The PyTorch twin (``tests/torch_transformer.py``) is built from ``nn.TransformerEncoder`` /
``nn.TransformerDecoder`` (``norm_first=True``, ``dropout=0``, ReLU) with the same sizes and
weights; each step is the same work on both sides: forward on a padded batch, label-free
cross-entropy over the real target tokens, backward, global-norm clipping to 1, Adam
(β = 0.9, 0.98). Both run on one thread (each lab model trains on one core) in the same dtype.
The machine's load average is printed next to every figure: on a shared machine the wall
times mean little without it.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

# sibling scripts: the load line, the cold/warm compile and the timing loop; the CPU's name
from lab import cold_and_warm, load, steps_per_second  # noqa: E402
from tui_paint import cpu_model  # noqa: E402


def _batches(B: int, L: int, n: int = 8) -> list:
    from engine import lab

    rng = np.random.default_rng(0)
    return [lab.make_batch("reverse", [L] * B, rng) for _ in range(n)]


def _config(dtype: str):
    from engine.lab.transformer import TransformerSettings

    return TransformerSettings(dtype=dtype).model_config()


# ---------------------------------------------------------------------------- steps per second


def ours_steps_per_second(dtype: str, B: int, L: int, seconds: float) -> float:
    from engine._blas import single_threaded_blas
    from engine.transformer import Transformer, make_optimizer, train_step

    model = Transformer.init(_config(dtype), seed=0)
    opt = make_optimizer(model, lr=1e-3, max_grad_norm=1.0)
    batches = _batches(B, L)
    with single_threaded_blas():
        train_step(model, opt, batches[0])                 # load the cached kernels
        n, t0 = 0, time.perf_counter()
        while time.perf_counter() - t0 < seconds:
            train_step(model, opt, batches[n % 8])
            n += 1
    return n / (time.perf_counter() - t0)


def torch_steps_per_second(dtype: str, B: int, L: int, seconds: float) -> float:
    import torch
    from torch_transformer import make_twin, padded_targets

    from engine.transformer import Transformer, decoder_inputs, torch_state_dict

    torch.set_num_threads(1)
    cfg = _config(dtype)
    twin = make_twin(cfg)
    twin.load_state_dict({k: torch.from_numpy(v) for k, v in
                          torch_state_dict(Transformer.init(cfg, seed=0)).items()})
    opt = torch.optim.Adam(twin.parameters(), lr=1e-3, betas=(0.9, 0.98), eps=1e-9)
    data = [(torch.from_numpy(b.src), torch.from_numpy(b.src_len),
             torch.from_numpy(decoder_inputs(b.tgt)), padded_targets(b.tgt, b.tgt_len))
            for b in _batches(B, L)]

    def step(k: int) -> None:
        src, src_len, tgt_in, tgt = data[k % 8]
        opt.zero_grad()
        logits = twin(src, src_len, tgt_in)
        loss = torch.nn.functional.cross_entropy(logits.reshape(-1, cfg.vocab_size), tgt.reshape(-1))
        loss.backward()
        torch.nn.utils.clip_grad_norm_(twin.parameters(), 1.0)
        opt.step()

    return steps_per_second(step, seconds)


def bench_steps(seconds: float) -> None:
    from engine._alloc import keep_freed_memory
    from engine.lab.transformer import TransformerSettings

    # malloc keeps freed memory, as in the lab's training loops; set before either
    # contender runs, so PyTorch (same process) has the same allocator settings
    keep_freed_memory()
    s = TransformerSettings()
    B, L = s.train.batch_size, 22
    c = s.model_config()
    print(f"== training steps per second: batch {B}, source and target length {L + 1} (the mean "
          f"of lengths 5-40 plus EOS); d_model {c.d_model}, {c.num_heads} heads, d_ff {c.d_ff}, "
          f"{c.num_encoder_layers}+{c.num_decoder_layers} layers; one thread each")
    try:
        import torch  # noqa: F401
        have_torch = True
    except ImportError:
        have_torch = False
        print("torch is not installed: PyTorch comparison skipped")
    for dtype in ("float64", "float32"):
        ours = ours_steps_per_second(dtype, B, L, seconds)
        print(f"  numba        {dtype}  {ours:7.1f} steps/s   [{load()}]")
        if have_torch:
            theirs = torch_steps_per_second(dtype, B, L, seconds)
            print(f"  torch eager  {dtype}  {theirs:7.1f} steps/s   numba/torch = {ours / theirs:4.2f}"
                  f"   (goal >= 1.5)   [{load()}]")


# ---------------------------------------------------------------------------- cold compile


COLD = """
import time, numpy as np
t0, c0 = time.perf_counter(), time.process_time()
from engine import lab
from engine.lab.heads import heads_of
from engine.lab.transformer import TransformerSettings
from engine.transformer import Transformer, make_optimizer, train_step
from engine.transformer.decode import greedy_decode
t1, c1 = time.perf_counter(), time.process_time()
m = Transformer.init(TransformerSettings().model_config(), 0)
rng = np.random.default_rng(0)
b = lab.make_batch("reverse", [5, 6], rng)
train_step(m, make_optimizer(m), b)
t2, c2 = time.perf_counter(), time.process_time()
greedy_decode(m, b.src, 3, b.src_len)
heads_of(m, "reverse", [1, 2, 3])
t3, c3 = time.perf_counter(), time.process_time()
print(f"import {t1 - t0:.2f} s, training kernels {t2 - t1:.2f} s (CPU {c2 - c1:.2f} s), decoding and "
      f"heads (greedy, attention maps, beam search) {t3 - t2:.2f} s (CPU {c3 - c2:.2f} s); "
      f"all {t3 - t0:.2f} s (CPU {c3 - c0:.2f} s)")
"""


def bench_cold() -> None:
    print("== numba compile cost of the default (float32) Transformer: a fresh, empty cache in a "
          "subprocess, then warm (budget: what a feature waits, 8 s)")
    cold_and_warm(COLD, indent="  ")


# ---------------------------------------------------------------------------- the lab run


def bench_lab(seeds: list[int]) -> None:
    from dataclasses import replace

    from engine.lab.transformer import TransformerSettings, transformer

    print("== `lab transformer` with its defaults (the Transformer and its no-positions twin in "
          "two threads; budget 45 s on a quiet 2-core machine, compile included)")
    for seed in seeds:
        s = TransformerSettings()
        s = replace(s, train=replace(s.train, seed=seed))
        print(f"-- seed {seed}{' (the default)' if seed == TransformerSettings().train.seed else ''}"
              f"; before: {load()}")
        cpu0, t0 = time.process_time(), time.perf_counter()
        res = transformer(s)
        wall, cpu = time.perf_counter() - t0, time.process_time() - cpu0
        print(f"after:  {load()}")
        runs = list(res.runs)
        print(f"{'length':>8} " + " ".join(f"{r:>14}" for r in runs)
              + "   (sequence accuracy; token accuracy)")
        for i, (lo, hi) in enumerate(res.buckets):
            cells = [res.runs[r].accuracy[i] for r in runs]
            print(f"{lo:>4}-{hi:<3} " + " ".join(
                f"{100 * a.sequence_accuracy:6.1f}% ({100 * a.token_accuracy:4.0f}%)" for a in cells))
        for name, r in res.runs.items():
            print(f"{name}: {r.steps} steps in {r.seconds:.1f} s ({r.steps_per_second:.1f} steps/s)")
        worst = res.worst_bucket()
        print(f"transformer's worst bucket: {worst.label} at {100 * worst.sequence_accuracy:.1f}% "
              f"sequence accuracy (needs >= 95%)")
        print(f"wall {wall:.1f} s (budget 45 s), CPU {cpu:.1f} s")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", choices=("steps", "cold", "lab"))
    ap.add_argument("--seconds", type=float, default=5.0, help="per steps/s measurement")
    ap.add_argument("--seeds", default="0", help="lab: comma-separated seeds, one default run each")
    args = ap.parse_args()
    print(f"{cpu_model()}, {os.cpu_count()} logical CPUs")
    if args.only in (None, "cold"):
        bench_cold()
    if args.only in (None, "steps"):
        bench_steps(args.seconds)
    if args.only in (None, "lab"):
        bench_lab([int(x) for x in args.seeds.split(",")])


if __name__ == "__main__":
    main()
