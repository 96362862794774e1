"""Trace ``cross-attention`` (§7): the decoder asks "what year?" of the encoded passage.

The notes give only the outcome: at the first answer step "1947" gets weight 0.85, "gained"
0.05 and everything else "near zero"; at the <EOS> step the weights are uniform. To show the
mechanism behind it, the keys here are two hand-made features per source token ("looks like
a year", "is a verb") and the first query is solved for so that softmax(q·K/√d_k)
reproduces 0.85 and 0.05, the remaining 0.10 shared equally. Values are seeded encoder
states.
"""

from __future__ import annotations

import math

import numpy as np

from engine.attention import attention
from engine.rnn import rnn_encoder
from engine.trace import Erratum, HeatmapData, InputSpec, Step, Trace, same_as_defaults, source_of
from engine.traces import _draw
from engine.traces._common import Draw, dot_terms, lines, n, sub, v

TOKENS = ["India", "gained", "independence", "in", "1947", "Gandhi", "led", "the", "movement",
          "<EOS>"]
_KEYS = [[0, 0], [0, 1], [0, 0], [0, 0], [1, 0], [0, 0], [0, 0], [0, 0], [0, 0], [0, 0]]
# Target weights: 0.85 on 1947, 0.05 on gained, the other 8 tokens share 0.10 (0.0125 each):
# e^a / Z = 0.85, e^b / Z = 0.05, 1 / Z = 0.0125  ⇒  Z = 80, a = ln 68, b = ln 4; q = √2 (a, b).
_Q1 = [math.sqrt(2) * math.log(68), math.sqrt(2) * math.log(4)]

INPUTS = [
    InputSpec("tokens", "labels", TOKENS, "the encoded passage, one token per encoder state",
              shape=("n",)),
    InputSpec("K", "matrix", _KEYS, "keys: features [year-like, verb] of each token",
              shape=("n", "d_k")),
    InputSpec("queries", "matrix", [_Q1, [0.0, 0.0]],
              "decoder queries, one row per answer step (\"1947\", then <EOS>)",
              shape=("steps", "d_k")),
    InputSpec("answer", "labels", ["1947", "<EOS>"], "what the decoder writes at each step",
              shape=("steps",)),
    InputSpec("d_h", "int", 3, "size of the encoder states used as values", low=1, high=16),
    InputSpec("seed", "int", 7, "seed for the encoder that produces the values", low=0),
]


