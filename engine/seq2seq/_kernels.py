"""Numba kernels of the lab's seq2seq: forward and backward through time, Adam, clipping.

Each forward step sits next to its backward step (micrograd style). Everything is batched and
time-major, so each recurrence step is a few small matrix products (BLAS through scipy):

    encoder    →h_{t} = cell(X_t, →h_{t-1})   (and ←h_t = cell(X_t, ←h_{t+1}) if bidirectional)
    annotations H_i = →h_i  or  [→h_i ; ←h_i]              Ann (S+1, B, dA), Ann[i+1] = H_i
    decoder    s_0 = →h_T,   s_t = cell([E_y[y_{t-1}] ; C_t], s_{t-1})           (lecture §1)
    output     log P(Y_t) = log_softmax(s_t W_O + b_O)                            (V,)

with C_t = C = H_T (fixed context, §2) or Bahdanau's additive attention (§4, §8):

    e_ti = vᵀ tanh(W_q s_{t-1} + W_k H_i),   α_t = softmax(e_t),   C_t = Σ_i α_ti H_i

Weights are stored input-major, ``x @ W``, so ``W_x`` is (d_in, G·d) with G = 3 gates
[r, z, n] for the GRU (PyTorch's equations and gate order) and G = 1 for the tanh RNN
H_t = tanh(W_HX X_t + W_HH H_{t-1} + b) of the notes. All parameters live in one flat
vector ``theta``; ``offs`` holds the start of each slot below, so Adam, clipping and the
gradient check see a single array.

Padding: a source position t ≥ src_len[b] leaves the encoder state unchanged (so the last
state is each sequence's own H_T) and gets attention weight 0; a target position
t ≥ tgt_len[b] adds nothing to the loss.

The kernels live in four modules: :mod:`._layout` (slots, dims, options), :mod:`._ops` (exp,
cells, array helpers), :mod:`._encoder` (the encoder both ways) and this one (attention, the
decoder both ways, the training pass, Adam); the names the rest of the package uses are all
reachable from here.
"""

from __future__ import annotations

import math

import numpy as np

from engine._jit import jit
from engine.seq2seq._encoder import _encode, _encode_backward  # noqa: F401 - re-exported
from engine.seq2seq._layout import (ATT_V, ATT_WK, ATT_WQ, BOS, DEC_BH, DEC_BX,
    DEC_EMBED, DEC_WC, DEC_WH, DEC_WY, D_A, D_ATTN, D_BI, D_CELL, D_E, D_H, D_V, ENC_BH,
    ENC_BH_B, ENC_BX, ENC_BX_B, ENC_EMBED, ENC_WH, ENC_WH_B, ENC_WX, ENC_WX_B, GRU, N_SLOTS,
    OUT_B, OUT_W, RNN)  # noqa: F401
from engine.seq2seq._ops import (_add_colsum, _affine, _cell_backward, _cell_forward, _copy1,
                                 _copy2, _iadd1, _iadd2, _mat, _tanh, _vec)

# ---------------------------------------------------------------------------- decoder step


@jit
def _attend(Wq, v, s_prev, Ann, K, src_len, q, U, alpha, ctx):
    """Bahdanau attention for one decoder step (query s_{t-1}, keys and values H_i).

    q = s_{t-1} W_q (B, a); U[b, i] = tanh(q_b + K[i, b]) (B, S, a); e_bi = v·U[b, i];
    α = softmax over the first src_len[b] positions (0 beyond); C_t = Σ_i α_bi H_i (B, dA).
    """
    B, S, a = U.shape
    dA = ctx.shape[1]
    np.dot(s_prev, Wq, q)                           # (B, a)
    for b in range(B):
        L = src_len[b]
        m = -np.inf
        for i in range(L):
            acc = 0.0
            for k in range(a):
                u = _tanh(q[b, k] + K[i, b, k])
                U[b, i, k] = u
                acc += v[k] * u
            alpha[b, i] = acc                       # e_bi, the score
            if acc > m:
                m = acc
        total = 0.0
        for i in range(L):
            ex = math.exp(alpha[b, i] - m)
            alpha[b, i] = ex
            total += ex
        for i in range(L):
            alpha[b, i] /= total
        for i in range(L, S):
            alpha[b, i] = 0.0
        for j in range(dA):
            ctx[b, j] = 0.0
        for i in range(L):
            w = alpha[b, i]
            for j in range(dA):
                ctx[b, j] += w * Ann[i + 1, b, j]


