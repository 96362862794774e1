"""Kernels of the lab's seq2seq: forward and backward through time, Adam, clipping.

Each forward step sits next to its backward step (micrograd style). Everything is batched and
time-major:

    encoder    →h_{t} = cell(X_t, →h_{t-1})   (and ←h_t = cell(X_t, ←h_{t+1}) if bidirectional)
    annotations H_i = →h_i  or  [→h_i ; ←h_i]                       Ann (S, B, dA)
    decoder    s_0 = →h_T,   s_t = cell([E_y[y_{t-1}] ; C_t], s_{t-1})           (lecture §1)
    output     log P(Y_t) = log_softmax(s_t W_O + b_O)                            (V,)

with C_t = C = H_T (fixed context, §2) or Bahdanau's additive attention (§4, §8):

    e_ti = vᵀ tanh(W_q s_{t-1} + W_k H_i),   α_t = softmax(e_t),   C_t = Σ_i α_ti H_i

Weights are stored input-major, ``x @ W``, so ``W_x`` is (d_in, G·d) with G = 3 gates
[r, z, n] for the GRU (PyTorch's equations and gate order) and G = 1 for the tanh RNN
H_t = tanh(W_HX X_t + W_HH H_{t-1} + b) of the notes. The parameters live in one flat
vector (Adam, clipping and the gradient check see a single array); the functions here take
its named views (:meth:`engine.seq2seq.Seq2SeqConfig.views`), and the gradient's.

**What runs where.** Only what must go one step after the other goes step by step: the
recurrences and the attention, whose query is the previous state. Their time loops are
Python; each step is a few NumPy products and three small numba kernels (the cell, the
attention, the output layer), each compiled once and called from Python (a kernel that
called the others would make LLVM optimise their code again inside it: seconds of the
first run's compile). A product that is the
same for every step is one NumPy product over all T steps, before or after the loop —
above all the weight gradients: dW = Σ_t x_tᵀ dg_t is one (T·B)-row product, not T small
ones. The decoder's input side E_y[y] W_y + b is a row of the table EW = E_y W_y + b (V, G·d),
because the token of step t is chosen at step t (teacher forcing or the model's own guess).

Padding: a source position t ≥ src_len[b] leaves the encoder state unchanged (so the last
state is each sequence's own H_T) and gets attention weight 0; a target position
t ≥ tgt_len[b] adds nothing to the loss.

Modules: :mod:`._layout` (cell kinds, BOS), :mod:`._ops` (the cell), :mod:`._encoder` (the
encoder both ways) and this one (attention, the decoder both ways, the training pass, Adam).
"""

from __future__ import annotations

import math

import numpy as np

from engine._jit import jit
from engine.seq2seq._encoder import Params, encode, encode_backward, sum_rows_by_token
from engine.seq2seq._layout import BOS, GRU, RNN  # noqa: F401 - re-exported
from engine.seq2seq._ops import _cell_backward, _cell_forward
from engine.seq2seq.workspace import Work

# ---------------------------------------------------------------------------- attention


@jit
def _attend(v, Ann, EK, src_len, q, U, alpha, ctx):
    """Bahdanau attention for one decoder step (query s_{t-1}, keys K_i = H_i W_k, values H_i).

    q = s_{t-1} W_q (B, a), the caller's product; U[b, i] = tanh(q_b + K[i, b]) (B, S, a); e_bi = v·U[b, i];
    α = softmax over the first src_len[b] positions (0 beyond); C_t = Σ_i α_bi H_i (B, dA).

    The B·S·a tanh are the step's main cost, so each is written with exponentials the
    caller and this step share: tanh(x) = 1 − 2 / (e^{2x} + 1) and e^{2(q + k)} = e^{2q} e^{2k},
    with EK = e^{2K} (S, B, a) taken once per batch (:func:`engine.seq2seq._encoder.encode`)
    and e^{2q} once per step (B·a exponentials, written over q). The inner loop is then a multiply
    and a divide, which the compiler vectorises. (A query or key beyond ±354 makes its
    exponential inf or 0 and the formula still gives ±1, as tanh does; only both that large
    with opposite signs would give NaN, which the training loop reports as a diverged loss.)
    """
    B, S, a = U.shape
    dA = ctx.shape[1]
    for b in range(B):
        for k in range(a):
            q[b, k] = math.exp(2.0 * q[b, k])       # e^{2q}
        L = src_len[b]
        m = -np.inf
        for i in range(L):
            acc = 0.0
            for k in range(a):
                u = 1.0 - 2.0 / (q[b, k] * EK[i, b, k] + 1.0)   # tanh(q_b + K[i, b])
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
                ctx[b, j] += w * Ann[i, b, j]


