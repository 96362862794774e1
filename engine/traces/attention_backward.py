"""Trace ``attention-backward`` (§5, §12): backpropagation through scaled dot-product attention.

Defaults: the §5 "I love cats" embeddings and projections (as in the ``qkv`` trace) and an
upstream gradient dO = ∂L/∂O. The default dO = [[1, 0], [1, 0], [1, 0]] is the gradient of
L = Σᵢ Oᵢ₁, the sum of every word's first output coordinate; with V₁ = [1, 0] that is the
total weight on "I", so the steps show how every parameter would change to attend to "I" more.
First one query row with every number substituted, then the matrix form, then on into W_Q,
W_K, W_V, and a finite-difference check.
"""

from __future__ import annotations

import math

import numpy as np

from engine.attention import self_attention
from engine.attention_backward import attention_backward
from engine.trace import HeatmapData, InputSpec, Step, Trace, source_of
from engine.traces import _draw, qkv
from engine.traces._common import dot_terms, lines, n, p, sub, v

INPUTS = [
    InputSpec("tokens", "labels", ["I", "love", "cats"], "the sentence", shape=("n",)),
    InputSpec("X", "matrix", [[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0]],
              "word embeddings, one row per word", shape=("n", "d")),
    InputSpec("W_Q", "matrix", [[1, 0, 0], [0, 1, 0], [0, 0, 1], [0, 0, 0]],
              "query projection (d × d_k)", shape=("d", "d_k")),
    InputSpec("W_K", "matrix", [[0, 1, 0], [1, 0, 0], [0, 0, 1], [0, 0, 0]],
              "key projection (d × d_k)", shape=("d", "d_k")),
    InputSpec("W_V", "matrix", [[1, 0], [0, 1], [0, 0], [0, 0]],
              "value projection (d × d_v)", shape=("d", "d_v")),
    InputSpec("dO", "matrix", [[1, 0], [1, 0], [1, 0]],
              "∂L/∂O from the layers above (default: L = Σᵢ Oᵢ₁)", shape=("n", "d_v")),
    InputSpec("position", "int", 2, "the query row worked out in full (1 = first)", low=1),
]

FD_EPS = 1e-6


def _loss(X, W_Q, W_K, W_V, dO) -> float:
    Q, K, V = X @ W_Q, X @ W_K, X @ W_V
    S = Q @ K.T / math.sqrt(W_Q.shape[1])
    E = np.exp(S - S.max(axis=1, keepdims=True))
    return float(np.sum(dO * ((E / E.sum(axis=1, keepdims=True)) @ V)))


