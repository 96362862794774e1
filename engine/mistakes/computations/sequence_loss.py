"""``sequence-loss`` (extra, §12): the cross-entropy of a padded target sequence.

Not a trace: the ``cross-entropy`` trace has no padding. Targets equal to ``<pad>`` are
ignored (PyTorch's ``ignore_index``): they add no loss, and the mean divides by the real
tokens only. The question says which reduction it asks for.
"""

from __future__ import annotations

import numpy as np

from engine.loss import cross_entropy
from engine.mistakes import _ops
from engine.mistakes.slips import Slips
from engine.trace import InputSpec
from engine.traces import _draw
from engine.traces._common import word_index

TRACE = "cross-entropy"
PAD = "<pad>"
INPUTS = [
    InputSpec("vocab", "labels", ["chat", "chien", "<EOS>", PAD], "the vocabulary", shape=("V",)),
    InputSpec("probs", "matrix", [[0.6, 0.2, 0.1, 0.1], [0.1, 0.1, 0.7, 0.1], [0.2, 0.2, 0.2, 0.4]],
              "the model's distribution at each step (rows sum to 1)", shape=("T", "V"),
              low=0.0, high=1.0),
    InputSpec("targets", "labels", ["chat", "<EOS>", PAD], "the reference at each step; <pad> "
              "marks padding", shape=("T",)),
    InputSpec("reduction", "choice", "mean", "how the question combines the steps",
              choices=("mean", "sum")),
]
MISTAKES = ("ce-counts-padding", "ce-sum-not-mean", "ce-mean-not-sum", "ce-log10", "ce-log2",
            "loss-against-prediction", "rounded-intermediates")
PAIRS = (("ce-counts-padding", "ce-log10"), ("ce-counts-padding", "ce-log2"),
         ("ce-counts-padding", "ce-sum-not-mean"), ("ce-counts-padding", "ce-mean-not-sum"))


def draw_inputs(rng: np.random.Generator) -> dict:
    """Three or four steps over four words, the last one or two of them padding."""
    vocab = ["chat", "chien", "<EOS>", PAD]
    T = int(_draw.choice(rng, [3, 4]))
    real = T - int(_draw.choice(rng, [1, 2]))
    targets = [vocab[int(i)] for i in rng.integers(0, 3, size=real)] + [PAD] * (T - real)
    return {"vocab": vocab, "probs": np.array([_draw.simplex(rng, 4, 0.1) for _ in range(T)]),
            "targets": targets, "reduction": str(_draw.choice(rng, ["mean", "sum"]))}


def compute(inp: dict, s: Slips) -> dict:
    vocab, probs, targets, reduction = inp["vocab"], inp["probs"], inp["targets"], inp["reduction"]
    if probs.min() <= 0 or np.any(np.abs(probs.sum(axis=1) - 1) > 1e-6):
        raise ValueError("input probs: expected positive probabilities summing to 1 in every row")
    ids = np.array([word_index(w, vocab, "targets") for w in targets])
    real = np.array([w != PAD for w in targets])
    if s.on("ce-counts-padding"):
        real = np.ones_like(real)
    count = int(real.sum())
    s.fact(count=int(np.sum([w != PAD for w in targets])), T=len(targets))
    nll = _ops.nll_rows(probs, ids, s)
    losses = np.where(real, nll, 0.0)
    mean = reduction == "mean"
    if mean and s.on("ce-sum-not-mean"):
        mean = False
    elif not mean and s.on("ce-mean-not-sum"):
        mean = True
    if not s.ids and count:
        ignore = np.where(real, ids, -100)
        L = float(cross_entropy(np.log(probs), ignore, ignore_index=-100, reduction=reduction))
    else:
        L = float(s.r(losses.sum() / (count if mean else 1))) if count else float("nan")
    return {"losses": losses, "L": L}
