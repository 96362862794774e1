"""Trace ``pooling`` (§9): max, average and attention pooling of [2, 8, 3, 100, 4].

The notes' readings, and their attention weights (0.2, 0.35, 0.3, 0.05, 0.1).
"""

from __future__ import annotations

import numpy as np

from engine.pooling import attention_pool, max_pool, mean_pool
from engine.softmax import softmax
from engine.trace import Erratum, HeatmapData, InputSpec, Step, Trace, same_as_defaults, source_of
from engine.traces import _draw
from engine.traces._common import lines, n, p, v

INPUTS = [
    InputSpec("values", "vector", [2, 8, 3, 100, 4], "the readings to pool", shape=("n",)),
    InputSpec("weights", "vector", [0.2, 0.35, 0.3, 0.05, 0.1],
              "attention weights α (non-negative, summing to 1)", shape=("n",), low=0.0,
              high=1.0),
]

_PRINTED = {"max": 100.0, "mean": 23.4, "attention": 9.5}


def build(values: np.ndarray, weights: np.ndarray) -> Trace:
    inputs = {"values": values, "weights": weights}
    if abs(weights.sum() - 1.0) > 1e-6:
        raise ValueError(f"input weights: they sum to {n(weights.sum())}, expected attention "
                         "weights summing to 1")
    m = values.size
    labels = [n(x) for x in values]
    k = int(np.argmax(values))
    mx = float(values[k])
    steps = [Step(
        "Max pooling",
        "out = maxᵢ Vᵢ  (weights one-hot at the argmax)",
        f"max({', '.join(labels)}) = {n(mx)}",
        {"max": mx},
        f"One reading decides everything; the other {m - 1} are thrown away.",
    )]
    mean = float(values.sum() / m)
    steps.append(Step(
        "Average pooling",
        "out = (1/n) Σᵢ Vᵢ  (weights 1/n)",
        f"({' + '.join(labels)}) / {m} = {n(values.sum())} / {m} = {n(mean)}",
        {"mean": mean},
        "Everyone counts the same, so one extreme reading drags the result with it.",
    ))
    terms = weights * values
    att = float(terms.sum())
    steps.append(Step(
        "Attention pooling",
        "out = Σᵢ αᵢ Vᵢ,  αᵢ ≥ 0, Σ αᵢ = 1",
        lines(" + ".join(f"{n(a)}·{p(x)}" for a, x in zip(weights, values)),
              "= " + " + ".join(n(t) for t in terms) + f" = {n(att)}"),
        {"attention": att, "terms": terms},
        "A convex combination: the result always lies between the smallest and largest reading.",
    ))

    contrib = terms / att if att else np.zeros(m)
    rest = np.delete(values, k)
    steps.append(Step(
        "Who contributed what",
        "shareᵢ = αᵢ·Vᵢ / Σⱼ αⱼ·Vⱼ",
        lines(*(f"{labels[i]:>6}: α = {n(weights[i])}, contributes {n(terms[i])} "
                f"({n(100 * contrib[i], 1)}%)" for i in range(m)),
              f"without the largest reading: mean {n(rest.mean())}, median {n(np.median(rest))}"),
        {"share": contrib},
        (f"Small as its weight is, the reading {labels[k]} still supplies "
         if weights[k] < 1 / m else f"The largest reading, {labels[k]}, supplies ")
        + f"{n(100 * contrib[k], 1)}% of the output.",
    ))

    with np.errstate(divide="ignore"):
        scores = np.log(weights) - np.log(weights).max()
    steps.append(Step(
        "Scores that give these weights",
        "sᵢ = ln αᵢ + const",
        f"s = {v(scores, 3)}",
        {"scores": scores},
        "A query-key scorer that produced these scores would give exactly these weights; "
        "learning such a scorer is what attention pooling adds over max and mean.",
    ))

    trace = Trace(
        name="pooling",
        title="Max, mean and attention pooling",
        section=9,
        inputs=inputs,
        steps=steps,
        result={"max": mx, "mean": mean, "attention": att, "weights": weights},
        fused={"max": float(max_pool(values)), "mean": float(mean_pool(values)),
               "attention": float(attention_pool(values, weights)), "weights": softmax(scores)},
        source=source_of(INPUTS, inputs, "notes"),
        summary="Three ways to squeeze five readings into one number, one of them with a spike.",
        heatmaps=[HeatmapData("Attention-pooling weights", weights[None, :], ["α"], labels)],
    )
    if same_as_defaults(INPUTS, inputs):
        got = {"max": mx, "mean": mean, "attention": att}
        for key, printed in _PRINTED.items():
            if abs(printed - got[key]) > 0.005:
                trace.errata.append(Erratum(f"§9 worked example ({key})", n(printed), n(got[key]),
                                            "Recomputed from the notes' inputs.", "arithmetic",
                                            id="pooling-printed-values"))
        trace.errata.append(Erratum(
            where="§9 worked example, sense-check",
            printed="the sense-check calls 9.50 close to the central tendency of the four "
                    "ordinary readings (2, 8, 3, 4)",
            computed=f"mean of (2, 8, 3, 4) = {n(rest.mean())}, median {n(np.median(rest))}; "
                     f"9.5 is {n(att / rest.mean(), 2)} times the mean, and the 5% weight on the "
                     f"spike alone contributes {n(terms[k])} ({n(100 * contrib[k], 1)}% of 9.5)",
            why="The arithmetic (9.50) is right, but the claim is not: the spike's small weight "
                "is multiplied by a huge value, so it still supplies over half of the output.",
            kind="claim", id="pooling-sense-check"))
    return trace


def draw_inputs(rng: np.random.Generator) -> dict:
    """Fresh inputs: 4-5 small readings, often one spike, weights in steps of 0.05."""
    m = int(rng.integers(4, 6))
    values = _draw.grid(rng, 1, 12, 1, m)
    if rng.random() < 0.6:
        values[int(rng.integers(m))] = float(_draw.choice(rng, [40, 50, 80, 100]))
    return {"values": values, "weights": _draw.simplex(rng, m, 0.05)}
