"""The softmax Jacobian and the vector-Jacobian product it defines (lecture §8, §12).

For α = softmax(s) (one row), ∂α_j/∂s_k = α_j (δ_jk − α_k), i.e.

    J = diag(α) − α αᵀ                      (symmetric; every row and column sums to 0)

and a gradient g = ∂L/∂α reaches the scores as ∂L/∂s = Jᵀ g = α ⊙ (g − α·g). Rows summing
to 0 means adding a constant to every score changes nothing; when α is one-hot (saturated
scores) J = 0 and no gradient gets through — the reason for the 1/√d_k told through gradients.
Masked positions (α_j = 0) have zero rows and columns.
"""

from __future__ import annotations

import numpy as np

from engine._jit import jit
from engine._validate import as_float, shape_str
from engine.softmax import softmax


@jit
def _softmax_vjp_rows(A, G, out):
    """out (R, N) = A ⊙ (G − rowsum(A ⊙ G)) for weights A (R, N) and gradients G (R, N)."""
    R, N = A.shape
    for r in range(R):
        dot = 0.0
        for j in range(N):
            dot += A[r, j] * G[r, j]
        for j in range(N):
            out[r, j] = A[r, j] * (G[r, j] - dot)


@jit
def _softmax_jacobian(a, out):
    """out (N, N) = diag(a) − a aᵀ for one row of weights a (N,)."""
    N = a.shape[0]
    for j in range(N):
        for k in range(N):
            out[j, k] = (a[j] if j == k else 0.0) - a[j] * a[k]


def softmax_jacobian(scores: object) -> np.ndarray:
    """∂softmax(s)/∂s = diag(α) − ααᵀ for one row of scores.

    Args:
        scores: (N,) finite scores (−inf allowed for masked positions).

    Returns:
        (N, N) Jacobian, J[j, k] = ∂α_j/∂s_k.

    Raises:
        ValueError: if scores is not 1-D, is empty or holds NaN / +inf.
    """
    alpha = softmax(scores)
    if alpha.ndim != 1:
        raise ValueError(f"scores: expected shape (N,), got shape {shape_str(alpha.shape)}")
    out = np.empty((alpha.shape[0], alpha.shape[0]), alpha.dtype)
    _softmax_jacobian(alpha, out)
    return out


def softmax_backward(weights: object, grad: object) -> np.ndarray:
    """∂L/∂s from ∂L/∂α through α = softmax(s), row by row, without building J.

    Args:
        weights: softmax outputs α, (..., N) (rows of zeros for fully masked rows are fine).
        grad: ∂L/∂α, same shape.

    Returns:
        ∂L/∂s = α ⊙ (g − Σ_j α_j g_j), same shape.

    Raises:
        ValueError: on shapes that differ, NaN/inf or empty input.
    """
    a = as_float(weights, "weights")
    g = as_float(grad, "grad")
    if a.shape != g.shape or a.ndim == 0:
        raise ValueError(f"grad: expected shape {shape_str(a.shape)} like weights, got shape "
                         f"{shape_str(g.shape)}")
    dt = np.result_type(a, g)
    a2 = np.ascontiguousarray(a.reshape(-1, a.shape[-1]), dtype=dt)
    g2 = np.ascontiguousarray(g.reshape(-1, g.shape[-1]), dtype=dt)
    out = np.empty_like(a2)
    _softmax_vjp_rows(a2, g2, out)
    return out.reshape(a.shape)
