"""Slow, obviously-right NumPy twins of the engine's public functions.

Written from the formulas (lecture notes, Vaswani 2017, Bahdanau 2014, PyTorch docs), not from
the engine's code: explicit Python loops and plain NumPy, no numba, no clever tricks beyond
subtracting the maximum before ``exp``. Tests compare every engine function with its twin.
"""

from __future__ import annotations

import math

import numpy as np


# --- softmax -----------------------------------------------------------------------------

def softmax_1d(scores, allowed=None, temperature=1.0):
    """Softmax of a 1-D list over the allowed positions; nothing allowed → all zeros."""
    scores = [float(s) for s in scores]
    n = len(scores)
    allowed = [True] * n if allowed is None else [bool(a) for a in allowed]
    live = [scores[j] / temperature for j in range(n) if allowed[j] and scores[j] != -math.inf]
    if not live:
        return np.zeros(n)
    top = max(live)
    ex = [math.exp(scores[j] / temperature - top) if allowed[j] and scores[j] != -math.inf else 0.0
          for j in range(n)]
    total = sum(ex)
    return np.array([e / total for e in ex])


def softmax(x, axis=-1, temperature=1.0):
    x = np.asarray(x, dtype=np.float64)
    moved = np.moveaxis(x, axis, -1)
    out = np.zeros(moved.shape)
    for idx in np.ndindex(moved.shape[:-1]):
        out[idx] = softmax_1d(moved[idx], temperature=temperature)
    return np.moveaxis(out, -1, axis)


def log_softmax(x, axis=-1, temperature=1.0):
    x = np.asarray(x, dtype=np.float64)
    moved = np.moveaxis(x, axis, -1)
    out = np.zeros(moved.shape)
    for idx in np.ndindex(moved.shape[:-1]):
        row = moved[idx] / temperature
        top = row.max()
        lse = top + math.log(sum(math.exp(v - top) for v in row))
        out[idx] = row - lse
    return np.moveaxis(out, -1, axis)


def masked_softmax(scores, mask, axis=-1, temperature=1.0):
    scores = np.asarray(scores, dtype=np.float64)
    mask = np.broadcast_to(np.asarray(mask, dtype=bool), scores.shape)
    s = np.moveaxis(scores, axis, -1)
    m = np.moveaxis(mask, axis, -1)
    out = np.zeros(s.shape)
    for idx in np.ndindex(s.shape[:-1]):
        out[idx] = softmax_1d(s[idx], m[idx], temperature)
    return np.moveaxis(out, -1, axis)


# --- masks -------------------------------------------------------------------------------

def padding_mask(lengths, max_len=None):
    lengths = list(lengths)
    S = max(lengths) if max_len is None else max_len
    return np.array([[j < n for j in range(S)] for n in lengths], dtype=bool)


def causal_mask(L, S=None):
    S = L if S is None else S
    return np.array([[j <= i for j in range(S)] for i in range(L)], dtype=bool)


# --- scoring -----------------------------------------------------------------------------

def _per_query(Q, K, score):
    Q = np.asarray(Q, dtype=np.float64)
    K = np.asarray(K, dtype=np.float64)
    if Q.ndim == 1:
        return np.array([score(Q, k) for k in K])
    return np.array([[score(q, k) for k in K] for q in Q])


def dot_scores(Q, K):
    return _per_query(Q, K, lambda q, k: sum(a * b for a, b in zip(q, k)))


def scaled_dot_scores(Q, K, scale=None):
    d_k = np.asarray(K).shape[-1]
    s = 1.0 / math.sqrt(d_k) if scale is None else scale
    return _per_query(Q, K, lambda q, k: s * sum(a * b for a, b in zip(q, k)))


def distance_scores(Q, K, scale=1.0):
    """−scale · Σ_c (q_c − k_c)², one query-key pair at a time."""
    return _per_query(Q, K, lambda q, k: -scale * sum((a - b) ** 2 for a, b in zip(q, k)))


def general_scores(Q, K, M):
    M = np.asarray(M, dtype=np.float64)

    def score(q, k):
        return sum(q[a] * M[a, c] * k[c] for a in range(M.shape[0]) for c in range(M.shape[1]))

    return _per_query(Q, K, score)


def additive_scores(Q, K, W_q, W_k, v):
    W_q = np.asarray(W_q, dtype=np.float64)
    W_k = np.asarray(W_k, dtype=np.float64)
    v = np.asarray(v, dtype=np.float64)

    def score(q, k):
        return sum(v[a] * math.tanh(W_q[a] @ q + W_k[a] @ k) for a in range(len(v)))

    return _per_query(Q, K, score)


