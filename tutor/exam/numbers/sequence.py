"""Makers for the sequence-model questions (§1–4, §12): encoder, decoder output, fading,
teacher forcing, dynamic context and the sequence loss. Every answer comes from the engine."""

from __future__ import annotations

import numpy as np

from tutor.exam.numbers import (
    Numbers,
    Step,
    as_tuple,
    context_link,
    maker,
    nonzero_grid,
    one,
    softmax_link,
    weighted_sum,
    words,
)
from tutor.marking import Link
from tutor.quiz.generators.attention import simplex
from tutor.quiz.generators.revision import (
    CASCADE_FED,
    CASCADE_VOCAB,
    cascade_table,
    cascade_text,
    encoder_inputs,
)
from tutor.quiz.generators.scoring import grid
from tutor.render.numbers import matrix as mat
from tutor.render.numbers import number as num
from tutor.render.numbers import vector as vec


@maker("encoder-run")
def encoder_run(rng: np.random.Generator) -> Numbers:
    from engine.rnn import rnn_encoder  # deferred: loads numba (start-up time)

    X, W_HX, W_HH = encoder_inputs(rng)
    b = np.zeros(2)
    H = rnn_encoder(X, W_HX, W_HH, b)  # (3, 2)

    def after(t: int):
        def redo(values):
            return as_tuple(rnn_encoder(X[t:t + 1], W_HX, W_HH, b, h0=np.asarray(values[f"H{t}"]))[0])
        return redo

    def working(t: int) -> tuple[str, ...]:
        prev = np.zeros(2) if t == 0 else H[t - 1]
        pre = W_HX @ X[t] + W_HH @ prev  # shown to the student, as the notes do
        return (f"W_HX X_{t + 1} = {vec(W_HX @ X[t])}, W_HH H_{t} = {vec(W_HH @ prev)}",
                f"H_{t + 1} = tanh({vec(pre)}) = {vec(H[t])}")

    run = {"tokens": words(3, "x"), "X": X, "W_HX": W_HX, "W_HH": W_HH, "b": b, "H0": b}

    def one_step(t: int):  # the step from the student's own H_t
        return lambda values: Link("encoder", "H₁", {**run, "tokens": ["x"], "X": X[t:t + 1],
                                                     "H0": np.asarray(values[f"H{t}"], float)})

    steps = {"H1": Step(as_tuple(H[0]), 0.01, working(0), link=Link("encoder", "H₁", run))}
    for t in (1, 2):
        steps[f"H{t + 1}"] = Step(as_tuple(H[t]), 0.01, working(t), (f"H{t}",), after(t),
                                  link=Link("encoder", f"H{'₂₃'[t - 1]}", run), relink=one_step(t))
    return Numbers(
        fields={"X1": vec(X[0]), "X2": vec(X[1]), "X3": vec(X[2]), "W_HX": mat(W_HX),
                "W_HH": mat(W_HH)},
        steps=steps, data={"X": X, "W_HX": W_HX, "W_HH": W_HH})


_WORDS = ("chat", "chien", "<EOS>")


@maker("decoder-output")
def decoder_output(rng: np.random.Generator) -> Numbers:
    from engine.scoring import dot_scores  # deferred: loads numba (start-up time)
    from engine.softmax import softmax  # deferred: loads numba (start-up time)

    h = nonzero_grid(rng, -1, 1, 0.1, 2)
    W_O = grid(rng, -1, 1, 0.5, (3, 2))
    z = dot_scores(h[None, :], W_O)[0]  # (3,) = W_O h
    P = softmax(z)
    V = int(rng.choice([32000, 50000, 64000]))
    d_h = int(rng.choice([256, 512, 1024]))
    count = int(np.prod((V, d_h)))
    return Numbers(
        fields={"h": vec(h), "W_O": mat(W_O), "words": ", ".join(_WORDS), "V": f"{V:,}",
                "d_h": str(d_h)},
        steps={
            "z": Step(as_tuple(z), 0.01, (f"z = W_O H_t^(d) = {vec(z)} (row r of W_O dotted with H)",)),
            "P": Step(as_tuple(P), 0.01, (f"P = softmax({vec(z)}) = {vec(P)}",
                                          f"greedy word: {_WORDS[int(np.argmax(P))]}"),
                      ("z",), lambda v: as_tuple(softmax(np.asarray(v["z"]))),
                      link=softmax_link(z, _WORDS), relink=lambda v: softmax_link(v["z"], _WORDS)),
            "count": Step(float(count), 0.0, (f"W_O is V × d_h = {V:,} × {d_h} = {count:,} weights",)),
        },
        data={"h": h, "W_O": W_O})


