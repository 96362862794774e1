"""The seq2seq encoder, forward and backward, both directions.

See :mod:`engine.seq2seq._kernels` for the model. Only the recurrence goes step by step
(:func:`_encode_direction` and its backward: a loop over time around the cell's kernel and
one product per step); everything that is the same product for every step is one NumPy
product over all S steps at once, before or after it:

    forward    GX = X W_HX + b                  (S·B, G·d)  every step's input side
               H_t = cell(GX_t, H_{t−1})        one step after the other
    backward   dGX_t, dGH_t = cell backward     the steps in reverse order
               dW_HX = Xᵀ dGX,  dW_HH = H_prevᵀ dGH,  dX = dGX W_HXᵀ      (one product each)

Every array the kernels write comes from the caller (views of an
:class:`engine.seq2seq.workspace.Work`), so a training step allocates nothing large.
"""

from __future__ import annotations

import numpy as np

from engine.seq2seq._ops import _cell_backward, _cell_forward
from engine.seq2seq.workspace import Work

Params = dict[str, np.ndarray]

DIRECTIONS = ("", "_rev")  # parameter-name suffixes: left to right, right to left


def _encode_direction(cell: int, reverse: bool, GX: np.ndarray, Wh: np.ndarray, bh: np.ndarray,
                      src_len: np.ndarray, H: np.ndarray, cache: np.ndarray, gh: np.ndarray) -> None:
    """The recurrence of one direction: GX (S, B, G·d) its input side, H (S+1, B, d) its states.

        left to right  H[t+1] = cell(GX[t], H[t]),      H[0] = 0 on entry
        right to left  H[t] = cell(GX[t], H[t+1]),      H[S] = 0 on entry

    A padded step (t ≥ src_len[b]) keeps the state, so H[S] (resp. H[0]) holds each
    sequence's last state. cache (4, S, B, d) receives r, z, n, gh_n of every step;
    gh (B, G·d) is scratch.
    """
    S = GX.shape[0]
    for k in range(S):
        t = S - 1 - k if reverse else k
        prev, new = (t + 1, t) if reverse else (t, t + 1)
        np.dot(H[prev], Wh, gh)                         # (B, G d)  H_{t-1} W_HH
        _cell_forward(cell, GX[t], gh, bh, H[prev], src_len, t, H[new],
                      cache[0, t], cache[1, t], cache[2, t], cache[3, t])


def _encode_direction_backward(cell: int, reverse: bool, dH: np.ndarray, WhT: np.ndarray,
                               src_len: np.ndarray, H: np.ndarray, cache: np.ndarray,
                               dGX: np.ndarray, dGH: np.ndarray, dh: np.ndarray,
                               dh_direct: np.ndarray) -> None:
    """Backward of :func:`_encode_direction` through time.

    dH (S+1, B, d) holds dL/dH from outside the recurrence (annotations, the context, the
    decoder's start). Writes dGX, dGH (S, B, G·d): dL/d(input side), dL/d(recurrent side) of
    every step. WhT = W_HHᵀ (G·d, d); dh (B, d) must be 0 on entry; dh_direct is scratch.
    """
    S = dGX.shape[0]
    for k in range(S):                                  # the forward steps in reverse order
        t = k if reverse else S - 1 - k
        prev, new = (t + 1, t) if reverse else (t, t + 1)
        _cell_backward(cell, dh, dH[new], H[prev], src_len, t, cache[0, t], cache[1, t],
                       cache[2, t], cache[3, t], dGX[t], dGH[t], dh_direct)
        np.dot(dGH[t], WhT, dh)                         # (B, d)  through W_HH
        dh += dh_direct                                 # + the direct path (GRU: z ⊙ dh')


def sum_rows_by_token(tokens: np.ndarray, rows: np.ndarray, out: np.ndarray) -> None:
    """out (V, m) = Oᵀ rows: row v of out is the sum of the rows (n, m) whose token is v.

    The gradient of a table lookup x_j = E[tokens[j]]: O (n, V) is the one-hot matrix of the
    tokens, so dE = Oᵀ dX, one product (faster than ``np.add.at`` for the lab's sizes).
    """
    onehot_T = np.zeros((out.shape[0], tokens.size))                    # Oᵀ (V, n)
    onehot_T[tokens, np.arange(tokens.size)] = 1.0
    np.matmul(onehot_T, rows, out=out)


