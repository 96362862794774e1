"""Makers for the attention questions (§5–9): projections, self- and cross-attention, heads,
scoring functions, the variance argument and pooling. Every answer comes from the engine."""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np

from engine.costs import multi_head_cost
from engine.masks import causal_mask, padding_mask
from engine.traces import input_specs
from tutor.exam.numbers import (
    Numbers,
    Step,
    Value,
    as_tuple,
    maker,
    nonzero_grid,
    softmax_link,
    weighted_sum,
    words,
)
from tutor.marking import Link
from tutor.quiz.generators import generate
from tutor.quiz.generators.attention import SIMPLE_W
from tutor.quiz.generators.scoring import grid
from tutor.render.numbers import matrix as mat
from tutor.render.numbers import number as num
from tutor.render.numbers import vector as vec


def _scores(q, K) -> np.ndarray:
    from engine.scoring import scaled_dot_scores  # deferred: loads numba (start-up time)

    return scaled_dot_scores(np.asarray(q, float)[None, :], np.asarray(K, float))[0]


def _attend_steps(q: np.ndarray, K: np.ndarray, V: np.ndarray, q_name: str, q_uses: tuple[str, ...] = (),
                  q_redo=None, run: Link | None = None) -> dict[str, Step]:
    """Steps ``scores`` → ``alpha`` → ``out`` for one query, each redone from the one before,
    linked to the scores trace on these numbers (or ``run``: a trace whose ``scores``,
    ``weights`` and ``output`` values they are, such as qkv)."""
    from engine.pooling import attention_pool  # deferred: loads numba (start-up time)
    from engine.softmax import softmax  # deferred: loads numba (start-up time)

    s = _scores(q, K)
    a = softmax(s)
    out = attention_pool(V, a)
    d_k = K.shape[1]
    show = (lambda r: num(r[0])) if V.shape[1] == 1 else vec  # scalar values print bare
    inputs = run.inputs if run is not None else {"Q": q, "K": K, "V": V}
    where = run.computation if run is not None else "scores"
    out_name = "output" if run is not None else "context"
    steps = {
        "scores": Step(as_tuple(s), 0.01, (f"s_j = {q_name} · K_j / √{d_k} = {vec(s)}",),
                       q_uses, q_redo, link=Link(where, "scores", inputs),
                       relink=(lambda v: Link("scores", "scores", {"Q": np.asarray(v["q"], float), "K": K}))
                       if q_uses else None),
        "alpha": Step(as_tuple(a), 0.01, (f"α = softmax({vec(s)}) = {vec(a)}",), ("scores",),
                      lambda v: as_tuple(softmax(np.asarray(v["scores"]))),
                      link=Link(where, "weights", inputs),
                      relink=lambda v: softmax_link(v["scores"], words(len(K), "k"))),
        "out": Step(as_tuple(out), 0.01, ("Σ_j α_j V_j = " + " + ".join(
            f"{num(x)}·{show(r)}" for x, r in zip(a, V)) + f" = {show(out)}",), ("alpha",),
            lambda v: weighted_sum(v["alpha"], V), link=Link(where, out_name, inputs)),
    }
    return steps


@maker("qkv-row")
def qkv_row(rng: np.random.Generator) -> Numbers:
    while True:
        X = grid(rng, -1, 1, 0.5, (3, 2))
        if len({tuple(r) for r in X}) == 3 and np.all(np.any(X != 0, axis=1)):
            break
    W_Q, W_K, W_V = (np.array(SIMPLE_W[i]) for i in rng.choice(len(SIMPLE_W), size=3))
    i = int(rng.integers(0, 3))
    Q, K, V = X @ W_Q, X @ W_K, X @ W_V  # (3, 2) each: projections shown to the student
    run = Link("qkv", "query", {"tokens": words(3, "t"), "X": X, "W_Q": W_Q, "W_K": W_K,
                                "W_V": W_V, "position": i + 1})
    steps = {"q": Step(as_tuple(Q[i]), 0.0, (f"Q_{i + 1} = X_{i + 1} W_Q = {vec(Q[i])}",
                                             f"K = X W_K = {mat(K)}, V = X W_V = {mat(V)}"),
                       link=run)}
    steps.update(_attend_steps(Q[i], K, V, f"Q_{i + 1}", ("q",), lambda v: as_tuple(_scores(v["q"], K)),
                               run=run))
    return Numbers(
        fields={"X": mat(X), "W_Q": mat(W_Q), "W_K": mat(W_K), "W_V": mat(W_V), "i": str(i + 1)},
        steps=steps, data={"X": X, "i": i})