@maker("linear-fading")
def linear_fading(rng: np.random.Generator) -> Numbers:
    from engine.rnn import rnn_encoder  # deferred: loads numba (start-up time)

    w = float(grid(rng, 0.3, 0.8, 0.1))
    X = grid(rng, 0, 1, 0.1, (3, 2))
    I2 = np.eye(2)
    H = rnn_encoder(X, I2, w * I2, np.zeros(2), activation="relu")  # ReLU of a non-negative sum

    def reach(T: int) -> float:
        """What is left of X_1 in H_T: the encoder run on an impulse."""
        impulse = np.zeros((T, 1))
        impulse[0, 0] = 1.0
        return float(rnn_encoder(impulse, [[1.0]], [[w]], [0.0], activation="relu")[-1, 0])

    coef = reach(3)
    T = 1
    while reach(T) >= 0.01:
        T += 1
    return Numbers(
        fields={"w": num(w), "X1": vec(X[0]), "X2": vec(X[1]), "X3": vec(X[2])},
        steps={
            "C": Step(as_tuple(H[-1]), 0.01, (
                f"with W_HX = I and W_HH = {num(w)}·I, C = H_3 = {num(w)}²·X_1 + {num(w)}·X_2 + X_3",
                f"C = {vec(H[-1])}")),
            "coef": Step(coef, 0.005, (f"X_1 reaches C multiplied by {num(w)}² = {num(coef)}",)),
            "steps": Step(float(T), 0.0, (
                f"X_1's weight in H_T is {num(w)}^(T−1); it first drops below 0.01 at T = {T} "
                f"({num(w)}^{T - 1} = {num(reach(T), 5)})",)),
        },
        data={"w": w, "X": X})


@maker("error-cascade")
def error_cascade(rng: np.random.Generator) -> Numbers:
    from engine.loss import cross_entropy  # deferred: loads numba (start-up time)

    table = cascade_table(rng)
    target = ("the", "cat", "sat")
    forced = ("<s>",) + target[:-1]
    free = ["<s>"]
    for _ in range(2):  # argmax of the row of what was fed
        free.append(CASCADE_VOCAB[int(np.argmax(table[CASCADE_FED.index(free[-1])]))])
    y = [CASCADE_VOCAB.index(w) for w in target]

    def losses(fed) -> np.ndarray:
        logits = np.log(np.stack([table[CASCADE_FED.index(w)] for w in fed]))  # (3, 6)
        return np.array([float(cross_entropy(logits[t:t + 1], [y[t]])) for t in range(3)])

    tf, fr = losses(forced), losses(free)
    run = {"target": list(target), "vocab": list(CASCADE_VOCAB), "fed": list(CASCADE_FED),
           "table": table}
    return Numbers(
        fields={"table": cascade_text(table), "target": " ".join(target)},
        steps={
            "tf": Step(
                as_tuple(tf),
                0.01,
                (
                    "teacher forcing feeds <s>, the, cat: "
                    + ", ".join(f"−ln P({w} | {f}) = {num(x)}" for w, f, x in zip(target, forced, tf)),
                ),
                link=Link("error-cascade", "losses_forced", run),
            ),
            "tf_total": Step(
                float(
                    cross_entropy(
                        np.log(np.stack([table[CASCADE_FED.index(w)] for w in forced])), y, reduction="sum"
                    )
                ),
                0.01,
                (f"L = {' + '.join(num(x) for x in tf)} = {num(tf.sum())}",),
                ("tf",),
                lambda v: float(np.sum(v["tf"])),
                link=Link("error-cascade", "L_forced", run),
            ),
            "free": Step(
                as_tuple(fr),
                0.01,
                (
                    f"free running feeds {', '.join(free)} (each the argmax of the row before): "
                    + ", ".join(f"−ln P({w} | {f}) = {num(x)}" for w, f, x in zip(target, free, fr)),
                ),
                link=Link("error-cascade", "losses_free", run),
            ),
        },
        data={"table": table, "free": tuple(free)},
    )


@maker("dynamic-context")
def dynamic_context(rng: np.random.Generator) -> Numbers:
    from engine.pooling import attention_pool  # deferred: loads numba (start-up time)
    from engine.softmax import softmax  # deferred: loads numba (start-up time)

    e = grid(rng, -1, 2, 0.5, 3)
    while len(set(e)) < 3:
        e = grid(rng, -1, 2, 0.5, 3)
    H = grid(rng, -1, 1, 0.1, (3, 2))
    a = softmax(e)
    C = attention_pool(H, a)  # (2,)
    Tsrc, Tout = int(rng.integers(8, 31)), int(rng.integers(5, 26))
    return Numbers(
        fields={
            "e": vec(e),
            "H1": vec(H[0]),
            "H2": vec(H[1]),
            "H3": vec(H[2]),
            "T": str(Tsrc),
            "T_out": str(Tout),
        },
        steps={
            "alpha": Step(
                as_tuple(a), 0.01, (f"α = softmax({vec(e)}) = {vec(a)}",), link=softmax_link(e, words(3, "h"))
            ),
            "C": Step(
                as_tuple(C),
                0.01,
                ("C_t = " + " + ".join(f"{num(x)}·{vec(h)}" for x, h in zip(a, H)) + f" = {vec(C)}",),
                ("alpha",),
                lambda v: weighted_sum(v["alpha"], H),
                link=context_link(a, H),
                relink=lambda v: context_link(v["alpha"], H),
            ),
            "top": Step(
                float(np.argmax(a) + 1),
                0.0,
                (f"the largest weight is on H_{int(np.argmax(a)) + 1}",),
                ("alpha",),
                lambda v: float(np.argmax(np.asarray(v["alpha"], dtype=float)) + 1),
            ),
            "scores": Step(
                float(Tsrc * Tout),
                0.0,
                (f"one score per (output step, source position): {Tout} × {Tsrc} = {Tsrc * Tout}",),
            ),
        },
        data={"e": e, "H": H},
    )


