"""Trace ``teacher-forcing`` (§3): the same tiny decoder, fed the truth or its own guesses.

The notes tell the "The cat sat" story in words only, so the decoder here is a seeded
example (seed 74 makes its first guess "A", as in the notes). Both timelines start from the
same state; teacher forcing feeds the target token at each step, free running feeds the
argmax. The per-step loss is always −log P(target), whatever was fed.
"""

from __future__ import annotations

import numpy as np

from engine.loss import cross_entropy
from engine.rnn import decoder_step
from engine.trace import Erratum, InputSpec, Step, Trace, same_as_defaults, source_of
from engine.traces._common import Draw, lines, n, one_hot, v, word_index

INPUTS = [
    InputSpec("target", "labels", ["The", "cat", "sat"], "the target sentence", shape=("T",)),
    InputSpec("vocab", "labels", ["The", "A", "cat", "dog", "sat", "ran", "feline"],
              "the words the decoder can output (every word the notes' story uses)"),
    InputSpec("d_h", "int", 4, "decoder state size", low=1, high=32),
    InputSpec("seed", "int", 74, "seed for the decoder's weights and context", low=0),
]


def build(target: list[str], vocab: list[str], d_h: int, seed: int) -> Trace:
    inputs = {"target": target, "vocab": vocab, "d_h": d_h, "seed": seed}
    readable = ["<start>"] + [w for w in vocab if w != "<start>"]
    ids = [word_index(w, vocab, "target") for w in target]
    T, V = len(target), len(vocab)
    draw = Draw(seed)
    C = draw(d_h)  # (d_h,)
    W_HH = draw(d_h, d_h)
    W_HY = draw(d_h, len(readable), scale=1.0)
    W_HC = draw(d_h, d_h)
    b = draw(d_h, scale=0.1)
    W_O = draw(V, d_h, scale=1.0)

    def cell(h: np.ndarray, token: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        y = one_hot(readable.index(token), len(readable))
        h = np.tanh(W_HH @ h + W_HY @ y + W_HC @ C + b)  # (d_h,)
        z = W_O @ h  # (V,)
        e = np.exp(z - z.max())
        return h, z, e / e.sum()

    steps = [Step(
        "Set-up",
        "Hₜ = tanh(W_HH Hₜ₋₁ + W_HY Yₜ₋₁ + W_HC C + b),  P = softmax(W_O Hₜ)",
        lines(f"target = {' '.join(target)}; vocabulary V = {V}: {', '.join(vocab)}",
              f"C = {v(C)}; both timelines start from H₀ = C and input <start>"),
        {"C": C, "W_O": W_O},
        f"A small untrained decoder (seed {seed}): what matters is what each timeline feeds back.",
    )]

    h_tf, h_fr = C.copy(), C.copy()
    in_tf, in_fr = "<start>", "<start>"
    fed_tf, fed_fr, pred_tf, pred_fr = [], [], [], []
    z_tf, loss_tf, loss_fr, drift = [], [], [], []
    for t in range(T):
        fed_tf.append(in_tf)
        fed_fr.append(in_fr)
        h_tf, zt, p_tf = cell(h_tf, in_tf)
        h_fr, _, p_fr = cell(h_fr, in_fr)
        z_tf.append(zt)
        g_tf, g_fr = vocab[int(np.argmax(p_tf))], vocab[int(np.argmax(p_fr))]
        pred_tf.append(g_tf)
        pred_fr.append(g_fr)
        loss_tf.append(-np.log(p_tf[ids[t]]))
        loss_fr.append(-np.log(p_fr[ids[t]]))
        drift.append(float(np.linalg.norm(h_fr - h_tf)))
        mark = lambda g: "right" if g == target[t] else "wrong"  # noqa: E731
        steps.append(Step(
            f"t = {t + 1}: target \"{target[t]}\"",
            "teacher forcing feeds Yₜ₋₁ (truth); free running feeds Ŷₜ₋₁ (its own guess)",
            lines(f"teacher-forced: input {in_tf:<8} → predicts {g_tf} ({mark(g_tf)}), "
                  f"P(target) = {n(p_tf[ids[t]])}, loss = {n(loss_tf[-1])}",
                  f"free running:   input {in_fr:<8} → predicts {g_fr} ({mark(g_fr)}), "
                  f"P(target) = {n(p_fr[ids[t]])}, loss = {n(loss_fr[-1])}",
                  f"‖H_free − H_forced‖ = {n(drift[-1])}"),
            {"P_forced": p_tf, "P_free": p_fr, "state_gap": drift[-1]},
            "Same inputs so far, same states." if drift[-1] == 0 else
            "The inputs differ, so the states differ: the free-running decoder is now answering "
            "a different question from the one the target asks.",
        ))
        in_tf, in_fr = target[t], g_fr

    first_wrong = next((t for t in range(T) if pred_fr[t] != target[t]), None)
    steps.append(Step(
        "Compare the timelines",
        "L = Σₜ −log P(Yₜ | inputs fed so far)",
        lines(f"fed (teacher forcing): {' '.join(fed_tf)}",
              f"fed (free running):    {' '.join(fed_fr)}",
              f"L forced = {' + '.join(n(x) for x in loss_tf)} = {n(sum(loss_tf))}",
              f"L free   = {' + '.join(n(x) for x in loss_fr)} = {n(sum(loss_fr))}"),
        {"loss_forced": float(sum(loss_tf)), "loss_free": float(sum(loss_fr))},
        ("The free-running inputs leave the target after the first wrong guess "
         f"(t = {first_wrong + 1}); the teacher-forced inputs never do, so each of their losses "
         "measures one mistake made from the right history. For an untrained decoder neither "
         "total is better; what differs is what the gradient would teach: the free-running "
         "losses after the first slip blame the model for continuing its own error."
         if first_wrong is not None and first_wrong < T - 1 else
         "Here the free-running guesses never left the target early enough to change an input."),
    ))

    # fused: the engine's decoder cell for both timelines, and its cross-entropy for the loss
    fh, ff = C.copy(), C.copy()
    f_pred = []
    f_in = "<start>"
    forced_inputs = ["<start>"] + target[:-1]
    for t in range(T):
        fh, _, _ = decoder_step(fh, one_hot(readable.index(forced_inputs[t]), len(readable)), C,
                                W_HH, W_HY, W_HC, b, W_O)
        ff, _, pf = decoder_step(ff, one_hot(readable.index(f_in), len(readable)), C, W_HH,
                                 W_HY, W_HC, b, W_O)
        f_in = vocab[int(np.argmax(pf))]
        f_pred.append(f_in)
    trace = Trace(
        name="teacher-forcing",
        title="Teacher forcing vs free running",
        section=3,
        inputs=inputs,
        steps=steps,
        result={"fed_free": fed_fr, "predicted_free": pred_fr, "predicted_forced": pred_tf,
                "loss_forced": float(sum(loss_tf)), "loss_free": float(sum(loss_fr))},
        fused={"predicted_free": f_pred,
               "loss_forced": float(cross_entropy(np.array(z_tf), np.array(ids), reduction="sum"))},
        source=source_of(INPUTS, inputs, "built"),
        summary="One small seeded decoder, two ways of feeding it during training: the target "
                "tokens (teacher forcing) or its own argmax guesses (free running).",
    )
    if same_as_defaults(INPUTS, inputs, "vocab"):
        trace.errata.append(Erratum(
            where="§3 worked example (error cascade)",
            printed="\"Vocabulary size is 5\"",
            computed=f"the story uses {len(vocab)} output words: {', '.join(vocab)}",
            why="The wrong guesses (A, dog, ran, feline) come on top of the three target words, "
                "so a vocabulary of 5 cannot hold them all.",
            kind="miscount",
        ))
    return trace
