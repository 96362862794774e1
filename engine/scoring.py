"""Attention scoring functions (lecture §8 "Attention Scoring Mechanisms").

    dot           score(q, k) = q · k
    scaled dot    score(q, k) = q · k / √d_k                       (Vaswani et al., 2017)
    general       score(q, k) = qᵀ M k                             (Luong et al., 2015, "general")
    additive      score(q, k) = vᵀ tanh(W_q q + W_k k)             (Bahdanau et al., 2014)
    distance      score(q, k) = −‖q − k‖² (times a scale)           (RBF / L2 attention)

−‖q − k‖² = 2 q·k − ‖q‖² − ‖k‖²: the ‖q‖² term is the same for every key of one query and
cancels in the softmax, so distance attention is dot-product attention (at scale 2) with a
per-key bias −‖k‖²; with keys of equal length the two give the same weights.

The dot and distance forms need d_q = d_k; the general and additive forms do not (M or W_q, W_k bridge the
dimensions). Every function takes one query (d,) → scores (S,), or a stack of queries (L, d)
→ scores (L, S), against keys K (S, d). Scores are raw numbers: apply
:func:`engine.softmax.softmax` (or :func:`engine.attention.attention`) to get weights.

:func:`dot_product_variance` is the reason for the √d_k: Var(q·k) = d_k·σ_q²·σ_k².
"""

from __future__ import annotations

import math

import numpy as np

from engine._jit import jit
from engine._validate import as_float, check_positive_int, check_same_dim, check_scalar, result_dtype


@jit
def _dot_scores(Q, K, scale, out):
    """out (L, S) = scale · Q (L, d) Kᵀ (d, S), accumulated in float64."""
    L, d = Q.shape
    S = K.shape[0]
    for i in range(L):
        for j in range(S):
            acc = 0.0
            for c in range(d):
                acc += Q[i, c] * K[j, c]
            out[i, j] = acc * scale


@jit
def _distance_scores(Q, K, scale, out):
    """out (L, S) = −scale · ‖Q_i − K_j‖², the squared differences summed in float64."""
    L, d = Q.shape
    S = K.shape[0]
    for i in range(L):
        for j in range(S):
            acc = 0.0
            for c in range(d):
                diff = Q[i, c] - K[j, c]
                acc += diff * diff
            out[i, j] = 0.0 - acc * scale  # not -acc·scale: no "-0" for a key equal to the query


@jit
def _general_scores(Q, K, M, out):
    """out (L, S) = Q (L, d_q) M (d_q, d_k) Kᵀ (d_k, S)."""
    L, d_q = Q.shape
    S, d_k = K.shape
    QM = np.zeros(d_k)  # one row of Q M at a time
    for i in range(L):
        for c in range(d_k):
            acc = 0.0
            for a in range(d_q):
                acc += Q[i, a] * M[a, c]
            QM[c] = acc
        for j in range(S):
            acc = 0.0
            for c in range(d_k):
                acc += QM[c] * K[j, c]
            out[i, j] = acc


@jit
def _project_rows(X, W):
    """(n, h) float64 rows W x_i for X (n, d) and W (h, d): the additive scorer's projections."""
    n, d = X.shape
    h = W.shape[0]
    out = np.zeros((n, h))
    for i in range(n):
        for a in range(h):
            acc = 0.0
            for c in range(d):
                acc += W[a, c] * X[i, c]
            out[i, a] = acc
    return out


@jit
def _additive_scores(Q, K, W_q, W_k, v, out):
    """out[i, j] = Σ_a v[a] tanh((W_q Q_i)[a] + (W_k K_j)[a]); W_q (h, d_q), W_k (h, d_k)."""
    L = Q.shape[0]
    S = K.shape[0]
    h = v.shape[0]
    A = _project_rows(Q, W_q)  # (L, h) projected queries W_q q_i
    B = _project_rows(K, W_k)  # (S, h) projected keys W_k k_j
    for i in range(L):
        for j in range(S):
            acc = 0.0
            for a in range(h):
                acc += v[a] * math.tanh(A[i, a] + B[j, a])
            out[i, j] = acc


