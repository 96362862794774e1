"""Trace ``error-cascade`` (§3): teacher forcing vs free running on a table decoder.

A decoder small enough to run by hand: its next-word distribution depends only on the word
fed to it, given as one row per fed word. Teacher forcing feeds the reference prefix; free
running feeds each step's argmax. Every loss is −ln P(reference word | what was fed), so the
two timelines agree until free running first feeds a wrong word, and differ from then on.
The default table keeps the two confidences the notes' "The cat sat" story states (60% on the
wrong "A" at step 1; 90% on "sat" after "cat") and fills in the rest of the rows by hand.
"""

from __future__ import annotations

import numpy as np

from engine.loss import cross_entropy
from engine.trace import InputSpec, Step, Trace, source_of
from engine.traces import _draw
from engine.traces._common import lines, n, word_index

INPUTS = [
    InputSpec("target", "labels", ["the", "cat", "sat"], "the reference sentence", shape=("T",)),
    InputSpec("vocab", "labels", ["the", "a", "cat", "dog", "sat", "ran"],
              "the words the decoder can output (columns of the table)", shape=("V",)),
    InputSpec("fed", "labels", ["<s>", "the", "a", "cat", "dog"],
              "the words with a row in the table (<s> = start)", shape=("R",)),
    InputSpec("table", "matrix", [[0.2, 0.6, 0.05, 0.05, 0.05, 0.05],
                                  [0.05, 0.05, 0.6, 0.2, 0.05, 0.05],
                                  [0.05, 0.05, 0.2, 0.5, 0.1, 0.1],
                                  [0.02, 0.02, 0.02, 0.02, 0.9, 0.02],
                                  [0.05, 0.05, 0.05, 0.05, 0.3, 0.5]],
              "P(next word | fed word): one row per fed word, one column per vocab word",
              shape=("R", "V"), low=0.0, high=1.0),
]


def build(target: list[str], vocab: list[str], fed: list[str], table: np.ndarray) -> Trace:
    inputs = {"target": target, "vocab": vocab, "fed": fed, "table": table}
    if fed[:1] != ["<s>"]:
        raise ValueError("input fed: the first row must be the start token <s>")
    sums = table.sum(axis=1)
    bad = np.flatnonzero(np.abs(sums - 1.0) > 1e-6)
    if bad.size:
        raise ValueError(f"input table: the row for {fed[bad[0]]!r} sums to {n(sums[bad[0]])}; "
                         "expected probabilities summing to 1")
    y = [word_index(w, vocab, "target") for w in target]
    T = len(target)

    def row(word: str, why: str) -> np.ndarray:
        if word not in fed:
            raise ValueError(f"input fed: {why} feeds {word!r}, which has no row in the table; "
                             "add a row for it")
        return table[fed.index(word)]

    forced = ["<s>"] + target[:-1]
    free = ["<s>"]
    for _ in range(T - 1):  # free running: feed the argmax of the row just used
        free.append(vocab[int(np.argmax(row(free[-1], "free running")))])
    P_forced = np.stack([row(w, "teacher forcing") for w in forced])  # (T, V)
    P_free = np.stack([row(w, "free running") for w in free])  # (T, V)
    loss_forced = -np.log(P_forced[np.arange(T), y])  # (T,)
    loss_free = -np.log(P_free[np.arange(T), y])  # (T,)

    steps = [Step(
        "The table decoder",
        "P(Yₜ = w | fed word) = table[fed word, w]",
        lines(f"reference: {' '.join(target)}; vocabulary: {', '.join(vocab)}",
              f"rows for: {', '.join(fed)}"),
        {"target": target},
        "The state is just the last word fed, so every number below is one table lookup.",
    )]
    for t in range(T):
        steps.append(Step(
            f"t = {t + 1}: reference \"{target[t]}\"",
            "loss = −ln P(reference | fed)",
            lines(f"teacher forcing feeds {forced[t]:<5} → −ln {n(P_forced[t, y[t]])} = {n(loss_forced[t])}",
                  f"free running feeds   {free[t]:<5} → −ln {n(P_free[t, y[t]])} = {n(loss_free[t])}"
                  + (f"; its next input is the argmax, {free[t + 1]}" if t + 1 < T else "")),
            {f"loss_forced_{t + 1}": loss_forced[t], f"loss_free_{t + 1}": loss_free[t]},
            "Same input, same loss." if forced[t] == free[t] else
            "Different inputs: free running is now scored from a prefix the reference never has.",
        ))
    steps.append(Step(
        "Sum over the sequence",
        "L = Σₜ −ln P(Yₜ | fed)",
        lines(f"teacher forcing: {' + '.join(n(x) for x in loss_forced)} = {n(loss_forced.sum())}",
              f"free running:    {' + '.join(n(x) for x in loss_free)} = {n(loss_free.sum())}"),
        {"L_forced": float(loss_forced.sum()), "L_free": float(loss_free.sum())},
        "Teacher forcing scores each word from the correct history; free running's later terms "
        "also pay for its own earlier mistakes: the error cascade.",
    ))
    ids = np.array(y)
    return Trace(
        name="error-cascade",
        title="Error cascade on a table decoder",
        section=3,
        inputs=inputs,
        steps=steps,
        result={"fed_forced": forced, "fed_free": free, "losses_forced": loss_forced,
                "losses_free": loss_free, "L_forced": float(loss_forced.sum()),
                "L_free": float(loss_free.sum())},
        fused={"losses_forced": cross_entropy(np.log(P_forced), ids, reduction="none"),
               "losses_free": cross_entropy(np.log(P_free), ids, reduction="none"),
               "L_forced": float(cross_entropy(np.log(P_forced), ids, reduction="sum")),
               "L_free": float(cross_entropy(np.log(P_free), ids, reduction="sum"))},
        source=source_of(INPUTS, inputs, "notes+built"),
        summary="A decoder whose next word depends only on the word fed: teacher forcing feeds "
                "the reference, free running its own argmax.",
    )


def draw_inputs(rng: np.random.Generator) -> dict:
    """Fresh inputs: a new table (probabilities in steps of 0.05) whose free run stays in it.

    The start row's best word is "the" or "a" and their rows' best word is "cat" or "dog",
    so whatever free running feeds has a row; each row has a single best word.
    """
    vocab = ["the", "a", "cat", "dog", "sat", "ran"]
    fed = ["<s>", "the", "a", "cat", "dog"]
    best = {"<s>": ("the", "a"), "the": ("cat", "dog"), "a": ("cat", "dog"),
            "cat": ("sat", "ran"), "dog": ("sat", "ran")}
    table = np.zeros((len(fed), len(vocab)))
    for r, word in enumerate(fed):
        while True:
            row = _draw.simplex(rng, len(vocab), 0.05)
            top = np.flatnonzero(row == row.max())
            if top.size == 1 and vocab[int(top[0])] in best[word]:
                break
        table[r] = row
    return {"target": ["the", "cat", "sat"], "vocab": vocab, "fed": fed, "table": table}
