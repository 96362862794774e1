"""Trace ``encoder`` (§1): the tiny tanh RNN over "cat sat mat"; the context is C = H_3.

The notes' numbers: embeddings X_1..X_3 (d_x = 4), W_HX = [I₃ | 0] (printed flattened as
``100010001000``), W_HH = 0.5·I₃, b = 0, H_0 = 0. They round every intermediate to two
decimals when they print it, but compute each step from the unrounded state; every printed
number checks out. The last step redoes the hand method with rounded states and shows how a
student who rounds twice drifts.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from engine.rnn import rnn_encoder
from engine.trace import Erratum, InputSpec, Step, Trace, same_as_defaults, source_of
from engine.traces import _draw
from engine.traces._common import lines, r, sub, v, vfixed

INPUTS = [
    InputSpec("tokens", "labels", ["cat", "sat", "mat"], "the input words", shape=("T",)),
    InputSpec("X", "matrix", [[0.5, 0.1, -0.3, 0.2], [0.2, -0.4, 0.1, 0.5], [-0.1, 0.3, 0.4, -0.2]],
              "token embeddings, one row per word", shape=("T", "d_x")),
    InputSpec("W_HX", "matrix", [[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0]],
              "input-to-hidden weights (d_h × d_x)", shape=("d_h", "d_x")),
    InputSpec("W_HH", "matrix", [[0.5, 0, 0], [0, 0.5, 0], [0, 0, 0.5]],
              "hidden-to-hidden weights (d_h × d_h)", shape=("d_h", "d_h")),
    InputSpec("b", "vector", [0, 0, 0], "bias, shared by every time step", shape=("d_h",)),
    InputSpec("H0", "vector", [0, 0, 0], "initial hidden state", shape=("d_h",)),
]

# What the notes print at each t, as (W_HX X_t, W_HH H_{t-1}, the sum inside tanh, H_t).
_PRINTED: dict[int, Any] = {
    1: (dict(wx=[0.5, 0.1, -0.3]), dict(wh=[0, 0, 0]), dict(pre=[0.5, 0.1, -0.3]),
        dict(h=[0.46, 0.10, -0.29])),
    2: (dict(wx=[0.2, -0.4, 0.1]), dict(wh=[0.23, 0.05, -0.15]), dict(pre=[0.43, -0.35, -0.05]),
        dict(h=[0.41, -0.34, -0.05])),
    3: (dict(wx=[-0.1, 0.3, 0.4]), dict(wh=[0.20, -0.17, -0.02]), dict(pre=[0.10, 0.13, 0.38]),
        dict(h=[0.10, 0.13, 0.36])),
}
_PRINTED = {t: tuple(next(iter(d.values())) for d in parts) for t, parts in _PRINTED.items()}


def build(tokens: list[str], X: np.ndarray, W_HX: np.ndarray, W_HH: np.ndarray, b: np.ndarray,
          H0: np.ndarray) -> Trace:
    inputs = {"tokens": tokens, "X": X, "W_HX": W_HX, "W_HH": W_HH, "b": b, "H0": H0}
    T = X.shape[0]
    steps: list[Step] = []
    H = np.zeros((T, W_HX.shape[0]))  # (T, d_h)
    h = H0
    parts = []
    for t in range(1, T + 1):
        wx = W_HX @ X[t - 1]  # (d_h,)
        wh = W_HH @ h  # (d_h,)
        pre = wx + wh + b  # (d_h,)
        h = np.tanh(pre)
        H[t - 1] = h
        parts.append((wx, wh, pre, h))
        steps.append(Step(
            f"t = {t}: read \"{tokens[t - 1]}\"",
            f"H{sub(t)} = tanh(W_HX X{sub(t)} + W_HH H{sub(t - 1)} + b)",
            lines(f"W_HX X{sub(t)} = {v(wx)}",
                  f"W_HH H{sub(t - 1)} = {v(wh)}",
                  f"sum + b = {v(pre)}",
                  f"H{sub(t)} = tanh({v(pre)}) = {v(h)}"),
            {f"W_HX X{sub(t)}": wx, f"W_HH H{sub(t - 1)}": wh, "pre-activation": pre, f"H{sub(t)}": h},
            "The new state mixes the current word with what the previous state remembered."
            if t > 1 else "With H₀ = 0 the first state only sees the first word.",
        ))

    C = H[-1]
    steps.append(Step(
        "Context vector",
        f"C = H{sub(T)}",
        f"C = H{sub(T)} = {v(C)}",
        {"C": C},
        f"The whole {T}-word input now has to travel to the decoder as these {C.size} numbers.",
    ))

    # Two ways of doing it by hand, with two decimals (halves rounded away from zero):
    # (a) carry each printed H_{t-1} into the next step, round only H_t;
    # (b) also round every printed partial result (W_HH H, the sum) before going on.
    carry, strict = [], []
    ha, hb = r(H0, 2), r(H0, 2)
    for t in range(1, T + 1):
        ha = r(np.tanh(W_HX @ X[t - 1] + W_HH @ ha + b), 2)
        hb = r(np.tanh(r(r(W_HX @ X[t - 1], 2) + r(W_HH @ hb, 2) + b, 2)), 2)
        carry.append(ha)
        strict.append(hb)
    exact2 = r(H, 2)
    carry_arr, strict_arr = np.array(carry), np.array(strict)
    moved_a = [t for t in range(1, T + 1) if not np.array_equal(carry_arr[t - 1], exact2[t - 1])]
    moved_b = [t for t in range(1, T + 1) if not np.array_equal(strict_arr[t - 1], exact2[t - 1])]

    def _verdict(moved: list[int], arr: np.ndarray) -> str:
        if not moved:
            return "no printed digit moves"
        return "moves " + ", ".join(f"H{sub(t)} to {vfixed(arr[t - 1], 2)}" for t in moved)

    steps.append(Step(
        "Rounding check",
        "H̃ₜ = round₂(tanh(W_HX Xₜ + W_HH H̃ₜ₋₁ + b))",
        lines(*(f"t = {t}: exact {vfixed(exact2[t - 1], 2)}; carry rounded H "
                f"{vfixed(carry_arr[t - 1], 2)}; round everything {vfixed(strict_arr[t - 1], 2)}"
                for t in range(1, T + 1))),
        {"H_exact_2dp": exact2, "H_carry_rounded": carry_arr, "H_round_everything": strict_arr},
        f"Feeding the two-decimal H back in {_verdict(moved_a, carry_arr)}; rounding every partial "
        f"result as well {_verdict(moved_b, strict_arr)}. Keep three or four decimals in "
        "intermediate results and the last digit is safe.",
    ))

    trace = Trace(
        name="encoder",
        title="Tiny RNN encoder",
        section=1,
        inputs=inputs,
        steps=steps,
        result={"H": H, "C": C},
        fused={"H": rnn_encoder(X, W_HX, W_HH, b, H0), "C": rnn_encoder(X, W_HX, W_HH, b, H0)[-1]},
        source=source_of(INPUTS, inputs, "notes"),
        summary=f"A tanh RNN reads the {T} words one at a time; its last hidden state becomes the "
                "context vector C handed to the decoder.",
    )
    if same_as_defaults(INPUTS, inputs):
        names = ("W_HX X", "W_HH H", "sum", "H")
        for t in range(1, T + 1):
            for k, (printed, exact) in enumerate(zip(_PRINTED[t], parts[t - 1])):
                if not np.array_equal(r(np.array(printed, float), 2), r(exact, 2)):
                    trace.errata.append(Erratum(  # never at the notes' numbers: all check out
                        where=f"§1 encoder trace, t = {t}, {names[k]}",
                        printed=vfixed(printed, 2), computed=vfixed(r(exact, 2), 2),
                        why="The two-decimal value does not match the exact computation.",
                        kind="arithmetic", id="encoder-printed-values"))
        steps[0].note += (" The notes print W_HX flattened as 100010001000: four rows of three "
                          "([1,0,0], [0,1,0], [0,0,1], [0,0,0]) used transposed, i.e. the identity "
                          "on the first three coordinates; X's fourth entry is dropped.")
        if T >= 3:
            half = W_HH @ H[1]  # (d_h,) what the notes print as W_HH H₂
            steps[2].note += (f" The notes' W_HH H₂ = {vfixed(_PRINTED[3][1], 2)} is right: it is "
                              f"half the unrounded H₂, {v(half, 4)}, rounded. Halving the printed "
                              f"H₂ = {vfixed(_PRINTED[2][3], 2)} instead gives "
                              f"{vfixed(W_HH @ np.array(_PRINTED[2][3], float), 3)}, and rounding "
                              f"that again gives {vfixed(r(W_HH @ np.array(_PRINTED[2][3], float), 2), 2)}: "
                              "rounding twice, not an error in the notes.")
    return trace


def draw_inputs(rng: np.random.Generator) -> dict:
    """Fresh inputs a student can run by hand: 2-3 words, a 2-3 unit state, one-decimal weights."""
    T = int(_draw.choice(rng, [2, 3, 3]))
    d_h = int(_draw.choice(rng, [2, 3]))
    d_x = d_h + int(_draw.choice(rng, [0, 1]))
    return {"tokens": ["cat", "sat", "mat"][:T],
            "X": _draw.nonzero(rng, -0.5, 0.5, 0.1, (T, d_x)),
            "W_HX": _draw.nonzero(rng, -1.0, 1.0, 0.5, (d_h, d_x)),
            "W_HH": _draw.nonzero(rng, -0.5, 0.5, 0.1, (d_h, d_h)),
            "b": _draw.grid(rng, -0.2, 0.2, 0.1, d_h),
            "H0": np.zeros(d_h)}
