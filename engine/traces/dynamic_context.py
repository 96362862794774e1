"""Trace ``dynamic-context`` (§4): C_t = Σ_i α_ti H_i for "my feet hurt" → "j' ai mal".

The weights are the notes' (§4). The notes give no hidden states, so by default H_1..H_3 come
from the §1 encoder (W_HX = [I | 0], W_HH = 0.5·I, tanh) run over seeded embeddings; the
optional input ``H`` replaces them with states of the student's own (then d_h and seed are
not used).
"""

from __future__ import annotations

import numpy as np

from engine.pooling import attention_pool
from engine.rnn import rnn_encoder
from engine.softmax import softmax
from engine.trace import Erratum, HeatmapData, InputSpec, Step, Trace, same_as_defaults, source_of
from engine.traces import _draw
from engine.traces._common import Draw, lines, n, sub, v

INPUTS = [
    InputSpec("source", "labels", ["my", "feet", "hurt"], "source words (encoder side)",
              shape=("T",)),
    InputSpec("target", "labels", ["j'", "ai", "mal"], "target words being generated",
              shape=("T_out",)),
    InputSpec("weights", "matrix", [[0.6, 0.3, 0.1], [0.2, 0.1, 0.7], [0.1, 0.8, 0.1]],
              "attention weights α_ti, one row per target word", shape=("T_out", "T"),
              low=0.0, high=1.0),
    InputSpec("d_h", "int", 3, "encoder state size", low=1, high=16),
    InputSpec("seed", "int", 4, "seed for the source embeddings", low=0),
    InputSpec("H", "matrix", None, "encoder states, one row per source word (unset = the §1 "
              "encoder over seeded embeddings; when set, d_h and seed are not used)",
              shape=("T", "d_h"), optional=True),
]


