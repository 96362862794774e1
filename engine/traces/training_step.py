"""Trace ``training-step`` (§12): forward, loss, backward and one update for "cat" → "chat".

The notes describe the pipeline in words; the numbers here are a seeded example. Encoder
states for "cat" and <EOS>, teacher-forced decoder states (the queries), scaled dot-product
attention for the contexts, W_O for the logits, cross-entropy summed over the two steps, the
gradient of W_O (checked by finite differences) and one gradient-descent step.
"""

from __future__ import annotations

import math

import numpy as np

from engine.attention import attention
from engine.loss import cross_entropy, cross_entropy_grad
from engine.trace import HeatmapData, InputSpec, Step, Trace, source_of
from engine.traces._common import Draw, lines, n, sub, v, word_index

INPUTS = [
    InputSpec("source", "labels", ["cat", "<EOS>"], "encoder tokens"),
    InputSpec("vocab", "labels", ["chat", "chien", "<EOS>"], "output vocabulary", shape=("V",)),
    InputSpec("targets", "labels", ["chat", "<EOS>"], "target words (teacher forcing)",
              shape=("T",)),
    InputSpec("d_h", "int", 3, "state size", low=1, high=16),
    InputSpec("lr", "scalar", 0.5, "learning rate η", low=0.0, low_open=True, high=100.0),
    InputSpec("seed", "int", 12, "seed for states and weights", low=0),
]

FD_EPS = 1e-6


def _loss(W_O: np.ndarray, C: np.ndarray, ids: np.ndarray) -> float:
    Z = C @ W_O.T
    Z = Z - Z.max(axis=1, keepdims=True)
    return float(-(Z[np.arange(len(ids)), ids] - np.log(np.exp(Z).sum(axis=1))).sum())


def build(source: list[str], vocab: list[str], targets: list[str], d_h: int, lr: float,
          seed: int) -> Trace:
    inputs = {"source": source, "vocab": vocab, "targets": targets, "d_h": d_h, "lr": lr,
              "seed": seed}
    ids = np.array([word_index(w, vocab, "targets") for w in targets])
    T, V, m = len(targets), len(vocab), len(source)
    draw = Draw(seed)
    H = draw(m, d_h, scale=1.0)  # (m, d_h) encoder states
    S = draw(T, d_h, scale=1.0)  # (T, d_h) decoder states = queries
    W_O = draw(V, d_h, scale=1.0)  # (V, d_h)

    root = math.sqrt(d_h)
    scores = S @ H.T / root  # (T, m)
    E = np.exp(scores - scores.max(axis=1, keepdims=True))
    A = E / E.sum(axis=1, keepdims=True)
    C = A @ H  # (T, d_h)
    steps = [Step(
        "Forward: attention",
        "αₜ = softmax(Sₜ·Hᵢ / √d_h),  Cₜ = Σᵢ αₜᵢ Hᵢ",
        lines(f"H = {v(H)} ({', '.join(source)})", f"S = {v(S)} (decoder states, teacher-forced)",
              *(f"t = {t + 1}: α = {v(A[t])}, C{sub(t + 1)} = {v(C[t])}" for t in range(T))),
        {"H": H, "S": S, "alpha": A, "C": C},
        f"Seeded example (seed {seed}). With teacher forcing the decoder states come from the "
        "correct previous words.",
    )]

    Z = C @ W_O.T  # (T, V)
    Ez = np.exp(Z - Z.max(axis=1, keepdims=True))
    P = Ez / Ez.sum(axis=1, keepdims=True)
    losses = -np.log(P[np.arange(T), ids])
    L = float(losses.sum())
    steps.append(Step(
        "Forward: output and loss",
        "zₜ = W_O Cₜ,  Pₜ = softmax(zₜ),  L = −Σₜ log Pₜ(yₜ)",
        lines(f"W_O = {v(W_O)}",
              *(f"t = {t + 1}: z = {v(Z[t])}, P = {v(P[t])}, −ln P({targets[t]}) = {n(losses[t])}"
                for t in range(T)),
              f"L = {' + '.join(n(x) for x in losses)} = {n(L)}"),
        {"Z": Z, "P": P, "L": L},
        "This is the number training tries to shrink.",
    ))

    Y = np.zeros((T, V))
    Y[np.arange(T), ids] = 1.0
    dZ = P - Y  # (T, V)
    dW = dZ.T @ C  # (V, d_h)
    dC = dZ @ W_O  # (T, d_h)
    steps.append(Step(
        "Backward",
        "∂L/∂zₜ = Pₜ − onehot(yₜ),  ∂L/∂W_O = Σₜ (∂L/∂zₜ) Cₜᵀ,  ∂L/∂Cₜ = W_Oᵀ ∂L/∂zₜ",
        lines(f"∂L/∂z = {v(dZ)}", f"∂L/∂W_O = {v(dW)}", f"∂L/∂C = {v(dC)}"),
        {"dZ": dZ, "dW_O": dW, "dC": dC},
        "∂L/∂C keeps flowing back into the attention weights, the scorer and the encoder; "
        "here we stop at W_O.",
    ))

    r_, c_ = np.unravel_index(int(np.argmax(np.abs(dW))), dW.shape)
    up, down = W_O.copy(), W_O.copy()
    up[r_, c_] += FD_EPS
    down[r_, c_] -= FD_EPS
    fd = (_loss(up, C, ids) - _loss(down, C, ids)) / (2 * FD_EPS)
    steps.append(Step(
        "Check the gradient",
        "∂L/∂W ≈ (L(W + ε) − L(W − ε)) / 2ε",
        f"entry ({r_ + 1}, {c_ + 1}): analytic {n(dW[r_, c_], 6)}, finite difference {n(fd, 6)} "
        f"(ε = {FD_EPS:g})",
        {"analytic": float(dW[r_, c_]), "finite_difference": float(fd)},
        "Nudging one weight and re-measuring the loss agrees with the formula.",
    ))

    W_new = W_O - lr * dW
    L_new = _loss(W_new, C, ids)
    steps.append(Step(
        "Update",
        "W_O ← W_O − η ∂L/∂W_O",
        lines(f"W_O = {v(W_O)} − {n(lr)}·{v(dW)}", f"  = {v(W_new)}",
              f"loss: {n(L)} → {n(L_new)}"),
        {"W_O_new": W_new, "L_after": L_new},
        "One small step downhill; a real run repeats this over many sentences and updates "
        "every parameter, not just W_O." if L_new < L else
        f"The step overshot: with η = {n(lr)} the loss went up. The gradient only says which way "
        "is downhill right at W_O; a step this long jumps past the valley. Try a smaller lr.",
    ))

    f_ctx, f_w = attention(S, H, H)
    f_Z = f_ctx @ W_O.T
    f_grad = cross_entropy_grad(f_Z, ids, reduction="sum").T @ f_ctx
    return Trace(
        name="training-step",
        title="One training step",
        section=12,
        inputs=inputs,
        steps=steps,
        result={"alpha": A, "L": L, "dW_O": dW, "L_after": L_new},
        fused={"alpha": f_w, "L": float(cross_entropy(f_Z, ids, reduction="sum")), "dW_O": f_grad,
               "L_after": float(cross_entropy(f_ctx @ (W_O - lr * f_grad).T, ids, reduction="sum"))},
        source=source_of(INPUTS, inputs, "built"),
        summary="A tiny attention decoder learning \"cat\" → \"chat <EOS>\": forward, loss, "
                "backward, finite-difference check, update.",
        heatmaps=[HeatmapData("Attention during the forward pass", A, list(targets), list(source))],
    )
