"""Recurrent encoder, decoder steps, Bahdanau attention step, GRU and LSTM cells (lecture §1–§4).

Column convention of the notes (a weight matrix times a column vector, W x):

    encoder   H_t = f(W_HX X_t + W_HH H_{t-1} + b),                C = H_T
    decoder   H_t = f(W_HH H_{t-1} + W_HY Y_{t-1} + W_HC C + b),   P = softmax(W_O H_t)
    Bahdanau  e_i = v_aᵀ tanh(W_a s_{t-1} + U_a H_i),  α = softmax(e),  C_t = Σ_i α_i H_i,
              then the decoder update with C_t                   (Bahdanau et al., 2014)

The gated cells follow ``torch.nn.GRUCell`` and ``torch.nn.LSTMCell`` exactly, including the
gate order in the stacked weights (GRU: r, z, n; LSTM: i, f, g, o) and GRU's reset gate
applied to (W_hn h + b_hn). The ``_kernel`` functions are plain numba functions behind the
validated wrappers below (the seq2seq lab has its own batched kernels in
:mod:`engine.seq2seq._kernels`, with the backward passes these single steps do not need).
"""

from __future__ import annotations

import math

import numpy as np

from engine._jit import jit
from engine._validate import as_float, check_choice, check_same_dim, result_dtype, shape_str
from engine.scoring import _additive_scores

_ACTIVATIONS = ("tanh", "relu")


@jit
def _act(z, relu):
    if relu:
        return z if z > 0.0 else 0.0
    return math.tanh(z)


@jit
def _sigmoid(z):
    # stable on both sides: never exp of a large positive number
    if z >= 0.0:
        return 1.0 / (1.0 + math.exp(-z))
    e = math.exp(z)
    return e / (1.0 + e)


@jit
def _matvec_add(W, x, out):
    """out += W (m, n) x (n,)."""
    m, n = W.shape
    for a in range(m):
        acc = 0.0
        for c in range(n):
            acc += W[a, c] * x[c]
        out[a] += acc


@jit
def _rnn_encoder_kernel(X, W_hx, W_hh, b, h0, relu, H):
    """H (T, d_h): H[t] = f(W_hx X[t] + W_hh H[t-1] + b), H[-1] = h0."""
    T = X.shape[0]
    d_h = b.shape[0]
    pre = np.empty(d_h)
    prev = np.empty(d_h)
    for a in range(d_h):
        prev[a] = h0[a]
    for t in range(T):
        for a in range(d_h):
            pre[a] = b[a]
        _matvec_add(W_hx, X[t], pre)  # W_HX X_t
        _matvec_add(W_hh, prev, pre)  # + W_HH H_{t-1}
        for a in range(d_h):
            prev[a] = _act(pre[a], relu)
            H[t, a] = prev[a]


@jit
def _decoder_step_kernel(h_prev, y_prev, context, W_hh, W_hy, W_hc, b, W_o, relu,
                         h, logits, probs):
    """h = f(W_hh h_prev + W_hy y_prev + W_hc context + b); logits = W_o h; probs = softmax."""
    d_h = b.shape[0]
    pre = np.empty(d_h)
    for a in range(d_h):
        pre[a] = b[a]
    _matvec_add(W_hh, h_prev, pre)
    _matvec_add(W_hy, y_prev, pre)
    _matvec_add(W_hc, context, pre)
    hv = np.empty(d_h)
    for a in range(d_h):
        hv[a] = _act(pre[a], relu)
        h[a] = hv[a]
    V = W_o.shape[0]
    z = np.zeros(V)
    _matvec_add(W_o, hv, z)  # logits z = W_O H_t
    m = z[0]
    for w in range(V):
        if z[w] > m:
            m = z[w]
    total = 0.0
    for w in range(V):
        logits[w] = z[w]
        z[w] = math.exp(z[w] - m)
        total += z[w]
    for w in range(V):
        probs[w] = z[w] / total


@jit
def _bahdanau_step_kernel(s_prev, y_prev, H, W_a, U_a, v_a, W_hh, W_hy, W_hc, b, W_o, relu,
                          s, logits, probs, context, alpha):
    """One Bahdanau decoder step; writes s, logits, probs, context C_t (d_h,), alpha (T,)."""
    T, d_h = H.shape
    e = np.empty((1, T))
    _additive_scores(s_prev.reshape(1, -1), H, W_a, U_a, v_a, e)  # e_i = v_aᵀ tanh(W_a s + U_a H_i)
    m = e[0, 0]
    for i in range(T):
        if e[0, i] > m:
            m = e[0, i]
    total = 0.0
    for i in range(T):
        e[0, i] = math.exp(e[0, i] - m)
        total += e[0, i]
    c = np.zeros(d_h)
    for i in range(T):
        a = e[0, i] / total  # α_i
        alpha[i] = a
        for k in range(d_h):
            c[k] += a * H[i, k]  # C_t = Σ_i α_i H_i
    for k in range(d_h):
        context[k] = c[k]
    _decoder_step_kernel(s_prev, y_prev, c, W_hh, W_hy, W_hc, b, W_o, relu, s, logits, probs)


