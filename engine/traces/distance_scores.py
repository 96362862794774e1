"""Trace ``distance-scores`` (§8): scores from squared distances, −‖q − k‖², and how they
relate to dot-product scores.

Not in the notes, whose scoring functions all measure alignment (dot, scaled dot, additive).
Distance-based (RBF, "L2") attention scores a key by how near it is to the query. Expanding
the square, −‖q − k‖² = 2 q·k − ‖q‖² − ‖k‖²; the ‖q‖² term is the same for every key of one
query and cancels in the softmax, so the weights are those of dot-product scores at scale 2
with a bias −‖k‖² per key, and keys of equal length give exactly dot-product weights. The
defaults are the notes' §6 query and keys (lengths 0.73, 0.82, 0.52 squared), so the bias
shows; V defaults to a copy of K, as in ``scores``.
"""

from __future__ import annotations

import numpy as np

from engine.pooling import attention_pool
from engine.scoring import distance_scores, dot_scores
from engine.softmax import softmax
from engine.trace import HeatmapData, InputSpec, Step, Trace, source_of
from engine.traces import _draw
from engine.traces._common import dot_terms, exp_shift, lines, n, p, sub, v

INPUTS = [
    InputSpec("Q", "vector", [0.5, -0.2], "the query vector", shape=("d",)),
    InputSpec("K", "matrix", [[0.3, 0.8], [0.9, 0.1], [-0.4, 0.6]], "keys, one per row",
              shape=("n", "d")),
    InputSpec("V", "matrix", None, "values, one per row (unset = a copy of K)",
              shape=("n", "d_v"), optional=True),
    InputSpec("scale", "scalar", 1.0, "multiplier of −‖q − k‖² (1/(2σ²) for an RBF of width σ)",
              low=0.0, low_open=True),
]


def _softmax_shown(scores: np.ndarray) -> tuple[np.ndarray, float, float]:
    """e^(s − m), their sum and m, as the steps print them (m = 0 unless scores are huge)."""
    shift = exp_shift(scores)
    exps = np.exp(scores - shift)  # (n,)
    return exps, float(exps.sum()), shift


