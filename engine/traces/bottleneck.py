"""Trace ``bottleneck`` (§2): how much each word of a review still shows in C = H_T.

The notes' review ("The screen flickers, …, not recommended.") squeezed into a context of
dimension 8. They give no weights, so the RNN is a seeded example. The influence of word i
on C is the size of the Jacobian ‖∂C/∂X_i‖ (Frobenius norm), computed by the chain rule

    ∂H_t/∂H_{t-1} = diag(1 − H_t²) W_HH,   ∂H_i/∂X_i = diag(1 − H_i²) W_HX

and checked against central finite differences through the engine's encoder.
"""

from __future__ import annotations

import numpy as np

from engine.rnn import rnn_encoder
from engine.trace import Erratum, InputSpec, Step, Trace, same_as_defaults, source_of
from engine.traces import _draw
from engine.traces._common import lines, n, sub, v

# The notes' review, clause by clause: complaints, praise, verdict.
_CLAUSES = dict(
    complaints="The screen flickers, battery drains fast,",
    praise="however it is good, very fast,",
    verdict="but very disappointed, not recommended.",
)
REVIEW = " ".join(_CLAUSES.values())
_WORDS = [w.strip(",.") for w in REVIEW.split()]

INPUTS = [
    InputSpec("review", "labels", _WORDS, "the review, one word per token"),
    InputSpec("d_h", "int", 8, "size of the context vector (the notes' example uses 8)", low=1,
              high=64),
    InputSpec("d_x", "int", 4, "embedding size of each word", low=1, high=64),
    InputSpec("seed", "int", 14, "seed for the embeddings and the RNN weights", low=0),
]

EPS = 1e-6  # finite-difference step


def _weights(seed: int, words: list[str], d_x: int, d_h: int):
    rng = np.random.default_rng(seed)
    vocab = sorted(set(w.lower() for w in words))
    table = rng.normal(0.0, 0.5, size=(len(vocab), d_x))  # one embedding per distinct word
    X = np.array([table[vocab.index(w.lower())] for w in words])  # (T, d_x)
    W_HX = rng.normal(0.0, 1.0 / np.sqrt(d_x), size=(d_h, d_x))  # (d_h, d_x)
    Q, _ = np.linalg.qr(rng.normal(size=(d_h, d_h)))
    W_HH = 0.9 * Q  # (d_h, d_h): an orthogonal matrix scaled so memory fades slowly
    b = np.zeros(d_h)
    return X, W_HX, W_HH, b


def _jacobian_norms(H: np.ndarray, W_HX: np.ndarray, W_HH: np.ndarray) -> np.ndarray:
    """‖∂H_T/∂X_i‖_F for every i, by the chain rule walking back from T."""
    T = H.shape[0]
    out = np.zeros(T)
    back = np.eye(H.shape[1])  # ∂H_T/∂H_t, starting at t = T
    for t in range(T - 1, -1, -1):
        local = (1.0 - H[t] ** 2)[:, None]  # diag(1 − H_t²)
        out[t] = np.linalg.norm(back @ (local * W_HX))
        back = back @ (local * W_HH)
    return out


def _first_word_reach(H: np.ndarray, W_HX: np.ndarray, W_HH: np.ndarray) -> np.ndarray:
    """‖∂H_t/∂X_1‖_F for t = 1..T: how much of word 1 each later state still carries."""
    J = (1.0 - H[0] ** 2)[:, None] * W_HX  # ∂H_1/∂X_1
    out = [np.linalg.norm(J)]
    for t in range(1, H.shape[0]):
        J = ((1.0 - H[t] ** 2)[:, None] * W_HH) @ J
        out.append(np.linalg.norm(J))
    return np.array(out)


def _finite_difference(X, W_HX, W_HH, b) -> np.ndarray:
    T, d_x = X.shape
    out = np.zeros(T)
    for i in range(T):
        cols = []
        for k in range(d_x):
            up, down = X.copy(), X.copy()
            up[i, k] += EPS
            down[i, k] -= EPS
            cols.append((rnn_encoder(up, W_HX, W_HH, b)[-1] - rnn_encoder(down, W_HX, W_HH, b)[-1])
                        / (2 * EPS))
        out[i] = np.linalg.norm(np.array(cols))
    return out


