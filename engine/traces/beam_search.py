"""Trace ``beam-search`` (§10): beam search run to the end, with the finished pool.

The notes' table (completed as the decoding engine does: every sentence ends after two
words with </s>) decoded with beam width K and an optional length penalty. Each step ranks
the 2K best extensions with the engine's ``top_candidates``; candidates ending in </s> go to
the finished pool (if ranked < K), the first K others form the new beam; with early
stopping the search ends once K sentences are finished. The fused result is the engine's
``beam_search``.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from engine.decoding import beam_search, lecture_beam_example, length_penalty_factor, top_candidates
from engine.trace import InputSpec, Step, Trace, same_as_defaults, source_of
from engine.traces._common import lines, n
from engine.traces._lecture_table import TABLE_INPUTS, model_from

INPUTS = TABLE_INPUTS + [
    InputSpec("beam_width", "int", 2, "K, live hypotheses (and finished ones) kept", low=1,
              high=6),
    InputSpec("max_length", "int", 3, "most tokens generated, </s> included", low=1, high=6),
    InputSpec("length_penalty", "choice", "none", "how finished scores are normalised",
              choices=("none", "hf", "gnmt")),
    InputSpec("alpha", "scalar", 1.0, "length-penalty exponent α (hf: L^α, gnmt: ((5+L)/6)^α)",
              low=0.0, high=5.0),
]

TIE = 1e-9


def build(first: np.ndarray, after_the: np.ndarray, after_a: np.ndarray, beam_width: int,
          max_length: int, length_penalty: str, alpha: float) -> Trace:
    inputs = {"first": first, "after_the": after_the, "after_a": after_a,
              "beam_width": beam_width, "max_length": max_length,
              "length_penalty": length_penalty, "alpha": alpha}
    model = model_from(first, after_the, after_a)
    vocab, eos, bos = model.vocab, model.eos_token, model.bos_token
    K = beam_width
    lpen = None if length_penalty == "none" else (length_penalty, alpha)

    def words(tokens: tuple[int, ...]) -> str:
        return " ".join(vocab[t] for t in tokens)

    live: list[tuple[tuple[int, ...], float]] = [((), 0.0)]
    pool: list[tuple[tuple[int, ...], float, float]] = []  # (tokens, logp, score)
    steps: list[Step] = []
    stop = "max-length"
    for t in range(1, max_length + 1):
        lp = np.array([model.log_probs[h[-1] if h else bos] for h, _ in live])  # (k, V)
        parents, tokens, cums = top_candidates(np.array([c for _, c in live]), lp, 2 * K)
        rows, new_live = [], []
        for rank, (par, tok, cum) in enumerate(zip(parents, tokens, cums)):
            seq = live[int(par)][0] + (int(tok),)
            if int(tok) == eos:
                score = float(cum) / length_penalty_factor(len(seq), lpen)
                if rank < K and (len(pool) < K or score > min(s for _, _, s in pool) + TIE):
                    pool.append((seq, float(cum), score))
                    pool.sort(key=lambda h: -round(h[2] / TIE) * TIE)  # stable: earlier first
                    del pool[K:]
                    status = f"finished (score {n(score)})"
                else:
                    status = "ends, but dropped"
            elif len(new_live) < K:
                new_live.append((seq, float(cum)))
                status = "kept"
            else:
                status = "pruned"
            rows.append(f"{words(seq):<16} {n(float(cum)):>8}  {status}")
        live = new_live
        done = len(pool) >= K
        steps.append(Step(
            f"Step {t}",
            "cum(h + w) = cum(h) + log P(w | h); rank the best 2K; </s> → pool, others → beam",
            lines(*rows, f"beam: {', '.join(words(h) for h, _ in live) or '(empty)'}",
                  f"pool: {', '.join(words(h) for h, _, _ in pool) or '(empty)'}"),
            {f"beam_{t}": [words(h) for h, _ in live], f"pool_{t}": [words(h) for h, _, _ in pool]},
            ("The pool holds K finished sentences: early stopping ends the search."
             if done else "Live hypotheses carry on; finished ones wait in the pool."),
        ))
        if done:
            stop = "pool-full"
            break
        if not live:
            stop = "no-live"
            break
    if stop == "max-length":
        for seq, cum in live:  # unfinished hypotheses join the pool as they are
            score = cum / length_penalty_factor(len(seq), lpen)
            pool.append((seq, cum, score))
        pool.sort(key=lambda h: -round(h[2] / TIE) * TIE)
        del pool[K:]

    n_best = [words(h) for h, _, _ in pool]
    scores = np.array([s for _, _, s in pool])
    steps.append(Step(
        "Result",
        "score = Σ log P / lp(L)" if lpen else "score = Σ log P",
        lines(*(f"#{k + 1}: {words(h)}  log P = {n(c)}  P = {n(math.exp(c))}  score = {n(s)}"
                for k, (h, c, s) in enumerate(pool)), f"stopped: {stop}"),
        {"n_best": n_best, "scores": scores},
        "Length normalisation divides by a growing function of L so longer sentences are not "
        "punished just for having more (negative) terms." if lpen else
        "Without length normalisation every extra token can only lower the score, which "
        "favours short sentences; try --set length_penalty=hf.",
    ))

    result = beam_search(model, K, max_length, length_penalty=lpen)
    ties = [tie for st in result.steps for tie in st.ties] + list(result.ties)
    if ties:
        steps.append(Step(
            "Ties the engine recorded",
            "|score_a − score_b| ≤ 10⁻⁹ counts as equal",
            lines(*(f"t = {tie.t} ({tie.where}): " + " = ".join(" ".join(w) for w in tie.words)
                    for tie in ties)),
            {"ties": len(ties)},
            ties[0].rule[0].upper() + ties[0].rule[1:] + ". Floating-point noise never decides.",
        ))
    trace = Trace(
        name="beam-search",
        title="Beam search step by step",
        section=10,
        inputs=inputs,
        steps=steps,
        result={"n_best": n_best, "scores": scores},
        fused={"n_best": [h.text for h in result.n_best],
               "scores": np.array([h.score for h in result.n_best])},
        source=source_of(INPUTS, inputs, "notes+built"),
        summary=f"Beam search with K = {K} on the notes' table, run until K sentences end with "
                "</s>: every candidate, the beam and the finished pool at each step.",
    )
    if same_as_defaults(INPUTS, inputs, "first", "after_the", "after_a"):
        trace.errata.append(dataclasses.replace(lecture_beam_example().erratum, kind="rounding"))
    return trace
