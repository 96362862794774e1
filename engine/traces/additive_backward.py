"""Trace ``additive-backward`` (§8, §12): where additive attention's gradients differ.

Defaults: the §5 query of "love" (Q₂ = [0, 1, 0]) against the §5 keys and values, scored
additively with the notes' §8 parameters W_q = W_k = I and v = [1, 1, 1], and an upstream
gradient dO = [1, 0] (a loss that rewards the first output coordinate, i.e. weight on "I").
From the output back to the scores the steps are dot-product attention's; from the scores
on, the additive scorer has parameters of its own and a tanh that can saturate.
"""

from __future__ import annotations

import math

import numpy as np

from engine.additive_attention import additive_attention, additive_attention_backward
from engine.attention_backward import attention_backward
from engine.trace import HeatmapData, InputSpec, Step, Trace, source_of
from engine.traces import _draw
from engine.traces._common import lines, n, p, sub
from engine.traces._common import v as show

INPUTS = [
    InputSpec("tokens", "labels", ["I", "love", "cats"], "the words of the keys", shape=("n",)),
    InputSpec("query", "vector", [0, 1, 0], "the query (§5: Q₂ of \"love\")", shape=("d_q",)),
    InputSpec("K", "matrix", [[0, 1, 0], [1, 0, 0], [0, 0, 1]], "keys, one row per word",
              shape=("n", "d_k")),
    InputSpec("V", "matrix", [[1, 0], [0, 1], [0, 0]], "values, one row per word",
              shape=("n", "d_v")),
    InputSpec("W_q", "matrix", [[1, 0, 0], [0, 1, 0], [0, 0, 1]], "query projection (h × d_q)",
              shape=("h", "d_q")),
    InputSpec("W_k", "matrix", [[1, 0, 0], [0, 1, 0], [0, 0, 1]], "key projection (h × d_k)",
              shape=("h", "d_k")),
    InputSpec("v", "vector", [1, 1, 1], "scoring vector", shape=("h",)),
    InputSpec("dO", "vector", [1, 0], "∂L/∂output from above", shape=("d_v",)),
]


