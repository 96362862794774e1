"""Trace ``self-attention`` (§6): softmax(Q Kᵀ / √d_k) V for every word at once.

Defaults are the §5 "I love cats" numbers (the notes' only worked self-attention with all
three projections); row 2 of the weights is the qkv trace's softmax.
"""

from __future__ import annotations

import math

import numpy as np

from engine.attention import self_attention
from engine.trace import Erratum, HeatmapData, Step, Trace, same_as_defaults, source_of
from engine.traces import qkv
from engine.traces._common import lines, n, sub, v

INPUTS = [spec for spec in qkv.INPUTS if spec.name != "position"]


def build(tokens: list[str], X: np.ndarray, W_Q: np.ndarray, W_K: np.ndarray,
          W_V: np.ndarray) -> Trace:
    inputs = {"tokens": tokens, "X": X, "W_Q": W_Q, "W_K": W_K, "W_V": W_V}
    m, d_k = X.shape[0], W_Q.shape[1]
    if W_K.shape[1] != d_k:
        raise ValueError(f"input W_K: got shape ({W_K.shape[0]}, {W_K.shape[1]}), expected "
                         f"(d, d_k) with d_k = {d_k} like W_Q: queries and keys must match")
    Q = X @ W_Q  # (n, d_k)
    K = X @ W_K  # (n, d_k)
    V = X @ W_V  # (n, d_v)
    steps = [Step(
        "Project every word",
        "Q = X W_Q,  K = X W_K,  V = X W_V",
        lines(f"Q = {v(Q)}", f"K = {v(K)}", f"V = {v(V)}"),
        {"Q": Q, "K": K, "V": V},
        "One matrix product per role; row i belongs to word i.",
    )]

    root = math.sqrt(d_k)
    S = (Q @ K.T) / root  # (n, n)
    steps.append(Step(
        "Score matrix",
        "S = Q Kᵀ / √d_k",
        lines(f"Q Kᵀ = {v(Q @ K.T)}", f"S = Q Kᵀ / {n(root)} = {v(S)}"),
        {"S": S},
        "Entry (i, j) says how well word i's question matches word j's label.",
    ))

    E = np.exp(S - S.max(axis=1, keepdims=True))
    A = E / E.sum(axis=1, keepdims=True)  # (n, n)
    steps.append(Step(
        "Row-wise softmax",
        "A = softmax(S) row by row,  Aᵢⱼ = αᵢⱼ",
        lines(*(f"row {i + 1} ({tokens[i]}): {v(A[i])}, sum {n(A[i].sum())}" for i in range(m))),
        {"A": A},
        "Each row is one word's attention distribution over the whole sentence, itself included.",
    ))

    Z = A @ V  # (n, d_v)
    steps.append(Step(
        "Outputs",
        "Z = A V,  Zᵢ = Σⱼ αᵢⱼ Vⱼ",
        lines(*(f"Z{sub(i + 1)} ({tokens[i]}) = {v(Z[i])}" for i in range(m))),
        {"Z": Z},
        "Every word gets a new, context-aware vector in one pass; no step waits for another.",
    ))

    focus = [tokens[int(np.argmax(A[i]))] for i in range(m)]
    diag = float(np.mean(np.diag(A)))
    steps.append(Step(
        "Reading the pattern",
        "argmaxⱼ αᵢⱼ for each i",
        lines(*(f"{tokens[i]} → {focus[i]} ({n(A[i].max(), 3)})" for i in range(m)),
              f"mean self-weight (diagonal) = {n(diag, 3)}; uniform would be {n(1 / m, 3)}"),
        {"focus": focus},
        "Nothing here knows word order: permuting the rows of X only permutes the rows and "
        "columns of A. Positional encodings add order.",
    ))

    f_out, f_w = self_attention(X, W_Q, W_K, W_V)
    trace = Trace(
        name="self-attention",
        title="Self-attention, all positions",
        section=6,
        inputs=inputs,
        steps=steps,
        result={"A": A, "Z": Z},
        fused={"A": f_w, "Z": f_out},
        source=source_of(INPUTS, inputs, "notes"),
        summary="The whole sentence attends to itself at once: Q, K, V by matrix products, a "
                "row-wise softmax, then Z = A V.",
        heatmaps=[HeatmapData("Self-attention weights (rows ask, columns answer)", A,
                              list(tokens), list(tokens))],
    )
    if same_as_defaults(INPUTS, inputs):
        trace.errata.append(Erratum(
            where="§5 worked example (row \"love\" here)",
            printed="weights 0.64, 0.18, 0.18; output [0.64, 0.18]",
            computed=f"weights {A[1, 0]:.3f}, {A[1, 1]:.3f}, {A[1, 2]:.3f}; output "
                     f"[{Z[1, 0]:.3f}, {Z[1, 1]:.3f}]",
            why="Same slip as in the qkv trace: e^0.577 / (e^0.577 + 2) = 0.471, not 0.64.",
            kind="arithmetic", id="qkv-weights"))
    return trace


def draw_inputs(rng: np.random.Generator) -> dict:
    """Fresh inputs as the qkv trace draws them (every position asks)."""
    inputs = qkv.draw_inputs(rng)
    del inputs["position"]
    return inputs
