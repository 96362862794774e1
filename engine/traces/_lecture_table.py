"""The §10 "the/a/an/some → cat/dog" table as trace inputs (shared by the decoding traces).

The notes give P(the, a, an, some) = (0.4, 0.3, 0.2, 0.1) for the first word and
P(cat, dog | the) = (0.6, 0.3), P(cat, dog | a) = (0.1, 0.8) for the second. The decoding
engine's :func:`engine.traces.lecture_beam.lecture_beam_example` fills in the rest (each row's remaining
mass goes to ``<other>``, every sentence ends after two words); the traces rebuild the same
table from the student's numbers.
"""

from __future__ import annotations

import numpy as np

from engine.decoding import TableModel
from engine.trace import InputSpec
from engine.traces._common import n
from engine.traces.lecture_beam import ROWS, VOCAB

FIRST = ("the", "a", "an", "some")
SECOND = ("cat", "dog")

TABLE_INPUTS = [
    InputSpec("first", "vector", [0.4, 0.3, 0.2, 0.1], "P(the), P(a), P(an), P(some) at step 1",
              shape=(4,), low=0.0, high=1.0),
    InputSpec("after_the", "vector", [0.6, 0.3], "P(cat | the), P(dog | the); the rest is <other>",
              shape=(2,), low=0.0, high=1.0),
    InputSpec("after_a", "vector", [0.1, 0.8], "P(cat | a), P(dog | a); the rest is <other>",
              shape=(2,), low=0.0, high=1.0),
]


def rows_from(first: np.ndarray, after_the: np.ndarray, after_a: np.ndarray) -> dict:
    """The table rows, checked: the first row must sum to 1, the others to at most 1."""
    if abs(first.sum() - 1.0) > 1e-6:
        raise ValueError(f"input first: sums to {n(first.sum())}, expected probabilities summing to 1")
    for name, row in (("after_the", after_the), ("after_a", after_a)):
        if row.sum() > 1.0 + 1e-9:
            raise ValueError(f"input {name}: sums to {n(row.sum())}, expected at most 1 "
                             "(the rest goes to <other>)")
    rows = {key: dict(value) for key, value in ROWS.items()}
    rows[("<s>",)] = {w: float(p) for w, p in zip(FIRST, first) if p > 0}
    for prev, row in (("the", after_the), ("a", after_a)):
        cont = {w: float(p) for w, p in zip(SECOND, row) if p > 0}
        rest = 1.0 - float(row.sum())
        if rest > 1e-12:
            cont["<other>"] = rest
        rows[(prev,)] = cont
    return rows


def model_from(first: np.ndarray, after_the: np.ndarray, after_a: np.ndarray) -> TableModel:
    return TableModel.from_rows(VOCAB, rows_from(first, after_the, after_a), bos="<s>", eos="</s>")


def log_row(model: TableModel, prev: str) -> np.ndarray:
    """log P(· | prev) over the vocabulary (−inf where P = 0)."""
    return model.log_probs[model.vocab.index(prev)]
