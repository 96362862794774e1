"""Building blocks of the seq2seq kernels: a vectorised exp, parameter views, the GRU / tanh-RNN
cell forward and backward, and the small in-place array helpers the passes through time use.

See :mod:`engine.seq2seq._kernels` for the model; everything here is called only by other
kernels (no CPython entry points). Each helper with a loop calls
:func:`engine._intrinsics._no_inline` first, so a kernel calls it rather than inlining (and
vectorising) a copy at every call site, and the parameter matrices are
:func:`engine._intrinsics._view2d` views rather than reshapes: together they took about a
tenth off the lab's first-run compile, at the same training speed. The column-block
copies (once per source position) and the decoder's argmax go one step further with
:func:`engine._intrinsics._compact`: compiled for size, their loops stay scalar. The loops
over whole (B, G·d) blocks at every step (bias, sums, copies, the cells, exp) keep LLVM's
vector code: compacting those as well took a tenth off each compile half but cost 3-6 % of
training steps per second."""

from __future__ import annotations

import numpy as np

from engine._jit import interpreted, jit

if interpreted():
    from engine._intrinsics_py import _compact, _gemm, _no_inline, _pow2_round, _view2d
else:
    from engine._intrinsics import _compact, _gemm, _no_inline, _pow2_round, _view2d
from engine.seq2seq._layout import _INNER, GRU


_LOG2E = 1.4426950408889634
_LN2_HI = 0.6931471803691238        # ln 2 split in two so k·ln2 is exact to ~1e-19
_LN2_LO = 1.9082149292705877e-10
_ROUND = 6755399441055744.0         # 1.5·2^52: (t + _ROUND) - _ROUND rounds t to an integer


@jit(fma=True, **_INNER)
def _vexp(x, out):
    """out = exp(x) elementwise, within 4e-16 relative of libm, in a loop LLVM vectorises.

    exp(x) = 2^k · exp(r) with k = round(x / ln 2) and |r| ≤ ln2 / 2; exp(r) by its Taylor
    series to r^12 (truncation < 2e-16), 2^k built in the exponent bits from the rounding sum
    itself (:func:`engine._intrinsics._pow2_round`: integer operations, no array view). x is
    clamped to [-708, 709], so the result is a normal number (exp(-708) ≈ 3e-308 stands in
    for 0, exp(709) ≈ 8e307 for inf), which is all tanh and σ below need. libm's exp is a
    call per element and ~4x slower; exp dominates the cells and the additive scorer.
    """
    _no_inline()
    n = x.shape[0]
    for i in range(n):
        v = min(max(x[i], -708.0), 709.0)
        tk = v * _LOG2E + _ROUND                    # k = round(x / ln 2) in its low bits
        kf = tk - _ROUND
        r = (v - kf * _LN2_HI) - kf * _LN2_LO
        out[i] = (1.0 + r * (1.0 + r * (1.0 / 2 + r * (1.0 / 6 + r * (1.0 / 24 + r * (
            1.0 / 120 + r * (1.0 / 720 + r * (1.0 / 5040 + r * (1.0 / 40320 + r * (
                1.0 / 362880 + r * (1.0 / 3628800 + r * (1.0 / 39916800 + r * (
                    1.0 / 479001600))))))))))))) * _pow2_round(tk)


@jit(**_INNER)
def _mat(theta, offs, k, rows, cols):
    """Slot k of theta as a (rows, cols) matrix (the slot's size is rows·cols: see
    engine.seq2seq.model.Seq2SeqConfig.offsets)."""
    return _view2d(theta, offs[k], rows, cols)


@jit(**_INNER)
def _vec(theta, offs, k):
    return theta[offs[k]:offs[k + 1]]


# ---------------------------------------------------------------------------- the cell