@jit
def _attend_backward(Wq, v, s_prev, Ann, src_len, U, alpha, dctx, dq, dK, dAnn, gWq, gv,
                     ds_prev, dalpha):
    """Backward of :func:`_attend`: dC_t (B, dA) → dK (S, B, a), dAnn, gW_q, gv, ds_{t-1}.

    dalpha (≥ S,) is scratch.
    """
    B, S, a = U.shape
    dA = dctx.shape[1]
    d = s_prev.shape[1]
    for b in range(B):
        L = src_len[b]
        dot = 0.0
        for i in range(L):                          # C_t = Σ α_i H_i
            acc = 0.0
            w = alpha[b, i]
            for j in range(dA):
                acc += dctx[b, j] * Ann[i + 1, b, j]
                dAnn[i + 1, b, j] += w * dctx[b, j]
            dalpha[i] = acc
            dot += w * acc
        for k in range(a):
            dq[b, k] = 0.0
        for i in range(L):                          # softmax: de_i = α_i (dα_i - Σ_j α_j dα_j)
            de = alpha[b, i] * (dalpha[i] - dot)
            for k in range(a):                      # e_i = v·tanh(q + K_i)
                u = U[b, i, k]
                gv[k] += de * u
                dpre = de * v[k] * (1.0 - u * u)
                dq[b, k] += dpre
                dK[i, b, k] += dpre
    _iadd2(gWq, s_prev.T @ dq)                      # (d, a)
    _iadd2(ds_prev, dq @ Wq.T)                      # (B, d)


# ---------------------------------------------------------------------------- decoder
# The whole decoder time loop is one kernel each way, called from Python (see
# :func:`training_pass`); a Python call per pass costs microseconds.


