"""Benchmark: the tiled attention backward vs PyTorch autograd through SDPA (not a test).

Run: ``python benchmarks/attention_backward.py`` (options: ``--sizes 1024,4096``,
``--threads 1,2``, ``--repeat 7``, ``--causal``). One head, d = 64, float32, n = L = S.

For each thread count and n, on the same seeded Q, K, V, dO:

- ``tiled bwd``: ``engine.flash_backward.flash_attention_backward`` given the forward's
  output and row statistics (``flash_attention(..., return_lse=True)``), i.e. the backward
  alone, as autograd runs it.
- ``torch bwd``: ``out.backward(dO)`` after ``torch.nn.functional.scaled_dot_product_attention``
  with ``requires_grad`` inputs (only the ``backward`` call is timed).
- ``fwd+bwd``: one forward and one backward of each, timed together (a training step's share).

Gradients are checked to agree (max |Δ| relative to the largest gradient < 1e-4) before
anything prints. Timing as ``benchmarks/attention.py``: everything warmed up first, then the
contenders take turns for ``--repeat`` rounds with a ``--settle`` pause before each timed call
(spinning BLAS/OpenMP threads of the previous contender go to sleep). Ratios are tiled/torch
of the medians (in brackets: of the fastest calls) from this run; below 1 the tiled kernel is
faster. PyTorch is required here (``pip install torch``); it is never a dependency of attn-tutor.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

D = 64

from attention import cpu_model  # noqa: E402 - benchmarks/attention.py, next to this script


def contenders(n: int, causal: bool, seed: int = 0) -> dict:
    """name -> (call, gradients of the last call) on one seeded case."""
    import torch
    import torch.nn.functional as F

    from engine.flash import flash_attention
    from engine.flash_backward import flash_attention_backward

    rng = np.random.default_rng(seed)
    Q, K, V, dO = (rng.standard_normal((n, D), dtype=np.float32) for _ in range(4))
    out, lse = flash_attention(Q, K, V, causal=causal, return_lse=True)
    tq, tk, tv = (torch.from_numpy(a.copy())[None, None].requires_grad_(True) for a in (Q, K, V))
    tdo = torch.from_numpy(dO)[None, None]
    state: dict = {}

    def tiled_bwd():
        state["tiled"] = flash_attention_backward(Q, K, V, dO, out=out, lse=lse, causal=causal)

    def tiled_step():
        o, m = flash_attention(Q, K, V, causal=causal, return_lse=True)
        flash_attention_backward(Q, K, V, dO, out=o, lse=m, causal=causal)

    def torch_forward():
        for t in (tq, tk, tv):
            t.grad = None
        return F.scaled_dot_product_attention(tq, tk, tv, is_causal=causal)

    def torch_bwd_timed() -> float:                        # forward untimed, backward timed
        o = torch_forward()
        t0 = time.perf_counter()
        o.backward(tdo)
        return time.perf_counter() - t0

    def torch_step():
        torch_forward().backward(tdo)

    def torch_grads():
        return [t.grad[0, 0].numpy() for t in (tq, tk, tv)]

    return {"tiled bwd": tiled_bwd, "torch bwd": torch_bwd_timed, "tiled fwd+bwd": tiled_step,
            "torch fwd+bwd": torch_step, "_grads": (lambda: state["tiled"], torch_grads)}


def time_case(n: int, threads: int, repeat: int, settle: float, causal: bool) -> dict:
    import torch

    from engine.flash import set_threads

    set_threads(threads)
    torch.set_num_threads(threads)
    fns = contenders(n, causal)
    tiled_grads, torch_grads = fns.pop("_grads")
    for f in fns.values():
        f()                                                # warm-up (compile, first call)
    worst = max(float(np.max(np.abs(a - b)) / np.max(np.abs(b)))
                for a, b in zip(tiled_grads(), torch_grads()))
    if worst > 1e-4:
        raise SystemExit(f"gradients disagree at n={n}: max relative |Δ| = {worst:.1e}")
    runs: dict[str, list[float]] = {k: [] for k in fns}
    for _ in range(repeat):
        for name, f in fns.items():
            time.sleep(settle)
            f()                                            # wake this contender's threads
            t0 = time.perf_counter()
            res = f()
            took = time.perf_counter() - t0
            runs[name].append(res if name == "torch bwd" else took)
    return {"times": {k: (statistics.median(v), min(v)) for k, v in runs.items()}, "agree": worst}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="1024,2048,4096")
    ap.add_argument("--threads", default="1,2", help="comma-separated thread counts")
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--settle", type=float, default=0.2)
    ap.add_argument("--causal", action="store_true")
    args = ap.parse_args(argv)
    try:
        import torch
    except ImportError:
        raise SystemExit("this benchmark compares with PyTorch: pip install torch") from None
    import scipy.linalg.cython_blas  # noqa: F401 - load every BLAS before limiting them
    from threadpoolctl import threadpool_limits

    load0 = os.getloadavg()
    print(f"attention backward benchmark: {cpu_model()}, d = {D}, float32, one head"
          f"{', causal' if args.causal else ''}; torch {torch.__version__}; "
          f"load average at start {load0[0]:.2f} {load0[1]:.2f} {load0[2]:.2f}")
    rows = []
    for threads in (int(t) for t in args.threads.split(",")):
        threadpool_limits(threads, user_api="blas")
        for n in (int(s) for s in args.sizes.split(",")):
            res = time_case(n, threads, args.repeat, args.settle, args.causal)
            rows.append((threads, n, res))
            t = res["times"]
            print(f"threads={threads} n={n:>6}: " + "  ".join(
                f"{k} {v[0] * 1e3:.1f} ms" for k, v in t.items()), flush=True)
    load1 = os.getloadavg()
    print(f"\nload average at end {load1[0]:.2f} {load1[1]:.2f} {load1[2]:.2f}\n")
    print("median ms (fastest) and ratio tiled/torch of medians (of the fastest calls); < 1: tiled is faster")
    head = ["threads", "n", "tiled bwd", "torch bwd", "bwd ratio", "tiled fwd+bwd", "torch fwd+bwd",
            "fwd+bwd ratio", "agree"]
    print(" | ".join(f"{h:>13}" for h in head))
    for threads, n, res in rows:
        t = res["times"]

        def cell(k):
            return f"{t[k][0] * 1e3:.1f} ({t[k][1] * 1e3:.1f})"

        def ratio(a, b):
            return f"{t[a][0] / t[b][0]:.2f} ({t[a][1] / t[b][1]:.2f})"

        cells = [str(threads), str(n), cell("tiled bwd"), cell("torch bwd"),
                 ratio("tiled bwd", "torch bwd"), cell("tiled fwd+bwd"), cell("torch fwd+bwd"),
                 ratio("tiled fwd+bwd", "torch fwd+bwd"), f"{res['agree']:.0e}"]
        print(" | ".join(f"{c:>13}" for c in cells))


if __name__ == "__main__":
    main()
