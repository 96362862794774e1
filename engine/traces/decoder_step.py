"""Trace ``decoder-step`` (§1): one step of the fixed-context decoder, then softmax(W_O H).

The notes give the formula but no numbers, so the weights are a small seeded example; the
context C defaults to the value the notes print for "cat sat mat" ([0.10, 0.13, 0.36]).
"""

from __future__ import annotations

import numpy as np

from engine.rnn import decoder_step
from engine.softmax import softmax
from engine.trace import InputSpec, Step, Trace, source_of
from engine.traces import _draw
from engine.traces._common import Draw, lines, n, one_hot, p, v, word_index

INPUTS = [
    InputSpec("C", "vector", [0.10, 0.13, 0.36], "context vector from the encoder (the notes' C)",
              shape=("d_h",)),
    InputSpec("H_prev", "vector", [0.0, 0.0, 0.0], "previous decoder state H_{t-1}",
              shape=("d_h",)),
    InputSpec("vocab", "labels", ["le", "chat", "assis", "<eos>"],
              "the words the decoder can output (it can also read <start>)"),
    InputSpec("prev", "word", "<start>", "the previous output token Y_{t-1}"),
    InputSpec("seed", "int", 14, "seed for the decoder's weights", low=0),
]


def build(C: np.ndarray, H_prev: np.ndarray, vocab: list[str], prev: str, seed: int) -> Trace:
    inputs = {"C": C, "H_prev": H_prev, "vocab": vocab, "prev": prev, "seed": seed}
    d_h, V = C.size, len(vocab)
    readable = ["<start>"] + [w for w in vocab if w != "<start>"]  # what Y_{t-1} may be
    y = one_hot(word_index(prev, readable, "prev"), len(readable))  # (V_in,)
    draw = Draw(seed)
    W_HH = draw(d_h, d_h)  # (d_h, d_h)
    W_HY = draw(d_h, len(readable))  # (d_h, V_in)
    W_HC = draw(d_h, d_h)  # (d_h, d_h)
    b = draw(d_h, scale=0.1)  # (d_h,)
    W_O = draw(V, d_h, scale=1.0)  # (V, d_h)

    steps = [Step(
        "The decoder's weights",
        "W_HH⁽ᵈ⁾ ∈ ℝ^(d_h×d_h), W_HY ∈ ℝ^(d_h×d_y), W_HC ∈ ℝ^(d_h×d_h), W_O ∈ ℝ^(V×d_h)",
        lines(f"d_h = {d_h}; outputs V = {V} ({', '.join(vocab)})",
              f"inputs d_y = {len(readable)} ({', '.join(readable)})",
              f"Yₜ₋₁ = one-hot(\"{prev}\") = {v(y)}"),
        {"W_HH": W_HH, "W_HY": W_HY, "W_HC": W_HC, "b": b, "W_O": W_O, "Y_prev": y},
        f"Seeded random weights (seed {seed}), rounded to one decimal so you can redo the step "
        "by hand. The decoder has its own parameters, separate from the encoder's.",
    )]

    a = W_HH @ H_prev  # (d_h,)
    c = W_HY @ y  # (d_h,)
    e = W_HC @ C  # (d_h,)
    steps.append(Step(
        "The three inputs of the new state",
        "W_HH⁽ᵈ⁾ Hₜ₋₁⁽ᵈ⁾,  W_HY Yₜ₋₁,  W_HC C",
        lines(f"W_HH H_prev = {v(a)}",
              f"W_HY Y_prev = {v(c)}   (a one-hot picks column {int(np.argmax(y)) + 1} of W_HY)",
              f"W_HC C = {v(e)}"),
        {"W_HH H_prev": a, "W_HY Y_prev": c, "W_HC C": e},
        "Memory of what was generated, the last token, and the fixed summary of the source.",
    ))

    pre = a + c + e + b
    h = np.tanh(pre)
    steps.append(Step(
        "New decoder state",
        "Hₜ⁽ᵈ⁾ = tanh(W_HH⁽ᵈ⁾ Hₜ₋₁⁽ᵈ⁾ + W_HY Yₜ₋₁ + W_HC C + b⁽ᵈ⁾)",
        f"H = tanh({v(a)} + {v(c)} + {v(e)} + {v(b)}) = tanh({v(pre)}) = {v(h)}",
        {"pre-activation": pre, "H": h},
        "The same C enters at every step; only H and the previous token change.",
    ))

    logits = W_O @ h  # (V,)
    steps.append(Step(
        "Logits",
        "z = W_O Hₜ⁽ᵈ⁾",
        lines(*(f"z[{w}] = {v(W_O[i])}·{v(h)} = {n(logits[i])}" for i, w in enumerate(vocab))),
        {"logits": logits},
        "One raw score per vocabulary word: W_O maps the hidden size up to the vocabulary size.",
    ))

    probs = softmax(logits)
    best = int(np.argmax(probs))
    steps.append(Step(
        "Output distribution",
        "P(Yₜ | Y_<t, C) = softmax(z)",
        lines(f"Σ e^z = {n(np.exp(logits).sum())}",
              *(f"P({w}) = e^{p(logits[i])} / Σ = {n(probs[i])}" for i, w in enumerate(vocab))),
        {"probs": probs},
        f"The most likely next word is \"{vocab[best]}\" (P = {n(probs[best], 3)}); untrained "
        "weights give a fairly flat distribution.",
    ))

    fh, fl, fp = decoder_step(H_prev, y, C, W_HH, W_HY, W_HC, b, W_O)
    return Trace(
        name="decoder-step",
        title="One decoder step",
        section=1,
        inputs=inputs,
        steps=steps,
        result={"H": h, "logits": logits, "probs": probs, "prediction": vocab[best]},
        fused={"H": fh, "logits": fl, "probs": fp, "prediction": vocab[int(np.argmax(fp))]},
        source=source_of(INPUTS, inputs, "notes+built"),
        summary="The decoder combines its previous state, the previous token and the fixed "
                "context C into a new state, then scores every vocabulary word. C is the value "
                "the notes print for \"cat sat mat\"; the weights are a seeded example.",
    )


def draw_inputs(rng: np.random.Generator) -> dict:
    """Fresh inputs: a one-decimal context and previous state, a previous word, a weight seed."""
    vocab = ["le", "chat", "assis", "<eos>"]
    return {"C": _draw.nonzero(rng, -0.5, 0.5, 0.1, 3), "H_prev": _draw.grid(rng, -0.5, 0.5, 0.1, 3),
            "vocab": vocab, "prev": str(_draw.choice(rng, ["<start>"] + vocab[:3])),
            "seed": _draw.seed(rng)}