@maker("qkv-notes")
def qkv_notes(rng: np.random.Generator) -> Numbers:
    """The notes' "I love cats" inputs (§5), fixed: their printed softmax is the erratum."""
    spec = {s.name: np.asarray(s.default, float) for s in input_specs("qkv") if s.kind == "matrix"}
    X, W_Q, W_K, W_V = spec["X"], spec["W_Q"], spec["W_K"], spec["W_V"]
    Q, K, V = X @ W_Q, X @ W_K, X @ W_V  # (3, 3), (3, 3), (3, 2): the notes' projections
    return Numbers(fields={}, steps=_attend_steps(Q[1], K, V, "Q_2", run=Link("qkv", "query")),
                   data={"K": K, "V": V})


@maker("self-attention-causal")
def self_attention_causal(rng: np.random.Generator) -> Numbers:
    from engine.softmax import masked_softmax  # deferred: loads numba (start-up time)

    while True:
        Q = grid(rng, -1, 1, 0.5, (3, 2))
        K = grid(rng, -1, 1, 0.5, (3, 2))
        if np.all(np.any(Q != 0, axis=1)) and len({tuple(r) for r in K}) == 3:
            break
    V = grid(rng, -1, 1, 0.5, (3, 2))
    i = 1  # position 2: the causal mask hides position 3 from it
    steps = _attend_steps(Q[i], K, V, f"Q_{i + 1}")
    allowed = causal_mask(3)[i]
    masked = masked_softmax(_scores(Q[i], K), allowed)

    def causal(scores) -> Link:  # every query row given these scores; row i is the one asked
        return Link("masking", f"A[{i + 1}]", {"tokens": words(3), "length": 3, "causal": True,
                                               "scores": np.tile(np.asarray(scores, float), (3, 1))})

    steps["masked"] = Step(as_tuple(masked), 0.01, (
        f"causal mask: position {i + 1} may see 1–{i + 1}; s_j = −∞ beyond, then softmax: {vec(masked)}",),
        ("scores",), lambda v: as_tuple(masked_softmax(np.asarray(v["scores"]), allowed)),
        link=causal(_scores(Q[i], K)), relink=lambda v: causal(v["scores"]))
    return Numbers(fields={"Q": mat(Q), "K": mat(K), "V": mat(V), "i": str(i + 1)}, steps=steps,
                   data={"Q": Q, "K": K, "V": V, "i": i})


