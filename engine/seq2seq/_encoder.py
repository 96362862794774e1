"""The seq2seq encoder's kernels: forward and backward through time, both directions.

See :mod:`engine.seq2seq._kernels` for the model and its layout.
"""

from __future__ import annotations

import numpy as np

from engine._jit import jit
from engine.seq2seq._layout import (ATT_WK, D_A, D_ATTN, D_BI, D_CELL, D_E, D_H, D_V,
    ENC_EMBED, ENC_WX, ENC_WX_B, GRU)
from engine.seq2seq._ops import (_add_cols, _add_colsum, _affine, _cell_backward, _cell_forward,
                                 _copy1, _copy2, _iadd1, _iadd2, _mat, _put_cols, _vec)


# ---------------------------------------------------------------------------- encoder
# Forward and backward are one function each, the two directions a loop inside it. Every
# array they write comes from the caller (views of an engine.seq2seq.workspace.Work), so a
# training step allocates nothing large.


@jit
def _encode(theta, offs, dims, src, src_len, X, Hs, cache, Ann, C, K, gx, gh):
    """Run the encoder; fill the annotations and keys the decoder reads.

    X (S, B, e): X_t = E_x[src[:, t]], the embedding of each source token.
    Hs (1 + bi, S+1, B, d): the states of each direction r; cache (1 + bi, 4, S, B, d)
    keeps r, z, n, gh_n of every step for the backward pass.
        r = 0, left to right:  Hs[0, t+1] = cell(X_t, Hs[0, t]),   Hs[0, 0] = 0
        r = 1, right to left:  Hs[1, t] = cell(X_t, Hs[1, t+1]),   Hs[1, S] = 0
    A padded step (t ≥ src_len[b]) copies the state, so Hs[0, S] (resp. Hs[1, 0]) is the
    last state of each sequence.
    Ann (S+1, B, dA): Ann[i+1] = H_i, the annotation of source position i:
        unidirectional   H_i = →h_i                       (dA = d)
        bidirectional    H_i = [→h_i ; ←h_i]              (dA = 2d, Bahdanau et al. 2014)
    C (B, dA): the fixed context, C = H_T = →h_T (or [→h_T ; ←h_1]).
    K (S, B, a): the keys H_i W_k of attention, computed once per batch (left alone by the
    fixed-context decoder).
    gx, gh (B, G d) are scratch.
    """
    e, d, cell, bi = dims[D_E], dims[D_H], dims[D_CELL], dims[D_BI]
    G = 3 if cell == GRU else 1
    E = _mat(theta, offs, ENC_EMBED, dims[D_V], e)
    B, S = src.shape
    for t in range(S):
        for b in range(B):
            _copy1(X[t, b], E[src[b, t]])
    for r in range(1 + bi):
        slot = ENC_WX if r == 0 else ENC_WX_B
        Wx = _mat(theta, offs, slot, e, G * d)          # (e, G d)   W_HX
        Wh = _mat(theta, offs, slot + 1, d, G * d)      # (d, G d)   W_HH
        bx = _vec(theta, offs, slot + 2)
        bh = _vec(theta, offs, slot + 3)
        H = Hs[r]                                       # (S+1, B, d)
        c = cache[r]                                    # (4, S, B, d)
        H[S if r else 0] = 0.0
        for k in range(S):
            t = S - 1 - k if r else k
            prev = t + 1 if r else t
            new = t if r else t + 1
            _affine(X[t], Wx, bx, gx)                   # (B, G d)  W_HX X_t + b
            _affine(H[prev], Wh, bh, gh)                # (B, G d)  W_HH H_{t-1}
            _cell_forward(cell, gx, gh, H[prev], H[new], c[0, t], c[1, t], c[2, t], c[3, t])
            for b in range(B):
                if t >= src_len[b]:                     # padding: keep the state unchanged
                    _copy1(H[new, b], H[prev, b])
    Ann[0] = 0.0
    for i in range(S):
        _put_cols(Ann[i + 1], 0, Hs[0, i + 1])         # H_i = [→h_i
        if bi:
            _put_cols(Ann[i + 1], d, Hs[1, i])         #        ; ←h_i]
    _put_cols(C, 0, Hs[0, S])                          # C = H_T
    if bi:
        _put_cols(C, d, Hs[1, 0])
    if dims[D_ATTN]:
        A, dA = dims[D_A], Ann.shape[2]
        Wk = _mat(theta, offs, ATT_WK, dA, A)
        np.dot(Ann[1:].reshape((S * B, dA)), Wk, K.reshape((S * B, A)))   # (S B, a) K = H W_k


