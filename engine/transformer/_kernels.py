"""Numba kernels of the Transformer: the few primitives every layer is made of.

Each kernel works on whole batches laid out as rows, one token per row (B·L, width), and is
compiled once per dtype (float64 or float32); sums run in float64 locally. Kept deliberately
few and plain, because every kernel's first compile costs the student start-up time:

    _embed / _embed_backward             X = E[token] · √d + PE[position]
    _linear / _linear_backward           Y = X W + b   (ReLU or a residual add fused in;
                                         one NumPy BLAS product over all rows, and
    _add_bias                            one pass for the bias, ReLU and residual add)
    _layernorm / _layernorm_backward     PyTorch's LayerNorm, ε = 1e-5, biased variance (row
                                         sums vectorised: reassociated, inputs finite; NumPy's
                                         error model, so divisions carry no zero checks)
    _softmax / _softmax_backward         the attention weights' masked softmax, row by row
                                         (the products around it are NumPy's batched matmul)

Cross-entropy is :mod:`engine.loss`'s; Adam with clipping is :mod:`engine.seq2seq`'s.
"""

from __future__ import annotations

import math

import numpy as np

from engine._jit import jit

LN_EPS = 1e-5  # nn.LayerNorm's default

# modes of _linear and _linear_backward
WRITE, RELU, ADD = 0, 1, 2             # _linear: Y = XW + b, Y = ReLU(XW + b), Y += XW + b
NO_DX, DX_WRITE, DX_ADD, DX_RELU = 0, 1, 2, 3


@jit
def _embed(E, tokens, scale, PE, use_pe, X):
    """X (B·T, d) = E[tokens[b, t]] · scale (+ PE[t]) for tokens (B, T)."""
    B, T = tokens.shape
    d = E.shape[1]
    for b in range(B):
        for t in range(T):
            r = b * T + t
            k = tokens[b, t]
            for c in range(d):
                v = E[k, c] * scale
                if use_pe:
                    v += PE[t, c]
                X[r, c] = v


@jit
def _embed_backward(dX, tokens, scale, dE):
    """dE (V, d) += scale · Σ of the rows dX (B·T, d) whose token is v (PE has no parameter)."""
    B, T = tokens.shape
    d = dE.shape[1]
    for b in range(B):
        for t in range(T):
            r = b * T + t
            k = tokens[b, t]
            for c in range(d):
                dE[k, c] += scale * dX[r, c]


def _linear(X: np.ndarray, W: np.ndarray, b: np.ndarray, Y: np.ndarray, mode: int) -> None:
    """Y (N, m) from X (N, k), W (k, m), b (m,): mode WRITE Y = XW + b, RELU Y = max(XW + b, 0),
    ADD Y += XW + b (the residual connection x ← x + sublayer(x)).

    The product is NumPy's (one BLAS call over all rows: as a numba kernel it cost the first
    run seconds of compiling, a product per layout mix, and ran no faster); the bias, the ReLU
    and the residual add are one pass of :func:`_add_bias`.
    """
    if mode == ADD:
        _add_bias(X @ W, b, False, Y, True)                             # Y += XW + b
    else:
        np.matmul(X, W, out=Y)                                          # (N, m)
        _add_bias(Y, b, mode == RELU, Y, False)


@jit(error_model="numpy")
def _add_bias(Z, b, relu, Y, add):
    """Y = Z + b, or max(Z + b, 0) with ``relu``, or Y += Z + b with ``add``; Z, Y (N, m),
    b (m,) (Z may be Y)."""
    N, m = Z.shape
    for i in range(N):
        for c in range(m):
            v = Z[i, c] + b[c]
            if relu:
                v = max(v, 0.0)
            if add:
                Y[i, c] += v
            else:
                Y[i, c] = v


