"""Models that give next-token log-probabilities: the :class:`StepModel` protocol.

A decoder (greedy, beam search, sampling) needs one thing from a model: given what has been
generated so far, the log-probability of every vocabulary word coming next. Here that is a
step function, the same shape as an RNN decoder cell::

    log_probs, new_state = model.step(state, token)      # log_probs: (V,)

The decoders call it like this (``model.initial_state`` and ``model.bos_token`` start it)::

    log_probs, state = model.step(model.initial_state, model.bos_token)   # P(Y_1 | BOS)
    y_1 = pick(log_probs)
    log_probs, state = model.step(state, y_1)                             # P(Y_2 | BOS, y_1)
    ...

Rules a model must keep:

- ``log_probs`` is a 1-D array of length ``V = len(model.vocab)``: natural-log probabilities
  (``exp`` sums to 1; ``-inf`` = impossible). Pass logits through ``engine.softmax.log_softmax``.
- ``step`` must not modify ``state`` in place: beam search calls ``step`` on the same state
  once for every surviving continuation of a hypothesis.
- ``vocab`` holds the words (index = token id) so traces can print words.
- ``eos_token`` is the id that ends a sentence, or ``None`` when sentences end only at the
  maximum length; ``bos_token`` is the id fed at the first step (``None`` is passed as is
  when the model needs no start token, e.g. a unigram table).

Two implementations: :class:`TableModel` (an n-gram probability table, like the lecture's
"the/a/an/some → cat/dog" example) and :class:`FunctionModel` (wraps any
``step_fn(state, token) -> (log_probs, new_state)``, e.g. the lab's seq2seq decoder).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

import numpy as np

from engine._validate import as_float, check_positive_int

#: a row of a table "sums to 1" when it is within this of 1
ROW_SUM_TOL = 1e-6
#: a step's log-probs are "normalised" when |logsumexp| is within this of 0
LOGSUMEXP_TOL = 1e-4


@runtime_checkable
class StepModel(Protocol):
    """Anything the decoders can drive; see the module docstring for the contract."""

    vocab: tuple[str, ...]
    bos_token: int | None
    eos_token: int | None
    initial_state: Any

    def step(self, state: Any, token: int | None) -> tuple[np.ndarray, Any]:
        """Feed ``token`` in ``state``; return next-token log-probs (V,) and the new state."""
        ...


def _vocab(vocab: Sequence[str] | int) -> tuple[str, ...]:
    if isinstance(vocab, (int, np.integer)) and not isinstance(vocab, bool):
        return tuple(str(i) for i in range(check_positive_int(vocab, "vocab")))
    if isinstance(vocab, str) or not isinstance(vocab, Sequence):
        raise ValueError(f"vocab: expected a list of words or a vocabulary size, got {vocab!r}")
    words = tuple(vocab)
    if not words:
        raise ValueError("vocab: is empty; expected at least one word")
    if not all(isinstance(w, str) for w in words):
        raise ValueError("vocab: expected every entry to be a string (the word for that token id)")
    if len(set(words)) != len(words):
        dup = next(w for w in words if words.count(w) > 1)
        raise ValueError(f"vocab: the word {dup!r} appears twice; expected unique words")
    return words


def token_id(token: int | str | None, vocab: tuple[str, ...], name: str) -> int | None:
    """A token given as an id or a word → its id in ``vocab`` (``None`` stays ``None``)."""
    if token is None:
        return None
    if isinstance(token, str):
        if token not in vocab:
            raise ValueError(f"{name}: the word {token!r} is not in the vocabulary; expected one of its "
                             f"{len(vocab)} words")
        return vocab.index(token)
    if isinstance(token, bool) or not isinstance(token, (int, np.integer)):
        raise ValueError(f"{name}: expected a token id or a word, got {token!r}")
    if not 0 <= token < len(vocab):
        raise ValueError(f"{name}: token id {int(token)} is outside the vocabulary; expected 0 <= id < "
                         f"{len(vocab)}")
    return int(token)


def check_log_probs(lp: object, V: int, where: str = "model.step") -> np.ndarray:
    """Return the model's output as float64 (V,), or raise if it is not a log-distribution."""
    arr = np.asarray(lp, dtype=np.float64)
    if arr.shape != (V,):
        raise ValueError(f"{where}: returned log-probs of shape {arr.shape}; expected shape ({V},), one per "
                         "vocabulary word")
    if np.isnan(arr).any() or np.isposinf(arr).any():
        raise ValueError(f"{where}: returned NaN or +inf log-probs; expected log-probabilities (<= 0, -inf "
                         "allowed)")
    m = arr.max()
    lse = m + math.log(np.exp(arr - m).sum()) if m > -np.inf else -np.inf
    if not abs(lse) <= LOGSUMEXP_TOL:
        raise ValueError(
            f"{where}: returned log-probs whose probabilities sum to {math.exp(lse):.6g}; "
            "expected 1 (apply log_softmax to logits first)"
        )
    return arr