@jit
def _decode(theta, offs, dims, tgt, tgt_len, ratio, coins, n_seq, dec_in, pred, src_len, Ann,
            K, C, Y, Cx, Qa, U, Al, Sd, dc, LP, tokens, gx, gh, logits):
    """The decoder, T steps for a batch, after :func:`_encode`.

    On entry Sd[0] (B, d) holds the start state and tokens (B,) the first step's inputs.
    Step t (B sequences at once): Y_{t-1} = E_y[token], C_t = attention over the
    annotations (or C), s_t = cell([Y_{t-1} ; C_t], s_{t-1}), logp = log_softmax(s_t W_O + b_O).
    Step t > 0 feeds the ground truth tgt[b, t-1] when coins[t, b] < ratio (draws in [0, 1)),
    else the model's own argmax pred[b, t-1].

    Fills dec_in, pred (B, T), Y (T, B, e), the contexts Cx (T, B, dA), the attention caches
    Qa (T, B, a), U (T, B, S, a), Al (T, B, S) (zero for the fixed context), Sd[1:], the gate
    caches dc (4, T, B, d) and LP (T, B, V). gx, gh (B, G d) and logits (B, V) are scratch.

    Returns:
        (1/n_seq) Σ_b Σ_{t < tgt_len[b]} -log P(tgt[b, t]).
    """
    V, e, d, A, cell, attn = dims[D_V], dims[D_E], dims[D_H], dims[D_A], dims[D_CELL], dims[D_ATTN]
    G = 3 if cell == GRU else 1
    dA = C.shape[1]
    E = _mat(theta, offs, DEC_EMBED, V, e)
    Wy = _mat(theta, offs, DEC_WY, e, G * d)        # W_HY
    Wc = _mat(theta, offs, DEC_WC, dA, G * d)       # W_HC
    Wh = _mat(theta, offs, DEC_WH, d, G * d)        # W_HH^(d)
    bx = _vec(theta, offs, DEC_BX)
    bh = _vec(theta, offs, DEC_BH)
    Wo = _mat(theta, offs, OUT_W, d, V)             # W_O (stored transposed)
    bo = _vec(theta, offs, OUT_B)
    nq = d if attn else 0                           # the fixed decoder has no attention
    Wq = _mat(theta, offs, ATT_WQ, nq, A)
    v = _vec(theta, offs, ATT_V)
    B, T = tgt.shape
    dc[:] = 0.0
    if not attn:
        Al[:] = 0.0
    loss = 0.0
    for t in range(T):
        for b in range(B):
            if t == 0:
                pass                                # the inputs the caller put in tokens
            elif coins[t, b] < ratio:               # teacher forcing: the ground truth
                tokens[b] = tgt[b, t - 1]
            else:                                   # free running: the model's own guess
                tokens[b] = pred[b, t - 1]
            dec_in[b, t] = tokens[b]
            _copy1(Y[t, b], E[tokens[b]])           # Y_{t-1} as an embedding
        s_prev, ctx = Sd[t], Cx[t]
        if attn:
            _attend(Wq, v, s_prev, Ann, K, src_len, Qa[t], U[t], Al[t], ctx)
        else:
            _copy2(ctx, C)                          # C = H_T, the same at every step
        _affine(Y[t], Wy, bx, gx)                   # (B, G d)  W_HY Y + W_HC C + b
        _iadd2(gx, ctx @ Wc)
        _affine(s_prev, Wh, bh, gh)                 # (B, G d)  W_HH H_{t-1}
        _cell_forward(cell, gx, gh, s_prev, Sd[t + 1], dc[0, t], dc[1, t], dc[2, t], dc[3, t])
        _affine(Sd[t + 1], Wo, bo, logits)          # (B, V)
        lp = LP[t]
        for b in range(B):                          # log-softmax per row
            m = -np.inf
            for k in range(V):
                if logits[b, k] > m:
                    m = logits[b, k]
            total = 0.0
            for k in range(V):
                total += math.exp(logits[b, k] - m)
            lse = m + math.log(total)
            for k in range(V):
                lp[b, k] = logits[b, k] - lse
            pred[b, t] = np.argmax(lp[b])
            if t < tgt_len[b]:
                loss -= lp[b, tgt[b, t]]            # L_t = -log P(y_t)
    return loss / n_seq