# --- attention ---------------------------------------------------------------------------

def attention_2d(Q, K, V, mask=None, scale=None):
    """One (L, d_k) × (S, d_k) × (S, d_v) attention, loop over queries and keys."""
    Q = np.asarray(Q, dtype=np.float64)
    K = np.asarray(K, dtype=np.float64)
    V = np.asarray(V, dtype=np.float64)
    L, S = Q.shape[0], K.shape[0]
    s = 1.0 / math.sqrt(Q.shape[1]) if scale is None else scale
    mask = np.ones((L, S), bool) if mask is None else np.broadcast_to(np.asarray(mask, bool), (L, S))
    weights = np.zeros((L, S))
    out = np.zeros((L, V.shape[1]))
    for i in range(L):
        scores = [s * float(Q[i] @ K[j]) for j in range(S)]
        weights[i] = softmax_1d(scores, mask[i])
        for j in range(S):
            out[i] += weights[i, j] * V[j]
    return out, weights


def attention(Q, K, V, mask=None, scale=None):
    """Batched twin: broadcast the batch dims, then loop over them."""
    Q, K, V = (np.asarray(a, dtype=np.float64) for a in (Q, K, V))
    L, S = Q.shape[-2], K.shape[-2]
    shapes = [Q.shape[:-2], K.shape[:-2], V.shape[:-2]]
    if mask is not None and np.ndim(mask) > 2:
        shapes.append(np.shape(mask)[:-2])
    batch = np.broadcast_shapes(*shapes)
    Qb = np.broadcast_to(Q, batch + Q.shape[-2:])
    Kb = np.broadcast_to(K, batch + K.shape[-2:])
    Vb = np.broadcast_to(V, batch + V.shape[-2:])
    Mb = None if mask is None else np.broadcast_to(np.asarray(mask, bool), batch + (L, S))
    out = np.zeros(batch + (L, V.shape[-1]))
    weights = np.zeros(batch + (L, S))
    for idx in np.ndindex(batch):
        out[idx], weights[idx] = attention_2d(Qb[idx], Kb[idx], Vb[idx],
                                              None if Mb is None else Mb[idx], scale)
    return out, weights


def self_attention(X, W_Q, W_K, W_V, mask=None, causal=False):
    X = np.asarray(X, dtype=np.float64)
    n = X.shape[0]
    m = np.ones((n, n), bool) if mask is None else np.broadcast_to(np.asarray(mask, bool), (n, n)).copy()
    if causal:
        m &= causal_mask(n)
    return attention_2d(X @ np.asarray(W_Q, float), X @ np.asarray(W_K, float),
                        X @ np.asarray(W_V, float), m)


def cross_attention(S_dec, H_enc, W_Q, W_K, W_V, mask=None):
    S_dec = np.asarray(S_dec, dtype=np.float64)
    H_enc = np.asarray(H_enc, dtype=np.float64)
    return attention_2d(S_dec @ np.asarray(W_Q, float), H_enc @ np.asarray(W_K, float),
                        H_enc @ np.asarray(W_V, float), mask)