def _linear_backward(X: np.ndarray, W: np.ndarray, dY: np.ndarray, dW: np.ndarray,
                     db: np.ndarray, dX: np.ndarray, dx_mode: int) -> None:
    """Backward of Y = X W + b given dY (N, m): dW = Xᵀ dY (k, m) and db = Σ_rows dY
    (overwritten); dX (N, k) per dx_mode: NO_DX, DX_WRITE dX = dY Wᵀ, DX_ADD dX += dY Wᵀ,
    DX_RELU dX = (dY Wᵀ) ⊙ [X > 0] — for X = ReLU(·), this is already the gradient at the
    ReLU's input. NumPy, like :func:`_linear`; the column sums are a product with a vector of
    ones, a third of the time of ``dY.sum(axis=0)``."""
    np.matmul(X.T, dY, out=dW)                                          # (k, m) = Xᵀ dY
    np.matmul(np.ones(dY.shape[0], dY.dtype), dY, out=db)              # (m,) = 1ᵀ dY
    if dx_mode == NO_DX:
        return
    if dx_mode == DX_ADD:
        dX += dY @ W.T                                                  # (N, k) += dY Wᵀ
        return
    np.matmul(dY, W.T, out=dX)                                          # (N, k) = dY Wᵀ
    if dx_mode == DX_RELU:
        dX *= X > 0.0


@jit(reduction=True, error_model="numpy")
def _layernorm(X, g, b, Y, xhat, rstd):
    """Y = x̂ · g + b with x̂ = (x − μ) / √(σ² + ε) per row of X (N, d); keeps x̂ and 1/√(σ² + ε)."""
    N, d = X.shape
    for i in range(N):
        mu = 0.0
        for c in range(d):
            mu += X[i, c]
        mu /= d
        var = 0.0
        for c in range(d):
            t = X[i, c] - mu
            var += t * t
        r = 1.0 / math.sqrt(var / d + LN_EPS)
        rstd[i] = r
        for c in range(d):
            xh = (X[i, c] - mu) * r
            xhat[i, c] = xh
            Y[i, c] = xh * g[c] + b[c]


@jit(reduction=True, error_model="numpy")
def _layernorm_backward(dY, xhat, rstd, g, dX, dg, db):
    """Backward of :func:`_layernorm`: dX += r · (ĝ − mean(ĝ) − x̂ · mean(ĝ ⊙ x̂)) with
    ĝ = dY ⊙ g; dg = Σ_rows dY ⊙ x̂ and db = Σ_rows dY (overwritten)."""
    N, d = dY.shape
    for c in range(d):
        dg[c] = 0.0
        db[c] = 0.0
    for i in range(N):
        s1 = 0.0
        s2 = 0.0
        for c in range(d):
            gh = dY[i, c] * g[c]
            s1 += gh
            s2 += gh * xhat[i, c]
            dg[c] += dY[i, c] * xhat[i, c]
            db[c] += dY[i, c]
        s1 /= d
        s2 /= d
        r = rstd[i]
        for c in range(d):
            dX[i, c] += r * (dY[i, c] * g[c] - s1 - xhat[i, c] * s2)


@jit(reduction=True, error_model="numpy")
def _softmax(W, mask, scale):
    """W (R, S) ← softmax_j(scale · W[r, j]) over the entries mask (R, S) allows, row by row
    (the others 0; a row with none allowed all 0). ``scale`` comes in W's dtype, so a float32
    W takes float32 exponentials; the rows' sums run in float64."""
    R, S = W.shape
    for r in range(R):
        w = W[r]
        top = np.float32(-np.inf)                        # takes W's dtype: float32 or float64
        for j in range(S):
            if mask[r, j]:
                top = max(top, w[j] * scale)
        total = 0.0
        for j in range(S):
            if mask[r, j]:
                w[j] = math.exp(w[j] * scale - top)
                total += w[j]
            else:
                w[j] = 0.0
        if total > 0.0:
            for j in range(S):
                w[j] /= total


@jit(reduction=True, error_model="numpy")
def _softmax_backward(W, dW, scale):
    """dW (R, S) ← scale · α ⊙ (dα − Σ_j α_j dα_j) row by row: given the weights α = W of
    :func:`_softmax` and dL/dα in dW, dL/d(Q Kᵀ) (the softmax's vector-Jacobian product
    times the score scale)."""
    R, S = W.shape
    for r in range(R):
        dot = 0.0
        for j in range(S):
            dot += W[r, j] * dW[r, j]
        for j in range(S):
            dW[r, j] = W[r, j] * (dW[r, j] - dot) * scale
