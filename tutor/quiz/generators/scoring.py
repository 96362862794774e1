"""Scoring families (§6, §8): scaled dot scores, softmax weights, additive score, masks, Var(q·k),
the softmax Jacobian.

Each ``make_<family>(rng)`` returns the problem-specific fields of a
:class:`~tutor.quiz.generators.Problem`; the answers come from the engine.
"""

from __future__ import annotations

import math

import numpy as np

from tutor.quiz.generators._base import Part
from tutor.render.numbers import matrix as mat
from tutor.render.numbers import number as num
from tutor.render.numbers import vector as vec


def grid(rng: np.random.Generator, lo: float, hi: float, step: float, size=None) -> np.ndarray:
    """Numbers on a grid (``step`` apart, lo..hi inclusive), rounded so they print cleanly."""
    k = rng.integers(round(lo / step), round(hi / step) + 1, size=size)
    return np.round(k * step, 6)


def labels(prefix: str, m: int) -> list[str]:
    return [f"{prefix}{j + 1}" for j in range(m)]


def make_scaled_dot_scores(rng: np.random.Generator) -> dict:
    from engine.scoring import dot_scores, scaled_dot_scores  # deferred: loads numba (start-up time)

    d_k = int(rng.choice([2, 4]))
    while True:
        q = grid(rng, -1, 1, 0.1, d_k)
        K = grid(rng, -1, 1, 0.1, (3, d_k))
        scores = scaled_dot_scores(q, K)  # (3,)
        top = np.sort(scores)
        if np.any(q) and top[-1] - top[-2] > 0.03:  # a clear winner for part (b)
            break
    dots = dot_scores(q, K)
    keys = labels("K", 3)
    best = keys[int(np.argmax(scores))]
    setup = (f"Query Q = {vec(q)} and three keys (d_k = {d_k}):\n"
             + "\n".join(f"  {keys[j]} = {vec(K[j])}" for j in range(3)))
    return dict(
        prompt=setup,
        parts=(
            Part("(a) The scaled dot-product scores Q·Kⱼ / √d_k for K1, K2, K3?", "vector",
                 tuple(float(s) for s in scores), tolerance=0.01, value="scores"),
            Part("(b) Which key gets the largest attention weight?", "choice", best,
                 options=tuple(keys)),
        ),
        solution=(
            f"√d_k = √{d_k} = {num(math.sqrt(d_k))}",
            "Q·Kⱼ = " + ", ".join(num(x) for x in dots),
            f"scores = Q·Kⱼ / √d_k = {vec(scores)}",
            f"softmax is increasing, so the largest score wins: {best}.",
        ),
        trace_inputs={"Q": q, "K": K},
        data={"q": q, "K": K},
    )


def make_softmax_weights(rng: np.random.Generator) -> dict:
    from engine.softmax import softmax  # deferred: loads numba (start-up time)

    m = int(rng.choice([3, 4]))
    s = grid(rng, -2, 2, 0.1, m)
    w = softmax(s)
    exps = np.exp(s)  # shown as working only; the answer is the engine's softmax
    return dict(
        prompt=f"Attention scores s = {vec(s)}. Turn them into attention weights with softmax.",
        parts=(Part.vector("The weights α (one per score, in order)?", w, tolerance=0.01, value="P_T=1"),),
        solution=(
            "αⱼ = e^sⱼ / Σₖ e^sₖ",
            f"e^s = {vec(exps)}, Σ = {num(exps.sum())}",
            f"α = {vec(w)} (they sum to 1)",
        ),
        trace_inputs={"words": [f"k{j + 1}" for j in range(m)], "logits": s,
                      "temperatures": [1.0]},
        data={"scores": s},
    )


def make_additive_score(rng: np.random.Generator) -> dict:
    from engine.scoring import additive_scores  # deferred: loads numba (start-up time)

    d = int(rng.choice([2, 3]))
    h = 2
    q = grid(rng, -1, 1, 0.5, d)
    k = grid(rng, -1, 1, 0.5, d)
    W_q = grid(rng, -1, 1, 0.5, (h, d))
    W_k = grid(rng, -1, 1, 0.5, (h, d))
    v = grid(rng, -1, 1, 0.5, h)
    v[v == 0] = 1.0
    score = float(additive_scores(q, k[None, :], W_q, W_k, v)[0])
    a, b = W_q @ q, W_k @ k  # working shown to the student
    return dict(
        prompt=(f"Additive attention, score = vᵀ tanh(W_q q + W_k k), with\n"
                f"  q = {vec(q)}, k = {vec(k)}\n"
                f"  W_q = {mat(W_q)}, W_k = {mat(W_k)}, v = {vec(v)}"),
        parts=(Part("The score?", "number", score, tolerance=0.02, value="additive"),),
        solution=(
            f"W_q q = {vec(a)}, W_k k = {vec(b)}",
            f"sum = {vec(a + b)}, tanh(sum) = {vec(np.tanh(a + b))}",
            f"score = v · tanh(...) = {num(score)}",
        ),
        trace_inputs={"Q": q, "K": k, "W_Q": W_q, "W_K": W_k, "v": v},
        data={"q": q, "k": k, "W_q": W_q, "W_k": W_k, "v": v},
    )