def multi_head_attention(X_q, X_kv, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    """Naive per-head loop: slice the projection matrices' columns for each head."""
    X_q, X_kv, W_Q, W_K, W_V, W_O = (np.asarray(a, dtype=np.float64)
                                     for a in (X_q, X_kv, W_Q, W_K, W_V, W_O))
    d_model = W_Q.shape[1]
    dh = d_model // num_heads
    L, S = X_q.shape[0], X_kv.shape[0]
    masks = None if mask is None else np.broadcast_to(np.asarray(mask, bool), (num_heads, L, S))
    heads, weights = [], []
    for i in range(num_heads):
        cols = slice(i * dh, (i + 1) * dh)
        o, w = attention_2d(X_q @ W_Q[:, cols], X_kv @ W_K[:, cols], X_kv @ W_V[:, cols],
                            None if masks is None else masks[i])
        heads.append(o)
        weights.append(w)
    return np.concatenate(heads, axis=1) @ W_O, np.stack(weights)


# --- positional --------------------------------------------------------------------------

def sinusoidal_encoding(n_positions, d_model, base=10000.0):
    pe = np.zeros((n_positions, d_model))
    for pos in range(n_positions):
        for col in range(d_model):
            two_i = col - (col % 2)  # 2i for both the sin column 2i and the cos column 2i+1
            angle = pos / base ** (two_i / d_model)
            pe[pos, col] = math.sin(angle) if col % 2 == 0 else math.cos(angle)
    return pe


# --- pooling -----------------------------------------------------------------------------

def max_pool(V, axis=0):
    V = np.asarray(V, dtype=np.float64)
    moved = np.moveaxis(V, axis, 0)
    best = moved[0].copy()
    for row in moved[1:]:
        best = np.where(row > best, row, best)
    return best


def mean_pool(V, axis=0):
    V = np.asarray(V, dtype=np.float64)
    moved = np.moveaxis(V, axis, 0)
    total = np.zeros(moved.shape[1:])
    for row in moved:
        total = total + row
    return total / moved.shape[0]


def attention_pool(V, weights):
    V = np.asarray(V, dtype=np.float64)
    total = np.zeros(V.shape[1:])
    for a, v in zip(weights, V):
        total = total + a * v
    return total


def attention_pool_query(q, K, V, scale=None):
    q = np.asarray(q, dtype=np.float64)
    weights = softmax_1d(scaled_dot_scores(q, K, scale))
    return attention_pool(V, weights), weights


# --- recurrent networks (column convention W x) -----------------------------------------

def _act(name):
    return np.tanh if name == "tanh" else (lambda z: np.maximum(z, 0.0))


def rnn_encoder(X, W_hx, W_hh, b, h0=None, activation="tanh"):
    X, W_hx, W_hh, b = (np.asarray(a, dtype=np.float64) for a in (X, W_hx, W_hh, b))
    f = _act(activation)
    h = np.zeros(W_hh.shape[0]) if h0 is None else np.asarray(h0, dtype=np.float64)
    states = []
    for x in X:
        h = f(W_hx @ x + W_hh @ h + b)  # H_t = f(W_HX X_t + W_HH H_{t-1} + b)
        states.append(h)
    return np.array(states)


def decoder_step(h_prev, y_prev, context, W_hh, W_hy, W_hc, b, W_o, activation="tanh"):
    a = [np.asarray(x, dtype=np.float64) for x in (h_prev, y_prev, context, W_hh, W_hy, W_hc, b, W_o)]
    h_prev, y_prev, context, W_hh, W_hy, W_hc, b, W_o = a
    h = _act(activation)(W_hh @ h_prev + W_hy @ y_prev + W_hc @ context + b)
    logits = W_o @ h
    return h, logits, softmax_1d(logits)


def bahdanau_step(s_prev, y_prev, H, W_a, U_a, v_a, W_hh, W_hy, W_hc, b, W_o, activation="tanh"):
    H = np.asarray(H, dtype=np.float64)
    s_prev = np.asarray(s_prev, dtype=np.float64)
    W_a, U_a, v_a = (np.asarray(x, dtype=np.float64) for x in (W_a, U_a, v_a))
    e = [float(v_a @ np.tanh(W_a @ s_prev + U_a @ H_i)) for H_i in H]  # e_i = v_aᵀ tanh(W_a s + U_a H_i)
    alpha = softmax_1d(e)
    context = sum(alpha[i] * H[i] for i in range(len(H)))
    s, logits, probs = decoder_step(s_prev, y_prev, context, W_hh, W_hy, W_hc, b, W_o, activation)
    return s, logits, probs, context, alpha


def _sigmoid(z):
    return np.array([1.0 / (1.0 + math.exp(-v)) if v >= 0 else math.exp(v) / (1.0 + math.exp(v))
                     for v in np.ravel(z)]).reshape(np.shape(z))


def gru_cell(x, h, W_ih, W_hh, b_ih, b_hh):
    """torch.nn.GRUCell for one example: gates stacked as (r, z, n)."""
    x, h, W_ih, W_hh, b_ih, b_hh = (np.asarray(a, dtype=np.float64) for a in (x, h, W_ih, W_hh, b_ih, b_hh))
    H = h.shape[0]
    W_ir, W_iz, W_in = W_ih[:H], W_ih[H:2 * H], W_ih[2 * H:]
    W_hr, W_hz, W_hn = W_hh[:H], W_hh[H:2 * H], W_hh[2 * H:]
    b_ir, b_iz, b_in = b_ih[:H], b_ih[H:2 * H], b_ih[2 * H:]
    b_hr, b_hz, b_hn = b_hh[:H], b_hh[H:2 * H], b_hh[2 * H:]
    r = _sigmoid(W_ir @ x + b_ir + W_hr @ h + b_hr)
    z = _sigmoid(W_iz @ x + b_iz + W_hz @ h + b_hz)
    n = np.tanh(W_in @ x + b_in + r * (W_hn @ h + b_hn))
    return (1 - z) * n + z * h


def lstm_cell(x, h, c, W_ih, W_hh, b_ih, b_hh):
    """torch.nn.LSTMCell for one example: gates stacked as (i, f, g, o)."""
    x, h, c, W_ih, W_hh, b_ih, b_hh = (np.asarray(a, dtype=np.float64)
                                       for a in (x, h, c, W_ih, W_hh, b_ih, b_hh))
    H = h.shape[0]
    gates = W_ih @ x + b_ih + W_hh @ h + b_hh
    i = _sigmoid(gates[:H])
    f = _sigmoid(gates[H:2 * H])
    g = np.tanh(gates[2 * H:3 * H])
    o = _sigmoid(gates[3 * H:])
    c_new = f * c + i * g
    return o * np.tanh(c_new), c_new


# --- loss --------------------------------------------------------------------------------

def cross_entropy(logits, targets, ignore_index=-100, reduction="mean", label_smoothing=0.0):
    """torch.nn.functional.cross_entropy with class-index targets, written as loops."""
    logits = np.asarray(logits, dtype=np.float64)
    targets = np.asarray(targets)
    V = logits.shape[-1]
    flat_z = logits.reshape(-1, V)
    flat_t = targets.reshape(-1)
    losses = np.zeros(flat_t.shape[0])
    count = 0
    eps = label_smoothing
    for n in range(flat_t.shape[0]):
        if flat_t[n] == ignore_index:
            continue
        count += 1
        logp = log_softmax(flat_z[n])
        nll = -logp[flat_t[n]]
        smooth = -sum(logp) / V
        losses[n] = (1 - eps) * nll + eps * smooth
    if reduction == "none":
        return losses.reshape(targets.shape)
    if reduction == "sum":
        return float(sum(losses))
    return float(sum(losses)) / count if count else math.nan


def cross_entropy_grad(logits, targets, ignore_index=-100, reduction="mean", label_smoothing=0.0):
    """∂L/∂z = p − (1 − ε)·onehot(y) − ε/V per counted row, / count for 'mean'."""
    logits = np.asarray(logits, dtype=np.float64)
    targets = np.asarray(targets)
    V = logits.shape[-1]
    flat_z = logits.reshape(-1, V)
    flat_t = targets.reshape(-1)
    grad = np.zeros(flat_z.shape)
    count = sum(1 for t in flat_t if t != ignore_index)
    for n in range(flat_t.shape[0]):
        if flat_t[n] == ignore_index:
            continue
        p = softmax_1d(flat_z[n])
        onehot = np.zeros(V)
        onehot[flat_t[n]] = 1.0
        grad[n] = p - (1 - label_smoothing) * onehot - label_smoothing / V
        if reduction == "mean":
            grad[n] /= count
    return grad.reshape(logits.shape)


# --- attention backward --------------------------------------------------------------------

def softmax_jacobian(alpha):
    """∂α/∂s for α = softmax(s): J_jk = α_j (δ_jk − α_k), i.e. diag(α) − ααᵀ, built entry by entry."""
    alpha = np.asarray(alpha, dtype=np.float64)
    n = alpha.shape[0]
    J = np.zeros((n, n))
    for j in range(n):
        for k in range(n):
            J[j, k] = alpha[j] * ((1.0 if j == k else 0.0) - alpha[k])
    return J


def attention_backward_2d(Q, K, V, mask, dO, scale=None):
    """Chain rule through out = softmax(scale·Q Kᵀ) V one query row at a time, with the full
    softmax Jacobian matrix per row (no shortcuts); returns dQ, dK, dV, dα."""
    Q, K, V, dO = (np.asarray(a, dtype=np.float64) for a in (Q, K, V, dO))
    L, S = Q.shape[0], K.shape[0]
    s = 1.0 / math.sqrt(Q.shape[1]) if scale is None else scale
    _, alpha = attention_2d(Q, K, V, mask, s)
    dQ, dK, dV = np.zeros(Q.shape), np.zeros(K.shape), np.zeros(V.shape)
    d_alpha = np.zeros((L, S))
    for i in range(L):
        for j in range(S):
            d_alpha[i, j] = float(dO[i] @ V[j])          # out_i = Σ_j α_ij V_j
            dV[j] += alpha[i, j] * dO[i]
        ds = softmax_jacobian(alpha[i]).T @ d_alpha[i]    # ∂L/∂s_ik = Σ_j ∂L/∂α_ij ∂α_ij/∂s_ik
        for j in range(S):                                 # s_ij = scale · Q_i · K_j
            dQ[i] += s * ds[j] * K[j]
            dK[j] += s * ds[j] * Q[i]
    return dQ, dK, dV, d_alpha


def multi_head_attention_backward(X_q, X_kv, W_Q, W_K, W_V, W_O, num_heads, mask, d_out):
    """Per-head loop: each head's slice of the projections gets its own chain rule."""
    X_q, X_kv, W_Q, W_K, W_V, W_O, d_out = (np.asarray(a, dtype=np.float64)
                                           for a in (X_q, X_kv, W_Q, W_K, W_V, W_O, d_out))
    d_model = W_Q.shape[1]
    dh = d_model // num_heads
    L, S = X_q.shape[0], X_kv.shape[0]
    masks = None if mask is None else np.broadcast_to(np.asarray(mask, bool), (num_heads, L, S))
    heads = []
    grads = {k: np.zeros(W_Q.shape if k == "W_Q" else W_K.shape) for k in ("W_Q", "W_K", "W_V")}
    dX_q, dX_kv = np.zeros(X_q.shape), np.zeros(X_kv.shape)
    d_concat = d_out @ W_O.T                               # out = concat W_O
    d_weights = []
    for i in range(num_heads):
        cols = slice(i * dh, (i + 1) * dh)
        Qi, Ki, Vi = X_q @ W_Q[:, cols], X_kv @ W_K[:, cols], X_kv @ W_V[:, cols]
        mi = None if masks is None else masks[i]
        heads.append(attention_2d(Qi, Ki, Vi, mi)[0])
        dQi, dKi, dVi, dwi = attention_backward_2d(Qi, Ki, Vi, mi, d_concat[:, cols])
        d_weights.append(dwi)
        grads["W_Q"][:, cols] = X_q.T @ dQi                # Q_i = X_q W_Q[:, cols]
        grads["W_K"][:, cols] = X_kv.T @ dKi
        grads["W_V"][:, cols] = X_kv.T @ dVi
        dX_q += dQi @ W_Q[:, cols].T
        dX_kv += dKi @ W_K[:, cols].T + dVi @ W_V[:, cols].T
    dW_O = np.concatenate(heads, axis=1).T @ d_out
    return dX_q, dX_kv, grads["W_Q"], grads["W_K"], grads["W_V"], dW_O, np.stack(d_weights)


def additive_attention(Q, K, V, W_q, W_k, v, mask=None):
    """softmax over e_ij = v · tanh(W_q q_i + W_k k_j), then Σ_j α_ij V_j."""
    e = additive_scores(Q, K, W_q, W_k, v)
    V = np.asarray(V, dtype=np.float64)
    L, S = e.shape
    m = np.ones((L, S), bool) if mask is None else np.broadcast_to(np.asarray(mask, bool), (L, S))
    alpha = np.array([softmax_1d(e[i], m[i]) for i in range(L)])
    return alpha @ V, alpha


def additive_attention_backward(Q, K, V, W_q, W_k, v, mask, dO):
    """Chain rule entry by entry: per (i, j) the score's gradients, per row the full Jacobian."""
    Q, K, V, W_q, W_k, v, dO = (np.asarray(a, dtype=np.float64) for a in (Q, K, V, W_q, W_k, v, dO))
    _, alpha = additive_attention(Q, K, V, W_q, W_k, v, mask)
    L, S = alpha.shape
    dQ, dK, dV = np.zeros(Q.shape), np.zeros(K.shape), np.zeros(V.shape)
    dW_q, dW_k, dv = np.zeros(W_q.shape), np.zeros(W_k.shape), np.zeros(v.shape)
    d_alpha = dO @ V.T
    for i in range(L):
        de = softmax_jacobian(alpha[i]).T @ d_alpha[i]
        for j in range(S):
            dV[j] += alpha[i, j] * dO[i]
            t = np.tanh(W_q @ Q[i] + W_k @ K[j])           # (h,)
            dv += de[j] * t
            g = de[j] * v * (1 - t ** 2)                   # ∂e_ij / ∂(W_q q_i + W_k k_j)
            dW_q += np.outer(g, Q[i])
            dW_k += np.outer(g, K[j])
            dQ[i] += W_q.T @ g
            dK[j] += W_k.T @ g
    return dQ, dK, dV, dW_q, dW_k, dv, d_alpha