@jit
def _attend_backward(v, Ann, src_len, U, alpha, dctx, dq, dK, dAnn, gv, dalpha):
    """Backward of :func:`_attend` given dC_t (B, dA): writes dL/dq (B, a) and adds to
    dK (S, B, a), dAnn (S, B, dA) and gv (a,). dalpha (≥ S,) is scratch."""
    B, S, a = U.shape
    dA = dctx.shape[1]
    for b in range(B):
        L = src_len[b]
        dot = 0.0
        for i in range(L):                          # C_t = Σ α_i H_i
            acc = 0.0
            w = alpha[b, i]
            for j in range(dA):
                acc += dctx[b, j] * Ann[i, b, j]
                dAnn[i, b, j] += w * dctx[b, j]
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


# ---------------------------------------------------------------------------- decoder


@jit
def _output_step(logits, bo, lp, pred, tgt, tgt_len, t, loss):
    """Step t's output layer for a batch: lp (B, V) = log_softmax(logits + b_O), pred[b, t]
    its argmax; returns ``loss`` − Σ_{b: t < tgt_len[b]} lp[b, tgt[b, t]] (the running sum,
    so the steps add up in one order). Overwrites logits with logits + b_O."""
    B, V = logits.shape
    for b in range(B):                              # log-softmax per row
        m = -np.inf
        for k in range(V):
            z = logits[b, k] + bo[k]
            logits[b, k] = z
            if z > m:
                m = z
        total = 0.0
        for k in range(V):
            total += math.exp(logits[b, k] - m)
        lse = m + math.log(total)
        best = 0
        for k in range(V):
            lp[b, k] = logits[b, k] - lse
            if lp[b, k] > lp[b, best]:
                best = k
        pred[b, t] = best
        if t < tgt_len[b]:
            loss -= lp[b, tgt[b, t]]                # L_t = -log P(y_t)
    return loss


def _t(W: np.ndarray) -> np.ndarray:
    """Wᵀ as a contiguous array (the step's products read C-ordered operands)."""
    return np.ascontiguousarray(W.T)


def decode(p: Params, cell: int, attention: bool, src_len: np.ndarray, tgt: np.ndarray,
           tgt_len: np.ndarray, ratio: float, n_seq: int, dec_in: np.ndarray, pred: np.ndarray,
           w: Work) -> float:
    """The decoder, T steps for a batch of B, after :func:`encode`.

    On entry w.Sd[0] (B, d) holds the start state and w.tokens (B,) the first step's inputs.
    Step t: the input y (step t > 0 feeds the ground truth tgt[b, t-1] when
    w.coins[t, b] < ratio, draws in [0, 1), else the model's own argmax pred[b, t-1]); the
    context C_t (attention: e^{2q} in w.Qa, tanh values in w.U, weights in w.Al, contexts in
    w.Cx, every step kept for the backward pass); then

        gx = EW[y] + C_t W_c      (EW = E_y W_y + b_x (V, G·d); CW = C W_c (B, G·d) when fixed)
        s_t = cell(gx, s_{t-1} W_h + b_h)                 gate caches w.dc (4, T, B, d)
        log P = log_softmax(s_t W_O + b_O)                w.LP (T, B, V)

    Fills dec_in, pred (B, T) and w.Sd[1:].

    Returns:
        (1/n_seq) Σ_b Σ_{t < tgt_len[b]} -log P(tgt[b, t]).
    """
    T = tgt.shape[1]
    np.matmul(p["dec_embed"], p["dec_W_y"], out=w.EW)   # (V, G d)  E_y W_HY + b, every token
    w.EW[...] += p["dec_b_x"]
    if not attention:
        np.matmul(w.C, p["dec_W_c"], out=w.CW)          # (B, G d)  C W_HC, the same every step
        w.Al[...] = 0.0                                 # nothing is attended
    w.every[...] = T                                    # no decoder step is padding
    gx, tokens = w.gx, w.tokens
    loss = 0.0
    for t in range(T):
        if t > 0:                                       # the truth, or the model's own guess
            np.copyto(tokens, np.where(w.coins[t] < ratio, tgt[:, t - 1], pred[:, t - 1]))
        dec_in[:, t] = tokens
        s_prev = w.Sd[t]
        if attention:
            np.dot(s_prev, p["att_W_q"], w.Qa[t])       # (B, a)  the query s_{t-1} W_q
            _attend(p["att_v"], w.Ann, w.EK, src_len, w.Qa[t], w.U[t], w.Al[t], w.Cx[t])
            np.dot(w.Cx[t], p["dec_W_c"], gx)           # (B, G d)  C_t W_HC
            gx += w.EW[tokens]                          #         + E_y[y] W_HY + b
        else:
            np.add(w.CW, w.EW[tokens], out=gx)
        np.dot(s_prev, p["dec_W_h"], w.gh)              # (B, G d)  s_{t-1} W_HH
        _cell_forward(cell, gx, w.gh, p["dec_b_h"], s_prev, w.every, t, w.Sd[t + 1],
                      w.dc[0, t], w.dc[1, t], w.dc[2, t], w.dc[3, t])
        np.dot(w.Sd[t + 1], p["out_W"], w.logits)       # (B, V)
        loss = _output_step(w.logits, p["out_b"], w.LP[t], pred, tgt, tgt_len, t, loss)
    return loss / n_seq


