"""``beam-search`` (§10): beam search run to the end with the finished pool, or (with the
input ``hypotheses``) finished hypotheses ranked by Σ log P and by Σ log P / lp(L)."""

from __future__ import annotations

import numpy as np

from engine.decoding import beam_search, length_penalty_factor
from engine.mistakes.computations.greedy_vs_beam import scorer
from engine.mistakes.slips import Slips
from engine.traces._lecture_table import model_from
from engine.traces.beam_search import _token_probs

TRACE = "beam-search"
MISTAKES = ("length-norm-without-eos", "beam-adds-probs", "logs-multiplied", "rounded-intermediates")
PAIRS = (("length-norm-without-eos", "rounded-intermediates"),)
NOT_CHECKED = ("ties",)
TIE = 1e-9


def _lp(length: int, lpen, s: Slips, eos: bool = True) -> float:
    """lp(L), or lp(L − 1) when the student leaves </s> out of the length."""
    if eos and s.on("length-norm-without-eos") and lpen is not None:
        length = max(length - 1, 1)
    return s.r(length_penalty_factor(length, lpen))


def compute(inp: dict, s: Slips) -> dict:
    lpen = None if inp["length_penalty"] == "none" else (inp["length_penalty"], inp["alpha"])
    if inp.get("hypotheses") is not None:
        return _hypotheses(inp["hypotheses"], lpen, s)
    model = model_from(inp["first"], inp["after_the"], inp["after_a"])
    K, max_length = inp["beam_width"], inp["max_length"]
    if not s.ids:
        result = beam_search(model, K, max_length, length_penalty=lpen)
        return {"scores": np.array([h.score for h in result.n_best])}
    one, extend = scorer(s)
    eos, bos = model.eos_token, model.bos_token
    live: list[tuple[tuple[int, ...], float | None]] = [((), None)]
    pool: list[tuple[tuple[int, ...], float]] = []  # (tokens, score)
    for _ in range(max_length):
        cands = []
        for parent, (seq, cum) in enumerate(live):
            row = model.log_probs[seq[-1] if seq else bos]
            for j in range(len(model.vocab)):
                if np.isfinite(row[j]):
                    score = one(float(row[j])) if cum is None else extend(cum, float(row[j]))
                    cands.append((score, parent, j))
        cands.sort(key=lambda c: (-round(c[0] / TIE) * TIE, c[1], c[2]))
        new_live: list[tuple[tuple[int, ...], float | None]] = []
        for rank, (cum, parent, tok) in enumerate(cands[:2 * K]):
            seq = live[parent][0] + (tok,)
            if tok == eos:
                score = cum / _lp(len(seq), lpen, s)
                if rank < K and (len(pool) < K or score > min(p[1] for p in pool) + TIE):
                    pool.append((seq, score))
                    pool.sort(key=lambda h: -round(h[1] / TIE) * TIE)
                    del pool[K:]
            elif len(new_live) < K:
                new_live.append((seq, cum))
        live = new_live
        if len(pool) >= K or not live:
            break
    else:
        for seq, cum in live:
            if cum is None:  # only the empty start, when max_length < 1
                raise ValueError("max_length: expected at least 1")
            pool.append((seq, cum / _lp(len(seq), lpen, s, eos=False)))
        pool.sort(key=lambda h: -round(h[1] / TIE) * TIE)
        del pool[K:]
    return {"scores": np.array([p[1] for p in pool])}


def _hypotheses(hypotheses: np.ndarray, lpen, s: Slips) -> dict:
    probs = _token_probs(hypotheses)
    one, extend = scorer(s)
    cums = []
    for p in probs:
        cum = one(float(np.log(p[0])))
        for x in p[1:]:
            cum = extend(cum, float(np.log(x)))
        cums.append(cum)
    logps = np.array(cums)
    lengths = np.array([len(p) for p in probs])
    lp = np.array([_lp(int(L), lpen, s) for L in lengths])
    scores = s.r(logps / lp)
    order = sorted(range(len(scores)), key=lambda i: -round(scores[i] / TIE) * TIE)
    return {"logps": logps, "lengths": lengths, "lp": lp, "normalised": scores,
            "scores": scores[order]}
