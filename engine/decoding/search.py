"""Greedy decoding and beam search (lecture §10), with Hugging Face ``generate`` semantics.

Greedy: ``y_t = argmax_w P(w | y_<t)`` until EOS or ``max_length``.

Beam search follows ``transformers``' ``BeamSearchScorer`` (``num_beams = K``):

1. every live hypothesis h (at most K) is extended by every token w:
   ``cum(h + w) = cum(h) + log P(w | h)`` — a (K, V) score matrix;
2. the 2K best candidates by ``cum`` are ranked (a heap; no full sort);
3. walking the ranking: a candidate ending in EOS with rank < K goes to the *finished pool*
   with score ``cum / lp(L)``; the pool keeps the K best (a newcomer must beat the worst);
   an EOS candidate ranked >= K is dropped; the first K non-EOS candidates are the new beam;
4. stop when early stopping says so (below), when nothing can be extended, or after
   ``max_length`` steps — then every live hypothesis joins the pool as it is (unfinished).

Length normalisation (``length_penalty``), with L = generated tokens including EOS, BOS not
counted (HF's ``generated_len``):

- ``None``: score = Σ log p.
- ``("hf", α)``: score = Σ log p / L^α (HF ``length_penalty=α``; α = 1 is the mean log-prob).
- ``("gnmt", α)``: score = Σ log p / lp(L), lp(L) = (5 + L)^α / 6^α (Wu et al. 2016, GNMT,
  eq. 14; its coverage penalty needs attention weights and is not included).

Early stopping (HF's ``early_stopping``): ``True`` (default) stops as soon as K finished
hypotheses exist; ``False`` stops when the pool is full and the best candidate of the step,
normalised at the current length, cannot beat the worst finished score (HF's heuristic);
``"never"`` stops only when no live hypothesis can beat it at any length <= ``max_length``.
With K = 1 and ``True``, beam search is greedy decoding.

Ties. ``log 0.4 + log 0.6`` and ``log 0.3 + log 0.8`` (both log 0.24) differ by one rounding
unit, so exact float order would be decided by rounding noise. Scores within ``tie_tol``
(default 1e-9) of the best score of their group count as equal; equal candidates are ordered
by the parent's beam position (better first), then by token id (lower first); equal finished
hypotheses by the time they entered the pool (earlier first). Every such tie is reported.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from engine._validate import as_float, check_positive_int, check_scalar
from engine.decoding._kernels import _beam_window, _tie_groups
from engine.decoding.models import FunctionModel, StepModel, TableModel, check_log_probs, check_model
from engine.decoding.results import (
    BeamResult,
    BeamStep,
    Candidate,
    GreedyResult,
    GreedyStep,
    Hypothesis,
    Tie,
)

TIE_TOL = 1e-9
CANDIDATE_TIE_RULE = ("scores within {tol:g} count as equal; tied candidates are ordered by their "
                      "parent's position in the beam (better first), then by token id (lower first)")
POOL_TIE_RULE = ("scores within {tol:g} count as equal; tied finished hypotheses are ordered by when "
                 "they entered the finished pool (earlier first, i.e. by the candidate ranking)")


# --------------------------------------------------------------------------- length penalty

def check_length_penalty(length_penalty: object) -> tuple[str, float] | None:
    """``None``, ``("hf", α)`` or ``("gnmt", α)`` with finite α; anything else → ValueError."""
    if length_penalty is None:
        return None
    if (not isinstance(length_penalty, (tuple, list)) or len(length_penalty) != 2
            or length_penalty[0] not in ("hf", "gnmt")):
        raise ValueError("length_penalty: expected None, ('hf', alpha) or ('gnmt', alpha), got "
                         f"{length_penalty!r}")
    return (str(length_penalty[0]), check_scalar(length_penalty[1], "length_penalty alpha"))


def length_penalty_factor(length: int, length_penalty: object) -> float:
    """lp(L): 1 without a penalty, L^α for ``("hf", α)``, (5 + L)^α / 6^α for ``("gnmt", α)``.

    Args:
        length: L, generated tokens including EOS (>= 1).
        length_penalty: None, ``("hf", α)`` or ``("gnmt", α)``.
    """
    lpen = check_length_penalty(length_penalty)
    L = check_positive_int(length, "length")
    if lpen is None:
        return 1.0
    kind, alpha = lpen
    return float(L) ** alpha if kind == "hf" else ((5.0 + L) / 6.0) ** alpha


def length_normalised_score(logp: float, length: int, length_penalty: object) -> float:
    """Score of a hypothesis: Σ log p / lp(L) (see :func:`length_penalty_factor`)."""
    return float(logp) / length_penalty_factor(length, length_penalty)


# --------------------------------------------------------------------------- shared helpers

def _tie_order(scores: np.ndarray, keys: np.ndarray, tol: float) -> tuple[np.ndarray, np.ndarray]:
    """Order by score (desc) with ties within ``tol`` broken by ``keys`` (asc); group ids too."""
    if scores.size == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    o = np.lexsort((keys, -scores))
    gid = _tie_groups(np.ascontiguousarray(scores[o]), tol)
    o2 = np.lexsort((keys[o], gid))
    return o[o2], gid[o2]


def _stepper(model: StepModel):
    """model.step, with the output checked unless the model checks it itself."""
    V = len(model.vocab)
    if isinstance(model, TableModel) or (isinstance(model, FunctionModel) and model.check):
        return model.step

    def checked(state: Any, token: int | None) -> tuple[np.ndarray, Any]:
        lp, new_state = model.step(state, token)
        return check_log_probs(lp, V), new_state

    return checked


def _common(model: object, max_length: object, tie_tol: object) -> tuple[StepModel, int, float]:
    m = check_model(model)
    return (m, check_positive_int(max_length, "max_length"),
            check_scalar(tie_tol, "tie_tol", low=0.0))


def top_candidates(cum_logps: object, log_probs: object, n: int, *,
                   tie_tol: float = TIE_TOL) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One beam step's selection: the n best extensions, without a full sort.

    Args:
        cum_logps: (K,) cumulative log-probs of the live hypotheses, best first.
        log_probs: (K, V) next-token log-probs of each hypothesis (``-inf`` allowed).
        n: how many candidates to return (beam search uses 2K).
        tie_tol: scores within this are ordered by (parent, token) instead of by value.

    Returns:
        ``(parents, tokens, scores)``, each (m,) with m = min(n, finite candidates), best
        first; ``scores[i] = cum_logps[parents[i]] + log_probs[parents[i], tokens[i]]``.
    """
    cum = as_float(cum_logps, "cum_logps", ndim=1, dtype=np.float64)
    K = cum.size
    lp = as_float(log_probs, "log_probs", shape=(K, "V"), dtype=np.float64, finite=False)
    if not lp.max() < np.inf:  # one pass: the max is NaN or +inf when any entry is
        raise ValueError("log_probs: contains NaN or +inf; expected log-probabilities (-inf allowed)")
    n = check_positive_int(n, "n")
    tol = check_scalar(tie_tol, "tie_tol", low=0.0)
    idx, val = _beam_window(cum, lp, n, tol)
    order, _ = _tie_order(val, idx, tol)
    idx, val = idx[order][:n], val[order][:n]
    V = lp.shape[1]
    return idx // V, idx % V, val