@jit
def _gru_cell_kernel(x, h, W_ih, W_hh, b_ih, b_hh, out):
    """Batched torch.nn.GRUCell: x (B, I), h (B, H), weights (3H, ·) stacked as r, z, n."""
    B, Hd = h.shape
    gi = np.empty(3 * Hd)
    gh = np.empty(3 * Hd)
    for bi in range(B):
        for a in range(3 * Hd):
            gi[a] = b_ih[a]
            gh[a] = b_hh[a]
        _matvec_add(W_ih, x[bi], gi)  # W_i{r,z,n} x + b_i{r,z,n}
        _matvec_add(W_hh, h[bi], gh)  # W_h{r,z,n} h + b_h{r,z,n}
        for a in range(Hd):
            r = _sigmoid(gi[a] + gh[a])
            z = _sigmoid(gi[Hd + a] + gh[Hd + a])
            n = math.tanh(gi[2 * Hd + a] + r * gh[2 * Hd + a])
            out[bi, a] = (1.0 - z) * n + z * h[bi, a]


@jit
def _lstm_cell_kernel(x, h, c, W_ih, W_hh, b_ih, b_hh, h_out, c_out):
    """Batched torch.nn.LSTMCell: x (B, I), h, c (B, H), weights (4H, ·) stacked as i, f, g, o."""
    B, Hd = h.shape
    g = np.empty(4 * Hd)
    for bi in range(B):
        for a in range(4 * Hd):
            g[a] = b_ih[a] + b_hh[a]
        _matvec_add(W_ih, x[bi], g)
        _matvec_add(W_hh, h[bi], g)
        for a in range(Hd):
            i_g = _sigmoid(g[a])
            f_g = _sigmoid(g[Hd + a])
            g_g = math.tanh(g[2 * Hd + a])
            o_g = _sigmoid(g[3 * Hd + a])
            c_new = f_g * c[bi, a] + i_g * g_g  # c' = f ⊙ c + i ⊙ g
            c_out[bi, a] = c_new
            h_out[bi, a] = o_g * math.tanh(c_new)  # h' = o ⊙ tanh(c')


def _cast(dt: np.dtype, *arrays: np.ndarray) -> list[np.ndarray]:
    return [np.ascontiguousarray(a, dtype=dt) for a in arrays]


def rnn_encoder(X: object, W_hx: object, W_hh: object, b: object, h0: object | None = None,
                activation: str = "tanh") -> np.ndarray:
    """Run a simple (Elman) RNN encoder over a sequence and return every hidden state.

    H_t = f(W_hx X_t + W_hh H_{t-1} + b), t = 1..T; the context vector is C = H[-1].

    Args:
        X: inputs (T, d_x), one token embedding per row.
        W_hx: (d_h, d_x) input-to-hidden weights.
        W_hh: (d_h, d_h) hidden-to-hidden weights.
        b: (d_h,) bias.
        h0: initial state (d_h,); default zeros.
        activation: f, ``"tanh"`` or ``"relu"``.

    Returns:
        H (T, d_h); row t-1 is H_t.

    Raises:
        ValueError: on wrong or mismatched shapes, NaN/inf, empty input or unknown activation.
    """
    x = as_float(X, "X", ndim=2)
    T, d_x = x.shape
    w_hx = as_float(W_hx, "W_hx", ndim=2)
    check_same_dim(w_hx, 1, d_x, "W_hx", ("d_h", d_x), f"W_hx X_t needs d_x = {d_x} columns")
    d_h = w_hx.shape[0]
    w_hh = as_float(W_hh, "W_hh", shape=(d_h, d_h))
    bb = as_float(b, "b", shape=(d_h,))
    hh0 = np.zeros(d_h) if h0 is None else as_float(h0, "h0", shape=(d_h,))
    relu = check_choice(activation, "activation", _ACTIVATIONS) == "relu"
    dt = result_dtype(x, w_hx, w_hh, bb, *(() if h0 is None else (hh0,)))
    H = np.empty((T, d_h), dtype=dt)  # (T, d_h)
    _rnn_encoder_kernel(*_cast(dt, x, w_hx, w_hh, bb, hh0), relu, H)
    return H


