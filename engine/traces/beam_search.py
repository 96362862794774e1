"""Trace ``beam-search`` (§10): beam search run to the end, with the finished pool.

The notes' table (completed as the decoding engine does: every sentence ends after two
words with </s>) decoded with beam width K and an optional length penalty. Each step ranks
the 2K best extensions with the engine's ``top_candidates``; candidates ending in </s> go to
the finished pool (if ranked < K), the first K others form the new beam; with early
stopping the search ends once K sentences are finished. The fused result is the engine's
``beam_search``.

With the optional input ``hypotheses`` the trace skips the search and scores finished
hypotheses of the student's own, of different lengths: one row of token probabilities each
(</s> included), right-padded with 0 — a token of probability 0 cannot be in a finished
sentence, so 0 can only mean "no token here". Those rows are ranked by Σ log P and by
Σ log P / lp(L); the fused scores are the engine's ``length_normalised_score``.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np

from engine.decoding import beam_search, length_normalised_score, length_penalty_factor, top_candidates
from engine.trace import InputSpec, Step, Trace, same_as_defaults, source_of
from engine.traces import _draw
from engine.traces._common import lines, n, v
from engine.traces._lecture_table import TABLE_INPUTS, model_from
from engine.traces.lecture_beam import lecture_beam_example

INPUTS = TABLE_INPUTS + [
    InputSpec("beam_width", "int", 2, "K, live hypotheses (and finished ones) kept", low=1,
              high=6),
    InputSpec("max_length", "int", 3, "most tokens generated, </s> included", low=1, high=6),
    InputSpec("length_penalty", "choice", "none", "how finished scores are normalised",
              choices=("none", "hf", "gnmt")),
    InputSpec("alpha", "scalar", 1.0, "length-penalty exponent α (hf: L^α, gnmt: ((5+L)/6)^α)",
              low=0.0, high=5.0),
    InputSpec("hypotheses", "matrix", None,
              "finished hypotheses A, B, ... to score instead of searching: one row of token "
              "probabilities each, </s> included, padded with 0 at the end (e.g. "
              "'0.5,0.9,0,0; 0.6,0.7,0.8,0.9'); when set, the table, beam_width and max_length "
              "are not used", shape=("hyps", "L_max"), low=0.0, high=1.0, optional=True),
]

TIE = 1e-9
_LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


def build(first: np.ndarray, after_the: np.ndarray, after_a: np.ndarray, beam_width: int,
          max_length: int, length_penalty: str, alpha: float,
          hypotheses: np.ndarray | None = None) -> Trace:
    inputs = {"first": first, "after_the": after_the, "after_a": after_a,
              "beam_width": beam_width, "max_length": max_length,
              "length_penalty": length_penalty, "alpha": alpha}
    if hypotheses is not None:
        inputs["hypotheses"] = hypotheses
        return _score_hypotheses(hypotheses, length_penalty, alpha, inputs)
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
        rows: list[Any] = []
        new_live: list[Any] = []
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
        "favours short sentences; set the input length_penalty to hf to divide by length.",
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
        source=source_of(INPUTS, {**inputs, "hypotheses": None}, "notes+built"),
        summary=f"Beam search with K = {K} on the notes' table, run until K sentences end with "
                "</s>: every candidate, the beam and the finished pool at each step.",
    )
    if same_as_defaults(INPUTS, inputs, "first", "after_the", "after_a"):
        example = lecture_beam_example()
        trace.errata.append(dataclasses.replace(example.errata[1], kind="claim", id="beam-verdict"))
        steps[-1].note += (" The notes print \"the cat\" −1.43 and \"a dog\" −1.42 because they "
                           "add logs already rounded to two decimals; both are log 0.24 ≈ "
                           f"{math.log(0.24):.3f}.")
    return trace


def _token_probs(hypotheses: np.ndarray) -> list[np.ndarray]:
    """Each row's tokens (the entries before its 0 padding), checked."""
    if len(hypotheses) > len(_LETTERS):
        raise ValueError(f"input hypotheses: got {len(hypotheses)} rows, expected at most "
                         f"{len(_LETTERS)} hypotheses (A to Z)")
    rows = []
    for i, row in enumerate(hypotheses):
        L = int(np.count_nonzero(row))
        if L == 0:
            raise ValueError(f"input hypotheses: row {i + 1} is all 0, expected at least one "
                             "token probability in (0, 1]")
        if np.any(row[:L] == 0):
            gap = int(np.argmin(row[:L] != 0)) + 1
            raise ValueError(f"input hypotheses: row {i + 1} is {v(row)}, a 0 at position {gap} "
                             "before later tokens; expected token probabilities in (0, 1] "
                             "followed only by 0s (padding)")
        rows.append(row[:L])
    return rows


