"""Trace ``training-step`` (§12): forward, loss, backward into every parameter, one update.

The notes describe the pipeline in words; the numbers here are a seeded example for
"cat" → "chat <EOS>". Encoder states H for the source, teacher-forced decoder states S,
cross-attention with learned projections (queries S W_Q, keys H W_K, values H W_V), W_O for
the logits, cross-entropy summed over the steps; then the gradient back into W_O and on
through the attention into W_Q, W_K and W_V (each checked by finite differences), and one
SGD or Adam step that changes the very weights the forward used.

Lesson 12 writes the logits as z_t = W_O H_t^(d) with H_t^(d) the decoder state. In this tiny
decoder the vector that reaches W_O is the context itself (H_t^(d) = C_t, no recurrent
update after attention), so z_t = W_O C_t; a full decoder would first combine C_t with its
own state, and the gradient would pass through that combination on its way here.
"""

from __future__ import annotations

import math

import numpy as np

from engine.attention import cross_attention
from engine.attention_backward import multi_head_attention_backward
from engine.loss import cross_entropy, cross_entropy_grad
from engine.trace import HeatmapData, InputSpec, Step, Trace, source_of
from engine.traces import _draw
from engine.traces._common import Draw, lines, n, sub, v, word_index

INPUTS = [
    InputSpec("source", "labels", ["cat", "<EOS>"], "encoder tokens"),
    InputSpec("vocab", "labels", ["chat", "chien", "<EOS>"], "output vocabulary", shape=("V",)),
    InputSpec("targets", "labels", ["chat", "<EOS>"], "target words (teacher forcing)",
              shape=("T",)),
    InputSpec("d_h", "int", 3, "state size", low=1, high=16),
    InputSpec("lr", "scalar", 0.1, "learning rate η", low=0.0, low_open=True, high=100.0),
    InputSpec("optimizer", "choice", "sgd", "the update rule", choices=("sgd", "adam")),
    InputSpec("seed", "int", 12, "seed for states and weights", low=0),
]

FD_EPS = 1e-6
BETA1, BETA2, ADAM_EPS = 0.9, 0.999, 1e-8
PARAMS = ("W_O", "W_Q", "W_K", "W_V")


def _forward(P: dict[str, np.ndarray], S: np.ndarray, H: np.ndarray, ids: np.ndarray):
    """α (T, m), C (T, d_h), probabilities (T, V) and the summed loss, by plain NumPy."""
    Q, K, Vv = S @ P["W_Q"], H @ P["W_K"], H @ P["W_V"]
    s = Q @ K.T / math.sqrt(Q.shape[1])
    E = np.exp(s - s.max(axis=1, keepdims=True))
    A = E / E.sum(axis=1, keepdims=True)
    C = A @ Vv
    Z = C @ P["W_O"].T
    Zs = Z - Z.max(axis=1, keepdims=True)
    logp = Zs - np.log(np.exp(Zs).sum(axis=1, keepdims=True))  # log-softmax, stable
    return A, C, Z, np.exp(logp), float(-logp[np.arange(len(ids)), ids].sum())


def _update(W: np.ndarray, g: np.ndarray, lr: float, optimizer: str) -> np.ndarray:
    """One SGD step, or Adam's first step from zero moments (Kingma & Ba, 2015, Alg. 1)."""
    if optimizer == "sgd":
        return W - lr * g
    m_hat = (1 - BETA1) * g / (1 - BETA1)                  # bias-corrected first moment = g
    v_hat = (1 - BETA2) * g * g / (1 - BETA2)              # bias-corrected second moment = g²
    return W - lr * m_hat / (np.sqrt(v_hat) + ADAM_EPS)


def _fd(P, S, H, ids, name, grad):
    r_, c_ = np.unravel_index(int(np.argmax(np.abs(grad))), grad.shape)
    up = {k: w.copy() for k, w in P.items()}
    down = {k: w.copy() for k, w in P.items()}
    up[name][r_, c_] += FD_EPS
    down[name][r_, c_] -= FD_EPS
    fd = (_forward(up, S, H, ids)[-1] - _forward(down, S, H, ids)[-1]) / (2 * FD_EPS)
    return (int(r_), int(c_)), float(grad[r_, c_]), float(fd)


