"""The recurrent cell of the seq2seq kernels, forward and backward, for a batch at one step.

Both the encoder (:mod:`engine.seq2seq._encoder`) and the decoder
(:mod:`engine.seq2seq._kernels`) call these. Plain numba: the matrix products around them are
NumPy products in the callers' time loops, the nonlinearities ``math.exp``.

A row whose step is padding (``t >= lengths[b]``: the source ended) keeps its state: the
forward copies h into h', the backward passes dL/dh' straight back to h and gives the gates
no gradient. This is how each sequence's last state becomes its own H_T.
"""

from __future__ import annotations

import math

from engine._jit import jit
from engine.seq2seq._layout import GRU


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
def _cell_forward(cell, gx, gh, bh, h_prev, lengths, t, h_new, r, z, n, ghn):
    """One recurrent step for a batch of B rows.

    gx = x W_x + b_x (B, G·d), the input side; gh = h W_h (B, G·d), the recurrent side
    without its bias bh (G·d,). Writes h' (B, d) and, for the backward pass, the gates
    r, z, n and ghn = gh_n + bh_n (B, d each; r, z, ghn unused by the RNN).

    GRU:  r = σ(gx_r + gh_r)   z = σ(gx_z + gh_z)   n = tanh(gx_n + r ⊙ gh_n)
          h' = (1 − z) ⊙ n + z ⊙ h
    RNN:  h' = tanh(gx + gh)                                  (n keeps h')
    """
    B, d = h_prev.shape
    for b in range(B):
        if t >= lengths[b]:                     # padding: the state passes unchanged
            for j in range(d):
                h_new[b, j] = h_prev[b, j]
                r[b, j] = 0.0
                z[b, j] = 0.0
                n[b, j] = 0.0
                ghn[b, j] = 0.0
        elif cell == GRU:
            for j in range(d):
                rr = _sigmoid(gx[b, j] + gh[b, j] + bh[j])
                zz = _sigmoid(gx[b, d + j] + gh[b, d + j] + bh[d + j])
                hn = gh[b, 2 * d + j] + bh[2 * d + j]
                nn = _tanh(gx[b, 2 * d + j] + rr * hn)
                r[b, j] = rr
                z[b, j] = zz
                n[b, j] = nn
                ghn[b, j] = hn
                h_new[b, j] = (1.0 - zz) * nn + zz * h_prev[b, j]
        else:
            for j in range(d):
                hh = _tanh(gx[b, j] + gh[b, j] + bh[j])
                n[b, j] = hh
                h_new[b, j] = hh


@jit
def _cell_backward(cell, dh, dh_out, h_prev, lengths, t, r, z, n, ghn, dgx, dgh, dh_direct):
    """Backward of :func:`_cell_forward`. dL/dh' = dh + dh_out (B, d): through the next
    step, and from outside the recurrence (the step's output, its annotation).

    Writes dL/dgx, dL/dgh (B, G·d) and the part of dL/dh that does not go through W_h:
    z ⊙ dL/dh' for the GRU, 0 for the RNN, all of dL/dh' for a padded row. The caller adds
    the path through W_h, dgh W_hᵀ.
    """
    B, d = h_prev.shape
    G = dgx.shape[1] // d
    for b in range(B):
        if t >= lengths[b]:                     # padding: the state was copied
            for j in range(d):
                dh_direct[b, j] = dh[b, j] + dh_out[b, j]
            for j in range(G * d):
                dgx[b, j] = 0.0
                dgh[b, j] = 0.0
        elif cell == GRU:
            for j in range(d):
                g = dh[b, j] + dh_out[b, j]
                rr = r[b, j]
                zz = z[b, j]
                nn = n[b, j]
                dn = g * (1.0 - zz)                        # h' = (1-z) n + z h
                dz = g * (h_prev[b, j] - nn)
                dh_direct[b, j] = g * zz
                da_n = dn * (1.0 - nn * nn)                # n = tanh(a_n)
                da_z = dz * zz * (1.0 - zz)                # z = σ(a_z)
                da_r = da_n * ghn[b, j] * rr * (1.0 - rr)  # a_n = gx_n + r gh_n
                dgx[b, j] = da_r
                dgx[b, d + j] = da_z
                dgx[b, 2 * d + j] = da_n
                dgh[b, j] = da_r
                dgh[b, d + j] = da_z
                dgh[b, 2 * d + j] = da_n * rr
        else:
            for j in range(d):
                da = (dh[b, j] + dh_out[b, j]) * (1.0 - n[b, j] * n[b, j])
                dgx[b, j] = da
                dgh[b, j] = da
                dh_direct[b, j] = 0.0
