"""Trace ``cross-entropy`` (§12): the "cat" → "chat" loss, 0.511 + 0.223 = 0.734, and its gradient.

The notes give step 1's distribution over (chat, chien, <EOS>) = (0.6, 0.3, 0.1) and only
P(<EOS>) = 0.8 at step 2; the other 0.2 is split evenly here. Logits are ln P (any constant
shift gives the same softmax).
"""

from __future__ import annotations

import numpy as np

from engine.loss import cross_entropy, cross_entropy_grad
from engine.trace import Erratum, InputSpec, Step, Trace, same_as_defaults, source_of
from engine.traces import _draw
from engine.traces._common import fixed, lines, n, sub, v, word_index

INPUTS = [
    InputSpec("vocab", "labels", ["chat", "chien", "<EOS>"], "the French vocabulary",
              shape=("V",)),
    InputSpec("probs", "matrix", [[0.6, 0.3, 0.1], [0.1, 0.1, 0.8]],
              "the model's distribution at each decoder step (rows sum to 1)",
              shape=("T", "V"), low=0.0, high=1.0),
    InputSpec("targets", "labels", ["chat", "<EOS>"], "the correct word at each step",
              shape=("T",)),
]

_PRINTED = {"L_1": 0.511, "L_2": 0.223, "L": 0.734}


def build(vocab: list[str], probs: np.ndarray, targets: list[str]) -> Trace:
    inputs = {"vocab": vocab, "probs": probs, "targets": targets}
    T, V = probs.shape
    sums = probs.sum(axis=1)
    for t in range(T):
        if abs(sums[t] - 1) > 1e-6 or probs[t].min() <= 0:
            raise ValueError(f"input probs: row {t + 1} sums to {n(sums[t])} with smallest entry "
                             f"{n(probs[t].min())}, expected positive probabilities summing to 1")
    ids = np.array([word_index(w, vocab, "targets") for w in targets])
    logits = np.log(probs)  # (T, V): z = ln P, softmax(z) = P
    steps = [Step(
        "What the decoder predicted",
        "P(Yₜ | Y_<t, C) = softmax(zₜ),  here zₜ = ln Pₜ",
        lines(*(f"t = {t + 1}: " + ", ".join(f"P({w}) = {n(probs[t, j])}" for j, w in enumerate(vocab))
                + f"   target: {targets[t]}" for t in range(T))),
        {"probs": probs, "logits": logits},
        "Teacher forcing: each step is scored against the correct word, whatever was predicted.",
    )]

    losses = -np.log(probs[np.arange(T), ids])
    for t in range(T):
        steps.append(Step(
            f"Loss at step {t + 1}",
            f"L{sub(t + 1)} = −log P(Y{sub(t + 1)} = {targets[t]})",
            f"L{sub(t + 1)} = −ln {n(probs[t, ids[t]])} = {n(losses[t])}",
            {f"L_{t + 1}": float(losses[t])},
            "The more probability on the right word, the smaller the penalty; −ln 1 = 0.",
        ))

    total = float(losses.sum())
    steps.append(Step(
        "Sum over the sequence",
        "L = Σₜ Lₜ",
        f"L = {' + '.join(n(x) for x in losses)} = {n(total)}   (mean {n(total / T)})",
        {"L": total},
        "Summed, longer targets weigh more; dividing by T gives the per-token average.",
    ))

    grad = probs.copy()
    grad[np.arange(T), ids] -= 1.0
    steps.append(Step(
        "Gradient with respect to the logits",
        "∂Lₜ/∂zₜ,w = Pₜ(w) − 1[w = yₜ]",
        lines(*(f"t = {t + 1}: {v(probs[t])} − onehot({targets[t]}) = {v(grad[t])}"
                for t in range(T))),
        {"grad": grad},
        "Push the right word's logit up by (1 − P), every other logit down by its own "
        "probability; each row sums to 0.",
    ))

    good = -T * np.log(0.99)
    steps.append(Step(
        "A well-trained model",
        "P(correct) → 0.99 at every step",
        f"L = {T} × (−ln 0.99) = {n(good)}",
        {"L_trained": float(good)},
        "Confident and right costs almost nothing: the loss measures surprise at the truth.",
    ))

    trace = Trace(
        name="cross-entropy",
        title="Cross-entropy loss",
        section=12,
        inputs=inputs,
        steps=steps,
        result={"losses": losses, "L": total, "grad": grad},
        fused={"losses": cross_entropy(logits, ids, reduction="none"),
               "L": float(cross_entropy(logits, ids, reduction="sum")),
               "grad": cross_entropy_grad(logits, ids, reduction="sum")},
        source=source_of(INPUTS, inputs, "notes"),
        summary="Teacher-forced decoding of \"chat <EOS>\": the loss of each step, their sum, and "
                "the gradient that training pushes back through W_O.",
    )
    if same_as_defaults(INPUTS, inputs):
        steps[0].note += (" The notes give only P(<EOS>) = 0.8 at step 2; the remaining 0.2 is "
                          "split evenly between chat and chien here (it does not change the loss).")
        got = {"L_1": losses[0], "L_2": losses[1], "L": total}
        for key, printed in _PRINTED.items():
            if fixed(got[key], 3) != f"{printed:.3f}":
                trace.errata.append(Erratum(f"§12 worked example ({key})", f"{printed:.3f}",
                                            fixed(got[key], 3), "Recomputed from the notes' "
                                            "probabilities.", "arithmetic",
                                            id="cross-entropy-printed-values"))
        trace.errata.append(Erratum(
            where="§12 worked example, encoder",
            printed="\"cat\" → H₁, H₂ (plus H₃ for <EOS>)",
            computed="one source word plus <EOS> gives two encoder states, H₁ and H₂",
            why="Unless \"cat\" is split into two sub-word tokens (the notes do not say so), "
                "there is one state per token: cat, then <EOS>.",
            kind="miscount", id="training-encoder-states"))
    return trace


def draw_inputs(rng: np.random.Generator) -> dict:
    """Fresh inputs: 2-3 steps of one-decimal probabilities over three words, any targets."""
    vocab = ["chat", "chien", "<EOS>"]
    T = int(_draw.choice(rng, [2, 2, 3]))
    return {"vocab": vocab, "probs": np.array([_draw.simplex(rng, 3, 0.1) for _ in range(T)]),
            "targets": [vocab[int(i)] for i in rng.integers(0, 3, size=T)]}