def build(tokens: list[str], X: np.ndarray, W_Q: np.ndarray, W_K: np.ndarray, W_V: np.ndarray,
          dO: np.ndarray, position: int) -> Trace:
    inputs = {"tokens": tokens, "X": X, "W_Q": W_Q, "W_K": W_K, "W_V": W_V, "dO": dO,
              "position": position}
    m, d_k = X.shape[0], W_Q.shape[1]
    if position > m:
        raise ValueError(f"input position: got {position}, expected a whole number from 1 to {m}")
    if W_K.shape[1] != d_k:
        raise ValueError(f"input W_K: got shape ({W_K.shape[0]}, {W_K.shape[1]}), expected "
                         f"(d, d_k) with d_k = {d_k} like W_Q: queries and keys must match")
    i, P = position - 1, sub(position)
    root = math.sqrt(d_k)
    Q, K, V = X @ W_Q, X @ W_K, X @ W_V  # (n, d_k), (n, d_k), (n, d_v)
    S = Q @ K.T / root  # (n, n)
    E = np.exp(S - S.max(axis=1, keepdims=True))
    A = E / E.sum(axis=1, keepdims=True)  # (n, n) α
    O = A @ V  # (n, d_v)
    steps = [Step(
        "Forward, kept for the backward",
        "Q = X W_Q, K = X W_K, V = X W_V,  s = Q Kᵀ / √d_k,  α = softmax(s),  O = α V",
        lines(f"Q = {v(Q)}", f"K = {v(K)}", f"V = {v(V)}", f"s = {v(S)}", f"α = {v(A)}",
              f"O = {v(O)}", f"upstream ∂L/∂O = {v(dO)}"),
        {"Q": Q, "K": K, "V": V, "scores": S, "alpha": A, "O": O},
        "Backpropagation reuses every forward value: α above all, since each gradient of "
        "the softmax is written in terms of its output.",
    )]

    dOi = dO[i]
    dai = V @ dOi  # (n,) dα_ij = dO_i · V_j
    steps.append(Step(
        f"Row {position}: into the values and the weights",
        f"∂L/∂Vⱼ gets α{P}ⱼ dO{P};   ∂L/∂α{P}ⱼ = dO{P} · Vⱼ",
        lines(*(f"j = {j + 1} ({tokens[j]}): α{P}{sub(j + 1)} dO{P} = {n(A[i, j])}·{v(dOi)} = "
                f"{v(A[i, j] * dOi)};  ∂L/∂α{P}{sub(j + 1)} = {dot_terms(dOi, V[j])} = {n(dai[j])}"
                for j in range(m))),
        {f"d_alpha_{position}": dai},
        f"O{P} = Σⱼ α{P}ⱼ Vⱼ is linear in both, so each factor's gradient is the other "
        "times dO.",
    ))

    dot = float(A[i] @ dai)
    dsi = A[i] * (dai - dot)  # (n,)
    steps.append(Step(
        f"Row {position}: through the softmax",
        f"∂L/∂s{P}ⱼ = α{P}ⱼ (∂L/∂α{P}ⱼ − Σₖ α{P}ₖ ∂L/∂α{P}ₖ)   (the Jacobian diag(α) − ααᵀ)",
        lines(f"Σₖ α{P}ₖ ∂L/∂α{P}ₖ = {dot_terms(A[i], dai)} = {n(dot)}",
              *(f"∂L/∂s{P}{sub(j + 1)} = {n(A[i, j])}·({p(dai[j])} − {p(dot)}) = {n(dsi[j])}"
                for j in range(m))),
        {f"d_scores_{position}": dsi},
        "The row of score gradients sums to zero (see the softmax-jacobian trace): raising "
        "one word's weight must lower the others'.",
    ))

    dqi = dsi @ K / root  # (d_k,)
    steps.append(Step(
        f"Row {position}: into the query and the keys",
        f"s{P}ⱼ = Q{P}·Kⱼ / √d_k  ⇒  ∂L/∂Q{P} = Σⱼ ∂L/∂s{P}ⱼ Kⱼ / √d_k,  ∂L/∂Kⱼ gets "
        f"∂L/∂s{P}ⱼ Q{P} / √d_k",
        lines(f"∂L/∂Q{P} = ({' + '.join(f'{p(dsi[j])}·{v(K[j])}' for j in range(m))}) / "
              f"{n(root)} = {v(dqi)}",
              *(f"∂L/∂K{sub(j + 1)} gets {p(dsi[j])}·{v(Q[i])} / {n(root)} = {v(dsi[j] * Q[i] / root)}"
                for j in range(m))),
        {f"dQ_{position}": dqi},
        "The 1/√d_k of the forward divides the gradient too: scaling the scores scales "
        "every gradient that flows through them.",
    ))

    dV = A.T @ dO  # (n, d_v)
    dA = dO @ V.T  # (n, n)
    dS = A * (dA - np.sum(A * dA, axis=1, keepdims=True))  # (n, n)
    dQ = dS @ K / root  # (n, d_k)
    dK = dS.T @ Q / root  # (n, d_k)
    steps.append(Step(
        "All rows at once",
        "dV = αᵀ dO,  dα = dO Vᵀ,  ds = α ⊙ (dα − rowsum(α ⊙ dα)),  dQ = ds K / √d_k,  "
        "dK = dsᵀ Q / √d_k",
        lines(f"dV = αᵀ dO = {v(dV)}", f"dα = dO Vᵀ = {v(dA)}", f"ds = {v(dS)}",
              f"dQ = {v(dQ)}", f"dK = {v(dK)}"),
        {"dV": dV, "d_alpha": dA, "d_scores": dS, "dQ": dQ, "dK": dK},
        f"Row {position} of dQ is the row worked out above; dK and dV add up what every "
        "query row sends to each key and value.",
    ))

    dWQ, dWK, dWV = X.T @ dQ, X.T @ dK, X.T @ dV  # (d, d_k), (d, d_k), (d, d_v)
    dX = dQ @ W_Q.T + dK @ W_K.T + dV @ W_V.T  # (n, d)
    steps.append(Step(
        "Into the projections",
        "Q = X W_Q ⇒ ∂L/∂W_Q = Xᵀ dQ;  likewise ∂L/∂W_K = Xᵀ dK, ∂L/∂W_V = Xᵀ dV;  "
        "∂L/∂X = dQ W_Qᵀ + dK W_Kᵀ + dV W_Vᵀ",
        lines(f"∂L/∂W_Q = {v(dWQ)}", f"∂L/∂W_K = {v(dWK)}", f"∂L/∂W_V = {v(dWV)}",
              f"∂L/∂X = {v(dX)}"),
        {"dW_Q": dWQ, "dW_K": dWK, "dW_V": dWV, "dX": dX},
        "X is used three times (as queries, keys and values), so its gradient is the sum of "
        "three paths. With one-hot embeddings row j of ∂L/∂W is word j's gradient.",
    ))

    r_, c_ = np.unravel_index(int(np.argmax(np.abs(dWQ))), dWQ.shape)
    up, down = W_Q.copy(), W_Q.copy()
    up[r_, c_] += FD_EPS
    down[r_, c_] -= FD_EPS
    fd = (_loss(X, up, W_K, W_V, dO) - _loss(X, down, W_K, W_V, dO)) / (2 * FD_EPS)
    steps.append(Step(
        "Check by nudging one weight",
        "∂L/∂W ≈ (L(W + ε) − L(W − ε)) / 2ε,  L = Σ dO ⊙ O",
        f"W_Q entry ({r_ + 1}, {c_ + 1}): chain rule {n(dWQ[r_, c_], 8)}, finite difference "
        f"{n(fd, 8)} (ε = {FD_EPS:g})",
        {"analytic": float(dWQ[r_, c_]), "finite_difference": float(fd)},
        "Re-running the forward with one weight moved agrees with the chain rule.",
    ))

    f_out, f_w = self_attention(X, W_Q, W_K, W_V)
    g = attention_backward(X @ W_Q, X @ W_K, X @ W_V, None, dO)
    return Trace(
        name="attention-backward",
        title="Backpropagation through attention",
        section=12,
        inputs=inputs,
        steps=steps,
        result={"alpha": A, "O": O, "d_alpha": dA, "dQ": dQ, "dK": dK, "dV": dV,
                "dW_Q": dWQ, "dW_K": dWK, "dW_V": dWV, "analytic": float(dWQ[r_, c_])},
        fused={"alpha": f_w, "O": f_out, "d_alpha": g.d_weights, "dQ": g.dQ, "dK": g.dK,
               "dV": g.dV, "dW_Q": X.T @ g.dQ, "dW_K": X.T @ g.dK, "dW_V": X.T @ g.dV,
               "analytic": float(fd)},
        tolerances={"analytic": (1e-6, 1e-8)},
        source=source_of(INPUTS, inputs, "notes+built"),
        summary=f"The gradient of a loss on the outputs of \"{' '.join(tokens)}\" traced back "
                "through the values, the softmax, the scores and the projections: row "
                f"{position} in full, then every row.",
        heatmaps=[HeatmapData("Attention weights α (forward)", A, list(tokens), list(tokens)),
                  HeatmapData("∂L/∂s: where the scores are pushed", dS, list(tokens),
                              list(tokens), kind="scores")],
    )


def draw_inputs(rng: np.random.Generator) -> dict:
    """Fresh inputs: small-integer embeddings and projections (as the qkv trace draws them)
    and a 0/±1 upstream gradient."""
    inputs = qkv.draw_inputs(rng)
    inputs["dO"] = _draw.nonzero(rng, -1, 1, 1, (3, inputs["W_V"].shape[1]))
    return inputs
