"""Derivation families (§6, §8, §12): backpropagation through one attention row, the gradients
of additive scoring, and the FLOPs of multi-head attention against Vaswani et al.'s Table 1.

Each ``make_<family>(rng)`` returns the problem-specific fields of a
:class:`~tutor.quiz.generators.Problem`; the answers come from the engine
(``engine.attention_backward``, ``engine.additive_attention``, ``engine.costs``).
"""

from __future__ import annotations

import math

import numpy as np

from engine.costs import layer_costs, multi_head_cost
from tutor.quiz.generators._base import Part
from tutor.quiz.generators.scoring import grid
from tutor.render.numbers import matrix as mat
from tutor.render.numbers import number as num
from tutor.render.numbers import vector as vec

_SUBSCRIPTS = "₁₂₃₄₅₆₇₈₉"


def _clear(*answers: np.ndarray, least: float = 0.1) -> bool:
    """Every answer has an entry of size ≥ ``least``, so a row of zeros cannot pass ±0.01."""
    return all(float(np.max(np.abs(a))) >= least for a in answers)


def make_attention_backward(rng: np.random.Generator) -> dict:
    from engine.attention_backward import attention_backward  # deferred: loads numba (start-up time)
    from engine.softmax import softmax  # deferred: loads numba (start-up time)
    from engine.softmax_backward import softmax_backward  # deferred: loads numba (start-up time)

    n, d_k = 3, 2
    while True:
        Q = grid(rng, -1, 1, 0.5, (n, d_k))
        K = grid(rng, -1, 1, 0.5, (n, d_k))
        V = grid(rng, -1, 1, 0.5, (n, d_k))
        g = grid(rng, -1, 1, 0.5, d_k)          # dO_i, the only non-zero row of dO
        i, j = int(rng.integers(0, n)), int(rng.integers(0, n))
        dO = np.zeros((n, d_k))
        dO[i] = g
        grads = attention_backward(Q, K, V, None, dO)  # dQ, dK, dV (n, 2), d_weights (n, n)
        if _clear(grads.d_weights[i], grads.dQ[i], grads.dV[j]):
            break
    a = softmax(Q[i] @ K.T / math.sqrt(d_k))     # (n,) row i's weights, shown as working
    mean = float(a @ grads.d_weights[i])
    ds = softmax_backward(a, grads.d_weights[i])  # (n,) α ⊙ (dα − α·dα), shown as working
    sub_i, sub_j = _SUBSCRIPTS[i], _SUBSCRIPTS[j]
    return dict(
        prompt=(
            "Self-attention over three tokens with d_k = 2 (one row per token):\n"
            + "\n".join(
                f"  Q{_SUBSCRIPTS[r]} = {vec(Q[r])}   K{_SUBSCRIPTS[r]} = "
                f"{vec(K[r])}   V{_SUBSCRIPTS[r]} = {vec(V[r])}"
                for r in range(n)
            )
            + f"\nThe loss depends only on output O{sub_i} = Σⱼ α{sub_i}ⱼ Vⱼ: its upstream "
            f"gradient is dO{sub_i} = ∂L/∂O{sub_i} = {vec(g)}, and every other row of dO is 0."
        ),
        parts=(
            Part.vector(
                f"(a) ∂L/∂α{sub_i}ⱼ for j = 1, 2, 3?",
                grads.d_weights[i],
                tolerance=0.01,
                value=f"d_alpha[{i + 1}]",
            ),
            Part.vector(
                f"(b) ∂L/∂Q{sub_i} (two numbers)?", grads.dQ[i], tolerance=0.01, value=f"dQ[{i + 1}]"
            ),
            Part.vector(
                f"(c) ∂L/∂V{sub_j} (two numbers)?", grads.dV[j], tolerance=0.01, value=f"dV[{j + 1}]"
            ),
        ),
        solution=(
            f"∂L/∂α{sub_i}ⱼ = dO{sub_i} · Vⱼ = {vec(grads.d_weights[i])}",
            f"forward: s{sub_i}ⱼ = Q{sub_i} · Kⱼ / √2, α{sub_i} = softmax(s{sub_i}) = {vec(a)}",
            f"softmax backward: ∂L/∂s{sub_i}ⱼ = α{sub_i}ⱼ(∂L/∂α{sub_i}ⱼ − {num(mean)}) = {vec(ds)} "
            "(the row sums to 0)",
            f"∂L/∂Q{sub_i} = Σⱼ ∂L/∂s{sub_i}ⱼ Kⱼ / √2 = {vec(grads.dQ[i])}",
            f"∂L/∂V{sub_j} = Σᵢ αᵢ{sub_j} dOᵢ = α{sub_i}{sub_j} dO{sub_i} = {num(a[j])}·{vec(g)} = "
            f"{vec(grads.dV[j])} (dV = αᵀ dO)",
            "The trace takes one-hot embeddings X = I, so W_Q = Q, W_K = K, W_V = V and "
            f"row {i + 1} of ∂L/∂W_Q is ∂L/∂Q{sub_i}.",
        ),
        trace_inputs={
            "tokens": [f"w{k + 1}" for k in range(n)],
            "X": np.eye(n),
            "W_Q": Q,
            "W_K": K,
            "W_V": V,
            "dO": dO,
            "position": i + 1,
        },
        data={"Q": Q, "K": K, "V": V, "g": g, "i": i, "j": j},
    )


