"""Trace ``qkv`` (§5): queries, keys and values for "I love cats", output for position 2.

The notes print the projections flattened row by row: ``W_Q = 100001000010`` is the 3×4
matrix [[1,0,0,0],[0,1,0,0],[0,0,1,0]], used transposed (4×3) in X W_Q; likewise
``W_K = 010010000010`` and ``W_V = 10000100`` (2×4). The inputs here are the matrices as
used, (d, d_k) and (d, d_v).
"""

from __future__ import annotations

import math

import numpy as np

from engine.attention import self_attention
from engine.trace import Erratum, HeatmapData, InputSpec, Step, Trace, same_as_defaults, source_of
from engine.traces import _draw
from engine.traces._common import dot_terms, exp_shift, lines, n, sub, v

INPUTS = [
    InputSpec("tokens", "labels", ["I", "love", "cats"], "the sentence", shape=("n",)),
    InputSpec("X", "matrix", [[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0]],
              "word embeddings, one row per word", shape=("n", "d")),
    InputSpec("W_Q", "matrix", [[1, 0, 0], [0, 1, 0], [0, 0, 1], [0, 0, 0]],
              "query projection (d × d_k), used as X W_Q", shape=("d", "d_k")),
    InputSpec("W_K", "matrix", [[0, 1, 0], [1, 0, 0], [0, 0, 1], [0, 0, 0]],
              "key projection (d × d_k)", shape=("d", "d_k")),
    InputSpec("W_V", "matrix", [[1, 0], [0, 1], [0, 0], [0, 0]],
              "value projection (d × d_v)", shape=("d", "d_v")),
    InputSpec("position", "int", 2, "which word asks (1 = first)", low=1),
]

PRINTED_WEIGHTS = [0.64, 0.18, 0.18]
PRINTED_OUTPUT = [0.64, 0.18]