def _score_hypotheses(hypotheses: np.ndarray, length_penalty: str, alpha: float,
                      inputs: dict) -> Trace:
    """Finished hypotheses of different lengths: Σ log P, lp(L) and the ranking before/after."""
    probs = _token_probs(hypotheses)
    names = list(_LETTERS[:len(probs)])
    lpen = None if length_penalty == "none" else (length_penalty, alpha)
    lengths = np.array([len(p) for p in probs])
    logps = np.array([float(np.sum(np.log(p))) for p in probs])  # Σₜ ln pₜ
    if lpen is None:
        lp, lp_formula, lp_terms = np.ones(len(probs)), "lp(L) = 1", ["1"] * len(probs)
    elif length_penalty == "hf":
        lp = lengths.astype(float) ** alpha
        lp_formula = "lp(L) = L^α"
        lp_terms = [f"{L}^{n(alpha)}" for L in lengths]
    else:
        lp = ((5.0 + lengths) / 6.0) ** alpha
        lp_formula = "lp(L) = ((5 + L) / 6)^α"
        lp_terms = [f"((5 + {L}) / 6)^{n(alpha)}" for L in lengths]
    scores = logps / lp

    def ranked(values: np.ndarray) -> list[int]:  # best first; ties (≤ 10⁻⁹) keep row order
        return sorted(range(len(values)), key=lambda i: -round(values[i] / TIE) * TIE)

    by_logp, by_score = ranked(logps), ranked(scores)
    steps = [
        Step(
            "Sequence log-probabilities",
            "log P(h) = Σₜ ln pₜ,  L = number of tokens (</s> included)",
            lines(*(f"{h}: " + " + ".join(f"ln {n(x)}" for x in p) + f" = {n(c)}  (L = {L})"
                    for h, p, c, L in zip(names, probs, logps, lengths))),
            {"logps": logps, "lengths": lengths},
            "Your hypotheses (the table, beam_width and max_length are not used). Every token "
            "multiplies in a probability of at most 1, so every extra token lowers log P.",
        ),
        Step(
            "Raw ranking",
            "best = argmax_h log P(h)",
            " > ".join(f"{names[i]} ({n(logps[i])})" for i in by_logp),
            {"raw_best": names[by_logp[0]]},
            "Ranked on the raw sum, shorter hypotheses win unless their tokens are much less "
            "likely: the bias length normalisation corrects.",
        ),
        Step(
            "Length penalty",
            lp_formula + ("" if lpen is None else f",  α = {n(alpha)}"),
            lines(*(f"{h}: lp({L}) = {t} = {n(x)}"
                    for h, L, t, x in zip(names, lengths, lp_terms, lp))),
            {"lp": lp},
            "No normalisation: the score is log P itself; set the input length_penalty to hf to compare."
            if lpen is None else
            "lp grows with L, and dividing a negative log P by it pulls long hypotheses up.",
        ),
        Step(
            "Normalised scores",
            "score(h) = log P(h) / lp(L)",
            lines(*(f"{h}: {n(c)} / {n(x)} = {n(sc)}"
                    for h, c, x, sc in zip(names, logps, lp, scores))),
            {"normalised": scores},
            "The finished pool is ranked on these scores.",
        ),
    ]
    flipped = by_logp[0] != by_score[0]
    steps.append(Step(
        "Result",
        "best = argmax_h score(h)",
        " > ".join(f"{names[i]} ({n(scores[i])})" for i in by_score),
        {"n_best": [names[i] for i in by_score], "scores": scores[by_score]},
        (f"Normalisation changes the winner: {names[by_logp[0]]} on log P, "
         f"{names[by_score[0]]} on the normalised score." if flipped else
         f"{names[by_score[0]]} wins both ways."),
    ))
    fused_scores = np.array([length_normalised_score(float(np.log(p).sum()), len(p), lpen)
                             for p in probs])
    fused_order = np.argsort(-np.round(fused_scores, 9), kind="stable")  # ties: row order
    return Trace(
        name="beam-search",
        title="Beam search step by step",
        section=10,
        inputs=inputs,
        steps=steps,
        result={"n_best": [names[i] for i in by_score], "scores": scores[by_score],
                "logps": logps, "normalised": scores, "raw_best": names[by_logp[0]]},
        fused={"n_best": [names[i] for i in fused_order], "scores": fused_scores[fused_order],
               "normalised": fused_scores},
        source="user",
        summary=f"{len(probs)} finished hypotheses of lengths {v(lengths)} ranked by "
                "Σ log P and by Σ log P / lp(L): your numbers instead of the search.",
    )


def draw_inputs(rng: np.random.Generator) -> dict:
    """Fresh inputs: a new one-decimal table searched with K = 1-3, or (one draw in three)
    two or three finished hypotheses of different lengths, ranked with a length penalty."""
    inputs = {"first": _draw.simplex(rng, 4, 0.1), "after_the": _draw.partial_simplex(rng, 2, 0.1),
              "after_a": _draw.partial_simplex(rng, 2, 0.1), "beam_width": int(rng.integers(1, 4)),
              "max_length": int(_draw.choice(rng, [2, 3])),
              "length_penalty": str(_draw.choice(rng, ["none", "hf", "gnmt"])),
              "alpha": float(_draw.choice(rng, [0.5, 1.0]))}
    if rng.random() < 1 / 3:
        k = int(_draw.choice(rng, [2, 3]))
        lengths = sorted(rng.choice([2, 3, 4, 5], size=k, replace=False).tolist())
        rows = np.zeros((k, lengths[-1]))
        for i, L in enumerate(lengths):
            rows[i, :L] = _draw.grid(rng, 0.3, 1.0, 0.1, L)
        inputs.update(hypotheses=rows, length_penalty=str(_draw.choice(rng, ["hf", "gnmt"])))
    return inputs