def _decoder_weights(d_h: int, y: np.ndarray, c: np.ndarray, W_hh: object, W_hy: object,
                     W_hc: object, b: object, W_o: object, h_name: str) -> list[np.ndarray]:
    w_hh = as_float(W_hh, "W_hh", shape=(d_h, d_h))
    w_hy = as_float(W_hy, "W_hy", shape=(d_h, y.shape[0]))
    w_hc = as_float(W_hc, "W_hc", shape=(d_h, c.shape[0]))
    bb = as_float(b, "b", shape=(d_h,))
    w_o = as_float(W_o, "W_o", ndim=2)
    check_same_dim(w_o, 1, d_h, "W_o", ("V", d_h), f"W_o {h_name} needs d_h = {d_h} columns")
    return [w_hh, w_hy, w_hc, bb, w_o]


def decoder_step(h_prev: object, y_prev: object, context: object, W_hh: object, W_hy: object,
                 W_hc: object, b: object, W_o: object,
                 activation: str = "tanh") -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One step of the fixed-context decoder: H_t = f(W_hh H_{t-1} + W_hy Y_{t-1} + W_hc C + b).

    Args:
        h_prev: previous decoder state H_{t-1} (d_h,).
        y_prev: previous output token Y_{t-1} as a vector (d_y,) (embedding or one-hot).
        context: context vector C (d_c,).
        W_hh: (d_h, d_h).
        W_hy: (d_h, d_y).
        W_hc: (d_h, d_c).
        b: (d_h,).
        W_o: (V, d_h) unembedding matrix.
        activation: f, ``"tanh"`` or ``"relu"``.

    Returns:
        ``(h, logits, probs)``: h (d_h,), logits W_o h (V,), probs softmax(logits) (V,).

    Raises:
        ValueError: on wrong or mismatched shapes, NaN/inf, empty input or unknown activation.
    """
    h = as_float(h_prev, "h_prev", ndim=1)
    y = as_float(y_prev, "y_prev", ndim=1)
    c = as_float(context, "context", ndim=1)
    ws = _decoder_weights(h.shape[0], y, c, W_hh, W_hy, W_hc, b, W_o, "H_t")
    relu = check_choice(activation, "activation", _ACTIVATIONS) == "relu"
    dt = result_dtype(h, y, c, *ws)
    V = ws[-1].shape[0]
    h_new = np.empty(h.shape[0], dtype=dt)
    logits = np.empty(V, dtype=dt)
    probs = np.empty(V, dtype=dt)
    _decoder_step_kernel(*_cast(dt, h, y, c, *ws), relu, h_new, logits, probs)
    return h_new, logits, probs


def bahdanau_step(s_prev: object, y_prev: object, H: object, W_a: object, U_a: object,
                  v_a: object, W_hh: object, W_hy: object, W_hc: object, b: object, W_o: object,
                  activation: str = "tanh"
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """One decoder step with Bahdanau (additive) attention over the encoder states.

    e_i = v_aᵀ tanh(W_a s_{t-1} + U_a H_i), α = softmax(e), C_t = Σ_i α_i H_i, then
    s_t = f(W_hh s_{t-1} + W_hy y_{t-1} + W_hc C_t + b) and P = softmax(W_o s_t).

    Args:
        s_prev: previous decoder state s_{t-1} (d_s,).
        y_prev: previous output token as a vector (d_y,).
        H: encoder states (T, d_h).
        W_a: (h_a, d_s) query projection.
        U_a: (h_a, d_h) key projection.
        v_a: (h_a,) scoring vector.
        W_hh: (d_s, d_s).
        W_hy: (d_s, d_y).
        W_hc: (d_s, d_h).
        b: (d_s,).
        W_o: (V, d_s).
        activation: f, ``"tanh"`` or ``"relu"``.

    Returns:
        ``(s, logits, probs, context, weights)``: s (d_s,), logits (V,), probs (V,),
        context C_t (d_h,), weights α (T,).

    Raises:
        ValueError: on wrong or mismatched shapes, NaN/inf, empty input or unknown activation.
    """
    s = as_float(s_prev, "s_prev", ndim=1)
    y = as_float(y_prev, "y_prev", ndim=1)
    enc = as_float(H, "H", ndim=2)
    d_s, (T, d_h) = s.shape[0], enc.shape
    w_a = as_float(W_a, "W_a", ndim=2)
    check_same_dim(w_a, 1, d_s, "W_a", ("h_a", d_s), f"W_a s_prev needs d_s = {d_s} columns")
    h_a = w_a.shape[0]
    u_a = as_float(U_a, "U_a", shape=(h_a, d_h))
    vv = as_float(v_a, "v_a", shape=(h_a,))
    ws = _decoder_weights(d_s, y, enc[0], W_hh, W_hy, W_hc, b, W_o, "s_t")
    relu = check_choice(activation, "activation", _ACTIVATIONS) == "relu"
    dt = result_dtype(s, y, enc, w_a, u_a, vv, *ws)
    V = ws[-1].shape[0]
    s_new, logits, probs = (np.empty(n, dtype=dt) for n in (d_s, V, V))
    context, alpha = np.empty(d_h, dtype=dt), np.empty(T, dtype=dt)
    _bahdanau_step_kernel(*_cast(dt, s, y, enc, w_a, u_a, vv, *ws), relu,
                          s_new, logits, probs, context, alpha)
    return s_new, logits, probs, context, alpha


def _cell_inputs(x: object, h: object, W_ih: object, W_hh: object, b_ih: object, b_hh: object,
                 gates: int, extra: tuple[object, str] | None = None):
    xx = as_float(x, "x", ndim=(1, 2))
    hh = as_float(h, "h", ndim=(1, 2))
    single = xx.ndim == 1
    if hh.ndim != xx.ndim:
        raise ValueError(f"h: expected shape {'(H,)' if single else '(B, H)'} to match x of shape "
                         f"{shape_str(xx.shape)}, got shape {shape_str(hh.shape)}")
    x2, h2 = (xx.reshape(1, -1), hh.reshape(1, -1)) if single else (xx, hh)
    B, I = x2.shape
    Hd = h2.shape[1]
    check_same_dim(h2, 0, B, "h", (B, Hd), f"one state per batch row, B = {B}")
    tail = [as_float(W_ih, "W_ih", shape=(gates * Hd, I)),
            as_float(W_hh, "W_hh", shape=(gates * Hd, Hd)),
            as_float(b_ih, "b_ih", shape=(gates * Hd,)),
            as_float(b_hh, "b_hh", shape=(gates * Hd,))]
    arrays = [x2, h2]
    if extra is not None:
        cc = as_float(extra[0], extra[1], shape=hh.shape)
        arrays.append(cc.reshape(1, -1) if single else cc)
    dt = result_dtype(*arrays, *tail)
    return single, dt, _cast(dt, *arrays, *tail)


def gru_cell(x: object, h: object, W_ih: object, W_hh: object, b_ih: object,
             b_hh: object) -> np.ndarray:
    """One GRU step, exactly ``torch.nn.GRUCell`` (gates stacked r, z, n).

    r = σ(W_ir x + b_ir + W_hr h + b_hr), z = σ(W_iz x + b_iz + W_hz h + b_hz),
    n = tanh(W_in x + b_in + r ⊙ (W_hn h + b_hn)), h' = (1 − z) ⊙ n + z ⊙ h.

    Args:
        x: input (I,) or batch (B, I).
        h: state (H,) or (B, H).
        W_ih: (3H, I) input weights [W_ir; W_iz; W_in].
        W_hh: (3H, H) recurrent weights [W_hr; W_hz; W_hn].
        b_ih: (3H,).
        b_hh: (3H,).

    Returns:
        h' shaped like ``h``.

    Raises:
        ValueError: on wrong or mismatched shapes, NaN/inf or empty input.
    """
    single, dt, (x2, h2, w_ih, w_hh, bi, bh) = _cell_inputs(x, h, W_ih, W_hh, b_ih, b_hh, 3)
    out = np.empty(h2.shape, dtype=dt)  # (B, H)
    _gru_cell_kernel(x2, h2, w_ih, w_hh, bi, bh, out)
    return out[0] if single else out


def lstm_cell(x: object, h: object, c: object, W_ih: object, W_hh: object, b_ih: object,
              b_hh: object) -> tuple[np.ndarray, np.ndarray]:
    """One LSTM step, exactly ``torch.nn.LSTMCell`` (gates stacked i, f, g, o).

    [i, f, g, o] = W_ih x + b_ih + W_hh h + b_hh; i, f, o pass through σ, g through tanh;
    c' = f ⊙ c + i ⊙ g, h' = o ⊙ tanh(c').

    Args:
        x: input (I,) or batch (B, I).
        h: hidden state (H,) or (B, H).
        c: cell state, same shape as h.
        W_ih: (4H, I).
        W_hh: (4H, H).
        b_ih: (4H,).
        b_hh: (4H,).

    Returns:
        ``(h', c')`` shaped like ``h``.

    Raises:
        ValueError: on wrong or mismatched shapes, NaN/inf or empty input.
    """
    single, dt, (x2, h2, c2, w_ih, w_hh, bi, bh) = _cell_inputs(
        x, h, W_ih, W_hh, b_ih, b_hh, 4, extra=(c, "c"))
    h_out = np.empty(h2.shape, dtype=dt)  # (B, H)
    c_out = np.empty(h2.shape, dtype=dt)  # (B, H)
    _lstm_cell_kernel(x2, h2, c2, w_ih, w_hh, bi, bh, h_out, c_out)
    return (h_out[0], c_out[0]) if single else (h_out, c_out)