def _queries_keys(Q: object, K: object, *, same_dim: bool) -> tuple[np.ndarray, np.ndarray, bool]:
    """Check Q (d,) or (L, d) and K (S, d_k); return Q as 2-D, K, and whether Q was 1-D."""
    q = as_float(Q, "Q", ndim=(1, 2))
    k = as_float(K, "K", ndim=2)
    single = q.ndim == 1
    q2 = q.reshape(1, -1) if single else q
    if same_dim:
        check_same_dim(k, 1, q2.shape[1], "K", ("S", q2.shape[1]),
                       f"keys must have the query's dimension d_k = {q2.shape[1]}")
    return q2, k, single


def _finish(out: np.ndarray, single: bool) -> np.ndarray:
    return out[0] if single else out


def dot_scores(Q: object, K: object) -> np.ndarray:
    """Plain dot-product scores q · k_j.

    Args:
        Q: one query (d_k,) or queries (L, d_k).
        K: keys (S, d_k).

    Returns:
        Scores (S,) for a single query, or (L, S).

    Raises:
        ValueError: on wrong shapes, mismatched d_k, NaN/inf or empty input.
    """
    q, k, single = _queries_keys(Q, K, same_dim=True)
    dt = result_dtype(q, k)
    out = np.empty((q.shape[0], k.shape[0]), dtype=dt)  # (L, S)
    _dot_scores(q.astype(dt, copy=False), k.astype(dt, copy=False), 1.0, out)
    return _finish(out, single)


def scaled_dot_scores(Q: object, K: object, scale: float | None = None) -> np.ndarray:
    """Scaled dot-product scores q · k_j / √d_k (Vaswani et al., 2017).

    Args:
        Q: one query (d_k,) or queries (L, d_k).
        K: keys (S, d_k).
        scale: multiplier for the dot products; default 1/√d_k. Must be > 0.

    Returns:
        Scores (S,) for a single query, or (L, S).

    Raises:
        ValueError: on wrong shapes, mismatched d_k, NaN/inf, empty input or scale <= 0.
    """
    q, k, single = _queries_keys(Q, K, same_dim=True)
    s = 1.0 / math.sqrt(q.shape[1]) if scale is None else check_scalar(
        scale, "scale", low=0.0, low_open=True)
    dt = result_dtype(q, k)
    out = np.empty((q.shape[0], k.shape[0]), dtype=dt)  # (L, S)
    _dot_scores(q.astype(dt, copy=False), k.astype(dt, copy=False), s, out)
    return _finish(out, single)


def distance_scores(Q: object, K: object, scale: float = 1.0) -> np.ndarray:
    """Distance-based scores −scale · ‖q − k_j‖²: the nearer a key, the higher its score.

    Softmax of these is a Gaussian (RBF) kernel over the keys. Expanding the square,
    −‖q − k‖² = 2 q·k − ‖q‖² − ‖k‖²; the −‖q‖² term is shared by all keys of one query and
    cancels in the softmax, so the weights equal softmax(2 q·k − ‖k‖²) (times ``scale``).

    Args:
        Q: one query (d,) or queries (L, d).
        K: keys (S, d).
        scale: multiplier of the negated squared distance (> 0), e.g. 1/(2σ²) for an RBF
            kernel of width σ, or 1/√d as in scaled dot-product scoring. Default 1.

    Returns:
        Scores (S,) for a single query, or (L, S); every score is ≤ 0, and 0 only for a key
        equal to the query.

    Raises:
        ValueError: on wrong shapes, mismatched d, NaN/inf, empty input or scale <= 0.
    """
    q, k, single = _queries_keys(Q, K, same_dim=True)
    s = check_scalar(scale, "scale", low=0.0, low_open=True)
    dt = result_dtype(q, k)
    out = np.empty((q.shape[0], k.shape[0]), dtype=dt)  # (L, S)
    _distance_scores(q.astype(dt, copy=False), k.astype(dt, copy=False), s, out)
    return _finish(out, single)


