"""Families beyond the notes' own scores (§5, §8): distance-based scores, and designing a
query that picks one key or shares its weight between two.

Each ``make_<family>(rng)`` returns the problem-specific fields of a
:class:`~tutor.quiz.generators.Problem`; the answers come from the engine.
"""

from __future__ import annotations

import numpy as np

from tutor.quiz.generators._base import Part
from tutor.quiz.generators.scoring import grid, labels
from tutor.render.numbers import number as num
from tutor.render.numbers import vector as vec

# Unit keys along the axes: every key has length 1, two different ones are either
# perpendicular or opposite, so a designed query's scores are c, 0 or −c.
_AXES = ((1.0, 0.0), (0.0, 1.0), (-1.0, 0.0), (0.0, -1.0))


def _clear_winner(x: np.ndarray, gap: float = 0.03) -> bool:
    top = np.sort(x)
    return bool(top[-1] - top[-2] > gap)


def make_distance_scores(rng: np.random.Generator) -> dict:
    from engine.scoring import distance_scores, dot_scores  # deferred: loads numba (start-up time)
    from engine.softmax import softmax  # deferred: loads numba (start-up time)

    while True:
        q = grid(rng, -1, 1, 0.5, 2)
        K = grid(rng, -1, 1, 0.5, (3, 2))
        if len({tuple(r) for r in K}) < 3:
            continue
        scores = distance_scores(q, K)  # (3,) −‖q − k_j‖²
        weights = softmax(scores)
        dot_w = softmax(2 * dot_scores(q, K))  # the same scores without the −‖k‖² bias
        if _clear_winner(weights) and _clear_winner(dot_w):
            break
    keys = labels("K", 3)
    k_sq = dot_scores(K, K).diagonal()  # (3,) ‖k_j‖²
    near, dot_best = keys[int(np.argmax(weights))], keys[int(np.argmax(dot_w))]
    return dict(
        prompt=(f"Distance-based attention scores each key by s_j = −‖q − K_j‖² (no other scale). "
                f"Query q = {vec(q)} and three keys:\n"
                + "\n".join(f"  {keys[j]} = {vec(K[j])}" for j in range(3))),
        parts=(
            Part.vector("(a) The scores s_1, s_2, s_3?", scores, tolerance=0.01, value="scores"),
            Part.vector("(b) The attention weights softmax(s)?", weights, tolerance=0.01, value="weights"),
            Part("(c) −‖q − k‖² = 2 q·k − ‖q‖² − ‖k‖². Which key would win with the scores 2 q·K_j "
                 "alone, without the −‖K_j‖² term?", "choice", dot_best, options=tuple(keys)),
        ),
        solution=(
            "q − K_j = " + ", ".join(vec(q - K[j]) for j in range(3)),
            f"s = −‖q − K_j‖² = {vec(scores)}",
            f"α = softmax(s) = {vec(weights)}: the nearest key, {near}, wins",
            f"‖q‖² = {num(float(q @ q))} is in every score and cancels in the softmax; "
            f"‖K_j‖² = {vec(k_sq)} does not",
            f"2 q·K_j = {vec(2 * dot_scores(q, K))} → softmax {vec(dot_w)}: {dot_best} wins"
            + (", the same key." if dot_best == near else
               f", not {near}: the length bias −‖K_j‖² decided it."),
        ),
        trace_inputs={"Q": q, "K": K},
        data={"q": q, "K": K},
    )


def make_query_design(rng: np.random.Generator) -> dict:
    from engine.attention import attention  # deferred: loads numba (start-up time)

    picks = [int(x) for x in rng.choice(4, size=3, replace=False)]
    K = np.array([_AXES[i] for i in picks])  # (3, 2) unit keys
    while True:
        V = grid(rng, -2, 2, 1, (3, 2))
        if len({tuple(r) for r in V}) == 3:
            break
    c = float(rng.choice([2.0, 3.0, 4.0]))
    # two perpendicular keys among the three (always there: three of four axes)
    a, b = next((x, y) for x in range(3) for y in range(x + 1, 3) if K[x] @ K[y] == 0)
    design = str(rng.choice(["one", "two"]))
    q = c * K[a] if design == "one" else c * (K[a] + K[b])  # (2,)
    out, w = attention(q[None, :], K, V)  # (1, 2), (1, 3): scaled by 1/√2
    keys = labels("K", 3)
    goal = (f"attend to {keys[a]}" if design == "one"
            else f"share its weight between {keys[a]} and {keys[b]}")
    built = (f"q = {num(c)}·{keys[a]}" if design == "one"
             else f"q = {num(c)}·({keys[a]} + {keys[b]})")
    limits = (f"V{a + 1}", f"(V{a + 1} + V{b + 1}) / 2", "(V1 + V2 + V3) / 3")
    return dict(
        prompt=("Keys (d_k = 2, all of length 1) and values:\n"
                + "\n".join(f"  {keys[j]} = {vec(K[j])},  V{j + 1} = {vec(V[j])}" for j in range(3))
                + f"\nTo {goal}, take {built} = {vec(q)}. Scores are q·K_j / √2."),
        parts=(
            Part("(a) Multiply q by ever larger numbers. What does the output approach?", "choice",
                 limits[0] if design == "one" else limits[1], options=limits),
            Part.vector("(b) For this q: the attention weights over K1, K2, K3?", w[0], tolerance=0.01,
                        value="weights"),
            Part.vector("(c) And the output Σ_j α_j V_j?", out[0], tolerance=0.02, value="context"),
        ),
        solution=(
            f"scores = q · K_j / √2 = {vec(q @ K.T / np.sqrt(2))}",
            f"α = softmax(scores) = {vec(w[0])}",
            f"output = Σ_j α_j V_j = {vec(out[0])}",
            ("Only the chosen key lines up with q; as q grows its weight goes to 1, so the output "
             f"goes to V{a + 1}." if design == "one" else
             f"q lines up equally with {keys[a]} and {keys[b]} (equal scores, since the keys are "
             "perpendicular and of equal length) and points away from the third; as q grows the "
             f"two share the weight equally and the output goes to (V{a + 1} + V{b + 1}) / 2."),
        ),
        trace_inputs={"Q": q, "K": K, "V": V},
        data={"q": q, "K": K, "V": V, "design": design, "a": a, "b": b},
    )