def make_masked_softmax(rng: np.random.Generator) -> dict:
    from engine.softmax import masked_softmax  # deferred: loads numba (start-up time)

    n = 4
    s = grid(rng, -2, 2, 0.1, n)
    kind = rng.choice(["padding", "causal"])
    if kind == "padding":
        length = int(rng.integers(2, n))
        allowed = np.arange(n) < length
        row = 0  # any real token's query sees the same keys
        pads = f"position {n} is" if length == n - 1 else f"positions {length + 1}–{n} are"
        why = f"The sequence has {length} real tokens; {pads} padding (mask = False)."
        tokens = [f"w{j + 1}" for j in range(length)] + ["<pad>"] * (n - length)
    else:
        row = int(rng.integers(1, n - 1))  # query position (0-based), at least one future key
        length = n
        allowed = np.arange(n) <= row
        why = (f"Causal self-attention for query position {row + 1}: it may attend to positions "
               f"1–{row + 1} only.")
        tokens = [f"w{j + 1}" for j in range(n)]
    w = masked_softmax(s, allowed)
    kept = s[allowed]
    return dict(
        prompt=f"Scores for one query against {n} keys: s = {vec(s)}.\n{why}",
        parts=(Part.vector("The attention weights for all four keys (masked ones included)?", w,
                           tolerance=0.01, value=f"A[{row + 1}]"),),
        solution=(
            "Masked positions get weight exactly 0 (their score is treated as −∞);",
            f"softmax over the allowed scores {vec(kept)}:",
            f"α = {vec(w)}",
            f"(In the trace every query row has these scores; this query is row {row + 1}.)",
        ),
        trace_inputs={"tokens": list(tokens), "length": length, "causal": kind != "padding",
                      "scores": np.tile(s, (n, 1))},
        data={"scores": s, "allowed": allowed, "row": row},
    )


def make_dot_variance(rng: np.random.Generator) -> dict:
    from engine.scoring import dot_product_variance  # deferred: loads numba (start-up time)

    d_k = int(rng.choice([16, 32, 64, 128, 256, 512]))
    var_q = float(rng.choice([0.5, 1.0, 2.0]))
    var_k = float(rng.choice([0.5, 1.0, 2.0, 4.0]))
    var_dot = dot_product_variance(d_k, var_q, var_k)  # d_k·σ_q²·σ_k² (§8)
    var_scaled = var_dot / d_k
    return dict(
        prompt=(f"Query and key vectors have d_k = {d_k} independent entries with mean 0; "
                f"each qᵢ has variance {num(var_q)} and each kᵢ has variance {num(var_k)}."),
        parts=(
            Part("(a) Var(q·k)?", "number", var_dot, tolerance=0.01, value="exact[2]"),
            Part("(b) Var(q·k / √d_k)?", "number", var_scaled, tolerance=0.01, value="exact_scaled[2]"),
        ),
        solution=(
            f"Var(qᵢkᵢ) = E[qᵢ²]·E[kᵢ²] = {num(var_q)}·{num(var_k)} = {num(var_q * var_k)}",
            f"Var(q·k) = d_k · σ_q²σ_k² = {d_k} · {num(var_q * var_k)} = {num(var_dot)} "
            f"(standard deviation {num(math.sqrt(var_dot))})",
            f"Var(q·k / √d_k) = {num(var_dot)} / {d_k} = {num(var_scaled)}: the same for every d_k.",
            "The trace simulates entries with these variances for this d_k (and d_k = 1 to "
            "compare).",
        ),
        trace_inputs={"dims": [1, d_k], "d_big": d_k, "var_q": var_q, "var_k": var_k},
        data={"d_k": d_k, "var_q": var_q, "var_k": var_k},
    )


def make_softmax_jacobian(rng: np.random.Generator) -> dict:
    from engine.softmax_backward import softmax_jacobian  # deferred: loads numba (start-up time)

    s = grid(rng, -2, 2, 0.1, 3)
    from engine.softmax import softmax  # deferred: loads numba (start-up time)

    J = softmax_jacobian(s)  # diag(α) − ααᵀ (§8, the gradient's way back to the scores)
    a = softmax(s)
    i, j = 0, int(rng.integers(1, 3))
    return dict(
        prompt=f"Attention scores s = {vec(s)} give weights α = softmax(s). "
               "Backpropagation needs the softmax Jacobian ∂αᵢ/∂sⱼ.",
        parts=(Part("∂α₁/∂s₁ (how α₁ moves when its own score rises)?", "number",
                    float(J[i, i]), tolerance=0.001, value="J[1,1]"),
               Part(f"∂α₁/∂s{'₂₃'[j - 1]} (how α₁ moves when score {j + 1} rises)?", "number",
                    float(J[i, j]), tolerance=0.001, value=f"J[1,{j + 1}]")),
        solution=(
            "∂αᵢ/∂sⱼ = αᵢ(δᵢⱼ − αⱼ): αᵢ(1 − αᵢ) on the diagonal, −αᵢαⱼ off it",
            f"α = {vec(a)}",
            f"∂α₁/∂s₁ = {num(a[0])}·(1 − {num(a[0])}) = {num(J[0, 0])}",
            f"∂α₁/∂s{'₂₃'[j - 1]} = −{num(a[0])}·{num(a[j])} = {num(J[0, j])} (each row of J sums "
            "to 0)",
        ),
        trace_inputs={"tokens": ["k1", "k2", "k3"], "query": [1.0], "K": s.reshape(3, 1)},
        data={"scores": s, "j": j},
    )
