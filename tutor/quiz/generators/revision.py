"""Families for the topics that had none (§2, §3, §6, §7, §11): the fixed context vector, the
teacher-forcing error cascade, multi-head shapes, cross-attention weights and heatmap reading.

Each ``make_<family>(rng)`` returns the problem-specific fields of a
:class:`~tutor.quiz.generators.Problem`; the answers come from the engine, and each family's
``trace_inputs`` replay its own numbers.
"""

from __future__ import annotations

import numpy as np

from engine.costs import multi_head_cost
from tutor.quiz.generators._base import Part
from tutor.quiz.generators.attention import simplex
from tutor.quiz.generators.scoring import grid
from tutor.render.numbers import matrix as mat
from tutor.render.numbers import number as num
from tutor.render.numbers import vector as vec


def encoder_inputs(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Three 2-d embeddings, a W_HX without zero rows on a 0.5 grid and a diagonal W_HH (also used by
    the exam question ``xq-encoder-run``)."""
    X = grid(rng, -1, 1, 0.1, (3, 2))
    W_HX = grid(rng, -1, 1, 0.5, (2, 2))
    while not W_HX.any(axis=1).all():  # a zero row would pin that coordinate of H at 0
        W_HX = grid(rng, -1, 1, 0.5, (2, 2))
    W_HH = np.diag(grid(rng, 0.5, 1, 0.5, 2))
    return X, W_HX, W_HH


def make_fixed_context(rng: np.random.Generator) -> dict:
    from engine.rnn import rnn_encoder  # deferred: loads numba (start-up time)

    X, W_HX, W_HH = encoder_inputs(rng)
    b = np.zeros(2)
    H = rnn_encoder(X, W_HX, W_HH, b)  # (3, 2)
    return dict(
        prompt=("A tanh encoder H_t = tanh(W_HX X_t + W_HH H_(t−1)) (no bias, H_0 = 0) reads\n"
                f"  X_1 = {vec(X[0])}, X_2 = {vec(X[1])}, X_3 = {vec(X[2])}\n"
                f"  W_HX = {mat(W_HX)}, W_HH = {mat(W_HH)}\n"
                "The decoder will see only the context vector C = H_3."),
        parts=(Part("(a) H_1?", "vector", tuple(float(x) for x in H[0]), tolerance=0.01, value="H₁"),
               Part("(b) The context vector C?", "vector", tuple(float(x) for x in H[2]),
                    tolerance=0.02, value="C")),
        solution=(
            f"H_1 = tanh(W_HX X_1) = {vec(H[0])}",
            f"H_2 = tanh(W_HX X_2 + W_HH H_1) = {vec(H[1])}",
            f"C = H_3 = tanh(W_HX X_3 + W_HH H_2) = {vec(H[2])}",
            "Two numbers must carry all three tokens: X_1 has passed through W_HH twice.",
        ),
        trace_inputs={"tokens": ["x1", "x2", "x3"], "X": X, "W_HX": W_HX, "W_HH": W_HH, "b": b,
                      "H0": b},
        data={"X": X, "W_HX": W_HX, "W_HH": W_HH},
    )


CASCADE_VOCAB = ("the", "a", "cat", "dog", "sat", "ran")
CASCADE_FED = ("<s>", "the", "a", "cat", "dog")


def cascade_table(rng: np.random.Generator) -> np.ndarray:
    """A (5, 6) table P(next | fed word) whose free run goes <s> → a → dog (also used by the
    exam question ``xq-error-cascade``)."""
    want = {"<s>": ("a", "the"), "the": ("cat", None), "a": ("dog", "cat"), "cat": ("sat", None),
            "dog": ("ran", "sat")}
    rows = []
    for prev in CASCADE_FED:
        top, second = want[prev]
        while True:
            p = simplex(rng, len(CASCADE_VOCAB))
            order = np.argsort(-p, kind="stable")
            if CASCADE_VOCAB[order[0]] == top and p[order[0]] > p[order[1]] and (
                    second is None or CASCADE_VOCAB[order[1]] == second):
                break
        rows.append(p)
    return np.array(rows)


def cascade_text(table: np.ndarray) -> str:
    head = "          " + "".join(f"{w:>7}" for w in CASCADE_VOCAB)
    body = [f"  {prev:<8}" + "".join(f"{num(p):>7}" for p in row)
            for prev, row in zip(CASCADE_FED, table)]
    return "\n".join([head] + body)


def make_error_cascade(rng: np.random.Generator) -> dict:
    from engine.traces import build  # looked up per call: tests replace it

    table = cascade_table(rng)
    inputs = {"target": ["the", "cat", "sat"], "vocab": list(CASCADE_VOCAB),
              "fed": list(CASCADE_FED), "table": table}
    r = build("error-cascade", inputs).result
    return dict(
        prompt=("A toy decoder's next word depends only on the word fed to it; each row is "
                "P(next | fed), <s> the start token:\n" + cascade_text(table)
                + "\nThe reference is \"the cat sat\". Losses are −ln P(reference word)."),
        parts=(
            Part("(a) Running free (feeding each step's most probable word), what is fed at step 3?",
                 "choice", r["fed_free"][2], options=CASCADE_VOCAB[:4]),
            Part("(b) The teacher-forced sequence loss (summed)?", "number", r["L_forced"],
                 tolerance=0.01, value="L_forced"),
            Part("(c) The free-running sequence loss, still scored against the reference?",
                 "number", r["L_free"], tolerance=0.01, value="L_free"),
        ),
        solution=(
            f"teacher forcing feeds {', '.join(r['fed_forced'])}: L = "
            + " + ".join(num(x) for x in r["losses_forced"]) + f" = {num(r['L_forced'])}",
            f"free running feeds {', '.join(r['fed_free'])}: L = "
            + " + ".join(num(x) for x in r["losses_free"]) + f" = {num(r['L_free'])}",
            "Both runs agree at step 1; after the first wrong word every free-running step is "
            "scored from a prefix the reference never has.",
        ),
        trace_inputs=inputs,
        data={"table": table},
    )


def make_multi_head_shapes(rng: np.random.Generator) -> dict:
    d_model = int(rng.choice([16, 32, 64, 128]))
    heads = int(rng.choice([h for h in (2, 4, 8) if d_model % h == 0]))
    n = int(rng.integers(3, 11))
    cost = multi_head_cost(n, n, d_model, heads)
    return dict(
        prompt=(f"Multi-head self-attention with d_model = {d_model} and h = {heads} heads "
                f"(d_k = d_v = d_model / h, no biases) reads n = {n} tokens."),
        parts=(
            Part("(a) d_k of each head?", "number", float(d_model // heads), value="d_k"),
            Part("(b) Weights in W_Q, W_K, W_V and W^O together?", "number", float(cost.total_params),
                 value="params"),
            Part("(c) Attention scores computed over all heads?", "number", float(cost.exponentials),
                 value="exponentials"),
        ),
        solution=(
            f"d_k = {d_model} / {heads} = {d_model // heads}",
            f"four {d_model} × {d_model} matrices: 4 × {d_model}² = {cost.total_params} "
            "(h does not change it)",
            f"each head has an n × n = {n} × {n} score matrix: {heads} × {n * n} = {cost.exponentials}",
        ),
        trace_inputs={"n": n, "d_model": d_model, "heads": heads},
        data={"d_model": d_model, "heads": heads, "n": n},
    )


_SOURCE = ("the", "black", "cat", "sleeps")


def make_cross_attention_weights(rng: np.random.Generator) -> dict:
    from engine.scoring import scaled_dot_scores  # deferred: loads numba (start-up time)
    from engine.softmax import softmax  # deferred: loads numba (start-up time)

    while True:
        K = grid(rng, -1, 1, 0.5, (4, 2))
        q = grid(rng, -1, 1, 0.5, 2)
        a = softmax(scaled_dot_scores(q[None, :], K)[0])  # (4,)
        if q.any() and np.sum(a == a.max()) == 1:  # one clear winner
            break
    word = _SOURCE[int(np.argmax(a))]
    return dict(
        prompt=(f"A decoder translating \"{' '.join(_SOURCE)}\" has, at one output step, query "
                f"Q_t = {vec(q)}. The encoder's keys are K = {mat(K)} (one row per source word, "
                "d_k = 2)."),
        parts=(
            Part("(a) The cross-attention weights over the four source words?", "vector",
                 tuple(float(x) for x in a), tolerance=0.01, value="weights_1"),
            Part("(b) Which source word gets the most weight?", "choice", word, options=_SOURCE),
        ),
        solution=(
            f"scores = Q_t · K_i / √2 = {vec(scaled_dot_scores(q[None, :], K)[0])}",
            f"α = softmax(scores) = {vec(a)}",
            f"this step's query matches \"{word}\" best; the keys (and values) come from the "
            "encoder, the query from the decoder.",
        ),
        trace_inputs={"tokens": list(_SOURCE), "K": K, "queries": q[None, :], "answer": [word]},
        data={"q": q, "K": K},
    )


def heatmap_table(rng: np.random.Generator) -> tuple[list[str], list[str], np.ndarray]:
    """Source, target and a (5, 3) table of attention rows for "my feet hurt" → French, with
    one brightest cell per row (also used by the exam question ``xq-heatmap-reading``)."""
    source, target = ["my", "feet", "hurt"], ["j'", "ai", "mal", "aux", "pieds"]
    while True:
        W = np.stack([simplex(rng, 3) for _ in target])  # (5, 3), rows sum to 1
        if all(len(set(r)) == 3 for r in W):
            return source, target, W


def make_heatmap_reading(rng: np.random.Generator) -> dict:
    source, target, W = heatmap_table(rng)
    r = int(rng.integers(0, 5))
    c = int(np.argmax(W[r]))
    head = "        " + "".join(f"{w:>7}" for w in source)
    rows = "\n".join(f"  {w:<6}" + "".join(f"{num(x):>7}" for x in row) for w, row in zip(target, W))
    return dict(
        prompt=("Cross-attention weights of a model translating \"my feet hurt\" → "
                f"\"{' '.join(target)}\" (rows: French words, columns: English words):\n"
                f"{head}\n{rows}"),
        parts=(
            Part(f"(a) Which English word does {target[r]!r} attend to most?", "choice",
                 source[c], options=tuple(source)),
            Part("(b) How many times the uniform weight (1/3) is that largest entry?", "number",
                 float(W[r, c] * 3), tolerance=0.01),
        ),
        solution=(
            f"the {target[r]!r} row is {vec(W[r])}: its brightest cell is {source[c]!r}",
            f"{num(W[r, c])} × 3 = {num(float(W[r, c] * 3))} times the uniform 1/3",
            "A bright cell says where the weight went, not that the word caused the output.",
        ),
        trace_inputs={"source": source, "target": target, "rows": target[1:], "weights": W[1:],
                      "missing_rows": W[:1]},
        data={"W": W, "row": r},
    )
