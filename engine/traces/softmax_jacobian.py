"""Trace ``softmax-jacobian`` (§8, §12): ∂α/∂s = diag(α) − ααᵀ and what it does to gradients.

Defaults: the §5 "I love cats" query of word 2 (Q₂ = [0, 1, 0]) against the keys K₁..K₃, so
the scores are the notes' [1/√3, 0, 0]. A gradient ∂L/∂α is pushed back through the
Jacobian; then seeded random q, K of width ``d_k_big`` show why the 1/√d_k matters for
training: unscaled scores saturate the softmax and its Jacobian (the gradient's only way
back to the scores) nearly vanishes.
"""

from __future__ import annotations

import math

import numpy as np

from engine.scoring import dot_scores, scaled_dot_scores
from engine.softmax import softmax
from engine.softmax_backward import softmax_backward, softmax_jacobian
from engine.trace import HeatmapData, InputSpec, Step, Trace, source_of
from engine.traces import _draw
from engine.traces._common import Draw, dot_terms, lines, n, p, sub, v

INPUTS = [
    InputSpec("tokens", "labels", ["I", "love", "cats"], "the words the keys belong to",
              shape=("n",)),
    InputSpec("query", "vector", [0, 1, 0], "the asking word's query (§5: Q₂ of \"love\")",
              shape=("d_k",)),
    InputSpec("K", "matrix", [[0, 1, 0], [1, 0, 0], [0, 0, 1]], "keys, one row per word",
              shape=("n", "d_k")),
    InputSpec("grad", "vector", [1, 0, 0], "∂L/∂α arriving from above (default: a loss that "
              "rewards weight on the first word)", shape=("n",)),
    InputSpec("d_k_big", "int", 64, "width of the random q, K for the saturation part",
              low=1, high=1024),
    InputSpec("seed", "int", 0, "seed of the random q, K", low=0),
]


def _frobenius(J: np.ndarray) -> float:
    return math.sqrt(float(np.sum(J * J)))