def build(review: list[str], d_h: int, d_x: int, seed: int) -> Trace:
    inputs = {"review": review, "d_h": d_h, "d_x": d_x, "seed": seed}
    T = len(review)
    X, W_HX, W_HH, b = _weights(seed, review, d_x, d_h)
    steps = [Step(
        "Count what goes in",
        "T words × d_x numbers → d_h numbers",
        f"T = {T} words, {T} × {d_x} = {T * d_x} input numbers → C ∈ ℝ^{d_h}",
        {"T": T, "input_numbers": T * d_x, "d_h": d_h},
        f"The context has {d_h} slots whether the review has 4 words or 400.",
    )]

    H = np.zeros((T, d_h))
    h = np.zeros(d_h)
    for t in range(T):
        h = np.tanh(W_HX @ X[t] + W_HH @ h + b)
        H[t] = h
    C = H[-1]
    steps.append(Step(
        "Encode the review",
        "Hₜ = tanh(W_HX Xₜ + W_HH Hₜ₋₁ + b),  C = H_T",
        lines(f"H{sub(1)} = {v(H[0], 3)}", "…", f"C = H{sub(T)} = {v(C, 3)}"),
        {"C": C},
        f"Seeded embeddings (one per distinct word, so repeated words share one) and weights "
        f"(seed {seed}); W_HH is 0.9 times an orthogonal matrix, a memory that fades slowly.",
    ))

    reach = _first_word_reach(H, W_HX, W_HH)
    steps.append(Step(
        f"How much of \"{review[0]}\" survives",
        "‖∂Hₜ/∂X₁‖ with ∂Hₜ/∂Hₜ₋₁ = diag(1 − Hₜ²) W_HH",
        lines(*(f"t = {t + 1:>2} ({review[t]}): {n(reach[t])}" for t in range(T))),
        {"reach_of_first_word": reach},
        f"Each step multiplies by a factor smaller than one; after {T} words the first word "
        f"moves C about {reach[0] / max(reach[-1], 1e-300):.3g} times less than it moved H₁.",
    ))

    influence = _jacobian_norms(H, W_HX, W_HH)
    share = influence / influence.sum()
    top = np.argsort(-share)[:3]
    steps.append(Step(
        "Which words C remembers",
        "influenceᵢ = ‖∂C/∂Xᵢ‖,  shareᵢ = influenceᵢ / Σⱼ influenceⱼ",
        lines(*(f"{i + 1:>2}. {review[i]:<14} {n(share[i], 3)}" for i in range(T))),
        {"influence": influence, "share": share},
        "The last few words dominate: " + ", ".join(f"\"{review[i]}\"" for i in top)
        + ". Nothing in the encoder says which words matter; recency decides.",
    ))

    steps.append(Step(
        "First vs last word",
        "share₁ / share_T",
        # three significant digits: with three decimals the first share shows as 0.001 and
        # "0.001 / 0.307 = 0.004" does not check out by hand
        f"{share[0]:.3g} / {share[-1]:.3g} = {share[0] / share[-1]:.3g}",
        {"first_over_last": share[0] / share[-1]},
        f"The first word's share is {share[0] / share[-1]:.2g} of the last one's: whatever "
        "the early words said weighs far less in C than the closing words.",
    ))

    fused_C = rnn_encoder(X, W_HX, W_HH, b)[-1]
    trace = Trace(
        name="bottleneck",
        title="The fixed-context bottleneck",
        section=2,
        inputs=inputs,
        steps=steps,
        result={"T": T, "C": C, "influence": influence},
        fused={"T": T, "C": fused_C, "influence": _finite_difference(X, W_HX, W_HH, b)},
        tolerances={"influence": (1e-5, 1e-9)},
        source=source_of(INPUTS, inputs, "notes+built"),
        summary=f"A {T}-word review pushed through a tanh RNN into a {d_h}-number context, and "
                "how strongly each word still shows in it. The review and the size 8 are the "
                "notes'; the RNN is a seeded example.",
    )
    if same_as_defaults(INPUTS, inputs, "review"):
        trace.errata.append(Erratum(
            where="§2 worked example (sentiment bottleneck)",
            printed="\"This review has 19 words\" (and later \"all 19 words\")",
            computed=f"{T} words",
            why="Counting the review word by word gives 17; commas and the full stop are not "
                "words, and no split of a hyphen or contraction adds two.",
            kind="miscount", id="review-word-count",
        ))
    return trace


def draw_inputs(rng: np.random.Generator) -> dict:
    """Fresh inputs: the review (or its first words), a small context and a weight seed."""
    T = int(rng.integers(5, len(_WORDS) + 1))
    return {"review": _WORDS[:T], "d_h": int(_draw.choice(rng, [2, 3, 4, 8])),
            "d_x": int(_draw.choice(rng, [2, 3, 4])), "seed": _draw.seed(rng)}