def build(source: list[str], target: list[str], weights: np.ndarray, d_h: int, seed: int,
          H: np.ndarray | None = None) -> Trace:
    T = len(source)
    sums = weights.sum(axis=1)
    bad = [i for i in range(len(target)) if abs(sums[i] - 1.0) > 1e-6]
    if bad:
        raise ValueError(f"input weights: row {bad[0] + 1} ({target[bad[0]]}) sums to "
                         f"{n(sums[bad[0]])}, expected attention weights summing to 1 per row")
    given = H is not None
    if H is not None:
        d_h = H.shape[1]
        steps = [Step(
            "Encoder states",
            f"H₁..H{sub(T)} (given)",
            lines(*(f"H{sub(i + 1)} ({source[i]}) = {v(H[i])}" for i in range(T))),
            {"H": H},
            f"Your encoder states (d_h = {d_h}); the d_h and seed inputs are not used. "
            "Attention keeps all of them, not just the last.",
        )]
    else:
        d_x = d_h + 1
        X = Draw(seed)(T, d_x)  # (T, d_x)
        W_HX = np.eye(d_h, d_x)  # [I | 0], as in §1
        W_HH = 0.5 * np.eye(d_h)
        H = rnn_encoder(X, W_HX, W_HH, np.zeros(d_h))  # (T, d_h)
        steps = [Step(
            "Encoder states",
            "Hᵢ = tanh(W_HX Xᵢ + W_HH Hᵢ₋₁),  W_HX = [I | 0],  W_HH = 0.5·I",
            lines(*(f"H{sub(i + 1)} ({source[i]}) = {v(H[i])}" for i in range(T))),
            {"X": X, "H": H},
            f"The notes name H₁..H{sub(T)} but give no numbers: these come from the §1 encoder "
            f"run over seeded embeddings (seed {seed}). Attention keeps all of them, not just "
            "the last.",
        )]
    inputs = {"source": source, "target": target, "weights": weights, "d_h": d_h, "seed": seed}
    if given:  # an optional input left unset is not listed (the form would send it back)
        inputs["H"] = H

    steps.append(Step(
        "Weights, not scores",
        "αₜᵢ ≥ 0,  Σᵢ αₜᵢ = 1",
        lines(*(f"{w}: " + " + ".join(n(a) for a in weights[t]) + f" = {n(sums[t])}"
                for t, w in enumerate(target))),
        {"row_sums": sums},
        "Each row is a probability distribution over the source words: softmax output.",
    ))

    contexts = np.zeros((len(target), d_h))
    for t, w in enumerate(target):
        contexts[t] = weights[t] @ H  # (d_h,)
        top = int(np.argmax(weights[t]))
        steps.append(Step(
            f"Context for \"{w}\"",
            f"C{sub(t + 1)} = Σᵢ α{sub(t + 1)}ᵢ Hᵢ",
            f"C{sub(t + 1)} = " + " + ".join(f"{n(weights[t, i])}·{v(H[i])}" for i in range(T))
            + f" = {v(contexts[t])}",
            {f"C{sub(t + 1)}": contexts[t]},
            f"Mostly \"{source[top]}\" ({n(weights[t, top])}): a fresh blend for this word, not "
            "the one fixed summary of §2.",
        ))

    with np.errstate(divide="ignore"):
        scores = np.log(weights)  # (T_out, T), −inf where a weight is 0
    shifted = scores - np.max(scores, axis=1, keepdims=True)
    steps.append(Step(
        "Scores behind the weights",
        "sₜᵢ = ln αₜᵢ + const  ⇒  softmax(sₜ) = αₜ",
        lines(*(f"{w}: s = {v(shifted[t])} (largest set to 0)" for t, w in enumerate(target))),
        {"scores": shifted},
        "Softmax ignores a constant added to every score, so these are the scores up to a "
        "shift; any scoring function that produced them gives the same weights.",
    ))

    fused_contexts = np.array([attention_pool(H, weights[t]) for t in range(len(target))])
    trace = Trace(
        name="dynamic-context",
        title="Dynamic context vectors",
        section=4,
        inputs=inputs,
        steps=steps,
        result={"contexts": contexts, "weights": weights},
        fused={"contexts": fused_contexts, "weights": softmax(shifted, axis=1)},
        source="user" if given else source_of(INPUTS, {**inputs, "H": None}, "notes+built"),
        summary="Each target word gets its own context: the encoder states blended with that "
                "word's attention weights. "
                + ("The states are yours." if given else
                   "Weights are the notes'; the states are seeded."),
        heatmaps=[HeatmapData("Attention weights α (rows: target, columns: source)", weights,
                              list(target), list(source))],
    )
    if same_as_defaults(INPUTS, inputs, "weights", "source", "target"):
        trace.errata += [
            Erratum(
                where="§4 worked example",
                printed="\"Scores: H₁ gets 0.6, H₂ gets 0.3, H₃ gets 0.1\" (and likewise for ai, mal)",
                computed="these are attention weights α (each row sums to 1); the scores behind "
                         f"them are ln α up to a constant, e.g. {v(shifted[0], 3)} for j'",
                why="The notes elsewhere insist that scores are raw numbers and weights are their "
                    "softmax; here the softmax outputs are called scores.",
                kind="wording", id="dynamic-scores-are-weights"),
            Erratum(
                where="§4 step 2 vs §11 heatmap table, row \"ai\"",
                printed="§4: ai → [my 0.2, feet 0.1, hurt 0.7]; §11: ai → [my 0.1, feet 0.2, hurt 0.7]",
                computed="the two rows swap the weights of my and feet; this trace uses §4's",
                why="The same example appears twice with different numbers; both rows sum to 1 "
                    "and both put 0.7 on hurt, so only the minor weights disagree.",
                kind="inconsistency", id="ai-row-mismatch"),
        ]
    return trace


def draw_inputs(rng: np.random.Generator) -> dict:
    """Fresh inputs: one-decimal weights (rows sum to 1) and one-decimal encoder states."""
    d_h = int(_draw.choice(rng, [2, 3]))
    return {"source": ["my", "feet", "hurt"], "target": ["j'", "ai", "mal"],
            "weights": np.array([_draw.simplex(rng, 3, 0.1) for _ in range(3)]),
            "d_h": d_h, "seed": 4, "H": _draw.nonzero(rng, -0.9, 0.9, 0.1, (3, d_h))}