def build(tokens: list[str], query: np.ndarray, K: np.ndarray, grad: np.ndarray, d_k_big: int,
          seed: int) -> Trace:
    inputs = {"tokens": tokens, "query": query, "K": K, "grad": grad, "d_k_big": d_k_big,
              "seed": seed}
    m, d_k = K.shape
    root = math.sqrt(d_k)
    s = K @ query / root  # (n,)
    e = np.exp(s - s.max())
    alpha = e / e.sum()
    steps = [Step(
        "Scores and weights",
        "sⱼ = q·Kⱼ / √d_k,  αⱼ = e^sⱼ / Σₖ e^sₖ",
        lines(*(f"s{sub(j + 1)} ({tokens[j]}) = ({dot_terms(query, K[j])}) / {n(root)} = {n(s[j])}"
                for j in range(m)),
              f"α = {v(alpha)}"),
        {"scores": s, "alpha": alpha},
        "The forward pass the Jacobian belongs to.",
    )]

    J = np.diag(alpha) - np.outer(alpha, alpha)  # (n, n)
    entries = []
    for j in range(m):
        row = []
        for k in range(m):
            row.append(f"{n(alpha[j])}·(1 − {n(alpha[j])})" if j == k else
                       f"−{p(alpha[j])}·{p(alpha[k])}")
        entries.append(f"row {j + 1}: " + ", ".join(f"{t} = {n(J[j, k])}" for k, t in enumerate(row)))
    steps.append(Step(
        "The Jacobian",
        "∂αⱼ/∂sₖ = αⱼ(δⱼₖ − αₖ),  i.e.  J = diag(α) − ααᵀ",
        lines(*entries, f"J = {v(J)}"),
        {"J": J},
        "Raising score k raises its own weight (diagonal, positive) and takes weight from "
        "every other word (off-diagonal, negative). J is symmetric.",
    ))

    sums = J.sum(axis=1)
    steps.append(Step(
        "Each row sums to zero",
        "Σₖ ∂αⱼ/∂sₖ = αⱼ − αⱼ Σₖ αₖ = 0",
        lines(*(f"row {j + 1}: {' + '.join(p(x) for x in J[j])} = {n(round(sums[j], 12))}"
                for j in range(m)), "(0 up to the last bits of rounding)"),
        {"row_sums": sums},
        "Adding the same number to every score changes no weight, so no gradient can point "
        "that way: the weights are a distribution whatever the scores' level.",
    ))

    dot = float(alpha @ grad)
    ds = alpha * (grad - dot)  # (n,) = Jᵀ g
    steps.append(Step(
        "A gradient through the Jacobian",
        "∂L/∂s = Jᵀ ∂L/∂α = α ⊙ (g − α·g)",
        lines(f"g = ∂L/∂α = {v(grad)},  α·g = {dot_terms(alpha, grad)} = {n(dot)}",
              *(f"∂L/∂s{sub(j + 1)} = {n(alpha[j])}·({p(grad[j])} − {p(dot)}) = {n(ds[j])}"
                for j in range(m)),
              f"Σⱼ ∂L/∂sⱼ = {n(round(float(ds.sum()), 12))}"),
        {"d_scores": ds},
        "Only the part of g that differs from its α-weighted mean gets through, scaled by "
        "each word's own weight: a word with α ≈ 0 learns nothing, whatever g says.",
    ))

    draw = Draw(seed)
    q_big = draw(d_k_big, scale=1.0)  # (d_k_big,)
    K_big = draw(m, d_k_big, scale=1.0)  # (n, d_k_big)
    raw = K_big @ q_big  # (n,)
    scaled = raw / math.sqrt(d_k_big)
    out = {}
    for name, sc in (("unscaled", raw), ("scaled", scaled)):
        ex = np.exp(sc - sc.max())
        a = ex / ex.sum()
        Jx = np.diag(a) - np.outer(a, a)
        out[name] = (a, _frobenius(Jx))
    ratio = out["scaled"][1] / out["unscaled"][1] if out["unscaled"][1] > 0 else math.inf
    steps.append(Step(
        "Saturation: scaled vs unscaled",
        "‖J‖_F = √(Σⱼₖ Jⱼₖ²) for s = K q (unscaled) and s = K q / √d_k (scaled)",
        lines(f"random q, K with d_k = {d_k_big} (seed {seed}, N(0, 1) rounded to 0.1)",
              f"unscaled scores {v(raw)}: α = {v(out['unscaled'][0])}, ‖J‖_F = {n(out['unscaled'][1], 6)}",
              f"scaled scores {v(scaled)}: α = {v(out['scaled'][0])}, ‖J‖_F = {n(out['scaled'][1], 6)}",
              f"the scaled Jacobian is {n(ratio, 3)}× larger" if math.isfinite(ratio) else
              "the unscaled Jacobian is exactly zero"),
        {"alpha_unscaled": out["unscaled"][0], "alpha_scaled": out["scaled"][0],
         "norm_unscaled": out["unscaled"][1], "norm_scaled": out["scaled"][1]},
        f"Dot products of d_k = {d_k_big} unit-variance entries spread with standard deviation "
        f"√{d_k_big} ≈ {n(math.sqrt(d_k_big), 2)}; "
        + ("softmax then puts almost all weight on one key and J = diag(α) − ααᵀ → 0, so the "
           "scores, queries and keys stop learning. Dividing by √d_k keeps the spread near 1 "
           "and the Jacobian alive." if out["unscaled"][1] < 0.5 * out["scaled"][1] else
           "this draw happens to leave the top unscaled scores close together, so the "
           "softmax is not saturated yet; with more keys, or another seed, one score usually "
           "runs away from the rest and J collapses. Dividing by √d_k keeps the spread near 1 "
           "whatever the draw."),
    ))

    f_s = scaled_dot_scores(query, K)
    f_alpha = softmax(f_s)
    f_norms = {}
    for name, sc in (("unscaled", dot_scores(q_big, K_big)),
                     ("scaled", scaled_dot_scores(q_big, K_big))):
        f_norms[name] = _frobenius(softmax_jacobian(sc))
    return Trace(
        name="softmax-jacobian",
        title="The softmax Jacobian",
        section=8,
        inputs=inputs,
        steps=steps,
        result={"alpha": alpha, "J": J, "row_sums": sums, "d_scores": ds,
                "norm_unscaled": out["unscaled"][1], "norm_scaled": out["scaled"][1]},
        fused={"alpha": f_alpha, "J": softmax_jacobian(f_s), "row_sums": np.zeros(m),
               "d_scores": softmax_backward(f_alpha, grad),
               "norm_unscaled": f_norms["unscaled"], "norm_scaled": f_norms["scaled"]},
        source=source_of(INPUTS, inputs, "notes+built"),
        summary="How a gradient on the attention weights reaches the scores: the Jacobian "
                "diag(α) − ααᵀ on the §5 scores, and how saturation without 1/√d_k shrinks it.",
        heatmaps=[HeatmapData("Weights of the asking word", alpha[None, :], ["query"], list(tokens)),
                  HeatmapData("Jacobian ∂α/∂s (rows α, columns s)", J, list(tokens), list(tokens),
                              kind="scores")],
    )


def draw_inputs(rng: np.random.Generator) -> dict:
    """Fresh inputs: a small-integer query and keys, a 0/±1 upstream gradient, a new seed."""
    d_k = int(_draw.choice(rng, [2, 3]))
    return {"tokens": ["I", "love", "cats"], "query": _draw.nonzero(rng, -1, 2, 1, d_k),
            "K": _draw.nonzero(rng, -1, 1, 1, (3, d_k)), "grad": _draw.nonzero(rng, -1, 1, 1, 3),
            "d_k_big": int(_draw.choice(rng, [16, 64])), "seed": _draw.seed(rng)}