def make_additive_backward(rng: np.random.Generator) -> dict:
    # deferred: loads numba (start-up time)
    from engine.additive_attention import additive_attention, additive_attention_backward
    from engine.softmax_backward import softmax_backward  # deferred: loads numba (start-up time)

    d, h = 2, 2
    while True:
        q = grid(rng, -1, 1, 0.5, d)
        K = grid(rng, -1, 1, 0.5, (2, d))
        V = grid(rng, -1, 1, 0.5, (2, 2))
        W_q = grid(rng, -1, 1, 0.5, (h, d))
        W_k = grid(rng, -1, 1, 0.5, (h, d))
        v = grid(rng, -1, 1, 0.5, h)
        g = grid(rng, -1, 1, 0.5, 2)            # dO
        grads = additive_attention_backward(q[None, :], K, V, W_q, W_k, v, None, g[None, :])
        a = additive_attention(q[None, :], K, V, W_q, W_k, v)[1][0]  # (2,) α
        de = softmax_backward(a, grads.d_weights[0])  # (2,) ∂L/∂e, shared with every scorer
        if np.all(v) and _clear(de, grads.dv, grads.dQ[0]):
            break
    t = np.tanh(W_q @ q + K @ W_k.T)            # (2, h) hidden units, shown as working
    e = t @ v                                    # (2,) scores, shown as working
    slope = 1 - t ** 2                           # (2, h)
    return dict(
        prompt=("Additive attention e_j = vᵀ tanh(W_q q + W_k k_j) over two keys, then "
                "α = softmax(e) and o = Σⱼ αⱼ Vⱼ, with\n"
                f"  q = {vec(q)}, k₁ = {vec(K[0])}, k₂ = {vec(K[1])}\n"
                f"  V₁ = {vec(V[0])}, V₂ = {vec(V[1])}\n"
                f"  W_q = {mat(W_q)}, W_k = {mat(W_k)}, v = {vec(v)}\n"
                f"and the upstream gradient ∂L/∂o = {vec(g)}."),
        parts=(
            Part.vector("(a) ∂L/∂e (one number per key)?", de, tolerance=0.01, value="d_scores"),
            Part.vector("(b) ∂L/∂v, the scoring vector's gradient?", grads.dv, tolerance=0.01, value="dv"),
            Part.vector("(c) ∂L/∂q?", grads.dQ[0], tolerance=0.01, value="dq"),
        ),
        solution=(
            f"forward: t_j = tanh(W_q q + W_k k_j) = {mat(t)}, e = {vec(e)}, α = {vec(a)}",
            f"as for any scorer: ∂L/∂αⱼ = ∂L/∂o · Vⱼ = {vec(grads.d_weights[0])}, "
            f"∂L/∂eⱼ = αⱼ(∂L/∂αⱼ − Σₖ αₖ ∂L/∂αₖ) = {vec(de)}",
            f"new: ∂L/∂v = Σⱼ ∂L/∂eⱼ t_j = {vec(grads.dv)}",
            f"through the tanh: g_j = ∂L/∂eⱼ · v ⊙ (1 − t_j²), slopes 1 − t² = {mat(slope)}",
            f"∂L/∂q = W_qᵀ (g₁ + g₂) = {vec(grads.dQ[0])}",
        ),
        trace_inputs={"tokens": ["k1", "k2"], "query": q, "K": K, "V": V, "W_q": W_q,
                      "W_k": W_k, "v": v, "dO": g},
        data={"q": q, "K": K, "V": V, "W_q": W_q, "W_k": W_k, "v": v, "g": g},
    )


