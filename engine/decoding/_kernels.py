"""Numba kernels for decoding: beam candidate selection, top-k/top-p masks, inverse-CDF draws.

All kernels are loops over 1-D/2-D float64 arrays; the public functions in ``search.py`` and
``sampling.py`` validate input and fix the tie rules before calling them.
"""

from __future__ import annotations

import numpy as np

from engine._jit import jit


@jit
def _sift_down(heap, i):
    """Restore the min-heap property of ``heap`` below position ``i``."""
    n = heap.size
    while True:
        left = 2 * i + 1
        if left >= n:
            return
        small = left
        right = left + 1
        if right < n and heap[right] < heap[left]:
            small = right
        if heap[small] < heap[i]:
            heap[i], heap[small] = heap[small], heap[i]
            i = small
        else:
            return


@jit
def _beam_window(cum, logp, M, tol):
    """Candidates s[b, j] = cum[b] + logp[b, j] (K, V) within ``tol`` of the M-th best.

    Pass 1 keeps a size-M min-heap of scores (no K×V array, no full sort) to find the M-th
    largest score s_M. Pass 2 collects every finite candidate with s >= s_M - tol, so the
    caller can order ties at the cut by its own rule. Returns (flat index b*V + j, score).
    """
    K, V = logp.shape
    heap = np.full(M, -np.inf)
    for b in range(K):
        c = cum[b]
        for j in range(V):
            s = c + logp[b, j]
            if s > heap[0]:
                heap[0] = s
                _sift_down(heap, 0)
    thr = heap[0] - tol if heap[0] > -np.inf else -np.inf
    cap = 2 * M  # usually about M qualify; more only when ties crowd the cut
    while True:
        idx = np.empty(cap, np.int64)
        val = np.empty(cap, np.float64)
        n = _collect(cum, logp, thr, idx, val)
        if n <= cap:
            return idx[:n].copy(), val[:n].copy()
        cap = n


@jit
def _collect(cum, logp, thr, idx, val):
    """Write candidates with score >= thr into idx/val while they fit; return how many exist."""
    K, V = logp.shape
    cap = idx.size
    n = 0
    for b in range(K):
        c = cum[b]
        for j in range(V):
            s = c + logp[b, j]
            if s > -np.inf and s >= thr:
                if n < cap:
                    idx[n] = b * V + j
                    val[n] = s
                n += 1
    return n


@jit
def _tie_groups(sorted_scores, tol):
    """Group ids for scores sorted descending: a group is everything within ``tol`` of its head."""
    n = sorted_scores.size
    gid = np.empty(n, np.int64)
    g = 0
    head = sorted_scores[0] if n else 0.0
    for i in range(n):
        if sorted_scores[i] < head - tol:
            g += 1
            head = sorted_scores[i]
        gid[i] = g
    return gid


@jit
def _kth_largest(x, k):
    """The k-th largest entry of x (V,), duplicates counted (x[V - k] of x sorted): a size-k
    min-heap, O(V log k). Plain loops instead of ``np.partition``, whose numba version
    compiles for seconds."""
    heap = np.full(k, -np.inf)
    for j in range(x.size):
        if x[j] > heap[0]:
            heap[0] = x[j]
            _sift_down(heap, 0)
    return heap[0]


@jit
def _top_k_rows(x, k, out):
    """Rows of x (R, V): entries below the k-th largest value → -inf (ties with it kept)."""
    R, V = x.shape
    for r in range(R):
        kth = _kth_largest(x[r], k)
        for j in range(V):
            out[r, j] = x[r, j] if x[r, j] >= kth else -np.inf


@jit
def _sort_by_prob(p, idx):
    """Sort idx (n,) by (-p[i], i) in place, given that indices of equal p arrive ascending.

    A stable bottom-up merge sort on -p, so equal probabilities keep their index order.
    O(n log n) in plain loops (``np.argsort(kind="mergesort")`` compiles for seconds).
    """
    n = idx.size
    buf = np.empty(n, np.int64)
    width = 1
    while width < n:
        for lo in range(0, n, 2 * width):
            mid = min(lo + width, n)
            hi = min(lo + 2 * width, n)
            a, b, o = lo, mid, lo
            while a < mid and b < hi:
                if p[idx[b]] > p[idx[a]]:           # strictly greater: ties keep a first
                    buf[o] = idx[b]
                    b += 1
                else:
                    buf[o] = idx[a]
                    a += 1
                o += 1
            while a < mid:
                buf[o] = idx[a]
                a += 1
                o += 1
            while b < hi:
                buf[o] = idx[b]
                b += 1
                o += 1
        for i in range(n):
            idx[i] = buf[i]
        width *= 2


@jit
def _top_m_order(p, m):
    """Indices of the m largest entries of p (V,), sorted by (-p, index), in O(V log m)."""
    V = p.size
    m = min(m, V)
    v = _kth_largest(p, m)                          # the m-th largest value
    idx = np.empty(m, np.int64)
    c = 0
    for i in range(V):
        if p[i] > v:
            idx[c] = i
            c += 1
    for i in range(V):  # fill with entries equal to v, lowest index first
        if c == m:
            break
        if p[i] == v:
            idx[c] = i
            c += 1
    _sort_by_prob(p, idx)  # each group above is in ascending index order, as it needs
    return idx


@jit
def _top_p_rows(probs, top_p, min_keep, eps, keep):
    """keep[r, j] = token j is in row r's nucleus.

    Tokens in order of (-p, id); token i is kept iff i < min_keep or the mass of the tokens
    before it is < top_p - eps. The sorted prefix grows ×4 until the cut is inside it, so a
    small nucleus in a big vocabulary costs O(V), not a full sort.
    """
    R, V = probs.shape
    for r in range(R):
        p = probs[r]
        m = min(V, max(64, 2 * min_keep))
        while True:
            order = _top_m_order(p, m)
            before = 0.0
            n_keep = 0
            for i in range(m):
                if i < min_keep or before < top_p - eps:
                    n_keep += 1
                    before += p[order[i]]
                else:
                    break
            if n_keep < m or m == V:
                break
            m = min(V, 4 * m)
        for j in range(V):
            keep[r, j] = False
        for i in range(n_keep):
            keep[r, order[i]] = True


@jit
def _inverse_cdf(probs, u, out):
    """out[i] = first token whose cumulative probability exceeds u[i] · Σ probs (probs (V,))."""
    V = probs.size
    cdf = np.empty(V)
    acc = 0.0
    for j in range(V):                              # the running sum, as np.cumsum
        acc += probs[j]
        cdf[j] = acc
    total = cdf[V - 1]
    last = V - 1
    while last > 0 and probs[last] <= 0.0:
        last -= 1
    for i in range(u.size):
        x = u[i] * total
        lo, hi = 0, V                               # first t with cdf[t] > x (binary search,
        while lo < hi:                              # np.searchsorted side="right")
            mid = (lo + hi) // 2
            if cdf[mid] > x:
                hi = mid
            else:
                lo = mid + 1
        out[i] = lo if lo <= last else last  # rounding at the top end: the last possible token
