"""Attention families (§4, §6, §9): dynamic context vector, one self-attention row, pooling.

Each ``make_<family>(rng)`` returns the problem-specific fields of a
:class:`~tutor.quiz.generators.Problem`; the answers come from the engine.
"""

from __future__ import annotations

import numpy as np

from tutor.quiz.generators._base import Part
from tutor.quiz.generators.scoring import grid
from tutor.render.numbers import matrix as mat
from tutor.render.numbers import number as num
from tutor.render.numbers import vector as vec

# Projection matrices simple enough to apply by hand (row convention: Q = X W_Q); the exam
# wing draws its own Q/K/V projections from them too.
SIMPLE_W = (
    ((1.0, 0.0), (0.0, 1.0)),
    ((0.0, 1.0), (1.0, 0.0)),
    ((1.0, 0.0), (0.0, 0.5)),
    ((0.5, 0.0), (0.0, 1.0)),
    ((1.0, 1.0), (0.0, 1.0)),
    ((1.0, 0.0), (1.0, 1.0)),
    ((1.0, 0.0), (0.0, -1.0)),
)


def simplex(rng: np.random.Generator, n: int, step: float = 0.05) -> np.ndarray:
    """n positive weights on a ``step`` grid that sum to exactly 1 (in the grid's units)."""
    units = round(1 / step)
    cuts = np.sort(rng.choice(np.arange(1, units), size=n - 1, replace=False))
    parts = np.diff(np.concatenate(([0], cuts, [units])))
    return np.round(parts * step, 6)


def make_context_vector(rng: np.random.Generator) -> dict:
    from engine.pooling import attention_pool  # deferred: loads numba (start-up time)

    T = 3
    alpha = simplex(rng, T)
    H = grid(rng, -1, 1, 0.1, (T, 2))
    C = attention_pool(H, alpha)  # (2,)
    rows = "\n".join(f"  H{i + 1} = {vec(H[i])}" for i in range(T))
    return dict(
        prompt=(f"At decoder step t the attention weights over three encoder states are "
                f"α = {vec(alpha)}, and\n{rows}"),
        parts=(Part.vector("The context vector C_t = Σᵢ αᵢ Hᵢ?", C, tolerance=0.01, value="C₁"),),
        solution=(
            "C_t = " + " + ".join(f"{num(a)}·{vec(h)}" for a, h in zip(alpha, H)),
            f"C_t = {vec(C)}",
            "A fresh C_t at every decoder step is what removes the fixed-context bottleneck.",
        ),
        trace_inputs={"source": ["h1", "h2", "h3"], "target": "y_t", "weights": alpha[None, :],
                      "H": H},
        data={"H": H, "alpha": alpha},
    )


def make_self_attention_row(rng: np.random.Generator) -> dict:
    from engine.attention import self_attention  # deferred: loads numba (start-up time)

    n = 3
    while True:
        X = grid(rng, -1, 1, 0.5, (n, 2))
        if len({tuple(r) for r in X}) == n and np.all(np.any(X != 0, axis=1)):
            break
    picks = rng.choice(len(SIMPLE_W), size=3)
    W_Q, W_K, W_V = (np.array(SIMPLE_W[i]) for i in picks)
    i = int(rng.integers(0, n))
    Z, A = self_attention(X, W_Q, W_K, W_V)  # (n, 2), (n, n)
    Q, K, V = X @ W_Q, X @ W_K, X @ W_V  # working shown to the student
    return dict(
        prompt=(f"Self-attention over three tokens (one per row of X, d_k = 2):\n"
                f"  X = {mat(X)}\n  W_Q = {mat(W_Q)}, W_K = {mat(W_K)}, W_V = {mat(W_V)}\n"
                f"Q = X W_Q, K = X W_K, V = X W_V; weights softmax(Q Kᵀ / √d_k) row by row."),
        parts=(
            Part.vector(f"(a) The attention weights of token {i + 1} over tokens 1–3?", A[i],
                        tolerance=0.01, value="weights"),
            Part.vector(f"(b) The output Z{i + 1}?", Z[i], tolerance=0.02, value="output"),
        ),
        solution=(
            f"Q{i + 1} = {vec(Q[i])}; K = {mat(K)}; V = {mat(V)}",
            f"scores = Q{i + 1}·Kⱼ / √2 = {vec(Q[i] @ K.T / np.sqrt(2))}",
            f"α = softmax(scores) = {vec(A[i])}",
            f"Z{i + 1} = Σⱼ αⱼ Vⱼ = {vec(Z[i])}",
        ),
        trace_inputs={"tokens": ["t1", "t2", "t3"], "X": X, "W_Q": W_Q, "W_K": W_K, "W_V": W_V,
                      "position": i + 1},
        data={"X": X, "W_Q": W_Q, "W_K": W_K, "W_V": W_V, "i": i},
    )


def make_pooling(rng: np.random.Generator) -> dict:
    from engine.pooling import attention_pool, max_pool, mean_pool  # deferred: loads numba (start-up time)

    n = 5
    V = rng.integers(1, 10, size=n).astype(float)
    spike = int(rng.integers(0, n))
    V[spike] = float(rng.integers(5, 21) * 5)  # 25..100: the outlier
    while True:
        alpha = simplex(rng, n)
        if alpha[spike] <= 0.1:  # weights learnt to ignore the spike
            break
    mx, mean, att = float(max_pool(V)), float(mean_pool(V)), float(attention_pool(V, alpha))
    return dict(
        prompt=(f"Five sensor readings V = {vec(V)} (one is a spike) and learnt attention "
                f"weights α = {vec(alpha)}."),
        parts=(
            Part("(a) Max pooling?", "number", mx, value="max"),
            Part("(b) Average (mean) pooling?", "number", mean, tolerance=0.01, value="mean"),
            Part("(c) Attention pooling Σ αᵢ Vᵢ?", "number", att, tolerance=0.01, value="attention"),
        ),
        solution=(
            f"max = {num(mx)} (the spike decides alone)",
            f"mean = ({' + '.join(num(v) for v in V)}) / {n} = {num(mean)} (the spike drags it)",
            "attention = " + " + ".join(f"{num(a)}·{num(v)}" for a, v in zip(alpha, V))
            + f" = {num(att)}",
        ),
        trace_inputs={"values": V, "weights": alpha},
        data={"V": V, "alpha": alpha},
    )