@jit(**_INNER)
def _cell_forward(cell, gx, gh, h_prev, h_new, r, z, n, ghn, ex_in, ex_out):
    """One recurrent step for a batch. gx = x W_x + b_x, gh = h W_h + b_h: (B, G·d).

    GRU:  r = σ(gx_r + gh_r)   z = σ(gx_z + gh_z)   n = tanh(gx_n + r ⊙ gh_n)
          h' = (1 - z) ⊙ n + z ⊙ h
    RNN:  h' = tanh(gx + gh)          (n caches h'; r, z unused)

    σ(a) = 1 / (1 + e^{-a}) and tanh(a) = 1 - 2 / (e^{2a} + 1), with the exponentials of a
    whole batch taken at once by :func:`_vexp` in the scratch vectors ex_in, ex_out (≥ 2·B·d
    each).
    """
    _no_inline()
    B, d = h_prev.shape
    t, e = ex_in, ex_out
    if cell == GRU:
        for b in range(B):
            for j in range(2 * d):                  # the r and z gates side by side
                t[2 * d * b + j] = -(gx[b, j] + gh[b, j])
        _vexp(t[:2 * B * d], e[:2 * B * d])
        for b in range(B):
            for j in range(d):
                rr = 1.0 / (1.0 + e[2 * d * b + j])
                r[b, j] = rr
                z[b, j] = 1.0 / (1.0 + e[2 * d * b + d + j])
                ghn[b, j] = gh[b, 2 * d + j]
                t[d * b + j] = 2.0 * (gx[b, 2 * d + j] + rr * gh[b, 2 * d + j])
        _vexp(t[:B * d], e[:B * d])
        for b in range(B):
            for j in range(d):
                nn = 1.0 - 2.0 / (e[d * b + j] + 1.0)
                n[b, j] = nn
                zz = z[b, j]
                h_new[b, j] = (1.0 - zz) * nn + zz * h_prev[b, j]
    else:
        for b in range(B):
            for j in range(d):
                t[d * b + j] = 2.0 * (gx[b, j] + gh[b, j])
        _vexp(t[:B * d], e[:B * d])
        for b in range(B):
            for j in range(d):
                hh = 1.0 - 2.0 / (e[d * b + j] + 1.0)
                n[b, j] = hh
                h_new[b, j] = hh


@jit(**_INNER)
def _cell_backward(cell, dh, h_prev, r, z, n, ghn, dgx, dgh, dh_prev):
    """Backward of :func:`_cell_forward` given dL/dh' (B, d).

    Writes dL/dgx and dL/dgh (B, G·d) and the direct part of dL/dh (z ⊙ dh' for the GRU,
    0 for the RNN); the caller adds the path through W_h (dgh W_hᵀ).
    """
    _no_inline()
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


@jit(**_INNER)
def _add_colsum(out, x):
    """out (N,) += Σ_rows x (R, N): the bias gradient."""
    _no_inline()
    R, N = x.shape
    for i in range(R):
        for j in range(N):
            out[j] += x[i, j]


# In-place sums and copies as explicit loops: numba compiles an array expression (``a += b``,
# ``np.dot(x, W) + b``) into its own kernel, which multiplies the cold-compile time by ~4.
# They take C-contiguous arrays only (a column block is copied by :func:`_put_cols` and
# :func:`_add_cols`), so each is compiled once, and the 2-D ones are the 1-D loop over all
# entries: one vectorised loop each to compile instead of two.


@jit(**_INNER)
def _iadd1(out, x):
    """out (N,) += x (N,)."""
    _no_inline()
    for j in range(out.shape[0]):
        out[j] += x[j]


@jit(**_INNER)
def _iadd2(out, x):
    """out (R, N) += x (R, N), as one loop over the R·N entries (:func:`_iadd1`)."""
    n = out.shape[0] * out.shape[1]
    _iadd1(_view2d(out, 0, 1, n)[0], _view2d(x, 0, 1, n)[0])


@jit(**_INNER)
def _copy1(out, x):
    """out (N,) = x (N,)."""
    _no_inline()
    for j in range(out.shape[0]):
        out[j] = x[j]


@jit(**_INNER)
def _copy2(out, x):
    """out (R, N) = x (R, N), as one loop over the R·N entries (:func:`_copy1`)."""
    n = out.shape[0] * out.shape[1]
    _copy1(_view2d(out, 0, 1, n)[0], _view2d(x, 0, 1, n)[0])


@jit(**_INNER)
def _put_cols(out, j0, x):
    """out[:, j0:j0+N] = x: a column block of out (R, M) from x (R, N)."""
    _compact()
    R, N = x.shape
    for i in range(R):
        for j in range(N):
            out[i, j0 + j] = x[i, j]


@jit(**_INNER)
def _add_cols(out, x, j0):
    """out (R, N) += x[:, j0:j0+N]: a column block of x (R, M)."""
    _compact()
    R, N = out.shape
    for i in range(R):
        for j in range(N):
            out[i, j] += x[i, j0 + j]


@jit(**_INNER)
def _affine(x, W, b, y):
    """y = x W + b: y (R, N) from x (R, M), W (M, N), b (N,)."""
    _no_inline()
    R, N = y.shape
    for i in range(R):
        for j in range(N):
            y[i, j] = b[j]
    _gemm(x, W, y, False, False, 1.0, 1.0)


@jit(**_INNER)
def _add_tn(out, A, B):
    """out (M, N) += Aᵀ B for A (R, M), B (R, N): a weight gradient (BLAS adds it in place)."""
    _gemm(A, B, out, True, False, 1.0, 1.0)


@jit(**_INNER)
def _add_nt(out, A, B):
    """out (R, N) += A Bᵀ for A (R, M), B (N, M): a gradient sent back through a weight."""
    _gemm(A, B, out, False, True, 1.0, 1.0)