def encode(p: Params, cell: int, bidirectional: bool, attention: bool, src: np.ndarray,
           src_len: np.ndarray, w: Work) -> None:
    """Run the encoder on src (B, S); fill w.X, w.GX, w.Hs, w.cache and what the decoder
    reads: the annotations w.Ann (S, B, dA), the fixed context w.C (B, dA) and, with
    attention, w.EK = e^{2K} of the keys K = Ann W_k (S, B, a) (see
    :func:`engine.seq2seq._kernels._attend`).

        unidirectional   H_i = →h_i,  C = →h_T                         (dA = d)
        bidirectional    H_i = [→h_i ; ←h_i],  C = [→h_T ; ←h_1]        (dA = 2d)
    """
    B, S = src.shape
    d = w.Hs.shape[3]
    np.take(p["enc_embed"], src.T, axis=0, out=w.X)     # (S, B, e)  X_t = E_x[src[:, t]]
    X2 = w.X.reshape(S * B, -1)
    for r in range(1 + bidirectional):
        sfx = DIRECTIONS[r]
        GX2 = w.GX[r].reshape(S * B, -1)
        np.matmul(X2, p["enc_W_x" + sfx], out=GX2)      # (S B, G d)  X_t W_HX, every t
        GX2 += p["enc_b_x" + sfx]
        w.Hs[r, S if r else 0] = 0.0                    # the initial state
        _encode_direction(cell, r == 1, w.GX[r], p["enc_W_h" + sfx], p["enc_b_h" + sfx],
                          src_len, w.Hs[r], w.cache[r], w.gh)
    w.Ann[:, :, :d] = w.Hs[0, 1:]                       # H_i = [→h_i
    w.C[:, :d] = w.Hs[0, S]                             # C = →h_T
    if bidirectional:
        w.Ann[:, :, d:] = w.Hs[1, :S]                   #        ; ←h_i]
        w.C[:, d:] = w.Hs[1, 0]                         #        ; ←h_1]
    if attention:
        np.matmul(w.Ann.reshape(S * B, -1), p["att_W_k"], out=w.EK.reshape(S * B, -1))  # K
        np.multiply(w.EK, 2.0, out=w.EK)
        np.exp(w.EK, out=w.EK)                          # e^{2K}


def encode_backward(p: Params, g: Params, cell: int, bidirectional: bool, src: np.ndarray,
                    src_len: np.ndarray, dAnn: np.ndarray, dC: np.ndarray, ds0: np.ndarray,
                    w: Work) -> None:
    """Backward of :func:`encode` given dL/dAnn (S, B, dA), dL/dC (B, dA) and dL/ds_0 (B, d)
    (s_0 = →h_T): writes the encoder's gradients into g."""
    B, S = src.shape
    d = w.Hs.shape[3]
    X2 = w.X.reshape(S * B, -1)
    dX2 = w.dX.reshape(S * B, -1)
    dGX2 = w.eGX.reshape(S * B, -1)
    dGH2 = w.eGH.reshape(S * B, -1)
    for r in range(1 + bidirectional):
        sfx = DIRECTIONS[r]
        dH = w.dH
        dH[...] = 0.0
        if r == 0:
            dH[1:] += dAnn[:, :, :d]                    # H_i = →h_i, stored at H[i+1]
            dH[S] += dC[:, :d]
            dH[S] += ds0                                # s_0 = →h_T
        else:
            dH[:S] += dAnn[:, :, d:]                    # ←h_i, stored at H[i]
            dH[0] += dC[:, d:]
        w.dh[...] = 0.0
        Wx = p["enc_W_x" + sfx]
        _encode_direction_backward(cell, r == 1, dH, np.ascontiguousarray(p["enc_W_h" + sfx].T),
                                   src_len, w.Hs[r], w.cache[r], w.eGX, w.eGH, w.dh, w.dh_direct)
        H_prev = w.Hs[r, :S] if r == 0 else w.Hs[r, 1:]  # the state each step read
        np.matmul(H_prev.reshape(S * B, d).T, dGH2, out=g["enc_W_h" + sfx])   # (d, G d)
        dGH2.sum(axis=0, out=g["enc_b_h" + sfx])
        np.matmul(X2.T, dGX2, out=g["enc_W_x" + sfx])                         # (e, G d)
        dGX2.sum(axis=0, out=g["enc_b_x" + sfx])
        if r == 0:
            np.matmul(dGX2, Wx.T, out=dX2)              # (S B, e)  dL/dX
        else:
            dX2 += dGX2 @ Wx.T
    sum_rows_by_token(src.T.ravel(), dX2, g["enc_embed"])   # X_t = E_x[src[:, t]]
