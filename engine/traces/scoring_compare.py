"""Trace ``scoring-compare`` (§8): scaled dot-product vs additive (Bahdanau) scoring.

The notes' example: Q = [1, 0, -1], K = [0, 1, -1], d_k = 3; additive with W_Q = W_K = I and
v = [1, 1, 1]. They get 0.58 and 0.56.
"""

from __future__ import annotations

import math

import numpy as np

from engine.scoring import additive_scores, dot_scores, scaled_dot_scores
from engine.trace import Erratum, InputSpec, Step, Trace, same_as_defaults, source_of
from engine.traces import _draw
from engine.traces._common import dot_terms, n, r
from engine.traces._common import v as show

INPUTS = [
    InputSpec("Q", "vector", [1, 0, -1], "the query", shape=("d_q",)),
    InputSpec("K", "vector", [0, 1, -1], "the key", shape=("d_k",)),
    InputSpec("W_Q", "matrix", [[1, 0, 0], [0, 1, 0], [0, 0, 1]],
              "additive: query projection (h × d_q)", shape=("h", "d_q")),
    InputSpec("W_K", "matrix", [[1, 0, 0], [0, 1, 0], [0, 0, 1]],
              "additive: key projection (h × d_k)", shape=("h", "d_k")),
    InputSpec("v", "vector", [1, 1, 1], "additive: output vector", shape=("h",)),
]

# what the notes print: scaled score, W_Q Q + W_K K, tanh(...), additive score
_PRINTED = {"scaled": 0.58, "sum": [1, 1, -2], "tanh": [0.76, 0.76, -0.96], "additive": 0.56}


def build(Q: np.ndarray, K: np.ndarray, W_Q: np.ndarray, W_K: np.ndarray, v: np.ndarray) -> Trace:
    vv = v
    inputs = {"Q": Q, "K": K, "W_Q": W_Q, "W_K": W_K, "v": vv}
    steps: list[Step] = []
    same_dim = Q.size == K.size
    if same_dim:
        dot = float(Q @ K)
        root = math.sqrt(K.size)
        scaled = dot / root
        steps.append(Step(
            "Dot product",
            "Q·K = Σᵢ QᵢKᵢ",
            f"Q·K = {dot_terms(Q, K)} = {n(dot)}",
            {"dot": dot},
            "No parameters at all: just how well the two vectors line up.",
        ))
        steps.append(Step(
            "Scaled dot product",
            "score = Q·K / √d_k",
            f"score = {n(dot)} / √{K.size} = {n(dot)} / {n(root)} = {n(scaled)}",
            {"scaled": scaled},
            "The Transformer's choice: one dot product and one division.",
        ))
    else:
        scaled = float("nan")
        steps.append(Step(
            "Dot product",
            "Q·K needs d_q = d_k",
            f"d_q = {Q.size}, d_k = {K.size}: no dot product",
            {},
            "With different sizes the dot-product scores are undefined; additive scoring still "
            "works because W_Q and W_K map both into the same h dimensions.",
        ))

    a, b = W_Q @ Q, W_K @ K  # (h,), (h,)
    s = a + b
    steps.append(Step(
        "Project and add",
        "W_Q Q + W_K K",
        f"{show(a)} + {show(b)} = {show(s)}",
        {"W_Q Q": a, "W_K K": b, "sum": s},
        "Both vectors land in the same h-dimensional space before they meet.",
    ))
    th = np.tanh(s)
    steps.append(Step(
        "Squash",
        "tanh(W_Q Q + W_K K)",
        f"tanh({show(s)}) = {show(th)}",
        {"tanh": th},
        "The non-linearity is what lets additive scoring learn interactions a dot product cannot.",
    ))
    additive = float(vv @ th)
    steps.append(Step(
        "Additive score",
        "score = vᵀ tanh(W_Q Q + W_K K)",
        f"score = {dot_terms(vv, th)} = {n(additive)}",
        {"additive": additive},
        "Three parameter sets (W_Q, W_K, v) where the scaled dot product has none.",
    ))
    steps.append(Step(
        "Compare",
        "scaled vs additive",
        f"{n(scaled, 4)} vs {n(additive, 4)}" if same_dim else f"additive only: {n(additive, 4)}",
        {"difference": scaled - additive} if same_dim else {},
        "Close here only because W_Q = W_K = I and v = 1 make additive scoring behave like a "
        "squashed sum; learned matrices pull them apart." if same_dim else
        "Only additive (or a bilinear Qᵀ M K) scoring can compare vectors of different sizes.",
    ))

    result = {"additive": additive}
    fused = {"additive": float(additive_scores(Q, K[None, :], W_Q, W_K, vv)[0])}
    if same_dim:
        result.update(dot=dot, scaled=scaled)
        fused.update(dot=float(dot_scores(Q, K[None, :])[0]),
                     scaled=float(scaled_dot_scores(Q, K[None, :])[0]))
    trace = Trace(
        name="scoring-compare",
        title="Scaled dot vs additive",
        section=8,
        inputs=inputs,
        steps=steps,
        result=result,
        fused=fused,
        source=source_of(INPUTS, inputs, "notes"),
        summary="One query and one key scored two ways: Vaswani's Q·K/√d_k and Bahdanau's "
                "vᵀ tanh(W_Q Q + W_K K).",
    )
    if same_as_defaults(INPUTS, inputs):
        computed = {"scaled": r(scaled, 2), "sum": s, "tanh": r(th, 2), "additive": r(additive, 2)}
        for key, printed in _PRINTED.items():
            if not np.allclose(np.asarray(printed, float), computed[key]):
                trace.errata.append(Erratum(
                    where=f"§8 worked example ({key})", printed=show(printed, 2),
                    computed=show(computed[key], 2), why="Recomputed from the notes' inputs.",
                    kind="arithmetic", id="scoring-compare-printed-values"))
        steps[-1].note += " Every number the notes print here checks out."
    return trace


def draw_inputs(rng: np.random.Generator) -> dict:
    """Fresh inputs: small-integer vectors of width 2 or 3, identity or half-step projections."""
    d = int(_draw.choice(rng, [2, 3, 3]))
    eye = np.eye(d)
    W_Q = eye if rng.random() < 0.3 else _draw.nonzero(rng, -1, 1, 0.5, (d, d))
    W_K = eye if rng.random() < 0.3 else _draw.nonzero(rng, -1, 1, 0.5, (d, d))
    return {"Q": _draw.nonzero(rng, -1, 2, 1, d), "K": _draw.nonzero(rng, -1, 2, 1, d),
            "W_Q": W_Q, "W_K": W_K, "v": _draw.nonzero(rng, -1, 1, 0.5, d)}