@maker("multi-head-shapes")
def multi_head_shapes(rng: np.random.Generator) -> Numbers:
    d_model = int(rng.choice([256, 512, 768, 1024]))
    heads = int(rng.choice([h for h in (4, 8, 12, 16) if d_model % h == 0]))
    n = int(rng.choice([10, 20, 50, 100]))
    cost = multi_head_cost(n, n, d_model, heads)
    s = {"d_head": d_model // heads, "params": cost.total_params, "score_entries": cost.exponentials}
    run = {"n": n, "d_model": d_model, "heads": heads}
    return Numbers(
        fields={"d_model": str(d_model), "h": str(heads), "n": str(n)},
        steps={
            "d_head": Step(float(s["d_head"]), 0.0, (f"d_k = d_v = d_model / h = {d_model} / {heads} = "
                                                     f"{s['d_head']}",),
                           link=Link("multi-head-cost", "d_k", run)),
            "params": Step(float(s["params"]), 0.0, (
                f"W_Q, W_K, W_V, W^O are each {d_model} × {d_model}: 4 × {d_model}² = {s['params']:,} "
                "weights (no biases)",), link=Link("multi-head-cost", "params", run)),
            "scores": Step(float(s["score_entries"]), 0.0, (
                f"each head scores n × n = {n}² pairs; {heads} heads: {s['score_entries']:,}",),
                link=Link("multi-head-cost", "exponentials", run)),
        },
        data=s)


@maker("cross-attention")
def cross_attention(rng: np.random.Generator) -> Numbers:
    T = 4
    K = grid(rng, -1, 1, 0.5, (T, 2))
    while len({tuple(r) for r in K}) < T:
        K = grid(rng, -1, 1, 0.5, (T, 2))
    V = grid(rng, -1, 1, 0.5, (T, 2))
    q = nonzero_grid(rng, -1, 1, 0.5, 2)
    T_out = int(rng.integers(3, 13))
    steps = _attend_steps(q, K, V, "Q_t")
    steps["weights"] = Step(float(T_out * T), 0.0, (f"a T' × T matrix: {T_out} × {T} = {T_out * T} weights",))
    return Numbers(fields={"q": vec(q), "K": mat(K), "V": mat(V), "T_out": str(T_out)}, steps=steps,
                   data={"q": q, "K": K, "V": V})


@maker("attention-sizes")
def attention_sizes(rng: np.random.Generator) -> Numbers:
    T, T_out = (int(rng.integers(lo, hi)) for lo, hi in ((5, 41), (3, 31)))
    n = T  # the encoder's self-attention runs over the source itself
    return Numbers(
        fields={"n": str(n), "T": str(T), "T_out": str(T_out)},
        steps={"self": Step(float(n * n), 0.0, (f"n × n = {n}² = {n * n}",)),
               "cross": Step(float(T_out * T), 0.0, (f"T' × T = {T_out} × {T} = {T_out * T}",))})


@maker("scoring-compare")
def scoring_compare(rng: np.random.Generator) -> Numbers:
    from engine.scoring import additive_scores  # deferred: loads numba (start-up time)

    q = grid(rng, -1, 1, 1, 3)
    k = grid(rng, -1, 1, 1, 3)
    while not q.any() or not k.any():
        q, k = grid(rng, -1, 1, 1, 3), grid(rng, -1, 1, 1, 3)
    W = np.eye(3)
    v = grid(rng, 0.5, 1, 0.5, 3)
    scaled = float(_scores(q, k[None, :])[0])
    pre = q + k  # W_q q + W_k k with identity projections
    run = {"Q": q, "K": k, "W_Q": W, "W_K": W, "v": v}
    add = float(additive_scores(q[None, :], k[None, :], W, W, v)[0, 0])
    return Numbers(
        fields={"q": vec(q), "k": vec(k), "v": vec(v)},
        steps={
            "scaled": Step(scaled, 0.01, (f"q · k / √3 = {num(float(q @ k))} / 1.7321 = {num(scaled)}",),
                           link=Link("scoring-compare", "scaled", run)),
            "pre": Step(as_tuple(pre), 0.0, (f"W_q q + W_k k = q + k = {vec(pre)}",),
                        link=Link("scoring-compare", "sum", run)),
            "additive": Step(add, 0.01, (f"vᵀ tanh({vec(pre)}) = {num(add)}",), ("pre",),
                             lambda val: float(additive_scores(np.asarray(val["pre"])[None, :],
                                                               np.zeros((1, 3)), W, W, v)[0, 0]),
                             link=Link("scoring-compare", "additive", run),
                             relink=lambda val: Link("scoring-compare", "additive", {
                                 **run, "Q": np.asarray(val["pre"], float), "K": np.zeros(3)})),
        },
        data={"q": q, "k": k, "v": v})


@maker("dot-variance")
def dot_variance(rng: np.random.Generator) -> Numbers:
    from engine.scoring import dot_product_variance  # deferred: loads numba (start-up time)

    d_k = int(rng.choice([16, 25, 36, 64, 100, 144]))
    var_q, var_k = float(rng.choice([0.5, 1, 2, 4])), float(rng.choice([0.5, 1, 2]))
    var = dot_product_variance(d_k, var_q, var_k)
    std1 = math.sqrt(dot_product_variance(d_k))
    return Numbers(
        fields={"d_k": str(d_k), "var_q": num(var_q), "var_k": num(var_k)},
        steps={
            "std": Step(
                std1, 0.01, (f"Var(q·k) = d_k = {d_k}, so the standard deviation is √{d_k} = {num(std1)}",)
            ),
            "scaled": Step(
                var / d_k,
                0.01,
                (
                    f"Var(q·k) = d_k σ_q² σ_k² = {d_k} × {num(var_q)} × {num(var_k)} = {num(var)}; "
                    f"divided by (√d_k)² = {d_k}: {num(var / d_k)}",
                ),
                link=Link(
                    "scaling",
                    "exact_scaled[2]",
                    {"dims": [1, d_k], "d_big": d_k, "var_q": var_q, "var_k": var_k},
                ),
            ),
        },
        data={"d_k": d_k},
    )


@maker("pooling")
def pooling(rng: np.random.Generator) -> Numbers:
    from engine.pooling import attention_pool, max_pool, mean_pool  # deferred: loads numba (start-up time)

    d = generate("pooling", int(rng.integers(0, 2**31))).data
    V, a = d["V"], d["alpha"]
    spike = int(np.argmax(V))
    run = {"values": V, "weights": a}
    return Numbers(
        fields={"V": vec(V), "alpha": vec(a)},
        steps={
            "max": Step(float(max_pool(V)), 0.0, (f"max = {num(float(max_pool(V)))}",),
                        link=Link("pooling", "max", run)),
            "mean": Step(float(mean_pool(V)), 0.01, (f"mean = {num(float(V.sum()))} / 5 = "
                                                     f"{num(float(mean_pool(V)))}",),
                         link=Link("pooling", "mean", run)),
            "att": Step(float(attention_pool(V, a)), 0.01, (
                "Σ α_i V_i = " + " + ".join(f"{num(x)}·{num(y)}" for x, y in zip(a, V))
                + f" = {num(float(attention_pool(V, a)))}",), link=Link("pooling", "attention", run)),
            "spike": Step(float(a[spike] * V[spike]), 0.01, (
                f"the spike's share: {num(a[spike])} × {num(V[spike])} = {num(float(a[spike] * V[spike]))}",),
                link=Link("pooling", f"terms[{spike + 1}]", run)),
        },
        data={"V": V, "alpha": a})


@maker("pooling-query")
def pooling_query(rng: np.random.Generator) -> Numbers:
    q = nonzero_grid(rng, -1, 1, 0.5, 2)
    K = grid(rng, -1, 1, 0.5, (4, 2))
    vals = rng.integers(1, 10, size=4).astype(float)
    steps = _attend_steps(q, K, vals[:, None], "q")
    whole = steps["out"]  # a vector of one entry: the pooled value

    def pooled(v: Mapping[str, Value]) -> Value:
        got = whole.redo(v) if whole.redo is not None else None
        if not isinstance(got, tuple):
            raise TypeError("the output step recomputes a vector")
        return got[0]

    if not isinstance(whole.answer, tuple):
        raise TypeError("the output step's answer is a vector")
    steps["out"] = Step(whole.answer[0], 0.01, whole.working, ("alpha",), pooled, link=whole.link)
    return Numbers(fields={"q": vec(q), "K": mat(K), "values": vec(vals)}, steps=steps,
                   data={"q": q, "K": K, "values": vals})


@maker("positional")
def positional(rng: np.random.Generator) -> Numbers:
    from engine.positional import sinusoidal_encoding  # deferred: loads numba (start-up time)

    d = int(rng.choice([4, 8, 16]))
    pos = int(rng.integers(1, 9))
    pe = sinusoidal_encoding(pos + 1, d)[pos]  # (d,)
    i = 1  # the second pair of coordinates: angle pos / 10000^(2/d)
    run = {"n_positions": pos + 1, "d_model": d}
    return Numbers(
        fields={"d": str(d), "pos": str(pos)},
        steps={
            "sin0": Step(float(pe[0]), 0.01, (f"PE({pos}, 0) = sin({pos} / 10000^0) = sin({pos}) = "
                                              f"{num(pe[0])}",),
                         link=Link("positional-encoding", f"PE[{pos + 1},1]", run)),
            "cos0": Step(float(pe[1]), 0.01, (f"PE({pos}, 1) = cos({pos}) = {num(pe[1])}",),
                         link=Link("positional-encoding", f"PE[{pos + 1},2]", run)),
            "sin1": Step(float(pe[2 * i]), 0.01, (
                f"PE({pos}, 2) = sin({pos} / 10000^(2/{d})) = sin({num(pos / 10000 ** (2 * i / d))}) "
                f"= {num(pe[2 * i])}",), link=Link("positional-encoding", f"PE[{pos + 1},3]", run)),
        },
        data={"pe": pe})


@maker("padding")
def padding(rng: np.random.Generator) -> Numbers:
    from engine.softmax import masked_softmax, softmax  # deferred: loads numba (start-up time)

    length = int(rng.integers(2, 4))  # real tokens among 4 positions
    s = grid(rng, -1, 2, 0.5, 4)
    allowed = padding_mask([length], 4)[0]  # (4,)
    masked = masked_softmax(s, allowed)
    plain = softmax(s)
    wasted = float(plain[~allowed].sum())
    run = {"tokens": words(length) + ["<pad>"] * (4 - length), "length": length, "causal": False,
           "scores": np.tile(s, (4, 1))}
    return Numbers(
        fields={"s": vec(s), "length": str(length), "pad": str(4 - length)},
        steps={
            "masked": Step(as_tuple(masked), 0.01, (
                ("position 4 gets" if length == 3 else f"positions {length + 1}–4 get")
                + f" score −∞, so weight 0; softmax over the first {length}: "
                f"{vec(masked)}",), link=Link("masking", "A[1]", run)),
            "plain": Step(as_tuple(plain), 0.01, (f"softmax over all four: {vec(plain)}",),
                          link=softmax_link(s)),
            "wasted": Step(wasted, 0.01, (f"weight on padding without the mask: {num(wasted)}",),
                           ("plain",), lambda v: float(np.sum(np.asarray(v["plain"])[~allowed]))),
        },
        data={"s": s, "length": length})