@maker("sequence-loss")
def sequence_loss(rng: np.random.Generator) -> Numbers:
    from engine.loss import cross_entropy, cross_entropy_grad  # deferred: loads numba (start-up time)

    P = np.stack([simplex(rng, 3) for _ in range(3)])  # (3, V)
    y = rng.integers(0, 3, size=3)
    logits = np.log(P)
    each = np.array([float(cross_entropy(logits[t:t + 1], y[t:t + 1])) for t in range(3)])
    total = float(cross_entropy(logits, y, reduction="sum"))
    grad = cross_entropy_grad(logits[:1], y[:1], reduction="sum")[0]  # (3,)
    run = {"vocab": list(_WORDS), "probs": P, "targets": [_WORDS[t] for t in y]}

    def losses_run(losses) -> dict:
        """Inputs whose per-step losses are the student's own ``losses`` (the reference word
        given probability e^−L_t, the rest shared): follow-through diagnosis of (b) and (c)."""
        ref = np.exp(-np.asarray(losses, dtype=float).ravel())
        probs = np.repeat(((1 - ref) / 2)[:, None], 3, axis=1)
        probs[np.arange(3), y] = ref
        return {**run, "probs": probs}
    rows = "\n".join(f"  step {t + 1}: " + ", ".join(f"P({w}) = {num(p)}" for w, p in zip(_WORDS, P[t]))
                     + f"   (reference: {_WORDS[y[t]]})" for t in range(3))
    return Numbers(
        fields={"rows": rows, "words": ", ".join(_WORDS), "first": _WORDS[y[0]]},
        steps={
            "each": Step(as_tuple(each), 0.01,
                         ("L_t = −ln P(reference): " + ", ".join(num(x) for x in each),),
                         link=Link("cross-entropy", "losses", run)),
            "total": Step(total, 0.01, (f"L = Σ L_t = {num(total)}",), ("each",),
                          lambda v: float(np.sum(v["each"])), link=Link("cross-entropy", "L", run),
                          relink=lambda v: Link("cross-entropy", "L", losses_run(v["each"]))),
            "mean": Step(total / 3, 0.01, (f"mean = {num(total)} / 3 = {num(total / 3)}",), ("total",),
                         lambda v: one(v["total"]) / 3,
                         link=Link("sequence-loss", "L", {**run, "reduction": "mean"}),
                         relink=lambda v: Link("sequence-loss", "L", {
                             **losses_run([one(v["total"]) / 3] * 3), "reduction": "mean"})),
            "grad": Step(as_tuple(grad), 0.01, (f"∂L_1/∂z = P_1 − onehot({_WORDS[y[0]]}) = {vec(grad)}",),
                         link=Link("cross-entropy", "grad[1]", run)),
        },
        data={"P": P, "y": y},
    )


@maker("label-smoothing")
def label_smoothing(rng: np.random.Generator) -> Numbers:
    from engine.loss import cross_entropy  # deferred: loads numba (start-up time)

    while True:
        p = simplex(rng, 4)
        if len(set(p)) == 4:
            break
    y = int(np.argmax(p))
    eps = float(rng.choice([0.1, 0.2]))
    logits = np.log(p)
    plain = float(cross_entropy(logits, y))
    smooth = float(cross_entropy(logits, y, label_smoothing=eps))
    target = 1 - eps + eps / 4  # the smoothed target's entry for the reference word
    nll = -np.log(p)  # (V,): −ln P_v, each word's loss as the reference

    def smoothed_loss(q_ref: float) -> float:
        """Σ_v q_v (−ln P_v) with ``q_ref`` on the reference word and ε / V on every other one."""
        q = np.full(4, eps / 4)
        q[y] = q_ref
        return weighted_sum(q, nll[:, None])[0]

    return Numbers(
        fields={"p": vec(p), "word": str(y + 1), "eps": num(eps)},
        steps={
            "plain": Step(plain, 0.01, (f"−ln {num(p[y])} = {num(plain)}",), link=Link(
                "cross-entropy", "L", {"vocab": words(4), "probs": p[None, :], "targets": [f"w{y + 1}"]})),
            "target": Step(float(target), 0.001, (f"(1 − ε) + ε / V = {num(1 - eps)} + {num(eps)} / 4 = "
                                                  f"{num(target)}",)),
            "smooth": Step(smooth, 0.01, (
                f"Σ_v q_v (−ln P_v) with q = {num(target)} on word {y + 1} and {num(eps / 4)} elsewhere: "
                f"{num(smooth)}",),
                ("target",), lambda v: smoothed_loss(one(v["target"]))),
        },
        data={"p": p, "y": y, "eps": eps})