class TableModel:
    """An n-gram probability table over a small vocabulary.

    ``probs[c_1, ..., c_{n-1}, w] = P(w | c_1 ... c_{n-1})`` with the context being the last
    ``n - 1`` tokens, padded on the left with ``bos`` at the start. Order 1 (unigram) gives
    the same distribution at every step; order 2 (bigram) with ``bos`` gives the lecture's
    two-step example. The state is the tuple of the last ``n - 1`` tokens.

    Args:
        vocab: the words, index = token id.
        probs: probabilities, shape ``(V,) * n`` with ``n >= 1``; every row (last axis) must
            be non-negative and sum to 1 within ``1e-6``.
        bos: start token (word or id); required when ``n >= 2``.
        eos: end token (word or id) or None.
    """

    def __init__(self, vocab: Sequence[str], probs: object, *, bos: int | str | None = None,
                 eos: int | str | None = None) -> None:
        self.vocab = _vocab(vocab)
        V = len(self.vocab)
        table = as_float(probs, "probs", dtype=np.float64)
        if table.ndim < 1 or any(s != V for s in table.shape):
            raise ValueError(
                f"probs: expected shape (V,), (V, V) or (V, V, V) with V = {V} (the vocabulary size), got "
                f"{table.shape}"
            )
        if (table < 0).any():
            raise ValueError("probs: contains negative values; expected probabilities in [0, 1]")
        sums = table.sum(axis=-1)
        bad = np.argwhere(np.abs(sums - 1.0) > ROW_SUM_TOL)
        if bad.size:
            ctx = tuple(self.vocab[i] for i in bad[0])
            raise ValueError(
                f"probs: the row for context {ctx} sums to {sums[tuple(bad[0])]:.6g}; expected 1 (within "
                f"{ROW_SUM_TOL:g})"
            )
        self.order = table.ndim
        self.bos_token = token_id(bos, self.vocab, "bos")
        self.eos_token = token_id(eos, self.vocab, "eos")
        if self.order >= 2 and self.bos_token is None:
            raise ValueError(f"bos: a table of order {self.order} needs a start token to pad the first "
                             "context; got None")
        self.probs = table  # (V,) * n
        with np.errstate(divide="ignore"):
            self.log_probs = np.log(table)  # (V,) * n, -inf where P = 0
        # the state before BOS is fed: n - 2 BOS tokens, so feeding BOS completes the context
        self.initial_state: tuple[int, ...] = (self.bos_token,) * max(self.order - 2, 0)  # type: ignore[assignment]

    @classmethod
    def from_rows(cls, vocab: Sequence[str], rows: Mapping[tuple[str, ...], Mapping[str, float]], *,
                  bos: str | None = None, eos: str | None = None) -> TableModel:
        """Build a table from the contexts you know; every other context ends the sentence.

        Args:
            vocab: the words.
            rows: ``{context: {word: probability}}`` where every context is a tuple of
                ``n - 1`` words (``()`` for a unigram table). Words left out of a row get 0.
            bos, eos: start and end words. A context not in ``rows`` gets probability 1 on
                ``eos`` (so an unspecified continuation stops); without ``eos`` every context
                must be given.

        Returns:
            The :class:`TableModel` of order ``n``.
        """
        words = _vocab(vocab)
        if not rows:
            raise ValueError("rows: is empty; expected at least one {context: {word: probability}} row")
        lengths = {len(c) if isinstance(c, tuple) else -1 for c in rows}
        if len(lengths) != 1 or -1 in lengths:
            raise ValueError("rows: expected every context to be a tuple of the same number of words")
        order = lengths.pop() + 1
        V = len(words)
        eos_id = token_id(eos, words, "eos")
        table = np.zeros((V,) * order)
        if eos_id is not None:
            table[..., eos_id] = 1.0
        elif len(rows) != V ** (order - 1):
            raise ValueError("rows: without an eos token every context must be given; "
                             f"expected {V ** (order - 1)} rows, got {len(rows)}")
        for ctx, row in rows.items():
            idx = tuple(token_id(w, words, f"rows context {ctx}") for w in ctx)
            table[idx] = 0.0
            for w, p in row.items():
                table[idx + (token_id(w, words, f"rows[{ctx}]"),)] = p
        return cls(words, table, bos=bos, eos=eos)

    def context(self, state: tuple[int, ...], token: int | None) -> tuple[int, ...]:
        """The ``n - 1`` tokens that index the next row after feeding ``token``."""
        if self.order == 1:
            return ()
        assert token is not None, "a table of order >= 2 has a start token (checked when built)"
        return (*state, token)[-(self.order - 1):]

    def step(self, state: tuple[int, ...], token: int | None) -> tuple[np.ndarray, tuple[int, ...]]:
        """Log-probs (V,) of the next token after ``token``; the new state is the context."""
        ctx = self.context(state, token)
        return self.log_probs[ctx], ctx

    def __repr__(self) -> str:
        return (f"TableModel(order={self.order}, V={len(self.vocab)}, bos={self.bos_token}, "
                f"eos={self.eos_token})")