# --------------------------------------------------------------------------- greedy

def greedy_decode(model: StepModel, max_length: int, *, tie_tol: float = TIE_TOL,
                  top: int = 5) -> GreedyResult:
    """Greedy decoding: ``y_t = argmax_w log P(w | y_<t)`` until EOS or ``max_length``.

    Args:
        model: a :class:`~engine.decoding.models.StepModel` (V words).
        max_length: the most tokens to generate (EOS included), >= 1.
        tie_tol: log-probs within this of the maximum tie; the lowest token id wins.
        top: how many runners-up each :class:`GreedyStep` records.

    Returns:
        :class:`GreedyResult`: the hypothesis (tokens (L,), logp, ...), one step per token and
        the stop reason (``"eos"`` or ``"max-length"``).
    """
    model, max_length, tol = _common(model, max_length, tie_tol)
    top = check_positive_int(top, "top")
    step = _stepper(model)
    vocab, eos = tuple(model.vocab), model.eos_token
    lp, state = step(model.initial_state, model.bos_token)  # (V,)
    tokens: list[int] = []
    logps: list[float] = []
    steps: list[GreedyStep] = []
    reason = "max-length"
    for t in range(1, max_length + 1):
        tied = np.flatnonzero(lp >= lp.max() - tol)  # the maximum and anything tied with it
        j = int(tied[0])
        best = np.argsort(-lp, kind="stable")[:top]
        tokens.append(j)
        logps.append(float(lp[j]))
        steps.append(GreedyStep(t, j, vocab[j], float(lp[j]), math.fsum(logps),
                                tuple((int(i), vocab[i], float(lp[i])) for i in best),
                                tuple(int(i) for i in tied) if tied.size > 1 else ()))
        if j == eos:
            reason = "eos"
            break
        if t < max_length:
            lp, state = step(state, j)
    total = math.fsum(logps)
    hyp = Hypothesis(tuple(tokens), tuple(vocab[i] for i in tokens), total, total, len(tokens),
                     reason == "eos", tuple(logps))
    return GreedyResult(hyp, tuple(steps), reason)


