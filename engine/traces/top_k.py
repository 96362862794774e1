"""Trace ``top-k`` (§10): keep the k most probable words, renormalise, draw one.

Defaults: the notes' step-t distribution P(the, a, an, some) = (0.4, 0.3, 0.2, 0.1), k = 2.
Ties with the k-th probability are kept (Hugging Face's rule). The draw is seeded inverse-CDF
sampling, as the decoding engine does it.
"""

from __future__ import annotations

import numpy as np

from engine.decoding import filtered_probs, sample_token
from engine.trace import Erratum, HeatmapData, InputSpec, Step, Trace, same_as_defaults, source_of
from engine.traces import _draw
from engine.traces._common import lines, n, ordinal

INPUTS = [
    InputSpec("words", "labels", ["the", "a", "an", "some"], "the vocabulary", shape=("V",)),
    InputSpec("probs", "vector", [0.4, 0.3, 0.2, 0.1], "the model's next-word probabilities",
              shape=("V",), low=0.0, high=1.0),
    InputSpec("k", "int", 2, "how many of the most probable words to keep", low=1),
    InputSpec("seed", "int", 10, "seed for the draw", low=0),
]


def check_distribution(probs: np.ndarray) -> None:
    if abs(probs.sum() - 1.0) > 1e-6:
        raise ValueError(f"input probs: sums to {n(probs.sum())}, expected probabilities summing to 1")


def draw(kept: np.ndarray, seed: int) -> tuple[float, int]:
    """u ~ U[0, 1) from ``default_rng(seed)``; the first token whose cumulative mass exceeds u."""
    u = float(np.random.default_rng(seed).random())
    cdf = np.cumsum(kept)
    return u, min(int(np.searchsorted(cdf, u, side="right")), len(kept) - 1)


def build(words: list[str], probs: np.ndarray, k: int, seed: int) -> Trace:
    inputs = {"words": words, "probs": probs, "k": k, "seed": seed}
    check_distribution(probs)
    V = probs.size
    order = sorted(range(V), key=lambda i: (-probs[i], i))
    kk = min(k, V)
    threshold = probs[order[kk - 1]]
    steps = [Step(
        "Rank the words",
        "sort P(w) from largest to smallest",
        lines(*(f"{r + 1}. {words[i]:<8} {n(probs[i])}" for r, i in enumerate(order))),
        {"ranking": [words[i] for i in order]},
        "Top-k looks only at the ranking, not at how the probability is spread.",
    )]

    keep = probs >= threshold  # ties with the k-th value are kept
    steps.append(Step(
        f"Keep the top {k}",
        "keep w  ⇔  P(w) ≥ P(k-th best)",
        lines(f"k-th best probability = {n(threshold)}",
              "kept: " + ", ".join(words[i] for i in order if keep[i]),
              "dropped: " + (", ".join(words[i] for i in order if not keep[i]) or "none")),
        {"kept": [words[i] for i in range(V) if keep[i]]},
        "A word tied with the k-th is kept too, so more than k words can survive."
        if keep.sum() > kk else f"Everything below the {ordinal(kk)} word is cut, however close it was.",
    ))

    mass = float(probs[keep].sum())
    renorm = np.where(keep, probs / mass, 0.0)
    steps.append(Step(
        "Renormalise",
        "P′(w) = P(w) / Σ_kept P",
        lines(f"kept mass = {n(mass)}",
              *(f"P′({words[i]}) = {n(probs[i])} / {n(mass)} = {n(renorm[i])}"
                for i in order if keep[i])),
        {"probs_top_k": renorm},
        "The survivors share the whole probability again, in the same proportions.",
    ))

    u, pick = draw(renorm, seed)
    steps.append(Step(
        "Sample",
        "u ~ U[0, 1);  pick the first w with Σ_{w′ ≤ w} P′(w′) > u",
        lines("cumulative P′ (vocabulary order) = " + ", ".join(
                  f"{words[i]} {n(c)}" for i, c in enumerate(np.cumsum(renorm))),
              f"u = {n(u)} (seed {seed}) → {words[pick]}"),
        {"u": u, "sample": words[pick]},
        "Sampling, unlike beam search, follows one sequence and picks each word at random "
        "from the kept few; a different seed can give a different word.",
    ))

    logp = np.log(np.where(probs > 0, probs, 1e-300))
    trace = Trace(
        name="top-k",
        title="Top-k filtering",
        section=10,
        inputs=inputs,
        steps=steps,
        result={"probs_top_k": renorm, "sample": words[pick]},
        fused={"probs_top_k": filtered_probs(logp, top_k=k),
               "sample": words[int(sample_token(logp, seed, top_k=k))]},
        source=source_of(INPUTS, inputs, "notes"),
        summary=f"Top-k sampling with k = {k}: keep the {k} most probable words, renormalise, draw.",
        heatmaps=[HeatmapData("Before and after top-k", np.vstack([probs, renorm]),
                              ["P", f"top-{k}"], list(words))],
    )
    if same_as_defaults(INPUTS, inputs, "words", "probs"):
        trace.errata.append(Erratum(
            where="§10 \"Top-K Sampling\"",
            printed="the section on top-K sampling keeps K partial hypotheses alive and says "
                    "that is beam search with width K",
            computed="top-k sampling keeps one sequence and draws one word from the k best "
                     "(renormalised); beam search keeps K sequences and ranks them by Σ log P",
            why="The section describes beam search under the name top-K sampling; the notes' own "
                "pitfall list later says the two are different mechanisms.",
            kind="inconsistency", id="topk-is-beam"))
    return trace


def draw_inputs(rng: np.random.Generator) -> dict:
    """Fresh inputs: 4-5 probabilities on a 0.1 or 0.05 grid (ties happen), k below V."""
    V = int(rng.integers(4, 6))
    return {"words": ["the", "a", "an", "some", "this"][:V],
            "probs": _draw.simplex(rng, V, 0.1 if V == 4 else 0.05),
            "k": int(rng.integers(1, V)), "seed": _draw.seed(rng)}