def general_scores(Q: object, K: object, M: object) -> np.ndarray:
    """Bilinear ("general") scores qᵀ M k_j; lets d_q differ from d_k.

    Args:
        Q: one query (d_q,) or queries (L, d_q).
        K: keys (S, d_k).
        M: (d_q, d_k) learned matrix.

    Returns:
        Scores (S,) for a single query, or (L, S).

    Raises:
        ValueError: on wrong shapes (M must be (d_q, d_k)), NaN/inf or empty input.
    """
    q, k, single = _queries_keys(Q, K, same_dim=False)
    m = as_float(M, "M", shape=(q.shape[1], k.shape[1]))
    dt = result_dtype(q, k, m)
    out = np.empty((q.shape[0], k.shape[0]), dtype=dt)  # (L, S)
    _general_scores(q.astype(dt, copy=False), k.astype(dt, copy=False),
                    m.astype(dt, copy=False), out)
    return _finish(out, single)


def check_additive_params(q: np.ndarray, k: np.ndarray, W_q: object, W_k: object,
                          v: object) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """W_q (h, d_q), W_k (h, d_k), v (h,) checked against queries q (L, d_q), keys k (S, d_k)."""
    wq = as_float(W_q, "W_q", ndim=2)
    check_same_dim(wq, 1, q.shape[1], "W_q", ("h", q.shape[1]),
                   f"W_q q needs W_q to have d_q = {q.shape[1]} columns")
    h = wq.shape[0]
    return wq, as_float(W_k, "W_k", shape=(h, k.shape[1])), as_float(v, "v", shape=(h,))


def additive_scores(Q: object, K: object, W_q: object, W_k: object, v: object) -> np.ndarray:
    """Additive (Bahdanau) scores vᵀ tanh(W_q q + W_k k_j); lets d_q differ from d_k.

    Args:
        Q: one query (d_q,) or queries (L, d_q).
        K: keys (S, d_k).
        W_q: (h, d_q) query projection.
        W_k: (h, d_k) key projection.
        v: (h,) output vector.

    Returns:
        Scores (S,) for a single query, or (L, S).

    Raises:
        ValueError: on wrong shapes, NaN/inf or empty input.
    """
    q, k, single = _queries_keys(Q, K, same_dim=False)
    wq, wk, vv = check_additive_params(q, k, W_q, W_k, v)
    dt = result_dtype(q, k, wq, wk, vv)
    out = np.empty((q.shape[0], k.shape[0]), dtype=dt)  # (L, S)
    _additive_scores(q.astype(dt, copy=False), k.astype(dt, copy=False),
                     wq.astype(dt, copy=False), wk.astype(dt, copy=False),
                     vv.astype(dt, copy=False), out)
    return _finish(out, single)


def dot_product_variance(d_k: int, var_q: float = 1.0, var_k: float = 1.0) -> float:
    """Var(q·k) when q and k have d_k independent, zero-mean entries (§8, "why √d_k").

    q·k = Σᵢ qᵢkᵢ; each term has mean 0 and Var(qᵢkᵢ) = E[qᵢ²]E[kᵢ²] = σ_q²σ_k², and the d_k
    independent terms add: Var(q·k) = d_k·σ_q²·σ_k². Dividing the scores by √d_k brings this
    back to σ_q²σ_k² (1 for unit variances) whatever d_k is.

    Args:
        d_k: number of entries in q and k (an integer >= 1).
        var_q: σ_q², the variance of each query entry (>= 0).
        var_k: σ_k², the variance of each key entry (>= 0).

    Returns:
        d_k · var_q · var_k.

    Raises:
        ValueError: if d_k is not an integer >= 1, or a variance is negative, NaN or inf.
    """
    d = check_positive_int(d_k, "d_k")
    sq = check_scalar(var_q, "var_q", low=0.0)
    sk = check_scalar(var_k, "var_k", low=0.0)
    return d * sq * sk