def build(Q: np.ndarray, K: np.ndarray, V: np.ndarray | None, scale: float) -> Trace:
    values_given = V is not None
    if V is None:
        V = K.copy()
    m = K.shape[0]
    keys = [f"K{sub(j + 1)}" for j in range(m)]
    steps: list[Step] = []

    diffs = Q[None, :] - K  # (n, d)
    sq = (diffs * diffs).sum(axis=1)  # (n,) ‖q − k_j‖²
    steps.append(Step(
        "Squared distances",
        "‖q − Kⱼ‖² = Σ_c (q_c − Kⱼ,c)²",
        lines(*(f"‖q − {keys[j]}‖² = " + " + ".join(f"{p(x)}²" for x in diffs[j]) + f" = {n(sq[j])}"
                for j in range(m))),
        {"sq_distances": sq},
        "How far each key is from the query; the nearest key will get the largest weight.",
    ))

    scores = 0.0 - scale * sq  # (n,)
    steps.append(Step(
        "Distance scores",
        "sⱼ = −scale · ‖q − Kⱼ‖²",
        lines(*(f"s{sub(j + 1)} = −{n(scale)} · {n(sq[j])} = {n(scores[j])}" for j in range(m))),
        {"scores": scores},
        "Every score is at most 0, and exactly 0 only for a key equal to the query.",
    ))

    dots = K @ Q  # (n,)
    k_sq = (K * K).sum(axis=1)  # (n,) ‖k_j‖²
    q_sq = float(Q @ Q)
    steps.append(Step(
        "Expand the square",
        "−‖q − k‖² = 2 q·k − ‖k‖² − ‖q‖²",
        lines(*(f"{keys[j]}: 2·({dot_terms(Q, K[j])}) − {n(k_sq[j])} − {n(q_sq)} = "
                f"2·{p(dots[j])} − {n(k_sq[j])} − {n(q_sq)} = {n(2 * dots[j] - k_sq[j] - q_sq)}"
                for j in range(m))),
        {"dots": dots, "key_sq_norms": k_sq, "query_sq_norm": q_sq},
        "The query's own length ‖q‖² is the same in every key's score, so the softmax will "
        "cancel it; each key's length ‖k‖² is not, and acts as a bias against long keys.",
    ))

    exps, total, shift = _softmax_shown(scores)
    weights = exps / total  # (n,)
    e_of = "e^sⱼ" if shift == 0 else "e^(sⱼ − m)"
    steps.append(Step(
        "Softmax weights",
        f"αⱼ = {e_of} / Σ {e_of}",
        lines(*([] if shift == 0 else [f"m = max score = {n(shift)}"]),
              *(f"α{sub(j + 1)} = {n(exps[j])} / {n(total)} = {n(weights[j])}" for j in range(m))),
        {"weights": weights},
        f"{keys[int(np.argmax(weights))]}, the nearest key, gets the most weight.",
    ))

    biased = scale * (2 * dots - k_sq)  # (n,) the scores without the −‖q‖² term
    b_exps, b_total, _ = _softmax_shown(biased)
    without_q = b_exps / b_total  # (n,)
    steps.append(Step(
        "Drop ‖q‖²: the same weights",
        "softmax(scale · (2 q·Kⱼ − ‖Kⱼ‖²))",
        lines(f"scores without −‖q‖² = {v(biased)}",
              f"weights = {v(without_q)}"),
        {"weights_without_q_norm": without_q},
        f"Every score moved by scale·‖q‖² = {n(scale * q_sq)}; the softmax does not see a shift "
        "shared by all keys.",
    ))

    plain = scale * 2 * dots  # (n,) dot-product scores at the same scale, no bias
    d_exps, d_total, _ = _softmax_shown(plain)
    dot_weights = d_exps / d_total  # (n,)
    equal = bool(np.allclose(k_sq, k_sq[0]))
    steps.append(Step(
        "Compare: dot-product scores at the same scale",
        "softmax(scale · 2 q·Kⱼ), no −‖Kⱼ‖² bias",
        lines(f"scores = {v(plain)}", f"weights = {v(dot_weights)}"),
        {"dot_weights": dot_weights},
        ("All keys have the same length here, so the bias is shared too and the two sets of "
         "weights agree." if equal else
         "The keys differ in length (‖K‖² = " + ", ".join(n(x) for x in k_sq) + "), so the "
         "weights differ: the −‖k‖² bias pulls long keys down against short ones."),
    ))

    out = weights @ V  # (d_v,)
    steps.append(Step(
        "Weighted sum of values",
        "context = Σⱼ αⱼ Vⱼ",
        "context = " + " + ".join(f"{n(weights[j])}·{v(V[j])}" for j in range(m)) + f" = {v(out)}",
        {"context": out},
        "As in every attention: a blend of the value rows in proportion to the weights."
        + ("" if values_given else " No values were given, so V is a copy of K."),
    ))

    fused_scores = distance_scores(Q, K, scale)  # (n,)
    fused_weights = softmax(fused_scores)
    return Trace(
        name="distance-scores",
        title="Distance-based scores",
        section=8,
        inputs={"Q": Q, "K": K, "V": V, "scale": scale},
        steps=steps,
        result={"sq_distances": sq, "scores": scores, "weights": weights,
                "weights_without_q_norm": without_q, "dot_weights": dot_weights, "context": out},
        fused={"scores": fused_scores, "weights": fused_weights,
               "weights_without_q_norm": softmax(scale * (2 * dot_scores(Q, K) - k_sq)),
               "dot_weights": softmax(scale * 2 * dot_scores(Q, K)),
               "context": attention_pool(V, fused_weights)},
        source=source_of(INPUTS, {"Q": Q, "K": K, "V": V if values_given else None,
                                  "scale": scale}, "notes"),
        summary="Scores from squared distances, −‖q − k‖²: the nearest key wins. The query's "
                "length cancels in the softmax; the keys' lengths stay as a bias, which is all "
                "that separates these weights from dot-product ones.",
        heatmaps=[HeatmapData("Distance vs dot-product weights",
                              np.vstack([weights, dot_weights]), ["distance", "dot"], keys)],
    )


def draw_inputs(rng: np.random.Generator) -> dict:
    """Fresh inputs: a one-decimal query and 3-4 keys in 2 dimensions, V a copy of K, scale 1
    (or ½, an RBF of width 1)."""
    m = int(_draw.choice(rng, [3, 3, 4]))
    return {"Q": _draw.nonzero(rng, -1, 1, 0.1, 2), "K": _draw.grid(rng, -1, 1, 0.1, (m, 2)),
            "V": None, "scale": float(_draw.choice(rng, [1.0, 1.0, 0.5]))}
