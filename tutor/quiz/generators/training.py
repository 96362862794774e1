"""Encoder and training families (§1, §12): one RNN step, cross-entropy loss and its gradient.

Each ``make_<family>(rng)`` returns the problem-specific fields of a
:class:`~tutor.quiz.generators.Problem`; the answers come from the engine.
"""

from __future__ import annotations

import numpy as np

from tutor.marking import Link
from tutor.quiz.generators._base import Part
from tutor.quiz.generators.attention import simplex
from tutor.quiz.generators.scoring import grid
from tutor.render.numbers import matrix as mat
from tutor.render.numbers import number as num
from tutor.render.numbers import vector as vec

_WORDS = ("chat", "chien", "<EOS>")


def make_rnn_step(rng: np.random.Generator) -> dict:
    from engine.rnn import rnn_encoder  # deferred: loads numba (start-up time)

    d_x, d_h = 2, 2
    x = grid(rng, -1, 1, 0.1, d_x)
    h_prev = grid(rng, -0.5, 0.5, 0.1, d_h)
    W_hx = grid(rng, -1, 1, 0.5, (d_h, d_x))
    W_hh = np.diag(grid(rng, 0, 1, 0.5, d_h))
    b = grid(rng, -0.2, 0.2, 0.1, d_h)
    H = rnn_encoder(x[None, :], W_hx, W_hh, b, h0=h_prev)  # (1, d_h)
    a, c = W_hx @ x, W_hh @ h_prev  # working shown to the student
    return dict(
        prompt=(f"An RNN encoder step H_t = tanh(W_HX X_t + W_HH H_(t−1) + b) with\n"
                f"  X_t = {vec(x)}, H_(t−1) = {vec(h_prev)}\n"
                f"  W_HX = {mat(W_hx)}, W_HH = {mat(W_hh)}, b = {vec(b)}"),
        parts=(Part("H_t?", "vector", tuple(float(v) for v in H[0]), tolerance=0.01, value="H₁"),),
        solution=(
            f"W_HX X_t = {vec(a)}, W_HH H_(t−1) = {vec(c)}",
            f"pre-activation = {vec(a + c + b)}",
            f"H_t = tanh(...) = {vec(H[0])}",
        ),
        trace_inputs={"tokens": "x_t", "X": x[None, :], "W_HX": W_hx, "W_HH": W_hh, "b": b,
                      "H0": h_prev},
        data={"x": x, "h_prev": h_prev, "W_hx": W_hx, "W_hh": W_hh, "b": b},
    )


def make_cross_entropy_loss(rng: np.random.Generator) -> dict:
    from engine.loss import cross_entropy  # deferred: loads numba (start-up time)

    T = int(rng.choice([2, 3]))
    P = np.stack([simplex(rng, 3) for _ in range(T)])  # (T, V) predicted distributions
    targets = rng.integers(0, 3, size=T)
    logits = np.log(P)  # softmax(log P) = P, so these logits reproduce the table
    total = float(cross_entropy(logits, targets, reduction="sum"))
    mean = float(cross_entropy(logits, targets, reduction="mean"))
    rows = "\n".join(f"  step {t + 1}: " + ", ".join(f"P({w}) = {num(p)}" for w, p in zip(_WORDS, P[t]))
                     + f"   (true word: {_WORDS[targets[t]]})" for t in range(T))
    picked = [float(P[t, targets[t]]) for t in range(T)]
    return dict(
        prompt=f"A decoder trained with teacher forcing predicts, over {T} steps,\n{rows}",
        parts=(
            Part("(a) The sequence loss L = Σₜ −ln P(true word) (natural log, summed)?",
                 "number", total, tolerance=0.01, value="L"),
            Part("(b) The mean loss per step?", "number", mean, tolerance=0.01, link=Link(
                "sequence-loss", "L", {"vocab": list(_WORDS), "probs": P,
                                       "targets": [_WORDS[t] for t in targets], "reduction": "mean"})),
        ),
        solution=(
            "L = −ln " + " − ln ".join(num(p) for p in picked),
            "  = " + " + ".join(num(-np.log(p)) for p in picked) + f" = {num(total)}",
            f"mean = {num(total)} / {T} = {num(mean)} (frameworks often average; the notes sum)",
        ),
        trace_inputs={"vocab": list(_WORDS), "probs": P, "targets": [_WORDS[t] for t in targets]},
        data={"P": P, "targets": targets, "words": _WORDS},
    )


def make_cross_entropy_gradient(rng: np.random.Generator) -> dict:
    from engine.loss import cross_entropy_grad  # deferred: loads numba (start-up time)

    p = simplex(rng, 3)  # the softmax output at one step
    y = int(rng.integers(0, 3))
    g = cross_entropy_grad(np.log(p), y, reduction="sum")  # (3,) w.r.t. the logits
    return dict(
        prompt=(f"At one decoder step the softmax over ({', '.join(_WORDS)}) gives "
                f"P = {vec(p)}; the true word is {_WORDS[y]!r}. With L = −ln P(true word), what "
                "is the gradient ∂L/∂z with respect to the logits z (the softmax's inputs)?"),
        parts=(Part("∂L/∂z (three numbers, in word order)?", "vector",
                    tuple(float(v) for v in g), tolerance=0.01, value="grad[1]"),),
        solution=(
            "∂L/∂z_w = P(w) − 1[w = true word]  (softmax and cross-entropy together)",
            f"= {vec(p)} − onehot({_WORDS[y]}) = {vec(g)}",
            "It sums to 0; only the true word's entry is negative, so a gradient step raises "
            "its logit and lowers the others in proportion to their probability.",
        ),
        trace_inputs={"vocab": list(_WORDS), "probs": p[None, :], "targets": _WORDS[y]},
        data={"P": p, "y": y, "words": _WORDS},
    )