@jit
def _decode_backward(theta, offs, dims, src_len, tgt, tgt_len, n_seq, dec_in, Ann, Sd, dc, Y,
                     Cx, U, Al, LP, grad, dAnn, dK, dC, ds, dlog, dgx, dgh, ds_prev, dq, dctx,
                     dalpha):
    """Backward of :func:`_decode` (and of the keys K = H W_k) through time: grad (P,) receives
    dL/dθ of the decoder's parameters; dAnn (S+1, B, dA), dC (B, dA) and ds (B, d, then
    dL/ds_0) what :func:`_encode_backward` needs. The rest is scratch (see the Work fields)."""
    V, e, d, A, cell, attn = dims[D_V], dims[D_E], dims[D_H], dims[D_A], dims[D_CELL], dims[D_ATTN]
    G = 3 if cell == GRU else 1
    B, T = tgt.shape
    S, dA = Ann.shape[0] - 1, Ann.shape[2]
    grad[:] = 0.0
    Ed_g = _mat(grad, offs, DEC_EMBED, V, e)
    Wy = _mat(theta, offs, DEC_WY, e, G * d)
    Wc = _mat(theta, offs, DEC_WC, dA, G * d)
    Wh = _mat(theta, offs, DEC_WH, d, G * d)
    Wo = _mat(theta, offs, OUT_W, d, V)
    gWy = _mat(grad, offs, DEC_WY, e, G * d)
    gWc = _mat(grad, offs, DEC_WC, dA, G * d)
    gWh = _mat(grad, offs, DEC_WH, d, G * d)
    gbx = _vec(grad, offs, DEC_BX)
    gbh = _vec(grad, offs, DEC_BH)
    gWo = _mat(grad, offs, OUT_W, d, V)
    gbo = _vec(grad, offs, OUT_B)
    dAnn[:] = 0.0
    dK[:] = 0.0
    dC[:] = 0.0                                     # fixed context: Σ_t dL/dC_t
    ds[:] = 0.0                                     # dL/dSd[t+1] from later steps
    inv_b = 1.0 / n_seq
    nq = d if attn else 0                           # the fixed decoder has no attention
    Wq = _mat(theta, offs, ATT_WQ, nq, A)
    v = _vec(theta, offs, ATT_V)
    gWq = _mat(grad, offs, ATT_WQ, nq, A)
    gv = _vec(grad, offs, ATT_V)
    for t in range(T - 1, -1, -1):
        for b in range(B):                          # dL/dz = P - onehot(y), per sequence / n_seq
            if t < tgt_len[b]:
                for k in range(V):
                    dlog[b, k] = math.exp(LP[t, b, k]) * inv_b
                dlog[b, tgt[b, t]] -= inv_b
            else:
                dlog[b, :] = 0.0
        _iadd2(gWo, Sd[t + 1].T @ dlog)             # (d, V)
        _add_colsum(gbo, dlog)
        _iadd2(ds, dlog @ Wo.T)                     # (B, d)
        _cell_backward(cell, ds, Sd[t], dc[0, t], dc[1, t], dc[2, t], dc[3, t], dgx, dgh,
                       ds_prev)
        _iadd2(gWh, Sd[t].T @ dgh)                  # (d, G d)
        _add_colsum(gbh, dgh)
        _iadd2(ds_prev, dgh @ Wh.T)                 # (B, d)
        _iadd2(gWy, Y[t].T @ dgx)                   # (e, G d)
        _add_colsum(gbx, dgx)
        dY = dgx @ Wy.T                             # (B, e)  dL/dY_t
        for b in range(B):
            _iadd1(Ed_g[dec_in[b, t]], dY[b])
        _iadd2(gWc, Cx[t].T @ dgx)                  # (dA, G d)
        np.dot(dgx, Wc.T, dctx)                     # (B, dA)
        if attn:
            _attend_backward(Wq, v, Sd[t], Ann, src_len, U[t], Al[t], dctx, dq, dK, dAnn,
                             gWq, gv, ds_prev, dalpha)
        else:
            _iadd2(dC, dctx)
        _copy2(ds, ds_prev)
    if attn:                                        # K = H W_k
        Wk = _mat(theta, offs, ATT_WK, dA, A)
        gWk = _mat(grad, offs, ATT_WK, dA, A)
        H2 = Ann[1:].reshape((S * B, dA))           # (S B, dA)
        dK2 = dK.reshape((S * B, A))
        _iadd2(gWk, H2.T @ dK2)                     # (dA, a)
        _iadd2(dAnn[1:].reshape((S * B, dA)), dK2 @ Wk.T)   # (S B, dA)


# ---------------------------------------------------------------------------- training pass