# --------------------------------------------------------------------------- beam search

@dataclass
class _Live:
    """A live hypothesis; its next-token log-probs are computed lazily from (state, token)."""

    tokens: tuple[int, ...]
    logps: tuple[float, ...]
    cum: float
    state: Any
    last: int | None
    next_lp: np.ndarray | None = None


class _Pool:
    """The finished pool: the K best finished hypotheses, tie-ordered by entry time."""

    def __init__(self, K: int, tol: float) -> None:
        self.K, self.tol = K, tol
        self.items: list[tuple[Hypothesis, int]] = []
        self.seq = 0

    def add(self, hyp: Hypothesis) -> tuple[bool, Hypothesis | None]:
        """Insert; returns (was it kept, the hypothesis evicted if any)."""
        self.items.append((hyp, self.seq))
        self.seq += 1
        scores = np.array([h.score for h, _ in self.items])
        seqs = np.array([s for _, s in self.items])
        order, _ = _tie_order(scores, seqs, self.tol)
        self.items = [self.items[i] for i in order]
        if len(self.items) <= self.K:
            return True, None
        out, _ = self.items.pop()
        return out is not hyp, out

    @property
    def hyps(self) -> tuple[Hypothesis, ...]:
        return tuple(h for h, _ in self.items)

    def full(self) -> bool:
        return len(self.items) >= self.K


def _hyp(live: _Live, vocab: tuple[str, ...], lpen: tuple[str, float] | None, finished: bool) -> Hypothesis:
    L = len(live.tokens)
    return Hypothesis(live.tokens, tuple(vocab[i] for i in live.tokens), live.cum,
                      live.cum / length_penalty_factor(L, lpen), L, finished, live.logps)


def _ties(t: int, where: str, members: list[tuple[tuple[int, ...], float]], gid: np.ndarray,
          statuses: list[str], vocab: tuple[str, ...], rule: str) -> tuple[Tie, ...]:
    out = []
    for g in np.unique(gid):
        pos = np.flatnonzero(gid == g)
        if pos.size < 2:
            continue
        seqs = tuple(members[i][0] for i in pos)
        out.append(Tie(t, where, seqs, tuple(tuple(vocab[k] for k in s) for s in seqs),
                       tuple(members[i][1] for i in pos), rule,
                       len({statuses[i] for i in pos}) > 1))
    return tuple(out)