def decode_backward(p: Params, g: Params, cell: int, attention: bool, src_len: np.ndarray,
                    tgt: np.ndarray, tgt_len: np.ndarray, n_seq: int, dec_in: np.ndarray,
                    w: Work) -> None:
    """Backward of :func:`decode` into g; leaves dL/dAnn in w.dAnn, dL/dC in w.dC and
    dL/ds_0 in w.ds for :func:`encode_backward`."""
    B, T = tgt.shape
    S, d = w.Ann.shape[0], w.Sd.shape[2]
    # the output layer, every step at once: dL/dz = (P - onehot(y)) / n_seq on real steps
    real = (np.arange(T)[:, None] < tgt_len[None, :]) / n_seq        # (T, B)
    np.exp(w.LP, out=w.dlog)
    w.dlog[...] *= real[:, :, None]
    w.dlog[np.arange(T)[:, None], np.arange(B)[None, :], tgt.T] -= real
    dlog2 = w.dlog.reshape(T * B, -1)
    S_new = w.Sd[1:].reshape(T * B, d)                                 # s_t, t = 1..T
    S_prev = w.Sd[:T].reshape(T * B, d)                                # s_{t-1}
    np.matmul(S_new.T, dlog2, out=g["out_W"])                          # (d, V)
    dlog2.sum(axis=0, out=g["out_b"])
    np.matmul(dlog2, p["out_W"].T, out=w.dS.reshape(T * B, d))         # (T B, d)
    # through time
    w.ds[...] = 0.0
    w.dK[...] = 0.0
    w.dAnn[...] = 0.0
    g["att_v"][...] = 0.0
    WhT, WcT, WqT = _t(p["dec_W_h"]), _t(p["dec_W_c"]), _t(p["att_W_q"])
    ds = w.ds                                       # dL/ds_t, then dL/ds_{t-1}
    for t in range(T - 1, -1, -1):
        _cell_backward(cell, ds, w.dS[t], w.Sd[t], w.every, t, w.dc[0, t], w.dc[1, t],
                       w.dc[2, t], w.dc[3, t], w.dGX[t], w.dGH[t], w.ds_direct)
        np.dot(w.dGH[t], WhT, ds)                   # (B, d)  through W_HH
        ds += w.ds_direct                           #   + the direct path (GRU: z ⊙ ds')
        if attention:
            np.dot(w.dGX[t], WcT, w.dctx)           # (B, dA)  dL/dC_t
            _attend_backward(p["att_v"], w.Ann, src_len, w.U[t], w.Al[t], w.dctx, w.dQ[t],
                             w.dK, w.dAnn, g["att_v"], w.dalpha)
            np.dot(w.dQ[t], WqT, w.dsq)             # (B, d)  through the query s_{t-1} W_q
            ds += w.dsq
    dGX2, dGH2 = w.dGX.reshape(T * B, -1), w.dGH.reshape(T * B, -1)
    np.matmul(S_prev.T, dGH2, out=g["dec_W_h"])                        # (d, G d)
    dGH2.sum(axis=0, out=g["dec_b_h"])
    # gx = EW[y] + …: the table's gradient collects the rows of the steps fed each token
    sum_rows_by_token(dec_in.T.ravel(), dGX2, w.DEW)                   # (V, G d)
    np.matmul(w.DEW, p["dec_W_y"].T, out=g["dec_embed"])               # EW = E_y W_HY + b
    np.matmul(p["dec_embed"].T, w.DEW, out=g["dec_W_y"])
    w.DEW.sum(axis=0, out=g["dec_b_x"])
    if attention:
        np.matmul(w.Cx.reshape(T * B, -1).T, dGX2, out=g["dec_W_c"])   # (dA, G d)
        np.matmul(S_prev.T, w.dQ.reshape(T * B, -1), out=g["att_W_q"])  # (d, a)
        Ann2, dK2 = w.Ann.reshape(S * B, -1), w.dK.reshape(S * B, -1)
        np.matmul(Ann2.T, dK2, out=g["att_W_k"])                       # K = H W_k: (dA, a)
        w.dAnn.reshape(S * B, -1)[...] += dK2 @ p["att_W_k"].T
        w.dC[...] = 0.0
    else:                                           # C W_HC at every step
        dGX_sum = w.dGX.sum(axis=0)                                    # (B, G d)
        np.matmul(w.C.T, dGX_sum, out=g["dec_W_c"])
        np.matmul(dGX_sum, p["dec_W_c"].T, out=w.dC)