def build(tokens: list[str], X: np.ndarray, W_Q: np.ndarray, W_K: np.ndarray, W_V: np.ndarray,
          position: int) -> Trace:
    inputs = {"tokens": tokens, "X": X, "W_Q": W_Q, "W_K": W_K, "W_V": W_V, "position": position}
    m = X.shape[0]
    if position > m:
        raise ValueError(f"input position: got {position}, expected a whole number from 1 to {m}")
    i = position - 1
    d_k = W_Q.shape[1]
    if W_K.shape[1] != d_k:
        raise ValueError(f"input W_K: got shape ({W_K.shape[0]}, {W_K.shape[1]}), expected "
                         f"(d, d_k) with d_k = {d_k} like W_Q: queries and keys must match")
    defaults = same_as_defaults(INPUTS, inputs, "X", "W_Q", "W_K", "W_V")
    me = f"\"{tokens[i]}\""

    steps = [Step(
        "Projection matrices",
        "Qᵢ = Xᵢ W_Q,  Kⱼ = Xⱼ W_K,  Vⱼ = Xⱼ W_V;  W_Q, W_K ∈ ℝ^(d×d_k), W_V ∈ ℝ^(d×d_v)",
        lines(f"d = {X.shape[1]}, d_k = {d_k}, d_v = {W_V.shape[1]}",
              f"W_Q = {v(W_Q)}", f"W_K = {v(W_K)}", f"W_V = {v(W_V)}"),
        {"W_Q": W_Q, "W_K": W_K, "W_V": W_V},
        ("The notes print these flattened as W_Q = 100001000010, W_K = 010010000010 and "
         "W_V = 10000100: read them as rows of four (3×4, 3×4, 2×4) and transpose, so that "
         "X (n×4) times W gives n×3 and n×2." if defaults else
         "Three learned matrices turn the same embedding into a question, a label and content."),
    )]

    Qi = X[i] @ W_Q  # (d_k,)
    steps.append(Step(
        f"Query of {me}",
        f"Q{sub(position)} = X{sub(position)} W_Q",
        f"Q{sub(position)} = {v(X[i])} W_Q = {v(Qi)}",
        {f"Q{sub(position)}": Qi},
        "What this word is looking for.",
    ))

    K = X @ W_K  # (n, d_k)
    steps.append(Step(
        "Keys of every word",
        "Kⱼ = Xⱼ W_K",
        lines(*(f"K{sub(j + 1)} ({tokens[j]}) = {v(X[j])} W_K = {v(K[j])}" for j in range(m))),
        {"K": K},
        "How each word can be found, including the asking word itself.",
    ))

    V = X @ W_V  # (n, d_v)
    steps.append(Step(
        "Values of every word",
        "Vⱼ = Xⱼ W_V",
        lines(*(f"V{sub(j + 1)} ({tokens[j]}) = {v(V[j])}" for j in range(m))),
        {"V": V},
        "What each word hands over if it is attended to.",
    ))

    root = math.sqrt(d_k)
    scores = (K @ Qi) / root  # (n,)
    steps.append(Step(
        "Scaled scores",
        f"scoreⱼ = Q{sub(position)}·Kⱼ / √d_k",
        lines(f"√d_k = √{d_k} = {n(root)}",
              *(f"score{sub(j + 1)} = ({dot_terms(Qi, K[j])}) / {n(root)} = {n(scores[j])}"
                for j in range(m))),
        {"scores": scores},
        "Raw compatibilities; they only become weights after the softmax.",
    ))

    shift = exp_shift(scores)
    ex = np.exp(scores - shift)  # (n,)
    weights = ex / ex.sum()
    steps.append(Step(
        "Softmax",
        "αⱼ = e^scoreⱼ / Σₖ e^scoreₖ" if shift == 0 else
        "αⱼ = e^(scoreⱼ − m) / Σₖ e^(scoreₖ − m),  m = max score",
        lines(*([] if shift == 0 else [f"m = {n(shift)}"]),
              ("e^score = " if shift == 0 else "e^(score − m) = ")
              + ", ".join(n(e) for e in ex) + f"; Σ = {n(ex.sum())}",
              *(f"α{sub(j + 1)} = {n(ex[j])} / {n(ex.sum())} = {n(weights[j])}" for j in range(m))),
        {"weights": weights},
        f"{me} attends most to \"{tokens[int(np.argmax(weights))]}\"; the weights sum to 1.",
    ))

    out = weights @ V  # (d_v,)
    steps.append(Step(
        "Output",
        "Attention = Σⱼ αⱼ Vⱼ",
        " + ".join(f"{n(weights[j])}·{v(V[j])}" for j in range(m)) + f" = {v(out)}",
        {"output": out},
        "A blend of the value vectors, each in proportion to its weight.",
    ))

    f_out, f_w = self_attention(X, W_Q, W_K, W_V)
    trace = Trace(
        name="qkv",
        title="Q, K, V for \"I love cats\"",
        section=5,
        inputs=inputs,
        steps=steps,
        result={"query": Qi, "scores": scores, "weights": weights, "output": out},
        fused={"query": (X @ W_Q)[i], "weights": f_w[i], "output": f_out[i]},
        source=source_of(INPUTS, inputs, "notes"),
        summary=f"Word {position} ({me}) asks a question of every word: query against keys, "
                "softmax, then a weighted sum of values.",
        heatmaps=[HeatmapData(f"Attention of {me} over the sentence", weights[None, :],
                              [tokens[i]], list(tokens))],
    )
    if defaults and position == 2:
        unscaled = math.e / (math.e + 2)
        trace.errata += [
            Erratum(
                where="§5 worked example, softmax",
                printed="α₁ = 0.64, α₂ = 0.18, α₃ = 0.18 (from e^0.58 ≈ 1.79, sum = 3.79)",
                computed="α = " + ", ".join(f"{w:.3f}" for w in weights),
                why=f"The notes' own numbers give 1.79 / 3.79 = {1.79 / 3.79:.3f} and 1 / 3.79 = "
                    f"{1 / 3.79:.3f}; the printed 0.64 / 0.18 follow from neither (without the "
                    f"√3 scaling the weights would be {unscaled:.3f} / {(1 - unscaled) / 2:.3f}). "
                    "An arithmetic slip in the division.",
                kind="arithmetic", id="qkv-weights"),
            Erratum(
                where="§5 worked example, output",
                printed="output [0.64, 0.18], i.e. 0.64·V₁ + 0.18·V₂ + 0.18·V₃",
                computed=f"Attention = [{out[0]:.3f}, {out[1]:.3f}]",
                why="It inherits the wrong weights; with V₁ = [1, 0] and V₂ = [0, 1] the output "
                    "is just (α₁, α₂).",
                kind="arithmetic", id="qkv-output"),
        ]
        # not an erratum: the notes exponentiate the score they rounded (and say so), 0.58
        steps[5].note += (f" The notes' e^0.58 ≈ 1.79 and sum 3.79 are right for the score they "
                          f"round to 0.58 (e^0.58 = {math.exp(0.58):.3f}); from 1/√3 = "
                          f"{n(scores[0])} the values are {ex[0]:.3f} and {ex.sum():.3f}. "
                          "Either way the first weight is 0.47, not the printed 0.64.")
    return trace


def draw_inputs(rng: np.random.Generator) -> dict:
    """Fresh inputs: embeddings and projections of small integers (-1, 0, 1, 2), d_k = 2 or 3,
    d_v = 2 or d_k, d = d_k or d_k + 1, and a random asking word."""
    d_k = int(_draw.choice(rng, [2, 3]))
    d = d_k + int(_draw.choice(rng, [0, 1]))
    d_v = int(_draw.choice(rng, [2, d_k, d]))
    return {"tokens": ["I", "love", "cats"], "X": _draw.nonzero(rng, -1, 2, 1, (3, d)),
            "W_Q": _draw.nonzero(rng, -1, 1, 1, (d, d_k)), "W_K": _draw.nonzero(rng, -1, 1, 1, (d, d_k)),
            "W_V": _draw.nonzero(rng, -1, 1, 1, (d, d_v)), "position": int(rng.integers(1, 4))}
