"""``error-cascade`` (§3): teacher forcing vs free running on a table decoder."""

from __future__ import annotations

import numpy as np

from engine.mistakes import _ops
from engine.mistakes.slips import Slips
from engine.traces._common import word_index

TRACE = "error-cascade"
MISTAKES = ("teacher-forcing-fed-prediction", "free-running-fed-reference", "ce-log10", "ce-log2",
            "ce-mean-not-sum", "loss-against-prediction", "rounded-intermediates")
PAIRS = (("ce-log10", "ce-mean-not-sum"), ("ce-log2", "ce-mean-not-sum"),
         ("loss-against-prediction", "ce-mean-not-sum"), ("loss-against-prediction", "ce-log10"))


def compute(inp: dict, s: Slips) -> dict:
    target, vocab, fed, table = inp["target"], inp["vocab"], inp["fed"], inp["table"]
    if fed[:1] != ["<s>"]:
        raise ValueError("input fed: the first row must be the start token <s>")
    y = [word_index(w, vocab, "target") for w in target]
    T = len(target)

    def row(word: str) -> np.ndarray:
        if word not in fed:
            raise ValueError(f"input fed: {word!r} is fed but has no row in the table")
        return table[fed.index(word)]

    forced = ["<s>"] + target[:-1]
    free = ["<s>"]
    for _ in range(T - 1):
        free.append(vocab[int(np.argmax(row(free[-1])))])
    fed_forced = free if s.on("teacher-forcing-fed-prediction") else forced
    fed_free = forced if s.on("free-running-fed-reference") else free
    loss_forced = _ops.nll_rows(np.stack([row(w) for w in fed_forced]), y, s)  # (T,)
    loss_free = _ops.nll_rows(np.stack([row(w) for w in fed_free]), y, s)  # (T,)
    out = {"losses_forced": loss_forced, "losses_free": loss_free,
           "L_forced": _ops.total(loss_forced, s), "L_free": _ops.total(loss_free, s)}
    for t in range(T):
        out[f"loss_forced_{t + 1}"] = loss_forced[t]
        out[f"loss_free_{t + 1}"] = loss_free[t]
    return out
