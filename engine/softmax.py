"""Softmax, log-softmax and masked softmax (lecture §8, "Softmax Normalization").

    α_i = exp(s_i / T) / Σ_j exp(s_j / T)

computed stably by subtracting the row maximum first. Masks follow PyTorch's
``scaled_dot_product_attention``: a boolean mask with True = may attend. A row in which
nothing may be attended gets all-zero weights (PyTorch SDPA gives zeros there too, rather
than NaN), so a fully masked query contributes a zero output.
"""

from __future__ import annotations

import math

import numpy as np

from engine._jit import jit
from engine._validate import as_bool, as_float, check_scalar


@jit
def _softmax_rows(x, mask, use_mask, inv_t, out):
    """Row-wise softmax of x (R, N) * inv_t into out (R, N); masked or all -inf rows → 0.

    Uses exp((x_j - max) * inv_t): the shift is taken before the temperature so a tiny T
    cannot overflow x * inv_t to inf (the maximum always maps to exp(0) = 1).
    """
    R, N = x.shape
    for r in range(R):
        m = -np.inf
        for j in range(N):
            if use_mask and not mask[r, j]:
                continue
            if x[r, j] > m:
                m = x[r, j]
        if m == -np.inf:  # nothing may be attended: zero weights, not NaN
            for j in range(N):
                out[r, j] = 0.0
            continue
        s = 0.0
        for j in range(N):
            if use_mask and not mask[r, j]:
                out[r, j] = 0.0
            else:
                d = x[r, j] - m
                e = 1.0 if d == 0.0 else math.exp(d * inv_t)
                out[r, j] = e
                s += e
        for j in range(N):
            out[r, j] = out[r, j] / s


@jit
def _log_softmax_rows(x, inv_t, out):
    """Row-wise log-softmax of x (R, N) * inv_t: (x - max) / T - log Σ exp((x - max) / T)."""
    R, N = x.shape
    for r in range(R):
        m = -np.inf
        for j in range(N):
            if x[r, j] > m:
                m = x[r, j]
        if m == -np.inf:
            for j in range(N):
                out[r, j] = -np.inf
            continue
        s = 0.0
        for j in range(N):
            d = x[r, j] - m
            s += 1.0 if d == 0.0 else math.exp(d * inv_t)
        lse = math.log(s)
        for j in range(N):
            d = x[r, j] - m
            out[r, j] = (0.0 if d == 0.0 else d * inv_t) - lse


def _scores(x: object, name: str) -> np.ndarray:
    """Scores may hold -inf (already masked) but not NaN or +inf."""
    arr = as_float(x, name, finite=False)
    if np.isnan(arr).any() or np.isposinf(arr).any():
        raise ValueError(f"{name}: contains {'NaN' if np.isnan(arr).any() else '+inf'}; expected finite "
                         "numbers (or -inf for excluded positions)")
    return arr


# The kernels only read masks, and numba compiles a read-only array apart from a writable
# one: every mask reaches _softmax_rows read-only (as engine.attention passes its own), so
# softmax, masked_softmax and attention share one compiled copy per dtype.
_NO_MASK = np.broadcast_to(np.zeros((1, 1), np.bool_), (1, 1))


def _rows(arr: np.ndarray, axis: int) -> tuple[np.ndarray, tuple[int, ...]]:
    """Move ``axis`` last and flatten the rest: (R, N) view plus the moved shape."""
    if not -arr.ndim <= axis < arr.ndim:
        raise ValueError(f"axis: {axis} is out of range for an array with {arr.ndim} dimension(s)")
    moved = np.moveaxis(arr, axis, -1)
    return np.ascontiguousarray(moved).reshape(-1, moved.shape[-1]), moved.shape


def softmax(x: object, axis: int = -1, temperature: float = 1.0) -> np.ndarray:
    """Numerically stable softmax along ``axis``.

    Args:
        x: scores, any shape (``-inf`` entries get weight 0).
        axis: the axis that sums to 1.
        temperature: T > 0; scores are divided by T (T < 1 sharpens, T > 1 flattens).

    Returns:
        Weights of the same shape and dtype (float32 stays float32), non-negative, summing to
        1 along ``axis`` (0 for a row that is entirely ``-inf``).
    """
    arr = _scores(x, "x")
    t = check_scalar(temperature, "temperature", low=0.0, low_open=True)
    rows, moved = _rows(arr, axis)
    out = np.empty_like(rows)
    _softmax_rows(rows, _NO_MASK, False, 1.0 / t, out)
    return np.moveaxis(out.reshape(moved), -1, axis)


def log_softmax(x: object, axis: int = -1, temperature: float = 1.0) -> np.ndarray:
    """Numerically stable log-softmax along ``axis`` (``z - logsumexp(z)`` with z = x / T).

    Args:
        x: scores or logits, any shape.
        axis: the axis normalised over.
        temperature: T > 0.

    Returns:
        Log-probabilities, same shape and dtype as ``x``.
    """
    arr = _scores(x, "x")
    t = check_scalar(temperature, "temperature", low=0.0, low_open=True)
    rows, moved = _rows(arr, axis)
    out = np.empty_like(rows)
    _log_softmax_rows(rows, 1.0 / t, out)
    return np.moveaxis(out.reshape(moved), -1, axis)


def masked_softmax(scores: object, mask: object | None, axis: int = -1,
                   temperature: float = 1.0) -> np.ndarray:
    """Softmax over the positions a boolean mask allows.

    Args:
        scores: scores, any shape.
        mask: booleans broadcastable to ``scores`` (True = may attend), or None for no mask.
        axis: the axis that sums to 1.
        temperature: T > 0.

    Returns:
        Weights shaped like ``scores``: exactly 0 where the mask is False; a row with no True
        entry is all zeros (as PyTorch ``scaled_dot_product_attention``).
    """
    arr = _scores(scores, "scores")
    t = check_scalar(temperature, "temperature", low=0.0, low_open=True)
    if mask is None:
        return softmax(arr, axis=axis, temperature=t)
    m = as_bool(mask, "mask")
    try:
        m = np.broadcast_to(m, arr.shape)
    except ValueError:
        raise ValueError(
            f"mask: shape {m.shape} does not broadcast to the scores' shape {arr.shape}"
        ) from None
    rows, moved = _rows(arr, axis)
    mrows, _ = _rows(m, axis)
    mrows = np.broadcast_to(mrows, mrows.shape)      # read-only, as engine.attention's masks
    out = np.empty_like(rows)
    _softmax_rows(rows, mrows, True, 1.0 / t, out)
    return np.moveaxis(out.reshape(moved), -1, axis)