def build(tokens: list[str], query: np.ndarray, K: np.ndarray, V: np.ndarray, W_q: np.ndarray,
          W_k: np.ndarray, v: np.ndarray, dO: np.ndarray) -> Trace:
    vv = v
    inputs = {"tokens": tokens, "query": query, "K": K, "V": V, "W_q": W_q, "W_k": W_k, "v": vv,
              "dO": dO}
    m = K.shape[0]
    a = W_q @ query  # (h,)
    B = K @ W_k.T  # (n, h) rows W_k k_j
    Tt = np.tanh(a[None, :] + B)  # (n, h) t_j
    e = Tt @ vv  # (n,)
    ex = np.exp(e - e.max())
    alpha = ex / ex.sum()
    out = alpha @ V
    steps = [Step(
        "Forward",
        "a = W_q q,  b_j = W_k k_j,  t_j = tanh(a + b_j),  e_j = v·t_j,  α = softmax(e),  "
        "o = Σ_j α_j V_j",
        lines(f"a = {show(a)}", *(f"j = {j + 1} ({tokens[j]}): b = {show(B[j])}, t = {show(Tt[j])}, "
                               f"e = {n(e[j])}" for j in range(m)),
              f"α = {show(alpha)}, o = {show(out)}"),
        {"t": Tt, "scores": e, "alpha": alpha, "output": out},
        "The additive scorer: a one-hidden-layer network of width h applied to every "
        "(query, key) pair.",
    )]

    da = V @ dO  # (n,)
    dot = float(alpha @ da)
    de = alpha * (da - dot)  # (n,)
    steps.append(Step(
        "Back to the scores: the same as dot-product",
        "∂L/∂V_j = α_j dO,  ∂L/∂α_j = dO·V_j,  ∂L/∂e_j = α_j(∂L/∂α_j − Σ_k α_k ∂L/∂α_k)",
        lines(f"∂L/∂α = {show(da)},  Σ_k α_k ∂L/∂α_k = {n(dot)}",
              *(f"∂L/∂e{sub(j + 1)} = {n(alpha[j])}·({p(da[j])} − {p(dot)}) = {n(de[j])}"
                for j in range(m))),
        {"d_alpha": da, "d_scores": de},
        "Nothing here depends on how the scores were made: the values and the softmax "
        "Jacobian are shared by every scoring function.",
    ))

    dv = Tt.T @ de  # (h,)
    steps.append(Step(
        "Into the scoring vector v",
        "e_j = v·t_j  ⇒  ∂L/∂v = Σ_j ∂L/∂e_j t_j",
        f"∂L/∂v = {' + '.join(f'{p(de[j])}·{show(Tt[j])}' for j in range(m))} = {show(dv)}",
        {"dv": dv},
        "A parameter dot-product attention does not have: the scorer itself learns which "
        "hidden features matter.",
    ))

    G = de[:, None] * vv[None, :] * (1 - Tt ** 2)  # (n, h) g_j
    steps.append(Step(
        "Through the tanh",
        "g_j = ∂L/∂(a + b_j) = ∂L/∂e_j · v ⊙ (1 − t_j²)",
        lines(*(f"g{sub(j + 1)} = {p(de[j])}·{show(vv)} ⊙ {show(1 - Tt[j] ** 2)} = {show(G[j])}"
                for j in range(m))),
        {"g": G, "tanh_slope": 1 - Tt ** 2},
        "A second place to saturate: where |a + b_j| is large, tanh is flat, 1 − t² ≈ 0, and "
        "the gradient stops there even when the softmax is not saturated. There is no √d_k "
        "to tame it; the scale comes from W_q, W_k and v.",
    ))

    ga = G.sum(axis=0)  # (h,)
    dWq = np.outer(ga, query)  # (h, d_q)
    dWk = G.T @ K  # (h, d_k)
    dq = W_q.T @ ga  # (d_q,)
    dK = G @ W_k  # (n, d_k)
    steps.append(Step(
        "Into W_q, W_k, the query and the keys",
        "∂L/∂W_q = (Σ_j g_j) qᵀ,  ∂L/∂q = W_qᵀ Σ_j g_j,  ∂L/∂W_k = Σ_j g_j k_jᵀ,  "
        "∂L/∂k_j = W_kᵀ g_j",
        lines(f"Σ_j g_j = {show(ga)}", f"∂L/∂W_q = {show(dWq)}", f"∂L/∂q = {show(dq)}",
              f"∂L/∂W_k = {show(dWk)}", f"∂L/∂K = {show(dK)}"),
        {"dW_q": dWq, "dq": dq, "dW_k": dWk, "dK": dK},
        "The query's gradient passes through W_qᵀ (and the tanh) instead of being a "
        "weighted sum of the keys.",
    ))

    same = query.size == K.shape[1]
    result = {"alpha": alpha, "d_scores": de, "dv": dv, "dW_q": dWq, "dW_k": dWk, "dq": dq,
              "dK": dK}
    if same:
        root = math.sqrt(K.shape[1])
        s = K @ query / root
        es = np.exp(s - s.max())
        a_dot = es / es.sum()
        ds = a_dot * (V @ dO - a_dot @ (V @ dO))
        dq_dot = ds @ K / root
        dK_dot = np.outer(ds, query) / root
        result.update({"dq_dot": dq_dot, "dK_dot": dK_dot})
        steps.append(Step(
            "The same query and keys, scored by scaled dot product",
            "∂L/∂q = Σ_j ∂L/∂s_j k_j / √d_k,  ∂L/∂k_j = ∂L/∂s_j q / √d_k",
            lines(f"α = {show(a_dot)}, ∂L/∂s = {show(ds)}", f"∂L/∂q = {show(dq_dot)} (additive: {show(dq)})",
                  f"∂L/∂K = {show(dK_dot)}"),
            {"dq_dot": dq_dot, "dK_dot": dK_dot},
            "Dot-product: each key's gradient is the query itself, scaled by its score's "
            "gradient, and nothing else learns in the scorer. Additive: the gradient is "
            "reshaped by W_q, W_k, v and the tanh's slope, and those parameters learn too.",
        ))
    else:
        steps.append(Step(
            "No dot-product comparison",
            "q·k needs d_q = d_k",
            f"d_q = {query.size}, d_k = {K.shape[1]}",
            {},
            "Additive attention works across different widths; the dot product does not.",
        ))

    f_out, f_w = additive_attention(query[None, :], K, V, W_q, W_k, vv)
    g = additive_attention_backward(query[None, :], K, V, W_q, W_k, vv, None, dO[None, :])
    fused = {"alpha": f_w[0], "d_scores": None, "dv": g.dv, "dW_q": g.dW_q, "dW_k": g.dW_k,
             "dq": g.dQ[0], "dK": g.dK}
    fused["d_scores"] = f_w[0] * (g.d_weights[0] - f_w[0] @ g.d_weights[0])
    if same:
        gd = attention_backward(query[None, :], K, V, None, dO[None, :])
        fused.update({"dq_dot": gd.dQ[0], "dK_dot": gd.dK})
    return Trace(
        name="additive-backward",
        title="Gradients of additive attention",
        section=8,
        inputs=inputs,
        steps=steps,
        result=result,
        fused=fused,
        source=source_of(INPUTS, inputs, "notes+built"),
        summary="Backpropagation through additive (Bahdanau) scoring on the §5 words: shared "
                "with dot-product up to the scores, then into v, through the tanh, into W_q "
                "and W_k.",
        heatmaps=[HeatmapData("Additive attention weights", alpha[None, :], ["query"], list(tokens)),
                  HeatmapData("tanh slope 1 − t² per key (rows) and hidden unit", 1 - Tt ** 2,
                              list(tokens), [f"h{sub(a + 1)}" for a in range(vv.size)],
                              kind="scores")],
    )


def draw_inputs(rng: np.random.Generator) -> dict:
    """Fresh inputs: small-integer query, keys, values and dO; identity or half-step
    projections and scoring vector."""
    d = int(_draw.choice(rng, [2, 3]))
    m = int(_draw.choice(rng, [2, 3]))
    eye = np.eye(d)
    return {"tokens": ["I", "love", "cats"][:m], "query": _draw.nonzero(rng, -1, 1, 1, d),
            "K": _draw.nonzero(rng, -1, 1, 1, (m, d)), "V": _draw.nonzero(rng, -1, 1, 1, (m, 2)),
            "W_q": eye if rng.random() < 0.4 else _draw.nonzero(rng, -1, 1, 0.5, (d, d)),
            "W_k": eye if rng.random() < 0.4 else _draw.nonzero(rng, -1, 1, 0.5, (d, d)),
            "v": _draw.nonzero(rng, -1, 1, 0.5, d), "dO": _draw.nonzero(rng, -1, 1, 1, 2)}
