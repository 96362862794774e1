"""What each attention head of the lab's Transformer does, measured on one example.

For every head of every layer the weights (rows attend, columns are attended) are compared
with a few fixed patterns, and the share of the head's weight each pattern holds is computed:

    cross-attention      ``aligned`` the source position the task copies from (reversal:
                         the anti-diagonal), ``end`` the source EOS, ``same position``
                         column t (the diagonal)
    encoder self         ``self``, ``previous``, ``next``, ``mirror`` (position L − 1 − i,
                         the anti-diagonal), ``end`` (the EOS)
    decoder self         ``self``, ``previous``, ``first`` (the BOS input)

A pattern's share is the mean over rows of the weight on its column (rows where the pattern
names no column are left out); a head that spreads evenly over n columns gives each pattern
about 1/n. The head's label is the pattern with the largest share; a
head whose best share is below :data:`CLEAR` is called ``broad`` and described by its
normalised entropy (1 = uniform over what it may see).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from engine.decoding import beam_search
from engine.lab.tasks import DIGIT0, EOS, TOKENS, _target, expected_alignment, token_labels
from engine.transformer import BOS, Transformer
from engine.transformer.decode import attention_maps, greedy_decode, step_function

KINDS = ("encoder", "decoder", "cross")
KIND_TITLES = {"encoder": "encoder self-attention", "decoder": "decoder masked self-attention",
               "cross": "cross-attention"}
CLEAR = 0.4
"""A head is labelled by a pattern only when that pattern holds at least this share."""
BEAM_WIDTH = 3


@dataclass(frozen=True)
class HeadMap:
    """One head's weights on the example and how they match the patterns.

    Attributes:
        kind: ``"encoder"``, ``"decoder"`` or ``"cross"``; layer, head: 0-based.
        weights: (rows, cols) float64, rows attend to columns.
        shares: pattern name → mean weight on that pattern's column.
        label: the best pattern, or ``"broad"``.
        share: the best pattern's share.
        entropy: mean row entropy / log(number of columns the row may see), in [0, 1].
    """

    kind: str
    layer: int
    head: int
    weights: np.ndarray
    shares: dict[str, float]
    label: str
    share: float
    entropy: float

    @property
    def title(self) -> str:
        return f"{KIND_TITLES[self.kind]}, layer {self.layer + 1}, head {self.head + 1}"


@dataclass(frozen=True)
class HeadsReport:
    """Every head on one example, with the example's labels.

    Attributes:
        task: the task; digits: the example's source digits.
        source: source token labels (digits, then ``</s>``); decoder_in: the decoder's inputs
            (``<s>``, then what it wrote); output: what it wrote; target: the right answer.
        correct: output == target.
        heads: one :class:`HeadMap` per (kind, layer, head), encoder first.
        greedy_logp: log-probability of the greedy output (EOS included).
        beam: the best output of a beam search of width ``beam_width`` through
            :mod:`engine.decoding` (labels, EOS included), and beam_logp its log-probability.
    """

    task: str
    digits: tuple[int, ...]
    source: list[str]
    decoder_in: list[str]
    output: list[str]
    target: list[str]
    correct: bool
    heads: list[HeadMap]
    greedy_logp: float = float("nan")
    beam: list[str] | None = None
    beam_logp: float = float("nan")
    beam_width: int = 3

    def of(self, kind: str) -> list[HeadMap]:
        return [h for h in self.heads if h.kind == kind]

    def best(self, kind: str, pattern: str) -> HeadMap | None:
        """The head of ``kind`` holding the largest share of ``pattern`` (None if none has it)."""
        have = [h for h in self.of(kind) if pattern in h.shares]
        return max(have, key=lambda h: h.shares[pattern]) if have else None


def _entropy(W: np.ndarray, causal: bool) -> float:
    out = []
    for r in range(W.shape[0]):
        n = r + 1 if causal else W.shape[1]
        if n < 2:
            continue
        p = W[r, :n]
        p = p[p > 0]
        out.append(float(-(p * np.log(p)).sum() / np.log(n)))
    return float(np.mean(out)) if out else 0.0


def patterns(kind: str, rows: int, cols: int,
             aligned: Sequence[int | None]) -> dict[str, list[tuple[int, ...]]]:
    """For each pattern of ``kind``, the columns it names in every row (() = none there)."""
    def one(c: int | None) -> tuple[int, ...]:
        return (c,) if c is not None and 0 <= c < cols else ()

    if kind == "cross":
        L = cols - 1                                   # source digits; column L is its EOS
        return {
            "aligned": [one(c) for c in aligned],
            "end": [(L,)] * rows,
            "same position": [one(t) if t < L else () for t in range(rows)],
        }
    if kind == "encoder":
        L = cols - 1
        return {"self": [(i,) for i in range(rows)],
                "previous": [one(i - 1) for i in range(rows)],
                "next": [one(i + 1) for i in range(rows)],
                "mirror": [one(L - 1 - i) if i < L else () for i in range(rows)],
                "end": [(L,)] * rows}
    return {"self": [(t,) for t in range(rows)], "previous": [one(t - 1) for t in range(rows)],
            "first": [(0,)] * rows}


def shares(kind: str, W: np.ndarray, aligned: Sequence[int | None]) -> dict[str, float]:
    """Pattern → mean over the rows it names columns in of the weight on those columns."""
    out = {}
    for name, cols in patterns(kind, W.shape[0], W.shape[1], aligned).items():
        vals = [sum(W[r, c] for c in cs) for r, cs in enumerate(cols) if cs]
        if vals:
            out[name] = float(np.mean(vals))
    return out


def head_maps(maps: dict[str, list[np.ndarray]], aligned: Sequence[int | None]) -> list[HeadMap]:
    """Measure every head of ``maps`` (as :func:`engine.transformer.decode.attention_maps`)."""
    out = []
    for kind in KINDS:
        for layer, heads in enumerate(maps[kind]):
            for h in range(heads.shape[0]):
                W = heads[h]
                got = shares(kind, W, aligned)
                best = max(got, key=got.__getitem__) if got else "broad"
                share = got.get(best, 0.0)
                label = best if share >= CLEAR else "broad"
                out.append(HeadMap(kind, layer, h, W, got, label, share,
                                   _entropy(W, kind == "decoder")))
    return out


def heads_of(model: Transformer, task: str, digits: Sequence[int]) -> HeadsReport:
    """Greedy-decode one sequence and measure every head on what the model wrote; also
    decode it with beam search through :mod:`engine.decoding` for comparison.

    The decoder is fed its own output (as when decoding); its causal mask makes one pass
    over that output give exactly the weights the step-by-step decoding used.
    """
    d = np.asarray(digits, np.int64)
    if d.ndim != 1 or d.size == 0 or d.min() < 0 or d.max() > 9:
        raise ValueError(f"digits: expected a non-empty list of digits 0-9, got {list(digits)}")
    src = np.concatenate([d + DIGIT0, [EOS]])
    tgt = np.concatenate([_target(task, d) + DIGIT0, [EOS]])
    out = greedy_decode(model, src, d.size + 1)[0]
    tgt_in = np.concatenate([[BOS], out[:-1]])
    logp, maps = attention_maps(model, src, tgt_in)
    beam = beam_search(step_function(model, src, TOKENS, EOS), BEAM_WIDTH, d.size + 1).best
    return HeadsReport(task, tuple(int(x) for x in d), token_labels(src), token_labels(tgt_in),
                       token_labels(out), token_labels(tgt), bool(np.array_equal(out, tgt)),
                       head_maps(maps, expected_alignment(task, d)),
                       float(logp[np.arange(out.size), out].sum()), list(beam.words),
                       float(beam.logp), BEAM_WIDTH)