@jit
def _encode_backward(theta, offs, dims, src, src_len, X, Hs, cache, dAnn, dC, ds0, grad,
                     dX, dH, dh, dh_cell, carry, dgx, dgh, dh_prev):
    """Backward of :func:`_encode`: dAnn (S+1, B, dA), dC (B, dA) and dL/ds_0 (B, d) → grad.

    BPTT through each direction, the forward steps in reverse order; dH (S+1, B, d) holds
    dL/dH of that direction from the decoder side, dX (S, B, e) collects dL/dX_t. dh,
    dh_cell, carry, dh_prev (B, d), dgx and dgh (B, G d) are scratch.
    """
    V, e, d, cell, bi = dims[D_V], dims[D_E], dims[D_H], dims[D_CELL], dims[D_BI]
    G = 3 if cell == GRU else 1
    B, S = src.shape
    dX[:] = 0.0
    for r in range(1 + bi):
        dH[:] = 0.0
        if r == 0:
            for i in range(S):
                _add_cols(dH[i + 1], dAnn[i + 1], 0)
            _add_cols(dH[S], dC, 0)
            _iadd2(dH[S], ds0)                          # s_0 = →h_T
        else:
            for i in range(S):
                _add_cols(dH[i], dAnn[i + 1], d)
            _add_cols(dH[0], dC, d)
        slot = ENC_WX if r == 0 else ENC_WX_B
        Wx = _mat(theta, offs, slot, e, G * d)
        Wh = _mat(theta, offs, slot + 1, d, G * d)
        gWx = _mat(grad, offs, slot, e, G * d)
        gWh = _mat(grad, offs, slot + 1, d, G * d)
        gbx = _vec(grad, offs, slot + 2)
        gbh = _vec(grad, offs, slot + 3)
        H = Hs[r]
        c = cache[r]
        dh[:] = 0.0
        for k in range(S):                              # the forward steps in reverse order
            t = k if r else S - 1 - k
            prev = t + 1 if r else t
            new = t if r else t + 1
            _iadd2(dh, dH[new])
            for b in range(B):
                if t < src_len[b]:
                    _copy1(dh_cell[b], dh[b])
                    carry[b] = 0.0
                else:                                   # this step only copied the state
                    dh_cell[b] = 0.0
                    _copy1(carry[b], dh[b])
            _cell_backward(cell, dh_cell, H[prev], c[0, t], c[1, t], c[2, t], c[3, t],
                           dgx, dgh, dh_prev)
            _iadd2(gWh, H[prev].T @ dgh)                # (d, G d)
            _add_colsum(gbh, dgh)
            _iadd2(dh_prev, dgh @ Wh.T)                 # (B, d)
            _iadd2(gWx, X[t].T @ dgx)                   # (e, G d)
            _add_colsum(gbx, dgx)
            _iadd2(dX[t], dgx @ Wx.T)                   # (B, e)
            _copy2(dh, dh_prev)                         # (the initial state is 0: no parameter)
            _iadd2(dh, carry)
    gE = _mat(grad, offs, ENC_EMBED, V, e)
    for t in range(S):
        for b in range(B):
            _iadd1(gE[src[b, t]], dX[t, b])
