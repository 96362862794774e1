"""Building blocks the computations share: the right step through the engine's own functions,
and each catalogued slip of that step behind a switch of :class:`~engine.mistakes.slips.Slips`.

Matrix products are NumPy's ``@`` (as the engine's projections are); softmax, scoring, loss
and decoding go through ``engine.softmax``, ``engine.scoring``, ``engine.loss`` and
``engine.decoding`` whenever no slip of theirs is on, so the right computation is the
engine's.
"""

from __future__ import annotations

import math

import numpy as np

from engine.loss import cross_entropy
from engine.mistakes.slips import Slips
from engine.softmax import masked_softmax, softmax
from engine.trace import fmt

SOFTMAX_SLIPS = ("softmax-wrong-axis", "no-exp", "no-normalise", "softmax-term-dropped",
                 "zero-score-zero-weight", "rounded-intermediates")
MASK_SLIPS = ("mask-zero", "mask-after-softmax")
LOG_SLIPS = ("ce-log10", "ce-log2")


def show(x) -> str:
    """A number, vector or matrix as the explanations print it (four decimals at most)."""
    return fmt(np.asarray(x, dtype=np.float64), 4)


def scale(d_k: int, s: Slips, d_model: int | None = None) -> float:
    """What the scores are divided by: √d_k, or a slip's stand-in (1, d_k, √d_model).

    Records the facts ``d_k``, ``sqrt_dk`` (and ``d_model``, ``sqrt_dmodel``) for the
    explanations. Under ``rounded-intermediates`` the root itself is rounded (√3 ≈ 1.73).
    """
    s.fact(d_k=d_k, sqrt_dk=show(math.sqrt(d_k)))
    by_dmodel = False
    if d_model is not None:
        s.fact(d_model=d_model, sqrt_dmodel=show(math.sqrt(d_model)))
        by_dmodel = s.on("scale-by-dmodel") and d_model != d_k
    no_scale, by_dk = s.on("no-scale"), s.on("scale-by-dk")
    if no_scale:
        return 1.0
    if by_dk:
        return float(d_k)
    if by_dmodel and d_model is not None:
        return s.r(math.sqrt(d_model))
    return s.r(math.sqrt(d_k))


def weights(scores, s: Slips, axis: int = -1, mask=None) -> np.ndarray:
    """softmax(scores) along ``axis`` (True in ``mask`` = may attend), with the softmax and
    mask slips. Without a slip this is ``engine.softmax.softmax`` / ``masked_softmax``."""
    x = np.asarray(scores, dtype=np.float64)
    flags = {k: s.on(k) for k in SOFTMAX_SLIPS}
    if mask is not None:
        flags.update({k: s.on(k) for k in MASK_SLIPS})
    if not any(flags.values()):
        return softmax(x, axis=axis) if mask is None else masked_softmax(x, mask, axis=axis)
    ax = axis % x.ndim
    if flags["softmax-wrong-axis"] and x.ndim >= 2:
        ax = x.ndim - 2 if ax == x.ndim - 1 else x.ndim - 1
    allowed = np.ones(x.shape, bool) if mask is None else np.broadcast_to(np.asarray(mask, bool), x.shape)
    xm = np.moveaxis(x, ax, -1).copy()
    am = np.moveaxis(allowed, ax, -1).copy()
    after = None
    if flags.get("mask-zero"):
        xm = np.where(am, xm, 0.0)
        am = np.ones_like(am)
    elif flags.get("mask-after-softmax"):
        after, am = am, np.ones_like(am)
    xm = s.r(xm)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        if flags["no-exp"]:
            e = np.where(am, xm, 0.0)
        else:
            e = np.where(am, np.exp(np.where(am, xm, 0.0)), 0.0)
            if flags["zero-score-zero-weight"]:
                e = np.where(xm == 0.0, 0.0, e)
        e = s.r(e)
        if flags["softmax-term-dropped"]:
            w = _merged_ties(e, am, s)
        else:
            Z = s.r(e.sum(axis=-1, keepdims=True))
            w = e if flags["no-normalise"] else np.where(Z != 0, e / np.where(Z != 0, Z, 1.0), 0.0)
    w = s.r(w)
    if after is not None:
        w = np.where(after, w, 0.0)
    return np.moveaxis(w, -1, ax)


def _merged_ties(e: np.ndarray, allowed: np.ndarray, s: Slips) -> np.ndarray:
    """Equal exponentials counted once in each row's sum, their weight then shared equally."""
    out = np.zeros_like(e)
    for idx in np.ndindex(e.shape[:-1]):
        row, ok = e[idx], allowed[idx]
        keys = np.round(row, 9)
        distinct = {float(k): float(x) for k, x, a in zip(keys, row, ok) if a}
        Z = s.r(sum(distinct.values()))
        for j in range(row.size):
            if ok[j] and Z:
                share = np.count_nonzero((keys == keys[j]) & ok)
                out[idx + (j,)] = row[j] / Z / share
    return out


def sum_terms(e) -> str:
    """``1.7813 + 1 + 1``: a row of exponentials written as the sum they make."""
    return " + ".join(show(x) for x in np.ravel(e))


def log(x, s: Slips):
    """ln x, or the wrong logarithm of ``ce-log10`` / ``ce-log2``."""
    x = np.asarray(x, dtype=np.float64)
    if s.on("ce-log10"):
        return np.log10(x)
    if s.on("ce-log2"):
        return np.log2(x)
    return np.log(x)


def nll_rows(P: np.ndarray, ids, s: Slips) -> np.ndarray:
    """−log P[t, y_t] for each row t: the per-step losses (engine cross-entropy on log P),
    with the log-base slips and ``loss-against-prediction``."""
    P = np.asarray(P, dtype=np.float64)
    ids = np.asarray(ids, dtype=np.int64)
    rows = np.arange(P.shape[0])
    against = s.on("loss-against-prediction")
    slip = any([s.on(k) for k in LOG_SLIPS + ("rounded-intermediates",)]) or against
    picked = P[rows, np.argmax(P, axis=1)] if against else P[rows, ids]
    if not slip:
        with np.errstate(divide="ignore"):
            return np.asarray(cross_entropy(np.log(P), ids, reduction="none"), dtype=np.float64)
    return s.r(-log(picked, s))


def total(losses: np.ndarray, s: Slips) -> float:
    """Σ_t L_t, or the mean under ``ce-mean-not-sum``."""
    s.fact(T=int(np.size(losses)))
    if s.on("ce-mean-not-sum"):
        return float(s.r(np.mean(losses)))
    return float(s.r(np.sum(losses)))


def transpose_if_square(W: np.ndarray, s: Slips) -> np.ndarray:
    """``W``, or its transpose under ``transposed-weight`` (only a square W can be misread)."""
    slip = s.on("transposed-weight")
    return W.T if slip and W.shape[0] == W.shape[1] else W
