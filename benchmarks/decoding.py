"""Benchmark: beam-search candidate selection and a 50-step beam search (not a test).

Run: ``python benchmarks/decoding.py``. Everything compared is timed in the same run, on the
same inputs, after a warm-up (numba compile / cache load excluded), and the selections are
checked to agree before any number is printed.

1. One beam step, K = 8, V = 50,000: the 2K best of cum[b] + log_probs[b, j].
   - engine ``top_candidates`` (heap over K·V, no K×V array, no full sort; input validated)
   - NumPy, straightforward: ``argsort`` of the flattened K×V scores
   - NumPy, careful: ``argpartition`` then sort the 2K
   - ``torch.topk`` on the K×V scores (when torch is installed; 1 thread, like the kernel)
2. 50 steps of beam search (K = 8) on a random bigram table model (V = 1,000):
   engine ``beam_search`` against a plain NumPy implementation of the same HF algorithm.
"""

from __future__ import annotations

import statistics
import time

import numpy as np

from engine.decoding import TIE_TOL, TableModel, beam_search, top_candidates
from engine.decoding._kernels import _beam_window


def timeit(fn, repeat: int = 7, number: int = 5) -> float:
    """Median seconds per call over ``repeat`` batches of ``number`` calls."""
    fn()
    runs = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        runs.append((time.perf_counter() - t0) / number)
    return statistics.median(runs)


def numpy_argsort(cum, lp, n):
    scores = (cum[:, None] + lp).ravel()  # (K·V,)
    order = np.argsort(-scores, kind="stable")[:n]
    return order, scores[order]


def numpy_argpartition(cum, lp, n):
    scores = (cum[:, None] + lp).ravel()  # (K·V,)
    part = np.argpartition(-scores, n - 1)[:n]
    order = part[np.lexsort((part, -scores[part]))]
    return order, scores[order]


def bench_one_step(K: int = 8, V: int = 50_000) -> None:
    rng = np.random.default_rng(0)
    logits = rng.normal(0, 3, (K, V))
    lp = logits - np.log(np.exp(logits).sum(axis=1, keepdims=True))  # (K, V) log-softmax
    cum = np.ascontiguousarray(np.sort(rng.normal(-10, 2, K))[::-1])  # (K,)
    n = 2 * K

    parents, tokens, _ = top_candidates(cum, lp, n)
    engine_idx = parents * V + tokens
    for f in (numpy_argsort, numpy_argpartition):
        assert f(cum, lp, n)[0].tolist() == engine_idx.tolist(), f.__name__
    t_engine = timeit(lambda: top_candidates(cum, lp, n))
    t_kernel = timeit(lambda: _beam_window(cum, lp, n, TIE_TOL))
    t_sort = timeit(lambda: numpy_argsort(cum, lp, n))
    t_part = timeit(lambda: numpy_argpartition(cum, lp, n))
    print(f"one beam step, K = {K}, V = {V:,} (select the {n} best of {K * V:,} candidates)")
    print(f"  engine top_candidates   {t_engine * 1e3:8.3f} ms   (kernel alone, no input checks: "
          f"{t_kernel * 1e3:.3f} ms)")
    print(f"  numpy argsort           {t_sort * 1e3:8.3f} ms   engine is {t_sort / t_engine:5.1f}x faster")
    print(f"  numpy argpartition      {t_part * 1e3:8.3f} ms   engine is {t_part / t_engine:5.1f}x faster")
    try:
        import torch
    except ImportError:
        print("  torch.topk              (torch not installed)")
        return
    torch.set_num_threads(1)
    cum_t, lp_t = torch.from_numpy(cum), torch.from_numpy(lp)

    def torch_topk():
        return (cum_t[:, None] + lp_t).view(-1).topk(n)

    vals, idx = torch_topk()
    assert sorted(idx.tolist()) == sorted(engine_idx.tolist())
    t_torch = timeit(torch_topk)
    print(f"  torch.topk (1 thread)   {t_torch * 1e3:8.3f} ms   engine is {t_torch / t_engine:5.1f}x faster")


def numpy_beam_search(table: np.ndarray, bos: int, eos: int, K: int, T: int):
    """The HF algorithm (early_stopping=True, no length penalty) written plainly with NumPy."""
    logt = np.log(table)  # (V, V)
    V = table.shape[0]
    seqs = [[]]
    cum = np.zeros(1)
    last = np.array([bos])
    finished: list[tuple[float, tuple[int, ...]]] = []
    for _ in range(T):
        scores = (cum[:, None] + logt[last]).ravel()  # (K·V,)
        order = np.argsort(-scores, kind="stable")[: 2 * K]
        new_seqs, new_cum, new_last = [], [], []
        for rank, i in enumerate(order):
            b, j = divmod(int(i), V)
            if j == eos:
                if rank < K and (len(finished) < K or scores[i] > min(finished)[0]):
                    finished.append((float(scores[i]), tuple(seqs[b] + [j])))
                    finished = sorted(finished, reverse=True)[:K]
                continue
            new_seqs.append(seqs[b] + [j])
            new_cum.append(scores[i])
            new_last.append(j)
            if len(new_seqs) == K:
                break
        seqs, cum, last = new_seqs, np.array(new_cum), np.array(new_last)
        if len(finished) >= K:
            return finished
    for s, c in zip(seqs, cum):
        if len(finished) < K or c > min(finished)[0]:
            finished = sorted(finished + [(float(c), tuple(s))], reverse=True)[:K]
    return finished


def bench_beam_search(K: int = 8, V: int = 1_000, T: int = 50) -> None:
    rng = np.random.default_rng(1)
    table = rng.dirichlet(np.full(V, 0.1), size=V)  # (V, V), peaked rows
    table[:, 1] = 1e-4  # token 1 = EOS, rare: the search runs all T steps
    table /= table.sum(axis=1, keepdims=True)
    model = TableModel([f"w{i}" for i in range(V)], table, bos=0, eos=1)

    res = beam_search(model, K, T)
    want = numpy_beam_search(table, 0, 1, K, T)
    assert [h.tokens for h in res.n_best] == [w[1] for w in want]
    assert len(res.steps) == T
    t_engine = timeit(lambda: beam_search(model, K, T), repeat=5, number=2)
    t_numpy = timeit(lambda: numpy_beam_search(table, 0, 1, K, T), repeat=5, number=2)
    print(f"\nbeam search, K = {K}, {T} steps, bigram table model V = {V:,}")
    print(f"  engine beam_search      {t_engine * 1e3:8.2f} ms  ({t_engine / T * 1e3:.3f} ms/step, full step records)")
    print(f"  plain numpy             {t_numpy * 1e3:8.2f} ms   engine is {t_numpy / t_engine:5.1f}x faster")


if __name__ == "__main__":
    bench_one_step()
    bench_beam_search()