def build(source: list[str], vocab: list[str], targets: list[str], d_h: int, lr: float,
          optimizer: str, seed: int) -> Trace:
    inputs = {"source": source, "vocab": vocab, "targets": targets, "d_h": d_h, "lr": lr,
              "optimizer": optimizer, "seed": seed}
    ids = np.array([word_index(w, vocab, "targets") for w in targets])
    T, V, m = len(targets), len(vocab), len(source)
    draw = Draw(seed)
    H = draw(m, d_h, scale=1.0)  # (m, d_h) encoder states
    S = draw(T, d_h, scale=1.0)  # (T, d_h) decoder states, before the query projection
    P = {"W_O": draw(V, d_h, scale=1.0)}  # (V, d_h)
    for name in PARAMS[1:]:  # (d_h, d_h) each: near the identity, so queries ≈ decoder states
        P[name] = np.eye(d_h) + draw(d_h, d_h, scale=0.3)

    root = math.sqrt(d_h)
    Q, K, Vv = S @ P["W_Q"], H @ P["W_K"], H @ P["W_V"]  # (T, d_h), (m, d_h), (m, d_h)
    A, C, Z, prob, L = _forward(P, S, H, ids)
    steps = [Step(
        "Forward: attention",
        "Qₜ = Sₜ W_Q,  Kᵢ = Hᵢ W_K,  Vᵢ = Hᵢ W_V,  αₜ = softmax(Qₜ·Kᵢ / √d_h),  Cₜ = Σᵢ αₜᵢ Vᵢ",
        lines(f"H = {v(H)} ({', '.join(source)})", f"S = {v(S)} (decoder states, teacher-forced)",
              f"W_Q = {v(P['W_Q'])}", f"W_K = {v(P['W_K'])}", f"W_V = {v(P['W_V'])}",
              f"Q = {v(Q)}", f"K = {v(K)}", f"V = {v(Vv)}",
              *(f"t = {t + 1}: α = {v(A[t])}, C{sub(t + 1)} = {v(C[t])}" for t in range(T))),
        {"H": H, "S": S, "W_Q": P["W_Q"], "W_K": P["W_K"], "W_V": P["W_V"], "alpha": A, "C": C},
        f"Seeded example (seed {seed}). With teacher forcing the decoder states come from the "
        "correct previous words; the three projections are what attention learns.",
    )]

    losses = -np.log(np.maximum(prob[np.arange(T), ids], np.finfo(float).tiny))
    steps.append(Step(
        "Forward: output and loss",
        "zₜ = W_O Cₜ,  Pₜ = softmax(zₜ),  L = −Σₜ log Pₜ(yₜ)",
        lines(f"W_O = {v(P['W_O'])}",
              *(f"t = {t + 1}: z = {v(Z[t])}, P = {v(prob[t])}, −ln P({targets[t]}) = {n(losses[t])}"
                for t in range(T)),
              f"L = {' + '.join(n(x) for x in losses)} = {n(L)}"),
        {"W_O": P["W_O"], "Z": Z, "P": prob, "L": L},
        "Lesson 12 writes zₜ = W_O Hₜ⁽ᵈ⁾ with the decoder state; in this tiny decoder that "
        "state is the context itself (Hₜ⁽ᵈ⁾ = Cₜ), so zₜ = W_O Cₜ. A full decoder would mix Cₜ "
        "into its own state first.",
    ))

    Y = np.zeros((T, V))
    Y[np.arange(T), ids] = 1.0
    dZ = prob - Y  # (T, V)
    grads = {"W_O": dZ.T @ C}  # (V, d_h)
    dC = dZ @ P["W_O"]  # (T, d_h)
    steps.append(Step(
        "Backward: the output layer",
        "∂L/∂zₜ = Pₜ − onehot(yₜ),  ∂L/∂W_O = Σₜ (∂L/∂zₜ) Cₜᵀ,  ∂L/∂Cₜ = W_Oᵀ ∂L/∂zₜ",
        lines(f"∂L/∂z = {v(dZ)}", f"∂L/∂W_O = {v(grads['W_O'])}", f"∂L/∂C = {v(dC)}"),
        {"dZ": dZ, "dW_O": grads["W_O"], "dC": dC},
        "∂L/∂C is the upstream gradient of the attention layer: the next step carries it on.",
    ))

    where, ana, fd = _fd(P, S, H, ids, "W_O", grads["W_O"])
    steps.append(Step(
        "Check the gradient",
        "∂L/∂W ≈ (L(W + ε) − L(W − ε)) / 2ε",
        f"W_O entry ({where[0] + 1}, {where[1] + 1}): analytic {n(ana, 6)}, finite difference "
        f"{n(fd, 6)} (ε = {FD_EPS:g})",
        {"analytic": ana, "finite_difference": fd},
        "Nudging one weight and re-measuring the loss agrees with the formula.",
    ))

    dVv = A.T @ dC  # (m, d_h)
    dA = dC @ Vv.T  # (T, m)
    dS = A * (dA - np.sum(A * dA, axis=1, keepdims=True))  # (T, m) softmax Jacobian per row
    dQ, dK = dS @ K / root, dS.T @ Q / root  # (T, d_h), (m, d_h)
    grads.update({"W_Q": S.T @ dQ, "W_K": H.T @ dK, "W_V": H.T @ dVv})
    where_q, ana_q, fd_q = _fd(P, S, H, ids, "W_Q", grads["W_Q"])
    steps.append(Step(
        "Backward: through the attention",
        "dV = αᵀ dC,  dα = dC Vᵀ,  ds = α ⊙ (dα − rowsum(α ⊙ dα)),  dQ = ds K / √d_h,  "
        "dK = dsᵀ Q / √d_h;  ∂L/∂W_Q = Sᵀ dQ,  ∂L/∂W_K = Hᵀ dK,  ∂L/∂W_V = Hᵀ dV",
        lines(f"dα = {v(dA)}", f"ds = {v(dS)}", f"∂L/∂W_Q = {v(grads['W_Q'])}",
              f"∂L/∂W_K = {v(grads['W_K'])}", f"∂L/∂W_V = {v(grads['W_V'])}",
              f"check W_Q entry ({where_q[0] + 1}, {where_q[1] + 1}): analytic {n(ana_q, 6)}, "
              f"finite difference {n(fd_q, 6)}"),
        {"d_alpha": dA, "d_scores": dS, "dW_Q": grads["W_Q"], "dW_K": grads["W_K"],
         "dW_V": grads["W_V"], "analytic_W_Q": ana_q, "finite_difference_W_Q": fd_q},
        "The attention-backward trace works these formulas out entry by entry. Keys and "
        "values share H but have separate weights, so each gets its own gradient.",
    ))

    new = {k: _update(P[k], grads[k], lr, optimizer) for k in PARAMS}
    A_new, _, _, _, L_new = _forward(new, S, H, ids)
    rule = ("W ← W − η ∂L/∂W" if optimizer == "sgd" else
            "Adam, first step: m̂ = ∂L/∂W, v̂ = (∂L/∂W)², W ← W − η m̂ / (√v̂ + ε)")
    steps.append(Step(
        "Update every parameter and run the forward again",
        rule,
        lines(*(f"{k}: {v(P[k])} → {v(new[k])}" for k in PARAMS),
              *(f"t = {t + 1}: α {v(A[t])} → {v(A_new[t])}" for t in range(T)),
              f"loss: {n(L)} → {n(L_new)}"),
        {**{f"{k}_new": new[k] for k in PARAMS}, "alpha_after": A_new, "L_after": L_new},
        ("One small step downhill; a real run repeats this over many sentences. The attention "
         "weights moved because W_Q, W_K and W_V did." if L_new < L else
         f"The step overshot: with η = {n(lr)} the loss went up. The gradient only says which "
         "way is downhill right at these weights; a step this long jumps past the valley. "
         "Try a smaller lr.")
        + ("" if optimizer == "sgd" else " Adam's first step moves every weight by about η, "
           "whatever the gradient's size: only its sign counts."),
    ))

    f_ctx, f_w = cross_attention(S, H, P["W_Q"], P["W_K"], P["W_V"])
    f_Z = f_ctx @ P["W_O"].T
    f_dZ = cross_entropy_grad(f_Z, ids, reduction="sum")
    f_g = multi_head_attention_backward(S, H, P["W_Q"], P["W_K"], P["W_V"], P["W_O"].T, 1, None,
                                        f_dZ)
    f_grads = {"W_O": f_g.dW_O.T, "W_Q": f_g.dW_Q, "W_K": f_g.dW_K, "W_V": f_g.dW_V}
    f_new = {k: _update(P[k], f_grads[k], lr, optimizer) for k in PARAMS}
    f_ctx2, f_w2 = cross_attention(S, H, f_new["W_Q"], f_new["W_K"], f_new["W_V"])
    return Trace(
        name="training-step",
        title="One training step",
        section=12,
        inputs=inputs,
        steps=steps,
        result={"alpha": A, "L": L, **{f"d{k}": grads[k] for k in PARAMS},
                "alpha_after": A_new, "L_after": L_new},
        fused={"alpha": f_w, "L": float(cross_entropy(f_Z, ids, reduction="sum")),
               **{f"d{k}": f_grads[k] for k in PARAMS}, "alpha_after": f_w2,
               "L_after": float(cross_entropy(f_ctx2 @ f_new["W_O"].T, ids, reduction="sum"))},
        source=source_of(INPUTS, inputs, "built"),
        summary="A tiny attention decoder learning \"cat\" → \"chat <EOS>\": forward, loss, "
                "backward into W_O and through the attention into W_Q, W_K, W_V, checks, "
                f"one {optimizer.upper() if optimizer == 'sgd' else 'Adam'} step.",
        heatmaps=[HeatmapData("Attention during the forward pass", A, list(targets), list(source)),
                  HeatmapData("Attention after the update", A_new, list(targets), list(source))],
    )


def draw_inputs(rng: np.random.Generator) -> dict:
    """Fresh inputs: the notes' words with a new seed, size, learning rate and update rule."""
    return {"source": ["cat", "<EOS>"], "vocab": ["chat", "chien", "<EOS>"],
            "targets": ["chat", "<EOS>"], "d_h": int(_draw.choice(rng, [2, 3])),
            "lr": float(_draw.choice(rng, [0.05, 0.1, 0.5])),
            "optimizer": str(_draw.choice(rng, ["sgd", "sgd", "adam"])), "seed": _draw.seed(rng)}