def beam_search(model: StepModel, beam_width: int, max_length: int, *,
                length_penalty: tuple[str, float] | None = None,
                early_stopping: bool | str = True, n_best: int | None = None,
                record: str = "ranked", tie_tol: float = TIE_TOL) -> BeamResult:
    """Beam search with width K, an EOS-finished pool, length normalisation and a full record.

    Args:
        model: a :class:`~engine.decoding.models.StepModel` (V words).
        beam_width: K >= 1 live hypotheses (and at most K finished ones).
        max_length: the most tokens to generate (EOS included), >= 1.
        length_penalty: ``None``, ``("hf", α)`` or ``("gnmt", α)``; see the module docstring.
        early_stopping: ``True``, ``False`` or ``"never"`` (Hugging Face's meanings).
        n_best: how many finished hypotheses to return (default: all, at most K).
        record: ``"ranked"`` records each step's 2K-candidate window (plus ties at its edge);
            ``"all"`` ranks and records every finite candidate (K·V of them — small
            vocabularies only, e.g. to draw the whole tree).
        tie_tol: scores within this tie; see "Ties" in the module docstring.

    Returns:
        :class:`BeamResult` with ``n_best`` (best first), one :class:`BeamStep` per step
        (candidates with rank, cum_logp, score, status), the ties and the stop reason.
    """
    model, max_length, tol = _common(model, max_length, tie_tol)
    K = check_positive_int(beam_width, "beam_width")
    lpen = check_length_penalty(length_penalty)
    if early_stopping not in (True, False, "never") or not isinstance(early_stopping, (bool, str)):
        raise ValueError(f"early_stopping: expected True, False or 'never', got {early_stopping!r}")
    if n_best is not None:
        n_best = check_positive_int(n_best, "n_best")
    if record not in ("ranked", "all"):
        raise ValueError(f"record: expected 'ranked' or 'all', got {record!r}")
    step = _stepper(model)
    vocab, eos, V = tuple(model.vocab), model.eos_token, len(model.vocab)

    live = [_Live((), (), 0.0, model.initial_state, model.bos_token)]
    pool = _Pool(K, tol)
    steps: list[BeamStep] = []
    finalized: tuple[Hypothesis, ...] = ()
    reason = "max-length"
    for t in range(1, max_length + 1):
        for h in live:  # the model runs once per surviving hypothesis
            if h.next_lp is None:
                h.next_lp, h.state = step(h.state, h.last)
        cum = np.array([h.cum for h in live])  # (K_live,)
        LP = np.stack([h.next_lp for h in live if h.next_lp is not None])  # (K_live, V): all set above
        window = 2 * K if record == "ranked" else LP.size
        idx, val = _beam_window(cum, LP, window, tol)
        order, gid = _tie_order(val, idx, tol)
        idx, val = idx[order], val[order]
        parents, toks = idx // V, idx % V
        statuses: list[str] = []
        new_live: list[_Live] = []
        evicted: list[Hypothesis] = []
        for r in range(idx.size):
            b, j = int(parents[r]), int(toks[r])
            if r >= 2 * K:
                statuses.append("eos-dropped" if j == eos else "pruned")
            elif j == eos:
                if r >= K:  # HF: an EOS candidate outside the top K is not a finished beam
                    statuses.append("eos-dropped")
                    continue
                p = live[b]
                done = _Live(p.tokens + (j,), p.logps + (float(LP[b, j]),), float(val[r]), None, j)
                kept, out = pool.add(_hyp(done, vocab, lpen, True))
                statuses.append("finished" if kept else "eos-dropped")
                if out is not None and kept:
                    evicted.append(out)
            elif len(new_live) < K:
                p = live[b]
                new_live.append(
                    _Live(p.tokens + (j,), p.logps + (float(LP[b, j]),), float(val[r]), p.state, j)
                )
                statuses.append("beam")
            else:
                statuses.append("pruned")
        cands = tuple(
            Candidate(t, int(parents[r]), live[parents[r]].tokens, int(toks[r]), vocab[toks[r]],
                      float(LP[parents[r], toks[r]]), float(val[r]),
                      float(val[r]) / length_penalty_factor(t, lpen), r, statuses[r])
            for r in range(idx.size)
        )
        members = [(c.tokens, c.cum_logp) for c in cands]
        step_ties = _ties(t, "candidates", members, gid, statuses, vocab, CANDIDATE_TIE_RULE.format(tol=tol))
        live = new_live
        steps.append(BeamStep(t, cands, tuple(_hyp(h, vocab, lpen, False) for h in live), pool.hyps,
                              tuple(evicted), step_ties))
        if pool.full():
            if early_stopping is True:
                reason = "pool-full"
                break
            best = float(val[0])
            lengths = (t,) if early_stopping is False else (t, max_length)
            bound = max(best / length_penalty_factor(L, lpen) for L in lengths)
            if pool.hyps[-1].score >= bound:
                reason = "no-better-live"
                break
        if not live:  # every candidate was impossible (-inf) or ended with EOS
            reason = "no-live"
            break
    else:  # max_length reached: the live hypotheses join the pool unfinished (HF finalize)
        added = []
        for h in live:
            hyp = _hyp(h, vocab, lpen, False)
            if pool.add(hyp)[0]:
                added.append(hyp)
        finalized = tuple(added)

    final = pool.hyps
    scores = np.array([h.score for h in final])
    _, gid = _tie_order(scores, np.arange(len(final)), tol)
    ties = _ties(steps[-1].t if steps else 0, "n-best", [(h.tokens, h.score) for h in final], gid,
                 ["first"] + ["other"] * (len(final) - 1), vocab, POOL_TIE_RULE.format(tol=tol))
    return BeamResult(final[: n_best or K], tuple(steps), ties, reason, K, max_length, lpen,
                      early_stopping, tol, finalized)
