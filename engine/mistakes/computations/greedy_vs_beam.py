"""``greedy-vs-beam`` (§10): the notes' "the / a" table, greedy against beam search for two
words. The slips change how a two-word score is made (and so what the beam keeps)."""

from __future__ import annotations

import math

import numpy as np

from engine.decoding import beam_search
from engine.mistakes.slips import Slips
from engine.trace import same_as_defaults
from engine.traces._lecture_table import FIRST, TABLE_INPUTS, log_row, model_from

TRACE = "greedy-vs-beam"
MISTAKES = ("beam-adds-probs", "logs-multiplied", "greedy-where-beam", "rounded-intermediates")
PAIRS = (("greedy-where-beam", "rounded-intermediates"), ("greedy-where-beam", "beam-adds-probs"))
TIE = 1e-9


def _ranked(cands):
    """Best first; scores within 1e-9 are equal and ordered by parent, then token id."""
    return sorted(cands, key=lambda c: (-round(c[0] / TIE) * TIE, c[1], c[2]))


def scorer(s: Slips):
    """How the student turns log-probabilities into a running score: (score of one word,
    score of a prefix extended by one more word)."""
    if s.on("beam-adds-probs"):
        return math.exp, lambda cum, lp: cum + math.exp(lp)
    if s.on("logs-multiplied"):
        return (lambda lp: lp), (lambda cum, lp: cum * lp)
    return s.r, (lambda cum, lp: cum + s.r(lp))


def compute(inp: dict, s: Slips) -> dict:
    first, after_the, after_a, K = inp["first"], inp["after_the"], inp["after_a"], inp["beam_width"]
    model = model_from(first, after_the, after_a)
    vocab = model.vocab
    one, extend = scorer(s)
    lp1 = log_row(model, "<s>")
    ids1 = [vocab.index(w) for w in FIRST]
    g1 = FIRST[int(np.argmax(first))]
    row = log_row(model, g1)
    g2 = int(np.argmax(row))
    greedy = extend(one(float(lp1[vocab.index(g1)])), float(row[g2]))
    greedy_first = s.on("greedy-where-beam")
    if s.ids:
        first_c = _ranked([(one(float(lp1[i])), 0, i) for i in ids1 if np.isfinite(lp1[i])])
        beam1 = first_c[:1 if greedy_first else K]
        cands = []
        for parent, (cum, _, i) in enumerate(beam1):
            r = log_row(model, vocab[i])
            cands += [(extend(cum, float(r[j])), parent, j) for j in range(len(vocab))
                      if np.isfinite(r[j])]
        beam = np.array([c[0] for c in _ranked(cands)[:K]])
    else:
        beam = np.array([h.logp for h in beam_search(model, K, 2).n_best])
    out = {"log_p_first": np.array([one(float(lp1[i])) for i in ids1]), "greedy_logp": greedy,
           "beam_logps": beam}
    if same_as_defaults(TABLE_INPUTS, inp, "first", "after_the", "after_a"):
        out["exact_both"] = math.log(0.24)
    return out
