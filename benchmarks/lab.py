"""Benchmarks for the lab (not a test): wall time of `lab bottleneck`, training steps per
second against an equivalent PyTorch eager model, and the numba cold-compile cost.

    python benchmarks/lab.py                 # everything (torch part skipped if not installed)
    python benchmarks/lab.py --only steps    # steps/s vs PyTorch only
    python benchmarks/lab.py --only bottleneck
    python benchmarks/lab.py --only cold     # compile into an empty cache, in a subprocess

The machine's load average is printed next to every figure: on a shared machine the wall
times mean little without it. CPU time of this process is printed too.

The PyTorch twin has the same sizes and equations: embeddings, a (bi)GRU encoder
(``nn.GRU``), a ``GRUCell`` decoder fed [embedding; context], Bahdanau attention
vᵀ tanh(W_q s + W_k H) or the fixed context C = [→h_T ; ←h_1], s_0 = →h_T, W_O, cross-entropy
summed over steps / B, ``clip_grad_norm_`` and Adam — in eager mode, float64 like ours (and
float32, its usual type, for reference). Both run single-threaded (each lab model trains on
one core), and PyTorch with its default threads as well.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def load() -> str:
    return "load average " + " ".join(f"{x:.2f}" for x in os.getloadavg())


def steps_per_second(step: Callable[[int], None], seconds: float) -> float:
    """Call ``step(0)`` once (warm-up), then ``step(n)`` for n = 0, 1, … for ``seconds``."""
    step(0)
    n, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        step(n)
        n += 1
    return n / (time.perf_counter() - t0)


# ---------------------------------------------------------------------------- ours


def ours_steps_per_second(decoder: str, B: int, L: int, seconds: float) -> float:
    from engine import lab
    from engine._blas import single_threaded_blas
    from engine.seq2seq import Adam, Seq2Seq, Workspace, train_step

    cfg = lab.BottleneckSettings().model_config(decoder)
    model = Seq2Seq.init(cfg, seed=0)
    opt = Adam(cfg.n_params, lr=3e-3, max_grad_norm=5.0)
    work = Workspace()                                        # as the lab's training loop
    rng = np.random.default_rng(0)
    batches = [lab.make_batch("reverse", [L] * B, rng) for _ in range(8)]
    with single_threaded_blas():
        train_step(model, opt, batches[0], 1.0, rng, work)    # load the cached kernels
        n, t0 = 0, time.perf_counter()
        while time.perf_counter() - t0 < seconds:
            train_step(model, opt, batches[n % 8], 1.0, rng, work)
            n += 1
    return n / (time.perf_counter() - t0)


# ---------------------------------------------------------------------------- PyTorch twin


def torch_steps_per_second(decoder: str, B: int, L: int, seconds: float, threads: int,
                           dtype: str) -> float:
    import torch
    from torch import nn

    from engine import lab

    torch.set_num_threads(threads)
    s = lab.BottleneckSettings()
    V, e, d, a, bi = lab.VOCAB_SIZE, s.embed_dim, s.hidden_dim, s.attn_dim, s.bidirectional
    dA = 2 * d if bi else d
    torch.manual_seed(0)

    class Twin(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.enc_embed = nn.Embedding(V, e)
            self.enc = nn.GRU(e, d, bidirectional=bi)
            self.dec_embed = nn.Embedding(V, e)
            self.cell = nn.GRUCell(e + dA, d)
            if decoder == "attention":
                self.W_q = nn.Linear(d, a, bias=False)
                self.W_k = nn.Linear(dA, a, bias=False)
                self.v = nn.Linear(a, 1, bias=False)
            self.out = nn.Linear(d, V)

        def forward(self, src: torch.Tensor, tgt: torch.Tensor) -> torch.Tensor:
            H, h_n = self.enc(self.enc_embed(src))            # (S, B, dA), (dirs, B, d)
            s = h_n[0]                                        # s_0 = →h_T
            C = torch.cat([h_n[0], h_n[1]], dim=1) if bi else h_n[0]
            K = self.W_k(H) if decoder == "attention" else None
            y = torch.full((src.shape[1],), lab.BOS, dtype=torch.long)
            loss = 0.0
            for t in range(tgt.shape[0]):
                if decoder == "attention":
                    scores = self.v(torch.tanh(self.W_q(s)[None] + K)).squeeze(-1)   # (S, B)
                    alpha = torch.softmax(scores, dim=0)
                    ctx = (alpha[..., None] * H).sum(0)                            # (B, dA)
                else:
                    ctx = C
                s = self.cell(torch.cat([self.dec_embed(y), ctx], dim=1), s)
                loss = loss + nn.functional.cross_entropy(self.out(s), tgt[t], reduction="sum")
                y = tgt[t]                                                         # teacher forcing
            return loss / src.shape[1]

    torch_dtype = torch.float64 if dtype == "float64" else torch.float32
    model = Twin().to(torch_dtype)
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    rng = np.random.default_rng(0)
    batches = []
    for _ in range(8):
        b = lab.make_batch("reverse", [L] * B, rng)
        batches.append((torch.from_numpy(b.src.T.copy()), torch.from_numpy(b.tgt.T.copy())))

    def step(k: int) -> None:
        src, tgt = batches[k % 8]
        opt.zero_grad()
        loss = model(src, tgt)
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 5.0)
        opt.step()

    return steps_per_second(step, seconds)


def bench_steps(seconds: float) -> None:
    from engine._alloc import keep_freed_memory

    # malloc keeps freed memory, as in the lab's training loops; set before either
    # contender runs, so PyTorch (same process) has the same allocator settings
    keep_freed_memory()
    B, L = 32, 22
    print(f"== training steps per second: batch {B}, source and target length {L + 1} "
          f"(the mean of lengths 5-40 plus EOS), teacher forcing, Adam, clipping")
    try:
        import torch  # noqa: F401
        have_torch = True
    except ImportError:
        have_torch = False
        print("torch is not installed: PyTorch comparison skipped")
    for decoder in ("attention", "fixed"):
        t0 = time.process_time()
        ours = ours_steps_per_second(decoder, B, L, seconds)
        print(f"{decoder:>9}  numba (1 thread, float64)  {ours:7.1f} steps/s   [{load()}]")
        if not have_torch:
            continue
        for threads, dtype in ((1, "float64"), (1, "float32"), (os.cpu_count() or 1, "float32")):
            theirs = torch_steps_per_second(decoder, B, L, seconds, threads, dtype)
            print(f"{decoder:>9}  torch eager ({threads} thread{'s' if threads > 1 else ''}, {dtype})"
                  f"  {theirs:7.1f} steps/s   numba/torch = {ours / theirs:4.2f}   [{load()}]")
        del t0


# ---------------------------------------------------------------------------- bottleneck run


def bench_bottleneck() -> None:
    from engine import lab

    print("== `lab bottleneck` with its defaults (both models in parallel threads)")
    print(f"before: {load()}")
    cpu0, t0 = time.process_time(), time.perf_counter()
    res = lab.bottleneck()
    wall, cpu = time.perf_counter() - t0, time.process_time() - cpu0
    print(f"after:  {load()}")
    print(f"{'length':>8} {'attention':>10} {'fixed':>8}   (token accuracy; sequence accuracy)")
    for a, f in zip(res.attention, res.fixed, strict=True):
        print(f"{a.lo:>4}-{a.hi:<3} {100 * a.token_accuracy:9.1f}% {100 * f.token_accuracy:7.1f}%"
              f"   ({100 * a.sequence_accuracy:5.1f}% {100 * f.sequence_accuracy:5.1f}%)")
    for name, r in res.runs.items():
        print(f"{name}: {r.steps} steps in {r.seconds:.1f} s ({r.steps_per_second:.1f} steps/s)")
    worst = min(a.token_accuracy for a in res.attention if a.hi <= 30)
    print(f"attention min token accuracy up to 30: {100 * worst:.1f}% (needs >= 95%)")
    print(f"gap at the longest bucket: {100 * res.gap_at_longest():.1f} points (needs >= 30)")
    print(f"wall {wall:.1f} s (budget 30 s on a quiet 2-core machine), CPU {cpu:.1f} s")


# ---------------------------------------------------------------------------- cold compile


COLD = """
import time, numpy as np
t0, c0 = time.perf_counter(), time.process_time()
from engine import lab
from engine.seq2seq import Seq2Seq, Adam, train_step, greedy_decode
t1, c1 = time.perf_counter(), time.process_time()
cfg = lab.BottleneckSettings().model_config("attention")
m = Seq2Seq.init(cfg, 0)
rng = np.random.default_rng(0)
b = lab.make_batch("reverse", [5, 6], rng)
train_step(m, Adam(cfg.n_params), b, 1.0, rng)
t2, c2 = time.perf_counter(), time.process_time()
greedy_decode(m, b.src, 3, b.src_len)
t3, c3 = time.perf_counter(), time.process_time()
print(f"import {t1 - t0:.2f} s (CPU {c1 - c0:.2f} s), training kernels {t2 - t1:.2f} s "
      f"(CPU {c2 - c1:.2f} s), greedy decoding {t3 - t2:.2f} s (CPU {c3 - c2:.2f} s)")
"""


def cold_and_warm(code: str, indent: str = "") -> None:
    """Run ``code`` in a subprocess on an empty numba cache, then again on the filled one."""
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "NUMBA_CACHE_DIR": cache}
        for label in ("cold", "warm"):
            t0 = time.perf_counter()
            out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                 env=env, cwd=ROOT, check=True)
            print(f"{indent}{label}: {out.stdout.strip()}; process {time.perf_counter() - t0:.1f} s"
                  f"   [{load()}]")


def bench_cold() -> None:
    print("== numba compile cost (a fresh, empty cache in a subprocess), then warm")
    cold_and_warm(COLD)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", choices=("steps", "bottleneck", "cold"))
    ap.add_argument("--seconds", type=float, default=5.0, help="per steps/s measurement")
    args = ap.parse_args()
    if args.only in (None, "cold"):
        bench_cold()
    if args.only in (None, "steps"):
        bench_steps(args.seconds)
    if args.only in (None, "bottleneck"):
        bench_bottleneck()


if __name__ == "__main__":
    main()
