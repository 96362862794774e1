"""Trace ``multi-head`` (§6, Vaswani et al. 2017): heads as slices of the projections.

The notes only name multi-head attention, so this is a seeded example: "I love cats" with
d_model = 4 split into h heads of size d_model / h, each attending on its own, then
concatenated and mixed by W_O.
"""

from __future__ import annotations

import math

import numpy as np

from engine.attention import multi_head_attention
from engine.trace import HeatmapData, InputSpec, Step, Trace, source_of
from engine.traces import _draw
from engine.traces._common import Draw, lines, sub, v

INPUTS = [
    InputSpec("tokens", "labels", ["I", "love", "cats"], "the sentence", shape=("n",)),
    InputSpec("d_model", "int", 4, "model width", low=1, high=32),
    InputSpec("heads", "int", 2, "number of heads h (must divide d_model)", low=1, high=16),
    InputSpec("seed", "int", 5, "seed for embeddings and projections", low=0),
]


def build(tokens: list[str], d_model: int, heads: int, seed: int) -> Trace:
    inputs = {"tokens": tokens, "d_model": d_model, "heads": heads, "seed": seed}
    if d_model % heads:
        raise ValueError(f"input heads: got {heads}, expected a divisor of d_model = {d_model}")
    m, d_head = len(tokens), d_model // heads
    draw = Draw(seed)
    X = draw(m, d_model, scale=1.0)
    W_Q, W_K, W_V, W_O = (draw(d_model, d_model, scale=0.7) for _ in range(4))

    Q, K, V = X @ W_Q, X @ W_K, X @ W_V  # (n, d_model) each
    steps = [Step(
        "Project once",
        "Q = X W_Q,  K = X W_K,  V = X W_V",
        lines(f"X = {v(X)}", f"Q = {v(Q, 3)}", f"K = {v(K, 3)}", f"V = {v(V, 3)}"),
        {"X": X, "Q": Q, "K": K, "V": V},
        f"Seeded weights (seed {seed}). One big projection, later cut into {heads} slices.",
    )]

    outs, weights = [], []
    root = math.sqrt(d_head)
    for h in range(heads):
        cols = slice(h * d_head, (h + 1) * d_head)
        Qh, Kh, Vh = Q[:, cols], K[:, cols], V[:, cols]
        S = Qh @ Kh.T / root
        E = np.exp(S - S.max(axis=1, keepdims=True))
        A = E / E.sum(axis=1, keepdims=True)
        outs.append(A @ Vh)
        weights.append(A)
        steps.append(Step(
            f"Head {h + 1}",
            f"headᵢ = softmax(Qᵢ Kᵢᵀ / √d_head) Vᵢ,  columns {h * d_head + 1}–{(h + 1) * d_head}",
            lines(f"Q{sub(h + 1)} = {v(Qh, 3)}", f"S = Q{sub(h + 1)} K{sub(h + 1)}ᵀ / √{d_head} = {v(S, 3)}",
                  f"A = {v(A, 4)}", f"head{sub(h + 1)} = A V{sub(h + 1)} = {v(outs[-1], 4)}"),
            {f"A_{h + 1}": A, f"head_{h + 1}": outs[-1]},
            "Each head compares its own slice of the vectors, so each can follow a different "
            "relation; the scale uses the head size, not d_model.",
        ))

    concat = np.concatenate(outs, axis=1)  # (n, d_model)
    out = concat @ W_O
    steps.append(Step(
        "Concatenate and mix",
        "MultiHead = concat(head₁, …, head_h) W_O",
        lines(f"concat = {v(concat, 4)}", f"output = concat W_O = {v(out, 4)}"),
        {"W_O": W_O, "concat": concat, "output": out},
        "W_O lets every output coordinate draw on every head.",
    ))

    f_out, f_w = multi_head_attention(X, X, W_Q, W_K, W_V, W_O, heads)
    return Trace(
        name="multi-head",
        title="Multi-head attention",
        section=6,
        inputs=inputs,
        steps=steps,
        result={"weights": np.array(weights), "output": out},
        fused={"weights": f_w, "output": f_out},
        source=source_of(INPUTS, inputs, "built"),
        summary=f"{heads} heads of size {d_head} over \"{' '.join(tokens)}\": same input, "
                "separate attention patterns, one output.",
        heatmaps=[HeatmapData(f"Head {h + 1} weights", weights[h], list(tokens), list(tokens))
                  for h in range(heads)],
    )


def draw_inputs(rng: np.random.Generator) -> dict:
    """Fresh inputs: a width of 4 or 6 split into a dividing number of heads, a new seed."""
    d_model = int(_draw.choice(rng, [4, 4, 6]))
    heads = int(_draw.choice(rng, [h for h in (1, 2, 3) if d_model % h == 0]))
    return {"tokens": ["I", "love", "cats"], "d_model": d_model, "heads": heads, "seed": _draw.seed(rng)}
