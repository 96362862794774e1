"""Benchmark: attention kernels — engine plain and tiled vs NumPy vs PyTorch (not a test).

Run: ``python benchmarks/attention.py`` (options: ``--sizes 256,1024``, ``--repeat 7``,
``--threads 1,2``, ``--no-memory``). One head, d = 64, float32, n = L = S. Each thread count
in ``--threads`` (default: 1 and the number of cores) gets its own table, in one run.

Contenders, all on the same seeded inputs and the same number of threads:

- ``plain``: ``engine.attention.attention`` (float64 loops, returns the n×n weights too)
- ``tiled``: ``engine.flash.flash_attention`` (online softmax, no n×n matrix)
- ``numpy``: ``softmax(Q Kᵀ / √d) V`` in NumPy with one n×n float32 buffer, in place
- ``torch``: ``torch.nn.functional.scaled_dot_product_attention`` (only if torch imports)

Time: every contender is called once to warm up (numba compile or cache load, torch's first
call), then the contenders take turns for ``--repeat`` rounds (interleaved, so a burst of
load from elsewhere hits them alike). Before its timed call each waits ``--settle`` seconds
and makes one untimed call: OpenBLAS and OpenMP threads keep spinning for up to ~0.1 s after
a call, and without the pause one contender's spinning threads slow the next one down
(measured here: torch at n = 4096 went from ~20 ms to ~150 ms right after NumPy's BLAS).
The table shows the median (and the fastest call) and the ratios tiled/x of medians (and of
the fastest calls) from this run. Outputs are checked to agree (max |Δ| < 1e-4) before anything prints.

Memory: "peak extra" is measured, not computed: each (contender, n) runs in a fresh
subprocess that builds the inputs, warms up on a tiny case (n = 32), resets the kernel's resident-set
high-water mark (``/proc/self/clear_refs``), runs the case once and reports VmHWM − VmRSS.
That counts every page touched during the call (numba, OpenBLAS and torch allocations
included, which ``tracemalloc`` cannot see), including the n×d output itself. Without
``clear_refs`` (not Linux) it falls back to ``ru_maxrss`` deltas and marks them "≥".
Cases whose n×n float32 matrix alone needs 1 GiB or more are skipped; the size is printed.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

D = 64
SIZES = (256, 1024, 4096, 16384)
GIB = 1 << 30
NEEDS_NXN = {"plain", "numpy"}  # these hold an n×n float32 matrix


def numpy_attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray) -> np.ndarray:
    """softmax(Q Kᵀ / √d) V with a single (n, n) buffer updated in place."""
    S = Q @ K.T                                 # (n, n)
    S *= np.float32(1.0 / math.sqrt(Q.shape[1]))
    S -= S.max(axis=1, keepdims=True)
    np.exp(S, out=S)
    S /= S.sum(axis=1, keepdims=True)
    return S @ V                                # (n, d)


def contenders(threads: int) -> dict[str, object]:
    """name -> f(Q, K, V) returning the (n, d) output; threads fixed for all of them."""
    from threadpoolctl import threadpool_limits

    from engine.attention import attention
    from engine.flash import flash_attention, set_threads

    set_threads(threads)  # not numba.set_num_threads: see engine.flash.get_threads
    import scipy.linalg.cython_blas  # noqa: F401 - load every BLAS before limiting them

    threadpool_limits(threads, user_api="blas")  # kept for the process (the tiled kernel
    # drops its own BLAS calls to 1 thread inside its worker threads and restores this)
    fns = {
        "plain": lambda Q, K, V: attention(Q, K, V)[0],
        "tiled": flash_attention,
        "numpy": numpy_attention,
    }
    try:
        import torch
        import torch.nn.functional as F
    except ImportError:
        return fns
    torch.set_num_threads(threads)

    def torch_fn(Q, K, V):
        q, k, v = (torch.from_numpy(a)[None, None] for a in (Q, K, V))  # (1, 1, n, d), no copy
        with torch.no_grad():
            return F.scaled_dot_product_attention(q, k, v)[0, 0].numpy()

    fns["torch"] = torch_fn
    return fns


def inputs(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return tuple(rng.standard_normal((n, D), dtype=np.float32) for _ in range(3))


def skipped(name: str, n: int) -> bool:
    """True when the contender would hold an n×n float32 matrix of 1 GiB or more."""
    return name in NEEDS_NXN and n * n * 4 >= GIB


# --------------------------------------------------------------------------- memory (child)

def _status_kib(field: str) -> int:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise KeyError(field)


def memory_child(name: str, n: int, threads: int) -> None:
    """Runs in a fresh process: print the peak extra resident memory of one call, as JSON."""
    fns = contenders(threads)
    fn = fns[name]
    fn(*inputs(32, seed=1))                      # load code, BLAS buffers, torch init; tiny, so
                                                 # no freed block is big enough to be reused
    Q, K, V = inputs(n)
    exact = True
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")                        # reset VmHWM to the current RSS
        base = _status_kib("VmRSS")
        fn(Q, K, V)
        peak = _status_kib("VmHWM")
    except OSError:
        import resource

        exact = False
        base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        fn(Q, K, V)
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"extra_bytes": max(0, peak - base) * 1024, "exact": exact}))


def measure_memory(name: str, n: int, threads: int) -> tuple[int, bool] | None:
    cmd = [sys.executable, __file__, "--memory-child", name, str(n), "--threads", str(threads)]
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
    if proc.returncode != 0:
        print(f"  memory {name} n={n}: child failed: {proc.stderr.strip().splitlines()[-1:]}",
              file=sys.stderr)
        return None
    data = json.loads(proc.stdout.strip().splitlines()[-1])
    return data["extra_bytes"], data["exact"]


# --------------------------------------------------------------------------- timing (parent)

def time_case(fns: dict, n: int, repeat: int, settle: float) -> tuple[dict, dict[str, float]]:
    """(median, fastest) seconds per contender and max |Δ| of each output vs tiled.

    Rounds: in each, every contender in turn waits ``settle`` seconds (so the thread pools
    the previous contender left spinning — OpenBLAS spins ~0.1 s after a call, OpenMP a few
    ms — go back to sleep instead of competing for the cores), makes one untimed call to
    wake its own threads, then one timed call.
    """
    Q, K, V = inputs(n)
    live = {k: f for k, f in fns.items() if not skipped(k, n)}
    outs = {k: f(Q, K, V) for k, f in live.items()}   # warm-up, also the agreement check
    diffs = {k: float(np.max(np.abs(o - outs["tiled"]))) for k, o in outs.items()}
    bad = {k: d for k, d in diffs.items() if d > 1e-4}
    if bad:
        raise SystemExit(f"outputs disagree at n={n}: max |Δ| vs tiled = {bad}")
    runs: dict[str, list[float]] = {k: [] for k in live}
    rounds = repeat if n <= 4096 else max(3, repeat // 2)
    for r in range(rounds):
        for k, f in live.items():
            if k == "plain":  # single-threaded, a second per call at n = 4096: no wake-up call
                if n >= 4096 and r >= 3:
                    continue
            else:
                time.sleep(settle)
                f(Q, K, V)
            t0 = time.perf_counter()
            f(Q, K, V)
            runs[k].append(time.perf_counter() - t0)
    return {k: (statistics.median(v), min(v)) for k, v in runs.items()}, diffs


def fmt_bytes(b: float) -> str:
    return f"{b / GIB:.2f} GiB" if b >= GIB else f"{b / (1 << 20):.1f} MiB"


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default=",".join(map(str, SIZES)))
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--threads", default=None, help="comma-separated thread counts, each for "
                    "every contender (default: 1 and engine.flash.get_threads(), the cores)")
    ap.add_argument("--settle", type=float, default=0.3, help="seconds of quiet before each "
                    "timed contender (lets the previous one's spinning threads sleep)")
    ap.add_argument("--no-memory", action="store_true", help="skip the memory subprocesses")
    ap.add_argument("--calibrate", action="store_true", help="first pick the tiles with "
                    "engine.flash.calibrate_blocks (per thread count), as 'lab scaling' does")
    ap.add_argument("--memory-child", nargs=2, metavar=("NAME", "N"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)

    from engine.flash import get_threads

    counts = ([int(t) for t in args.threads.split(",")] if args.threads else
              sorted({1, get_threads()}))
    if args.memory_child:
        memory_child(args.memory_child[0], int(args.memory_child[1]), counts[0])
        return
    print(f"CPU: {cpu_model()}")
    for threads in counts:
        run_tables(args, threads)
        print()


def cpu_model() -> str:
    """The CPU's model name, with its family and model numbers (one name covers several
    generations: "AMD EPYC" is Zen 4 at family 25 and Zen 5 at family 26)."""
    fields = {}
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                key, _, value = line.partition(":")
                fields.setdefault(key.strip(), value.strip())
    except OSError:
        pass
    if "model name" in fields:
        return (f"{fields['model name']} (family {fields.get('cpu family', '?')}, "
                f"model {fields.get('model', '?')})")
    import platform

    return platform.processor() or "unknown CPU"


def run_tables(args: argparse.Namespace, threads: int) -> None:
    """Time every size with ``threads`` threads for every contender and print the tables."""
    sizes = [int(s) for s in args.sizes.split(",")]
    fns = contenders(threads)
    names = list(fns)
    from engine._blas import single_threaded_blas
    from engine.flash import calibrate_blocks, get_blocks, get_pieces, set_blocks

    if args.calibrate:
        cal = calibrate_blocks()
        set_blocks(*cal["best"])
        print("calibration (fastest ms per tile size, n = 2048): " + ", ".join(
            f"{k} {t * 1e3:.1f}" for k, t in cal["seconds"].items()))
    print(f"tiled tiles B_q × B_k = {get_blocks()[0]} × {get_blocks()[1]}, BLAS calls of at most "
          f"{get_pieces()[0]} × {get_pieces()[1]} (OpenBLAS kernels: "
          f"{single_threaded_blas.architecture() or 'not named'})")
    load0 = os.getloadavg()
    print(f"attention benchmark: d = {D}, float32, one head; {threads} thread(s) for every "
          f"contender; load average at start {load0[0]:.2f} {load0[1]:.2f} {load0[2]:.2f}")
    if "torch" not in fns:
        print("(torch is not installed: no PyTorch column)")
    rows = []
    for n in sizes:
        med, diffs = time_case(fns, n, args.repeat, args.settle)
        mem = {}
        if not args.no_memory:
            for k in names:
                mem[k] = None if skipped(k, n) else measure_memory(k, n, threads)
        rows.append((n, med, diffs, mem))
        line = [f"n={n:>6}"]
        for k in names:
            line.append(f"{k} " + (f"{med[k][0] * 1e3:9.1f} ms" if k in med else "   skipped"))
        print("  ".join(line), flush=True)
    load1 = os.getloadavg()

    print()
    print(f"load average at end {load1[0]:.2f} {load1[1]:.2f} {load1[2]:.2f}")
    print()
    print("median ms per call (in brackets: the fastest call) and the ratio tiled/x of medians "
          "(< 1: tiled is faster; in brackets: of the fastest calls)")
    head = ["n"] + [f"{k}" for k in names] + [f"tiled/{k}" for k in names if k != "tiled"]
    print(" | ".join(f"{h:>15}" for h in head))
    for n, med, _, _ in rows:
        cells = [str(n)]
        cells += [f"{med[k][0] * 1e3:.1f} ({med[k][1] * 1e3:.1f})" if k in med else "skipped"
                  for k in names]
        cells += [f"{med['tiled'][0] / med[k][0]:.2f} ({med['tiled'][1] / med[k][1]:.2f})"
                  if k in med else "—" for k in names if k != "tiled"]
        print(" | ".join(f"{c:>15}" for c in cells))
    if not args.no_memory:
        print()
        print("peak extra resident memory of one call (measured, VmHWM − VmRSS in a fresh process;"
              " includes the n×d output):")
        print(" | ".join(f"{h:>14}" for h in ["n"] + names))
        for n, _, _, mem in rows:
            cells = [str(n)]
            for k in names:
                if skipped(k, n):
                    cells.append(f"needs {fmt_bytes(n * n * 4)}")
                elif mem.get(k) is None:
                    cells.append("?")
                else:
                    b, exact = mem[k]
                    cells.append(("" if exact else "≥") + fmt_bytes(b))
            print(" | ".join(f"{c:>14}" for c in cells))
    print()
    print("agreement with tiled (max |Δ|): " + "; ".join(
        f"n={n}: " + ", ".join(f"{k} {d:.1e}" for k, d in diffs.items() if k != "tiled")
        for n, _, diffs, _ in rows))
    skipped_notes = [f"{k} at n={n}: its n×n float32 matrix alone needs {fmt_bytes(n * n * 4)}"
                     for n in sizes for k in names if skipped(k, n)]
    for note in skipped_notes:
        print("skipped: " + note)


if __name__ == "__main__":
    main()
