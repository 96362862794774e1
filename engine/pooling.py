"""Max, average and attention pooling (lecture §9 "Attention-Based Pooling vs Traditional Pooling").

    max pooling        out = max_i V_i                 (one-hot weight on the largest)
    average pooling    out = (1/n) Σ_i V_i             (uniform weights 1/n)
    attention pooling  out = Σ_i α_i V_i,  α = softmax(score(q, K_i))   (a convex combination)

Max and mean are NumPy reductions (nothing to speed up); the weighted sum and the
query-driven variant run in numba kernels. All reduce over the sequence axis, so V (n,) gives
a 0-d array and V (n, d_v) gives (d_v,).
"""

from __future__ import annotations

import math

import numpy as np

from engine._jit import jit
from engine._validate import as_float, check_same_dim, check_scalar, result_dtype, shape_str
from engine.attention import _sdpa, readonly

_SUM_TOL = 1e-6


@jit
def _weighted_sum(V, a, out):
    """out (d_v,) = Σ_i a[i] V[i, :] for V (n, d_v), accumulated in float64."""
    n, d_v = V.shape
    for c in range(d_v):
        acc = 0.0
        for i in range(n):
            acc += a[i] * V[i, c]
        out[c] = acc


def _values(V: object) -> np.ndarray:
    return as_float(V, "V", ndim=(1, 2))


def _axis(arr: np.ndarray, axis: int) -> int:
    if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)) or not -arr.ndim <= axis < arr.ndim:
        raise ValueError(f"axis: {axis!r} is out of range for V of shape {shape_str(arr.shape)}")
    return int(axis)


def max_pool(V: object, axis: int = 0) -> np.ndarray:
    """Max pooling: the largest value along ``axis`` (element-wise per feature).

    Args:
        V: values (n,) or (n, d_v) (any shape is accepted; ``axis`` is reduced).
        axis: the sequence axis to pool over.

    Returns:
        V with ``axis`` removed: a 0-d array for V (n,), (d_v,) for V (n, d_v).

    Raises:
        ValueError: on NaN/inf, empty input or a bad axis.
    """
    v = as_float(V, "V")
    return np.asarray(np.max(v, axis=_axis(v, axis)))


def mean_pool(V: object, axis: int = 0) -> np.ndarray:
    """Average pooling: the mean along ``axis`` (uniform weights 1/n).

    Args:
        V: values (n,) or (n, d_v) (any shape is accepted; ``axis`` is reduced).
        axis: the sequence axis to pool over.

    Returns:
        V with ``axis`` removed, same dtype as V.

    Raises:
        ValueError: on NaN/inf, empty input or a bad axis.
    """
    v = as_float(V, "V")
    return np.asarray(np.mean(v, axis=_axis(v, axis), dtype=np.float64), dtype=v.dtype)


def attention_pool(V: object, weights: object) -> np.ndarray:
    """Attention pooling with given weights: Σ_i α_i V_i.

    Args:
        V: values (n,) or (n, d_v).
        weights: α (n,), non-negative and summing to 1 (within 1e-6).

    Returns:
        0-d array for V (n,), else (d_v,).

    Raises:
        ValueError: on mismatched n, negative weights, weights not summing to 1, NaN/inf or
            empty input.
    """
    v = _values(V)
    n = v.shape[0]
    a = as_float(weights, "weights", shape=(n,))
    if (a < 0).any():
        raise ValueError(f"weights: must be non-negative, got min {float(a.min()):g}")
    total = float(a.sum(dtype=np.float64))
    if abs(total - 1.0) > _SUM_TOL:
        raise ValueError(f"weights: must sum to 1 (within {_SUM_TOL:g}), got sum {total:.9g}")
    dt = result_dtype(v, a)
    v2 = v.reshape(n, -1).astype(dt, copy=False)
    out = np.empty(v2.shape[1], dtype=dt)  # (d_v,)
    _weighted_sum(v2, a.astype(dt, copy=False), out)
    return out.reshape(v.shape[1:])


def attention_pool_query(q: object, K: object, V: object,
                         scale: float | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Attention pooling driven by a query: α = softmax(q · K_i · scale), out = Σ_i α_i V_i.

    Args:
        q: query (d_k,).
        K: keys (n, d_k).
        V: values (n,) or (n, d_v).
        scale: score multiplier, default 1/√d_k; must be > 0.

    Returns:
        ``(out, weights)``: out 0-d for V (n,) else (d_v,); weights (n,).

    Raises:
        ValueError: on wrong or mismatched shapes, NaN/inf, empty input or scale <= 0.
    """
    qq = as_float(q, "q", ndim=1)
    k = as_float(K, "K", ndim=2)
    check_same_dim(k, 1, qq.shape[0], "K", ("n", qq.shape[0]), f"keys need the query's d_k = {qq.shape[0]}")
    v = _values(V)
    check_same_dim(v, 0, k.shape[0], "V", (k.shape[0],) + (("d_v",) if v.ndim == 2 else ()),
                   f"one value per key, n = {k.shape[0]}")
    sc = 1.0 / math.sqrt(qq.shape[0]) if scale is None else check_scalar(
        scale, "scale", low=0.0, low_open=True)
    dt = result_dtype(qq, k, v)
    n = k.shape[0]
    v3 = v.reshape(1, n, -1).astype(dt)
    out = np.empty((1, 1, v3.shape[2]), dtype=dt)
    w = np.empty((1, 1, n), dtype=dt)
    _sdpa(readonly(qq.reshape(1, 1, -1).astype(dt)), readonly(k.reshape(1, n, -1).astype(dt)),
          readonly(v3), readonly(np.ones((1, 1, 1), np.bool_)), False, sc, out, w)
    return out.reshape(v.shape[1:]), w.reshape(n)
