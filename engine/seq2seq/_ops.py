"""Building blocks of the seq2seq kernels: parameter views, the GRU / tanh-RNN cell forward
and backward, the affine map every gate starts from, and in-place sums and copies.

See :mod:`engine.seq2seq._kernels` for the model; everything here is called by the kernels
there and in :mod:`engine.seq2seq._encoder`. Plain numba: matrix products are ``np.dot``
(BLAS through scipy), the nonlinearities ``math.exp``, and sums and copies
between arrays are loops. (numba 0.68 compiles an array assignment ``a[:] = b``, an in-place
``a += b @ c`` or ``x.sum(axis=0)`` with seconds of error-message code each; the loops below
compile in a few hundredths of a second.)
"""

from __future__ import annotations

import math

import numpy as np

from engine._jit import jit
from engine.seq2seq._layout import GRU


@jit
def _mat(theta, offs, k, rows, cols):
    """Slot k of theta as a (rows, cols) matrix (a view; the slot's size is rows·cols: see
    engine.seq2seq.model.Seq2SeqConfig.offsets)."""
    return theta[offs[k]:offs[k + 1]].reshape((rows, cols))


@jit
def _vec(theta, offs, k):
    """Slot k of theta as a vector (a view)."""
    return theta[offs[k]:offs[k + 1]]


@jit
def _sigmoid(a):
    """σ(a) = 1 / (1 + e^{−a})."""
    return 1.0 / (1.0 + math.exp(-a))


@jit
def _tanh(a):
    """tanh(a) = 1 − 2 / (e^{2a} + 1): one exp, about half the time of ``math.tanh`` (libm's
    tanh is the single biggest cost of the additive scorer, B·S·a of them per decoder step)."""
    return 1.0 - 2.0 / (math.exp(2.0 * a) + 1.0)


@jit
def _affine(x, W, b, y):
    """y = x W + b: y (R, N) from x (R, M), W (M, N), b (N,)."""
    np.dot(x, W, y)
    for i in range(y.shape[0]):
        for j in range(y.shape[1]):
            y[i, j] += b[j]


# ---------------------------------------------------------------------------- sums and copies


@jit
def _copy1(out, x):
    """out = x for vectors (N,)."""
    for j in range(out.shape[0]):
        out[j] = x[j]


@jit
def _copy2(out, x):
    """out = x for matrices (R, N)."""
    for i in range(out.shape[0]):
        for j in range(out.shape[1]):
            out[i, j] = x[i, j]


@jit
def _iadd1(out, x):
    """out += x for vectors (N,)."""
    for j in range(out.shape[0]):
        out[j] += x[j]


@jit
def _iadd2(out, x):
    """out += x for matrices (R, N)."""
    for i in range(out.shape[0]):
        for j in range(out.shape[1]):
            out[i, j] += x[i, j]


@jit
def _add_colsum(out, x):
    """out (N,) += Σ_rows x (R, N): a bias gradient."""
    for i in range(x.shape[0]):
        for j in range(x.shape[1]):
            out[j] += x[i, j]


@jit
def _put_cols(out, j0, x):
    """out[:, j0:j0+N] = x: a column block of out (R, M) from x (R, N)."""
    for i in range(x.shape[0]):
        for j in range(x.shape[1]):
            out[i, j0 + j] = x[i, j]


@jit
def _add_cols(out, x, j0):
    """out (R, N) += x[:, j0:j0+N]: a column block of x (R, M)."""
    for i in range(out.shape[0]):
        for j in range(out.shape[1]):
            out[i, j] += x[i, j0 + j]


# ---------------------------------------------------------------------------- the cell


@jit
def _cell_forward(cell, gx, gh, h_prev, h_new, r, z, n, ghn):
    """One recurrent step for a batch. gx = x W_x + b_x, gh = h W_h + b_h: (B, G·d).

    GRU:  r = σ(gx_r + gh_r)   z = σ(gx_z + gh_z)   n = tanh(gx_n + r ⊙ gh_n)
          h' = (1 - z) ⊙ n + z ⊙ h
    RNN:  h' = tanh(gx + gh)          (n caches h'; r, z unused)
    """
    B, d = h_prev.shape
    if cell == GRU:
        for b in range(B):
            for j in range(d):
                rr = _sigmoid(gx[b, j] + gh[b, j])
                zz = _sigmoid(gx[b, d + j] + gh[b, d + j])
                nn = _tanh(gx[b, 2 * d + j] + rr * gh[b, 2 * d + j])
                r[b, j] = rr
                z[b, j] = zz
                n[b, j] = nn
                ghn[b, j] = gh[b, 2 * d + j]
                h_new[b, j] = (1.0 - zz) * nn + zz * h_prev[b, j]
    else:
        for b in range(B):
            for j in range(d):
                hh = _tanh(gx[b, j] + gh[b, j])
                n[b, j] = hh
                h_new[b, j] = hh


@jit
def _cell_backward(cell, dh, h_prev, r, z, n, ghn, dgx, dgh, dh_prev):
    """Backward of :func:`_cell_forward` given dL/dh' (B, d).

    Writes dL/dgx and dL/dgh (B, G·d) and the direct part of dL/dh (z ⊙ dh' for the GRU,
    0 for the RNN); the caller adds the path through W_h (dgh W_hᵀ).
    """
    B, d = dh.shape
    if cell == GRU:
        for b in range(B):
            for j in range(d):
                g = dh[b, j]
                rr = r[b, j]
                zz = z[b, j]
                nn = n[b, j]
                dn = g * (1.0 - zz)                      # h' = (1-z) n + z h
                dz = g * (h_prev[b, j] - nn)
                dh_prev[b, j] = g * zz
                da_n = dn * (1.0 - nn * nn)              # n = tanh(a_n)
                da_z = dz * zz * (1.0 - zz)              # z = σ(a_z)
                da_r = da_n * ghn[b, j] * rr * (1.0 - rr)  # a_n = gx_n + r gh_n
                dgx[b, j] = da_r
                dgx[b, d + j] = da_z
                dgx[b, 2 * d + j] = da_n
                dgh[b, j] = da_r
                dgh[b, d + j] = da_z
                dgh[b, 2 * d + j] = da_n * rr
    else:
        for b in range(B):
            for j in range(d):
                da = dh[b, j] * (1.0 - n[b, j] * n[b, j])
                dgx[b, j] = da
                dgh[b, j] = da
                dh_prev[b, j] = 0.0