# ---------------------------------------------------------------------------- training pass


def training_pass(p: Params, cell: int, bidirectional: bool, attention: bool, src: np.ndarray,
                  src_len: np.ndarray, tgt: np.ndarray, tgt_len: np.ndarray, ratio: float,
                  n_seq: int, dec_in: np.ndarray, pred: np.ndarray, w: Work,
                  g: Params | None = None) -> float:
    """Forward (with teacher forcing) and, given gradient views g, backward through time.

    With ratio 0 and no g this is free-running greedy decoding (each step's argmax is the
    next input), which is how :func:`engine.seq2seq.greedy_decode` calls it: one forward
    pass serves training and inference.

    Args (B sequences, S source and T target positions):
        p: the parameters' named views (:meth:`engine.seq2seq.Seq2SeqConfig.views`).
        cell, bidirectional, attention: the model's kinds (``GRU``/``RNN``).
        src (B, S), src_len (B,): source tokens and lengths (≥ 1).
        tgt (B, T), tgt_len (B,): targets, ending with EOS; positions ≥ tgt_len are padding.
        ratio: step t > 0 feeds the ground truth tgt[b, t-1] when w.coins[t, b] < ratio
            (draws in [0, 1)), else the model's own argmax prediction from step t-1.
        n_seq: the number of sequences the loss is averaged over: B, or the whole batch's
            size when these B rows are one part of it (the parts' losses and gradients
            then add up to the whole batch's).
        dec_in (B, T), pred (B, T): receive the decoder inputs used and the argmax outputs.
        w: the workspace views for this batch (:class:`engine.seq2seq.workspace.Work`);
            w.Al (T, B, S) receives the attention weights α of every step (zero for the
            fixed-context decoder).
        g: views of w.grad by parameter name; given, they receive dL/dθ.

    Returns:
        L = (1/n_seq) Σ_b Σ_{t < tgt_len[b]} -log P(tgt[b, t]): cross-entropy summed over
        steps, averaged over the batch; padding ignored.
    """
    S = src.shape[1]
    encode(p, cell, bidirectional, attention, src, src_len, w)
    w.Sd[0] = w.Hs[0, S]                            # the decoder starts from H_T
    w.tokens[...] = BOS                             # and is fed BOS first
    loss = decode(p, cell, attention, src_len, tgt, tgt_len, ratio, n_seq, dec_in, pred, w)
    if g is not None:
        decode_backward(p, g, cell, attention, src_len, tgt, tgt_len, n_seq, dec_in, w)
        encode_backward(p, g, cell, bidirectional, src, src_len, w.dAnn, w.dC, w.ds, w)
    return loss


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
