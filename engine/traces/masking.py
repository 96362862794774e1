"""Trace ``masking`` (§7–§8): padding and causal masks give masked positions weight exactly 0.

The notes only say that padding must be masked (and that GPT uses causal self-attention), so
this is a seeded example: "the cat sat" padded to 5 tokens, self-attention with a padding
mask (on keys and queries), a causal mask, or both. Convention: True = may attend (PyTorch
SDPA); a row with nothing allowed gets zero weights and a zero output. The optional input
``scores`` replaces the seeded Q Kᵀ / √d_k with raw scores of the student's own (the values V
stay seeded).
"""

from __future__ import annotations

import numpy as np

from engine.attention import attention, self_attention
from engine.masks import causal_mask, padding_mask
from engine.trace import HeatmapData, InputSpec, Step, Trace, source_of
from engine.traces import _draw
from engine.traces._common import Draw, lines, n, v

INPUTS = [
    InputSpec("tokens", "labels", ["the", "cat", "sat", "<pad>", "<pad>"],
              "the padded sequence", shape=("n",)),
    InputSpec("length", "int", 3, "how many tokens are real (the rest is padding)", low=0),
    InputSpec("causal", "bool", True, "also forbid looking at later tokens (GPT-style)"),
    InputSpec("d_k", "int", 2, "query/key size", low=1, high=16),
    InputSpec("seed", "int", 8, "seed for embeddings and projections", low=0),
    InputSpec("scores", "matrix", None, "raw scores sᵢⱼ, query i (row) against key j (unset = "
              "Q Kᵀ / √d_k from the seeded embeddings; when set, d_k is not used)",
              shape=("n", "n"), optional=True),
]


def _grid(mask: np.ndarray) -> str:
    return "; ".join("".join("1" if x else "." for x in row) for row in mask)


def build(tokens: list[str], length: int, causal: bool, d_k: int, seed: int,
          scores: np.ndarray | None = None) -> Trace:
    given = scores is not None
    inputs = {"tokens": tokens, "length": length, "causal": causal, "d_k": d_k, "seed": seed}
    if given:  # an optional input left unset is not listed (the form would send it back)
        inputs["scores"] = scores
    m = len(tokens)
    if length > m:
        raise ValueError(f"input length: got {length}, expected a whole number from 0 to {m} "
                         f"(the number of tokens)")
    draw = Draw(seed)
    X = draw(m, 4, scale=1.0)
    W_Q, W_K, W_V = draw(4, d_k, scale=0.7), draw(4, d_k, scale=0.7), draw(4, 2, scale=0.7)

    pad = padding_mask([length], max_len=m)[0]  # (n,)
    steps = [Step(
        "Padding mask",
        "padⱼ = [j < length]  (True = real token, may be attended)",
        f"length = {length}: pad = {v(pad.astype(int))}  ({', '.join(tokens[:length]) or 'nothing'} real)",
        {"padding": pad},
        "Padding only exists to make sequences the same length; nobody should look at it.",
    )]
    mask = pad[:, None] & pad[None, :]  # (n, n): a padding token neither asks nor answers
    if causal:
        cm = causal_mask(m)
        steps.append(Step(
            "Causal mask",
            "causalᵢⱼ = [j ≤ i]",
            "rows: " + _grid(cm),
            {"causal": cm},
            "Token i may look back at itself and earlier tokens, never ahead: what a decoder "
            "generating left to right must obey.",
        ))
        mask &= cm
    steps.append(Step(
        "Combined mask",
        "maskᵢⱼ = padᵢ ∧ padⱼ ∧ causalᵢⱼ" if causal else "maskᵢⱼ = padᵢ ∧ padⱼ",
        "rows: " + _grid(mask),
        {"mask": mask},
        "A cell must pass every mask to stay allowed. Masking the padding rows too (padᵢ) means "
        "a padding position asks nothing: its row is empty.",
    ))

    Q, K, V = X @ W_Q, X @ W_K, X @ W_V
    S = scores if scores is not None else Q @ K.T / np.sqrt(d_k)  # (n, n)
    masked = np.where(mask, S, -np.inf)
    steps.append(Step(
        "Mask the scores",
        "s̃ᵢⱼ = sᵢⱼ if maskᵢⱼ else −∞",
        lines(*(f"row {i + 1} ({tokens[i]}): {v(masked[i], 3)}" for i in range(m))),
        {"scores": S, "masked_scores": masked},
        ("Your scores (d_k is not used; the values V are still seeded). " if given else "")
        + "−∞ is the trick: e^(−∞) = 0, so these positions get no weight at all.",
    ))

    A = np.zeros((m, m))
    for i in range(m):
        if mask[i].any():
            e = np.where(mask[i], np.exp(masked[i] - masked[i][mask[i]].max()), 0.0)
            A[i] = e / e.sum()
    Z = A @ V
    empty = [f"{i + 1} ({tokens[i]})" for i in range(m) if not mask[i].any()]
    steps.append(Step(
        "Softmax and output",
        "αᵢ = softmax(s̃ᵢ),  Zᵢ = Σⱼ αᵢⱼ Vⱼ",
        lines(*(f"row {i + 1} ({tokens[i]}): α = {v(A[i], 4)}, sum {n(A[i].sum())}"
                for i in range(m))),
        {"A": A, "Z": Z},
        "Masked cells are exactly 0, not merely small."
        + (f" Rows with nothing allowed (row {', '.join(empty)}) get all-zero weights and a zero "
           "output, as PyTorch's scaled_dot_product_attention does, instead of 0/0 = NaN."
           if empty else ""),
    ))

    if given:  # Q = S, K = I and scale 1 make attention's scores Q Kᵀ·1 exactly S
        f_out, f_w = attention(S, np.eye(m), V, mask=mask, scale=1.0)
    else:
        f_out, f_w = self_attention(X, W_Q, W_K, W_V, mask=pad[:, None] & pad[None, :],
                                    causal=causal)
    return Trace(
        name="masking",
        title="Padding and causal masks",
        section=8,
        inputs=inputs,
        steps=steps,
        result={"A": A, "Z": Z},
        fused={"A": f_w, "Z": f_out},
        source="user" if given else source_of(INPUTS, {**inputs, "scores": None}, "built"),
        summary="Self-attention over a padded sequence, with the padding (and, for a decoder, "
                "the future) masked out. "
                + ("Your scores; seeded values." if given else
                   "Seeded embeddings and projections."),
        heatmaps=[HeatmapData("Masked self-attention weights", A, list(tokens), list(tokens))],
    )


def draw_inputs(rng: np.random.Generator) -> dict:
    """Fresh inputs: 4-5 tokens with some padding, causal or not, half-step scores."""
    m = int(rng.integers(4, 6))
    length = int(rng.integers(2, m))
    tokens = ["the", "cat", "sat", "down"][:length] + ["<pad>"] * (m - length)
    return {"tokens": tokens, "length": length, "causal": bool(rng.random() < 0.5), "d_k": 2,
            "seed": _draw.seed(rng), "scores": _draw.grid(rng, -1, 2, 0.5, (m, m))}