def training_pass(theta: np.ndarray, offs: np.ndarray, dims: np.ndarray, src: np.ndarray,
                  src_len: np.ndarray, tgt: np.ndarray, tgt_len: np.ndarray, ratio: float,
                  want_grad: bool, n_seq: int, dec_in: np.ndarray, pred: np.ndarray,
                  w) -> float:
    """Forward (with teacher forcing) and, if want_grad, backward through time.

    Four kernel calls: :func:`_encode`, :func:`_decode`, then
    :func:`_decode_backward` and :func:`_encode_backward`. With ratio 0 and want_grad False
    this is free-running greedy decoding (each step's argmax is the next input), which is
    how :func:`engine.seq2seq.greedy_decode` calls it: one forward pass serves training and
    inference.

    Args (B sequences, S source and T target positions):
        src (B, S), src_len (B,): source tokens and lengths (≥ 1).
        tgt (B, T), tgt_len (B,): targets, ending with EOS; positions ≥ tgt_len are padding.
        ratio: step t > 0 feeds the ground truth tgt[b, t-1] when w.coins[t, b] < ratio
            (draws in [0, 1)), else the model's own argmax prediction from step t-1.
        n_seq: the number of sequences the loss is averaged over: B, or the whole batch's
            size when these B rows are one part of it (the parts' losses and gradients
            then add up to the whole batch's).
        dec_in (B, T), pred (B, T): receive the decoder inputs used and the argmax outputs.
        w: the workspace views for this batch (:class:`engine.seq2seq.workspace.Work`);
            w.grad (P,) receives dL/dθ when want_grad, w.Al (T, B, S) the attention
            weights α of every step (zero for the fixed-context decoder).

    Returns:
        L = (1/n_seq) Σ_b Σ_{t < tgt_len[b]} -log P(tgt[b, t]): cross-entropy summed over
        steps, averaged over the batch; padding ignored.
    """
    S = src.shape[1]
    w.cache[:] = 0.0
    _encode(theta, offs, dims, src, src_len, w.X, w.Hs, w.cache, w.Ann, w.C, w.K, w.gx, w.gh)
    w.Sd[0] = w.Hs[0, S]                            # the decoder starts from H_T
    w.tokens[:] = BOS                               # and is fed BOS first
    loss = _decode(theta, offs, dims, tgt, tgt_len, ratio, w.coins, n_seq, dec_in, pred, src_len,
                   w.Ann, w.K, w.C, w.Y, w.Cx, w.Qa, w.U, w.Al, w.Sd, w.dc, w.LP, w.tokens,
                   w.gx, w.gh, w.logits)
    if not want_grad:
        return loss
    for kernel, args in _backward_calls(theta, offs, dims, src, src_len, tgt, tgt_len, n_seq,
                                        dec_in, w):
        kernel(*args)
    return loss


def _backward_calls(theta, offs, dims, src, src_len, tgt, tgt_len, n_seq, dec_in, w):
    """The backward half of :func:`training_pass`: its two kernels with their arguments, in
    call order (:func:`_decode_backward` leaves dL/ds_0 in w.ds, s_0 = →h_T, for
    :func:`_encode_backward`)."""
    return ((_decode_backward, (theta, offs, dims, src_len, tgt, tgt_len, n_seq, dec_in, w.Ann,
                                w.Sd, w.dc, w.Y, w.Cx, w.U, w.Al, w.LP, w.grad, w.dAnn, w.dK, w.dC,
                                w.ds, w.dlog, w.dgx, w.dgh, w.ds_prev, w.dq, w.dctx, w.dalpha)),
            (_encode_backward, (theta, offs, dims, src, src_len, w.X, w.Hs, w.cache, w.dAnn, w.dC,
                                w.ds, w.grad, w.dX, w.dH, w.dh, w.dh_cell, w.carry, w.dgx, w.dgh,
                                w.ds_prev)))


# ---------------------------------------------------------------------------- inference
# The step model of :mod:`engine.seq2seq.decode` calls :func:`_encode` and :func:`_decode`
# (B = 1, T = 1 views of its own workspace) directly, with the types the training pass
# compiled them for: it needs no kernel of its own.


# ---------------------------------------------------------------------------- optimiser


@jit(error_model="numpy")  # no zero-division branches (c1, c2, √v̂ + ε are > 0): the loop vectorises
def _clip_and_adam(theta, grad, m, v, step, lr, beta1, beta2, eps, max_norm):
    """Clip grad to global norm ≤ max_norm (if > 0), then one Adam step; returns the norm.

    m ← β1 m + (1-β1) g,  v ← β2 v + (1-β2) g²,  θ ← θ - lr · m̂ / (√v̂ + ε)
    with bias corrections m̂ = m / (1 - β1^step), v̂ = v / (1 - β2^step) (Kingma & Ba 2015).
    """
    sq = 0.0
    for i in range(grad.shape[0]):
        sq += grad[i] * grad[i]
    norm = math.sqrt(sq)
    scale = 1.0
    if max_norm > 0.0 and norm > max_norm:
        scale = max_norm / norm
    c1 = 1.0 - beta1 ** step
    c2 = 1.0 - beta2 ** step
    for i in range(theta.shape[0]):
        g = grad[i] * scale
        m[i] = beta1 * m[i] + (1.0 - beta1) * g
        v[i] = beta2 * v[i] + (1.0 - beta2) * g * g
        theta[i] -= lr * (m[i] / c1) / (math.sqrt(v[i] / c2) + eps)
    return norm
