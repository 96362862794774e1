"""Trace ``temperature`` (§10): softmax(z / T) sharpens below T = 1 and flattens above it.

Defaults: logits z = ln P of the notes' distribution (0.4, 0.3, 0.2, 0.1), so T = 1 gives it
back exactly; T = 0.5 and T = 2 on either side.
"""

from __future__ import annotations

import math

import numpy as np

from engine.decoding import apply_temperature
from engine.softmax import softmax
from engine.trace import HeatmapData, InputSpec, Step, Trace, source_of
from engine.traces import _draw
from engine.traces._common import lines, n, v

INPUTS = [
    InputSpec("words", "labels", ["the", "a", "an", "some"], "the vocabulary", shape=("V",)),
    InputSpec("logits", "vector", [math.log(0.4), math.log(0.3), math.log(0.2), math.log(0.1)],
              "the model's scores z (default: ln of the notes' probabilities)", shape=("V",)),
    InputSpec("temperatures", "vector", [0.5, 1.0, 2.0], "temperatures T to compare", low=1e-3,
              high=1e3),
]


def build(words: list[str], logits: np.ndarray, temperatures: np.ndarray) -> Trace:
    inputs = {"words": words, "logits": logits, "temperatures": temperatures}
    steps = [Step(
        "The scores",
        "z_w (logits); P = softmax(z)",
        lines(f"z = {v(logits)}", f"softmax(z) = {v(softmax(logits))}"),
        {"logits": logits},
        "Temperature acts on the scores before the softmax, not on the probabilities.",
    )]
    table = np.zeros((temperatures.size, logits.size))
    for r, T in enumerate(temperatures):
        scaled = logits / T
        e = np.exp(scaled - scaled.max())
        P = e / e.sum()
        table[r] = P
        ent = float(-(P[P > 0] * np.log2(P[P > 0])).sum())
        steps.append(Step(
            f"T = {n(T)}",
            "P_T(w) = e^(z_w / T) / Σ_v e^(z_v / T)",
            lines(f"z / T = {v(scaled)}",
                  *(f"P({w}) = {n(P[i])}" for i, w in enumerate(words)),
                  f"largest = {n(P.max())} ({words[int(np.argmax(P))]}), entropy = {n(ent, 3)} bits"),
            {f"P_T={n(T)}": P, "entropy_bits": ent},
            "T < 1 stretches the gaps between scores: the favourite grows, the tail shrinks."
            if T < 1 else "T = 1 leaves the distribution as the model made it." if T == 1 else
            "T > 1 shrinks the gaps: the distribution flattens towards uniform.",
        ))
    steps.append(Step(
        "The limits",
        "T → 0: argmax (greedy);  T → ∞: uniform 1/V",
        f"greedy pick: {words[int(np.argmax(logits))]}; uniform: {n(1 / logits.size)} each",
        {},
        "The ranking of the words never changes with T; only how sure the model sounds.",
    ))
    return Trace(
        name="temperature",
        title="Temperature",
        section=10,
        inputs=inputs,
        steps=steps,
        result={"probs": table},
        fused={"probs": np.array([softmax(apply_temperature(logits, T)) for T in temperatures])},
        source=source_of(INPUTS, inputs, "notes"),
        summary="The same scores pushed through softmax at several temperatures.",
        heatmaps=[HeatmapData("softmax(z / T), one row per T", table,
                              [f"T={n(T)}" for T in temperatures], list(words))],
    )


def draw_inputs(rng: np.random.Generator) -> dict:
    """Fresh inputs: 3-4 half-step logits and one or two temperatures other than 1."""
    V = int(_draw.choice(rng, [3, 4]))
    temps = sorted(rng.choice([0.5, 2.0, 0.25, 4.0, 1.5], size=int(rng.integers(1, 3)),
                              replace=False).tolist())
    return {"words": ["the", "a", "an", "some"][:V], "logits": _draw.nonzero(rng, -1, 2, 0.5, V),
            "temperatures": [float(t) for t in temps]}