_LENGTHS = (8, 10, 16, 20, 24, 40, 50, 80, 100)
_WIDTHS = (16, 24, 32, 48, 64)


def make_multi_head_cost(rng: np.random.Generator) -> dict:
    while True:
        n, d = int(rng.choice(_LENGTHS)), int(rng.choice(_WIDTHS))
        if n != d:                               # part (c) needs a strict winner
            break
    h = int(rng.choice([2, 4, 8]))
    dk = d // h
    cost = multi_head_cost(n, n, d, h)           # counted product by product
    quad = cost.flops["Q Kᵀ"] + cost.flops["α V"]
    rows = layer_costs(n, d)                     # Table 1: self-attention, recurrent, ...
    cheaper = "self-attention" if rows[0].operations < rows[1].operations else "recurrent"
    proj = cost.flops["Q = X W_Q"] + cost.flops["K = X W_K"] + cost.flops["V = X W_V"]
    return dict(
        prompt=(f"Multi-head self-attention with d_model = {d} and h = {h} heads of "
                f"d_k = d_v = d_model / h, over n = {n} positions. Count a product of an "
                "(m × k) and a (k × p) matrix as 2·m·k·p FLOPs and leave out the softmax."),
        parts=(
            Part("(a) FLOPs of the n² products, Q Kᵀ and α V, over all heads?", "number",
                 quad, value="quadratic_flops"),
            Part("(b) FLOPs of the whole forward pass (projections, scores, weighted sums, "
                 "output projection)?", "number", cost.total_flops, value="flops"),
            Part(f"(c) By Vaswani et al.'s Table 1 (n²·d against n·d², constants dropped), "
                 f"which layer does less work at n = {n}, d = {d}?", "choice", cheaper,
                 options=("self-attention", "recurrent")),
        ),
        solution=(
            f"per head: Q Kᵀ is 2·{n}·{dk}·{n} and α V is 2·{n}·{n}·{dk}; ×{h} heads: "
            f"4·n²·d_model = {quad} (h cancels, since h·d_k = d_model)",
            f"projections Q, K, V: 3 × 2·{n}·{d}·{d} = {proj}; output: 2·{n}·{d}·{d} = "
            f"{cost.flops['concat W_O']}",
            f"total = 8·n·d_model² + 4·n²·d_model = {cost.total_flops}",
            f"Table 1: n²·d = {num(rows[0].operations)}, n·d² = {num(rows[1].operations)}: "
            f"{cheaper} does less ({'n < d' if n < d else 'n > d'}); self-attention's path "
            f"between any two positions is 1 step, the recurrence's {n}.",
        ),
        trace_inputs={"n": n, "d_model": d, "heads": h},
        data={"n": n, "d_model": d, "heads": h},
    )