def build(tokens: list[str], K: np.ndarray, queries: np.ndarray, answer: list[str], d_h: int,
          seed: int) -> Trace:
    inputs = {"tokens": tokens, "K": K, "queries": queries, "answer": answer, "d_h": d_h,
              "seed": seed}
    m, d_k = K.shape
    draw = Draw(seed)
    X = draw(m, d_h + 1)
    H = rnn_encoder(X, np.eye(d_h, d_h + 1), 0.5 * np.eye(d_h), np.zeros(d_h))  # (n, d_h)
    steps = [Step(
        "Count the encoder states",
        "H₁ … H_n, one per source token",
        lines(" ".join(f"{i + 1}:{t}" for i, t in enumerate(tokens)),
              f"n = {m}" + (f"; \"1947\" is token {tokens.index('1947') + 1}, so its state is "
                            f"H{sub(tokens.index('1947') + 1)}" if "1947" in tokens else "")),
        {"n": m},
        "Cross-attention keeps every encoder state, so the decoder can point at any one.",
    )]

    steps.append(Step(
        "Keys and values from the encoder",
        "Kᵢ = features(tokenᵢ),  Vᵢ = Hᵢ",
        lines(*(f"K{sub(i + 1)} ({tokens[i]}) = {v(K[i])}" for i in range(m) if np.any(K[i])),
              "every other key = " + v(np.zeros(d_k)),
              f"V = H from the §1-style encoder over seeded embeddings (seed {seed})"),
        {"K": K, "V": H},
        "Hand-made keys keep the example readable: a learned W_K would produce vectors like "
        "these from the encoder states.",
    ))

    root = math.sqrt(d_k)
    weights = np.zeros((len(answer), m))
    contexts = np.zeros((len(answer), d_h))
    for t, word in enumerate(answer):
        q = queries[t]
        s = (K @ q) / root  # (n,)
        e = np.exp(s - s.max())
        a = e / e.sum()
        weights[t] = a
        contexts[t] = a @ H
        top = np.argsort(-a)[:2]
        steps.append(Step(
            f"Step {t + 1}: writing \"{word}\"",
            f"α{sub(t + 1)}ᵢ = softmax(Q{sub(t + 1)}·Kᵢ / √d_k),  C{sub(t + 1)} = Σᵢ α{sub(t + 1)}ᵢ Vᵢ",
            lines(f"Q{sub(t + 1)} = {v(q)}",
                  *(f"score({tokens[i]}) = ({dot_terms(q, K[i])}) / {n(root)} = {n(s[i])}"
                    for i in range(m) if np.any(K[i])),
                  "score(any other) = 0",
                  "α = " + ", ".join(f"{tokens[i]} {n(a[i], 4)}" for i in range(m)),
                  f"C{sub(t + 1)} = {v(contexts[t])}"),
            {f"scores_{t + 1}": s, f"weights_{t + 1}": a, f"C_{t + 1}": contexts[t]},
            (f"A spotlight: \"{tokens[top[0]]}\" takes {n(a[top[0]], 3)} of the attention."
             if a[top[0]] > 0.5 else
             "No key matches better than another, so the weights are spread evenly: nothing "
             "specific is needed to write this token."),
        ))

    if "1947" in tokens:
        k = tokens.index("1947")
        gap = float(np.linalg.norm(contexts[0] - weights[0, k] * H[k]))
        w = float(weights[0, k])
        steps.append(Step(
            f"How good is \"C₁ ≈ {n(w, 2)}·H\"?",
            "‖C₁ − α(1947)·H(1947)‖",
            f"C₁ = {v(contexts[0])}; {n(w, 3)}·H{sub(k + 1)} = "
            f"{v(w * H[k])}; gap = {n(gap)}",
            {"gap": gap},
            f"The approximation drops the {n(100 * (1 - w), 1)}% of attention spread over the other "
            "tokens; the gap is their weighted states.",
        ))

    f_out, f_w = attention(queries, K, H)
    trace = Trace(
        name="cross-attention",
        title="Cross-attention for QA",
        section=7,
        inputs=inputs,
        steps=steps,
        result={"weights": weights, "contexts": contexts},
        fused={"weights": f_w, "contexts": f_out},
        source=source_of(INPUTS, inputs, "notes+built"),
        summary="Queries come from the decoder, keys and values from the encoded passage "
                "\"India gained independence in 1947. Gandhi led the movement.\"",
        heatmaps=[HeatmapData("Cross-attention (rows: answer tokens, columns: passage)", weights,
                              list(answer), list(tokens))],
    )
    if same_as_defaults(INPUTS, inputs, "tokens", "K", "queries"):
        k = tokens.index("1947")
        trace.errata += [
            Erratum(
                where="§7 worked example",
                printed="H₆ ('1947') gets the highest weight; encoder states H₁ through H₁₀",
                computed=f"\"1947\" is token {k + 1}: India(1) gained(2) independence(3) in(4) "
                         f"1947(5), so its state is H{sub(k + 1)}",
                why="The passage has 9 words (10 tokens with <EOS>, 11 with both full stops); "
                    "whatever the tokenisation, the full stop comes after 1947, so it is the "
                    "fifth token, not the sixth.",
                kind="miscount", id="qa-1947-index"),
            Erratum(
                where="§7 worked example",
                printed="\"Scores: H₆ gets highest score (0.85). H₂ gets 0.05\"",
                computed="0.85 and 0.05 are attention weights (softmax outputs); the scores "
                         f"behind them here are {n(_Q1[0] / math.sqrt(2), 3)} and "
                         f"{n(_Q1[1] / math.sqrt(2), 3)} against 0 for the rest",
                why="Scores are raw compatibilities; only after the softmax do they become the "
                    "weights that sum to 1.",
                kind="wording", id="qa-scores-are-weights"),
        ]
        if len(answer) > 1 and np.allclose(weights[1], 1 / m):
            trace.errata.append(Erratum(
                where="§7 worked example, the <EOS> step",
                printed="\"Scores are uniform and low\" (the notes' \"scores\" here are weights)",
                computed=f"uniform weights over the {m} states are 1/{m} = {n(1 / m)} each; "
                         f"they sum to {n(weights[1].sum())}",
                why="Softmax weights always add up to 1, so they can be uniform but never all "
                    "low; only the scores behind them can all be small.",
                kind="claim", id="eos-uniform-and-low"))
    return trace


def draw_inputs(rng: np.random.Generator) -> dict:
    """Fresh inputs: a shorter passage, 0/1 features for keys, small-integer queries."""
    m = int(rng.integers(4, 8))
    tokens = TOKENS[:4] + ["1947", "<EOS>"] if m == 6 else TOKENS[:m - 1] + ["<EOS>"]
    m = len(tokens)
    K = np.zeros((m, 2))
    if "1947" in tokens:
        K[tokens.index("1947"), 0] = 1.0
    K[1, 1] = 1.0  # "gained", a verb
    K[int(rng.integers(0, m)), int(rng.integers(0, 2))] = 1.0
    queries = np.vstack([_draw.nonzero(rng, 0, 3, 1, 2), np.zeros(2)])
    return {"tokens": tokens, "K": K, "queries": queries, "answer": ["1947", "<EOS>"],
            "d_h": int(_draw.choice(rng, [2, 3])), "seed": _draw.seed(rng)}