class FunctionModel:
    """Wrap ``step_fn(state, token) -> (log_probs (V,), new_state)`` as a :class:`StepModel`.

    Args:
        step_fn: the step function; must not modify ``state`` in place.
        initial_state: the state before the first token (e.g. the encoder's context vector).
        bos_token: the first token fed (id or word), e.g. ``<sos>``; may be None.
        vocab: the words (index = id) or the vocabulary size (words become "0", "1", ...).
        eos_token: the end-of-sentence token (id or word) or None.
        check: validate every returned log-prob vector (shape, NaN, normalisation).
    """

    def __init__(self, step_fn: Callable[[Any, int | None], tuple[np.ndarray, Any]], initial_state: Any,
                 bos_token: int | str | None, *, vocab: Sequence[str] | int,
                 eos_token: int | str | None = None, check: bool = True) -> None:
        if not callable(step_fn):
            raise ValueError("step_fn: expected a function (state, token) -> (log_probs, new_state), got "
                             f"{step_fn!r}")
        self.vocab = _vocab(vocab)
        self.step_fn = step_fn
        self.initial_state = initial_state
        self.bos_token = token_id(bos_token, self.vocab, "bos_token")
        self.eos_token = token_id(eos_token, self.vocab, "eos_token")
        self.check = check

    def step(self, state: Any, token: int | None) -> tuple[np.ndarray, Any]:
        """Call ``step_fn`` and return its log-probs as float64 (V,) and the new state."""
        out = self.step_fn(state, token)
        if not (isinstance(out, tuple) and len(out) == 2):
            raise ValueError("step_fn: expected it to return a pair (log_probs, new_state)")
        lp, new_state = out
        if self.check:
            lp = check_log_probs(lp, len(self.vocab), "step_fn")
        return np.asarray(lp, dtype=np.float64), new_state

    def __repr__(self) -> str:
        return f"FunctionModel(V={len(self.vocab)}, bos={self.bos_token}, eos={self.eos_token})"


def check_model(model: object) -> StepModel:
    """Reject objects that do not follow the :class:`StepModel` protocol (one-line error)."""
    if not isinstance(model, StepModel):
        missing = [
            a for a in ("vocab", "bos_token", "eos_token", "initial_state", "step") if not hasattr(model, a)
        ]
        raise ValueError("model: expected a StepModel (TableModel, FunctionModel, ...); missing "
                         f"{', '.join(missing)}")
    return model


def score_sequence(model: StepModel, tokens: Sequence[int | str]) -> tuple[float, list[float]]:
    """Σ log P(y_t | y_<t) of a generated sequence (BOS excluded; include EOS if it ended).

    Args:
        model: a :class:`StepModel`.
        tokens: the generated tokens (ids or words), length L.

    Returns:
        ``(total, per_token)`` with ``per_token`` of length L.
    """
    check_model(model)
    ids = [token_id(t, tuple(model.vocab), f"tokens[{i}]") for i, t in enumerate(tokens)]
    lp, state = model.step(model.initial_state, model.bos_token)
    per: list[float] = []
    for i, t in enumerate(ids):
        per.append(float(lp[t]))
        if i + 1 < len(ids):
            lp, state = model.step(state, t)
    return math.fsum(per), per
