"""``training-step`` (§12): forward, loss, backward into W_O, W_Q, W_K, W_V, one update.

The seeded states and weights, the forward pass and the finite-difference checks are the
trace module's own; the slips change the scale, the loss, the gradients and the update."""

from __future__ import annotations

import math

import numpy as np

from engine.mistakes import _ops
from engine.mistakes.slips import Slips
from engine.traces._common import Draw, word_index
from engine.traces.training_step import PARAMS, _fd, _forward, _update

TRACE = "training-step"
MISTAKES = ("no-scale", "ce-log10", "ce-log2", "ce-mean-not-sum", "ce-grad-onehot-forgotten",
            "softmax-grad-diagonal", "backward-no-scale", "update-uphill", "grad-sign-flipped")
PAIRS = (("ce-mean-not-sum", "ce-log10"),)


def compute(inp: dict, s: Slips) -> dict:
    source, vocab, targets, d_h, lr, optimizer, seed = (
        inp[k] for k in ("source", "vocab", "targets", "d_h", "lr", "optimizer", "seed"))
    ids = np.array([word_index(w, vocab, "targets") for w in targets])
    T, V, m = len(targets), len(vocab), len(source)
    draw = Draw(seed)
    H = draw(m, d_h, scale=1.0)
    S = draw(T, d_h, scale=1.0)
    P = {"W_O": draw(V, d_h, scale=1.0)}
    for name in PARAMS[1:]:
        P[name] = np.eye(d_h) + draw(d_h, d_h, scale=0.3)
    root = _ops.scale(d_h, s)
    Q, K, Vv = S @ P["W_Q"], H @ P["W_K"], H @ P["W_V"]
    A = _ops.weights(Q @ K.T / root, s)  # (T, m)
    C = A @ Vv
    Z = C @ P["W_O"].T
    Zs = Z - Z.max(axis=1, keepdims=True)
    prob = np.exp(Zs) / np.exp(Zs).sum(axis=1, keepdims=True)  # (T, V)
    losses = _ops.nll_rows(prob, ids, s)
    L = _ops.total(losses, s)
    Y = np.zeros((T, V))
    Y[np.arange(T), ids] = 1.0
    dZ = prob.copy() if s.on("ce-grad-onehot-forgotten") else prob - Y
    if s.on("grad-sign-flipped"):
        dZ = -dZ
    grads = {"W_O": dZ.T @ C}
    dC = dZ @ P["W_O"]
    dVv = A.T @ dC
    dA = dC @ Vv.T
    if s.on("softmax-grad-diagonal"):
        dS = A * (1 - A) * dA
    else:
        dS = A * (dA - np.sum(A * dA, axis=1, keepdims=True))
    back = 1.0 if s.on("backward-no-scale") else root
    dQ, dK = dS @ K / back, dS.T @ Q / back
    grads.update({"W_Q": S.T @ dQ, "W_K": H.T @ dK, "W_V": H.T @ dVv})
    step = -lr if s.on("update-uphill") else lr
    new = {k: _update(P[k], grads[k], step, optimizer) for k in PARAMS}
    A_new, _, _, _, L_new_nat = _forward(new, S, H, ids) if not s.on("no-scale") else (
        _scaled_forward(new, S, H, ids, root))
    _, ana, fd = _fd(P, S, H, ids, "W_O", grads["W_O"])
    _, ana_q, fd_q = _fd(P, S, H, ids, "W_Q", grads["W_Q"])
    out = {"H": H, "S": S, "W_Q": P["W_Q"], "W_K": P["W_K"], "W_V": P["W_V"], "alpha": A, "C": C,
           "W_O": P["W_O"], "Z": Z, "P": prob, "L": L, "dZ": dZ, "dW_O": grads["W_O"], "dC": dC,
           "analytic": ana, "finite_difference": fd, "d_alpha": dA, "d_scores": dS,
           "dW_Q": grads["W_Q"], "dW_K": grads["W_K"], "dW_V": grads["W_V"],
           "analytic_W_Q": ana_q, "finite_difference_W_Q": fd_q, "alpha_after": A_new,
           "L_after": _relog(L_new_nat, T, s)}
    out.update({f"{k}_new": new[k] for k in PARAMS})
    return out


def _scaled_forward(P, S, H, ids, root):
    """The trace's forward pass with the student's scale (1 under ``no-scale``)."""
    A = _ops.weights((S @ P["W_Q"]) @ (H @ P["W_K"]).T / root, Slips())
    Z = A @ (H @ P["W_V"]) @ P["W_O"].T
    Zs = Z - Z.max(axis=1, keepdims=True)
    logp = Zs - np.log(np.exp(Zs).sum(axis=1, keepdims=True))
    return A, None, None, None, float(-logp[np.arange(len(ids)), ids].sum())


def _relog(loss_nat: float, T: int, s: Slips) -> float:
    """A natural-log summed loss restated with the student's log base and reduction."""
    out = loss_nat / {True: math.log(10), False: 1.0}[s.on("ce-log10")]
    if s.on("ce-log2"):
        out /= math.log(2)
    return out / (T if s.on("ce-mean-not-sum") else 1)
