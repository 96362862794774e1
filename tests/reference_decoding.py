"""Slow, obviously-right twins of engine.decoding, for the tests only.

Plain Python / NumPy: full sorts, itertools.product, and Hugging Face's logits warpers and
BeamSearchScorer re-written in the most direct way. Nothing here imports engine.decoding.
"""

from __future__ import annotations

import itertools
import math

import numpy as np


def lp_factor(L: int, length_penalty) -> float:
    """lp(L): 1, L^α (HF) or ((5 + L) / 6)^α (GNMT)."""
    if length_penalty is None:
        return 1.0
    kind, alpha = length_penalty
    return L ** alpha if kind == "hf" else ((5 + L) / 6) ** alpha


def table_logp(table: np.ndarray, bos: int | None, seq: tuple[int, ...]) -> float:
    """Σ log P(y_t | previous n-1 tokens, BOS-padded) straight from the table."""
    n = table.ndim
    ctx = [bos] * (n - 1)
    total = 0.0
    for y in seq:
        p = table[tuple(ctx[len(ctx) - (n - 1):]) + (y,)] if n > 1 else table[y]
        total += math.log(p) if p > 0 else -math.inf
        ctx.append(y)
    return total


def all_sequences(V: int, eos: int | None, T: int):
    """Every sequence a decoder can output: ends with EOS (EOS nowhere else), or has length T."""
    for t in range(1, T + 1):
        for seq in itertools.product(range(V), repeat=t):
            if eos is not None and eos in seq[:-1]:
                continue
            if t < T and seq[-1] != eos:
                continue
            yield seq


def exhaustive_search(table: np.ndarray, bos: int | None, eos: int | None, T: int, length_penalty=None):
    """All (score, logp, seq), best first, by enumerating every sequence."""
    V = table.shape[-1]
    out = []
    for seq in all_sequences(V, eos, T):
        logp = table_logp(table, bos, seq)
        out.append((logp / lp_factor(len(seq), length_penalty), logp, seq))
    out.sort(key=lambda x: -x[0])
    return out


def greedy(table: np.ndarray, bos: int | None, eos: int | None, T: int) -> tuple[int, ...]:
    """argmax at each step (np.argmax: first maximum)."""
    n = table.ndim
    ctx = [bos] * (n - 1)
    seq: list[int] = []
    for _ in range(T):
        row = table[tuple(ctx[len(ctx) - (n - 1):])] if n > 1 else table
        y = int(np.argmax(row))
        seq.append(y)
        ctx.append(y)
        if y == eos:
            break
    return tuple(seq)


def hf_beam_search(table: np.ndarray, bos: int | None, eos: int | None, K: int, T: int,
                   length_penalty=None, early_stopping=True):
    """transformers' BeamSearchScorer logic in plain Python: list of (score, logp, seq), best first."""
    V = table.shape[-1]
    beams = [((), 0.0)]
    finished: list[tuple[float, float, tuple[int, ...]]] = []

    def add(seq, logp):
        score = logp / lp_factor(len(seq), length_penalty)
        worst = min(f[0] for f in finished) if finished else None
        if len(finished) < K or score > worst:
            finished.append((score, logp, seq))
            if len(finished) > K:
                finished.remove(min(finished, key=lambda f: f[0]))

    for t in range(1, T + 1):
        cands = []
        for seq, cum in beams:
            for w in range(V):
                s = table_logp(table, bos, seq + (w,))
                if s > -math.inf:
                    cands.append((s, seq + (w,)))
        cands.sort(key=lambda c: -c[0])  # full sort
        cands = cands[: 2 * K]
        new = []
        for rank, (s, seq) in enumerate(cands):
            if seq[-1] == eos:
                if rank < K:
                    add(seq, s)
            else:
                new.append((seq, s))
            if len(new) == K:
                break
        beams = new
        if len(finished) >= K:
            if early_stopping is True:
                return sorted(finished, key=lambda f: -f[0])
            best = cands[0][0]
            lengths = (t,) if early_stopping is False else (t, T)
            if min(f[0] for f in finished) >= max(best / lp_factor(L, length_penalty) for L in lengths):
                return sorted(finished, key=lambda f: -f[0])
        if not beams:
            return sorted(finished, key=lambda f: -f[0])
    for seq, s in beams:
        add(seq, s)
    return sorted(finished, key=lambda f: -f[0])


def softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - np.max(x))
    return e / e.sum()


def hf_top_k(scores: np.ndarray, k: int, min_tokens_to_keep: int = 1) -> np.ndarray:
    """TopKLogitsWarper: remove scores < the k-th largest (k = min(max(k, min_keep), V))."""
    k = min(max(k, min_tokens_to_keep), scores.size)
    kth = np.sort(scores)[::-1][k - 1]
    return np.where(scores < kth, -np.inf, scores)


def hf_top_p(scores: np.ndarray, p: float, min_tokens_to_keep: int = 1) -> np.ndarray:
    """TopPLogitsWarper: ascending sort, cumsum of softmax, remove cumsum <= 1 - p, keep the top min_keep."""
    order = np.argsort(scores, kind="stable")  # ascending
    cum = np.cumsum(softmax(scores[order]))
    remove_sorted = cum <= 1 - p
    remove_sorted[-min_tokens_to_keep:] = False
    remove = np.zeros(scores.size, bool)
    remove[order] = remove_sorted
    return np.where(remove, -np.inf, scores)

