"""Makers for attention variants the notes do not work through (§6, §8): Luong's dot and
general scores, and what two heads can do that one cannot, with each head's importance.
Every answer comes from the engine."""

from __future__ import annotations

import numpy as np

from tutor.exam.numbers import (
    Numbers,
    Step,
    as_tuple,
    context_link,
    maker,
    nonzero_grid,
    softmax_link,
    weighted_sum,
)
from tutor.marking import Link
from tutor.quiz.generators.attention import SIMPLE_W, simplex
from tutor.quiz.generators.scoring import grid
from tutor.render.numbers import matrix as mat
from tutor.render.numbers import number as num
from tutor.render.numbers import vector as vec


def par(x: float) -> str:
    """A number after a multiplication sign: negatives in parentheses."""
    text = num(x)
    return f"({text})" if text.startswith("-") else text


@maker("luong")
def luong(rng: np.random.Generator) -> Numbers:
    """Luong et al. (2015) global attention: the current state h_t against three source states
    with the dot and the general (bilinear) score, then the weights and the context."""
    from engine.scoring import dot_scores, general_scores  # deferred: loads numba (start-up time)
    from engine.softmax import softmax  # deferred: loads numba (start-up time)

    h = nonzero_grid(rng, -1, 1, 0.5, 2)
    while True:
        H = grid(rng, -1, 1, 0.5, (3, 2))  # (3, 2) source states h̄_s, one per row
        if len({tuple(r) for r in H}) == 3 and np.all(np.any(H != 0, axis=1)):
            break
    while True:  # a W_a that changes the scores, so (a) and (b) differ
        W = np.array(SIMPLE_W[int(rng.integers(1, len(SIMPLE_W)))])  # (2, 2), never I
        dots = dot_scores(h, H)  # (3,)
        gen = general_scores(h, H, W)  # (3,) h_tᵀ W_a h̄_s
        if not np.allclose(dots, gen):
            break
    alpha = softmax(gen)
    context = weighted_sum(alpha, H)
    hW = dot_scores(W.T, h[None, :])[:, 0]  # (2,) h_tᵀ W_a, shown as working
    return Numbers(
        fields={"h": vec(h), "H1": vec(H[0]), "H2": vec(H[1]), "H3": vec(H[2]), "W": mat(W)},
        steps={
            "dot": Step(
                as_tuple(dots),
                0.01,
                (f"h_tᵀ h̄_s = {vec(dots)}",),
                link=Link("scores", "dots", {"Q": h, "K": H}),
            ),
            "general": Step(
                as_tuple(gen), 0.01, (f"h_tᵀ W_a = {vec(hW)}; dotted with each h̄_s: {vec(gen)}",)
            ),
            "alpha": Step(
                as_tuple(alpha),
                0.01,
                (f"α = softmax({vec(gen)}) = {vec(alpha)}",),
                ("general",),
                lambda v: as_tuple(softmax(np.asarray(v["general"]))),
                link=softmax_link(gen),
                relink=lambda v: softmax_link(v["general"]),
            ),
            "context": Step(
                context,
                0.01,
                (
                    "c_t = Σ_s α_s h̄_s = "
                    + " + ".join(f"{num(a)}·{vec(r)}" for a, r in zip(alpha, H))
                    + f" = {vec(context)}",
                ),
                ("alpha",),
                lambda v: weighted_sum(v["alpha"], H),
                link=context_link(alpha, H),
                relink=lambda v: context_link(v["alpha"], H),
            ),
        },
        data={"h": h, "H": H, "W": W},
    )


@maker("two-heads")
def two_heads(rng: np.random.Generator) -> Numbers:
    """Two one-dimensional heads over three tokens whose values keep one coordinate each: head
    1 looks mostly at token i (whose value is [p, 0]), head 2 mostly at token j ([0, q]). One
    head would need α_i = α¹_i and α_j = α²_j in one distribution, which sum to more than 1."""
    from engine.scoring import dot_scores  # deferred: loads numba (start-up time)

    i, j = (int(x) for x in rng.choice(3, size=2, replace=False))
    p, q = (float(x) for x in rng.choice([1, 2, 3, 4], size=2))
    V = np.zeros((3, 2))
    V[i, 0], V[j, 1] = p, q
    while True:
        a1, a2 = simplex(rng, 3), simplex(rng, 3)
        if a1[i] >= 0.7 and a2[j] >= 0.7:
            break
    avg = np.round((a1 + a2) / 2, 6)
    one = weighted_sum(avg, V)
    two = weighted_sum(a1, V[:, :1]) + weighted_sum(a2, V[:, 1:])  # (o¹, o²)
    while True:  # both heads matter, by clearly different amounts
        W_O = nonzero_grid(rng, -1, 1, 0.5, (2, 2))
        g = nonzero_grid(rng, -1, 1, 0.5, 2)
        gate = dot_scores(W_O, g[None, :])[:, 0]  # (2,) W^O_r · g: the loss's slope per unit of head r
        I = np.abs(np.asarray(two) * gate)  # noqa: E741 - checked here, computed below
        if np.all(I > 0.05) and abs(I[0] - I[1]) > 0.1:
            break

    def importance(outs) -> tuple[float, ...]:
        """|∂L/∂ξ_r| = |o_r (W^O_r · g)| for gates ξ_r on the head outputs."""
        return tuple(abs(float(o) * float(s)) for o, s in zip(outs, gate))

    imp = importance(two)
    return Numbers(
        fields={"V1": vec(V[0]), "V2": vec(V[1]), "V3": vec(V[2]), "a1": vec(a1), "a2": vec(a2),
                "W_O": mat(W_O), "g": vec(g)},
        steps={
            "two": Step(two, 0.01, (
                "o¹ = Σ_j α¹_j V_j[1] = " + " + ".join(f"{num(a)}·{num(x)}" for a, x in zip(a1, V[:, 0]))
                + f" = {num(two[0])}",
                "o² = Σ_j α²_j V_j[2] = " + " + ".join(f"{num(a)}·{num(x)}" for a, x in zip(a2, V[:, 1]))
                + f" = {num(two[1])}")),
            "one": Step(one, 0.01, (f"ᾱ = {vec(avg)}; Σ_j ᾱ_j V_j = {vec(one)}",)),
            "importance": Step(imp, 0.01, (
                f"W^O_r · g = {vec(gate)} (row r of W^O with the gradient g)",
                f"I_r = |o_r (W^O_r · g)| = |{num(two[0])}·{par(gate[0])}|, "
                f"|{num(two[1])}·{par(gate[1])}| = {vec(imp)}"),
                ("two",), lambda v: importance(v["two"])),
        },
        data={"V": V, "a1": a1, "a2": a2, "i": i, "j": j, "W_O": W_O, "g": g})
