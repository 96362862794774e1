"""Trace ``nucleus`` (§10): top-p, the smallest set of most probable words with mass ≥ p.

Defaults: the notes' distribution (0.4, 0.3, 0.2, 0.1) and their example threshold 0.9. The
word whose probability carries the running total across p is kept (Holtzman et al. 2020,
Hugging Face); a prefix mass within 1e-10 of p counts as reaching it, so floating-point
rounding (0.4 + 0.3 + 0.2 = 0.8999999999999999) cannot add a word.
"""

from __future__ import annotations

import numpy as np

from engine.decoding import TOP_P_EPS, filtered_probs, sample_token
from engine.trace import HeatmapData, InputSpec, Step, Trace, source_of
from engine.traces import _draw
from engine.traces._common import lines, n
from engine.traces.top_k import check_distribution, draw

INPUTS = [
    InputSpec("words", "labels", ["the", "a", "an", "some"], "the vocabulary", shape=("V",)),
    InputSpec("probs", "vector", [0.4, 0.3, 0.2, 0.1], "the model's next-word probabilities",
              shape=("V",), low=0.0, high=1.0),
    InputSpec("p", "scalar", 0.9, "the threshold p", low=0.0, high=1.0, low_open=True),
    InputSpec("seed", "int", 10, "seed for the draw", low=0),
]


def build(words: list[str], probs: np.ndarray, p: float, seed: int) -> Trace:
    inputs = {"words": words, "probs": probs, "p": p, "seed": seed}
    check_distribution(probs)
    V = probs.size
    order = sorted(range(V), key=lambda i: (-probs[i], i))
    keep = np.zeros(V, bool)
    rows, before = [], 0.0
    for i in order:
        inside = before < p - TOP_P_EPS  # the mass before this word has not reached p yet
        keep[i] = inside or not keep.any()
        after = before + probs[i]
        rows.append(f"{words[i]:<8} P = {n(probs[i])}  mass before = {n(before)}  after = "
                    f"{n(after)}  {'kept' if keep[i] else 'cut'}")
        before = after
    steps = [Step(
        "Accumulate from the top",
        "keep w while Σ (P of the words ranked above w) < p",
        lines(f"p = {n(p)}", *rows),
        {"kept": [words[i] for i in order if keep[i]]},
        "The word that carries the total across p is kept; the first word is always kept.",
    )]
    exact = float(np.sum(probs[keep]))
    steps.append(Step(
        "The nucleus",
        "V⁽ᵖ⁾ = smallest top set with Σ P ≥ p",
        f"{{{', '.join(words[i] for i in order if keep[i])}}}, mass {n(exact)}",
        {"nucleus_size": int(keep.sum()), "nucleus_mass": exact},
        "A peaked distribution gives a small nucleus, a flat one a large nucleus: the pool "
        "adapts, where top-k always keeps k.",
    ))
    renorm = np.where(keep, probs / exact, 0.0)
    steps.append(Step(
        "Renormalise",
        "P′(w) = P(w) / Σ_nucleus P",
        lines(*(f"P′({words[i]}) = {n(renorm[i])}" for i in order if keep[i])),
        {"probs_top_p": renorm},
        "Only the nucleus can be sampled.",
    ))
    u, pick = draw(renorm, seed)
    steps.append(Step(
        "Sample",
        "u ~ U[0, 1) → first w with cumulative P′ > u",
        f"u = {n(u)} (seed {seed}) → {words[pick]}",
        {"u": u, "sample": words[pick]},
        "Same inverse-CDF draw as top-k; only the candidate pool differs.",
    ))
    cums = np.cumsum(probs[order])
    boundary = [k for k in range(V - 1) if abs(cums[k] - p) <= 1e-9]
    if boundary:
        k = boundary[0]
        steps[0].note += (f" Here the top {k + 1} words sum to exactly p = {n(p)}: \"reach p\" "
                          f"keeps {k + 1} words, whereas reading \"exceeds p\" strictly (as the "
                          f"notes phrase it) would keep {k + 2}.")
    logp = np.log(np.where(probs > 0, probs, 1e-300))
    return Trace(
        name="nucleus",
        title="Nucleus (top-p) filtering",
        section=10,
        inputs=inputs,
        steps=steps,
        result={"probs_top_p": renorm, "sample": words[pick]},
        fused={"probs_top_p": filtered_probs(logp, top_p=p),
               "sample": words[int(sample_token(logp, seed, top_p=p))]},
        source=source_of(INPUTS, inputs, "notes"),
        summary=f"Nucleus sampling with p = {n(p)}: the smallest set of top words whose "
                "probability reaches p, renormalised, then one draw.",
        heatmaps=[HeatmapData("Before and after top-p", np.vstack([probs, renorm]),
                              ["P", f"top-p {n(p)}"], list(words))],
    )


def draw_inputs(rng: np.random.Generator) -> dict:
    """Fresh inputs: 4-5 probabilities in steps of 0.05 and a one-decimal threshold p."""
    V = int(rng.integers(4, 6))
    return {"words": ["the", "a", "an", "some", "this"][:V], "probs": _draw.simplex(rng, V, 0.05),
            "p": float(_draw.grid(rng, 0.5, 0.9, 0.1)), "seed": _draw.seed(rng)}
