"""Trace ``scores`` (§6): one query against three keys, scaled dot-product scores → weights.

The notes' worked example: Q = [0.5, -0.2] and keys [0.3, 0.8], [0.9, 0.1], [-0.4, 0.6] with
d_k = 2. The notes stop at "context = Σ α_j V_j" without values, so V defaults to the keys
themselves (the simplest choice, stated in the trace).
"""

from __future__ import annotations

import math

import numpy as np

from engine.attention import attention
from engine.scoring import scaled_dot_scores
from engine.trace import HeatmapData, InputSpec, Step, Trace, same_as_defaults, source_of
from engine.traces import _draw
from engine.traces._common import dot_terms, exp_shift, fixed, lines, n, p, sub, v

_K = [[0.3, 0.8], [0.9, 0.1], [-0.4, 0.6]]

# What the notes print, to three decimals.
_PRINTED = {"score₁": -0.007, "score₂": 0.305, "score₃": -0.227, "e^score₁": 0.993,
            "e^score₂": 1.357, "e^score₃": 0.797, "Σ e^score": 3.147, "α₁": 0.316, "α₂": 0.431,
            "α₃": 0.253}

INPUTS = [
    InputSpec("Q", "vector", [0.5, -0.2], "the query vector", shape=("d_k",)),
    InputSpec("K", "matrix", _K, "keys, one per row", shape=("n", "d_k")),
    InputSpec("V", "matrix", None, "values, one per row (the notes give none; unset = a copy of K)",
              shape=("n", "d_v"), optional=True),
]


def build(Q: np.ndarray, K: np.ndarray, V: np.ndarray | None) -> Trace:
    values_given = V is not None
    if V is None:
        V = K.copy()
    d_k = Q.shape[0]
    m = K.shape[0]
    keys = [f"K{sub(j + 1)}" for j in range(m)]
    root = math.sqrt(d_k)
    steps: list[Step] = []

    steps.append(Step(
        "Scale factor",
        "√d_k",
        f"√{d_k} = {n(root)}",
        {"d_k": d_k, "sqrt_d_k": root},
        "Dividing by √d_k keeps the spread of the scores near 1 whatever the key size.",
    ))

    dots = K @ Q  # (n,)
    steps.append(Step(
        "Dot products",
        "Q·Kⱼ = Σ_c Q_c Kⱼ,c",
        lines(*(f"Q·{keys[j]} = {dot_terms(Q, K[j])} = {n(dots[j])}" for j in range(m))),
        {"dots": dots},
        "Each dot product measures how well one key lines up with the query.",
    ))

    scores = dots / root  # (n,)
    steps.append(Step(
        "Scaled scores",
        "scoreⱼ = Q·Kⱼ / √d_k",
        lines(*(f"score{sub(j + 1)} = {n(dots[j])} / {n(root)} = {n(scores[j])}" for j in range(m))),
        {"scores": scores},
        "Scores are raw compatibilities: any real number, not yet weights.",
    ))

    shift = exp_shift(scores)
    exps = np.exp(scores - shift)  # (n,)
    total = float(exps.sum())
    e_of = "e^scoreⱼ" if shift == 0 else "e^(scoreⱼ − m)"
    steps.append(Step(
        "Exponentials",
        f"{e_of}, Z = Σⱼ {e_of}",
        lines(*([] if shift == 0 else [f"m = max score = {n(shift)}"]),
              *(f"e^{p(scores[j] - shift)} = {n(exps[j])}" for j in range(m)),
              "Z = " + " + ".join(n(e) for e in exps) + f" = {n(total)}"),
        {"exp_scores": exps, "Z": total},
        "Exponentials are always positive, so a negative score still keeps a little weight."
        + ("" if shift == 0 else " Subtracting the largest score m first keeps e^score from "
           "overflowing; it cancels in the division, so the weights are the same."),
    ))

    weights = exps / total  # (n,)
    best = int(np.argmax(weights))
    steps.append(Step(
        "Softmax weights",
        f"αⱼ = {e_of} / Z",
        lines(*(f"α{sub(j + 1)} = {n(exps[j])} / {n(total)} = {n(weights[j])}" for j in range(m)),
              f"Σ α = {n(weights.sum())}"),
        {"weights": weights},
        f"{keys[best]} earns the largest share ({n(weights[best], 3)}); the shares add up to 1.",
    ))

    out = weights @ V  # (d_v,)
    steps.append(Step(
        "Weighted sum of values",
        "context = Σⱼ αⱼ Vⱼ",
        "context = " + " + ".join(f"{n(weights[j])}·{v(V[j])}" for j in range(m)) + f" = {v(out)}",
        {"context": out},
        "The output blends the value rows, each in proportion to its weight.",
    ))

    fused_out, fused_w = attention(Q[None, :], K, V)
    trace = Trace(
        name="scores",
        title="Scaled dot-product scores",
        section=6,
        inputs={"Q": Q, "K": K, "V": V},
        steps=steps,
        result={"scores": scores, "weights": weights, "context": out},
        fused={"scores": scaled_dot_scores(Q, K), "weights": fused_w[0], "context": fused_out[0]},
        source=source_of(INPUTS, {"Q": Q, "K": K, "V": V if values_given else None}, "notes"),
        summary="One query scored against every key with Q·K/√d_k, turned into weights by "
                "softmax, then used to blend the values.",
        heatmaps=[HeatmapData("Attention weights of Q", weights[None, :], ["Q"], keys)],
    )
    if same_as_defaults(INPUTS, {"Q": Q, "K": K, "V": V}, "Q", "K"):
        computed = {"score₁": scores[0], "score₂": scores[1], "score₃": scores[2],
                    "e^score₁": exps[0], "e^score₂": exps[1], "e^score₃": exps[2], "Σ e^score": total,
                    "α₁": weights[0], "α₂": weights[1], "α₃": weights[2]}
        moved = [k for k, printed in _PRINTED.items() if fixed(computed[k], 3) != f"{printed:.3f}"]
        if moved:
            # not an erratum: the notes state √2 ≈ 1.41 and carry three-decimal exponentials,
            # and every printed digit follows from those (tests/test_errata.py recomputes them)
            trace.steps[0].note += (" The notes use their stated √2 ≈ 1.41 and three-decimal "
                                    "exponentials, so a few third decimals differ from these: "
                                    + ", ".join(f"{k} {_PRINTED[k]:.3f} there, {fixed(computed[k], 3)} here"
                                                for k in moved)
                                    + ". A rounding difference, not an error in the notes.")
        if "α₃" in moved:
            trace.steps[4].note += (f" The notes' α₃ = 0.797 / 3.147 = {0.797 / 3.147:.5f} → 0.253 "
                                    f"from their rounded numbers; exactly α₃ = {n(weights[2], 5)} → "
                                    f"{fixed(weights[2], 3)}.")
    if not values_given:
        trace.steps[-1].note += " The notes give no value vectors, so here V is a copy of K."
    return trace


def draw_inputs(rng: np.random.Generator) -> dict:
    """Fresh inputs: a one-decimal query, 3 keys and 3 values, d_k = 2 or 3."""
    d_k = int(_draw.choice(rng, [2, 2, 3]))
    m = int(_draw.choice(rng, [3, 3, 4]))
    return {"Q": _draw.nonzero(rng, -1, 1, 0.1, d_k), "K": _draw.grid(rng, -1, 1, 0.1, (m, d_k)),
            "V": _draw.grid(rng, -1, 1, 0.1, (m, int(_draw.choice(rng, [2, d_k]))))}
