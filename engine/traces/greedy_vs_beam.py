"""Trace ``greedy-vs-beam`` (§10): the notes' "the / a" example, two words long.

Greedy takes the best first word and then the best second word; beam search with K = 2 keeps
two first words alive and ranks every two-word continuation by its cumulative log-probability.
With the notes' numbers "the cat" and "a dog" both have probability 0.24: an exact tie, which
the decoding engine records (and the notes' rounded logs split by 0.01).
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from engine.decoding import beam_search, greedy_decode
from engine.trace import InputSpec, Step, Trace, same_as_defaults, source_of
from engine.traces import _draw
from engine.traces._common import lines, n, p
from engine.traces._lecture_table import FIRST, TABLE_INPUTS, log_row, model_from
from engine.traces.lecture_beam import lecture_beam_example

INPUTS = TABLE_INPUTS + [
    InputSpec("beam_width", "int", 2, "K, the number of hypotheses beam search keeps", low=1,
              high=4),
]

TIE = 1e-9


def _ranked(cands: list[tuple[float, int, int, str]]) -> list[tuple[float, int, int, str]]:
    """Best first; scores within 1e-9 count as equal and are ordered by parent, then token id."""
    return sorted(cands, key=lambda c: (-round(c[0] / TIE) * TIE, c[1], c[2]))


def build(first: np.ndarray, after_the: np.ndarray, after_a: np.ndarray, beam_width: int) -> Trace:
    inputs = {"first": first, "after_the": after_the, "after_a": after_a, "beam_width": beam_width}
    model = model_from(first, after_the, after_a)
    vocab = model.vocab
    K = beam_width
    lp1 = log_row(model, "<s>")
    ids1 = [vocab.index(w) for w in FIRST]
    steps = [Step(
        "Step 1: the first word",
        "log P(w | <s>)",
        lines(*(f"P({w}) = {n(first[k])}, log = {n(lp1[ids1[k]])}" for k, w in enumerate(FIRST))),
        {"log_p_first": lp1[ids1]},
        "Both decoders see the same distribution; they differ in how much of it they keep.",
    )]

    g1 = FIRST[int(np.argmax(first))]
    row = log_row(model, g1)
    g2_id = int(np.argmax(row))
    g2 = vocab[g2_id]
    g_logp = float(lp1[vocab.index(g1)] + row[g2_id])
    steps.append(Step(
        "Greedy",
        "ŷₜ = argmax_w P(w | ŷ_<t)",
        lines(f"step 1: argmax → {g1} ({n(math.exp(lp1[vocab.index(g1)]))})",
              f"step 2: after {g1}, argmax → {g2} ({n(math.exp(row[g2_id]))})",
              f"log P({g1} {g2}) = {n(lp1[vocab.index(g1)])} + {p(row[g2_id])} = {n(g_logp)}",
              f"P = {n(math.exp(g_logp))}"),
        {"greedy": [g1, g2], "greedy_logp": g_logp},
        "One path, no second thoughts: once a word is chosen it is fed back for good.",
    ))

    first_c = _ranked([(float(lp1[i]), 0, i, vocab[i]) for i in ids1 if np.isfinite(lp1[i])])
    beam1 = first_c[:K]
    steps.append(Step(
        f"Beam step 1 (K = {K})",
        "keep the K best prefixes by Σ log P",
        lines(*(f"{c[3]:<5} {n(c[0])}" + ("   kept" if r < K else "   dropped")
                for r, c in enumerate(first_c))),
        {"beam_1": [c[3] for c in beam1]},
        "Beam search keeps a runner-up alive in case it leads somewhere better.",
    ))

    cands = []
    for parent, (cum, _, _, word) in enumerate(beam1):
        r = log_row(model, word)
        cands += [(cum + float(r[j]), parent, j, f"{word} {vocab[j]}") for j in range(len(vocab))
                  if np.isfinite(r[j])]
    ranked = _ranked(cands)
    beam2 = ranked[:K]
    steps.append(Step(
        "Beam step 2",
        "cum(h + w) = cum(h) + log P(w | h), keep the K best",
        lines(*(f"{c[3]:<12} {n(c[0])}   (P = {n(math.exp(c[0]))})" + ("   kept" if r < K else "")
                for r, c in enumerate(ranked))),
        {"beam": [c[3] for c in beam2], "beam_logps": np.array([c[0] for c in beam2])},
        "Every extension of every kept prefix competes in one ranking.",
    ))

    best = ranked[0][0]
    tied = [c[3] for c in ranked if abs(c[0] - best) <= TIE]
    steps.append(Step(
        "Compare",
        "greedy vs beam: Π P",
        lines(f"greedy: {g1} {g2}, P = {n(math.exp(g_logp))}",
              *(f"beam #{k + 1}: {c[3]}, P = {n(math.exp(c[0]))}" for k, c in enumerate(beam2))),
        {"best": tied},  # the most probable sentence(s): several only when they tie
        (f"An exact tie: {' and '.join(tied)} have the same probability, so neither decoder "
         "finds a better sentence; beam search only keeps an equally good alternative."
         if len(tied) > 1 else
         ("Beam search finds a more probable sentence than greedy."
          if best > g_logp + TIE else "Greedy already had the best sentence here.")),
    ))

    g = greedy_decode(model, 2)
    b = beam_search(model, K, 2)
    trace = Trace(
        name="greedy-vs-beam",
        title="Greedy vs beam search",
        section=10,
        inputs=inputs,
        steps=steps,
        result={"greedy": [g1, g2], "greedy_logp": g_logp, "beam": [c[3] for c in beam2],
                "beam_logps": np.array([c[0] for c in beam2])},
        fused={"greedy": list(g.hypothesis.words), "greedy_logp": g.hypothesis.logp,
               "beam": [h.text for h in b.n_best], "beam_logps": np.array([h.logp for h in b.n_best])},
        source=source_of(INPUTS, inputs, "notes"),
        summary="Greedy decoding against beam search (K = 2) on the notes' two-step table.",
    )
    if same_as_defaults(INPUTS, inputs, "first", "after_the", "after_a"):
        example = lecture_beam_example()
        # The printed -1.43 and -1.42 add the notes' stated two-decimal logs correctly (a
        # rounding note, shown in the last step); what is wrong is the conclusion drawn from them.
        trace.errata.append(dataclasses.replace(example.errata[1], kind="claim", id="beam-verdict"))
        steps[0].note += " Filled in as the decoding engine does: " + " ".join(example.choices)
        steps.append(Step(
            "The notes' rounding",
            "round each log to two decimals, then add",
            lines("the cat: −0.92 + (−0.51) = −1.43", "a dog:   −1.20 + (−0.22) = −1.42",
                  f"exact:   log 0.24 = {n(math.log(0.24))} for both"),
            {"exact_both": math.log(0.24)},
            "Rounding log 0.4 and log 0.8 before adding moved the two totals 0.01 apart; the "
            "probabilities 0.4·0.6 and 0.3·0.8 are both exactly 0.24. The notes' sums are right "
            "for the rounded logs they print (a rounding difference, not an error); the error is "
            "the conclusion that \"a dog\" scores higher (see the erratum).",
        ))
    return trace


def draw_inputs(rng: np.random.Generator) -> dict:
    """Fresh inputs: one-decimal first-word probabilities and continuations, K = 2 (or 1, 3)."""
    return {"first": _draw.simplex(rng, 4, 0.1), "after_the": _draw.partial_simplex(rng, 2, 0.1),
            "after_a": _draw.partial_simplex(rng, 2, 0.1),
            "beam_width": int(_draw.choice(rng, [2, 2, 2, 1, 3]))}
